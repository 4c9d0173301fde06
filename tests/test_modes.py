"""Every pytest mode is a user's mode: the report and the exit status stay true in each.

Warning filters, partial runs (``--co``, ``-k``, ``-x``, ``--lf``, Ctrl-C),
gates that cannot be decided, damaged input, options that must not be dropped
silently, xdist on a campaign that is still being written, narrow terminals.
"""

from __future__ import annotations

import struct
import zipfile
from pathlib import Path
from typing import Any

import pytest
from builders import Run, Session, allocation_run, response, sufficient_run
from helpers import EXAMPLES, listed, report

XDIST = [[], ["-n", "2"]]
FRAMES = ("_pytest/", "pluggy/", "Traceback", "cls = <", "def runtest")  # pytest or pluggy frames


@pytest.fixture(params=XDIST, ids=["plain", "n2"])
def dist(request: pytest.FixtureRequest) -> list[str]:
    return request.param


def good_campaign(root: Path, runs: int = 4) -> Path:
    for i in range(1, runs + 1):
        (sufficient_run(f"q{i}") if i % 2 else allocation_run(f"q{i}")).write(root / f"run-new-{i}.jsonl")
    return root


def hostile_campaign(root: Path) -> Path:
    """Good runs plus every kind of file that makes a warning."""
    good_campaign(root, 2)
    cut = "\n".join(sufficient_run().lines()) + '\n{"type": "assist'
    (root / "run-cut-1.jsonl").write_text(cut)
    noisy = sufficient_run().lines()
    (root / "run-noisy-1.jsonl").write_text("\n".join([noisy[0], "DEBUG: x", *noisy[1:]]) + "\n")
    session = Session("5e551011-0000-4000-8000-0000000000aa")
    session.prompt("hello")
    session.step(Run.use("mcp__codegraph__codegraph_explore", query="q"), response(["lib/a.js"]))
    session.write(root / "sessions" / f"{session.id}.jsonl")
    orphan = Session(session.id, sidechain=True, agent_id="a1b2c3d")
    orphan.prompt("a prompt no call carries")
    orphan.step(Run.use("Grep", pattern="x"))
    orphan.write(root / "sessions" / "agent-a1b2c3d.jsonl")
    return root


def files_on_disk(root: Path) -> set[str]:
    return {p.relative_to(root).as_posix() for p in root.rglob("*.jsonl")}


# --- warnings as errors ----------------------------------------------------------------


@pytest.mark.parametrize("how", ["ini", "-W"])
def test_under_warnings_as_errors_every_file_is_in_the_report_and_failures_are_one_line(pytester, dist, how):
    root = hostile_campaign(pytester.path / "camp")
    args = ["-W", "error"] if how == "-W" else []
    if how == "ini":
        pytester.makepyprojecttoml('[tool.pytest.ini_options]\nfilterwarnings = ["error"]\n')
    result = pytester.runpytest(f"--explore-suff={root}", *args, *dist)
    outcomes = result.parseoutcomes()
    assert outcomes["passed"] == 2 and outcomes["failed"] == 3
    doc = report(pytester)
    assert listed(doc) == files_on_disk(root)
    assert all(r["status"] == "classified" for r in doc["transcripts"])
    text = result.stdout.str()
    assert not [frame for frame in FRAMES if frame in text], text
    result.stdout.fnmatch_lines(
        [
            "FAILED camp::run-cut-1.jsonl - run-cut-1.jsonl: last line 7 is cut short*"
            "(a warning, made an error by the warning filters)",
        ]
    )


def test_a_transcript_warning_points_at_the_transcript_not_at_the_plugin(pytester):
    root = hostile_campaign(pytester.path / "camp")
    result = pytester.runpytest(f"--explore-suff={root}", "-W", "always::UserWarning")
    result.assert_outcomes(passed=5, warnings=3)
    text = result.stdout.str()
    assert "nodes.py" not in text  # where the warning is raised
    result.stdout.fnmatch_lines(
        ["*camp/run-noisy-1.jsonl:1: ExploreSuffWarning: run-noisy-1.jsonl: 1 corrupt*"]
    )


# --- partial runs ----------------------------------------------------------------------


