"""OpenHands conversations in the software-agent-sdk's layout: a conversation folder with
``base_state.json`` (the agent, and ``stats.usage_to_metrics``: each LLM's
``token_usages``, one per completion, with its ``response_id`` and ``prompt_tokens``)
and ``events/event-<index>-<event id>.json``, one event a file, the index giving the
order. One transcript per conversation folder.

Events carry ``kind`` (the event's class): ``ActionEvent`` (``tool_name``,
``tool_call_id``, ``tool_call: {name, arguments}`` with the model's arguments as a JSON
string, ``action`` the parsed action, ``thought`` text blocks, ``llm_response_id``: the
actions of one response are one message), ``ObservationEvent`` (``tool_call_id``,
``observation: {content: [text blocks], is_error}``), ``AgentErrorEvent`` and
``UserRejectObservation`` (a call's error), ``MessageEvent`` (``source``,
``llm_message: {role, content}``), ``Condensation`` (a compaction). A request's window
is the ``prompt_tokens`` of the token usage whose ``response_id`` is the response's.
The answer is ``finish``'s ``message``, else the agent's last message.

Tools: ``file_editor`` (and the older ``str_replace_editor``) with ``command: "view"``
reads ``path``; ``grep`` and ``glob``; ``terminal`` (older ``execute_bash``) runs
``command``; ``task_tracker`` and ``think`` are bookkeeping; ``delegate`` and ``task``
delegate (the subagent's steps are in a conversation of its own, not this one); MCP
tools keep their names.
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from typing import Any

from ..events import Collector, texts_of
from ..sources import logical_name
from . import claims
from .base import NotATranscript, TranscriptError
from .tools import Feed, Tools, arguments, documents, event_folder, number, read_document

PATTERN = claims.OPENHANDS_SDK
TOOLS = Tools(
    read={"read": ("path",)},
    grep=frozenset({"grep"}),
    glob=frozenset({"glob"}),
    shell={"terminal": ("command",), "execute_bash": ("command",), "bash": ("command",)},
    delegate=frozenset({"delegate", "task"}),
    bookkeeping=frozenset({"task_tracker", "think"}),
)
EDITORS = frozenset({"file_editor", "str_replace_editor"})
_HEAD = re.compile(
    rb'"kind"\s*:\s*"(?:ActionEvent|ObservationEvent|MessageEvent|SystemPromptEvent|AgentErrorEvent'
    rb'|UserRejectObservation|Condensation|CondensationSummaryEvent|ConversationStateUpdateEvent)"'
)
_STATE = re.compile(rb'"(?:execution_status|usage_to_metrics)"\s*:')
_INDEX = re.compile(r"event-(\d+)-[^/]*\.json$")


#: An event file and ``base_state.json`` belong to their conversation folder.
group = event_folder


def looks_like_conversation(head: bytes) -> bool:
    """The first bytes of an SDK event, or of a conversation's ``base_state.json``."""
    return head[:1] == b"{" and (_HEAD.search(head) is not None or _STATE.search(head) is not None)


def _windows(state: Any) -> dict[str, tuple[int, int]]:
    """(prompt tokens, completion tokens) per response id, from every LLM's token usages."""
    out: dict[str, tuple[int, int]] = {}
    stats = state.get("stats") if isinstance(state, dict) else None
    usage = stats.get("usage_to_metrics") if isinstance(stats, dict) else None
    if not isinstance(usage, dict):
        return out
    for metrics in usage.values():
        usages = metrics.get("token_usages") if isinstance(metrics, dict) else None
        for u in usages if isinstance(usages, list) else ():
            if not isinstance(u, dict):
                continue
            rid, prompt = u.get("response_id"), number(u.get("prompt_tokens"))
            if isinstance(rid, str) and rid and prompt is not None:
                out.setdefault(rid, (prompt, number(u.get("completion_tokens")) or 0))
    return out


