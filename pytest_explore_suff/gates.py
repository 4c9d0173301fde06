"""Threshold gates: ``--min-sufficient=0.5``, ``--max-read-returned=with:0.2``.

The family of checks, and how a gate joins it
---------------------------------------------
A run decides many gates at once. A gate that *fails on evidence* (the drop and
growth gates against a baseline under ``--explore-suff-gate-on=bound``, the trend
gate, a run-figure increase, a control group's move: "worse beyond noise") is a
test whose false alarm, one at a time, is the one-sided level of a 95% interval's
bound (2.5%). Twenty such checks would fail an unchanged tool far more often, so
`correct` decides them together with Holm's step-down: the chance that *any* of
them fails when nothing is worse stays at `ALPHA` (``--explore-suff-correction=none``
decides each at `ALPHA` alone; the summary then says the family's rate is up to
m x `ALPHA`).

To join the family, a gate's `Outcome` is made with ``on="bound"``, ``passed`` as
its own 95% bound decides it (`decided_alone` does that), and:

- ``value``: the estimate, in the gate's units (a drop, a growth, a difference);
- ``se``: its standard error (0 when it is exactly known: the same transcripts);
- ``worse``: +1 when a higher value is worse (a drop, a growth, an increase), -1
  when a lower one is (the trend's difference);
- ``sides``: 2 for a two-sided "moved beyond noise" check (a control group),
  whose ``value`` is then the change itself and ``threshold`` 0;
- ``df``: Student's t degrees of freedom when the standard error rests on few
  clusters (None: the normal); or ``draws``: bootstrap replicates of ``value``
  (then p and the bound are their percentiles).

`correct` (called once every gate of the run is in, `document.build` and the
trend) computes each member's one-sided p-value of "no worse than the
threshold", the level Holm's procedure tests it at, its ``bound`` at that level,
and ``passed``; its line says the bound and the level (`Outcome.confidence`). A
gate decided on a point, or whose failure is no evidence of harm (a ``--min-*``
gate on its lower bound fails for want of evidence; see docs/comparing.md), is
not a member and is left as it is.
"""

from __future__ import annotations

import functools
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

# The tables and the parsers of the options' values live in `options` (imported at every
# pytest start, where a dataclass costs too much); re-exported here.
from .options import (
    GATES,
    METRIC_BASELINE_GATES,
    METRIC_GATES,
    METRIC_WORDS,
    RUN_GATES,
    RUN_WORDS,
    TRUTH_BASELINE_GATES,
    TRUTH_GATES,
    parse_growth,
    parse_threshold,
)
from .stats import t_isf, t_sf

__all__ = ["ALPHA", "GATES", "METRIC_BASELINE_GATES", "METRIC_GATES", "METRIC_WORDS", "RUN_GATES",
           "TRUTH_BASELINE_GATES", "TRUTH_GATES", "Gate", "Outcome", "correct", "decided_alone", "evaluate",
           "evaluate_baseline_metrics", "evaluate_control", "evaluate_metrics", "evaluate_run_gates",
           "evaluate_truth", "evaluate_truth_baseline", "family_line", "parse_growth", "parse_threshold",
           "sample_size"]  # fmt: skip


@dataclass(frozen=True)
class Gate:
    metric: str  # a bucket key
    op: str  # "min" | "max" | "min_calls" | "max_drop"
    threshold: float
    arm: str | None = None  # None: every arm that has answered calls

    @property
    def option(self) -> str:
        if self.op == "trend":
            return "--explore-suff-trend-fail"
        if self.op == "min_calls":
            return "--explore-suff-min-calls"
        if self.op == "max_drop":
            return f"--max-{self.metric.replace('_', '-')}-drop"
        if self.op == "max_growth":
            return f"--max-{self.metric.replace('_', '-')}-growth"
        if self.op in ("max_increase", "max_rel_increase"):
            return f"--max-{self.metric}-increase"
        if self.op == "control":
            return "--explore-suff-control"
        return f"--{self.op}-{self.metric.replace('_', '-')}"


