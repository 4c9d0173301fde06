"""GitHub Copilot CLI sessions.

Three shapes:

- ``~/.copilot/session-state/<sessionId>/events.jsonl`` (1.0.x), and the older
  flat ``session-state/<sessionId>.jsonl`` with the same events: one event a
  line, ``{"type", "data", "id", "timestamp", "parentId"}``;
- ``history-session-state/session_<id>_<ms>.json``: one JSON document
  ``{sessionId, startTime, chatMessages: [...], timeline}`` whose chat messages
  are OpenAI-style (``tool_calls`` in assistant messages, ``role: "tool"``
  results with their ``tool_call_id``).

Events read: ``assistant.message`` (``content``, ``toolRequests``: the calls of
one message; ``parentToolCallId`` inside a subagent), ``tool.execution_start``
(an MCP tool's ``mcpServerName``/``mcpToolName``; a call no message listed),
``tool.execution_complete`` (``success``, ``result.content``, ``error``),
``user.message``, ``session.compaction_complete`` (a compaction) and
``session.shutdown`` (the window at the end, ``currentTokens``, less its fixed
part, ``systemTokens`` + ``toolDefinitionsTokens``; per-model usage). Every
other event (hooks, permissions, info, aborts) is not an action.

The log has no per-request token figures: occupancy is estimated from the
final window (M10), and says so (``estimated: true``).

Tools map onto the contract's notions (``docs/rules.md``): ``view`` reads a
file (a path with no extension lists a folder: a search), ``grep``/``rg``
are Greps, ``glob`` a Glob, ``bash``/``powershell`` shell commands, the
async-shell helpers (``read_bash``, ``write_bash``, ``stop_bash``,
``list_bash`` and their PowerShell twins), ``report_intent``,
``task_complete`` and ``read_agent`` bookkeeping, ``task`` a delegation
(its subagent's messages and calls carry ``parentToolCallId`` = the call's
id). An MCP tool is named ``mcp__<server>__<tool>``, as Claude Code names
it, so the judged tool and its family are matched as for every agent.
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from typing import Any

from ..events import Collector, compact_json, metric_text, result_text
from ..sources import logical_name
from . import claims
from .base import events
from .tools import arguments as _arguments
from .tools import transcript_document

EVENT_FAMILIES = claims.COPILOT_EVENT_FAMILIES
SHELLS = frozenset({"bash", "powershell"})
#: Copilot's own names for the contract's notions; every other name is kept as it is.
NOTIONS = {"grep": "Grep", "rg": "Grep", "glob": "Glob"} | {
    name: "TodoWrite"
    for name in (
        "report_intent", "task_complete", "read_agent", "update_todo",
        *(f"{verb}_{shell}" for verb in ("read", "write", "stop", "list") for shell in SHELLS),
    )
}  # fmt: skip
DELEGATION = "task"
#: File names with no extension that are files, not folders (``view Makefile`` reads it).
_PLAIN_FILES = frozenset(
    {"makefile", "dockerfile", "license", "readme", "gemfile", "rakefile", "procfile", "jenkinsfile",
     "vagrantfile", "brewfile", "justfile", "copying", "notice", "authors", "changelog", "containerfile"}
)  # fmt: skip
_HISTORY_KEYS = re.compile(rb'"chatMessages"\s*:')
_SESSION_ID = re.compile(rb'"sessionId"\s*:\s*"')


looks_like_event = claims.looks_like_copilot_event


def looks_like_history(head: bytes) -> bool:
    """A ``history-session-state`` document's first bytes: ``{"sessionId", ..., "chatMessages"}``."""
    return (
        head[:1] == b"{" and _HISTORY_KEYS.search(head) is not None and _SESSION_ID.search(head) is not None
    )


def _is_folder(path: str) -> bool:
    last = path.replace("\\", "/").rstrip("/").rpartition("/")[2]
    if path.endswith(("/", "\\")) or last in ("", ".", ".."):
        return True
    return "." not in last.lstrip(".") and last.lower() not in _PLAIN_FILES


def notion(name: str, args: Any, spec_names: tuple[str, str]) -> tuple[str, dict[str, Any]]:
    """(the name the rules see, the input they read) for one Copilot tool call."""
    data: dict[str, Any] = args if isinstance(args, dict) else {}
    explore, family = spec_names
    if explore in name or family in name:
        return name, data
    if name == "view":
        path = data.get("path")
        path = path if isinstance(path, str) else ""
        if path and _is_folder(path):
            return "Glob", {"path": path}  # a folder listing: still hunting
        return "Read", {"file_path": path}
    if name in SHELLS:
        command = data.get("command")
        return "Bash", {"command": command if isinstance(command, str) else ""}
    return NOTIONS.get(name, name), data


