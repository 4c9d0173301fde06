"""Trend: each arm's metrics over saved runs, with their 95% intervals, and the trend gate.

A point is what a run's report already says of an arm (its share and interval per
bucket, its allocation efficiency and interval, its median retrieval residual
share); a change is the baseline comparison's noise test (`stats.difference`) on
two points' intervals. Nothing here imports pytest.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from . import stats
from .buckets import KEYS
from .compare import judged_with, options_differ
from .gates import Gate, Outcome, decided_alone
from .history import labels

#: The metrics a trend follows, in its order; the first ones have intervals.
METRICS = (*KEYS, "allocation", "residual_share")
#: Metrics whose drop fails ``--explore-suff-trend-fail`` (higher is better, with an interval).
GATED = ("sufficient", "allocation")
#: When some run of the window was graded against a truth file, its arms' correct share too
#: (pass / judged answers; not gated: ``--max-correct-drop`` compares with a baseline).
CORRECT = "correct"
#: Buckets where a higher share is worse (every bucket but sufficient).
LOWER_IS_BETTER = frozenset(k for k in KEYS if k != "sufficient") | {"residual_share"}


def point(arm: dict[str, Any] | None, metric: str) -> dict[str, Any] | None:
    """An arm's figure for ``metric`` in one report (None: the arm has none there)."""
    if not arm:
        return None
    if metric in KEYS:
        if not arm.get("answered"):
            return None
        i = (arm.get("intervals") or {}).get(metric) or {}
        return {"share": arm["shares"][metric], "lo": i.get("lo"), "hi": i.get("hi"), "se": i.get("se"),
                "n": arm["answered"]}  # fmt: skip
    if metric == CORRECT:
        c = (arm.get("truth") or {}).get("correct_share")
        if not c:
            return None
        return {"share": c["share"], "lo": c.get("lo"), "hi": c.get("hi"), "se": c.get("se"),
                "n": c["judged"]}  # fmt: skip
    if metric == "allocation":
        a = arm.get("allocation")
        if not a:
            return None
        e = a["efficiency"]
        return {"share": e["share"], "lo": e.get("lo"), "hi": e.get("hi"), "se": e.get("se"), "n": a["calls"]}
    o = arm.get("occupancy")
    if not o or (o.get("share") or {}).get("median") is None:
        return None
    return {"share": o["share"]["median"], "lo": None, "hi": None, "se": None, "n": o["transcripts"]}


def change(new: dict[str, Any] | None, old: dict[str, Any] | None) -> dict[str, Any] | None:
    """new - old with its 95% interval, as the baseline comparison decides it; None when
    either point has no interval."""
    if new is None or old is None or new.get("se") is None or old.get("se") is None:
        return None
    d = stats.difference(_share(new), _share(old))
    return {"diff": d.diff, "lo": d.lo, "hi": d.hi, "beyond_noise": d.lo > 0 or d.hi < 0}


def _share(p: dict[str, Any]) -> stats.Share:
    return stats.Share(0, p["n"], 0, p["share"], p["lo"], p["hi"], float(p["se"]) ** 2, "")


def trend(documents: Sequence[dict[str, Any]], names: Sequence[str] | None = None) -> dict[str, Any]:
    """The ``trend`` section over ``documents`` (reports, oldest first; the last is the latest)."""
    names = list(names) if names is not None else labels(documents)
    runs = []
    latest = judged_with(documents[-1]) if documents else None
    for doc, label in zip(documents, names, strict=True):
        run = doc.get("run") or {}
        differ = options_differ(judged_with(doc), latest) if latest is not None else None
        runs.append({
            "label": label, "number": run.get("number"), "name": run.get("name"),
            "commit": run.get("commit"), "time": run.get("time"),
            "campaign": (doc.get("fingerprint") or {}).get("campaign"),
            "complete": (doc.get("coverage") or {}).get("complete") is True,
            # what this run was judged with otherwise than the latest (None: not recorded)
            "options_differ": None if differ is None else [d["option"] for d in differ],
        })  # fmt: skip
    graded = any(isinstance(doc.get("truth"), dict) for doc in documents)
    if graded:
        # Which truth file graded each run (by digest; None: none): only when one did.
        for entry, doc in zip(runs, documents, strict=True):
            t = doc.get("truth")
            entry["truth"] = t.get("digest") if isinstance(t, dict) else None
    metrics = (*METRICS, CORRECT) if graded else METRICS
    whole = [r["complete"] is True for r in runs]  # the runs that may be the one to beat
    arm_names = sorted({a for doc in documents for a in doc.get("arms", {})})
    arms: dict[str, Any] = {}
    for arm in arm_names:
        series: dict[str, Any] = {}
        for metric in metrics:
            points = [point(doc.get("arms", {}).get(arm), metric) for doc in documents]
            for i, p in enumerate(points):
                if p is not None:
                    before = _previous(points, i)
                    if metric == CORRECT and before is not None:
                        # Answers graded against other questions are no change of the tool's.
                        j = max(k for k in range(i) if points[k] is before)
                        before = before if runs[j]["truth"] == runs[i]["truth"] else None
                    p["change"] = change(p, before)
            series[metric] = points
        against = {m: _against_best(series[m], whole) for m in GATED}
        pooled = {m: _against_pooled(series[m], whole) for m in GATED}
        arms[arm] = {"points": series, "latest_vs_best": against, "latest_vs_pooled": pooled}
    return {"runs": runs, "arms": arms}


