"""The plugin end to end, through pytester."""

from __future__ import annotations

import gzip
import shutil
import tarfile
from pathlib import Path

import pytest
from agent_shapes import Rollout, explore_text
from builders import Run, ab_campaign, response, sufficient_run
from helpers import report

from pytest_explore_suff.gates import METRIC_BASELINE_GATES
from pytest_explore_suff.terminal import FOLDER_REASON

XDIST = [[], ["-n", "0"], ["-n", "2"]]


@pytest.fixture(params=XDIST, ids=["plain", "n0", "n2"])
def dist(request: pytest.FixtureRequest) -> list[str]:
    return request.param


def test_a_campaign_becomes_one_passing_item_per_transcript(pytester, campaign, dist):
    result = pytester.runpytest(f"--explore-suff={campaign}", *dist)
    result.assert_outcomes(passed=5)
    assert result.ret == 0


def test_the_summary_shows_each_arm_bucket_by_bucket(pytester, campaign, dist):
    result = pytester.runpytest(f"--explore-suff={campaign}", *dist)
    result.stdout.fnmatch_lines(
        [
            "*= explore sufficiency =*",
            "*headless-with*headless-without*(pooled)*",
            "transcripts*3*2*5*",
            "answered calls*3*0*3*",
            "explore again*0 (0%)*insufficient: did not answer",
            "Read a file we returned*1 (33%)*allocation: right file, wrong bytes",
            "Read a file we did not return*0 (0%)*",
            "Grep/Glob*0 (0%)*",
            "moved on / answered*2 (67%)*sufficient",
        ]
    )


def test_plain_and_xdist_runs_write_the_same_report(pytester, campaign):
    (campaign / "explore-new.jsonl").write_text('{"query": "x"}\n')  # ignored files come from the workers
    raced_run().write(campaign / "express" / "run9" / "run-headless-with.jsonl")
    pytester.runpytest(f"--explore-suff={campaign}", "--explore-suff-json=plain.json")
    pytester.runpytest(f"--explore-suff={campaign}", "-n", "2", "--explore-suff-json=dist.json")
    assert (pytester.path / "plain.json").read_bytes() == (pytester.path / "dist.json").read_bytes()


def test_the_example_campaign_gives_the_same_report_under_xdist(pytester, run_campaign, example_campaign):
    for name, args in (("plain.json", ()), ("dist.json", ("-n", "2"))):
        run_campaign(example_campaign, *args, json=name)[0].assert_outcomes(passed=9)
    assert (pytester.path / "plain.json").read_bytes() == (pytester.path / "dist.json").read_bytes()


def test_only_the_campaign_is_collected_not_the_folders_tests(pytester, campaign):
    pytester.makepyfile(test_project="def test_project(): assert False")
    (campaign / "express" / "t-new").mkdir()
    (campaign / "express" / "t-new" / "test_target.py").write_text("def test_t(): assert False\n")
    result = pytester.runpytest(f"--explore-suff={campaign}")
    result.assert_outcomes(passed=5)


def test_items_are_named_by_their_path_in_sorted_order(pytester, campaign):
    result = pytester.runpytest(f"--explore-suff={campaign}", "--collect-only", "-q")
    lines = [line for line in result.stdout.lines if "::" in line]
    names = [line.split("::", 1)[1] for line in lines]
    assert names == sorted(names)
    assert "express/run1/run-headless-with.jsonl" in names


def test_turn_segments_are_one_item_in_numeric_turn_order(pytester):
    root = pytester.path / "c"
    first, second, tenth = Run(), Run(), Run()
    e = first.step(first.explore("t1"), response(["lib/a.js"]))
    second.step(second.explore("t2"), response(["lib/b.js"]))
    tenth.step(tenth.use("Read", file_path="lib/b.js"))
    first.write(root / "run-new.jsonl")
    second.write(root / "run-new.t2.jsonl")
    tenth.write(root / "run-new.t10.jsonl")
    assert e
    result = pytester.runpytest(f"--explore-suff={root}")
    result.assert_outcomes(passed=1)
    rec = report(pytester)["transcripts"][0]
    assert rec["files"] == ["run-new.jsonl", "run-new.t2.jsonl", "run-new.t10.jsonl"]
    assert [c["next"] for c in rec["calls"]] == ["codegraph_explore", "Read b.js"]


