"""Arm against arm, and this campaign against a saved baseline report."""

from __future__ import annotations

import json
from collections.abc import Sequence
from typing import Any

from . import stats
from .buckets import KEYS
from .gates import Gate, Outcome
from .report import SCHEMA, clusters

SUPPORTED_SCHEMAS = (SCHEMA,)
#: Arm names that mean "the thing we compare against".
REFERENCE_ARMS = frozenset({"baseline", "base", "old", "without", "headless-without", "control"})


class BaselineError(Exception):
    """A baseline report that cannot be used; ``str()`` says why in one line."""


def _by_group(recs: list[dict[str, Any]], bucket: str) -> dict[str, Sequence[tuple[int, int]]]:
    out: dict[str, list[tuple[int, int]]] = {}
    for rec in recs:
        out.setdefault(rec["group"], []).append((rec["counts"][bucket], rec["answered"]))
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


def compare_arms(records: list[dict[str, Any]], a: str, b: str) -> dict[str, Any]:
    """Each bucket's share in a and b and the difference a - b with its 95% interval.

    Paired by group (stratified) when both arms answered in the same groups.
    """
    ra, rb = _answering(records, a), _answering(records, b)
    paired = bool(ra) and {r["group"] for r in ra} == {r["group"] for r in rb}
    buckets: dict[str, Any] = {}
    for key in KEYS:
        diff = stats.paired_difference(_by_group(ra, key), _by_group(rb, key)) if paired else None
        if diff is None:
            diff = stats.difference(stats.share(clusters(ra, key)), stats.share(clusters(rb, key)))
        buckets[key] = diff.to_dict()
    return {"a": a, "b": b, "paired": paired, "n_a": sum(r["answered"] for r in ra),
            "n_b": sum(r["answered"] for r in rb), "buckets": buckets}  # fmt: skip


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
    return records


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
        buckets = {}
        for key in KEYS:
            d = stats.difference(stats.share(clusters(rn, key)), stats.share(clusters(ro, key)))
            buckets[key] = {"old": d.b, "new": d.a, "diff": d.diff, "lo": d.lo, "hi": d.hi}
        out[arm] = {"n_old": sum(r["answered"] for r in ro), "n_new": sum(r["answered"] for r in rn),
                    "buckets": buckets}  # fmt: skip
    return out


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