def _previous(points: list[dict[str, Any] | None], i: int) -> dict[str, Any] | None:
    return next((p for p in reversed(points[:i]) if p is not None), None)


def _against_best(points: list[dict[str, Any] | None], complete: Sequence[bool]) -> dict[str, Any] | None:
    """The latest run against the best earlier run (the highest point) of those that ran the
    whole campaign: a partial run (``-k``, a shard) is no run to beat, as no baseline is."""
    if len(points) < 2 or points[-1] is None:
        return None
    earlier = [(i, p) for i, p in enumerate(points[:-1]) if p is not None and complete[i]]
    if not earlier:
        return None
    best, p = max(earlier, key=lambda ip: (ip[1]["share"], ip[0]))
    c = change(points[-1], p)
    no_noise_test = {"diff": points[-1]["share"] - p["share"], "lo": None, "hi": None, "beyond_noise": None}
    return {"best": best, "best_share": p["share"], "latest": points[-1]["share"], **(c or no_noise_test)}


def _against_pooled(points: list[dict[str, Any] | None], complete: Sequence[bool]) -> dict[str, Any] | None:
    """The latest run against the earlier complete runs pooled (each weighted by its calls),
    what the trend gate decides on: the best of N earlier runs is biased upward (the
    highest of N noisy figures), so an unchanged tool would 'regress' against it; the
    pooled runs are an unbiased, and narrower, reference. Its standard error is that
    of the weighted mean of the runs' figures, taken as independent samples."""
    if len(points) < 2 or points[-1] is None or points[-1].get("se") is None:
        return None
    earlier = [(i, p) for i, p in enumerate(points[:-1])
               if p is not None and complete[i] and p.get("se") is not None and p["n"]]  # fmt: skip
    if not earlier:
        return None
    total = sum(p["n"] for _, p in earlier)
    share = sum(p["n"] * p["share"] for _, p in earlier) / total
    se_pooled = sum((p["n"] / total) ** 2 * float(p["se"]) ** 2 for _, p in earlier) ** 0.5
    latest = points[-1]
    diff = latest["share"] - share
    se = (float(latest["se"]) ** 2 + se_pooled**2) ** 0.5
    half = stats.Z95 * se
    return {"runs": [i for i, _ in earlier], "pooled_share": share, "latest": latest["share"],
            "diff": diff, "se": se, "lo": max(-1.0, diff - half), "hi": min(1.0, diff + half),
            "beyond_noise": diff - half > 0 or diff + half < 0}  # fmt: skip


TREND_GATE = "trend"


def trend_gates(section: dict[str, Any]) -> list[Outcome]:
    """``--explore-suff-trend-fail``: per arm, the latest run's sufficient share and
    allocation efficiency must not be worse, beyond noise, than the earlier runs pooled.
    Members of the run's family of checks (`gates.correct`)."""
    outcomes = []
    for arm, data in section["arms"].items():
        for metric in GATED:
            vs = (data.get("latest_vs_pooled") or {}).get(metric)
            if vs is None:
                # No earlier run with the figure, or none now: nothing to compare, which is no
                # failure (an arm without the tool has no share in any run).
                continue
            gate = Gate(metric, TREND_GATE, 0.0)
            runs = [section["runs"][i]["label"] for i in vs["runs"]]
            shown = ", ".join(runs) if len(runs) <= 4 else f"{runs[0]} ... {runs[-1]}"
            why = (f"the earlier run {shown} ({vs['pooled_share']:.3f})" if len(runs) == 1 else
                   f"the {len(runs)} earlier runs pooled ({shown}: {vs['pooled_share']:.3f})")  # fmt: skip
            o = Outcome(gate, arm, vs["diff"], 0, True, "bound", why=why, se=vs["se"], worse=-1)
            outcomes.append(decided_alone(o))
    return outcomes