def test_files_that_are_not_transcripts_are_ignored_and_listed(pytester, campaign):
    (campaign / "explore-new.jsonl").write_text('{"query": "x", "ms": 3}\n')
    data = campaign / "express" / "t-new" / "fixtures"
    data.mkdir(parents=True)
    (data / "rows.jsonl").write_text('{"id": 1}\n{"id": 2}\n')
    result = pytester.runpytest(f"--explore-suff={campaign}")
    result.assert_outcomes(passed=5)
    result.stdout.fnmatch_lines(["ignored: 2 file(s) that are not transcripts or were not followed*"])
    assert [i["path"] for i in report(pytester)["ignored"]] == [
        "explore-new.jsonl",
        "express/t-new/fixtures/rows.jsonl",
    ]


def accounted(doc: dict, path: str) -> bool:
    """Whether the report accounts for ``path``: a transcript's file, ignored, or in an ignored folder."""
    if any(path in r["files"] for r in doc["transcripts"]):
        return True
    return any(path == i["path"] or path.startswith(i["path"] + "/") for i in doc["ignored"])


@pytest.mark.parametrize("archive", [False, True], ids=["folder", "tar.gz"])
@pytest.mark.parametrize("dist", [[], ["-n", "2"]], ids=["n0", "n2"])
def test_the_report_accounts_for_every_file_of_the_campaign(pytester, campaign, archive, dist):
    (campaign / "conftest.py").write_text("raise SystemExit('imported')\n")
    (campaign / "notes.txt").write_text("arm b was rerun\n")
    (campaign / "express" / "run1" / "stderr").write_text("")
    repo = campaign / "express" / "t-new"  # a copy of the target repository: one entry
    for name in ("lib/a.js", "lib/b.js", "package.json", ".git/HEAD"):
        (repo / name).parent.mkdir(parents=True, exist_ok=True)
        (repo / name).write_text("x\n")
    (campaign / ".git").mkdir()
    (campaign / ".git" / "config").write_text("")
    files = sorted(p.relative_to(campaign).as_posix() for p in campaign.rglob("*") if p.is_file())
    target = campaign
    if archive:
        target = pytester.path / "camp.tar.gz"
        with tarfile.open(target, "w:gz") as t:
            t.add(campaign, arcname="camp")
    result = pytester.runpytest(f"--explore-suff={target}", *dist)
    result.assert_outcomes(passed=5)
    doc = report(pytester)
    assert [f for f in files if not accounted(doc, f)] == []
    reasons = {i["path"]: i["reason"] for i in doc["ignored"]}
    assert reasons["conftest.py"] == "not a transcript (a Python file: never imported nor read)"
    assert reasons["notes.txt"] == "not a transcript (no reader reads *.txt files), not read"
    no_suffix = "not a transcript (no reader reads files named like this), not read"
    assert reasons["express/run1/stderr"] == no_suffix
    # its package.json is sniffed (a .json could be a transcript) and listed alone
    assert reasons["express/t-new"] == "a folder with no transcript in it (2 files no reader reads), not read"
    assert reasons["express/t-new/package.json"].startswith("not a transcript (a JSON document")
    assert "does not enter" in reasons[".git"] and "does not enter" in reasons["express/t-new/.git"]
    folders = ["express/t-new", "express/t-new/.git", ".git"]
    assert all(reasons[f].startswith(FOLDER_REASON) for f in folders)
    files = len(reasons) - len(folders)
    result.stdout.fnmatch_lines([f"ignored: {files} file(s) and 3 folder(s) that are not transcripts*"])


