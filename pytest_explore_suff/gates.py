"""Threshold gates: ``--min-sufficient=0.5``, ``--max-read-returned=with:0.2``."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

# The tables and the parsers of the options' values live in `options` (imported at every
# pytest start, where a dataclass costs too much); re-exported here.
from .options import (
    GATES,
    METRIC_BASELINE_GATES,
    METRIC_GATES,
    METRIC_WORDS,
    parse_growth,
    parse_threshold,
)

__all__ = ["GATES", "METRIC_BASELINE_GATES", "METRIC_GATES", "METRIC_WORDS", "Gate", "Outcome",
           "evaluate", "evaluate_baseline_metrics", "evaluate_metrics", "parse_growth",
           "parse_threshold", "sample_size"]  # fmt: skip


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
        }

    def describe(self) -> str:
        g = self.gate
        where = f"arm {self.arm!r}" if self.arm is not None else "every arm"
        if g.op == "trend":
            words = METRIC_WORDS[g.metric][0] if g.metric in METRIC_WORDS else f"{g.metric} share"
            verdict = "passed" if self.passed else "FAILED"
            assert self.value is not None and self.bound is not None
            return (f"{g.option}: {where} {words} {self.value:+.3f} against the best earlier run "
                    f"({self.why}), at most {self.bound:+.3f} at the 95% bound: "
                    f"{'not ' if self.passed else ''}worse beyond noise: {verdict}")  # fmt: skip
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
                what += f" (at least {self.bound:.3f} at the 95% bound)"
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

    def _describe_metric(self, where: str) -> str:
        g = self.gate
        words, missing = METRIC_WORDS[g.metric]
        if self.passed is None:
            return f"{g.option}: {where} has {self.why or missing}: not applicable, not a pass"
        verdict = "passed" if self.passed else "FAILED"
        assert self.value is not None
        if g.op == "max_drop":
            what = f"{words} fell by {self.value:.3f} from the baseline"
        elif g.op == "max_growth":
            what = f"{words} grew by {self.value:+.1%} from the baseline"
        else:
            what = f"{words} {self.value:.3f}"
            if self.on == "bound" and self.bound is not None:
                what += f" ({'lower' if g.op == 'min' else 'upper'} 95% bound {self.bound:.3f})"
        op = ">=" if g.op == "min" else "<="
        return f"{g.option}: {where} {what} (n={self.n}) {op} {g.threshold:g}: {verdict}"


def _unknown_arm(arms: dict[str, dict[str, Any]]) -> str:
    """Why a gate on an arm with no classified transcript cannot be decided (a typo, often)."""
    return f"no classified transcript (the arms with one: {', '.join(sorted(arms)) or 'none'})"


def _targets(gate: Gate, arms: dict[str, dict[str, Any]]) -> list[str]:
    """The gate's arm, or every arm with answered calls (the arms that have the tool)."""
    return [gate.arm] if gate.arm is not None else [a for a, agg in arms.items() if agg["answered"] > 0]


def _metric_value(arm: dict[str, Any], metric: str, on: str) -> tuple[float | None, int, float | None]:
    """(point, n, bound) of a metric gate's figure in one arm's aggregate."""
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


def evaluate_metrics(gates: list[Gate], arms: dict[str, dict[str, Any]], on: str = "point") -> list[Outcome]:
    """``--min-allocation`` and ``--max-residual-share``, in ARM or in every arm with answered
    calls; an arm whose figure cannot be computed is not applicable, which is not a pass."""
    outcomes: list[Outcome] = []
    for gate in gates:
        targets = _targets(gate, arms)
        if not targets:
            outcomes.append(Outcome(gate, None, None, 0, None, on))
        for arm in targets:
            value, n, bound = _metric_value(arms.get(arm) or {}, gate.metric, on)
            if value is None:
                why = "" if arm in arms else _unknown_arm(arms)
                outcomes.append(Outcome(gate, arm, None, 0, None, on, why=why))
                continue
            compared = bound if bound is not None else value
            ok = compared >= gate.threshold if gate.op == "min" else compared <= gate.threshold
            outcomes.append(Outcome(gate, arm, value, n, ok, on, bound))
    return outcomes


def evaluate_baseline_metrics(
    gates: list[Gate], changes: dict[str, dict[str, Any]], arms: dict[str, dict[str, Any]]
) -> list[Outcome]:
    """``--max-allocation-drop`` and ``--max-residual-growth`` against the baseline."""
    outcomes: list[Outcome] = []
    for gate in gates:
        targets = _targets(gate, arms)
        if not targets:
            outcomes.append(Outcome(gate, None, None, 0, None))
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
                outcomes.append(Outcome(gate, arm, None, 0, None, why=why))
                continue
            outcomes.append(Outcome(gate, arm, value, n, value <= gate.threshold))
    return outcomes


def evaluate(gates: list[Gate], arms: dict[str, dict[str, Any]], on: str = "point") -> list[Outcome]:
    """Decide every gate against the per-arm aggregates (``answered``, ``shares``, ``intervals``).

    ``on="bound"`` compares the interval's bound instead of the point: the
    lower bound must clear a minimum and the upper bound must stay under a
    maximum, so an arm passes on evidence, not on a lucky point estimate.
    """
    outcomes: list[Outcome] = []
    for gate in gates:
        if gate.arm is not None:
            targets = [gate.arm]
        else:
            targets = [a for a, agg in arms.items() if agg["answered"] > 0]
            if not targets:
                outcomes.append(Outcome(gate, None, None, 0, None, on))
                continue
        for arm in targets:
            agg = arms.get(arm)
            n = agg["answered"] if agg else 0
            if not n or agg is None:
                outcomes.append(Outcome(gate, arm, None, 0, None, on, why="" if agg else _unknown_arm(arms)))
                continue
            value = agg["shares"][gate.metric]
            compared, bound = value, None
            if on == "bound":
                interval = agg["intervals"][gate.metric]
                bound = interval["lo"] if gate.op == "min" else interval["hi"]
                compared = bound
            ok = compared >= gate.threshold if gate.op == "min" else compared <= gate.threshold
            outcomes.append(Outcome(gate, arm, value, n, ok, on, bound))
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
                   str(d.get("on") or "point"), d.get("bound"), str(d.get("against") or ""))  # fmt: skip
