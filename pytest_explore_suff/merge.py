"""Partial reports (shards of one campaign: pytest-split, pytest-shard, ``-k`` subsets)
merged into the report of one run over the whole campaign.

The merge is the plugin's own aggregation: the parts' transcript records go
through a `store.RecordStore` and `document.build`, as a session's records do, so
the merged report is the one a single run would have written (its ``run`` section
aside). A transcript judged by two parts is counted once and named in the report's
``merge`` section; one judged by none stays in ``coverage.not_run``, as in a
partial run. Nothing here imports pytest.
"""

from __future__ import annotations

import os
from collections.abc import Sequence
from typing import Any

from .document import Coverage, Options


class MergeError(Exception):
    """Parts that cannot be merged; ``str()`` says why in one line."""


def _same(parts: Sequence[tuple[str, dict[str, Any]]], key: str, what: str) -> Any:
    first_path, first = parts[0]
    for path, doc in parts[1:]:
        if doc.get(key) != first.get(key):
            raise MergeError(
                f"{os.path.basename(path)} and {os.path.basename(first_path)} are not parts of one run: "
                f"their {what} differ"
            )
    return first.get(key)


def merged_truth(parts: Sequence[tuple[str, dict[str, Any]]]) -> Any:
    """The truth file the parts were graded against (their ``truth`` entry; None: none):
    parts graded against different truth files (or one without) are no parts of one run."""
    return (
        _same(parts, "truth", "truth files (the answers were graded against different ones)")
        if parts
        else None
    )


def merge_parts(
    parts: Sequence[tuple[str, dict[str, Any]]],
) -> tuple[str, Options, Coverage, list[dict[str, Any]], list[dict[str, str]], dict[str, Any] | None]:
    """(campaign, options, coverage, records, ignored, the ``merge`` section) of the whole run."""
    if not parts:
        raise MergeError("no parts to merge")
    campaign = _same(parts, "campaign", "campaigns")
    options = _same(parts, "options", "options (tool, family, marker, pattern, keep_excluded, gate_on)")
    ignored = _same(parts, "ignored", "ignored files (not the same campaign discovered)")
    collected = {p[1]["coverage"].get("collected") for p in parts}
    if len(collected) != 1:
        raise MergeError(
            f"the parts collected different numbers of transcripts ({sorted(map(str, collected))})"
        )
    if not isinstance(options, dict):
        raise MergeError("the parts have no 'options' (reports older than schema 2)")
    records: dict[str, dict[str, Any]] = {}
    judged_by: dict[str, list[str]] = {}
    for path, doc in parts:
        name = os.path.basename(path)
        for rec in doc["transcripts"]:
            if not isinstance(rec, dict) or not isinstance(rec.get("path"), str):
                raise MergeError(f"{name}: a transcript record without a path")
            p = rec["path"]
            if p in records and records[p] != rec:
                first = judged_by[p][0]
                raise MergeError(f"{p} was judged differently by {first} and {name}: not parts of one run")
            records.setdefault(p, rec)
            judged_by.setdefault(p, []).append(name)
    not_run: dict[str, str] = {}
    interrupted = False
    stopped = ""
    for _, doc in parts:
        cov = doc["coverage"]
        for entry in cov.get("not_run") or []:
            p = entry.get("path")
            if p in records:
                continue
            # Not run at all wins over deselected: some part meant to run it
            if entry.get("why") == "not run" or p not in not_run:
                not_run[p] = str(entry.get("why") or "not run")
            interrupted = interrupted or bool(cov.get("interrupted"))
            stopped = stopped or str(cov.get("stopped") or "")
    total = len(records) + len(not_run)
    if total != next(iter(collected)):
        raise MergeError(
            f"the parts account for {total} transcripts of the {next(iter(collected))} collected: "
            "not parts of one campaign"
        )
    coverage = Coverage(
        collected=total,
        ran=len(records),
        interrupted=interrupted,
        stopped=stopped,
        not_run=[{"path": p, "why": not_run[p]} for p in sorted(not_run)],
    )
    overlap = [{"path": p, "parts": names} for p, names in sorted(judged_by.items()) if len(names) > 1]
    section = {"overlap": overlap} if overlap else None
    return campaign, Options(**options), coverage, list(records.values()), ignored, section
