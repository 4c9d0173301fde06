"""Regenerate what the documentation shows of the code: run it from the repository root.

    .venv/bin/python docs/gen.py                  # everything, the screenshot included
    .venv/bin/python docs/gen.py --no-screenshot  # without a browser
    .venv/bin/python docs/gen.py --check          # exit 1 if anything is out of date

It writes:

- ``docs/reference/options.md`` from the ``OPTIONS`` table (``pytest_explore_suff/options.py``);
- ``docs/reference/json.md`` from ``FIELDS`` (``pytest_explore_suff/schema.py``);
- every example block of ``README.md`` and ``docs/*.md``: the text between
  ``<!-- gen:example NAME -->`` and ``<!-- /gen -->`` is the output of the
  plugin run as ``EXAMPLES[NAME]`` says, on the bundled examples;
- ``docs/report.png`` with ``docs/make_screenshot.py`` (needs selenium and Chromium).

``tests/test_docs.py`` regenerates the same pages and blocks and fails when the
files differ, so the documentation cannot drift from the code.
"""

from __future__ import annotations

import argparse
import contextlib
import io
import json
import os
import re
import shlex
import shutil
import subprocess
import sys
import tempfile
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pytest

ROOT = Path(__file__).resolve().parent.parent
DOCS = ROOT / "docs"
try:
    import pytest_explore_suff  # noqa: F401
except ImportError:  # run from a checkout that was never installed
    sys.path.insert(0, str(ROOT))

from pytest_explore_suff.options import OPTIONS  # noqa: E402
from pytest_explore_suff.report import SCHEMA  # noqa: E402
from pytest_explore_suff.schema import FIELDS  # noqa: E402

#: The terminal width the example outputs are shown at (the summary fits the terminal).
COLUMNS = 120
BANNER = r"^=+ explore sufficiency =+$"


@dataclass(frozen=True)
class Example:
    """A command shown in the docs with its output.

    ``setup`` commands run first, unshown, in the same folder. Of the output,
    the lines from the first that matches ``start`` are shown, up to (not
    including) the first later line that matches ``stop``; ``status`` appends
    the exit status as ``echo $?`` would show it.
    """

    command: str
    start: str = BANNER
    stop: str | None = None
    setup: tuple[str, ...] = ()
    status: bool = False


EXAMPLES: dict[str, Example] = {
    "campaign": Example("pytest --explore-suff=examples/campaign", start=r"^collected "),
    "campaign-verbose": Example(
        "pytest --explore-suff=examples/campaign -v", start=r"^excalidraw/run1/", stop=r"^excalidraw/run2/"
    ),
    "campaign-gate": Example(
        "pytest --explore-suff=examples/campaign --min-sufficient=0.5",
        start=r"^explore-suff gate",
        status=True,
    ),
    "campaign-gate-qq": Example(
        "pytest --explore-suff=examples/campaign --min-sufficient=headless-with:0.2 "
        "--min-sufficient=interactive:0.5 -qq",
        start=r"^explore-suff gate",
        status=True,
    ),
    "mixed-agents": Example("pytest --explore-suff=examples/mixed-agents", stop=r"^$"),
    "mixed-agents-occupancy": Example(
        "pytest --explore-suff=examples/mixed-agents", start=r"^residual context occupancy", stop=r"^warning"
    ),
    "new-vs-baseline": Example(
        "pytest --explore-suff=examples/new-vs-baseline --explore-suff-json=last-week.json",
        start=r"^new against baseline",
        stop=r"^$",
    ),
    "new-vs-baseline-metrics": Example(
        "pytest --explore-suff=examples/new-vs-baseline",
        start=r"^allocation efficiency",
        stop=r"^repeats \(|^warning|^JSON report",
    ),
    "repeats": Example(
        "pytest --explore-suff=examples/new-vs-baseline", start=r"^repeats \(", stop=r"^warning|^JSON report"
    ),
    "new-vs-baseline-gate": Example(
        "pytest --explore-suff=examples/new-vs-baseline --explore-suff-baseline=last-week.json "
        "--max-sufficient-drop=0.05 --explore-suff-gate-on=bound --min-sufficient=new:0.4 "
        "--explore-suff-min-calls=30",
        start=r"^explore-suff gate",
        setup=("pytest --explore-suff=examples/new-vs-baseline --explore-suff-json=last-week.json",),
        status=True,
    ),
}