def test_collect_only_writes_no_report_and_decides_no_gate(pytester, dist):
    root = good_campaign(pytester.path / "camp")
    (pytester.path / "explore-suff.json").write_text("previous")
    result = pytester.runpytest(f"--explore-suff={root}", "--co", "--min-sufficient=0.99", *dist)
    assert result.ret == 0
    assert (pytester.path / "explore-suff.json").read_text() == "previous"
    result.stdout.fnmatch_lines(["*--collect-only: no report written, no gate decided*"])
    result.stdout.no_fnmatch_line("*explore-suff gate*")


def test_a_full_run_says_it_is_complete(pytester, dist):
    root = good_campaign(pytester.path / "camp")
    pytester.runpytest(f"--explore-suff={root}", *dist).assert_outcomes(passed=4)
    cov = report(pytester)["coverage"]
    assert cov == {"complete": True, "collected": 4, "ran": 4, "why": [], "interrupted": False, "stopped": "",
                   "not_run": []}  # fmt: skip


#: What pytest-randomly does to a session (without needing it installed): the items reordered
#: at collection, with a seed, on the controller and on every xdist worker alike.
SHUFFLE_CONFTEST = """
import random

def pytest_collection_modifyitems(items):
    random.Random({seed}).shuffle(items)
"""


@pytest.mark.parametrize("seed", [1, 2])
def test_the_reports_do_not_depend_on_the_order_the_items_run_in(pytester, dist, seed):
    # Three agents, subagents, two arms: every aggregate the order could change.
    campaign = EXAMPLES / "mixed-agents"
    out = ["--explore-suff-json=in-order.json", "--explore-suff-html=in-order.html"]
    pytester.runpytest(f"--explore-suff={campaign}", *out).assert_outcomes(passed=22)
    pytester.makeconftest(SHUFFLE_CONFTEST.format(seed=seed))
    shuffled = ["--explore-suff-json=shuffled.json", "--explore-suff-html=shuffled.html"]
    result = pytester.runpytest(f"--explore-suff={campaign}", "-v", *shuffled, *dist)
    result.assert_outcomes(passed=22)
    ran = [word for line in result.outlines if "PASSED" in line for word in line.split() if "::" in word]
    assert len(ran) == 22 and ran != sorted(ran)  # the shuffle did reorder them
    for kind in ("json", "html"):
        written = (pytester.path / f"shuffled.{kind}").read_bytes()
        assert written == (pytester.path / f"in-order.{kind}").read_bytes()


def test_a_k_selection_writes_a_partial_report_that_a_baseline_refuses(pytester, dist):
    root = good_campaign(pytester.path / "camp")
    result = pytester.runpytest(f"--explore-suff={root}", "-k", "new-1 or new-2", *dist)
    result.assert_outcomes(passed=2, deselected=0 if dist else 2)  # xdist's controller does not count them
    result.stdout.fnmatch_lines(
        ["*partial run: 2 of 4 transcripts ran (2 deselected (-k, -m, --lf, --sw, shards))*"]
    )
    cov = report(pytester)["coverage"]
    assert (cov["complete"], cov["collected"], cov["ran"]) == (False, 4, 2)
    assert cov["not_run"] == [
        {"path": "run-new-3.jsonl", "why": "deselected"},
        {"path": "run-new-4.jsonl", "why": "deselected"},
    ]
    again = pytester.runpytest(
        f"--explore-suff={root}", "--explore-suff-baseline=explore-suff.json", "--explore-suff-json=new.json"
    )
    assert again.ret == pytest.ExitCode.USAGE_ERROR
    again.stderr.fnmatch_lines(
        ["*covers only part of its campaign (2 deselected*a baseline must come from a complete run"]
    )


def test_stopping_at_the_first_failure_writes_a_partial_report(pytester):
    root = good_campaign(pytester.path / "camp")
    (root / "run-new-2.jsonl").write_text("garbage\n")
    result = pytester.runpytest(f"--explore-suff={root}", "-x", "-p", "no:randomly")
    result.assert_outcomes(passed=1, failed=1)
    cov = report(pytester)["coverage"]
    assert (cov["complete"], cov["ran"]) == (False, 2)
    assert cov["why"] == ["2 not run (stopping after 1 failures)"]
    result.stdout.fnmatch_lines(
        ["*partial run: 2 of 4 transcripts ran (2 not run (stopping after 1 failures))*"]
    )


