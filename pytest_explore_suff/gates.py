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
    op: str  # "min" | "max"
    threshold: float
    arm: str | None = None  # None: every arm that has answered calls

    @property
    def option(self) -> str:
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
    value: float | None
    n: int
    passed: bool | None  # None: not applicable (no answered calls), which is not a pass

    def to_dict(self) -> dict[str, Any]:
        return {
            "arm": self.arm,
            "metric": self.gate.metric,
            "op": self.gate.op,
            "threshold": self.gate.threshold,
            "value": self.value,
            "n": self.n,
            "passed": self.passed,
        }

    def describe(self) -> str:
        g = self.gate
        where = f"arm {self.arm!r}" if self.arm is not None else "every arm"
        bound = ">=" if g.op == "min" else "<="
        if self.passed is None:
            return f"{g.option}: {where} has no answered explore calls: not applicable, not a pass"
        verdict = "passed" if self.passed else "FAILED"
        return (
            f"{g.option}: {where} {g.metric} share {self.value:.3f} (n={self.n}) "
            f"{bound} {g.threshold:g}: {verdict}"
        )


def evaluate(gates: list[Gate], arms: dict[str, dict[str, Any]]) -> list[Outcome]:
    """Decide every gate against the per-arm aggregates (``answered``, ``shares``)."""
    outcomes: list[Outcome] = []
    for gate in gates:
        if gate.arm is not None:
            targets = [gate.arm]
        else:
            targets = [a for a, agg in arms.items() if agg["answered"] > 0]
            if not targets:
                outcomes.append(Outcome(gate, None, None, 0, None))
                continue
        for arm in targets:
            agg = arms.get(arm)
            n = agg["answered"] if agg else 0
            if not n:
                outcomes.append(Outcome(gate, arm, None, 0, None))
                continue
            value = agg["shares"][gate.metric]  # type: ignore[index]
            ok = value >= gate.threshold if gate.op == "min" else value <= gate.threshold
            outcomes.append(Outcome(gate, arm, value, n, ok))
    return outcomes