@pytest.mark.parametrize("content", [b"", b"not json at all\n", b"\x00\x01\x02\xff\xfe"])
def test_a_run_file_that_is_empty_or_garbage_fails_with_one_clear_line(pytester, campaign, content):
    (campaign / "express" / "run1" / "run-headless-new.jsonl").write_bytes(content)
    result = pytester.runpytest(f"--explore-suff={campaign}")
    result.assert_outcomes(passed=5, failed=1)
    result.stdout.fnmatch_lines(["express/run1/run-headless-new.jsonl: *not a transcript*"])
    rec = {r["path"]: r for r in report(pytester)["transcripts"]}["express/run1/run-headless-new.jsonl"]
    assert rec["status"] == "error"
    assert "not a transcript" in rec["reason"] or "empty" in rec["reason"]


def test_arm_group_and_run_are_inferred_from_the_layout(pytester, campaign):
    pytester.runpytest(f"--explore-suff={campaign}")
    recs = {r["path"]: r for r in report(pytester)["transcripts"]}
    rec = recs["express/run2/run-headless-with.jsonl"]
    assert (rec["arm"], rec["group"], rec["run"]) == ("headless-with", "express", "2")


def test_flat_new_vs_baseline_layout_takes_the_run_index_from_the_name(pytester):
    root = pytester.path / "nb"
    sufficient_run().write(root / "run-new-1.jsonl")
    sufficient_run().write(root / "run-baseline-12.jsonl")
    pytester.runpytest(f"--explore-suff={root}")
    recs = {r["path"]: (r["arm"], r["run"]) for r in report(pytester)["transcripts"]}
    assert recs == {"run-new-1.jsonl": ("new", "1"), "run-baseline-12.jsonl": ("baseline", "12")}


def test_a_pattern_overrides_arm_and_group(pytester, campaign):
    pytester.runpytest(
        f"--explore-suff={campaign}",
        r"--explore-suff-pattern=^(?P<group>[^/]+)/run\d+/run-headless-(?P<arm>\w+)",
    )
    arms = report(pytester)["arms"]
    assert sorted(arms) == ["with", "without"]


@pytest.mark.parametrize("end", [r"\.jsonl$", r"\.jsonl\.gz$"])
def test_a_pattern_names_a_compressed_transcript_as_it_does_the_plain_one(pytester, end):
    root = pytester.path / "c"
    sufficient_run().write(root / "g" / "ab-new-1.jsonl")
    plain = root / "g" / "ab-old-1.jsonl"
    sufficient_run().write(plain)
    (plain.parent / (plain.name + ".gz")).write_bytes(gzip.compress(plain.read_bytes()))
    plain.unlink()
    pytester.runpytest(f"--explore-suff={root}", rf"--explore-suff-pattern=ab-(?P<arm>\w+)-(?P<run>\d+){end}")
    arms = {r["path"]: r["arm"] for r in report(pytester)["transcripts"]}
    if end == r"\.jsonl$":
        assert arms == {"g/ab-new-1.jsonl": "new", "g/ab-old-1.jsonl.gz": "old"}
    else:  # a pattern that names the .gz still matches it, and only it
        assert arms["g/ab-old-1.jsonl.gz"] == "old" and arms["g/ab-new-1.jsonl"] != "new"


def test_the_arm_is_a_keyword_for_k(pytester, campaign):
    result = pytester.runpytest(f"--explore-suff={campaign}", "-k", "headless-without")
    result.assert_outcomes(passed=2, deselected=3)


def agents_campaign(root: Path) -> Path:
    """Claude Code runs in a folder named after Codex, a Codex rollout, and a group whose name
    no marker can carry."""
    sufficient_run("claude q").write(root / "codex-runs" / "run-claude.jsonl")
    sufficient_run("odd q").write(root / "odd (group)" / "run-claude.jsonl")
    codex = Rollout("current", "exec_command")
    codex.step(codex.explore("codex q"), outputs=[explore_text(["lib/a.py"])])
    codex.step(codex.shell("sed -n '1,80p' lib/a.py"))
    codex.finish()
    codex.write(root / "q1" / "codex" / "rollout-2026-03-01T10-01-00-0199.jsonl")
    return root


