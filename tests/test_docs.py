"""The documentation tells the truth about the code: generated pages are up to date, the
examples' outputs shown are what the plugin prints, the JSON schema matches real reports,
the module map names every module, and nothing points outside the repository."""

from __future__ import annotations

import importlib.util
import json
import os
import re
import sys
from pathlib import Path
from typing import Any

import pytest
from helpers import EXAMPLES

from pytest_explore_suff.options import OPTIONS
from pytest_explore_suff.schema import FIELDS, PLACEHOLDERS

ROOT = Path(__file__).resolve().parent.parent
DOCS = ROOT / "docs"


def _load_gen() -> Any:
    spec = importlib.util.spec_from_file_location("docs_gen", DOCS / "gen.py")
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    sys.modules["docs_gen"] = module
    spec.loader.exec_module(module)
    return module


gen = _load_gen()


def _pages() -> list[Path]:
    return [ROOT / "README.md", *sorted(DOCS.rglob("*.md"))]


# --- generated pages -------------------------------------------------------------------------


@pytest.mark.parametrize("page", ["options.md", "json.md"])
def test_the_reference_pages_are_generated_from_the_code(page: str) -> None:
    path = DOCS / "reference" / page
    assert path.read_text(encoding="utf-8") == gen.pages()[path], (
        f"docs/reference/{page} is out of date: run .venv/bin/python docs/gen.py"
    )


def test_the_options_page_lists_every_option() -> None:
    text = (DOCS / "reference" / "options.md").read_text(encoding="utf-8")
    missing = [o.flag for o in OPTIONS if f"| `{o.flag}" not in text or f"`{o.ini}`" not in text]
    assert missing == []


def test_every_option_the_docs_name_exists() -> None:
    flags = {o.flag for o in OPTIONS}
    flag_like = re.compile(r"--(?:explore-suff(?:-[a-z]+)*|(?:min|max)(?:-[a-z]+)+)")
    named = {(page.name, flag) for page in _pages() for flag in flag_like.findall(page.read_text("utf-8"))}
    assert sorted((page, flag) for page, flag in named if flag not in flags) == []


# --- the JSON schema against real reports ---------------------------------------------------

_JSON_TYPES = {"string": str, "boolean": bool, "object": dict, "array": list}


def _type_ok(value: Any, declared: str) -> bool:
    for name in declared.split("|"):
        if name == "null" and value is None:
            return True
        if name == "integer" and isinstance(value, int) and not isinstance(value, bool):
            return True
        if name == "number" and isinstance(value, int | float) and not isinstance(value, bool):
            return True
        if name in _JSON_TYPES and isinstance(value, _JSON_TYPES[name]):
            return True
    return False


def _walk(value: Any, path: str, declared: dict[str, str], seen: set[str], errors: list[str]) -> None:
    """Record each field's schema path, checking that it is declared with the value's type."""
    if path:
        if path not in declared:
            errors.append(f"{path}: not in schema.FIELDS")
            return
        seen.add(path)
        if not _type_ok(value, declared[path]):
            errors.append(f"{path}: {type(value).__name__} {value!r:.60}, declared {declared[path]}")
    if isinstance(value, dict):
        for key, item in value.items():
            child = f"{path}.{key}" if path else key
            if child not in declared:
                for holder, allowed in PLACEHOLDERS.items():
                    candidate = f"{path}.{holder}"
                    if candidate in declared and (allowed is None or key in allowed):
                        child = candidate
                        break
            _walk(item, child, declared, seen, errors)
    elif isinstance(value, list):
        for item in value:
            if isinstance(item, dict):  # an element is its fields: `x[].a`, `x[].b`
                for key, field in item.items():
                    _walk(field, f"{path}[].{key}", declared, seen, errors)
            else:
                _walk(item, f"{path}[]", declared, seen, errors)


