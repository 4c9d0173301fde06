"""Intervals that respect clustering: calls inside one run are not independent.

A bucket's share in an arm is a ratio estimator, p = sum(k_i) / sum(n_i), over
transcripts i (k_i calls in the bucket out of n_i answered calls). Its
cluster-robust variance (linearization, with the small-sample factor N/(N-1))
gives a design effect; the 95% interval is Wilson's score interval computed at
the *effective* sample size n / deff. That keeps Wilson's good behaviour near 0
and 1 and widens it as much as the clustering demands. With fewer than two
transcripts, or a share of exactly 0 or 1 (no within-arm spread to measure),
it falls back to the plain Wilson interval over calls.

Differences (arm against arm, new against baseline) use a normal interval on
p_a - p_b with the two cluster-robust variances added; arms paired by group
use the stratified difference, which removes between-repo spread.

Everything here is deterministic: the same counts give the same bytes.
"""

from __future__ import annotations

import math
from array import array
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass
from typing import Any, TypeGuard

Z95 = 1.959963984540054
_NUMBERS = (int, float)
_EXACT = frozenset(_NUMBERS)


def is_number(value: Any) -> TypeGuard[int | float]:
    """An int or a float, not a bool (an int to isinstance, not a figure).

    The exact type first: a decoded number is an int or a float, and one test is
    cheaper than two; isinstance for a subclass.
    """
    return type(value) in _EXACT or (isinstance(value, _NUMBERS) and not isinstance(value, bool))


@dataclass(frozen=True)
class Share:
    """A share with its 95% interval, from ``(k_i, n_i)`` per transcript."""

    k: int
    n: int
    clusters: int
    p: float
    lo: float
    hi: float
    var: float  # cluster-robust variance of p (binomial when it cannot be estimated)
    method: str  # "cluster-wilson" | "wilson"

    def to_dict(self) -> dict[str, float | int | str]:
        return {
            "share": self.p,
            "lo": self.lo,
            "hi": self.hi,
            "se": math.sqrt(self.var),
            "method": self.method,
        }


def wilson(k: float, n: float, z: float = Z95) -> tuple[float, float]:
    if n <= 0:
        return 0.0, 1.0
    p = k / n
    denom = 1 + z * z / n
    centre = (p + z * z / (2 * n)) / denom
    half = z * math.sqrt(p * (1 - p) / n + z * z / (4 * n * n)) / denom
    return max(0.0, centre - half), min(1.0, centre + half)


def share(pairs: Iterable[tuple[int, int]]) -> Share:
    """The share sum(k)/sum(n) over clusters, with a clustering-aware 95% interval."""
    data = [(k, n) for k, n in pairs if n > 0]
    k = sum(x for x, _ in data)
    n = sum(y for _, y in data)
    if n == 0:
        return Share(0, 0, 0, 0.0, 0.0, 1.0, 0.0, "wilson")
    p = k / n
    binomial = p * (1 - p) / n
    clusters = len(data)
    if clusters < 2 or p in (0.0, 1.0):
        lo, hi = wilson(k, n)
        # The variance the interval implies: non-zero even at p = 0 or 1, so a
        # difference against this share is not falsely certain.
        return Share(k, n, clusters, p, lo, hi, ((hi - lo) / (2 * Z95)) ** 2, "wilson")
    resid = sum((ki - p * ni) ** 2 for ki, ni in data)
    var = clusters / (clusters - 1) * resid / (n * n)
    # Effective sample size: never more than the number of calls (deff >= 1 is
    # not guaranteed by the estimator, but claiming independence beyond the
    # calls we have would be overconfident).
    if var <= 0:  # every run has exactly the pooled share: no spread to widen by
        var = binomial
    n_eff = min(float(n), p * (1 - p) / var)
    lo, hi = wilson(p * n_eff, n_eff)
    return Share(k, n, clusters, p, lo, hi, max(var, p * (1 - p) / n_eff), "cluster-wilson")


@dataclass(frozen=True)
class Difference:
    a: float
    b: float
    diff: float  # a - b
    lo: float
    hi: float
    paired: bool
    groups: int  # groups used when paired

    def to_dict(self) -> dict[str, float | int | bool]:
        return {"a": self.a, "b": self.b, "diff": self.diff, "lo": self.lo, "hi": self.hi,
                "paired": self.paired, "groups": self.groups}  # fmt: skip


def difference(a: Share, b: Share) -> Difference:
    """a - b for independent samples."""
    half = Z95 * math.sqrt(a.var + b.var)
    d = a.p - b.p
    return Difference(a.p, b.p, d, max(-1.0, d - half), min(1.0, d + half), False, 0)