@pytest.mark.parametrize(
    ("select", "selected"),
    [
        (["-k", "agent_codex"], ["q1/codex/rollout-2026-03-01T10-01-00-0199.jsonl"]),
        (["-k", "agent_claude and not group_odd"], ["codex-runs/run-claude.jsonl"]),
        (["-m", "agent_codex"], ["q1/codex/rollout-2026-03-01T10-01-00-0199.jsonl"]),
        (["-m", "group_codex-runs or arm_codex"],
         ["codex-runs/run-claude.jsonl", "q1/codex/rollout-2026-03-01T10-01-00-0199.jsonl"]),
        (["-m", "not agent_codex", "-n", "2"],
         ["codex-runs/run-claude.jsonl", "odd (group)/run-claude.jsonl"]),
        (["-k", "codex"],  # pytest's -k also matches names: the folder named codex-runs
         ["codex-runs/run-claude.jsonl", "q1/codex/rollout-2026-03-01T10-01-00-0199.jsonl"]),
    ],
)  # fmt: skip
def test_transcripts_are_selected_by_agent_arm_and_group(pytester, select, selected):
    root = agents_campaign(pytester.path / "c")
    # Under strict markers and warnings as errors: the markers are registered.
    result = pytester.runpytest(
        f"--explore-suff={root}", "--strict-markers", "-W", "error", "-p", "no:randomly", *select
    )
    assert result.ret == 0
    result.assert_outcomes(passed=len(selected), deselected=0 if "-n" in select else 3 - len(selected))
    ran = [r["path"] for r in report(pytester)["transcripts"]]
    assert sorted(ran) == selected


def raced_run() -> Run:
    run = Run()
    run.step(
        run.explore(),
        "<tool_use_error>Error: No such tool available: mcp__codegraph__codegraph_explore",
        is_error=True,
    )
    run.step(run.use("Grep", pattern="x"))
    return run


def contaminated_run() -> Run:
    run = Run()
    run.step(run.use("Bash", command="cd /r && codegraph explore 'send'"), "lib/response.js ...")
    return run


def test_raced_and_contaminated_runs_are_skipped_and_kept_out_of_the_aggregates(pytester, campaign, dist):
    raced_run().write(campaign / "express" / "run9" / "run-headless-with.jsonl")
    contaminated_run().write(campaign / "express" / "run9" / "run-headless-without.jsonl")
    result = pytester.runpytest(f"--explore-suff={campaign}", "-rs", *dist)
    result.assert_outcomes(passed=5, skipped=2)
    result.stdout.fnmatch_lines(
        [
            "excluded from the aggregates: 2 transcript(s)",
            "  express/run9/run-headless-with.jsonl: raced *",
            "  express/run9/run-headless-without.jsonl: contaminated *",
            "SKIPPED [[]1] *run9/run-headless-with.jsonl:1: excluded: raced*",
        ]
    )
    doc = report(pytester)
    assert doc["arms"]["headless-with"]["transcripts"] == 3
    flags = {r["path"]: r["flags"] for r in doc["transcripts"]}
    assert flags["express/run9/run-headless-with.jsonl"] == {"raced": True, "contaminated": False}
    assert flags["express/run9/run-headless-without.jsonl"] == {"raced": False, "contaminated": True}


def test_keep_excluded_counts_them_in(pytester, campaign):
    raced_run().write(campaign / "express" / "run9" / "run-headless-with.jsonl")
    result = pytester.runpytest(f"--explore-suff={campaign}", "--explore-suff-keep-excluded")
    result.assert_outcomes(passed=6)
    assert report(pytester)["arms"]["headless-with"]["transcripts"] == 4


def test_corrupt_lines_warn_and_strict_makes_them_fail(pytester, campaign):
    path = campaign / "express" / "run1" / "run-headless-with.jsonl"
    lines = path.read_text().splitlines()
    path.write_text("\n".join([lines[0], "{oops", *lines[1:]]) + "\n")
    result = pytester.runpytest(f"--explore-suff={campaign}", "-W", "default::UserWarning")
    result.assert_outcomes(passed=5, warnings=1)
    result.stdout.fnmatch_lines(["*1 corrupt line(s) skipped (line 2)*"])
    strict = pytester.runpytest(f"--explore-suff={campaign}", "--explore-suff-strict")
    strict.assert_outcomes(passed=4, failed=1)