@dataclass
class Outcome:
    gate: Gate
    arm: str | None
    value: float | None  # the point estimate
    n: int
    passed: bool | None  # None: not applicable (no answered calls), which is not a pass
    on: str = "point"  # what was compared: the point estimate or the interval's bound
    bound: float | None = None  # the interval bound compared when on == "bound"
    why: str = ""  # not applicable, when not for the usual reason: why (words for the terminal, not the JSON)
    # A member of the family of checks (see the module's docstring): the estimate's standard
    # error, which way is worse, and one or two sides; `correct` fills p and level.
    se: float | None = None
    worse: int = 1
    sides: int = 1
    df: float | None = None  # Student's t degrees of freedom of value / se (None: normal)
    #: bootstrap replicates of the value (the residual's growth): p and the bound are their
    #: percentiles instead of the normal's (kept in memory, not in the JSON)
    draws: list[float] | None = None
    #: more of what was compared, written into the JSON entry (the run and control gates')
    detail: dict[str, Any] | None = None
    p: float | None = None  # one-sided p-value of "no worse than the threshold"
    level: float | None = None  # the level `correct` tested p at (ALPHA alone, less under Holm)

    @property
    def member(self) -> bool:
        """Whether the family correction decides this outcome."""
        decided = self.passed is not None and self.value is not None
        return decided and self.on == "bound" and self.se is not None

    @property
    def confidence(self) -> str:
        """The confidence of the interval whose bound decided the gate: "95%" alone,
        more under Holm's correction ("99.2%")."""
        level = ALPHA if self.level is None else self.level
        return f"{_trim(100 * (1 - 2 * level / self.sides))}%"

    def to_dict(self) -> dict[str, Any]:
        return {
            "arm": self.arm,
            "metric": self.gate.metric,
            "op": self.gate.op,
            "threshold": self.gate.threshold,
            "value": self.value,
            "n": self.n,
            "on": self.on,
            "bound": self.bound,
            "passed": self.passed,
            **({"against": self.why} if self.gate.op == "trend" else {}),
            **(self.detail or {}),
            **({"se": self.se, "df": self.df, "worse": self.worse, "sides": self.sides, "p": self.p,
                "level": self.level} if self.member else {}),
            **(dict(zip(("lo", "hi"), self.interval(), strict=True))
               if self.member and self.sides == 2 else {}),
        }

    def interval(self) -> tuple[float, float]:
        """A member's two-sided interval of its value at the level it was tested at (both
        sides at that level each when ``sides=1``): for a control line, the change's."""
        assert self.value is not None and self.se is not None
        level = (ALPHA if self.level is None else self.level) / self.sides
        z = t_isf(level, self.df) if self.df is not None else _normal().inv_cdf(1.0 - level)
        return self.value - z * self.se, self.value + z * self.se

    def describe(self) -> str:
        g = self.gate
        where = f"arm {self.arm!r}" if self.arm is not None else "every arm"
        if g.op == "trend":
            words = METRIC_WORDS[g.metric][0] if g.metric in METRIC_WORDS else f"{g.metric} share"
            verdict = "passed" if self.passed else "FAILED"
            assert self.value is not None and self.bound is not None
            return (f"{g.option}: {where} {words} {self.value:+.3f} against {self.why}, "
                    f"at most {self.bound:+.3f} at the {self.confidence} bound: "
                    f"{'not ' if self.passed else ''}worse beyond noise: {verdict}")  # fmt: skip
        if g.op in ("max_increase", "max_rel_increase"):
            return self._describe_run(where)
        if g.op == "control":
            return self._describe_control(where)
        if g.metric in METRIC_WORDS:
            return self._describe_metric(where)
        if self.passed is None:
            what = f"has {self.why}" if self.why else "has no answered explore calls"
            if g.op == "max_drop":
                what = (
                    "has no answered explore calls in the baseline"
                    if self.n
                    else f"{what} in this campaign" + (" (or in the baseline)" if self.arm is None else "")
                )
            return f"{g.option}: {where} {what}: not applicable, not a pass"
        verdict = "passed" if self.passed else "FAILED"
        if g.op == "max_drop":
            what = f"sufficient share fell by {self.value:.3f} from the baseline"
            if self.on == "bound" and self.bound is not None:
                what += f" (at least {self.bound:.3f} at the {self.confidence} bound)"
            return f"{g.option}: {where} {what} (n={self.n}) <= {g.threshold:g}: {verdict}"
        if g.op == "min_calls":
            calls = f"{self.n} answered call{'' if self.n == 1 else 's'}"
            return f"{g.option}: {where} has {calls}, needs {g.threshold:g}: {verdict}"
        bound = ">=" if g.op == "min" else "<="
        what = f"{g.metric} share {self.value:.3f}"
        if self.on == "bound" and self.bound is not None:
            side = "lower" if g.op == "min" else "upper"
            what += f" ({side} 95% bound {self.bound:.3f})"
        return f"{g.option}: {where} {what} (n={self.n}) {bound} {g.threshold:g}: {verdict}"

    def _describe_run(self, where: str) -> str:
        g = self.gate
        d = self.detail or {}
        words = d.get("words") or RUN_WORDS.get(g.metric, g.metric)
        if self.passed is None:
            return f"{g.option}: {where} has {self.why or 'no ' + words}: not applicable, not a pass"
        verdict = "passed" if self.passed else "FAILED"
        assert self.value is not None
        form = "+.3g" if g.op == "max_increase" else "+.1%"
        change = format(self.value, form)
        if self.on == "bound" and self.bound is not None:
            change += f", at least {self.bound:{form}} at the {self.confidence} bound"
        return (f"{g.option}: {where} {words} {d.get('new'):g} against {d.get('old'):g} in "
                f"{d.get('against')} ({change}, n={self.n}) <= {g.threshold:g}: {verdict}")  # fmt: skip

    def _describe_control(self, where: str) -> str:
        from .control import WORDS

        g = self.gate
        d = self.detail or {}
        metric = str(d.get("control_metric", g.metric))
        words = WORDS.get(metric, metric)
        groups = ", ".join(d.get("groups") or ())
        head = f"{g.option}: group(s) {groups}, {where}, {words}"
        if self.passed is None:
            return f"{head}: {self.why}: not applicable, not a pass"
        old, new = d["old"], d["new"]
        lo, hi = self.interval()
        moved = "moved beyond noise" if not self.passed else "within noise"
        return (f"{head} {old:.3g} -> {new:.3g} (change {self.value:+.3g}, {self.confidence} "
                f"{lo:+.3g} to {hi:+.3g}): {moved}: {'passed' if self.passed else 'FAILED'}")  # fmt: skip

    def _describe_metric(self, where: str) -> str:
        g = self.gate
        words, missing = METRIC_WORDS[g.metric]
        if self.passed is None:
            return f"{g.option}: {where} has {self.why or missing}: not applicable, not a pass"
        verdict = "passed" if self.passed else "FAILED"
        assert self.value is not None
        if g.op == "max_drop":
            what = f"{words} fell by {self.value:.3f} from the baseline"
            if self.on == "bound" and self.bound is not None:
                what += f" (at least {self.bound:.3f} at the {self.confidence} bound)"
        elif g.op == "max_growth":
            what = f"{words} grew by {self.value:+.1%} from the baseline"
            if self.on == "bound" and self.bound is not None:
                what += f" (at least {self.bound:+.1%} at the {self.confidence} bound)"
        else:
            what = f"{words} {self.value:.3f}"
            if self.on == "bound" and self.bound is not None:
                what += f" ({'lower' if g.op == 'min' else 'upper'} 95% bound {self.bound:.3f})"
        op = ">=" if g.op == "min" else "<="
        return f"{g.option}: {where} {what} (n={self.n}) {op} {g.threshold:g}: {verdict}"