def test_last_failed_reruns_only_failures_and_the_report_says_so(pytester):
    root = good_campaign(pytester.path / "camp")
    (root / "run-new-2.jsonl").write_text("garbage\n")
    pytester.runpytest(f"--explore-suff={root}").assert_outcomes(passed=3, failed=1)
    assert report(pytester)["coverage"]["complete"] is True  # a failed item still ran
    result = pytester.runpytest(f"--explore-suff={root}", "--lf")
    result.assert_outcomes(failed=1, deselected=3)
    assert report(pytester)["coverage"]["complete"] is False


def test_an_interrupted_run_writes_a_report_that_says_so(pytester):
    root = good_campaign(pytester.path / "camp")
    pytester.makeconftest(
        """
        def pytest_runtest_call(item):
            if item.name.endswith("new-3.jsonl"):
                raise KeyboardInterrupt
        """
    )
    result = pytester.runpytest(f"--explore-suff={root}", "-p", "no:randomly", no_reraise_ctrlc=True)
    assert result.ret == pytest.ExitCode.INTERRUPTED
    cov = report(pytester)["coverage"]
    assert (cov["complete"], cov["ran"]) == (False, 2)
    assert cov["why"] == ["2 not run (interrupted)"]


# --- gates that cannot be decided -------------------------------------------------------


def _baseline_from(pytester: pytest.Pytester, root: Path) -> None:
    pytester.runpytest(f"--explore-suff={root}", "--explore-suff-json=old.json")


@pytest.mark.parametrize("what", ["renamed arm", "empty baseline", "arm without calls"])
def test_a_drop_gate_that_cannot_be_decided_is_not_applicable_and_fails(pytester, what):
    old = pytester.path / "old"
    if what == "renamed arm":
        sufficient_run().write(old / "run-before-1.jsonl")
    elif what == "empty baseline":
        old.mkdir()
    else:
        Run().write(old / "run-new-1.jsonl")  # the arm ran, but never explored
    _baseline_from(pytester, old)
    root = good_campaign(pytester.path / "camp")
    result = pytester.runpytest(
        f"--explore-suff={root}", "--explore-suff-baseline=old.json", "--max-sufficient-drop=0.1"
    )
    assert result.ret == pytest.ExitCode.TESTS_FAILED
    result.stdout.fnmatch_lines(
        ["*--max-sufficient-drop: arm 'new' has no answered explore calls in the baseline: not applicable*"]
    )


def test_a_drop_gate_with_nothing_answered_on_either_side_fails(pytester):
    (pytester.path / "old").mkdir()
    _baseline_from(pytester, pytester.path / "old")
    (pytester.path / "camp").mkdir()
    result = pytester.runpytest(
        f"--explore-suff={pytester.path / 'camp'}",
        "--explore-suff-baseline=old.json",
        "--max-sufficient-drop=0.1",
    )
    assert result.ret == pytest.ExitCode.TESTS_FAILED
    result.stdout.fnmatch_lines(
        ["*--max-sufficient-drop: every arm has no answered explore calls in this campaign*"]
    )


def test_an_empty_campaign_with_a_gate_fails_with_the_gate_line(pytester):
    (pytester.path / "camp").mkdir()
    result = pytester.runpytest(f"--explore-suff={pytester.path / 'camp'}", "--min-sufficient=0.5")
    assert result.ret == pytest.ExitCode.TESTS_FAILED
    result.stdout.fnmatch_lines(
        ["*--min-sufficient: every arm has no answered explore calls: not applicable*"]
    )


def test_an_empty_campaign_without_a_gate_is_pytests_no_tests_collected(pytester):
    (pytester.path / "camp").mkdir()
    result = pytester.runpytest(f"--explore-suff={pytester.path / 'camp'}")
    assert result.ret == pytest.ExitCode.NO_TESTS_COLLECTED


# --- damaged input ------------------------------------------------------------------------


