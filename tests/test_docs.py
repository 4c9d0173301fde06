"""The README's module map names every module of the package, and nothing that is not there."""

from __future__ import annotations

import re
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent


def test_the_readme_module_map_matches_the_package():
    readme = (ROOT / "README.md").read_text(encoding="utf-8")
    development = readme[readme.index("## Development") :]
    named = set(re.findall(r"^- `([\w/]+(?:\.py)?)`", development, re.MULTILINE))
    modules = {p.name for p in (ROOT / "pytest_explore_suff").glob("*.py")}
    assert modules - named == set(), "modules the README's map does not name"
    assert {n for n in named if n.endswith(".py")} - modules == set(), "the map names modules that are gone"
    readers = {p.stem for p in (ROOT / "pytest_explore_suff" / "readers").glob("*.py")} - {"__init__"}
    line = next(entry for entry in development.splitlines() if entry.startswith("- `readers/`"))
    assert {r for r in readers if f"`{r}`" not in line} == set(), "reader modules the map does not name"
