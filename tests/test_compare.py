"""Arm comparison, uncertainty-aware gates and baseline regression, through the plugin."""

from __future__ import annotations

from pathlib import Path

import pytest
from builders import allocation_run, no_explore_run, sufficient_run
from helpers import report

XDIST = [[], ["-n", "2"]]


def new_vs_baseline(
    root: Path, new: list[bool], old: list[bool], groups: tuple[str, ...] = ("express",)
) -> Path:
    """The ab-new-vs-baseline layout; True is a sufficient run, False an allocation miss."""
    for group in groups:
        for i, ok in enumerate(new, 1):
            (sufficient_run() if ok else allocation_run()).write(root / group / f"run-new-{i}.jsonl")
        for i, ok in enumerate(old, 1):
            (sufficient_run() if ok else allocation_run()).write(root / group / f"run-baseline-{i}.jsonl")
    return root


@pytest.mark.parametrize("dist", XDIST, ids=["plain", "n2"])
def test_two_arms_with_calls_get_a_paired_comparison_table(pytester, dist):
    root = new_vs_baseline(pytester.path / "c", [True] * 4, [True, False, False, False], groups=("a", "b"))
    result = pytester.runpytest(f"--explore-suff={root}", *dist)
    result.stdout.fnmatch_lines(
        [
            "new against baseline (paired by group):",
            "*new*baseline*difference, points [[]95%]*",
            "moved on / answered*100%*25%*+75 [[]*",
        ]
    )
    cmp = report(pytester)["comparison"]
    assert (cmp["a"], cmp["b"], cmp["paired"]) == ("new", "baseline", True)
    assert cmp["buckets"]["sufficient"]["diff"] == pytest.approx(0.75)
    assert cmp["buckets"]["sufficient"]["lo"] > 0


def test_arms_that_ran_different_groups_are_compared_unpaired(pytester):
    root = pytester.path / "c"
    new_vs_baseline(root, [True, True], [], groups=("a",))
    new_vs_baseline(root, [], [True, False], groups=("b",))
    pytester.runpytest(f"--explore-suff={root}")
    assert report(pytester)["comparison"]["paired"] is False


def test_the_arms_to_compare_can_be_chosen(pytester):
    root = new_vs_baseline(pytester.path / "c", [True, True], [False, False])
    sufficient_run().write(root / "express" / "run-other-1.jsonl")
    pytester.runpytest(f"--explore-suff={root}", "--explore-suff-compare=new,other")
    cmp = report(pytester)["comparison"]
    assert (cmp["a"], cmp["b"]) == ("new", "other")


def test_choosing_an_arm_without_calls_warns_and_compares_nothing(pytester):
    root = new_vs_baseline(pytester.path / "c", [True], [True])
    no_explore_run().write(root / "express" / "run-idle-1.jsonl")
    result = pytester.runpytest(f"--explore-suff={root}", "--explore-suff-compare=new,idle")
    result.stdout.fnmatch_lines(["warning: --explore-suff-compare: no answered calls in arm(s) idle*"])
    assert report(pytester)["comparison"] is None


def test_an_arm_to_compare_that_is_not_in_the_campaign_is_a_usage_error(pytester):
    # A typo compared nothing, with a warning and exit 0 (#41).
    root = new_vs_baseline(pytester.path / "c", [True], [True])
    result = pytester.runpytest(f"--explore-suff={root}", "--explore-suff-compare=new,nope", "-n", "2")
    assert result.ret == pytest.ExitCode.USAGE_ERROR
    result.stderr.fnmatch_lines(
        ["ERROR: --explore-suff-compare: no arm 'nope' in the campaign (its arms: baseline, new)"]
    )


@pytest.mark.parametrize("value", ["new", "new,new", "new,", ",x"])
def test_a_bad_compare_value_is_a_usage_error(pytester, value):
    root = new_vs_baseline(pytester.path / "c", [True], [True])
    result = pytester.runpytest(f"--explore-suff={root}", f"--explore-suff-compare={value}")
    assert result.ret == pytest.ExitCode.USAGE_ERROR


def test_intervals_are_in_the_summary_and_the_json(pytester):
    root = new_vs_baseline(pytester.path / "c", [True, True, True, False], [True])
    result = pytester.runpytest(f"--explore-suff={root}")
    result.stdout.fnmatch_lines(["moved on / answered*3 (75%) [[]*-*]*"])
    interval = report(pytester)["arms"]["new"]["intervals"]["sufficient"]
    assert interval["lo"] < 0.75 < interval["hi"]
    assert interval["method"] == "cluster-wilson"


def test_a_gate_on_the_bound_fails_where_the_point_passes(pytester):
    root = new_vs_baseline(pytester.path / "c", [True, True, True, False], [True])
    point = pytester.runpytest(f"--explore-suff={root}", "--min-sufficient=new:0.6")
    assert point.ret == 0
    bound = pytester.runpytest(
        f"--explore-suff={root}", "--min-sufficient=new:0.6", "--explore-suff-gate-on=bound"
    )
    assert bound.ret == 1
    bound.stdout.fnmatch_lines(
        ["*arm 'new' sufficient share 0.750 (lower 95% bound 0.*) (n=4) >= 0.6: FAILED"]
    )
    gate = report(pytester)["gates"][0]
    assert (gate["on"], gate["bound"] < 0.6) == ("bound", True)


