from __future__ import annotations

import importlib
import pkgutil
import shutil
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest
from builders import Run, ab_campaign, allocation_run, no_explore_run, sufficient_run
from helpers import DEFAULT_JSON, EXAMPLES, GOOD, RunCampaign, answered_run, report

import pytest_explore_suff
from pytest_explore_suff import Verdict, judge

pytest_plugins = ["pytester"]

# The plugin imports its modules only once a campaign is asked for (tests/test_startup.py
# checks that, in fresh processes). pytester's in-process runs drop every module a run
# imported when the run ends, so the next run would import fresh copies beside the
# objects the package kept from the last (`judge`'s names, a reader's class): different
# classes for the same names. Imported here, before any run, every in-process run shares
# them, as the one session of a real pytest process does.
for _module in pkgutil.walk_packages(pytest_explore_suff.__path__, "pytest_explore_suff."):
    if not _module.name.endswith("__main__"):  # the command: it would run
        importlib.import_module(_module.name)


@pytest.fixture
def run() -> Run:
    return Run()


@pytest.fixture
def verdict_of(tmp_path: Path) -> Callable[..., Verdict]:
    """Write a run to disk and judge it, as the plugin would."""

    def _verdict(run: Run, **kw: Any) -> Verdict:
        path = run.write(tmp_path / "run-headless-with.jsonl")
        return judge("stream-json", [path], **kw)[0]

    return _verdict


# -- campaigns in pytester's folder, and the plugin run on them ------------------------------


@pytest.fixture
def campaign(pytester: pytest.Pytester) -> Path:
    """An A/B campaign, repo express: arm headless-with ran three runs (sufficient,
    allocation, sufficient), arm headless-without two that never explore.
    (Some modules override it with a campaign of their own.)"""
    root = pytester.path / "ab"
    return ab_campaign(
        root,
        with_runs=[sufficient_run("one"), allocation_run("two"), sufficient_run("three")],
        without_runs=[no_explore_run(), no_explore_run()],
    )


@pytest.fixture
def example_campaign(pytester: pytest.Pytester) -> Path:
    """A copy of examples/campaign (multi-turn, subagents, an interactive session)."""
    root = pytester.path / "ab-readme"
    shutil.copytree(EXAMPLES / "campaign", root)
    return root


@pytest.fixture
def run_campaign(pytester: pytest.Pytester) -> RunCampaign:
    """Run the plugin on a campaign in pytester's folder: the run, and the JSON report it wrote.

    ``json`` names the report (written next to the run); a run that writes none
    (a usage error, ``--co``) gives None, never a report an earlier run left.
    """

    def _run(
        campaign: Path, *args: str, json: str = DEFAULT_JSON
    ) -> tuple[pytest.RunResult, dict[str, Any] | None]:
        out = pytester.path / json
        out.unlink(missing_ok=True)
        result = pytester.runpytest(f"--explore-suff={campaign}", f"--explore-suff-json={json}", *args)
        return result, report(pytester, json) if out.exists() else None

    return _run


@pytest.fixture
def truth_campaign(pytester: pytest.Pytester) -> Path:
    """An A/B campaign of repo express with the truth file GOOD: one with-run passes, one fails;
    the without-run (no explore, no answer) fails."""
    root = pytester.path / "ab"
    ab_campaign(
        root,
        with_runs=[
            answered_run(
                ["lib/response.js", "lib/other.js"], "res.send sets Content-Type (`lib/response.js`)"
            ),
            answered_run(["lib/x.js"], "no idea"),
        ],
        without_runs=[no_explore_run()],
    )
    (root / "explore-suff-truth.toml").write_text(GOOD, encoding="utf-8")
    return root


@pytest.fixture(autouse=True)
def _wide_terminal(monkeypatch: pytest.MonkeyPatch) -> None:
    """pytester runs measure the terminal from COLUMNS: wide by default, so the
    summary keeps every column; the width tests set their own."""
    monkeypatch.setenv("COLUMNS", "200")
