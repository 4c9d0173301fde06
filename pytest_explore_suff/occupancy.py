"""Residual context occupancy: the tokens each tool family's results still hold
in the main thread's window at the end, measured from the requests' own token
counts.

Implements residual context occupancy as ``docs/metrics.md`` states it. A reader feeds a
`Timeline` as it walks the main thread (requests with their prompt size,
characters added, compaction boundaries); `occupancy` turns it into the
figures. Plain library code: no pytest import.
"""

from __future__ import annotations

import math
from collections import deque
from collections.abc import Callable, Iterable, Mapping
from typing import Any

from . import DEFAULT_WINDOW as DEFAULT_WINDOW

FAMILIES = ("tool", "read", "search", "bash", "other")
FILE_ACCESS = ("read", "search", "bash")
FALLBACK_CPT = 3.0
#: a clean gap: more than this many characters added, at least this share of them tool output
CLEAN_CHARS = 500
CLEAN_TOOL_SHARE = 0.8
DISPERSION_TOOL_SHARE = 0.95
#: a clean gap whose ratio exceeds the lower median by this factor also shed content
SHED_FACTOR = 1.5
#: tool tokens over a gap's delta by more than max(this, EVICT_SHARE of them) were shed
EVICT_TOKENS = 200
EVICT_SHARE = 0.05


def js_round(x: float) -> int:
    """Half up, as the reference's ``Math.round`` (Python's round is half to even)."""
    return math.floor(x + 0.5)


class _Gap:
    """What was added between two requests."""

    __slots__ = ("chars", "compacted", "ctx", "results")

    def __init__(self) -> None:
        self.ctx = 0  # the prompt size of the request that closes the gap
        self.chars = 0  # every character added, tool output included
        self.compacted = False
        self.results: list[tuple[str, int]] = []  # (tool_use id, characters) of tool results

    def absorb(self, later: _Gap) -> None:
        self.chars += later.chars
        self.compacted = self.compacted or later.compacted
        self.results.extend(later.results)


class Timeline:
    """The main thread's requests and additions, in stream order.

    Gaps are closed as requests arrive, so what is held is one small record
    per request; a tool result remembers the id of its call, whose family is
    known only once every call has been seen (a result can precede its call).
    """

    __slots__ = (
        "_held", "_open", "base", "before_first", "compactions", "estimated", "gaps", "requests", "shed",
        "window",
    )  # fmt: skip

    def __init__(self) -> None:
        self.requests = 0
        self.base: int | None = None  # the first request's prompt
        self.gaps: list[_Gap] = []  # gaps[k-1]: between request k-1 and request k
        self._open = _Gap()  # additions since the last request
        self.compactions = 0
        self.window: int | None = None  # the log's own window size, when it says one
        #: tool results before the first request: in no gap, but counted in ``chars``
        self.before_first: list[tuple[str, int]] = []
        #: additions before a request whose prompt size is not known yet (`begin`)
        self._held: _Gap | None = None
        #: M10: (final context, its fixed overhead, model turns) of a log that gives the
        #: window only at the end; `restart` drops what a compaction removed
        self.estimated: tuple[int, int, int] | None = None
        self.shed: list[tuple[str, int]] = []  # tool results a compaction removed (M10)

    def request(self, ctx: int) -> None:
        if ctx <= 0:
            # No prompt is empty: a request that reports no context (cancelled before the
            # model answered, every count 0) is none; what came before and after it is one
            # gap, and the final context is the last request's that reported one.
            return
        if self.requests:
            gap = self._open
            gap.ctx = ctx
            self.gaps.append(gap)
        else:
            self.base = ctx
            self.before_first.extend(self._open.results)
        self._open = _Gap()
        self.requests += 1

    def begin(self) -> None:
        """A request here, whose prompt size the log gives later (`measured`): Codex writes
        a response's token count after the response. A request never measured is none:
        what came before it and after it are one gap."""
        if self._held is not None:
            self._held.absorb(self._open)
        else:
            self._held = self._open
        self._open = _Gap()

    def measured(self, ctx: int) -> None:
        """The prompt size of the request `begin` placed (or of one here, if none is open).
        A size of 0 reports no context: the request stays unmeasured (`request`)."""
        if ctx <= 0:
            return
        held, self._held = self._held, None
        if held is None:
            self.request(ctx)
            return
        after, self._open = self._open, held
        self.request(ctx)
        self._open = after

    def settle(self) -> None:
        """The end of the log: a request placed but never measured is none."""
        if self._held is not None:
            self._held.absorb(self._open)
            self._open, self._held = self._held, None

    def add(self, chars: int) -> None:
        self._open.chars += chars

    def result(self, tool_use_id: str, chars: int) -> None:
        self._open.chars += chars
        self._open.results.append((tool_use_id, chars))

    def compact(self) -> None:
        self.compactions += 1
        self._open.compacted = True

    def restart(self) -> None:
        """A compaction in a log with no per-request figures (M10): what was added before
        it left the window, and the estimate counts only what came after."""
        self.compactions += 1
        self.shed.extend(self._open.results)
        self._open = _Gap()
        self._open.compacted = True

    def estimate(self, final: int, overhead: int, turns: int) -> None:
        """The window at the end, its fixed part (system prompt and tool schemas) and how many
        model turns there were: the figures of a log without per-request ones (M10)."""
        self.estimated = (final, overhead, turns)

    @property
    def pending_results(self) -> list[tuple[str, int]]:
        """Tool results after the last request: they never entered a prompt."""
        return self._open.results

    @property
    def last_ctx(self) -> int:
        return self.gaps[-1].ctx if self.gaps else (self.base or 0)


