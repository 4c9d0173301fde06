"""Control groups: repositories an A/B's change must not affect (``--explore-suff-control``).

Every metric of the control groups, in each arm, is compared with the same groups and arm
of the baseline report; a metric "moved beyond noise" when its change is significant at
5% after Holm's correction over every compared metric and arm, so the run fails on a
false alarm at most 5% of the time when nothing moved (family-wise; tests/test_control.py
checks it by seeded simulation). Plain library code: no pytest import.

The metrics and their changes (new minus old, a normal test on each):

- the five bucket shares: the clustered share (`stats.share`, runs as clusters), its
  variance on each side added;
- allocation efficiency and the duplicate share: ratio estimators (`stats.ratio_of`), likewise;
- the retrieval residual and the per-run figures (duration, tool calls, Read, Grep/Glob,
  Bash, retrieval calls): the mean per run, with Welch's standard error.
"""

from __future__ import annotations

import math
from collections.abc import Iterable, Mapping, Sequence
from typing import Any

from . import stats
from .buckets import KEYS
from .report import TABLE, brief_of, table_of

ALPHA = 0.05
#: Per-run figures compared by their mean: (name in the line, index in `report.TABLE`).
_MEANS = tuple((name, TABLE.index(key)) for name, key in (
    ("duration_s", "duration_s"), ("tool_calls", "tool_calls"), ("read_calls", "read"),
    ("search_calls", "search"), ("bash_calls", "bash"), ("retrieval_calls", "retrieval"),
))  # fmt: skip
#: The control lines' metrics, in the order they are printed.
METRICS = (*KEYS, "allocation", "duplicate", "residual", *(name for name, _ in _MEANS))
WORDS = {
    **{k: f"{k.replace('_', ' ')} share" for k in KEYS},
    "allocation": "allocation efficiency",
    "duplicate": "duplicate share",
    "residual": "mean retrieval residual (tokens)",
    "duration_s": "mean duration (s)",
    "tool_calls": "mean tool calls",
    "read_calls": "mean Read calls",
    "search_calls": "mean Grep/Glob calls",
    "bash_calls": "mean Bash calls",
    "retrieval_calls": "mean retrieval-tool calls",
}


def _classified(
    recs: Iterable[Mapping[str, Any]], groups: frozenset[str]
) -> dict[str, list[Mapping[str, Any]]]:
    out: dict[str, list[Mapping[str, Any]]] = {}
    for rec in recs:
        if rec.get("status") == "classified" and rec.get("group") in groups:
            out.setdefault(str(rec.get("arm")), []).append(rec)
    return out


def _estimate(metric: str, recs: Sequence[Mapping[str, Any]]) -> tuple[float, float, int] | None:
    # (estimate, its variance, runs): the runs give the test its degrees of freedom
    """(estimate, its variance, runs) of one side; None when the side has no figure."""
    if metric in KEYS:
        pairs = [(int(r["counts"][metric]), int(r["answered"])) for r in recs if r["answered"]]
        if not pairs:
            return None
        s = stats.share(pairs)
        return s.p, s.var, s.clusters
    if metric in ("allocation", "duplicate"):
        if metric == "allocation":
            rows = [(b[1], b[0]) for b in map(brief_of, recs) if b[0]]
        else:
            at_d, at_e = TABLE.index("duplicate_chars"), TABLE.index("duplicate_envelope")
            rows = [(t[at_d], t[at_e]) for t in map(table_of, recs) if t[at_e]]
        if not rows:
            return None
        r = stats.ratio_of([u for u, _ in rows], [e for _, e in rows])
        return r.p, r.var, r.clusters
    if metric == "residual":
        values = [b[9] for b in map(brief_of, recs) if b[9] is not None]
    else:
        at = dict(_MEANS)[metric]
        values = [t[at] for t in map(table_of, recs) if t[at] is not None]
    if not values:
        return None
    n = len(values)
    mean = sum(values) / n
    var = sum((v - mean) ** 2 for v in values) / (n - 1) / n if n > 1 else math.inf
    return mean, var, n


def _p_value(diff: float, var: float, df: float) -> float:
    """Two-sided p of a t test of ``diff`` = 0 with ``df`` degrees of freedom."""
    if var <= 0:
        return 1.0 if diff == 0 else 0.0
    t = abs(diff) / math.sqrt(var)
    return _betai(df / 2, 0.5, df / (df + t * t))


