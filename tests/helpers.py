"""What the test modules share: running the plugin, reading its report, the example campaigns.

Plain functions and constants (``tests/`` is on ``sys.path``: ``from helpers import
report``); the fixtures built on them are in ``conftest.py``.
"""

from __future__ import annotations

import json
import shutil
import subprocess
import sys
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest
from builders import Run, allocation_run, no_explore_run, response, sufficient_run, with_usage

EXAMPLES = Path(__file__).resolve().parent.parent / "examples"
DEFAULT_JSON = "explore-suff.json"  # where the plugin writes its report unless told

#: The ``run_campaign`` fixture: ``(campaign, *args, json=...)`` -> the run and the report it wrote (or None).
RunCampaign = Callable[..., tuple[pytest.RunResult, dict[str, Any] | None]]

# Strings that must reach the HTML page only escaped.
SCRIPT_Q = "</script><script>alert(1)</script>"
IMG_Q = "<img src=x onerror=alert(1)>"
COMMENT_Q = "<!-- <script>alert(3)</script>"
HOSTILE_GROUP = "<svg onload=alert(4)>"


def report(pytester: pytest.Pytester, name: str = DEFAULT_JSON) -> dict[str, Any]:
    """The JSON report a run in pytester's folder wrote."""
    return json.loads((pytester.path / name).read_text(encoding="utf-8"))  # type: ignore[no-any-return]


def listed(doc: dict[str, Any]) -> set[str]:
    """Every file the report accounts for: a transcript's files, or an ignored path."""
    return {f for r in doc["transcripts"] for f in r["files"]} | {i["path"] for i in doc["ignored"]}