def test_verbose_prints_the_per_call_lines_of_calls_that_were_not_sufficient(pytester, campaign):
    result = pytester.runpytest(f"--explore-suff={campaign}", "-v")
    result.stdout.fnmatch_lines(
        [
            "express/run2/run-headless-with.jsonl [headless-with]",
            '  1. "two" [1 file] → Read a.js',
        ]
    )
    assert '"one"' not in result.stdout.str()


def test_a_small_arm_gets_a_warning(pytester, campaign):
    result = pytester.runpytest(f"--explore-suff={campaign}")
    result.stdout.fnmatch_lines(["warning: arm headless-with: 3 answered calls (design effect *)*"])


def test_control_characters_from_transcripts_never_reach_the_terminal(pytester):
    root = pytester.path / "c"
    run = Run()
    run.step(run.explore("evil \x1b[2J\x1b]0;pwned\x07 query"), response(["lib/a.js"]))
    run.step(run.use("Read", file_path="/x/lib/\x1b[31mred.js"))
    run.write(root / "run-x\x1b[1m.jsonl")
    result = pytester.runpytest(f"--explore-suff={root}", "-v")
    out = result.stdout.str()
    assert "\x1b" not in out and "\x07" not in out
    assert "\\x1b[2J" in out
    rec = report(pytester)["transcripts"][0]
    assert rec["calls"][0]["query"] == "evil \x1b[2J\x1b]0;pwned\x07 query"


def test_the_json_report_has_the_documented_fields(pytester, campaign):
    pytester.runpytest(f"--explore-suff={campaign}")
    doc = report(pytester)
    assert doc["schema"] == "pytest-explore-suff/3"
    assert set(doc) >= {"run", "fingerprint", "merge", "trend"}
    rec = doc["transcripts"][0]
    assert set(rec) >= {
        "path",
        "files",
        "digest",
        "arm",
        "group",
        "run",
        "kind",
        "status",
        "reason",
        "flags",
        "counts",
        "answered",
        "errored",
        "concurrent",
        "warnings",
        "calls",
        "allocation",
        "allocation_reason",
        "occupancy",
        "occupancy_reason",
        "tokens_processed",
    }
    assert set(rec["calls"][0]) >= {"thread", "query", "files", "bucket", "next", "named", "truncated"}
    assert set(doc["arms"]["headless-with"]) >= {
        "transcripts", "answered", "counts", "shares", "allocation", "occupancy"
    }  # fmt: skip
    assert doc["arms"]["headless-with"]["shares"]["sufficient"] == pytest.approx(2 / 3)


def test_the_json_report_is_byte_identical_across_runs(pytester, campaign):
    pytester.runpytest(f"--explore-suff={campaign}", "--explore-suff-json=a.json")
    pytester.runpytest(f"--explore-suff={campaign}", "--explore-suff-json=b.json")
    assert (pytester.path / "a.json").read_bytes() == (pytester.path / "b.json").read_bytes()


def test_the_json_path_comes_from_the_ini_and_none_disables_it(pytester, campaign):
    pytester.makeini(f"[pytest]\nexplore_suff = {campaign}\nexplore_suff_json = out/report.json\n")
    pytester.runpytest().assert_outcomes(passed=5)
    assert (pytester.path / "out" / "report.json").exists()
    (pytester.path / "out" / "report.json").unlink()
    pytester.runpytest("--explore-suff-json=none")
    assert not (pytester.path / "out" / "report.json").exists()


# --- gates -------------------------------------------------------------------------


def test_a_met_gate_passes_and_says_so(pytester, campaign, dist):
    result = pytester.runpytest(f"--explore-suff={campaign}", "--min-sufficient=0.5", *dist)
    assert result.ret == 0
    result.stdout.fnmatch_lines(
        [
            "explore-suff gate --min-sufficient: arm 'headless-with' sufficient share "
            "0.667 (n=3) >= 0.5: passed"
        ]
    )


