"""Per-transcript records, per-arm aggregates, and the JSON report."""

from __future__ import annotations

import contextlib
import json
import os
import tempfile
from collections.abc import Iterable
from typing import Any

from . import stats
from .buckets import KEYS, zero_counts
from .campaign import Transcript
from .classify import Verdict
from .events import TOOL_KINDS, Collector

SCHEMA = "pytest-explore-suff/1"


def record(
    transcript: Transcript,
    *,
    status: str,
    reason: str = "",
    verdict: Verdict | None = None,
    collector: Collector | None = None,
) -> dict[str, Any]:
    """The JSON-ready record of one transcript (also what travels on its test report)."""
    v = (verdict or Verdict()).to_dict()
    warnings = [*transcript.notes, *(collector.warnings if collector else ())]
    return {
        "path": transcript.path,
        "files": list(transcript.rel_files),
        "arm": transcript.arm,
        "group": transcript.group,
        "run": transcript.run,
        "kind": transcript.kind,
        "status": status,
        "reason": reason,
        "flags": v["flags"],
        "counts": v["counts"],
        "answered": v["answered"],
        "errored": v["errored"],
        "concurrent": v["concurrent"],
        "lines": collector.lines if collector else 0,
        "corrupt_lines": collector.corrupt if collector else 0,
        "warnings": warnings,
        "runs": collector.runs if collector else [],
        "tools": collector.tools if collector else {},
        "calls": v["calls"],
    }


def shares(counts: dict[str, int], answered: int) -> dict[str, float]:
    return {k: (counts[k] / answered if answered else 0.0) for k in KEYS}


def _empty() -> dict[str, Any]:
    return {"transcripts": 0, "answered": 0, "counts": zero_counts(), "errored": 0, "concurrent": 0}


def _add(agg: dict[str, Any], rec: dict[str, Any]) -> None:
    agg["transcripts"] += 1
    agg["answered"] += rec["answered"]
    agg["errored"] += rec["errored"]
    agg["concurrent"] += rec["concurrent"]
    for k in KEYS:
        agg["counts"][k] += rec["counts"][k]


def aggregate(records: Iterable[dict[str, Any]]) -> tuple[dict[str, dict[str, Any]], dict[str, Any]]:
    """(per-arm aggregates sorted by arm, pooled) over the classified records.

    Skipped (raced, contaminated) and failed transcripts are not counted.
    """
    members: dict[str, list[dict[str, Any]]] = {}
    for rec in records:
        if rec["status"] == "classified":
            members.setdefault(rec["arm"], []).append(rec)
    arms = {arm: summarize(members[arm]) for arm in sorted(members)}
    pooled = summarize([rec for arm in sorted(members) for rec in members[arm]])
    return arms, pooled


def summarize(recs: list[dict[str, Any]]) -> dict[str, Any]:
    """Counts, shares, clustered 95% intervals and run figures over some transcripts."""
    agg = _empty()
    for rec in recs:
        _add(agg, rec)
    agg["shares"] = shares(agg["counts"], agg["answered"])
    agg["intervals"] = {k: stats.share(clusters(recs, k)).to_dict() for k in KEYS}
    agg["figures"] = figures(recs)
    return agg


def clusters(recs: Iterable[dict[str, Any]], bucket: str) -> list[tuple[int, int]]:
    """(calls in ``bucket``, answered calls) per transcript: the clusters of the intervals."""
    return [(rec["counts"][bucket], rec["answered"]) for rec in recs]


def figures(recs: list[dict[str, Any]]) -> dict[str, float | None]:
    """Medians over runs, as the reference harness's arm-comparison table shows them."""

    def total(rec: dict[str, Any], key: str) -> float | None:
        values = [r.get(key) for r in rec.get("runs", ())]
        nums = [v for v in values if isinstance(v, (int, float)) and not isinstance(v, bool)]
        return sum(nums) if nums else None

    out: dict[str, float | None] = {
        f"{kind}_calls": stats.median(rec.get("tools", {}).get(kind, 0) for rec in recs)
        for kind in TOOL_KINDS
    }
    out["turns"] = stats.median(total(rec, "num_turns") for rec in recs)
    out["duration_ms"] = stats.median(total(rec, "duration_ms") for rec in recs)
    out["cost_usd"] = stats.median(total(rec, "total_cost_usd") for rec in recs)
    return out


def dumps(document: dict[str, Any]) -> bytes:
    """The report's bytes: indented, UTF-8, deterministic for the same document."""
    try:
        import orjson
    except ImportError:  # pragma: no cover - orjson is a dependency
        return (json.dumps(document, indent=2, ensure_ascii=False) + "\n").encode("utf-8")
    # Ten times faster than json.dump on a 10,000-transcript report.
    return orjson.dumps(document, option=orjson.OPT_INDENT_2) + b"\n"


def _umask() -> int:
    mask = os.umask(0)  # the only way to read it is to set it
    os.umask(mask)
    return mask


def write_atomic(path: str, document: dict[str, Any]) -> None:
    """Write JSON so that readers see the old complete file or the new one, never half."""
    write_bytes_atomic(path, dumps(document))  # serialize first: a failure leaves the old file alone


def write_bytes_atomic(path: str, data: bytes) -> None:
    """Replace ``path`` with ``data`` in one step: the old complete file or the new one, never half."""
    directory = os.path.dirname(os.path.abspath(path))
    os.makedirs(directory, exist_ok=True)
    fd, tmp = tempfile.mkstemp(prefix=".explore-suff-", suffix=".tmp", dir=directory)
    try:
        # mkstemp makes the file 0600 and os.replace keeps that: give the report
        # the mode a plain open() would, so artifact uploaders can read it.
        os.fchmod(fd, 0o666 & ~_umask())
        with os.fdopen(fd, "wb") as fh:
            fh.write(data)
            fh.flush()
            os.fsync(fh.fileno())
        os.replace(tmp, path)
    except BaseException:
        with contextlib.suppress(OSError):
            os.unlink(tmp)
        raise