def run_plugin(workdir: Path, campaign: Path, *args: str) -> dict[str, Any]:
    """The plugin run once in a fresh interpreter (the documents are shared by a module's tests)."""
    report = workdir / "report.json"
    cmd = [
        sys.executable,
        "-m",
        "pytest",
        "-p",
        "no:cacheprovider",
        "-q",
        "--rootdir",
        str(workdir),
        f"--explore-suff={campaign}",
        f"--explore-suff-json={report}",
        *args,
    ]
    subprocess.run(cmd, cwd=workdir, check=False, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    return json.loads(report.read_text(encoding="utf-8"))  # type: ignore[no-any-return]


HOSTILE_RUN = "<img src=x onerror=alert(6)>"  # a saved run's name
HOSTILE_ARM = "<b onmouseover=alert(5)>"
TREND_SHA = "89abcdef0123456789abcdef0123456789abcdef"


def trend_runs(work: Path) -> dict[str, Any]:
    """Three saved runs of one campaign, in a git checkout: the first named, the second known
    by its commit, the third named with markup and judged with the trend of all three. Arm
    ``with`` (with token counts) answers all 30 calls sufficiently twice, then 2 of 30 (a drop
    beyond noise);
    the hostile arm stays at 10 of 20; arm ``without`` never explores. The third's report."""
    (work / ".git" / "refs" / "heads").mkdir(parents=True)
    (work / ".git" / "HEAD").write_text("ref: refs/heads/main\n")
    (work / ".git" / "refs" / "heads" / "main").write_text(TREND_SHA + "\n")
    camp = work / "camp"
    doc: dict[str, Any] = {}
    for name, sufficient in (("nightly-1", 30), (None, 30), (HOSTILE_RUN, 2)):
        shutil.rmtree(camp, ignore_errors=True)
        for i in range(30):
            run = sufficient_run(f"s{i}") if i < sufficient else allocation_run(f"a{i}")
            with_usage(run, 18_000).write(camp / "express" / f"run{i}" / "run-with.jsonl")
        for i in range(20):
            (sufficient_run if i < 10 else allocation_run)(f"h{i}").write(
                camp / "express" / f"run{i}" / f"run-{HOSTILE_ARM}.jsonl"
            )
        no_explore_run().write(camp / "express" / "run0" / "run-without.jsonl")
        save = "--explore-suff-save" + ("" if name is None else f"={name}")
        last = ["--explore-suff-trend=all"] if name == HOSTILE_RUN else []
        doc = run_plugin(work, camp, r"--explore-suff-pattern=run-(?P<arm>.+)\.jsonl", save, *last)
    return doc


def hostile_campaign(root: Path) -> Path:
    """Two arms, two repos (one named like markup), hostile queries, a raced run, a failing file."""
    run = Run()
    run.step(run.explore(SCRIPT_Q), response(["lib/a.js"]))
    run.step(run.use("Read", file_path="/t/lib/a.js"))
    run.step(run.explore(IMG_Q), response(["lib/b.js"]))
    run.step(run.use("Grep", pattern="x"))
    run.step(run.explore(COMMENT_Q), response(["lib/c.js"]))
    run.step(run.use("Edit", file_path="lib/c.js"))
    run.finish()
    run.write(root / "express" / "run1" / "run-headless-with.jsonl")
    sufficient_run("fine query").write(root / "express" / "run2" / "run-headless-with.jsonl")
    no_explore_run().write(root / "express" / "run1" / "run-headless-without.jsonl")
    allocation_run("odd repo").write(root / HOSTILE_GROUP / "run1" / "run-headless-with.jsonl")
    raced = Run()
    raced.step(
        raced.explore("raced q"),
        "Error: No such tool available: mcp__codegraph__codegraph_explore",
        is_error=True,
    )
    raced.write(root / "express" / "run9" / "run-headless-with.jsonl")
    bad = root / "express" / "run3" / "run-headless-with.jsonl"
    bad.parent.mkdir(parents=True)
    bad.write_bytes(b"\x00\x01garbage\n")
    (root / "express" / "notes-<b>.jsonl").write_text('{"query": "x"}\n')
    return root


HOSTILE_FILE = "lib/<img src=x onerror=alert(5)>.js"


def section(path: str, lines: int, defines: str) -> str:
    """A returned-file section of an explore response whose header defines one name."""
    return f"**`{path}`** {defines}(function)\n```js\n" + "x = 1;\n" * lines + "```\n"


def metrics_campaign(root: Path) -> Path:
    """Two arms over three repositories, with token counts: the tool arm returns a file the
    answer cites by path, one it credits through a symbol and one it never names; the other
    arm reads, greps and lists. One tool run has no usage (occupancy null, allocation kept)."""

    def with_run(i: int, n: int, usage: bool = True) -> Run:
        r = Run(f"w{i}")
        r.step(
            r.explore("how does send work"),
            section("lib/response.js", n, "send") + section("lib/utils.js", n // 2, "compileETag")
            + "\n> explore again if this is not enough",
        )  # fmt: skip
        r.step(r.use("Read", file_path="/t/lib/request.js"), "y" * 900)
        r.step(r.explore("etag"), section("lib/etag.js", n // 3, "etag") + section(HOSTILE_FILE, 4, "boom"))
        r.finish("The answer is in lib/response.js:126; `compileETag` computes the tag.")
        return with_usage(r, 9000 + 100 * i) if usage else r

    def without_run(i: int, n: int) -> Run:
        r = Run(f"o{i}")
        r.step(r.use("Grep", pattern="send"), "lib/response.js:12: send\n" * 40)
        r.step(r.use("Read", file_path="/t/lib/response.js"), "z" * (n * 7))
        r.step(r.use("Bash", command="ls"), "a\n" * 300)
        r.finish("lib/response.js")
        return with_usage(r, 6000 + 50 * i)

    for g, n in (("express", 300), ("flask", 500), ("koa", 200)):
        for k in (1, 2):
            with_run(k, n).write(root / g / f"run{k}" / "run-headless-with.jsonl")
            without_run(k, n).write(root / g / f"run{k}" / "run-headless-without.jsonl")
    with_run(3, 100, usage=False).write(root / "koa" / "run3" / "run-headless-with.jsonl")
    return root


# -- ground truth ----------------------------------------------------------------------------

GOOD = """version = 1
[[question]]
id = "express-send"
group = "express"
answer = ["lib/response.js", "lib/utils.js"]
symbols = ["res.send", "setHeader"]
must = ['Content-Type']
min_symbols = 0.5
"""


def answered_run(returned: list[str], answer: str, prompt: str | None = None) -> Run:
    """explore (returning ``returned``), an Edit, then ``answer``; ``prompt``: the first user prompt."""
    run = Run()
    if prompt is not None:
        run.events.append({"type": "user", "message": {"role": "user", "content": prompt}, "session_id": "s"})
    run.step(run.explore("q"), response(returned))
    run.step(run.use("Edit", file_path=returned[0] if returned else "x.js"))
    run.finish(answer)
    return run