#: Zero of each family, copied per transcript (a copy ~75 ns, dict.fromkeys of a tuple ~650).
_NO_CHARS = dict.fromkeys(FAMILIES, 0)
_NO_TOKENS = dict.fromkeys(FAMILIES, 0.0)


def _lower_median(values: list[float]) -> float:
    values.sort()
    return values[(len(values) - 1) // 2]


def occupancy(
    timeline: Timeline, family_of: Callable[[str], str], window: int = DEFAULT_WINDOW
) -> tuple[dict[str, Any] | None, str]:
    """(the transcript's occupancy figures, "") or (None, why not)."""
    timeline.settle()
    if not timeline.requests and timeline.estimated is not None:
        return _estimated(timeline, family_of, window), ""
    if not timeline.requests:
        return None, "no token counts in the log (no model request records its usage)"
    # With every tool result's characters and count by family, each result's family asked once.
    result_chars = _NO_CHARS.copy()
    result_count = _NO_CHARS.copy()
    _count(timeline.before_first, family_of, result_chars, result_count)
    # Per gap: delta, chars per family, compacted; and, as the gaps are read, what pass 1
    # reads of them (most transcripts have a gap or two: a pass of its own each cost more).
    gaps: list[tuple[int, dict[str, int], bool]] = []
    clean: list[tuple[int, int]] = []  # (delta, tool chars) of the gaps mostly tool output
    steady: list[tuple[int, int]] = []  # the same, of the gaps almost all tool output
    grown_d = grown_c = 0  # the deltas and chars of every uncompacted gap that grew
    prev = timeline.base or 0
    for g in timeline.gaps:
        delta = g.ctx - prev
        prev = g.ctx
        fam: dict[str, int] = {}
        tool_chars = 0
        for tid, chars in g.results:
            f = family_of(tid)
            fam[f] = fam.get(f, 0) + chars
            tool_chars += chars
            result_chars[f] += chars
            result_count[f] += 1
        gaps.append((delta, fam, g.compacted))
        c = g.chars
        if not g.compacted and delta > 0 and c > 0:
            grown_d += delta
            grown_c += c
            if c > CLEAN_CHARS:
                if tool_chars / c >= CLEAN_TOOL_SHARE:
                    clean.append((delta, tool_chars))
                if tool_chars / c >= DISPERSION_TOOL_SHARE:
                    steady.append((delta, tool_chars))
    _count(timeline.pending_results, family_of, result_chars, result_count)

    # Pass 1: characters per token, on gaps that are mostly tool output.
    sum_d = sum_c = 0
    if clean:
        low = _lower_median([tc / d for d, tc in clean])
        for d, tc in clean:
            if low > 0 and tc / d > low * SHED_FACTOR:
                continue  # the window also shed content in this gap
            sum_d += d
            sum_c += tc
    if sum_d == 0:  # every uncompacted gap that grew, then
        sum_d, sum_c = grown_d, grown_c
    calibrated = sum_d > 0
    cpt = sum_c / sum_d if calibrated else FALLBACK_CPT

    dispersion = _lower_median([abs(tc / cpt - d) / d for d, tc in steady]) if steady else None

    # Pass 2: residency, oldest evicted first.
    contributed = _NO_TOKENS.copy()
    queue: deque[list[Any]] = deque()  # [family, tokens], oldest first
    evicted = 0.0
    for delta, fam, compacted in gaps:
        if compacted:
            evicted += sum(q[1] for q in queue)
            queue.clear()
        tool_tokens = 0.0
        for f, chars in fam.items():
            tokens = chars / cpt
            tool_tokens += tokens
            contributed[f] += tokens
            queue.append([f, tokens])
        shortfall = tool_tokens - delta
        if not compacted and shortfall > max(EVICT_TOKENS, tool_tokens * EVICT_SHARE):
            while shortfall > 0 and queue:
                head = queue[0]
                if head[1] <= shortfall:
                    shortfall -= head[1]
                    evicted += head[1]
                    queue.popleft()
                else:
                    head[1] -= shortfall
                    evicted += shortfall
                    shortfall = 0
    residual = _NO_TOKENS.copy()
    for f, tokens in queue:
        residual[f] += tokens

    ctx_final = timeline.last_ctx
    file_access = sum(map(residual.__getitem__, FILE_ACCESS))
    retrieval = residual["tool"] + file_access
    win = timeline.window or window
    return {
        "ctx_final": ctx_final,
        "ctx_base": timeline.base or 0,
        "chars_per_token": cpt,
        "calibrated": calibrated,
        "dispersion": dispersion,
        "turns": timeline.requests,
        "compactions": timeline.compactions,
        "evicted": js_round(evicted),
        "window": win,
        "residual": _rounded(residual),
        "contributed": _rounded(contributed),
        "chars": result_chars,
        "results": result_count,
        "residual_file_access": js_round(file_access),
        "residual_retrieval": js_round(retrieval),
        "share": retrieval / ctx_final if ctx_final > 0 else None,
    }, ""


def _estimated(timeline: Timeline, family_of: Callable[[str], str], window: int) -> dict[str, Any]:
    """M10: the window is known only at the end. Each family's residual is its share of the
    characters in the window after the last compaction, times the final context less its
    fixed overhead; the characters per token are those two figures' ratio."""
    final, overhead, turns = timeline.estimated or (0, 0, 0)
    gap = timeline._open
    result_chars = _NO_CHARS.copy()
    result_count = _NO_CHARS.copy()
    _count(gap.results, family_of, result_chars, result_count)
    shed_chars = _NO_CHARS.copy()
    _count(timeline.shed, family_of, shed_chars, _NO_CHARS.copy())
    content = max(final - overhead, 0)
    calibrated = content > 0 and gap.chars > 0
    cpt = gap.chars / content if calibrated else FALLBACK_CPT
    residual = {f: result_chars[f] / cpt for f in FAMILIES}
    contributed = {f: (result_chars[f] + shed_chars[f]) / cpt for f in FAMILIES}
    file_access = sum(map(residual.__getitem__, FILE_ACCESS))
    retrieval = residual["tool"] + file_access
    for f in FAMILIES:  # what the compactions removed is counted among the results too
        result_chars[f] += shed_chars[f]
    result_count_all = result_count.copy()
    for tid, _ in timeline.shed:
        result_count_all[family_of(tid)] += 1
    return {
        "ctx_final": final,
        "ctx_base": overhead,
        "chars_per_token": cpt,
        "calibrated": calibrated,
        "dispersion": None,
        "turns": turns,
        "compactions": timeline.compactions,
        "evicted": js_round(sum(shed_chars.values()) / cpt),
        "window": timeline.window or window,
        "residual": _rounded(residual),
        "contributed": _rounded(contributed),
        "chars": result_chars,
        "results": result_count_all,
        "residual_file_access": js_round(file_access),
        "residual_retrieval": js_round(retrieval),
        "share": retrieval / final if final > 0 else None,
        "estimated": True,
    }


def _count(
    results: Iterable[tuple[str, int]],
    family_of: Callable[[str], str],
    chars: dict[str, int],
    count: dict[str, int],
) -> None:
    for tid, n in results:
        f = family_of(tid)
        chars[f] += n
        count[f] += 1


def _rounded(values: Mapping[str, float]) -> dict[str, int]:
    return {f: math.floor(values[f] + 0.5) for f in FAMILIES}  # js_round, called for each
