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
import random
import zlib
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


def t_sf(t: float, df: float) -> float:
    """P(T > t) for Student's t with ``df`` degrees of freedom (the regularized incomplete
    beta function by its continued fraction; no dependency for one distribution)."""
    x = df / (df + t * t)
    tail = 0.5 * _betai(df / 2, 0.5, x)
    return tail if t > 0 else 1.0 - tail


def t_isf(p: float, df: float) -> float:
    """The t with P(T > t) = p (bisection on `t_sf`)."""
    if p >= 0.5:
        return -t_isf(1.0 - p, df) if p > 0.5 else 0.0
    lo, hi = 0.0, 1e6
    for _ in range(200):
        mid = (lo + hi) / 2
        if t_sf(mid, df) > p:
            lo = mid
        else:
            hi = mid
        if hi - lo <= 1e-13 * hi:  # as close as a double says it (about 65 halvings, not 200)
            break
    return (lo + hi) / 2


def _betai(a: float, b: float, x: float) -> float:
    if x <= 0.0:
        return 0.0
    if x >= 1.0:
        return 1.0
    log_front = math.lgamma(a + b) - math.lgamma(a) - math.lgamma(b) + a * math.log(x) + b * math.log1p(-x)
    front = math.exp(log_front)
    if x < (a + 1) / (a + b + 2):
        return front * _betacf(a, b, x) / a
    return 1.0 - front * _betacf(b, a, 1.0 - x) / b


def _betacf(a: float, b: float, x: float) -> float:
    """The continued fraction of the incomplete beta function (Lentz's method)."""
    tiny = 1e-300
    qab, qap, qam = a + b, a + 1.0, a - 1.0
    c, d = 1.0, 1.0 - qab * x / qap
    d = 1.0 / (d if abs(d) > tiny else tiny)
    h = d
    for m in range(1, 300):
        m2 = 2 * m
        even = m * (b - m) * x / ((qam + m2) * (a + m2))
        odd = -(a + m) * (qab + m) * x / ((a + m2) * (qap + m2))
        for aa in (even, odd):
            d = 1.0 + aa * d
            d = 1.0 / (d if abs(d) > tiny else tiny)
            c = 1.0 + aa / c
            c = c if abs(c) > tiny else tiny
            h *= d * c
        if abs(d * c - 1.0) < 1e-12:
            break
    return h


@dataclass(frozen=True)
class Difference:
    a: float
    b: float
    diff: float  # a - b
    lo: float
    hi: float
    paired: bool
    groups: int  # groups used when paired
    se: float = 0.0  # the standard error of diff (what a gate's family correction reads)
    df: float | None = None  # Student's t degrees of freedom (None: normal), few clusters

    def to_dict(self) -> dict[str, float | int | bool]:
        return {"a": self.a, "b": self.b, "diff": self.diff, "lo": self.lo, "hi": self.hi,
                "paired": self.paired, "groups": self.groups}  # fmt: skip


def difference(a: Share, b: Share) -> Difference:
    """a - b for independent samples."""
    se = math.sqrt(a.var + b.var)
    half = Z95 * se
    d = a.p - b.p
    return Difference(a.p, b.p, d, max(-1.0, d - half), min(1.0, d + half), False, 0, se)


def matched_difference(
    new: Mapping[Any, tuple[float, float]], old: Mapping[Any, tuple[float, float]]
) -> tuple[float, float, float, float] | None:
    """new - old of two pooled ratios sum(k)/sum(n), clustered by the keys both sides share
    (a transcript's digest): (new ratio, old ratio, difference, its standard error).

    Each key is one cluster observed on both sides (a key on one side only is a cluster
    with nothing on the other); the variance is the linearized one of the difference,
    sum over clusters of (z_new - z_old)^2 with the small-sample factor C/(C-1), where
    z = (k - p n) / N. The same transcripts judged alike give a difference of 0 with a
    standard error of 0; one judged otherwise, a small one. None when a side has no
    calls. Not used when no key is shared (then the samples are independent: `difference`).
    """
    n_new = sum(n for _, n in new.values())
    n_old = sum(n for _, n in old.values())
    if n_new <= 0 or n_old <= 0:
        return None
    p_new = sum(k for k, _ in new.values()) / n_new
    p_old = sum(k for k, _ in old.values()) / n_old
    keys = new.keys() | old.keys()
    c = len(keys)
    spread = 0.0
    for key in keys:
        kn, nn = new.get(key, (0, 0))
        ko, no = old.get(key, (0, 0))
        z = (kn - p_new * nn) / n_new - (ko - p_old * no) / n_old
        spread += z * z
    var = c / (c - 1) * spread if c > 1 else 0.0
    return p_new, p_old, p_new - p_old, math.sqrt(var)


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
    return Difference(pa, pb, d, max(-1.0, d - half), min(1.0, d + half), True, len(strata), math.sqrt(var))


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


def jackknife_ratio_var(groups: Mapping[Any, tuple[float, float]]) -> float:
    """The delete-one-group jackknife variance of the pooled ratio sum(u) / sum(e) over
    groups (each (u, e), e > 0): ``(G - 1) / G * sum((r_(-g) - mean)^2)``, r_(-g) the ratio
    without group g. With few groups it is the safer of the cluster-robust variances (the
    jackknife is close to CR3): the linearized one (CR1) understates the spread when a few
    large groups dominate, and a one-sided test on it fails more often than it says (the
    allocation drop's A/A benchmark: 1.5% of checks at a 0.42% level). 0 with under two groups."""
    g = len(groups)
    total_u = sum(u for u, _ in groups.values())
    total_e = sum(e for _, e in groups.values())
    reps = [(total_u - u) / (total_e - e) for u, e in groups.values() if total_e - e > 0]
    if g < 2 or len(reps) < g:
        return 0.0
    mean = sum(reps) / g
    return (g - 1) / g * sum((r - mean) ** 2 for r in reps)


