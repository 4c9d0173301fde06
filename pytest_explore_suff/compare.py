"""Arm against arm, and this campaign against a saved baseline report."""

from __future__ import annotations

import json
from collections.abc import Sequence
from typing import Any

from . import stats
from .buckets import KEYS
from .gates import Gate, Outcome
from .report import (
    READABLE_SCHEMAS,
    AllocationColumns,
    Columns,
    arm_columns,
    brief_of,
    clusters,
    metric_summaries,
)
from .sources import DIGEST

SUPPORTED_SCHEMAS = READABLE_SCHEMAS
#: Arm names that mean "the thing we compare against".
REFERENCE_ARMS = frozenset({"baseline", "base", "old", "without", "headless-without", "control"})


class BaselineError(Exception):
    """A baseline report that cannot be used; ``str()`` says why in one line."""


def _by_group(groups: list[str], pairs: list[tuple[int, int]]) -> dict[str, Sequence[tuple[int, int]]]:
    out: dict[str, list[tuple[int, int]]] = {}
    for group, pair in zip(groups, pairs, strict=True):
        out.setdefault(group, []).append(pair)
    return dict(out)


def _answering(records: list[dict[str, Any]], arm: str) -> list[dict[str, Any]]:
    return [r for r in records if r["status"] == "classified" and r["arm"] == arm and r["answered"]]


def arm_pair(arms: dict[str, dict[str, Any]], chosen: Sequence[str] | None) -> tuple[str, str] | None:
    """The two arms to compare: the chosen ones, or the campaign's two arms when it has
    exactly two and both answered (an arm without the tool has no shares to compare)."""
    if chosen:
        return chosen[0], chosen[1]
    if len(arms) == 2 and all(agg["answered"] > 0 for agg in arms.values()):
        # The reference arm second, so the difference reads "new minus old".
        a, b = sorted(arms, key=lambda arm: arm.lower() in REFERENCE_ARMS)
        return a, b
    return None


def metric_pair(arms: dict[str, dict[str, Any]], chosen: Sequence[str] | None) -> tuple[str, str] | None:
    """The two arms the metrics compare: the chosen ones, or the campaign's two arms
    (an arm without the tool counts here: its reads are what the tool's responses
    are weighed against), the reference arm second."""
    if chosen:
        return chosen[0], chosen[1]
    if len(arms) == 2:
        a, b = sorted(arms, key=lambda arm: arm.lower() in REFERENCE_ARMS)
        return a, b
    return None


def _direction(x: float) -> str:
    return "higher" if x > 0 else "lower" if x < 0 else "equal"


def compare_metrics(records: list[dict[str, Any]], a: str, b: str) -> dict[str, Any]:
    """Arm a against arm b on the other two metrics: retrieval residual per group and on
    average (percent, with the direction in words), the fixed overhead, allocation."""
    arms = arm_columns(records)
    return compare_metric_columns(arms.get(a, Columns()), arms.get(b, Columns()), a, b)


def compare_metric_columns(ca: Columns, cb: Columns, a: str, b: str) -> dict[str, Any]:
    """`compare_metrics` of the two arms' columns (`report.arm_columns`)."""

    def read(c: Columns) -> tuple[dict[str, list[float]], list[Any], dict[str, Any] | None]:
        # One pass, each brief unpacked once: the retrieval residuals by group, the base
        # prompts (the median skips the transcripts without one), the allocation.
        by_group: dict[str, list[float]] = {}
        bases: list[Any] = []
        allocation = AllocationColumns()
        for rec in c.recs:
            brief = brief_of(rec)
            if brief[9] is not None:
                by_group.setdefault(rec["group"], []).append(brief[9])
            bases.append(brief[6])
            if brief[0] is not None:
                allocation.add(brief)
        return by_group, bases, allocation.summary()

    (by_a, bases_a, sa), (by_b, bases_b, sb) = read(ca), read(cb)
    groups: list[dict[str, Any]] = []
    for g in sorted(set(by_a) & set(by_b)):
        ma, mb = stats.median(by_a[g]), stats.median(by_b[g])
        assert ma is not None and mb is not None
        pct = (ma - mb) / mb * 100 if mb > 0 else None
        groups.append({"group": g, "a": ma, "b": mb, "pct": pct,
                       "direction": None if pct is None else _direction(pct)})  # fmt: skip
    pcts = [x["pct"] for x in groups if x["pct"] is not None]
    mean = sum(pcts) / len(pcts) if pcts else None
    interval = None
    if len(pcts) >= 2 and mean is not None:
        sd = (sum((x - mean) ** 2 for x in pcts) / (len(pcts) - 1)) ** 0.5
        half = stats.Z95 * sd / len(pcts) ** 0.5
        # A residual cannot fall by more than all of it: no group's change is below -100%.
        interval = {"lo": max(-100.0, mean - half), "hi": mean + half}
    agreeing = 0 if mean is None else sum(1 for x in pcts if _direction(x) == _direction(mean))
    base_a, base_b = stats.median(bases_a), stats.median(bases_b)
    residual = {
        "groups": groups,
        "mean_pct": mean,
        "interval": interval,
        "direction": None if mean is None else _direction(mean),
        "agreeing": agreeing,
        "compared": len(pcts),
        "fixed_overhead": None if base_a is None or base_b is None else base_a - base_b,
    }
    allocation = None
    if sa is not None and sb is not None:
        ea, eb = sa["efficiency"], sb["efficiency"]
        d = ea["share"] - eb["share"]
        half = stats.Z95 * (ea["se"] ** 2 + eb["se"] ** 2) ** 0.5
        allocation = {"a": ea["share"], "b": eb["share"], "diff": d,
                      "lo": max(-1.0, d - half), "hi": min(1.0, d + half)}  # fmt: skip
    return {"a": a, "b": b, "residual": residual, "allocation": allocation}