#: The one-sided level of each check: the 95% interval's bound; under Holm's correction, the
#: chance that any check of the run's family fails when nothing is worse.
ALPHA = 0.025

if TYPE_CHECKING:
    from statistics import NormalDist


@functools.cache
def _normal() -> NormalDist:
    # statistics (and the fractions and decimal it imports) only when a figure needs it
    from statistics import NormalDist

    return NormalDist()


def _trim(x: float) -> str:
    """A percentage with as few digits as say it: 95, 97.5, 99.17."""
    for digits in (0, 1, 2, 3):
        text = f"{x:.{digits}f}"
        if abs(float(text) - x) < 1e-9 or digits == 3:
            return text
    return f"{x:g}"


def _p_worse(o: Outcome) -> float:
    """The one-sided p-value of "no worse than the threshold" (two-sided for ``sides=2``)."""
    assert o.value is not None and o.se is not None
    if o.draws:  # the share of replicates on the threshold's good side (one-sided, worse = +1)
        good = sum(1 for d in o.draws if d <= o.gate.threshold)
        return min(1.0, (good + 1) / (len(o.draws) + 1))
    excess = o.worse * (o.value - o.gate.threshold) if o.sides == 1 else abs(o.value) - o.gate.threshold
    if o.se <= 0:
        return 0.0 if excess > 0 else 1.0
    if o.df is not None:
        return min(1.0, o.sides * t_sf(excess / o.se, o.df))
    return min(1.0, o.sides * (1.0 - _normal().cdf(excess / o.se)))


