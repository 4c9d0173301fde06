"""OpenHands V0 sessions (``sessions/<id>/events/<n>.json``, one event per file, and
``metadata.json`` with the session's totals): one transcript per session folder.

An action is ``{id, source: "agent", action, args, tool_call_metadata: {function_name,
tool_call_id, model_response: {id, usage: {prompt_tokens, ...}}}}``; its observation
``{id, cause: <the action's id>, observation, content}`` (linked by ``cause``; an
``error`` observation is an error, an MCP result whose JSON says ``isError`` too).
The actions of one ``model_response`` are one message, and its ``usage.prompt_tokens``
is that request's window. ``finish`` carries the answer (``args.final_thought``);
``condensation`` is a compaction.

Actions: ``read`` reads ``path``, ``edit`` with ``command: "view"`` too; ``run``
runs ``command`` (the shell intent decides); ``call_tool_mcp`` an MCP tool
(``args.name``, ``args.arguments``; ``<server>_<tool>`` read as
``mcp__<server>__<tool>``); ``think`` and ``task_tracking`` are bookkeeping;
``delegate`` a delegation (its agent's steps are not this session's); every other
action keeps its name.
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from typing import Any

from ..events import Collector
from ..sources import logical_name
from . import claims
from .base import NotATranscript
from .tools import Feed, Tools, documents, event_folder, json_text, number

PATTERN = claims.OPENHANDS
TOOLS = Tools(
    read={"read": ("path",)},
    shell={"run": ("command",)},
    delegate=frozenset({"delegate"}),
    bookkeeping=frozenset({"think", "task_tracking"}),
)
#: Actions that are tool calls (any action with ``tool_call_metadata`` is one too).
TOOL_ACTIONS = frozenset({
    "run", "read", "edit", "write", "call_tool_mcp", "browse", "browse_interactive", "run_ipython",
    "delegate", "think", "task_tracking",
})  # fmt: skip
NOT_CALLS = frozenset({"message", "system", "recall", "change_agent_state", "null", "finish", "condensation"})
_EVENT = re.compile(rb'"source"\s*:')
_KIND = re.compile(rb'"(?:action|observation)"\s*:')
_NUMBER = re.compile(r"(\d+)\.json$")


#: An event file and ``metadata.json`` belong to their session folder.
group = event_folder


def looks_like_event(head: bytes) -> bool:
    """An event file's first bytes: ``{"id", "source", "action" | "observation", ...}``."""
    return head[:1] == b"{" and _EVENT.search(head) is not None and _KIND.search(head) is not None


def _mcp_result(content: str) -> tuple[Any, bool]:
    """An MCP observation's content: the JSON of the tool's result (its content blocks, and
    ``isError``), or a plain text."""
    if not content.startswith("{"):
        return content, False
    data = json_text(content)  # a lone surrogate escape as U+FFFD, as in every line
    if isinstance(data, dict) and isinstance(data.get("content"), list):
        return data["content"], data.get("isError") is True
    return content, False


class _Session:
    def __init__(self, collector: Collector) -> None:
        self.c = collector
        self.feed = Feed(collector, TOOLS)
        self.calls: dict[Any, str] = {}  # event id -> call id
        self.requests: set[str] = set()
        self.answer: str | None = None
        self.tokens: int | None = None

    def request(self, meta: Any) -> str | None:
        """The message id of an action's model response (a new request: its window)."""
        response = meta.get("model_response") if isinstance(meta, dict) else None
        if not isinstance(response, dict):
            return None
        rid = response.get("id")
        if not isinstance(rid, str) or not rid:
            return None
        if rid not in self.requests:
            self.requests.add(rid)
            self.feed.turns += 1
            usage = response.get("usage")
            prompt = number(usage.get("prompt_tokens")) if isinstance(usage, dict) else None
            if prompt is not None:
                self.c.timeline.request(prompt)
                out = number(usage.get("completion_tokens")) if isinstance(usage, dict) else None
                self.tokens = (self.tokens or 0) + prompt + (out or 0)
        return f"#openhands-{rid}"

    def event(self, ev: dict[str, Any]) -> None:
        if "cause" in ev and "observation" in ev:
            self.observation(ev)
        elif isinstance(ev.get("action"), str):
            self.action(ev)

    def action(self, ev: dict[str, Any]) -> None:
        kind: str = ev["action"]
        args: dict[str, Any] = ev["args"] if isinstance(ev.get("args"), dict) else {}
        meta = ev.get("tool_call_metadata")
        msg = self.request(meta)
        agent = ev.get("source") == "agent"
        if kind == "finish":
            thought = args.get("final_thought", args.get("thought"))
            if isinstance(thought, str):
                self.answer = thought
                self.feed.said(thought)
            return
        if kind == "condensation":
            self.c.timeline.compact()
            return
        if kind in NOT_CALLS or (kind not in TOOL_ACTIONS and not isinstance(meta, dict)):
            content = args.get("content")
            if kind == "message" and agent:
                self.feed.said(content)
            else:
                self.feed.added(content)
                if kind == "message" and ev.get("source") == "user" and isinstance(content, str):
                    self.c.asked(content)  # the session's first user message is its prompt
            return
        name: Any = kind
        data: Any = args
        if kind == "call_tool_mcp":
            name, data = args.get("name"), args.get("arguments")
        elif kind == "edit" and args.get("command") == "view":
            name = "read"
        tid = meta.get("tool_call_id") if isinstance(meta, dict) else None
        eid = ev.get("id")
        call = self.feed.call(tid if isinstance(tid, str) and tid else f"#openhands-event-{eid}", name, data,
                              message=msg)  # fmt: skip
        if call is not None and isinstance(eid, (int, str)):  # a damaged event's id: any JSON (unhashable)
            self.calls[eid] = call
        thought = args.get("thought")
        self.feed.added(thought)

    def observation(self, ev: dict[str, Any]) -> None:
        cause = ev["cause"]
        # A damaged event can carry any JSON as its cause: only an id can name an action.
        call = self.calls.get(cause) if isinstance(cause, (int, str)) else None
        content = ev.get("content")
        if call is None or not isinstance(content, str):
            self.feed.added(content)
            return
        kind = ev.get("observation")
        error = kind == "error"
        result: Any = content
        if kind == "mcp":
            result, failed = _mcp_result(content)
            error = error or failed
        extras = ev.get("extras")
        if isinstance(extras, dict) and type(extras.get("exit_code")) is int and extras["exit_code"] != 0:
            error = True
        self.feed.result(call, result, error=error)


def _order(path: str) -> int:
    m = _NUMBER.search(logical_name(path))
    return int(m.group(1)) if m else -1


def read(files: Sequence[str], collector: Collector, *, decode_all: bool = False) -> None:
    """Feed one OpenHands session folder (its event files) to ``collector``."""
    del decode_all  # each event is a document of its own
    events = sorted((f for f in files if "events" in f.replace("\\", "/").split("/")[-2:-1]), key=_order)
    if not events:
        raise NotATranscript("not a transcript: an OpenHands session folder with no event file")
    session = _Session(collector)
    for _, ev in documents(events, collector, "the event is skipped"):
        collector.recognized = True
        session.event(ev)
    if session.answer is not None:
        collector.last_text = session.answer
    collector.processed = session.tokens
    session.feed.run(session.tokens)
