"""The two other feedback metrics of one transcript, from the same single pass (M4).

`measure` reads what the readers left on the `Collector` (the judged explore
responses, the answer, the main thread's timeline) and the verdict's answered
calls. No file is read again. Plain library code: no pytest import.
"""

from __future__ import annotations

from typing import Any

from .allocation import Section, allocation
from .classify import Verdict
from .events import Collector
from .occupancy import DEFAULT_WINDOW, occupancy
from .runfigures import figures


def measure(
    verdict: Verdict,
    collector: Collector,
    window: int = DEFAULT_WINDOW,
    sections: dict[str, list[Section]] | None = None,
) -> dict[str, Any]:
    """The record's ``allocation``, ``occupancy`` and ``tokens_processed`` fields, with the
    reasons a metric could not be computed (M6: never silently zero). ``sections``: gets
    each judged response's returned-file sections, by call id (`allocation.sections`).
    And the arm table's fields (`runfigures.figures`)."""
    calls = verdict.calls
    if len(calls) > 1:  # most transcripts have one explore call or none
        order = collector.seen_tool_ids
        calls = sorted(calls, key=lambda c: order.get(c.id, len(order)))  # M3: stream order
    responses: list[tuple[str, str, list[tuple[int, int, str]] | None]] = []
    for call in calls:
        result = collector.results.get(call.id)
        if result is not None:
            whole = collector.metric_texts.get(call.id)
            # The classifier's markers are the text's, unless the metric text differs (several blocks).
            marks = collector.marks.get(call.id) if whole is None else None
            responses.append((call.id, result.text if whole is None else whole, marks))
    alloc, alloc_why = allocation(responses, collector.answer(), collector.spec.marker, sections)
    occ, occ_why = occupancy(collector.timeline, collector.family_of, window)
    return {
        "allocation": alloc,
        "allocation_reason": alloc_why,
        "occupancy": occ,
        "occupancy_reason": occ_why,
        "tokens_processed": collector.processed,
        **figures(verdict, collector, responses),
    }