def _bound_at(o: Outcome, level: float) -> float:
    """The estimate's bound on its better side at one-sided ``level`` (per side): the least
    drop, the least growth, the highest difference a ``worse=-1`` gate allows."""
    assert o.value is not None and o.se is not None
    if o.draws:
        ranked = sorted(o.draws)
        return ranked[min(len(ranked) - 1, max(0, int(level * (len(ranked) + 1)) - 1))]
    z = t_isf(level / o.sides, o.df) if o.df is not None else _normal().inv_cdf(1.0 - level / o.sides)
    if o.sides == 2:  # the change's end nearer 0: how far it moved at least
        return max(0.0, abs(o.value) - z * o.se) * (1 if o.value >= 0 else -1)
    return o.value - o.worse * z * o.se


def decided_alone(o: Outcome) -> Outcome:
    """A family member decided on its own 95% bound (what `correct` does with a family of
    one, or with the correction off): sets p, level, bound and passed."""
    o.p = _p_worse(o)
    o.level = ALPHA
    o.bound = _bound_at(o, ALPHA)
    o.passed = not o.p <= ALPHA
    return o


def correct(outcomes: list[Outcome], method: str = "holm") -> dict[str, Any]:
    """Decide the family's members (`Outcome.member`) together: Holm's step-down at `ALPHA`
    (``method="none"``: each at `ALPHA` alone). Returns the report's ``family`` section:
    how many checks were made and the family's false-alarm rate (at most)."""
    members = [o for o in outcomes if o.member]
    for o in members:
        o.p = _p_worse(o)
    m = len(members)
    if method == "holm":
        ranked = sorted(range(m), key=lambda i: (members[i].p, i))
        stopped: int | None = None  # the rank where Holm stopped rejecting
        for rank, i in enumerate(ranked):
            o = members[i]
            at = rank if stopped is None else stopped
            level = ALPHA / (m - at)
            assert o.p is not None
            if stopped is None and not o.p <= level:
                stopped = rank
            o.level = level
            o.bound = _bound_at(o, level)
            o.passed = not (stopped is None and o.p <= level)
        rate = ALPHA if m else 0.0
    else:
        for o in members:
            decided_alone(o)
        rate = min(1.0, m * ALPHA)
    failed = sum(1 for o in members if not o.passed)
    return {"method": method, "checks": m, "alpha": ALPHA, "error_rate": rate, "failed": failed}


def family_line(family: dict[str, Any] | None) -> str | None:
    """The summary's sentence on the family of checks (None: the run made none)."""
    if not family or not family.get("checks"):
        return None
    m = family["checks"]
    checks = f"{m} check{'' if m == 1 else 's'} decided on intervals"
    rate = f"{100 * family['error_rate']:g}%"
    if family["method"] == "holm":
        how = "" if m == 1 else ", corrected together (Holm)"
        return (f"explore-suff: {checks}{how}: the chance that any fails when nothing is worse "
                f"is at most {rate}")  # fmt: skip
    return (f"explore-suff: {checks}, each at {100 * family['alpha']:g}% alone (correction off): "
            f"the chance that any fails when nothing is worse is up to {rate}")  # fmt: skip


def _unknown_arm(arms: dict[str, dict[str, Any]]) -> str:
    """Why a gate on an arm with no classified transcript cannot be decided (a typo, often)."""
    return f"no classified transcript (the arms with one: {', '.join(sorted(arms)) or 'none'})"