def _zip_with_damaged_member(path: Path, damage: str) -> Path:
    good = ("\n".join(sufficient_run().lines()) + "\n").encode()
    with zipfile.ZipFile(path, "w", compression=zipfile.ZIP_DEFLATED) as z:
        z.writestr("run-new-1.jsonl", good)
        z.writestr("run-new-2.jsonl", good * 4)
        z.writestr("notes-3.jsonl", ("\n".join(allocation_run().lines()) + "\n").encode())
    data = bytes(path.read_bytes())
    with zipfile.ZipFile(path) as z:
        for name in ("run-new-2.jsonl", "notes-3.jsonl"):
            info = z.getinfo(name)
            if damage == "crc":  # the CRC-32 in the local header and the central directory
                crc = struct.pack("<I", info.CRC)
                data = data.replace(crc, bytes(b ^ 0xFF for b in crc))
            else:  # flip bytes inside the deflate stream
                at = info.header_offset + 30 + len(name) + info.compress_size // 2
                data = data[:at] + bytes(b ^ 0xFF for b in data[at : at + 2]) + data[at + 2 :]
    path.write_bytes(data)
    return path


@pytest.mark.parametrize("damage", ["crc", "deflate"])
def test_a_damaged_zip_member_fails_its_item_in_one_line_and_the_rest_reports(pytester, dist, damage):
    archive = _zip_with_damaged_member(pytester.path / "camp.zip", damage)
    result = pytester.runpytest(f"--explore-suff={archive}", *dist)
    result.assert_outcomes(passed=1, failed=2)
    # Damaged deflate data fails as a bad CRC or as a zlib error, by where the damage lands.
    why = "Bad CRC-32" if damage == "crc" else ""
    result.stdout.fnmatch_lines(
        [f"FAILED camp.zip::run-new-2.jsonl - run-new-2.jsonl: cannot open *corrupt archive member: {why}*"]
    )
    assert "internal error" not in result.stdout.str()
    doc = report(pytester)
    assert {r["path"]: r["status"] for r in doc["transcripts"]} == {
        "notes-3.jsonl": "error", "run-new-1.jsonl": "classified", "run-new-2.jsonl": "error",
    }  # fmt: skip


@pytest.mark.parametrize(("marker", "groups"), [(r"^\*\*`([^`]+)`(\*\*)", 2), (r"^\*\*`[^`]+`\*\*", 0)])
def test_a_marker_without_exactly_one_group_is_a_usage_error(pytester, marker, groups):
    root = good_campaign(pytester.path / "camp")
    result = pytester.runpytest(f"--explore-suff={root}", f"--explore-suff-marker={marker}")
    assert result.ret == pytest.ExitCode.USAGE_ERROR
    result.stderr.fnmatch_lines([f"*--explore-suff-marker: needs exactly one group*(this one has {groups})*"])


def test_an_internal_error_fails_its_item_in_one_line_and_keeps_the_transcript(pytester, monkeypatch):
    import pytest_explore_suff

    def broken(collector: Any) -> Any:
        raise RuntimeError("boom")

    monkeypatch.setattr(pytest_explore_suff, "classify", broken)
    root = good_campaign(pytester.path / "camp", 1)
    result = pytester.runpytest(f"--explore-suff={root}")
    result.assert_outcomes(failed=1)
    result.stdout.fnmatch_lines(["*run-new-1.jsonl: internal error: RuntimeError: boom (at __init__.py:*)"])
    assert not any(frame in result.stdout.str() for frame in FRAMES)
    [rec] = report(pytester)["transcripts"]
    assert rec["reason"] == "internal error: RuntimeError: boom"


# --- nothing the user typed is dropped --------------------------------------------------------


def test_paths_named_on_the_command_line_are_collected_along_with_the_campaign(pytester):
    root = good_campaign(pytester.path / "camp", 2)
    pytester.makepyfile(test_mine="def test_mine(): pass")
    result = pytester.runpytest(f"--explore-suff={root}", "test_mine.py")
    result.assert_outcomes(passed=3)


def test_a_missing_named_path_is_pytests_usual_error(pytester):
    root = good_campaign(pytester.path / "camp", 2)
    result = pytester.runpytest(f"--explore-suff={root}", "no_such_test.py")
    assert result.ret == pytest.ExitCode.USAGE_ERROR
    result.stderr.fnmatch_lines(["*not found*no_such_test.py*"])


def test_two_different_campaigns_are_a_usage_error(pytester):
    a, b = good_campaign(pytester.path / "a", 1), good_campaign(pytester.path / "b", 1)
    result = pytester.runpytest(f"--explore-suff={a}", f"--explore-suff={b}")
    assert result.ret == pytest.ExitCode.USAGE_ERROR
    result.stderr.fnmatch_lines(["*--explore-suff given 2 times*one campaign per run*"])