def mcp_name(server: Any, tool: Any, name: str) -> str:
    """An MCP tool's name as Claude Code writes it (``mcp__<server>__<tool>``), when the event
    names its server and tool; Copilot's ``<server>-<tool>`` otherwise."""
    if isinstance(server, str) and server and isinstance(tool, str) and tool:
        return f"mcp__{server}__{tool}"
    return name


def _result(data: dict[str, Any]) -> tuple[str | list[Any], bool]:
    """(content, is_error) of a ``tool.execution_complete``."""
    error = data.get("success") is False
    err = data.get("error")
    result = data.get("result")
    content: Any = result.get("content") if isinstance(result, dict) else result
    if content is None and isinstance(result, dict):
        content = result.get("detailedContent")
    if err not in (None, "", {}):
        error = True
        if content in (None, ""):
            message = err.get("message") if isinstance(err, dict) else err
            content = message if isinstance(message, str) else compact_json(err)
    if isinstance(content, (str, list)):
        return content, error
    return ("" if content is None else compact_json(content)), error


class _Session:
    def __init__(self, collector: Collector) -> None:
        self.c = collector
        self.spec_names = (collector.spec.explore, collector.spec.family)
        self.seen: set[str] = set()  # event ids (a segment written twice is read once)
        self.turns = 0
        self.final: tuple[int, int] | None = None  # the last shutdown's (currentTokens, overhead)
        self.processed: int | None = None
        #: (input tokens, of them cache reads) of every shutdown's per-model usage, where each
        #: says both; ``cache_unknown`` when one gave input tokens without its cache reads
        self.cache: tuple[int, int] | None = None
        self.cache_unknown = False
        self.start: str | None = None
        self.end: str | None = None
        self.main_ids: set[str] = set()  # calls of the main thread: their results fill its window

    def event(self, obj: dict[str, Any]) -> None:
        eid = obj.get("id")
        if isinstance(eid, str) and eid:
            if eid in self.seen:
                return
            self.seen.add(eid)
        stamp = obj.get("timestamp")
        if isinstance(stamp, str):
            self.start = self.start or stamp
            self.end = stamp
        kind = obj.get("type")
        data = obj["data"] if isinstance(obj.get("data"), dict) else {}
        if kind == "assistant.message":
            self.message(data)
        elif kind == "tool.execution_start":
            self.started(data)
        elif kind == "tool.execution_complete":
            self.completed(data)
        elif kind == "user.message":
            content = data.get("content")  # as typed (``transformedContent``: what the CLI added)
            if isinstance(content, str):
                self.c.timeline.add(len(content))
                if self.thread(data) == "main":
                    self.c.asked(content)
        elif kind == "session.compaction_complete":
            self.c.timeline.restart()
        elif kind == "session.shutdown":
            self.shutdown(data)

    @staticmethod
    def thread(data: dict[str, Any]) -> str:
        parent = data.get("parentToolCallId")
        return parent if isinstance(parent, str) and parent else "main"

    def call(self, thread: str, msg: str | None, tid: Any, name: str, args: Any) -> None:
        args = _arguments(args)
        if thread == "main":
            self.c.timeline.add(len(name) + len(compact_json({} if args is None else args)))
            if isinstance(tid, str):
                self.main_ids.add(tid)
        kind, data = notion(name, args, self.spec_names)
        fresh = isinstance(tid, str) and tid and tid not in self.c.seen_tool_ids
        self.c.tool_use(thread, msg, {"id": tid, "name": kind, "input": data})
        if fresh and name == DELEGATION:
            self.c.delegations[tid] = (tid, 0)  # its subagent's thread is keyed by the call's id

    def message(self, data: dict[str, Any]) -> None:
        thread = self.thread(data)
        main = thread == "main"
        content = data.get("content")
        text = content if isinstance(content, str) else ""
        if main:
            self.turns += 1
            self.c.timeline.add(len(text))
            if text.strip():
                self.c.last_text = text  # the answer, when it is the last one
        mid = data.get("messageId")
        msg = f"#copilot-{mid}" if isinstance(mid, str) and mid else None
        requests = data.get("toolRequests")
        if not isinstance(requests, list):
            return
        for request in requests:
            if isinstance(request, dict) and isinstance(request.get("name"), str):
                self.call(thread, msg, request.get("toolCallId"), request["name"], request.get("arguments"))

    def started(self, data: dict[str, Any]) -> None:
        tid, name = data.get("toolCallId"), data.get("toolName")
        if not isinstance(tid, str) or not tid or not isinstance(name, str):
            return
        full = mcp_name(data.get("mcpServerName"), data.get("mcpToolName"), name)
        if tid not in self.c.seen_tool_ids:  # a call no message listed: its own message
            self.call(self.thread(data), None, tid, full, data.get("arguments"))
            return
        if full != name:
            # The message named it ``<server>-<tool>``: the rules see MCP names as Claude Code's.
            for action in reversed(self.c.threads.get(self.thread(data), [])):
                if action.id == tid:
                    if self.spec_names[0] in full or self.spec_names[1] in full or action.name == name:
                        action.name = full
                    break

    def completed(self, data: dict[str, Any]) -> None:
        tid = data.get("toolCallId")
        if not isinstance(tid, str) or not tid:
            return
        content, error = _result(data)
        if tid in self.main_ids:
            self.c.timeline.result(tid, len(metric_text(content)))
        text = result_text(content)
        self.c.tool_result(
            {"tool_use_id": tid, "content": text, "is_error": error}, metric=metric_text(content)
        )

    def shutdown(self, data: dict[str, Any]) -> None:
        current = data.get("currentTokens")
        if type(current) is int:
            overhead = sum(
                v for k in ("systemTokens", "toolDefinitionsTokens") if type(v := data.get(k)) is int
            )
            self.final = (current, overhead)
        metrics = data.get("modelMetrics")
        if isinstance(metrics, dict):
            for model in metrics.values():
                usage = model.get("usage") if isinstance(model, dict) else None
                if isinstance(usage, dict):
                    n = sum(v for k in ("inputTokens", "outputTokens") if type(v := usage.get(k)) is int)
                    self.processed = (self.processed or 0) + n
                    # cache reads are part of the input tokens (the formats page)
                    read, hit = usage.get("inputTokens"), usage.get("cacheReadTokens")
                    if type(read) is int:
                        if type(hit) is int and hit <= read:
                            whole, cached = self.cache or (0, 0)
                            self.cache = (whole + read, cached + hit)
                        else:
                            self.cache_unknown = True


