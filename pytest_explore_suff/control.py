"""Control groups: repositories an A/B's change must not affect (``--explore-suff-control``).

Every metric of the control groups, in each arm, is compared with the same groups and arm
of the baseline report: its change, standard error and degrees of freedom. Each line is a
two-sided member of the run's family of checks (`gates.evaluate_control`, `gates.correct`):
with every other gate that fails on evidence, Holm's step-down keeps the chance that any
fails when nothing moved at `gates.ALPHA` (tests/test_control.py checks it by seeded
simulation). Plain library code: no pytest import.

The metrics and their changes (new minus old; each a t test, Welch's degrees of freedom):

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


def _df(a: tuple[float, float, int], b: tuple[float, float, int]) -> float:
    """Welch-Satterthwaite degrees of freedom of the two sides' variances (runs - 1 each)."""
    va, vb = a[1], b[1]
    if va + vb <= 0:
        return float(a[2] + b[2] - 2)
    return (va + vb) ** 2 / (va * va / (a[2] - 1) + vb * vb / (b[2] - 1))


def changes(
    now: Iterable[Mapping[str, Any]], old: Iterable[Mapping[str, Any]], groups: Sequence[str]
) -> list[dict[str, Any]]:
    """One entry per arm and metric of the control groups: old, new, the change (new minus
    old) with its standard error and Welch's degrees of freedom, and the runs of this run's
    side; ``se`` None with ``why`` when it cannot be decided (no figure on a side, or one run
    on a side: no noise to measure). A metric neither side has is left out. Whether a change
    moved beyond noise is the run's family's to decide (`gates.evaluate_control`)."""
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
                "new": None if b is None else b[0], "runs": 0 if b is None else b[2], "change": None,
                "se": None, "df": None, "why": "",
            }  # fmt: skip
            if a is None or b is None:
                entry["why"] = f"no figure in {'the baseline' if a is None else 'this run'}"
            elif a[2] < 2 or b[2] < 2:
                entry["why"] = "fewer than two runs on a side: no noise to measure"
            else:
                entry.update(change=b[0] - a[0], se=math.sqrt(a[1] + b[1]), df=_df(a, b))
            out.append(entry)
    return out