def _targets(gate: Gate, arms: dict[str, dict[str, Any]]) -> list[str]:
    """The gate's arm, or every arm with answered calls (the arms that have the tool)."""
    return [gate.arm] if gate.arm is not None else [a for a, agg in arms.items() if agg["answered"] > 0]


def _metric_value(arm: dict[str, Any], metric: str, on: str) -> tuple[float | None, int, float | None]:
    """(point, n, bound) of a metric gate's figure in one arm's aggregate."""
    if metric == "duplicate_share":
        d = arm.get("duplicate")
        if not d:
            return None, 0, None
        share = d["duplicate_share"]
        return share["share"], d["transcripts"], share["hi"] if on == "bound" else None
    if metric == "allocation":
        a = arm.get("allocation")
        if not a:
            return None, 0, None
        eff = a["efficiency"]
        return eff["share"], a["calls"], eff["lo"] if on == "bound" else None
    o = arm.get("occupancy")
    if not o or o["share"]["median"] is None:
        return None, 0, None
    return o["share"]["median"], o["transcripts"], None


def _thresholds(
    gates: list[Gate],
    arms: dict[str, dict[str, Any]],
    on: str,
    figure: Callable[[dict[str, Any], Gate], tuple[float | None, int, float | None]],
    targets: Callable[[Gate], list[str]],
) -> list[Outcome]:
    """A threshold gate (``--min-*``/``--max-*``) in each of its ``targets``: ``figure`` gives an
    arm's (point, n, bound); the bound, where there is one, is compared, else the point. An
    arm without the figure, or no target at all, is not applicable, which is not a pass."""
    outcomes: list[Outcome] = []
    for gate in gates:
        chosen = targets(gate)
        if not chosen:
            outcomes.append(Outcome(gate, None, None, 0, None, on))
        for arm in chosen:
            value, n, bound = figure(arms.get(arm) or {}, gate)
            if value is None:
                why = "" if arm in arms else _unknown_arm(arms)
                outcomes.append(Outcome(gate, arm, None, 0, None, on, why=why))
                continue
            compared = bound if bound is not None else value
            ok = compared >= gate.threshold if gate.op == "min" else compared <= gate.threshold
            outcomes.append(Outcome(gate, arm, value, n, ok, on, bound))
    return outcomes


def evaluate_metrics(gates: list[Gate], arms: dict[str, dict[str, Any]], on: str = "point") -> list[Outcome]:
    """``--min-allocation`` and ``--max-residual-share``, in ARM or in every arm with answered
    calls; an arm whose figure cannot be computed is not applicable, which is not a pass."""
    return _thresholds(gates, arms, on, lambda agg, g: _metric_value(agg, g.metric, on),
                       lambda g: _targets(g, arms))  # fmt: skip


def evaluate_baseline_metrics(
    gates: list[Gate], changes: dict[str, dict[str, Any]], arms: dict[str, dict[str, Any]], on: str = "point"
) -> list[Outcome]:
    """``--max-allocation-drop`` and ``--max-residual-growth`` against the baseline; on the
    bound (members of the run's family of checks), the allocation drop on its interval
    clustered by transcript, the residual's growth on its bootstrap standard error."""
    outcomes: list[Outcome] = []
    for gate in gates:
        targets = _targets(gate, arms)
        if not targets:
            outcomes.append(Outcome(gate, None, None, 0, None, on))
        for arm in targets:
            change = changes.get(arm) or {}
            agg = arms.get(arm) or {}
            if gate.metric == "allocation":
                c = change.get("allocation") or {}
                value = None if c.get("diff") is None else 0.0 - c["diff"]
                n = (agg.get("allocation") or {}).get("calls", 0)
            else:
                c = change.get("residual") or {}
                value = c.get("growth")
                n = (agg.get("occupancy") or {}).get("transcripts", 0)
            if value is None:
                words, missing = METRIC_WORDS[gate.metric]
                why = (
                    f"no {words} in the baseline (a report of schema 1, or no figure there)"
                    if c.get("new") is not None and c.get("old") is None
                    else f"{missing} in this campaign" if c.get("new") is None
                    else f"a {words} of 0 in the baseline: no relative growth"
                )  # fmt: skip
                outcomes.append(Outcome(gate, arm, None, 0, None, on, why=why))
                continue
            if on == "bound" and c.get("se") is not None:
                o = Outcome(gate, arm, value, n, True, on, se=c["se"], df=c.get("df"), draws=c.get("draws"))
                outcomes.append(decided_alone(o))
            else:  # on the point, or no interval to decide on (too few transcripts to resample)
                outcomes.append(Outcome(gate, arm, value, n, value <= gate.threshold))
    return outcomes


