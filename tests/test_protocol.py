"""A transcript's item runs without the phases' hooks (`protocol.run`) only when nothing
needs them, and then everything a user or a plug-in sees is what pytest's protocol gives."""

from __future__ import annotations

import os
import re
import shutil
from pathlib import Path

import pytest
from helpers import EXAMPLES, hostile_campaign

from pytest_explore_suff import protocol

# A conftest.py beside the campaign whose phase hook does nothing: pytest's protocol runs.
PHASE_HOOK = "def pytest_runtest_setup(item):\n    item.config._seen = getattr(item.config, '_seen', 0) + 1\n"


def campaign(pytester: pytest.Pytester) -> Path:
    root = pytester.path / "camp"
    shutil.copytree(EXAMPLES / "campaign", root)
    hostile_campaign(root / "hostile")  # a failing transcript, a skipped one, warnings
    return root


def counted(monkeypatch: pytest.MonkeyPatch) -> list[str]:
    """The node ids `protocol.run` runs, in this process (pytester's in-process runs)."""
    seen: list[str] = []
    real = protocol.run

    def run(item, nextitem, hooks):  # type: ignore[no-untyped-def]
        seen.append(item.nodeid)
        real(item, nextitem, hooks)

    monkeypatch.setattr(protocol, "run", run)
    return seen


def ran(result: pytest.RunResult) -> int:
    outcomes = result.parseoutcomes()
    return sum(outcomes.get(k, 0) for k in ("passed", "failed", "skipped", "errors", "error"))


def lines(result: pytest.RunResult, part: str) -> list[str]:
    """The ``-v`` lines of the items whose node id has ``part``."""
    return [line for line in result.outlines if line.startswith("camp::") and part in line.split(" ")[0]]


def junit(path: Path) -> str:
    """A JUnit XML report without what differs between two runs (times, host, date)."""
    text = path.read_text(encoding="utf-8")
    return re.sub(r' (time|timestamp|hostname)="[^"]*"', "", text)


@pytest.mark.parametrize("cache", [[], ["-p", "no:cacheprovider"]], ids=["cache", "no-cache"])
def test_without_the_phase_hooks_every_report_is_what_pytests_protocol_writes(pytester, monkeypatch, cache):
    root = campaign(pytester)
    seen = counted(monkeypatch)
    args = [f"--explore-suff={root}", "-p", "no:randomly", "-rA", "--durations=0", *cache]
    lean = pytester.runpytest_inprocess(*args, "--explore-suff-json=lean.json", "--junitxml=lean.xml")
    seen_lean = list(seen)
    again = pytester.runpytest_inprocess(*args, "--explore-suff-json=again.json", "--junitxml=again.xml")
    (pytester.path / "conftest.py").write_text(PHASE_HOOK)
    seen.clear()
    standard = pytester.runpytest_inprocess(*args, "--explore-suff-json=std.json", "--junitxml=std.xml")
    assert seen == []
    assert len(set(seen_lean)) == len(seen_lean) == ran(standard)  # every transcript
    lean.assert_outcomes(**standard.parseoutcomes())  # type: ignore[arg-type]
    again.assert_outcomes(**standard.parseoutcomes())  # type: ignore[arg-type]
    assert lean.ret == standard.ret == 1  # the hostile campaign's damaged transcript
    assert (pytester.path / "lean.json").read_bytes() == (pytester.path / "std.json").read_bytes()
    assert (pytester.path / "again.json").read_bytes() == (pytester.path / "std.json").read_bytes()
    assert junit(pytester.path / "lean.xml") == junit(pytester.path / "std.xml")
    assert junit(pytester.path / "again.xml") == junit(pytester.path / "std.xml")

    def shown(result: pytest.RunResult) -> list[str]:  # the short summary and the failure lines
        return [
            line
            for line in result.outlines
            if line.startswith(("PASSED", "SKIPPED", "FAILED", "ERROR", "E "))
        ]

    assert shown(lean) == shown(standard)
    assert shown(again) == shown(standard)


def test_a_conftest_phase_hook_around_the_campaign_is_called_for_every_transcript(pytester):
    root = campaign(pytester)
    pytester.makeconftest(
        "import pytest\n"
        "def pytest_runtest_setup(item):\n"
        "    if 'express' in item.nodeid:\n"
        "        pytest.skip('not this repository today')\n"
    )
    result = pytester.runpytest(f"--explore-suff={root}", "-p", "no:randomly", "-v")
    express = lines(result, "express")
    assert express and all("SKIPPED (not this repository today)" in line for line in express)
    assert lines(result, "excalidraw") and not any("SKIPPED" in line for line in lines(result, "excalidraw"))