def test_a_failed_gate_fails_the_run_with_one_explicit_line(pytester, campaign, dist):
    result = pytester.runpytest(f"--explore-suff={campaign}", "--min-sufficient=0.9", *dist)
    assert result.ret == 1
    result.assert_outcomes(passed=5)
    result.stdout.fnmatch_lines(["explore-suff gate --min-sufficient: arm 'headless-with' * FAILED"])
    gate = report(pytester)["gates"][0]
    assert gate == {
        "arm": "headless-with",
        "metric": "sufficient",
        "op": "min",
        "threshold": 0.9,
        "value": pytest.approx(2 / 3),
        "n": 3,
        "on": "point",
        "bound": None,
        "passed": False,
    }


def test_an_upper_bound_gate_on_a_named_arm(pytester, campaign):
    ok = pytester.runpytest(f"--explore-suff={campaign}", "--max-read-returned=headless-with:0.4")
    assert ok.ret == 0
    bad = pytester.runpytest(f"--explore-suff={campaign}", "--max-read-returned=headless-with:0.2")
    assert bad.ret == 1


def test_an_arm_without_answered_calls_is_not_applicable_not_a_pass(pytester, campaign):
    result = pytester.runpytest(f"--explore-suff={campaign}", "--min-sufficient=headless-without:0.1")
    assert result.ret == 1
    result.stdout.fnmatch_lines(["*arm 'headless-without' has no answered explore calls: not applicable*"])
    assert report(pytester)["gates"][0]["passed"] is None


@pytest.mark.parametrize("gate", ["--min-sufficient=headless-wth:0.1", "--min-allocation=headless-wth:0.1"])
def test_a_gate_on_an_arm_the_campaign_does_not_have_names_the_arms_it_has(pytester, campaign, gate):
    result = pytester.runpytest(f"--explore-suff={campaign}", gate, "-p", "no:randomly")
    assert result.ret == 1
    said = " ".join(result.stdout.str().split())  # the line may wrap
    assert "arm 'headless-wth' has no classified transcript (the arms with one: headless-with, " in said
    assert report(pytester)["gates"][0]["passed"] is None


def test_a_global_gate_skips_arms_that_never_explore(pytester, campaign):
    result = pytester.runpytest(f"--explore-suff={campaign}", "--min-sufficient=0.5")
    assert [g["arm"] for g in report(pytester)["gates"]] == ["headless-with"]
    assert result.ret == 0


def test_gates_come_from_the_ini_and_the_command_line_wins(pytester, campaign):
    pytester.makeini(f"[pytest]\nexplore_suff = {campaign}\nexplore_suff_min_sufficient = 0.9\n")
    assert pytester.runpytest().ret == 1
    assert pytester.runpytest("--min-sufficient=0.5").ret == 0


@pytest.mark.parametrize("value", ["abc", "1.5", "-0.1", ":0.5", "with:x"])
def test_a_bad_gate_value_is_a_usage_error_at_parse_time(pytester, campaign, value):
    result = pytester.runpytest(f"--explore-suff={campaign}", f"--min-sufficient={value}")
    assert result.ret == pytest.ExitCode.USAGE_ERROR
    result.stderr.fnmatch_lines(["*--min-sufficient*"])


def test_a_bad_ini_gate_is_a_usage_error(pytester, campaign):
    pytester.makeini(f"[pytest]\nexplore_suff = {campaign}\nexplore_suff_max_search = lots\n")
    result = pytester.runpytest()
    assert result.ret == pytest.ExitCode.USAGE_ERROR
    result.stderr.fnmatch_lines(["*explore_suff_max_search*"])


def test_the_report_is_written_when_a_gate_fails(pytester, campaign):
    pytester.runpytest(f"--explore-suff={campaign}", "--min-sufficient=1")
    assert report(pytester)["gates"][0]["passed"] is False