#: z of a two-sided 5% test plus z of 80% power: the detectable change is this many standard errors.
Z_POWER = 1.959963984540054 + 0.8416212335729143


def sample_size(p: float, n: int, se: float) -> dict[str, float | int | None]:
    """What an arm's calls can detect: the design effect of its sufficient share (its
    cluster-robust variance over the binomial one, at least 1), the smallest change of the
    share a comparison with as many calls on the other side detects at 80% power (two-sided
    5%), and the calls per side a 10-point change needs, at this share and design effect.
    A share of 0 or 1 is taken at 0.5 for the variance (no spread observed is not none)."""
    if n <= 0:
        return {"design_effect": None, "detectable_change": None, "calls_for_10_points": None}
    q = p * (1 - p) if 0.0 < p < 1.0 else 0.25
    deff = max(1.0, se * se / (q / n)) if se > 0 and 0.0 < p < 1.0 else 1.0
    detectable = min(1.0, Z_POWER * math.sqrt(2 * q * deff / n))
    needed = math.ceil(2 * Z_POWER**2 * q * deff / 0.01)
    return {"design_effect": deff, "detectable_change": detectable, "calls_for_10_points": needed}


#: Resamples of `bootstrap_growth`: enough for a percentile at the levels Holm's correction
#: tests a dozen checks at (0.2%).
BOOTSTRAP = 2000


def bootstrap_growth(
    new: Mapping[Any, Sequence[float]], old: Mapping[Any, Sequence[float]], *, paired: bool,
    resamples: int = BOOTSTRAP, relative: bool = True, floor: float = 0.0,
) -> list[float] | None:
    """Bootstrap replicates of (median(new) - median(old)) / median(old) over transcripts
    (``relative=False``: of median(new) - median(old), in the figure's units)
    (the keys: a transcript, or a group of them): paired, the keys both sides share are drawn
    together (the same transcripts judged alike give 0), else each side's keys on their own. Each
    resample's difference of medians is divided by the observed old median (a resample's
    own can be 0 when most runs hold no residual).

    The generator's seed is derived from the figures themselves, so a report is the same
    bytes at every run, with or without ``-n``. None when the old median is not above 0 (no
    relative growth; ``floor``: an old median below it is taken as it) or a side has under two
    keys.
    """
    if len(new) < 2 or len(old) < 2:
        return None
    # The growth of each resample over the observed old median (a resample's own median can be
    # 0 when most runs have no residual): the standard error of the difference, scaled.
    scale = median([v for vs in old.values() for v in vs]) if relative else 1.0
    if scale is not None and relative:
        scale = max(scale, floor)  # ``floor``: the least old median a growth is relative to
    if scale is None or scale <= 0:
        return None
    seed = zlib.crc32(repr((sorted((repr(k), list(v)) for k, v in new.items()),
                            sorted((repr(k), list(v)) for k, v in old.items()))).encode())  # fmt: skip
    rng = random.Random(seed)
    growths: list[float] = []
    if paired:
        keys = sorted(new.keys() | old.keys(), key=repr)
        pairs = [(new.get(k, ()), old.get(k, ())) for k in keys]
        for _ in range(resamples):
            xs: list[float] = []
            ys: list[float] = []
            for a, b in rng.choices(pairs, k=len(pairs)):
                xs += a
                ys += b
            g = _growth(xs, ys, scale)
            if g is not None:
                growths.append(g)
    else:
        ln, lo = [list(new[k]) for k in sorted(new, key=repr)], [list(old[k]) for k in sorted(old, key=repr)]
        if all(len(vs) == 1 for vs in ln) and all(len(vs) == 1 for vs in lo):
            # one figure a key (a transcript): the same draws, without a list per key
            fn, fo = [vs[0] for vs in ln], [vs[0] for vs in lo]
            for _ in range(resamples):
                g = _growth(rng.choices(fn, k=len(fn)), rng.choices(fo, k=len(fo)), scale)
                if g is not None:
                    growths.append(g)
        else:
            for _ in range(resamples):
                xs = [v for vs in rng.choices(ln, k=len(ln)) for v in vs]
                ys = [v for vs in rng.choices(lo, k=len(lo)) for v in vs]
                g = _growth(xs, ys, scale)
                if g is not None:
                    growths.append(g)
    if len(growths) < 2:
        return None
    if not paired:
        # A bootstrap over few clusters spreads by (G - 1) / G of the estimate's variance: the
        # replicates are widened about the observed growth by the usual small-sample factor.
        g = min(len(new), len(old))
        every_new = [v for vs in new.values() for v in vs]
        observed = _growth(every_new, [v for vs in old.values() for v in vs], scale)
        if observed is not None and g > 1:
            factor = math.sqrt(g / (g - 1))
            growths = [observed + factor * (x - observed) for x in growths]
    return growths


def _growth(new: list[float], old: list[float], scale: float) -> float | None:
    mo, mn = median(old), median(new)
    if mo is None or mn is None:
        return None
    return (mn - mo) / scale