class _Conversation:
    def __init__(self, collector: Collector, windows: dict[str, tuple[int, int]]) -> None:
        self.c = collector
        self.feed = Feed(collector, TOOLS)
        self.windows = windows
        self.responses: set[str] = set()
        self.answer: str | None = None
        self.tokens: int | None = None

    def response(self, rid: Any) -> str | None:
        """The message id of an event's model response (a new one: a request, its window)."""
        if not isinstance(rid, str) or not rid:
            return None
        if rid not in self.responses:
            self.responses.add(rid)
            self.feed.turns += 1
            if (w := self.windows.get(rid)) is not None:
                self.c.timeline.request(w[0])
                self.tokens = (self.tokens or 0) + w[0] + w[1]
        return f"#openhands-{rid}"

    def event(self, ev: dict[str, Any]) -> None:
        kind = ev.get("kind")
        if kind == "ActionEvent":
            self.action(ev)
        elif kind == "ObservationEvent":
            obs = ev.get("observation")
            obs = obs if isinstance(obs, dict) else {}
            content = obs.get("content")
            if content is None or content == []:
                content = obs.get("output", obs.get("error", ""))
            error = obs.get("is_error") is True or (isinstance(obs.get("error"), str) and bool(obs["error"]))
            self.result(ev, content, error)
        elif kind == "AgentErrorEvent":
            self.result(ev, ev.get("error"), True)
        elif kind == "UserRejectObservation":
            self.result(ev, ev.get("rejection_reason"), True)
        elif kind == "MessageEvent":
            message = ev.get("llm_message")
            text = texts_of(message.get("content")) if isinstance(message, dict) else ""
            if ev.get("source") == "agent":
                self.response(ev.get("llm_response_id"))
                self.feed.said(text)
            else:
                self.feed.added(text)
                if ev.get("source") == "user" and isinstance(message, dict):
                    # Its text blocks, as the user wrote them (``extended_content``: what the
                    # agent added from its microagents, is apart)
                    content = message.get("content")
                    blocks = content if isinstance(content, list) else [content]
                    self.c.asked(*[b.get("text") if isinstance(b, dict) else b for b in blocks])
        elif kind == "Condensation":
            self.c.timeline.compact()

    def action(self, ev: dict[str, Any]) -> None:
        msg = self.response(ev.get("llm_response_id"))
        self.feed.added(texts_of(ev.get("thought")))
        name = ev.get("tool_name")
        call = ev.get("tool_call")
        args: Any = arguments(call.get("arguments")) if isinstance(call, dict) else None
        action = ev.get("action")
        if not isinstance(args, dict) or not args:  # the parsed action, less its class
            args = {k: v for k, v in action.items() if k != "kind"} if isinstance(action, dict) else {}
        if name == "finish":
            message = args.get("message")
            if isinstance(message, str):
                self.answer = message
                self.feed.said(message)
            return
        # a damaged event's name can be any JSON value (a list: unhashable)
        if isinstance(name, str) and name in EDITORS and args.get("command") == "view":
            name = "read"
        self.feed.call(ev.get("tool_call_id"), name, args, message=msg)

    def result(self, ev: dict[str, Any], content: Any, error: bool) -> None:
        tid = ev.get("tool_call_id")
        if isinstance(tid, str) and tid in self.feed.main_ids:  # not finish's
            self.feed.result(tid, content if content is not None else "", error=error)
        else:
            self.feed.added(texts_of(content))


def _order(path: str) -> int:
    m = _INDEX.search(logical_name(path))
    return int(m.group(1)) if m else -1


def read(files: Sequence[str], collector: Collector, *, decode_all: bool = False) -> None:
    """Feed one SDK conversation folder (``base_state.json`` and its event files) to ``collector``."""
    del decode_all  # each event is a document of its own
    names = [(f, logical_name(f).replace("\\", "/")) for f in files]
    states = [f for f, name in names if name.rsplit("/", 1)[-1] == "base_state.json"]
    events = sorted((f for f, name in names if "/events/" in f"/{name}"), key=_order)
    if not events:
        raise NotATranscript("not a transcript: an OpenHands conversation folder with no event file")
    windows: dict[str, tuple[int, int]] = {}
    if states:
        try:
            windows = _windows(read_document(states[0], collector))
        except TranscriptError as exc:
            collector.warnings.append(f"{exc}: no token figures")
    conversation = _Conversation(collector, windows)
    for _, ev in documents(events, collector, "the event is skipped"):
        collector.recognized = True
        conversation.event(ev)
    if conversation.answer is not None:
        collector.last_text = conversation.answer
    collector.processed = conversation.tokens
    conversation.feed.run(conversation.tokens)
