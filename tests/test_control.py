"""Control groups and the run's one family of checks (issues #42 and #38).

Every control line, every run-figure gate on the bound and the drop gates are members of
one family, decided together by Holm's step-down (`gates.correct`): checked by seeded
simulation of whole runs (`document.build`, as the plugin decides them) and through pytest.
"""

from __future__ import annotations

import random
import re
from pathlib import Path
from typing import Any

import pytest
from helpers import RunCampaign
from test_arm_table import _campaign, _gate_lines, _run

from pytest_explore_suff.buckets import KEYS
from pytest_explore_suff.control import changes
from pytest_explore_suff.document import Coverage, Options, build
from pytest_explore_suff.gates import ALPHA, Gate, correct, evaluate_control, family_line
from pytest_explore_suff.html import render_html
from pytest_explore_suff.markdown import markdown

# -- through pytest: one line per metric, failing when the control group moved --------------------


def _control_campaign(root: Path, moved: bool) -> Path:
    """Group ``control`` (sufficient runs, or Read-missed ones when ``moved``) and group
    ``target`` (which the change is meant to move), arm ``with``, four runs each."""
    _campaign(root, {"with": [_run(reads=0)] * 4}, group="target")
    control = [_run(reads=2) if moved else _run(reads=0) for _ in range(4)]
    return _campaign(root, {"with": control}, group="control")


#: A control line: the change with its interval at the level the family tested it at.
_LINE = re.compile(
    r"--explore-suff-control: group\(s\) control, arm 'headless-with', (?P<words>[^,]+?) \S+ -> \S+ "
    r"\(change \S+, (?P<conf>[\d.]+)% \S+ to \S+\): "
    r"(?P<verdict>within noise: passed|moved beyond noise: FAILED)$"
)


@pytest.mark.parametrize("xdist", [[], ["-n", "2"]], ids=["plain", "n2"])
def test_a_control_group_that_moved_fails_the_run_and_one_that_did_not_passes(
    pytester: pytest.Pytester, run_campaign: RunCampaign, xdist: list[str]
) -> None:
    run_campaign(_control_campaign(pytester.path / "old", moved=False), json="old.json")
    still, doc = run_campaign(
        _control_campaign(pytester.path / "same", moved=False),
        "--explore-suff-baseline=old.json",
        "--explore-suff-control=control",
        *xdist,
    )
    lines = [" ".join(ln.split()) for ln in _gate_lines(still, "--explore-suff-control")]
    matched = [_LINE.search(ln) for ln in lines]
    assert lines and all(m and m["verdict"] == "within noise: passed" for m in matched), lines
    assert still.ret == 0
    assert doc is not None
    # members of the run's family: the summary counts them, each says its level
    members = [g for g in doc["gates"] if g["op"] == "control"]
    assert doc["family"]["checks"] == len(members) == len(lines)
    assert all(g["sides"] == 2 and g["level"] is not None and g["p"] is not None for g in members)
    said = family_line(doc["family"])
    assert said is not None and f"{len(members)} checks" in said
    still.stdout.fnmatch_lines([f"*{len(members)} checks decided on intervals, corrected together (Holm)*"])

    moved, doc = run_campaign(
        _control_campaign(pytester.path / "moved", moved=True),
        "--explore-suff-baseline=old.json",
        "--explore-suff-control=control",
        *xdist,
    )
    lines = [" ".join(ln.split()) for ln in _gate_lines(moved, "--explore-suff-control")]
    found = {m["words"]: m for m in map(_LINE.search, lines) if m}
    assert len(found) == len(lines), lines  # one line per metric, each of the shape above
    # the sufficient share and the Read calls moved; the duration did not
    assert found["sufficient share"]["verdict"] == "moved beyond noise: FAILED", lines
    assert found["mean Read calls"]["verdict"] == "moved beyond noise: FAILED", lines
    assert found["mean duration (s)"]["verdict"] == "within noise: passed", lines
    # tested below 2.5% each under Holm: a wider interval than 97.5%
    assert all(float(m["conf"]) >= 100 * (1 - ALPHA) for m in found.values())
    assert moved.ret == 1
    assert doc is not None
    assert all(g["groups"] == ["control"] for g in doc["gates"])
    # the Markdown summary and the page describe the lines from the JSON again
    summary = markdown(doc)
    assert sum("--explore-suff-control: group(s) control, arm 'headless-with'," in ln
               for ln in summary.splitlines()) == len(lines)  # fmt: skip
    page = render_html(doc)
    assert "--explore-suff-control" in page and "--control-control" not in page


def test_the_control_option_needs_a_baseline(pytester: pytest.Pytester, run_campaign: RunCampaign) -> None:
    result, _ = run_campaign(
        _control_campaign(pytester.path / "c", moved=False), "--explore-suff-control=control"
    )
    assert result.ret == pytest.ExitCode.USAGE_ERROR
    result.stderr.fnmatch_lines(["*--explore-suff-control needs --explore-suff-baseline*"])


# -- by seeded simulation: the whole family's false alarms when nothing changed --------------------