def _history(path: str, collector: Collector) -> None:
    """A ``history-session-state`` document: OpenAI-style chat messages."""
    doc = transcript_document(path, collector, "chatMessages", "Copilot CLI chatMessages")
    state = _Session(collector)
    timeline = collector.timeline
    for i, m in enumerate(doc["chatMessages"]):
        if not isinstance(m, dict):
            continue
        role, content = m.get("role"), m.get("content")
        text = content if isinstance(content, str) else result_text(content)
        if role == "assistant":
            state.turns += 1
            timeline.add(len(text))
            if text.strip():
                collector.last_text = text
            calls = m.get("tool_calls")
            for call in calls if isinstance(calls, list) else ():
                fn = call.get("function") if isinstance(call, dict) else None
                if isinstance(fn, dict) and isinstance(fn.get("name"), str):
                    state.call(
                        "main", f"#copilot-history-{i}", call.get("id"), fn["name"], fn.get("arguments")
                    )
        elif role == "tool":
            tid = m.get("tool_call_id")
            if isinstance(tid, str) and tid:
                timeline.result(tid, len(text))
                collector.tool_result({"tool_use_id": tid, "content": text, "is_error": False})
        elif role == "user":
            timeline.add(len(text))
            collector.asked(text)
    _run(collector, state)


def _run(collector: Collector, state: _Session) -> None:
    from .codex import timestamp_ms

    start, end = timestamp_ms(state.start), timestamp_ms(state.end)
    collector.runs.append(
        {
            "subtype": None,
            "is_error": None,
            "num_turns": state.turns,
            "duration_ms": round(end - start) if start is not None and end is not None else None,
            "total_cost_usd": None,
            "tokens": state.processed,
        }
    )


def read(files: Sequence[str], collector: Collector, *, decode_all: bool = False) -> None:
    """Feed one Copilot CLI session (its event log and later turns, or a history document)."""
    del decode_all  # every event is decoded: the main thread's all count for its window
    if logical_name(files[0]).endswith(".json"):
        _history(files[0], collector)
        return
    state = _Session(collector)
    for path in files:
        for obj in events(path, collector, decode_all=True, recognize=looks_like_event):
            state.event(obj)
    if state.final is not None:
        current, overhead = state.final
        collector.timeline.estimate(current, overhead, state.turns)
    collector.processed = state.processed
    if state.cache is not None and not state.cache_unknown:
        collector.cache = state.cache
    _run(collector, state)