def test_a_skip_mark_added_to_a_transcript_is_obeyed(pytester, monkeypatch):
    root = campaign(pytester)
    pytester.makeconftest(
        "import pytest\n"
        "def pytest_collection_modifyitems(items):\n"
        "    for item in items:\n"
        "        if 'hostile' in item.nodeid:\n"
        "            item.add_marker(pytest.mark.skip(reason='hostile today'))\n"
    )
    seen = counted(monkeypatch)
    result = pytester.runpytest_inprocess(f"--explore-suff={root}", "-p", "no:randomly", "-v")
    hostile = lines(result, "hostile")
    assert hostile and all("SKIPPED (hostile today)" in line for line in hostile)
    assert result.ret == 0  # the hostile campaign's damaged transcript was skipped, not read
    assert seen and not any("hostile" in nodeid for nodeid in seen)


def test_fixtures_of_the_tests_around_the_campaign_are_torn_down_in_order(pytester):
    """A test module before the campaign and one after it: module fixtures end when pytest's
    protocol ends them, and the session fixture once, at the last item."""
    root = pytester.path / "camp"
    shutil.copytree(EXAMPLES / "campaign", root)
    pytester.makeconftest(
        "import pytest\n"
        "LOG = []\n"
        "@pytest.fixture(scope='session')\n"
        "def session_thing():\n"
        "    LOG.append('session up')\n"
        "    yield\n"
        "    LOG.append('session down')\n"
        "    print('LOG', LOG)\n"
        "@pytest.fixture(scope='module')\n"
        "def module_thing(request):\n"
        "    LOG.append(f'{request.module.__name__} up')\n"
        "    yield\n"
        "    LOG.append(f'{request.module.__name__} down')\n"
    )
    for name in ("a", "z"):
        (pytester.path / name).mkdir()
        (pytester.path / name / f"test_{name}.py").write_text(
            f"def test_{name}(session_thing, module_thing):\n    print('{name} ran')\n"
        )
    # Collected in folder order: a/, then the campaign's items, then z/
    result = pytester.runpytest(f"--explore-suff={root}", "-p", "no:randomly", "-s", "-v", ".")
    assert result.ret == 0
    result.stdout.fnmatch_lines(["*a/test_a.py::test_a*", "camp::*PASSED*", "*z/test_z.py::test_z*"])
    log = "LOG ['session up', 'test_a up', 'test_a down', 'test_z up', 'test_z down', 'session down']"
    assert log in result.stdout.str()


@pytest.mark.parametrize("option", ["--setup-show", "--setup-plan"])
def test_showing_setup_runs_pytests_protocol(pytester, monkeypatch, option):
    root = campaign(pytester)
    seen = counted(monkeypatch)
    result = pytester.runpytest_inprocess(f"--explore-suff={root}", "-p", "no:randomly", option)
    assert seen == []
    assert result.ret in (0, 1)


def test_stopping_at_the_first_failure_stops_the_campaign(pytester):
    root = campaign(pytester)
    result = pytester.runpytest(f"--explore-suff={root}", "-p", "no:randomly", "-x")
    assert result.ret == 1
    assert "stopping after 1 failures" in result.stdout.str()
    assert result.parseoutcomes().get("failed") == 1


def test_the_current_test_variable_names_the_transcript_while_it_is_judged(pytester, monkeypatch):
    root = campaign(pytester)
    seen: list[str | None] = []
    from pytest_explore_suff import nodes

    real = nodes.TranscriptItem.runtest

    def runtest(self):  # type: ignore[no-untyped-def]
        seen.append(os.environ.get("PYTEST_CURRENT_TEST"))
        real(self)

    monkeypatch.setattr(nodes.TranscriptItem, "runtest", runtest)
    monkeypatch.delenv("PYTEST_CURRENT_TEST", raising=False)
    result = pytester.runpytest_inprocess(
        f"--explore-suff={root}", "-p", "no:randomly", "-p", "no:cacheprovider"
    )
    assert len(seen) == ran(result) > 0
    assert all(
        value is not None and value.endswith(" (call)") and value.startswith("camp::") for value in seen
    )
    assert "PYTEST_CURRENT_TEST" not in os.environ