def evaluate(gates: list[Gate], arms: dict[str, dict[str, Any]], on: str = "point") -> list[Outcome]:
    """Decide every gate against the per-arm aggregates (``answered``, ``shares``, ``intervals``).

    ``on="bound"`` compares the interval's bound instead of the point: the
    lower bound must clear a minimum and the upper bound must stay under a
    maximum, so an arm passes on evidence, not on a lucky point estimate.
    """

    def share(agg: dict[str, Any], gate: Gate) -> tuple[float | None, int, float | None]:
        n = agg.get("answered") or 0
        if not n:
            return None, 0, None
        bound = None
        if on == "bound":
            interval = agg["intervals"][gate.metric]
            bound = interval["lo"] if gate.op == "min" else interval["hi"]
        return agg["shares"][gate.metric], n, bound

    return _thresholds(gates, arms, on, share, lambda g: _targets(g, arms))


def _truth_value(
    arm: dict[str, Any], metric: str, op: str, on: str
) -> tuple[float | None, int, float | None]:
    """(point, n, bound) of a truth gate's figure in one arm's aggregate (None: no figure)."""
    t = arm.get("truth")
    if not t:
        return None, 0, None
    if metric == "gold_recall":  # a median: no interval, the point is compared (as the residual share)
        r = t["gold_recall"]
        return r["median"], r["units"], None
    s = t["correct_share"] if metric == "correct" else t["false_sufficient"]
    if not s:
        return None, 0, None
    n = s["judged"] if metric == "correct" else s["sufficient"]
    bound = (s["lo"] if op == "min" else s["hi"]) if on == "bound" else None
    return s["share"], n, bound


def evaluate_truth(gates: list[Gate], arms: dict[str, dict[str, Any]], on: str = "point") -> list[Outcome]:
    """``--min-correct``, ``--max-false-sufficient`` and ``--min-gold-recall``, in ARM or in
    every arm that has the figure (the arm without the tool has a correct share too); an
    arm without it, or no arm with it, is not applicable, which is not a pass. On the
    bound, the correct share's lower and false sufficient's upper 95% bound are compared."""

    def figure(agg: dict[str, Any], gate: Gate) -> tuple[float | None, int, float | None]:
        return _truth_value(agg, gate.metric, gate.op, on)

    def targets(gate: Gate) -> list[str]:
        if gate.arm is not None:
            return [gate.arm]
        return [a for a, agg in arms.items() if figure(agg, gate)[0] is not None]

    return _thresholds(gates, arms, on, figure, targets)


def evaluate_truth_baseline(
    gates: list[Gate], changes: dict[str, dict[str, Any]], arms: dict[str, dict[str, Any]], on: str = "point"
) -> list[Outcome]:
    """``--max-correct-drop``: fail when an arm's correct share fell by more than FRAC from
    the baseline's. On the bound it fails on evidence of harm (the drop beyond FRAC beyond
    noise), so it joins the run's family of checks (`correct`: Holm's step-down), its
    standard error that of the difference of two shares clustered by transcript."""
    outcomes: list[Outcome] = []
    for gate in gates:
        targets = [gate.arm] if gate.arm is not None else [
            a for a, c in changes.items() if (c.get("correct") or {}).get("new") is not None
        ]  # fmt: skip
        if not targets:
            outcomes.append(Outcome(gate, None, None, 0, None, on))
        for arm in targets:
            c = (changes.get(arm) or {}).get("correct") or {}
            if c.get("diff") is None:
                why = (
                    "no correct share in the baseline (graded without a truth file, or no judged answer)"
                    if c.get("new") is not None
                    else f"{METRIC_WORDS['correct'][1]} in this campaign"
                )
                outcomes.append(Outcome(gate, arm, None, 0, None, on, why=why))
                continue
            drop = 0.0 - c["diff"]  # not -0.0
            n = ((arms.get(arm) or {}).get("truth") or {}).get("questions", 0)
            if on == "bound" and c.get("se") is not None:  # a member of the family of checks
                outcomes.append(decided_alone(Outcome(gate, arm, drop, n, True, on, se=c["se"])))
            else:
                outcomes.append(Outcome(gate, arm, drop, n, drop <= gate.threshold, on))
    return outcomes