def _sim_record(rng: random.Random, arm: str, group: str, n: int, shift: float = 0.0) -> dict[str, Any]:
    """A classified record with every figure the gates read: its calls' buckets, allocation,
    residual, run figures, duplicate share and cost drawn from fixed distributions (``shift``
    moves weight from "sufficient" to "read missed")."""
    answered = rng.randint(1, 5)
    counts = dict.fromkeys(KEYS, 0)
    for _ in range(answered):
        counts[rng.choices(KEYS, [0.1, 0.1, 0.1 + shift, 0.2, 0.5 - shift])[0]] += 1
    env = rng.randint(500, 5000)
    used, dup = (int(env * min(1.0, max(0.0, rng.gauss(m, s)))) for m, s in ((0.4, 0.2), (0.1, 0.08)))
    figures = {k: rng.randint(0, 6) for k in ("tool_calls", "read", "search", "bash", "retrieval")}
    return {
        "path": f"{group}/run{n}/run-headless-{arm}.jsonl", "digest": f"{rng.getrandbits(64):016x}",
        "status": "classified", "group": group, "arm": arm, "run": str(n), "counts": counts,
        "answered": answered, "errored": 0, "concurrent": 0,
        "allocation": {"envelope": env, "used": used, "used_path": used, "calls": [{}], "has_answer": True},
        "occupancy": {"ctx_final": 50_000, "ctx_base": 900, "residual": {"tool": 1},
                      "residual_file_access": 1, "residual_retrieval": max(0.0, rng.gauss(3000, 1500))},
        "run_figures": {**figures, "success": True, "duration_s": rng.expovariate(1 / 60)},
        "flags": {}, "duplicate": {"duplicate_chars": dup, "envelope": env},
        "cost": {"total_usd": rng.lognormvariate(-3, 0.5)},
    }  # fmt: skip


_GROUPS = ("ctl", *(f"repo{i}" for i in range(3)))


def _campaign_records(
    rng: random.Random, runs: int, shift: float = 0.0, control_runs: int | None = None
) -> list[Any]:
    """Two arms, ``runs`` runs per group and arm (``control_runs`` in group ``ctl``);
    ``shift``: of group ``ctl`` in arm ``with``."""
    return [
        _sim_record(rng, arm, group, n, shift if arm == "with" and group == "ctl" else 0.0)
        for group in _GROUPS
        for arm in ("with", "without")
        for n in range(control_runs or runs if group == "ctl" else runs)
    ]


def _decide(old: list[Any], new: list[Any], correction: str = "holm") -> Any:
    """The run ``new`` against the baseline ``old`` with the control group, the drop gates and
    the run-figure gates, all on the bound: the report `document.build` makes."""
    return build(
        campaign="sim", options=Options("explore", "codegraph", "", None, False, "bound", correction),
        coverage=Coverage(len(new), len(new)), records=new, ignored=[], baseline=("old", old),
        max_drop=0.0, metric_baseline_gates=[Gate("allocation", "max_drop", 0.0)],
        run_gates=[Gate("read", "max_increase", 0.0), Gate("duration", "max_rel_increase", 0.0),
                   Gate("cost", "max_rel_increase", 0.0)],
        control=("ctl",),
    )  # fmt: skip


def test_the_whole_family_with_control_groups_fails_an_unchanged_tool_at_most_at_its_stated_rate() -> None:
    # Seeded: baseline and run drawn from the same distributions (other transcripts, the
    # same groups), 4 groups x 2 arms x 8 runs a side. The family: the control group's 28
    # lines, the sufficient and allocation drops and three run-figure gates per arm (38
    # checks). Holm over all of them: the run fails at most 2.5% of the time, in
    # expectation (120 runs: asserted at 5%, the Monte Carlo margin); each check at 2.5%
    # alone, about half the time (what separate corrections per kind of gate drift towards).
    rng = random.Random(20261203)
    holm = alone = checks = 0
    sims = 120
    for _ in range(sims):
        report = _decide(_campaign_records(rng, 8), _campaign_records(rng, 8))
        assert report.family is not None
        checks = report.family["checks"]
        holm += bool(report.failed)
        alone += correct(report.outcomes, "none")["failed"] > 0  # the same checks, each alone
    assert checks == 28 + 2 * 2 + 2 * 3, checks
    assert holm / sims <= 0.05, holm
    assert alone / sims >= 0.3, alone


def test_a_control_group_that_moved_is_caught_in_the_family() -> None:
    # The control group's sufficient share falls from 0.5 to 0.1 in arm ``with`` (16 runs a
    # side): among the 38 checks, the run still fails most of the time, on a control line.
    rng = random.Random(7)
    caught = 0
    sims = 30
    for _ in range(sims):
        old = _campaign_records(rng, 8, control_runs=16)
        report = _decide(old, _campaign_records(rng, 8, shift=0.4, control_runs=16))
        failed = [o for o in report.outcomes if o.passed is False]
        caught += any(o.gate.op == "control" and o.arm == "with" for o in failed)
    assert caught >= 0.8 * sims, caught


def test_a_control_line_is_a_two_sided_member_and_says_its_interval() -> None:
    rng = random.Random(3)
    old = [_sim_record(rng, "with", "ctl", n) for n in range(6)]
    new = [_sim_record(rng, "with", "ctl", n) for n in range(6)]
    outcomes = evaluate_control(("ctl",), new, old)
    assert len(outcomes) == len(changes(new, old, ["ctl"])) == 14
    o = outcomes[0]
    assert o.member and o.sides == 2 and o.gate.threshold == 0.0 and o.level == ALPHA
    lo, hi = o.interval()
    assert lo < o.value < hi  # type: ignore[operator]
    assert "97.5%" in o.describe()  # decided alone: two-sided at 2.5%
    entry = o.to_dict()
    assert entry["lo"] == lo and entry["hi"] == hi and entry["control_metric"] == "explore_again"
    # one run on a side: no noise to measure, not applicable (which is not a pass), no member
    one = evaluate_control(("ctl",), new[:1], old)
    assert all(x.passed is None and not x.member and "fewer than two runs" in x.why for x in one)
