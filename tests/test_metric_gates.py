"""The two other metrics through the plugin: their report fields, terminal blocks and gates."""

from __future__ import annotations

import json
import shutil

import pytest
from helpers import EXAMPLES

XDIST = pytest.importorskip("xdist") and ["-p", "xdist", "-n", "2"]


@pytest.fixture
def two_arms(pytester: pytest.Pytester):
    """The example campaign without its interactive session: two arms, both with token usage."""
    root = pytester.path / "ab"
    shutil.copytree(EXAMPLES / "campaign", root, ignore=shutil.ignore_patterns("sessions"))
    return root


def test_every_transcript_of_the_example_has_both_metrics_or_a_reason(run_campaign, example_campaign):
    _, doc = run_campaign(example_campaign)
    for rec in doc["transcripts"]:
        for metric in ("allocation", "occupancy"):
            assert (rec[metric] is None) == bool(rec[f"{metric}_reason"]), rec["path"]
    by_path = {r["path"]: r for r in doc["transcripts"]}
    # The without-tool arm never explores, so it has no envelope, but its window is measured.
    without = by_path["express/run1/run-headless-without.jsonl"]
    assert without["allocation"] is None and "no answered explore call" in without["allocation_reason"]
    assert without["occupancy"]["residual"]["read"] > 0 and without["occupancy"]["residual"]["tool"] == 0
    # The interactive session logs no usage: no occupancy, and the record says why.
    session = next(r for r in doc["transcripts"] if r["kind"] == "interactive")
    assert session["occupancy"] is None and "no token counts" in session["occupancy_reason"]


def test_the_arm_pair_line_says_the_direction_in_words(run_campaign, two_arms):
    result, doc = run_campaign(two_arms)
    pair = doc["metrics_comparison"]
    assert (pair["a"], pair["b"]) == ("headless-with", "headless-without")
    residual = pair["residual"]
    assert residual["direction"] == ("higher" if residual["mean_pct"] > 0 else "lower")
    assert residual["fixed_overhead"] == 546  # the example's with-tool arm pays 546 tokens of schemas
    result.stdout.fnmatch_lines(
        [f"retrieval residual * {residual['direction']} with headless-with than with*"]
    )
    result.stdout.fnmatch_lines(["*allocation efficiency*", "*residual context occupancy*"])


def test_the_report_with_the_metrics_is_the_same_under_xdist(run_campaign, example_campaign):
    _, plain = run_campaign(example_campaign, json="a.json")
    _, dist = run_campaign(example_campaign, *XDIST, json="b.json")
    assert plain == dist
    assert plain["arms"]["headless-with"]["allocation"]["calls"] == 8


@pytest.mark.parametrize(
    ("option", "passes"),
    [
        ("--min-allocation=0.05", True),
        ("--min-allocation=0.5", False),
        ("--max-residual-share=0.5", True),
        ("--max-residual-share=0.001", False),
    ],
)
def test_metric_gates_pass_and_fail_as_their_names_say(run_campaign, two_arms, option, passes):
    result, doc = run_campaign(two_arms, option)
    assert result.ret == (0 if passes else 1)
    (gate,) = doc["gates"]
    assert gate["passed"] is passes
    word = "passed" if passes else "FAILED"
    result.stdout.fnmatch_lines([f"explore-suff gate {option.split('=')[0]}: arm 'headless-with' *: {word}"])


def test_a_metric_gate_on_an_arm_without_the_figure_is_not_applicable(run_campaign, two_arms):
    result, doc = run_campaign(two_arms, "--min-allocation=headless-without:0.1")
    assert result.ret == 1
    assert doc["gates"][0]["passed"] is None
    result.stdout.fnmatch_lines(
        ["*--min-allocation: arm 'headless-without' has no allocation figure*not a pass"]
    )


def test_metric_gates_are_printed_at_qq_and_written_to_junit(run_campaign, two_arms, pytester):
    result, _ = run_campaign(two_arms, "-qq", "--max-residual-share=0.001", "--junitxml=j.xml")
    assert result.ret == 1
    result.stdout.fnmatch_lines(["explore-suff gate --max-residual-share*FAILED"])
    assert (
        'name="explore_suff_gate --max-residual-share headless-with" value="failed"'
        in (pytester.path / "j.xml").read_text()
    )


def test_baseline_gates_need_a_baseline(run_campaign, two_arms):
    result, _ = run_campaign(two_arms, "--max-residual-growth=0.1")
    assert result.ret == pytest.ExitCode.USAGE_ERROR
    result.stderr.fnmatch_lines(["*--max-residual-growth needs --explore-suff-baseline=REPORT*"])


def test_baseline_gates_against_the_same_campaign_pass(run_campaign, two_arms, pytester):
    run_campaign(two_arms, json="base.json")
    result, doc = run_campaign(
        two_arms, f"--explore-suff-baseline={pytester.path / 'base.json'}",
        "--max-allocation-drop=0.01", "--max-residual-growth=0.01",
    )  # fmt: skip
    assert result.ret == 0, result.stdout.str()
    assert [g["passed"] for g in doc["gates"]] == [True, True]
    change = doc["baseline"]["arms"]["headless-with"]
    assert change["residual"]["growth"] == 0.0 and change["allocation"]["diff"] == 0.0


def test_a_baseline_of_schema_1_loads_and_its_missing_figures_are_not_a_pass(
    run_campaign, two_arms, pytester
):
    run_campaign(two_arms, json="base.json")
    old = json.loads((pytester.path / "base.json").read_text())
    old["schema"] = "pytest-explore-suff/1"
    for rec in old["transcripts"]:
        for key in ("allocation", "allocation_reason", "occupancy", "occupancy_reason", "tokens_processed"):
            del rec[key]
    (pytester.path / "old.json").write_text(json.dumps(old))
    result, doc = run_campaign(
        two_arms,
        f"--explore-suff-baseline={pytester.path / 'old.json'}",
        "--max-residual-growth=headless-with:0.5",
    )
    assert result.ret == 1
    assert doc["baseline"]["arms"]["headless-with"]["residual"]["old"] is None
    result.stdout.fnmatch_lines(["*median retrieval residual, tokens: not in the baseline*"])
    result.stdout.fnmatch_lines(
        ["*--max-residual-growth: arm 'headless-with' has no median retrieval residual in the*"]
    )


@pytest.mark.parametrize(
    "bad",
    [
        "--min-allocation=1.5",
        "--max-residual-share=abc",
        "--max-residual-growth=-1",
        "--explore-suff-window=0",
    ],
)
def test_bad_metric_options_are_usage_errors(run_campaign, two_arms, bad):
    result, doc = run_campaign(two_arms, bad)
    assert result.ret == pytest.ExitCode.USAGE_ERROR
    assert doc is None


def test_the_window_option_reaches_the_records(run_campaign, two_arms):
    _, doc = run_campaign(two_arms, "--explore-suff-window=1000000")
    windows = {r["occupancy"]["window"] for r in doc["transcripts"] if r["occupancy"]}
    assert windows == {1_000_000}


def test_verbose_lists_each_calls_allocation_and_the_uncited_files(run_campaign, two_arms):
    result, _ = run_campaign(two_arms, "-v")
    result.stdout.fnmatch_lines(["  call 1: *% of * chars, */* files", "  not cited: *"])