def test_an_arm_with_too_few_calls_fails_instead_of_passing_on_noise(pytester):
    root = new_vs_baseline(pytester.path / "c", [True] * 3, [True] * 12)
    result = pytester.runpytest(f"--explore-suff={root}", "--explore-suff-min-calls=10")
    assert result.ret == 1
    result.stdout.fnmatch_lines(
        ["*--explore-suff-min-calls: arm 'new' has 3 answered calls, needs 10: FAILED"]
    )
    assert [g["passed"] for g in report(pytester)["gates"]] == [True, False]


def test_min_calls_comes_from_the_ini_and_is_validated(pytester):
    root = new_vs_baseline(pytester.path / "c", [True] * 3, [True] * 3)
    pytester.makeini(f"[pytest]\nexplore_suff = {root}\nexplore_suff_min_calls = 2\n")
    assert pytester.runpytest().ret == 0
    pytester.makeini(f"[pytest]\nexplore_suff = {root}\nexplore_suff_min_calls = many\n")
    assert pytester.runpytest().ret == pytest.ExitCode.USAGE_ERROR


def save_baseline(pytester: pytest.Pytester, root: Path) -> Path:
    pytester.runpytest(f"--explore-suff={root}", "--explore-suff-json=old.json")
    return pytester.path / "old.json"


def test_a_baseline_comparison_shows_old_and_new_shares(pytester):
    old = save_baseline(pytester, new_vs_baseline(pytester.path / "old", [True] * 8, [True] * 8))
    root = new_vs_baseline(pytester.path / "now", [True] * 4 + [False] * 4, [True] * 8)
    result = pytester.runpytest(f"--explore-suff={root}", f"--explore-suff-baseline={old}")
    result.stdout.fnmatch_lines(
        [
            "against the baseline *old.json:",
            "arm new (answered calls: 8 in the baseline, 8 now)",
            "*baseline*now*change, points [[]95%]",
            "moved on / answered*100%*50%*-50*",
        ]
    )
    s = report(pytester)["baseline"]["arms"]["new"]["buckets"]["sufficient"]
    assert (s["old"], s["new"], s["diff"]) == (1.0, 0.5, -0.5)


def test_an_arm_with_no_answered_call_on_one_side_has_no_share_and_no_change_there(pytester):
    old = save_baseline(pytester, new_vs_baseline(pytester.path / "old", [True] * 4, [True] * 4))
    root = pytester.path / "now"  # the arm "new" renamed "next": no calls of "new" now, none of "next" before
    for i in range(1, 5):
        sufficient_run().write(root / "express" / f"run-next-{i}.jsonl")
        sufficient_run().write(root / "express" / f"run-baseline-{i}.jsonl")
    result = pytester.runpytest(
        f"--explore-suff={root}", f"--explore-suff-baseline={old}", "--explore-suff-html=page.html"
    )
    result.stdout.fnmatch_lines(
        [
            "arm new (answered calls: 4 in the baseline, 0 now)",
            "  no answered explore calls now: no share to compare",
            "arm next (answered calls: 0 in the baseline, 4 now)",
            "  no answered explore calls in the baseline: no share to compare",
        ]
    )
    arms = report(pytester)["baseline"]["arms"]
    assert arms["new"]["buckets"]["sufficient"] == {
        "old": 1.0,
        "new": None,
        "diff": None,
        "lo": None,
        "hi": None,
        "se": None,
        "df": None,
    }
    assert arms["next"]["buckets"]["sufficient"] == {
        "old": None,
        "new": 1.0,
        "diff": None,
        "lo": None,
        "hi": None,
        "se": None,
        "df": None,
    }
    assert arms["baseline"]["buckets"]["sufficient"]["diff"] == 0.0  # both sides: compared as before
    page = (pytester.path / "page.html").read_text()
    assert page.count('class="empty-note baseline-empty"') == 2
    assert page.count('data-kind="baseline"') == 1  # only the arm with calls on both sides is charted


def test_a_sufficient_share_that_dropped_too_far_fails_the_run(pytester):
    old = save_baseline(pytester, new_vs_baseline(pytester.path / "old", [True] * 8, [True] * 8))
    root = new_vs_baseline(pytester.path / "now", [True] * 7 + [False], [True] * 8)
    ok = pytester.runpytest(
        f"--explore-suff={root}", f"--explore-suff-baseline={old}", "--max-sufficient-drop=0.2"
    )
    assert ok.ret == 0
    bad = pytester.runpytest(
        f"--explore-suff={root}", f"--explore-suff-baseline={old}", "--max-sufficient-drop=0.05"
    )
    assert bad.ret == 1
    bad.stdout.fnmatch_lines(["*--max-sufficient-drop: arm 'new' sufficient share fell by 0.125 *: FAILED"])