def paired_difference(
    a_by_group: Mapping[str, Sequence[tuple[int, int]]], b_by_group: Mapping[str, Sequence[tuple[int, int]]]
) -> Difference | None:
    """Stratified a - b over the groups both arms answered in; None when they share none."""
    common = sorted(g for g in a_by_group if g in b_by_group)
    strata = []
    for g in common:
        sa, sb = share(a_by_group[g]), share(b_by_group[g])
        if sa.n and sb.n:
            strata.append((sa, sb))
    if not strata:
        return None
    total = sum(sa.n + sb.n for sa, sb in strata)
    d = var = pa = pb = 0.0
    for sa, sb in strata:
        w = (sa.n + sb.n) / total
        d += w * (sa.p - sb.p)
        pa += w * sa.p
        pb += w * sb.p
        var += w * w * (sa.var + sb.var)
    half = Z95 * math.sqrt(var)
    return Difference(pa, pb, d, max(-1.0, d - half), min(1.0, d + half), True, len(strata))


def median(values: Iterable[float | int | None]) -> float | None:
    """The median of the numbers among ``values`` (None and bools are not numbers)."""
    xs: list[float | int]
    if type(values) is array:  # numbers of one kind (`report._Column`): no list copied first
        xs = sorted(values)
    else:
        values = values if isinstance(values, list) else list(values)
        if set(map(type, values)) <= _EXACT:  # the usual column: all numbers, none to drop
            # Sorted as they are, the middle ones made floats after: float() keeps the order, and
            # a column of tens of thousands of ints is not copied as as many new float objects
            # (the end of the session is where a run's memory peaks).
            xs = sorted(values)  # type: ignore[arg-type]
        else:
            xs = sorted([float(v) for v in values if is_number(v)])
    if not xs:
        return None
    mid = len(xs) // 2
    return float(xs[mid]) if len(xs) % 2 else (float(xs[mid - 1]) + float(xs[mid])) / 2


def quantile(values: Iterable[float | int | None], q: float) -> float | None:
    """The ``q`` quantile of the numbers among ``values``, interpolated between the two
    nearest ranks (numpy's default, "linear"): 0.25 gives the p25 the arm tables show."""
    xs = sorted([float(v) for v in values if is_number(v)])
    if not xs:
        return None
    at = (len(xs) - 1) * q
    lo = math.floor(at)
    hi = min(lo + 1, len(xs) - 1)
    return xs[lo] + (xs[hi] - xs[lo]) * (at - lo)


@dataclass(frozen=True)
class Ratio:
    """A pooled ratio sum(u) / sum(e) over clusters, with a 95% interval."""

    p: float
    lo: float
    hi: float
    var: float
    clusters: int
    method: str  # "cluster-normal" | "none" (fewer than two clusters: no spread to measure)

    def to_dict(self) -> dict[str, float | int | str]:
        return {"share": self.p, "lo": self.lo, "hi": self.hi, "se": math.sqrt(self.var),
                "clusters": self.clusters, "method": self.method}  # fmt: skip


def ratio(pairs: Iterable[tuple[float, float]]) -> Ratio:
    """A ratio estimator (allocation efficiency: characters used over characters
    returned, per transcript) with its cluster-robust variance and a normal
    interval clipped to [0, 1]. Characters are not independent trials, so no
    binomial interval applies; with fewer than two clusters the interval is [0, 1]."""
    data = [(u, e) for u, e in pairs if e > 0]
    return ratio_of([u for u, _ in data], [e for _, e in data])


def ratio_of(used: Sequence[float], envelope: Sequence[float]) -> Ratio:
    """`ratio` of the pairs ``zip(used, envelope)``, read in place: no pair is made (over
    a campaign's transcripts, at the end of the session, where a run's memory peaks)."""
    total = sum(e for e in envelope if e > 0)
    if not total:
        return Ratio(0.0, 0.0, 1.0, 0.0, 0, "none")
    p = sum(u for u, e in zip(used, envelope, strict=True) if e > 0) / total
    n = sum(1 for e in envelope if e > 0)
    if n < 2:
        return Ratio(p, 0.0, 1.0, 0.25, n, "none")
    spread = sum((u - p * e) ** 2 for u, e in zip(used, envelope, strict=True) if e > 0)
    var = n / (n - 1) * spread / (total * total)
    half = Z95 * math.sqrt(var)
    return Ratio(p, max(0.0, p - half), min(1.0, p + half), var, n, "cluster-normal")