def compare_arms(records: list[dict[str, Any]], a: str, b: str) -> dict[str, Any]:
    """Each bucket's share in a and b and the difference a - b with its 95% interval.

    Paired by group (stratified) when both arms answered in the same groups.
    """
    arms = arm_columns(records)
    return compare_arm_columns(arms.get(a, Columns()), arms.get(b, Columns()), a, b)


def compare_arm_columns(ca: Columns, cb: Columns, a: str, b: str) -> dict[str, Any]:
    """`compare_arms` of the two arms' columns (`report.arm_columns`)."""
    ra, rb = ca.where_answered(), cb.where_answered()
    groups_a, groups_b = [r["group"] for r in ra.recs], [r["group"] for r in rb.recs]
    paired = bool(ra.answered) and set(groups_a) == set(groups_b)
    buckets: dict[str, Any] = {}
    for key in KEYS:
        diff = None
        if paired:
            diff = stats.paired_difference(
                _by_group(groups_a, ra.clusters(key)), _by_group(groups_b, rb.clusters(key))
            )
        if diff is None:
            diff = stats.difference(stats.share(ra.clusters(key)), stats.share(rb.clusters(key)))
        buckets[key] = diff.to_dict()
    return {"a": a, "b": b, "paired": paired, "n_a": sum(ra.answered), "n_b": sum(rb.answered),
            "buckets": buckets}  # fmt: skip


def load_baseline(path: str) -> list[dict[str, Any]]:
    """The transcript records of a saved report; raises BaselineError."""
    try:
        with open(path, encoding="utf-8") as fh:
            doc = json.load(fh)
    except FileNotFoundError:
        raise BaselineError(f"baseline report {path} does not exist") from None
    except (OSError, ValueError, RecursionError) as exc:
        raise BaselineError(f"baseline report {path} is not readable JSON: {exc}") from None
    schema = doc.get("schema") if isinstance(doc, dict) else None
    if schema not in SUPPORTED_SCHEMAS:
        raise BaselineError(
            f"baseline report {path} has schema {schema!r}; this version reads {', '.join(SUPPORTED_SCHEMAS)}"
        )
    coverage = doc.get("coverage")
    if not isinstance(coverage, dict) or "complete" not in coverage:
        raise BaselineError(
            f"baseline report {path} does not say whether it covers its whole campaign "
            "(written by an older version): run that campaign again to make a baseline"
        )
    if coverage["complete"] is not True:
        why = coverage.get("why")
        because = f" ({'; '.join(map(str, why))})" if isinstance(why, list) and why else ""
        raise BaselineError(
            f"baseline report {path} covers only part of its campaign{because}: "
            "a baseline must come from a complete run"
        )
    records = doc.get("transcripts")
    if not isinstance(records, list):
        raise BaselineError(f"baseline report {path}: 'transcripts' must be a list")
    for i, rec in enumerate(records):
        where = f"baseline report {path}: transcripts[{i}]"
        if not isinstance(rec, dict):
            raise BaselineError(f"{where} must be an object")
        for key in ("arm", "group", "status"):
            if not isinstance(rec.get(key), str):
                raise BaselineError(f"{where}.{key}: expected a string, got {_shown(rec.get(key))}")
        _count(rec.get("answered"), f"{where}.answered")
        counts = rec.get("counts")
        if not isinstance(counts, dict):
            raise BaselineError(f"{where}.counts: expected an object, got {_shown(counts)}")
        for key in KEYS:
            _count(counts.get(key), f"{where}.counts.{key}")
        _metrics_shape(rec, where)
    fingerprint = doc.get("fingerprint")
    algorithm = fingerprint.get("algorithm") if isinstance(fingerprint, dict) else None
    if algorithm != DIGEST:
        # Digests of another algorithm, or none (schema 2), say nothing of these bytes.
        records = [{**rec, "digest": None} for rec in records]
    return records