BLOCK = re.compile(r"(<!-- gen:example ([\w-]+) -->\n)(.*?)(<!-- /gen -->)", re.DOTALL)


def _run(command: str, cwd: Path) -> tuple[str, int]:
    """Run one documented pytest command in this process (a fresh interpreter per example
    would cost a second of start-up each): what it printed, and its exit status."""
    argv = shlex.split(command)
    assert argv[0] == "pytest", command
    out = io.StringIO()
    old_cwd, old_env = os.getcwd(), dict(os.environ)
    for key in [k for k in os.environ if k.startswith(("PYTEST_ADDOPTS", "PY_COLORS", "FORCE_COLOR"))]:
        del os.environ[key]
    os.environ.update(COLUMNS=str(COLUMNS), NO_COLOR="1")
    os.chdir(cwd)
    try:
        # A cache of its own: each example is a first run (the verdict cache is empty).
        with (
            contextlib.redirect_stdout(out),
            contextlib.redirect_stderr(io.StringIO()),
            tempfile.TemporaryDirectory() as cache,
        ):
            # Without pytest-shard (a test extra): it prints a line in every run, asked or not.
            plugins = ["-o", f"cache_dir={cache}", "-p", "no:pytest-shard"]
            status = pytest.main([*plugins, "--assert=plain", *argv[1:]])
    finally:
        os.chdir(old_cwd)
        os.environ.clear()
        os.environ.update(old_env)
    return out.getvalue(), int(status)


def example_output(name: str, workdir: Path) -> str:
    """The console block of example ``name``: the command, then what it printed."""
    ex = EXAMPLES[name]
    (workdir / "examples").exists() or shutil.copytree(ROOT / "examples", workdir / "examples")
    for command in ex.setup:
        _run(command, workdir)
    out, status = _run(ex.command, workdir)
    lines = out.splitlines()
    try:
        first = next(i for i, line in enumerate(lines) if re.search(ex.start, line))
    except StopIteration:
        raise SystemExit(f"example {name}: no line matches {ex.start!r} in:\n{out}") from None
    last = len(lines)
    if ex.stop is not None:
        last = next((i for i in range(first + 1, len(lines)) if re.search(ex.stop, lines[i])), last)
    shown = [line.rstrip() for line in lines[first:last]]
    while shown and not shown[-1]:
        shown.pop()
    # Long commands are shown folded before an option, as a reader would type them.
    lines_out = [""]
    for word in ex.command.split(" "):
        if lines_out[-1] and len(lines_out[-1]) + len(word) > 90 and word.startswith("--"):
            lines_out.append("   ")
        lines_out[-1] += (" " if lines_out[-1] else "") + word
    head = " \\\n".join(lines_out)
    body = [f"$ {head}", *shown]
    if ex.status:
        body += ["$ echo $?", str(status)]
    return "```console\n" + "\n".join(body) + "\n```\n"


def normalise(text: str) -> str:
    """What may differ between two runs of the same example: timings, and the
    width of pytest's banners around them."""
    text = re.sub(r"\b\d+(?:\.\d+)?s\b", "Ns", text)
    return re.sub(r"=+", "=", text)


def doc_files() -> list[Path]:
    return [ROOT / "README.md", *sorted(DOCS.rglob("*.md"))]


def example_blocks(path: Path) -> list[tuple[str, str]]:
    """(name, current text) of each example block in a file."""
    return [(m.group(2), m.group(3)) for m in BLOCK.finditer(path.read_text(encoding="utf-8"))]


def fill_examples(text: str, outputs: dict[str, str]) -> str:
    def repl(m: re.Match[str]) -> str:
        name = m.group(2)
        if name not in EXAMPLES:
            raise SystemExit(f"unknown example block {name!r}; EXAMPLES has {', '.join(EXAMPLES)}")
        return m.group(1) + outputs[name] + m.group(4)

    return BLOCK.sub(repl, text)


def _cell(text: str) -> str:
    return text.replace("%%", "%").replace("|", "\\|")


