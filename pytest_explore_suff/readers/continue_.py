"""Continue sessions (``~/.continue/sessions/<sessionId>.json``; ``sessions.json`` beside
them is an index, not a session).

One JSON document: ``{sessionId, title, workspaceDirectory, history: [...]}``; each
history item is ``{message: {role, content, toolCalls: [{id, function: {name,
arguments}}]}, contextItems, toolCallStates: [{toolCallId, status, parsedArgs,
output}]}``. Results are ``role: "tool"`` messages with their ``toolCallId`` (else the
call state's ``output`` context items); a state ``errored`` or ``canceled`` is an error.
The calls of one assistant message are one message; the last assistant text is the
answer. The log has no token figures: occupancy is null, with the reason.

Tools: ``read_file``/``read_currently_open_file`` read, ``grep_search`` is a Grep,
``file_glob_search``/``ls``/``view_subdirectory``/``view_repo_map`` Globs,
``run_terminal_command`` a shell command, MCP tools by their names
(``<server>_<tool>`` read as ``mcp__<server>__<tool>``).
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from typing import Any

from ..events import Collector, texts_of
from .tools import Feed, Tools, transcript_document

TOOLS = Tools(
    read={"read_file": ("filepath", "path"), "read_currently_open_file": ("filepath",)},
    grep=frozenset({"grep_search"}),
    glob=frozenset({"file_glob_search", "ls", "view_subdirectory", "view_repo_map"}),
    shell={"run_terminal_command": ("command",)},
)
_KEYS = re.compile(rb'"(?:history|workspaceDirectory)"\s*:')
_SESSION_ID = re.compile(rb'"sessionId"\s*:\s*"')
FAILED = frozenset({"errored", "canceled", "cancelled"})


def looks_like_session(head: bytes) -> bool:
    """A Continue session's first bytes: ``{"sessionId", ..., "history" | "workspaceDirectory"}``."""
    return head[:1] == b"{" and _SESSION_ID.search(head) is not None and _KEYS.search(head) is not None


def _output(items: Any) -> str:
    """A call state's ``output``: context items, their ``content`` joined."""
    if isinstance(items, str):
        return items
    if not isinstance(items, list):
        return ""
    return "\n".join(i["content"] for i in items if isinstance(i, dict) and isinstance(i.get("content"), str))


def _failed(state: dict[str, Any]) -> bool:
    status = state.get("status")
    return isinstance(status, str) and status in FAILED  # a damaged log's list is no status (unhashable)


def read(files: Sequence[str], collector: Collector, *, decode_all: bool = False) -> None:
    """Feed one Continue session to ``collector``."""
    del decode_all  # a document is decoded whole
    doc = transcript_document(files[0], collector, "history", "Continue session history")
    feed = Feed(collector, TOOLS)
    states: dict[str, dict[str, Any]] = {}
    for item in doc["history"]:
        found = item.get("toolCallStates") if isinstance(item, dict) else None
        for state in found if isinstance(found, list) else ():  # a damaged log: any JSON value
            if isinstance(state, dict) and isinstance(state.get("toolCallId"), str):
                states[state["toolCallId"]] = state
    answered: set[str] = set()
    calls: list[str] = []
    for i, item in enumerate(doc["history"]):
        message = item.get("message") if isinstance(item, dict) else None
        if not isinstance(message, dict):
            continue
        role = message.get("role")
        text = texts_of(message.get("content"))
        if role == "assistant":
            feed.turns += 1
            feed.said(text)
            found = message.get("toolCalls")
            for call in found if isinstance(found, list) else ():  # a damaged log: any JSON value
                fn = call.get("function") if isinstance(call, dict) else None
                if isinstance(fn, dict):
                    tid = feed.call(
                        call.get("id"), fn.get("name"), fn.get("arguments"), message=f"#continue-{i}"
                    )
                    if tid is not None:
                        calls.append(tid)
        elif role == "tool":
            tid = message.get("toolCallId")
            if isinstance(tid, str):
                state = states.get(tid, {})
                feed.result(tid, text, error=_failed(state))
                answered.add(tid)
        else:
            feed.added(text)
            if role == "user":
                collector.asked(text)  # the session's first user text is its prompt
    for tid in calls:  # a call with no tool message: its state's output, if it has one
        state = states.get(tid)
        if tid not in answered and state is not None and ("output" in state or _failed(state)):
            feed.result(tid, _output(state.get("output")), error=_failed(state))
    feed.run()