def test_gates_appear_in_the_junit_xml(pytester, campaign):
    pytester.runpytest(f"--explore-suff={campaign}", "--min-sufficient=0.9", "--junitxml=j.xml")
    xml = (pytester.path / "j.xml").read_text()
    assert 'name="explore_suff_gate --min-sufficient headless-with" value="failed"' in xml


@pytest.mark.parametrize("workers", [[], ["-n", "2"]])
def test_each_transcript_has_its_properties_in_the_junit_xml(pytester, campaign, workers):
    # The reports of an item share one list of properties (memory): junitxml still
    # writes each testcase's own, arm, group, answered calls and sufficient ones.
    import xml.etree.ElementTree as ET

    pytester.runpytest(f"--explore-suff={campaign}", "--junitxml=j.xml", *workers)
    cases = ET.parse(pytester.path / "j.xml").getroot().iter("testcase")
    found = {
        case.get("name"): {p.get("name"): p.get("value") for p in case.iter("property")} for case in cases
    }
    assert found, "no testcase in the junit XML"
    for name, props in found.items():
        assert props.keys() == {"arm", "group", "answered", "sufficient"}, (name, props)
        assert props["arm"] in ("headless-with", "headless-without") and props["arm"] in name
    assert {p["answered"] for p in found.values()} != {"0"}


# --- usage -------------------------------------------------------------------------


@pytest.mark.parametrize("where", ["missing", "file"])
def test_a_missing_campaign_directory_is_a_one_line_usage_error(pytester, where):
    target = pytester.path / "nope"
    if where == "file":
        target.write_text("x")
    result = pytester.runpytest(f"--explore-suff={target}")
    assert result.ret == pytest.ExitCode.USAGE_ERROR
    result.stderr.fnmatch_lines([f"ERROR: --explore-suff: campaign directory {target} *"])


def test_help_lists_every_option(pytester):
    result = pytester.runpytest("--help")
    result.stdout.fnmatch_lines(
        [
            "explore sufficiency of coding-agent campaigns:",
            "*--explore-suff=DIR*",
            "*--explore-suff-json=PATH*",
            "*--explore-suff-pattern=REGEX*",
            "*--explore-suff-tool=SUBSTR*",
            "*--explore-suff-family=SUBSTR*",
            "*--explore-suff-marker=REGEX*",
            "*--explore-suff-keep-excluded*",
            "*--explore-suff-strict*",
            "*--explore-suff-gate-on=*",
            "*--explore-suff-min-calls=N*",
            "*--explore-suff-compare=A,B*",
            "*--explore-suff-baseline=REPORT*",
            "*--max-sufficient-drop=FRAC*",
            "*--min-sufficient=[[]ARM:]FRAC*",
            "*--max-explore-again=[[]ARM:]FRAC*",
            "*--max-read-returned=[[]ARM:]FRAC*",
            "*--max-read-missed=[[]ARM:]FRAC*",
            "*--max-search=[[]ARM:]FRAC*",
        ]
    )


def test_help_prints_percent_signs_once_in_flags_and_ini_settings(pytester):
    # argparse formats a flag's help with %, pytest prints an ini setting's as it is
    result = pytester.runpytest("--help")
    text = " ".join(result.stdout.str().split())
    assert "%%" not in text
    gate_on = "decide threshold gates on the point estimate (default) or on the 95% interval's bound"
    for name in ("--explore-suff-gate-on={point,bound}", "explore_suff_gate_on (string):"):
        assert f"{name} {gate_on}" in text
    growth = [stem for stem, (_, op) in METRIC_BASELINE_GATES.items() if op == "max_growth"]
    assert growth and text.count("(0.2: 20%)") == 2 * len(growth)
    for stem in growth:
        assert f"explore_suff_{stem} (linelist): fail when " in text