def sample_size(min_calls: int, arms: dict[str, dict[str, Any]]) -> list[Outcome]:
    """``--explore-suff-min-calls``: an arm with answered calls, but fewer than N, fails."""
    gate = Gate("answered", "min_calls", float(min_calls))
    return [
        Outcome(gate, arm, float(agg["answered"]), agg["answered"], agg["answered"] >= min_calls)
        for arm, agg in arms.items()
        if agg["answered"] > 0
    ]


def outcome_of(d: dict[str, Any]) -> Outcome:
    """A gate's outcome as a report's ``gates`` list holds it (to describe it again)."""
    gate = Gate(str(d.get("metric")), str(d.get("op")), float(d.get("threshold") or 0.0), d.get("arm"))
    return Outcome(gate, d.get("arm"), d.get("value"), int(d.get("n") or 0), d.get("passed"),
                   str(d.get("on") or "point"), d.get("bound"), str(d.get("against") or ""),
                   se=d.get("se"), worse=int(d.get("worse") or 1), sides=int(d.get("sides") or 1),
                   df=d.get("df"), detail=_detail_of(d),
                   p=d.get("p"), level=d.get("level"))  # fmt: skip


def _detail_of(d: dict[str, Any]) -> dict[str, Any] | None:
    """What a gate's JSON entry holds beyond its outcome's fields (the run and control gates'
    `Outcome.detail`; a run gate's ``against`` is the reference arm, the trend's its words)."""
    trend = d.get("op") == "trend"
    kept = {k: v for k, v in d.items() if k not in _ENTRY_KEYS or (k == "against" and not trend)}
    return kept or None


#: A run gate's figure in an arm's ``run_figures`` (`report.table_summary`): the row, else
#: the row that stands in for it where the log lacks it (tokens processed where cost is absent).
_RUN_ROWS = {"read": ("read",), "duration": ("duration_s",), "cost": ("cost_usd", "tokens_processed")}
_ROW_WORDS = {"tokens_processed": "median tokens processed per run"}


def _run_median(agg: dict[str, Any] | None, row: str) -> float | None:
    figures = (agg or {}).get("run_figures") or {}
    value = (figures.get(row) or {}).get("median")
    return value if isinstance(value, int | float) else None