def test_an_empty_campaign_option_switches_off_the_ini_campaign(pytester):
    good_campaign(pytester.path / "camp", 2)
    pytester.makeini("[pytest]\nexplore_suff = camp\n")
    pytester.makepyfile(test_mine="def test_mine(): pass")
    pytester.runpytest().assert_outcomes(passed=2)
    off = pytester.runpytest("--explore-suff=", "test_mine.py")
    off.assert_outcomes(passed=1)
    off.stdout.no_fnmatch_line("*explore sufficiency*")


@pytest.mark.parametrize("quiet", ["-q", "-qq"])
def test_gate_failures_are_printed_at_every_verbosity(pytester, quiet):
    root = good_campaign(pytester.path / "camp")
    result = pytester.runpytest(f"--explore-suff={root}", quiet, "--min-sufficient=0.9")
    assert result.ret == pytest.ExitCode.TESTS_FAILED
    result.stdout.fnmatch_lines(
        ["explore-suff gate --min-sufficient: arm 'new' sufficient share 0.500*FAILED"]
    )


def test_at_qq_passed_gates_and_the_tables_stay_quiet(pytester):
    root = good_campaign(pytester.path / "camp")
    result = pytester.runpytest(f"--explore-suff={root}", "-qq", "--min-sufficient=0.1")
    assert result.ret == 0
    result.stdout.no_fnmatch_line("*explore-suff gate*")
    result.stdout.no_fnmatch_line("*answered calls*")


# --- xdist on a campaign that is still being written ----------------------------------------


def test_xdist_workers_collect_the_controllers_list_while_files_come_and_go(pytester):
    root = good_campaign(pytester.path / "camp")
    # Each worker, as it starts, sees a campaign a harness is still writing.
    pytester.makeconftest(
        f"""
        import os
        from pathlib import Path
        from builders import sufficient_run

        def pytest_configure(config):
            worker = getattr(config, "workerinput", {{}}).get("workerid")
            if worker:
                sufficient_run().write(Path({str(root)!r}) / f"run-late-{{worker}}.jsonl")
                if worker == "gw1":
                    os.remove({str(root / "run-new-4.jsonl")!r})
        """
    )
    result = pytester.runpytest(f"--explore-suff={root}", "-n", "2", "-p", "no:randomly")
    assert "Different tests were collected" not in result.stdout.str()
    result.assert_outcomes(passed=3, failed=1)  # run-new-4 went away after discovery: its item says so
    result.stdout.fnmatch_lines(["*run-new-4.jsonl: cannot open run-new-4.jsonl*"])
    doc = report(pytester)
    assert sorted(r["path"] for r in doc["transcripts"]) == [f"run-new-{i}.jsonl" for i in range(1, 5)]
    assert doc["coverage"]["complete"] is True


# --- narrow terminals ---------------------------------------------------------------------------


@pytest.mark.parametrize("columns", [80, 100, 120])
def test_the_summary_fits_the_terminal(pytester, monkeypatch, columns):
    root = pytester.path / "camp"
    for arm in ("headless-with", "headless-without-tool", "headless-new-build"):
        for i in range(1, 3):
            sufficient_run().write(root / "express" / f"run{i}" / f"run-{arm}.jsonl")
            allocation_run().write(root / "flask" / f"run{i}" / f"run-{arm}.jsonl")
    _baseline_from(pytester, root)
    monkeypatch.setenv("COLUMNS", str(columns))
    result = pytester.runpytest(
        f"--explore-suff={root}", "--explore-suff-compare=headless-with,headless-new-build",
        "--explore-suff-baseline=old.json", "--min-sufficient=0.1", "-v",
    )  # fmt: skip
    assert result.ret == 0
    summary = result.stdout.lines[result.stdout.lines.index(next(
        line for line in result.stdout.lines if "explore sufficiency" in line)):]  # fmt: skip
    too_wide = [line for line in summary if len(line) > columns]
    assert not too_wide, "\n".join(too_wide)
    text = "\n".join(summary)
    assert "moved on / answered" in text or "sufficient" in text
    assert "headless-without-tool" in text and "against the baseline" in text