def _betai(a: float, b: float, x: float) -> float:
    """The regularized incomplete beta function I_x(a, b) (a continued fraction, Lentz's method)."""
    if x <= 0:
        return 0.0
    if x >= 1:
        return 1.0
    log_front = math.lgamma(a + b) - math.lgamma(a) - math.lgamma(b) + a * math.log(x) + b * math.log1p(-x)
    front = math.exp(log_front)
    if x > (a + 1) / (a + b + 2):
        return 1.0 - _betai(b, a, 1.0 - x)
    tiny = 1e-300
    f, c, d = 1.0, 1.0, 0.0
    for i in range(400):
        m = i // 2
        if i == 0:
            num = 1.0
        elif i % 2 == 0:
            num = m * (b - m) * x / ((a + 2 * m - 1) * (a + 2 * m))
        else:
            num = -(a + m) * (a + b + m) * x / ((a + 2 * m) * (a + 2 * m + 1))
        d = 1.0 + num * d
        d = 1.0 / (d if abs(d) > tiny else tiny)
        c = 1.0 + num / c
        c = c if abs(c) > tiny else tiny
        f *= c * d
        if abs(1.0 - c * d) < 1e-14:
            break
    return front * (f - 1.0) / a


def _df(a: tuple[float, float, int], b: tuple[float, float, int]) -> float:
    """Welch-Satterthwaite degrees of freedom of the two sides' variances (runs - 1 each)."""
    va, vb = a[1], b[1]
    if va + vb <= 0:
        return float(a[2] + b[2] - 2)
    return (va + vb) ** 2 / (va * va / (a[2] - 1) + vb * vb / (b[2] - 1))


def _t95(df: float) -> float:
    """The two-sided 95% quantile of Student's t (bisection on `_p_value`'s tail)."""
    lo, hi = 1.9, 20.0
    for _ in range(60):
        mid = (lo + hi) / 2
        if _betai(df / 2, 0.5, df / (df + mid * mid)) > 0.05:
            lo = mid
        else:
            hi = mid
    return hi


def holm(p_values: Sequence[float]) -> list[float]:
    """Holm's step-down adjusted p-values, in the input's order: reject where < alpha."""
    order = sorted(range(len(p_values)), key=lambda i: p_values[i])
    m = len(p_values)
    out = [1.0] * m
    running = 0.0
    for rank, i in enumerate(order):
        running = max(running, min(1.0, (m - rank) * p_values[i]))
        out[i] = running
    return out


def changes(
    now: Iterable[Mapping[str, Any]], old: Iterable[Mapping[str, Any]], groups: Sequence[str]
) -> list[dict[str, Any]]:
    """One entry per arm and metric of the control groups: old, new, the change with its 95%
    interval, its p-value and Holm-adjusted p-value, and whether it ``moved`` (adjusted p
    below 5%); ``why`` when it cannot be decided (no figure, or one run on a side: no noise
    to measure). A metric neither side has is left out."""
    wanted = frozenset(groups)
    new_arms, old_arms = _classified(now, wanted), _classified(old, wanted)
    out: list[dict[str, Any]] = []
    for arm in sorted(new_arms.keys() | old_arms.keys()):
        for metric in METRICS:
            a = _estimate(metric, old_arms.get(arm, ()))
            b = _estimate(metric, new_arms.get(arm, ()))
            if a is None and b is None:
                continue
            entry: dict[str, Any] = {
                "arm": arm, "metric": metric, "old": None if a is None else a[0],
                "new": None if b is None else b[0], "change": None, "lo": None, "hi": None,
                "p": None, "p_holm": None, "moved": None, "why": "",
            }  # fmt: skip
            if a is None or b is None:
                entry["why"] = f"no figure in {'the baseline' if a is None else 'this run'}"
            elif a[2] < 2 or b[2] < 2:
                entry["why"] = "fewer than two runs on a side: no noise to measure"
            else:
                diff, var = b[0] - a[0], a[1] + b[1]
                df = _df(a, b)
                half = _t95(df) * math.sqrt(var)
                entry.update(change=diff, lo=diff - half, hi=diff + half, p=_p_value(diff, var, df))
            out.append(entry)
    decided = [e for e in out if e["p"] is not None]
    for e, adjusted in zip(decided, holm([e["p"] for e in decided]), strict=True):
        e["p_holm"] = adjusted
        e["moved"] = adjusted < ALPHA
    return out
