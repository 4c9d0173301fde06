"""The original harness's arm table, per transcript: run figures, duplicate residual,
abandonment and the cost split.

Computed from what the single pass left on the `Collector` and the verdict (M4): no
file is read again. The rules are written in ``docs/rules.md`` ("The arm table");
every figure a log does not hold is None (null), never 0. Plain library code: no
pytest import.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

from .allocation import spans
from .classify import Mark, Verdict, is_file_access, norm_path, same_file
from .events import END_OF_RUN, MODEL_USAGE, Collector

#: Read or search calls after the last judged call, with no retrieval call, that abandon the tool.
ABANDON_AFTER = 3
#: Not counted as tool calls: loading a deferred tool's schema is no work (the harness's rule).
NOT_A_CALL = frozenset({"ToolSearch"})


# -- duplicate residual ------------------------------------------------------------------------


def _fence(line: str) -> tuple[str, int] | None:
    """(fence character, its run's length) when ``line`` opens or closes a CommonMark code
    fence: at most three spaces, then three or more backticks or tildes."""
    stripped = line.lstrip(" ")
    if len(line) - len(stripped) > 3 or len(stripped) < 3:
        return None
    c = stripped[0]
    if c != "`" and c != "~":
        return None
    n = len(stripped) - len(stripped.lstrip(c))
    if n < 3:
        return None
    if c == "`" and "`" in stripped[n:]:
        return None  # an info string with a backtick: not a fence (CommonMark)
    return c, n


def source_lines(text: str, start: int, stop: int) -> list[str]:
    """The non-blank lines inside fenced code blocks of ``text[start:stop]`` (one section),
    as they stand (no newline). A block left open runs to the end of the section."""
    if text.find("```", start, stop) == -1 and text.find("~~~", start, stop) == -1:
        return []  # no fence at all: the usual prose section, not split into lines
    out: list[str] = []
    fence: tuple[str, int] | None = None
    for line in text[start:stop].split("\n"):
        mark = _fence(line)
        if fence is None:
            if mark is not None:
                fence = mark
            continue
        # a closing fence: the same character, at least as long, no info string
        if (
            mark is not None
            and mark[0] == fence[0]
            and mark[1] >= fence[1]
            and not line.strip(" \t").strip(fence[0])
        ):
            fence = None
            continue
        if line.strip():
            out.append(line)
    return out


class _Held:
    """The sections earlier calls returned of one file, and their stripped source lines."""

    __slots__ = ("_lines", "pending")

    def __init__(self) -> None:
        self.pending: list[tuple[str, int, int]] = []
        self._lines: set[str] = set()

    def lines(self) -> set[str]:
        for text, start, stop in self.pending:
            self._lines.update(line.rstrip() for line in source_lines(text, start, stop))
        self.pending.clear()
        return self._lines


def duplicate(
    responses: Sequence[tuple[str, str, list[Mark] | None]], marker: str
) -> tuple[dict[str, Any] | None, str]:
    """(the transcript's duplicate residual, "") or (None, why not).

    ``responses``: (call id, text, its markers) of the judged calls in stream order (M3).
    A source line is duplicate when a section of the same file in an earlier judged call
    held the same line, compared with trailing whitespace stripped; a call's duplicate
    characters are each such line's length plus one for its newline, its share those over
    the characters of all its sections.
    """
    # file -> the sections earlier calls returned of it: their lines are split only once a
    # later call returns the same file (most files are returned once: no line is split)
    seen: dict[str, _Held] = {}
    calls: list[dict[str, Any]] = []
    total = total_chars = total_lines = 0
    for cid, text, marks in responses:
        found = spans(text, marker, marks)
        if not found:
            continue
        envelope = chars = lines = 0
        for path, start, stop in found:
            envelope += stop - start
            p = norm_path(path)
            earlier = [held.lines() for f, held in seen.items() if same_file(f, p)] if seen else []
            if earlier:
                for line in source_lines(text, start, stop):
                    if any(line.rstrip() in held for held in earlier):
                        chars += len(line) + 1
                        lines += 1
        for path, start, stop in found:  # held for the calls after this one, not for itself
            p = norm_path(path)
            held = seen.get(p)
            if held is None:
                held = seen[p] = _Held()
            held.pending.append((text, start, stop))
        calls.append(
            {
                "id": cid,
                "envelope": envelope,
                "duplicate_chars": chars,
                "duplicate_lines": lines,
                "duplicate_share": chars / envelope if envelope else 0.0,
            }
        )
        total += envelope
        total_chars += chars
        total_lines += lines
    if not calls:
        return None, (
            "no answered explore call" if not responses else "no explore response has a returned-file section"
        )
    return {
        "envelope": total,
        "duplicate_chars": total_chars,
        "duplicate_lines": total_lines,
        "duplicate_share": total_chars / total if total else 0.0,
        "calls": calls,
    }, ""


# -- abandonment, and the main thread's last call ----------------------------------------------


def _main_places(collector: Collector) -> dict[str, int]:
    """Thread -> the place in the main thread of the call that (through its ancestors)
    spawned it; main's own calls are placed by their index."""
    main = collector.threads.get("main", ())
    places: dict[str, int] = {}
    todo: list[tuple[str, int]] = []
    for i, action in enumerate(main):
        for child in _spawned(action.id, collector):
            if child not in places:
                places[child] = i
                todo.append((child, i))
    while todo:
        thread, at = todo.pop()
        for action in collector.threads.get(thread, ()):
            for child in _spawned(action.id, collector):
                if child not in places:
                    places[child] = at
                    todo.append((child, at))
    return places


def _spawned(call_id: str, collector: Collector) -> list[str]:
    out = []
    if call_id in collector.threads and call_id != "main":
        out.append(call_id)
    d = collector.delegations.get(call_id)
    if d is not None and d[0] != "main":
        out.append(d[0])
    return out


def abandonment(verdict: Verdict, collector: Collector) -> dict[str, Any]:
    """``abandoned``: after the last judged call, three or more read or search calls of the
    main thread and no call of the judged tool (None: no judged call has a place in the main
    thread); ``abandon_file_access_after``, what it counted; ``last_call_retrieval``: the
    main thread's last tool call is one of the judged tool (None: no tool call)."""
    spec = collector.spec
    main = [
        a for a in collector.threads.get("main", ()) if a.name != END_OF_RUN and a.id not in collector.copied
    ]
    last = main[-1] if main else None
    out: dict[str, Any] = {
        "abandoned": None,
        "abandon_file_access_after": None,
        "last_call_retrieval": None if last is None else spec.explore in last.name,
    }
    if not verdict.calls:
        return out
    index = {a.id: i for i, a in enumerate(main)}
    places = _main_places(collector) if len(collector.threads) > 1 else {}
    at = -1
    for call in verdict.calls:
        place = index.get(call.id) if call.thread == "main" else places.get(call.thread)
        if place is not None and place > at:
            at = place
    if at < 0:
        return out
    file_access = retrieval = 0
    for action in main[at + 1 :]:
        if spec.explore in action.name:
            retrieval += 1
        elif is_file_access(action):
            file_access += 1
    out["abandoned"] = file_access >= ABANDON_AFTER and retrieval == 0
    out["abandon_file_access_after"] = file_access
    return out


# -- run figures ---------------------------------------------------------------------------


def _success(runs: Sequence[Mapping[str, Any]]) -> bool | None:
    """Every run ended ``success`` and none says ``is_error`` (None: no run says either)."""
    said = False
    for r in runs:
        subtype, error = r.get("subtype"), r.get("is_error")
        if isinstance(subtype, str):
            said = True
            if subtype != "success":
                return False
        if isinstance(error, bool):
            said = True
            if error:
                return False
    return True if said else None


def _sum(values: list[Any]) -> Any:
    nums = [v for v in values if isinstance(v, int | float) and not isinstance(v, bool)]
    return sum(nums) if nums else None


def run_figures(collector: Collector) -> dict[str, Any]:
    """The record's ``run_figures``: what the harness's arm table reads of one run."""
    tools = collector.tools
    runs = collector.runs
    duration = _sum([r.get("duration_ms") for r in runs])
    cli_returned = sum(
        1 for i in collector.cli_ids if (r := collector.results.get(i)) is not None and not r.is_error
    )
    errored = 0
    explore = collector.spec.explore
    for actions in collector.threads.values():
        for a in actions:
            if explore in a.name and a.id not in collector.copied:
                r = collector.results.get(a.id)
                if r is not None and r.is_error:
                    errored += 1
    tokens = collector.processed if collector.processed is not None else _sum([r.get("tokens") for r in runs])
    return {
        "success": _success(runs),
        "duration_s": None if duration is None else duration / 1000,
        "tool_calls": sum(tools.values()) - collector.not_calls,
        "read": tools["read"],
        "search": tools["search"],
        "bash": tools["bash"],
        "retrieval": tools["explore"],
        "cli_calls": len(collector.cli_ids),
        "cli_returned": cli_returned,
        "errored_retrieval": errored,
        "tokens_processed": tokens,
    }


# -- cost split ------------------------------------------------------------------------------


def cost(collector: Collector) -> dict[str, Any]:
    """The record's ``cost``: the run's cost, split between the main thread and the
    subagents where the log says which model served which, per model (Claude Code's
    ``result.modelUsage``), the tokens each side's requests processed, and the share of
    input tokens that were cache reads."""
    total = _sum([r.get("total_cost_usd") for r in collector.runs])
    usage = collector.usage  # side -> [input, cache read, cache creation, output] of its requests
    models = collector.models  # side -> the models its requests named
    by_model = None
    if collector.model_usage:
        by_model = {
            model: {key: figures.get(key) for _, key in MODEL_USAGE}
            for model, figures in sorted(collector.model_usage.items())
        }
    main_usd = subagents_usd = None
    subagent_requests = "subagents" in usage
    if total is not None and not subagent_requests:
        main_usd, subagents_usd = total, 0.0
    elif by_model is not None:
        main_only = models.get("main", set()) - models.get("subagents", set())
        sub_only = models.get("subagents", set()) - models.get("main", set())
        named = set(by_model)
        # Exact only when every model's cost belongs to one side.
        if named <= main_only | sub_only:
            main_usd = _sum([by_model[m]["cost_usd"] for m in named & main_only]) or 0.0
            subagents_usd = _sum([by_model[m]["cost_usd"] for m in named & sub_only]) or 0.0
    tokens = {side: sum(u) for side, u in usage.items()}
    input_tokens = cache_read = None
    if usage:
        input_tokens = sum(u[0] + u[1] + u[2] for u in usage.values())
        cache_read = sum(u[1] for u in usage.values())
    elif by_model is not None:
        ins = [
            _sum([f.get("input_tokens"), f.get("cache_read_tokens"), f.get("cache_creation_tokens")])
            for f in by_model.values()
        ]
        input_tokens = _sum(ins)
        cache_read = _sum([f.get("cache_read_tokens") for f in by_model.values()])
    elif collector.cache is not None:
        input_tokens, cache_read = collector.cache
    return {
        "total_usd": total,
        "main_usd": main_usd,
        "subagents_usd": subagents_usd,
        "by_model": by_model,
        "tokens_main": tokens.get("main", 0) if usage else None,
        "tokens_subagents": (tokens.get("subagents", 0) if usage else None),
        "input_tokens": input_tokens,
        "cache_read_tokens": cache_read,
        "cache_read_share": cache_read / input_tokens if input_tokens and cache_read is not None else None,
    }


def figures(
    verdict: Verdict, collector: Collector, responses: Sequence[tuple[str, str, list[Mark] | None]]
) -> dict[str, Any]:
    """The record's fields of the arm table: ``run_figures`` (with the abandonment flags),
    ``duplicate`` and its reason, ``cost``."""
    dup, why = duplicate(responses, collector.spec.marker)
    run = run_figures(collector)
    flags = abandonment(verdict, collector)
    return {
        "run_figures": run,
        "abandoned": flags["abandoned"],
        "abandon_file_access_after": flags["abandon_file_access_after"],
        "last_call_retrieval": flags["last_call_retrieval"],
        "duplicate": dup,
        "duplicate_reason": why,
        "cost": cost(collector),
    }