@pytest.mark.parametrize("where", ["command line", "ini"])
def test_a_tilde_in_a_path_is_the_users_home(pytester, campaign, monkeypatch, where):
    home = pytester.mkdir("home")
    monkeypatch.setenv("HOME", str(home))
    shutil.move(campaign, home / "ab")
    if where == "ini":
        pytester.makeini(
            "[pytest]\nexplore_suff = ~/ab\nexplore_suff_json = ~/r.json\nexplore_suff_html = ~/r.html\n"
        )
        first = pytester.runpytest()
    else:
        first = pytester.runpytest(
            "--explore-suff=~/ab", "--explore-suff-json=~/r.json", "--explore-suff-html=~/r.html"
        )
    first.assert_outcomes(passed=5)
    assert (home / "r.json").is_file() and (home / "r.html").is_file()
    again = pytester.runpytest(
        "--explore-suff=~/ab", "--explore-suff-json=~/s.json", "--explore-suff-baseline=~/r.json",
        "--max-sufficient-drop=0",
    )  # fmt: skip
    assert again.ret == 0
    assert report(pytester, "home/s.json")["baseline"]["report"] == str(home / "r.json")


def test_without_the_option_the_plugin_stays_out_of_the_way(pytester):
    pytester.makepyfile(test_x="def test_x(): pass")
    result = pytester.runpytest()
    result.assert_outcomes(passed=1)
    assert "explore sufficiency" not in result.stdout.str()
    assert not (pytester.path / "explore-suff.json").exists()


def test_ini_paths_are_relative_to_the_ini_file_not_the_current_folder(pytester, campaign):
    pytester.makeini("[pytest]\nexplore_suff = ab\nexplore_suff_json = out/r.json\n")
    sub = pytester.mkdir("sub")
    with pytest.MonkeyPatch.context() as mp:
        mp.chdir(sub)
        result = pytester.runpytest(f"--rootdir={pytester.path}", f"-c={pytester.path / 'tox.ini'}")
    result.assert_outcomes(passed=5)
    assert (pytester.path / "out" / "r.json").exists()


def test_a_campaign_outside_the_rootdir_names_its_items_after_the_campaign(pytester, tmp_path_factory):
    outside = ab_campaign(tmp_path_factory.mktemp("elsewhere") / "ab-readme", with_runs=[sufficient_run()],
                          without_runs=[])  # fmt: skip
    result = pytester.runpytest(f"--explore-suff={outside}", "--collect-only", "-q")
    result.stdout.fnmatch_lines(["ab-readme::express/run1/run-headless-with.jsonl"])


def test_a_conftest_hooks_the_transcripts_it_covers_and_only_those(pytester, campaign, dist):
    # The items share their campaign node's hook proxy (nodes.share_hooks): a conftest.py
    # above the campaign still sees them, one beside it (loaded for its own tests) does not.
    pytester.makeconftest(
        """
        def pytest_runtest_setup(item):
            if item.name.endswith(".jsonl"):
                print("covered", item.name)
        """
    )
    beside = pytester.mkpydir("beside")
    (beside / "conftest.py").write_text(
        "def pytest_runtest_setup(item):\n    raise AssertionError(f'not covered: {item.name}')\n"
    )
    (beside / "test_own.py").write_text("def test_own():\n    pass\n")
    result = pytester.runpytest(f"--explore-suff={campaign}", "beside", "-s", "-p", "no:randomly", *dist)
    # beside's own test fails in its setup: its conftest is in use there and only there
    result.assert_outcomes(passed=5, errors=1)
    if not dist or dist == ["-n", "0"]:  # under xdist a worker's output is not shown
        assert result.stdout.str().count("covered ") == 5


def test_one_answered_call_is_one_call_in_the_summary_and_the_gates(pytester):
    root = ab_campaign(pytester.path / "c", with_runs=[sufficient_run()], without_runs=[sufficient_run()])
    result = pytester.runpytest(f"--explore-suff={root}", "--explore-suff-min-calls=2")
    result.stdout.fnmatch_lines(
        [
            "warning: arm headless-with: 1 answered call (design effect 1.0) detect only*",
            "*--explore-suff-min-calls: arm 'headless-with' has 1 answered call, needs 2: FAILED*",
        ]
    )
    assert "1 answered calls" not in result.stdout.str()