def options_page() -> str:
    """docs/reference/options.md, from `OPTIONS`."""
    rows = []
    for o in OPTIONS:
        flag = o.flag if o.action == "store_true" else f"{o.flag}={o.metavar or o.ini.upper()}"
        if o.choices:
            flag = f"{o.flag}={'|'.join(o.choices)}"
        if o.action == "store_true":
            ini = "bool"
        elif o.action == "append" and o.ini_type is None:
            ini = "lines (one value a line)"
        else:
            ini = "string"
        rows.append(f"| `{_cell(flag)}` | `{o.ini}` ({ini}) | {_cell(o.help)}. |")
    return "\n".join(
        [
            "<!-- Generated by docs/gen.py from OPTIONS in pytest_explore_suff/options.py: do not edit. -->",
            "# Options reference",
            "",
            "Every option of the plugin, in the order `pytest --help` lists them, with its",
            "ini twin (`[tool.pytest.ini_options]` in `pyproject.toml`, or `pytest.ini`).",
            "The command line wins over the ini file. How they fit together:",
            "[Options and gates](../options.md).",
            "",
            "| option | ini key (type) | what it does |",
            "|---|---|---|",
            *rows,
            "",
        ]
    )


def json_page() -> str:
    """docs/reference/json.md, from `FIELDS`."""
    rows = [f"| `{_cell(f.path)}` | {_cell(f.type)} | {_cell(f.doc)} |" for f in FIELDS]
    return "\n".join(
        [
            "<!-- Generated by docs/gen.py from FIELDS in pytest_explore_suff/schema.py: do not edit. -->",
            "# JSON report reference",
            "",
            "Every field of the JSON report (`--explore-suff-json`, schema",
            f"`{SCHEMA}`), in the order it is written. A path is dotted keys;",
            "`[]` is each element of a list; `<arm>` stands for an arm's name, `<bucket>`",
            "for the five bucket keys (`explore_again`, `read_returned`, `read_missed`,",
            "`search`, `sufficient`) and `<family>` for the five occupancy families",
            "(`tool`, `read`, `search`, `bash`, `other`). `integer` values are numbers",
            "too; `|null` marks a field that can be null. How to read the report:",
            "[Reports](../reports.md).",
            "",
            "| field | type | meaning |",
            "|---|---|---|",
            *rows,
            "",
        ]
    )


def pages() -> dict[Path, str]:
    return {DOCS / "reference" / "options.md": options_page(), DOCS / "reference" / "json.md": json_page()}


def all_outputs(workdir: Path) -> dict[str, str]:
    return {name: example_output(name, workdir) for name in EXAMPLES}


def isolated(workdir: Path, commands: list[str] | None = None) -> Any:
    """`all_outputs`, or ``commands`` run as `_run` runs them, in a fresh interpreter: a
    test session must not host other pytest sessions (they leave state behind: modules,
    import hooks, warning filters). One interpreter for all of them keeps it quick."""
    (workdir / "commands.json").write_text(json.dumps(commands), encoding="utf-8")
    argv = [sys.executable, str(Path(__file__).resolve()), "--outputs", str(workdir)]
    subprocess.run(argv, capture_output=True, check=True, cwd=ROOT)
    return json.loads((workdir / "outputs.json").read_text(encoding="utf-8"))


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--check", action="store_true", help="write nothing; exit 1 when out of date")
    parser.add_argument("--no-screenshot", action="store_true", help="leave docs/report.png alone")
    parser.add_argument("--outputs", type=Path, help=argparse.SUPPRESS)  # for `isolated`
    args = parser.parse_args()
    if args.outputs:
        commands = json.loads((args.outputs / "commands.json").read_text(encoding="utf-8"))
        if commands is None:
            result: Any = all_outputs(args.outputs)
        else:
            result = [_run(command, args.outputs) for command in commands]
        (args.outputs / "outputs.json").write_text(json.dumps(result), encoding="utf-8")
        return 0
    stale: list[str] = []
    for path, text in pages().items():
        if not path.exists() or path.read_text(encoding="utf-8") != text:
            stale.append(str(path.relative_to(ROOT)))
            if not args.check:
                path.parent.mkdir(parents=True, exist_ok=True)
                path.write_text(text, encoding="utf-8")
    with tempfile.TemporaryDirectory() as tmp:
        outputs = all_outputs(Path(tmp))
    for path in doc_files():
        text = path.read_text(encoding="utf-8")
        new = fill_examples(text, outputs)
        if normalise(new) != normalise(text):
            stale.append(str(path.relative_to(ROOT)))
            if not args.check:
                path.write_text(new, encoding="utf-8")
    if args.check:
        print("\n".join(f"out of date: {s}" for s in stale) or "up to date")
        return 1 if stale else 0
    if not args.no_screenshot:
        subprocess.run([sys.executable, str(DOCS / "make_screenshot.py")], check=True)
    print("\n".join(f"wrote {s}" for s in stale) or "nothing to change")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