#: Declared fields no bundled example produces: each needs input the examples do not have.
NOT_IN_THE_EXAMPLES = {
    "transcripts[].warnings[]",  # the examples are clean logs
    # no example is graded by a judge (it needs a model)
    *(f"transcripts[].truth[].judge.{k}" for k in ("verdict", "score", "note")),
    # no session of the examples is a copy of another
    *(
        f"transcripts[].copies[].{k}"
        for k in ("session", "judged_in", "lines", "first_line", "last_line", "calls")
    ),
    # the examples' result events carry no modelUsage (tests/test_arm_table.py has one)
    *(f"{p}.cost.by_model.<model>{k}" for p in ("arms.<arm>", "pooled") for k in ("", ".runs", ".cost_usd")),
    *(
        f"transcripts[].cost.by_model.<model>{k}"
        for k in ("", ".input_tokens", ".output_tokens", ".cache_read_tokens", ".cache_creation_tokens")
    ),
    "transcripts[].cost.by_model.<model>.cost_usd",
}


@pytest.fixture(scope="module")
def reports(tmp_path_factory: pytest.TempPathFactory) -> list[dict[str, Any]]:
    """Reports that between them hold every part of the schema: a partial run with gates on
    the interval, an arm pair, a baseline with its metric gates, Codex and Gemini logs."""
    work = tmp_path_factory.mktemp("schema")
    runs = {
        "partial": f"{EXAMPLES / 'campaign'} -k 'not excalidraw' --min-sufficient=0.3 --min-allocation=0.1 "
        "--max-residual-share=0.5 --explore-suff-gate-on=bound",
        "mixed": f"{EXAMPLES / 'mixed-agents'}",
        "last-week": f"{EXAMPLES / 'new-vs-baseline'}",
        "against": f"{EXAMPLES / 'new-vs-baseline'} --explore-suff-baseline=last-week.json "
        "--max-sufficient-drop=0.05 --max-allocation-drop=0.1 --max-residual-growth=0.2 "
        "--explore-suff-min-calls=5 --explore-suff-gate-on=bound --max-read-increase=0 "
        "--explore-suff-control=flask",
    }
    commands = [f"pytest -q --explore-suff={a} --explore-suff-json={name}.json" for name, a in runs.items()]
    gen.isolated(work, commands)
    return [json.loads((work / f"{name}.json").read_text(encoding="utf-8")) for name in runs]


def test_the_schema_describes_every_field_of_real_reports(reports: list[dict[str, Any]]) -> None:
    declared = {f.path: f.type for f in FIELDS}
    assert len(declared) == len(FIELDS), "a path is described twice"
    seen: set[str] = set()
    errors: list[str] = []
    for doc in reports:
        _walk(doc, "", declared, seen, errors)
    assert sorted(set(errors)) == [], "\n".join(sorted(set(errors)))
    assert sorted(set(declared) - seen - NOT_IN_THE_EXAMPLES) == [], "described, but in no report"
    assert sorted(NOT_IN_THE_EXAMPLES - (set(declared) - seen)) == [], "NOT_IN_THE_EXAMPLES is stale"


def test_the_schema_reports_cover_what_they_are_for(reports: list[dict[str, Any]]) -> None:
    """The fixture's runs really are partial, compared, against a baseline, multi-agent."""
    partial, mixed, _, against = reports
    assert partial["coverage"]["not_run"] and partial["gates"]
    agents = {t["agent"] for t in mixed["transcripts"]}
    assert agents >= {"claude", "codex", "gemini", "amp", "cline", "opencode", "copilot"}
    assert against["baseline"] and against["comparison"] and against["metrics_comparison"]


# --- example outputs shown in the docs ------------------------------------------------------


@pytest.fixture(scope="module")
def outputs(tmp_path_factory: pytest.TempPathFactory) -> dict[str, str]:
    return gen.isolated(tmp_path_factory.mktemp("examples"))  # type: ignore[no-any-return]


def test_example_outputs_in_the_docs_match_the_plugin(outputs: dict[str, str]) -> None:
    stale = [
        f"{page.relative_to(ROOT)}: {name}"
        for page in _pages()
        for name, shown in gen.example_blocks(page)
        if name not in outputs or gen.normalise(shown) != gen.normalise(outputs[name])
    ]
    assert stale == [], "run .venv/bin/python docs/gen.py"