def evaluate_run_gates(
    gates: list[Gate],
    arms: dict[str, dict[str, Any]],
    pair: tuple[str, str] | None,
    baseline: dict[str, dict[str, Any]] | None,
    on: str = "point",
    records: Mapping[str, Sequence[Any]] | None = None,
    baseline_records: Mapping[str, Sequence[Any]] | None = None,
) -> list[Outcome]:
    """``--max-read-increase``, ``--max-duration-increase``, ``--max-cost-increase``: the arm's
    median against the same arm in the baseline (``baseline``: its arms' aggregates), else
    against the other arm of the compared ``pair``. Without ``ARM:``: every arm with the
    figure (against the baseline), or the pair's first arm (against its second).

    On the bound (``records``, and ``baseline_records`` against a baseline: each arm's
    classified records), the increase is decided on a bootstrap of the change of the medians
    (`compare.median_draws`, resampled as the residual's growth): a member of the run's
    family of checks, failing when the increase exceeds the threshold beyond noise."""
    outcomes: list[Outcome] = []
    for gate in gates:
        rows = _RUN_ROWS[gate.metric]
        if gate.arm is not None:
            targets = [gate.arm]
        elif baseline is not None:
            targets = [a for a in arms if any(_run_median(arms[a], r) is not None for r in rows)]
        else:
            targets = [pair[0]] if pair else []
        if not targets:
            why = "no arm pair to compare and no baseline" if baseline is None and not pair else ""
            outcomes.append(Outcome(gate, None, None, 0, None, why=why))
            continue
        for arm in targets:
            if baseline is not None:
                ref, against = baseline.get(arm), f"the baseline's arm {arm!r}"
                ref_recs = (baseline_records or {}).get(arm, ())
            elif pair and arm in pair:
                other = pair[1] if arm == pair[0] else pair[0]
                ref, against = arms.get(other), f"arm {other!r}"
                ref_recs = (records or {}).get(other, ())
            else:
                outcomes.append(Outcome(gate, arm, None, 0, None, why="no arm to compare it with (no "
                                        "baseline, and it is not one of the compared pair)"))  # fmt: skip
                continue
            agg = arms.get(arm)
            both = [r for r in rows if _run_median(agg, r) is not None and _run_median(ref, r) is not None]
            row = both[0] if both else None
            words = _ROW_WORDS.get(row or "", RUN_WORDS[gate.metric])
            if row is None or agg is None:
                why = _unknown_arm(arms) if agg is None else f"no {words} here and in {against}"
                outcomes.append(Outcome(gate, arm, None, 0, None, why=why))
                continue
            new, old = _run_median(agg, row), _run_median(ref, row)
            assert new is not None and old is not None
            if gate.op == "max_rel_increase":
                if old == 0:
                    outcomes.append(Outcome(gate, arm, None, 0, None, why=f"a {words} of 0 in {against}: "
                                            "no relative increase"))  # fmt: skip
                    continue
                value = (new - old) / old
            else:
                value = new - old
            n = int(((agg.get("run_figures") or {}).get(row) or {}).get("runs") or 0)
            detail = {"figure": row, "words": words, "new": new, "old": old, "against": against}
            draws = None
            if on == "bound" and records is not None:
                from .compare import median_draws, spread
                from .report import TABLE, table_of

                def figure(rec: Any, at: int = TABLE.index(row)) -> float | None:
                    return table_of(rec)[at]  # type: ignore[no-any-return]

                draws, _ = median_draws(records.get(arm, ()), ref_recs, figure,
                                        relative=gate.op == "max_rel_increase")  # fmt: skip
            if draws is not None:  # a member of the family of checks
                o = Outcome(gate, arm, value, n, True, on, se=spread(draws), draws=draws, detail=detail)
                outcomes.append(decided_alone(o))
            else:  # on the point, or no interval to decide on (under two runs on a side)
                outcomes.append(Outcome(gate, arm, value, n, value <= gate.threshold, detail=detail))
    return outcomes


def evaluate_control(
    groups: tuple[str, ...], now: Any, baseline: list[dict[str, Any]] | None
) -> list[Outcome]:
    """``--explore-suff-control``: one outcome per arm and metric of the control groups
    (`control.changes`), each a two-sided member of the run's family of checks: a metric
    that moved beyond noise, at the level `correct` tests it at, fails."""
    gate = Gate("control", "control", 0.0)
    detail: dict[str, Any] = {"groups": list(groups)}
    if baseline is None:
        return [Outcome(gate, None, None, 0, None, why="needs --explore-suff-baseline", detail=detail)]
    from .control import changes

    found = changes(now, baseline, groups)
    if not found:
        why = f"no classified transcript of group(s) {', '.join(groups)} here or in the baseline"
        return [Outcome(gate, None, None, 0, None, why=why, detail=detail)]
    out = []
    for c in found:
        d = {**detail, "control_metric": c["metric"], "old": c["old"], "new": c["new"]}
        g = Gate(f"control.{c['metric']}", "control", 0.0)
        if c["se"] is None:
            out.append(Outcome(g, c["arm"], None, c["runs"], None, "bound", why=c["why"], detail=d))
            continue
        o = Outcome(g, c["arm"], c["change"], c["runs"], True, "bound", se=c["se"], sides=2, df=c["df"],
                    detail=d)  # fmt: skip
        out.append(decided_alone(o))
    return out


#: The keys of a gate's JSON entry that are not its `Outcome.detail`.
_ENTRY_KEYS = frozenset(("arm", "metric", "op", "threshold", "value", "n", "on", "bound", "passed", "against",
                         "se", "df", "worse", "sides", "p", "level", "lo", "hi"))  # fmt: skip