def _metrics_shape(rec: dict[str, Any], where: str) -> None:
    """A baseline's metric figures, where it has them, are numbers (schema 1 has none)."""
    for key, fields in (("allocation", ("envelope", "used", "used_path")),
                        ("occupancy", ("ctx_final", "ctx_base", "residual_file_access",
                                       "residual_retrieval"))):  # fmt: skip
        value = rec.get(key)
        if value is None:
            continue
        if not isinstance(value, dict):
            raise BaselineError(f"{where}.{key}: expected an object or null, got {_shown(value)}")
        for name in fields:
            number = value.get(name)
            if not isinstance(number, (int, float)) or isinstance(number, bool):
                raise BaselineError(f"{where}.{key}.{name}: expected a number, got {_shown(number)}")
        if key == "allocation" and not isinstance(value.get("calls"), list):
            calls = _shown(value.get("calls"))
            raise BaselineError(f"{where}.allocation.calls: expected a list, got {calls}")
        if key == "occupancy":
            tool = value.get("residual", {}).get("tool") if isinstance(value.get("residual"), dict) else None
            if not isinstance(tool, (int, float)) or isinstance(tool, bool):
                raise BaselineError(f"{where}.occupancy.residual.tool: expected a number, got {_shown(tool)}")


def _shown(value: Any) -> str:
    return "nothing" if value is None else f"{type(value).__name__} {json.dumps(value)[:40]}"


def _count(value: Any, where: str) -> None:
    if not isinstance(value, int) or isinstance(value, bool) or value < 0:
        raise BaselineError(f"{where}: expected a whole number of calls, got {_shown(value)}")


def compare_baseline(old: list[dict[str, Any]], new: list[dict[str, Any]]) -> dict[str, Any]:
    """Per arm in either campaign, per bucket: old and new shares and new - old with its interval."""
    arms = {r["arm"] for r in (*old, *new) if r["status"] == "classified"}
    out: dict[str, Any] = {}
    for arm in sorted(arms):
        ro, rn = _answering(old, arm), _answering(new, arm)
        n_old, n_new = sum(r["answered"] for r in ro), sum(r["answered"] for r in rn)
        buckets: dict[str, dict[str, float | None]] = {}
        for key in KEYS:
            s_new, s_old = stats.share(clusters(rn, key)), stats.share(clusters(ro, key))
            if n_old and n_new:
                d = stats.difference(s_new, s_old)
                buckets[key] = {"old": d.b, "new": d.a, "diff": d.diff, "lo": d.lo, "hi": d.hi}
            else:  # an arm added or renamed: the side with no answered call has no share
                buckets[key] = {"old": s_old.p if n_old else None, "new": s_new.p if n_new else None,
                                "diff": None, "lo": None, "hi": None}  # fmt: skip
        out[arm] = {"n_old": n_old, "n_new": n_new, "buckets": buckets, **_metric_changes(old, new, arm)}
    return out


def _metric_changes(old: list[dict[str, Any]], new: list[dict[str, Any]], arm: str) -> dict[str, Any]:
    """The arm's pooled allocation efficiency and median retrieval residual, old and new
    (None where a side has no figure: a baseline of schema 1 has neither)."""
    ro = [r for r in old if r["status"] == "classified" and r["arm"] == arm]
    rn = [r for r in new if r["status"] == "classified" and r["arm"] == arm]
    (ao, oo), (an, on) = metric_summaries(ro), metric_summaries(rn)  # each brief unpacked once
    eff_old = ao["efficiency"]["share"] if ao else None
    eff_new = an["efficiency"]["share"] if an else None
    res_old = oo["residual_retrieval"]["median"] if oo else None
    res_new = on["residual_retrieval"]["median"] if on else None
    growth = None
    if res_old is not None and res_new is not None and res_old > 0:
        growth = (res_new - res_old) / res_old
    return {
        "allocation": {"old": eff_old, "new": eff_new,
                       "diff": None if eff_old is None or eff_new is None else eff_new - eff_old},
        "residual": {"old": res_old, "new": res_new, "growth": growth},
    }  # fmt: skip


def drop_gates(comparison: dict[str, Any], max_drop: float | None, on: str) -> list[Outcome]:
    """``--max-sufficient-drop``: fail when the sufficient share fell by more than max_drop.

    On the bound, the drop must exceed max_drop even at the interval's
    optimistic end (the drop is beyond noise).
    """
    if max_drop is None:
        return []
    gate = Gate("sufficient", "max_drop", max_drop)
    outcomes = []
    for arm, cmp in comparison.items():
        if not (cmp["n_old"] or cmp["n_new"]):
            continue  # an arm without the tool in both campaigns: no share to compare
        if not (cmp["n_old"] and cmp["n_new"]):
            # One side has no answered calls (an arm renamed, a baseline of another
            # campaign): the drop cannot be decided, and that is not a pass.
            outcomes.append(Outcome(gate, arm, None, cmp["n_new"], None, on))
            continue
        s = cmp["buckets"]["sufficient"]
        drop = s["old"] - s["new"]
        least_drop = -s["hi"]  # the smallest drop the interval allows
        compared = least_drop if on == "bound" else drop
        outcomes.append(Outcome(gate, arm, drop, cmp["n_new"], compared <= max_drop, on,
                                least_drop if on == "bound" else None))  # fmt: skip
    if not outcomes:  # neither campaign has an answered call: nothing was compared
        outcomes.append(Outcome(gate, None, None, 0, None, on))
    return outcomes