def test_every_example_is_shown_somewhere() -> None:
    shown = {name for page in _pages() for name, _ in gen.example_blocks(page)}
    assert set(gen.EXAMPLES) - shown == set()


def test_the_comparison_normalises_only_timings() -> None:
    a = "==== 9 passed in 0.97s ====\n"
    assert gen.normalise(a) == gen.normalise("===== 9 passed in 12.03s =====\n")
    assert gen.normalise(a) != gen.normalise("==== 8 passed in 0.97s ====\n")


def test_the_library_page_runs(monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]) -> None:
    monkeypatch.chdir(ROOT)
    blocks = re.findall(r"```python\n(.*?)```", (DOCS / "library.md").read_text(encoding="utf-8"), re.DOTALL)
    assert blocks
    for block in blocks:
        exec(compile(block, "docs/library.md", "exec"), {})
    printed = capsys.readouterr().out
    assert "'Read response.js'" in printed and "ignored" in printed


# --- README, links, pointers ------------------------------------------------------------------


def test_the_readme_is_short() -> None:
    lines = (ROOT / "README.md").read_text(encoding="utf-8").splitlines()
    assert len(lines) < 250


def test_the_readme_keeps_the_two_setup_commands() -> None:
    """`.ci/run` runs them; the README must show them as they are."""
    readme = (ROOT / "README.md").read_text(encoding="utf-8")
    assert ".venv/bin/pip install -e . && .venv/bin/pytest --explore-suff=examples/campaign" in readme
    assert ".venv/bin/pip install -e '.[test]' && .venv/bin/pytest -n 2" in readme


def test_relative_links_of_the_readme_resolve() -> None:
    readme = (ROOT / "README.md").read_text(encoding="utf-8")
    targets = re.findall(r"\]\(([^)#\s]+)(?:#[^)]*)?\)", readme)
    assert targets
    assert [t for t in targets if "://" not in t and not (ROOT / t).exists()] == []


# Spelled in pieces so that this file does not match itself.
_OUTSIDE = re.compile(
    "|".join(["shared/" + "spec/", "shared/" + "design/", "/work/" + r"(?:shared|main|wt)\b"])
)
#: What tools write into a checkout (caches, builds): not the project's files.
_SKIP_DIRS = {".git", ".venv", "site", "build", "dist", "__pycache__", ".pytest_cache", ".mypy_cache",
              ".ruff_cache", ".hypothesis", "node_modules"}  # fmt: skip


def test_no_file_points_outside_the_repository() -> None:
    """The contract files the project was written from are not the users': the docs say it all."""
    hits = []
    for folder, dirs, files in os.walk(ROOT):
        dirs[:] = [d for d in dirs if d not in _SKIP_DIRS and not d.endswith(".egg-info")]
        for name in files:
            if name in _SKIP_DIRS:  # a worktree's `.git` is a file naming where the repository is
                continue
            path = Path(folder, name)
            try:
                text = path.read_text(encoding="utf-8")
            except (UnicodeDecodeError, OSError):
                continue
            hits += [f"{path.relative_to(ROOT)}: {m.group(0)}" for m in _OUTSIDE.finditer(text)]
    assert hits == []


def test_the_module_map_matches_the_package() -> None:
    page = (DOCS / "contributing.md").read_text(encoding="utf-8")
    section = page[page.index("## The module map") :]
    named = set(re.findall(r"^- `([\w/]+(?:\.py)?)`", section, re.MULTILINE))
    modules = {p.name for p in (ROOT / "pytest_explore_suff").glob("*.py")}
    assert modules - named == set(), "modules the map does not name"
    assert {n for n in named if n.endswith(".py")} - modules == set(), "the map names modules that are gone"
    readers = {p.stem for p in (ROOT / "pytest_explore_suff" / "readers").glob("*.py")} - {"__init__"}
    line = next(entry for entry in section.splitlines() if entry.startswith("- `readers/`"))
    assert {r for r in readers if f"`{r}`" not in line} == set(), "reader modules the map does not name"