def test_on_the_bound_a_drop_within_noise_does_not_fail(pytester):
    old = save_baseline(pytester, new_vs_baseline(pytester.path / "old", [True] * 8, [True] * 8))
    root = new_vs_baseline(pytester.path / "now", [True] * 7 + [False], [True] * 8)
    result = pytester.runpytest(
        f"--explore-suff={root}",
        f"--explore-suff-baseline={old}",
        "--max-sufficient-drop=0.05",
        "--explore-suff-gate-on=bound",
    )
    assert result.ret == 0
    [gate] = [g for g in report(pytester)["gates"] if g["op"] == "max_drop" and g["arm"] == "new"]
    assert gate["value"] == pytest.approx(0.125) and gate["bound"] < 0.05


_REC = (
    '{"arm": "new", "group": "g", "status": "classified", "answered": 2, '
    '"counts": {"explore_again": 0, "read_returned": 0, "read_missed": 0, "search": 0, "sufficient": 2}}'
)


def _baseline(body: str, complete: str = "true", why: str = "[]") -> str:
    coverage = f'"coverage": {{"complete": {complete}, "why": {why}}}'
    return f'{{"schema": "pytest-explore-suff/1", {coverage}, {body}}}'


@pytest.mark.parametrize(
    ("content", "message"),
    [
        ('{"schema": "pytest-explore-suff/0", "transcripts": []}', "has schema 'pytest-explore-suff/0'"),
        ("not json", "is not readable JSON"),
        ('{"schema": "pytest-explore-suff/1", "transcripts": []}', "does not say whether it covers"),
        (_baseline('"transcripts": [{"x": 1}]'), "transcripts[0].arm: expected a string, got nothing"),
        (_baseline('"transcripts": {}'), "'transcripts' must be a list"),
        (
            _baseline('"transcripts": [' + _REC.replace('"explore_again": 0, ', "") + "]"),
            "transcripts[0].counts.explore_again: expected a whole number of calls, got nothing",
        ),
        (
            _baseline('"transcripts": [' + _REC.replace('"answered": 2', '"answered": "many"') + "]"),
            'transcripts[0].answered: expected a whole number of calls, got str "many"',
        ),
        (
            _baseline('"transcripts": [' + _REC + "]", complete="false", why='["3 deselected (-k, -m)"]'),
            "covers only part of its campaign (3 deselected (-k, -m))",
        ),
    ],
)
def test_an_unusable_baseline_is_a_usage_error(pytester, content, message):
    root = new_vs_baseline(pytester.path / "c", [True], [True])
    (pytester.path / "old.json").write_text(content)
    result = pytester.runpytest(f"--explore-suff={root}", "--explore-suff-baseline=old.json")
    assert result.ret == pytest.ExitCode.USAGE_ERROR
    assert message in result.stderr.str()


def test_a_drop_gate_without_a_baseline_is_a_usage_error(pytester):
    root = new_vs_baseline(pytester.path / "c", [True], [True])
    result = pytester.runpytest(f"--explore-suff={root}", "--max-sufficient-drop=0.1")
    assert result.ret == pytest.ExitCode.USAGE_ERROR
    result.stderr.fnmatch_lines(["*--max-sufficient-drop needs --explore-suff-baseline*"])


def test_run_figures_are_medians_per_arm(pytester):
    root = new_vs_baseline(pytester.path / "c", [True, True, False], [True])
    pytester.runpytest(f"--explore-suff={root}")
    figures = report(pytester)["arms"]["new"]["figures"]
    assert figures == {
        "explore_calls": 1.0,
        "read_calls": 0.0,
        "search_calls": 0.0,
        "bash_calls": 0.0,
        "other_calls": 1.0,
        "turns": 3.0,
        "duration_ms": 1200.0,
        "cost_usd": 0.01,
    }


def test_the_interval_of_a_residual_change_stays_above_minus_100_percent():
    # Per group the residual fell by 99% and 80%: the mean's normal interval reaches below -100%,
    # which no residual can fall by (the terminal printed "95% -102% to -85%").
    from pytest_explore_suff.compare import compare_metric_columns
    from pytest_explore_suff.report import Columns

    def rec(group: str, retrieval: int) -> dict:
        occupancy = {"ctx_final": 20000, "ctx_base": 18000, "residual": {"tool": retrieval},
                     "residual_file_access": 0, "residual_retrieval": retrieval}  # fmt: skip
        return {"group": group, "answered": 1, "counts": {}, "allocation": None, "occupancy": occupancy}

    a = Columns([rec("g1", 10), rec("g2", 200)])
    b = Columns([rec("g1", 1000), rec("g2", 1000)])
    residual = compare_metric_columns(a, b, "a", "b")["residual"]
    assert [round(g["pct"]) for g in residual["groups"]] == [-99, -80]
    assert residual["interval"]["lo"] == -100.0 and residual["interval"]["hi"] > residual["mean_pct"]
