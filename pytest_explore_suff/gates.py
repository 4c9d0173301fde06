"""Threshold gates: ``--min-sufficient=0.5``, ``--max-read-returned=with:0.2``."""

from __future__ import annotations

import argparse
from dataclasses import dataclass
from typing import Any

#: option / ini stem -> (bucket, direction). One lower bound, four upper bounds.
GATES: dict[str, tuple[str, str]] = {
    "min_sufficient": ("sufficient", "min"),
    "max_explore_again": ("explore_again", "max"),
    "max_read_returned": ("read_returned", "max"),
    "max_read_missed": ("read_missed", "max"),
    "max_search": ("search", "max"),
}


@dataclass(frozen=True)
class Gate:
    metric: str  # a bucket key
    op: str  # "min" | "max" | "min_calls" | "max_drop"
    threshold: float
    arm: str | None = None  # None: every arm that has answered calls

    @property
    def option(self) -> str:
        if self.op == "min_calls":
            return "--explore-suff-min-calls"
        if self.op == "max_drop":
            return f"--max-{self.metric.replace('_', '-')}-drop"
        return f"--{self.op}-{self.metric.replace('_', '-')}"


def parse_threshold(text: str) -> tuple[str | None, float]:
    """``0.5`` or ``ARM:0.5`` -> (arm, fraction); raises ArgumentTypeError."""
    arm, sep, value = text.rpartition(":")
    try:
        frac = float(value)
    except ValueError:
        raise argparse.ArgumentTypeError(
            f"{text!r}: expected FRAC or ARM:FRAC with FRAC between 0 and 1 (e.g. 0.5 or with:0.5)"
        ) from None
    if not 0.0 <= frac <= 1.0 or frac != frac:
        raise argparse.ArgumentTypeError(f"{text!r}: the fraction must be between 0 and 1")
    if sep and not arm:
        raise argparse.ArgumentTypeError(f"{text!r}: empty arm name before ':'")
    return (arm or None), frac


@dataclass
class Outcome:
    gate: Gate
    arm: str | None
    value: float | None  # the point estimate
    n: int
    passed: bool | None  # None: not applicable (no answered calls), which is not a pass
    on: str = "point"  # what was compared: the point estimate or the interval's bound
    bound: float | None = None  # the interval bound compared when on == "bound"

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
        }

    def describe(self) -> str:
        g = self.gate
        where = f"arm {self.arm!r}" if self.arm is not None else "every arm"
        if self.passed is None:
            what = "has no answered explore calls"
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
            return f"{g.option}: {where} has {self.n} answered calls, needs {g.threshold:g}: {verdict}"
        bound = ">=" if g.op == "min" else "<="
        what = f"{g.metric} share {self.value:.3f}"
        if self.on == "bound" and self.bound is not None:
            side = "lower" if g.op == "min" else "upper"
            what += f" ({side} 95% bound {self.bound:.3f})"
        return f"{g.option}: {where} {what} (n={self.n}) {bound} {g.threshold:g}: {verdict}"


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
                outcomes.append(Outcome(gate, arm, None, 0, None, on))
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
