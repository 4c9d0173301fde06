"""Qwen Code chats (``~/.qwen/projects/<sanitized cwd>/chats/<sessionId>.jsonl``, 0.12+).

Qwen Code is a Gemini CLI fork whose chat records look like Claude Code's
session lines (``uuid``, ``parentUuid``, ``sessionId``, ``type``) but carry
Gemini contents: ``message: {role: "user" | "model", parts: [...]}``. Record
types:

- ``user``: the user's text parts;
- ``assistant``: ``text`` parts (``thought: true`` for reasoning) and
  ``functionCall`` parts, with ``usageMetadata.promptTokenCount`` (that
  request's whole prompt, cached part included) and ``contextWindowSize``;
- ``tool_result``: ``functionResponse`` parts and ``toolCallResult: {callId,
  status, resultDisplay}``;
- ``system``: ``ui_telemetry`` (``systemPayload.uiEvent``), ``chat_compression``
  (a compaction), ``slash_command``, ``at_command`` and others.

The calls of one ``assistant`` record are one message. Tools map onto the
contract's notions as Gemini CLI's do (``docs/rules.md``), plus ``todo_write``
(bookkeeping). The ``agent`` tool delegates to a subagent whose own steps are
only in the telemetry: ``qwen-code.tool_call`` events whose ``prompt_id`` is
``<sessionId>#<subagentName>-<suffix>#<n>``. They make the subagent's thread;
its calls carry no result text (a read is judged by its path, as always).
A resumed session goes on in the same file; a record read twice (same
``uuid``) counts once.
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

from ..events import Collector, compact_json
from . import claims
from .base import Replays, events, unlinked_child, unlinked_delegation
from .codex import timestamp_ms
from .gemini import _function_response, notion
from .tools import arguments as _args

#: Qwen's own names for the contract's notions (the rest are Gemini CLI's, see `gemini.notion`).
NOTIONS = {"todo_write": "TodoWrite", "exit_plan_mode": "TodoWrite"}
#: The delegation tool (``task`` in early releases).
DELEGATION = frozenset({"agent", "task"})
RECORD_TYPES, SYSTEM_SUBTYPES = claims.QWEN_RECORD_TYPES, claims.QWEN_SYSTEM_SUBTYPES
COMPRESSION = "chat_compression"
TOOL_CALL_EVENT = "qwen-code.tool_call"
#: ``<sessionId>#<subagentName>-<suffix>#<n>``; the main thread's is ``<sessionId>########<n>``.
_SUBAGENT_PROMPT = re.compile(r"#(?P<key>[^#]+)#(?P<n>\d+)$")


looks_like_qwen = claims.looks_like_qwen


def qwen_notion(name: str, args: Any, spec_names: tuple[str, str]) -> tuple[str, dict[str, Any]]:
    explore, family = spec_names
    if name in NOTIONS and explore not in name and family not in name:
        return NOTIONS[name], args if isinstance(args, dict) else {}
    return notion(name, args, spec_names)


def _parts(record: dict[str, Any]) -> list[Any]:
    message = record.get("message")
    parts = message.get("parts") if isinstance(message, dict) else None
    return parts if isinstance(parts, list) else []


def _int(value: Any) -> int | None:
    return value if type(value) is int else None


@dataclass
class _Delegation:
    id: str
    name: str  # the subagent's name (``subagent_type``, or the result's ``subagentName``)
    at: int  # how many telemetry events had been read when the call was made
    calls: int | None = None  # the tool calls its result's ``executionSummary`` counts


@dataclass
class _Child:
    key: str  # ``<subagentName>-<suffix>``
    thread: str
    at: int  # the index of its first telemetry event


class _Chat:
    def __init__(self, collector: Collector) -> None:
        self.c = collector
        self.spec_names = (collector.spec.explore, collector.spec.family)
        self.fresh = Replays().fresh
        self.turns = 0
        self.tokens: int | None = None
        #: (prompt tokens, of them cached) summed over the requests, where each says both;
        #: ``cache_unknown`` when one gave its prompt without the cached part
        self.cache: tuple[int, int] | None = None
        self.cache_unknown = False
        self.first_ms: float | None = None
        self.last_ms: float | None = None
        self.telemetry = 0  # tool_call events read
        self.delegations: list[_Delegation] = []
        self.children: dict[str, _Child] = {}

    def record(self, rec: dict[str, Any]) -> None:
        if not self.fresh(rec):
            return  # a resumed session's replay (D5, M9)
        ms = timestamp_ms(rec.get("timestamp"))
        if ms is not None:
            self.first_ms = ms if self.first_ms is None else min(self.first_ms, ms)
            self.last_ms = ms if self.last_ms is None else max(self.last_ms, ms)
        kind = rec.get("type")
        if kind == "assistant":
            self.assistant(rec)
        elif kind == "tool_result":
            self.tool_result(rec)
        elif kind == "user":
            texts = [p["text"] for p in _parts(rec) if isinstance(p, dict) and isinstance(p.get("text"), str)]
            for text in texts:
                self.c.timeline.add(len(text))
            self.c.asked(*texts)  # the chat's first user text: the prompt (the main thread's only)
        elif kind == "system":
            subtype = rec.get("subtype")
            if subtype == COMPRESSION:
                self.c.timeline.compact()
            elif subtype == "ui_telemetry":
                self.ui_event(rec.get("systemPayload"))

    def assistant(self, rec: dict[str, Any]) -> None:
        c = self.c
        timeline = c.timeline
        self.turns += 1
        usage = rec.get("usageMetadata")
        if isinstance(usage, dict):
            prompt = _int(usage.get("promptTokenCount"))
            if prompt is not None:
                timeline.request(prompt)
                cached = _int(usage.get("cachedContentTokenCount"))  # part of the prompt's count
                if cached is None or cached > prompt:
                    self.cache_unknown = True
                else:
                    read, hit = self.cache or (0, 0)
                    self.cache = (read + prompt, hit + cached)
            total = _int(usage.get("totalTokenCount"))
            if total is not None:
                self.tokens = (self.tokens or 0) + total
        window = _int(rec.get("contextWindowSize"))
        if window is not None and window > 0:
            timeline.window = window
        uuid = rec.get("uuid")
        msg = f"#qwen-{uuid}" if isinstance(uuid, str) and uuid else None
        said: list[str] = []
        for j, part in enumerate(_parts(rec)):
            if not isinstance(part, dict):
                continue
            text = part.get("text")
            if isinstance(text, str):
                timeline.add(len(text))
                if part.get("thought") is not True:
                    said.append(text)
                continue
            fc = part.get("functionCall")
            if not isinstance(fc, dict) or not isinstance(fc.get("name"), str):
                continue
            name: str = fc["name"]
            args = _args(fc.get("args"))
            timeline.add(len(name) + len(compact_json({} if args is None else args)))
            cid = fc.get("id")
            tid = cid if isinstance(cid, str) and cid else f"{msg or '#qwen'}#{j}"
            fresh = tid not in c.seen_tool_ids
            kind, data = qwen_notion(name, args, self.spec_names)
            c.tool_use("main", msg, {"id": tid, "name": kind, "input": data})
            if fresh and name in DELEGATION:
                sub = data.get("subagent_type") if isinstance(data, dict) else None
                self.delegations.append(_Delegation(tid, sub if isinstance(sub, str) else "", self.telemetry))
                c.delegations[tid] = (tid, 0)  # judged through its subagent's steps, once linked
        text = "".join(said)
        if text.strip():
            c.last_text = text  # the answer, when it is the last one

    def tool_result(self, rec: dict[str, Any]) -> None:
        status_of = rec.get("toolCallResult")
        status = status_of.get("status") if isinstance(status_of, dict) else None
        display = status_of.get("resultDisplay") if isinstance(status_of, dict) else None
        failed = status in ("error", "cancelled") or (
            isinstance(status_of, dict) and status_of.get("error") not in (None, "", {})
        )
        for part in _parts(rec):
            fr = part.get("functionResponse") if isinstance(part, dict) else None
            if not isinstance(fr, dict):
                continue
            rid = fr.get("id")
            if not isinstance(rid, str) or not rid:
                rid = status_of.get("callId") if isinstance(status_of, dict) else None
            if not isinstance(rid, str) or not rid:
                continue
            got = _function_response(fr)
            self.c.timeline.result(rid, len(got.metric))
            self.c.tool_result(
                {"tool_use_id": rid, "content": got.text, "is_error": got.error or failed}, metric=got.metric
            )
            if isinstance(display, dict):
                for d in self.delegations:
                    if d.id != rid:
                        continue
                    if not d.name and isinstance(display.get("subagentName"), str):
                        d.name = display["subagentName"]
                    summary = display.get("executionSummary")
                    if isinstance(summary, dict):
                        d.calls = _int(summary.get("totalToolCalls"))

    def ui_event(self, payload: Any) -> None:
        """A subagent's step, from the telemetry of its tool calls (the main thread's own
        calls are in the chat already: their events are not read)."""
        event = payload.get("uiEvent") if isinstance(payload, dict) else None
        if not isinstance(event, dict):
            return
        if event.get("event.name", event.get("name")) != TOOL_CALL_EVENT:
            return
        prompt = event.get("prompt_id")
        m = _SUBAGENT_PROMPT.search(prompt) if isinstance(prompt, str) else None
        name = event.get("function_name")
        if m is None or not isinstance(name, str):
            return
        n = self.telemetry
        self.telemetry += 1
        key = m["key"]
        child = self.children.get(key)
        if child is None:
            child = self.children[key] = _Child(key, f"qwen-subagent-{key}", n)
        response = event.get("response_id")
        msg = f"#qwen-{key}-{response}" if isinstance(response, str) and response else None
        call_id = event.get("call_id")
        tid = f"#qwen-{key}-{call_id if isinstance(call_id, str) and call_id else n}"
        kind, data = qwen_notion(name, _args(event.get("function_args")), self.spec_names)
        self.c.tool_use(child.thread, msg, {"id": tid, "name": kind, "input": data})
        if event.get("success") is False:
            self.c.tool_result({"tool_use_id": tid, "content": "", "is_error": True})

    def link(self) -> None:
        """Each ``agent`` call to the earliest subagent of its name whose steps start after it."""
        linked: set[str] = set()
        for d in self.delegations:
            if d.calls == 0:
                continue  # a subagent that ran no tool leaves no telemetry: moved on
            child = next(
                (
                    ch
                    for ch in self.children.values()
                    if ch.key not in linked
                    and ch.at >= d.at
                    and (not d.name or ch.key.startswith(d.name + "-"))
                ),
                None,
            )
            if child is None:
                unlinked_delegation(self.c, "agent", d.id, "telemetry")
                continue
            linked.add(child.key)
            self.c.rename_thread(child.thread, d.id)
        for ch in self.children.values():
            if ch.key not in linked:
                unlinked_child(self.c, f"{ch.key} (telemetry)", "agent")
        self.c.order_by_spawn()


def read(files: Sequence[str], collector: Collector, *, decode_all: bool = False) -> None:
    """Feed one Qwen Code chat and its later turns (``run-x.t2.jsonl``, ...) to ``collector``."""
    del decode_all  # every record is decoded: the main thread's all count for its window
    chat = _Chat(collector)
    for path in files:
        for rec in events(path, collector, decode_all=True, recognize=looks_like_qwen):
            chat.record(rec)
    if chat.delegations or chat.children:
        chat.link()
    duration = None
    if chat.first_ms is not None and chat.last_ms is not None:
        duration = round(chat.last_ms - chat.first_ms)
    collector.runs.append(
        {
            "subtype": None,
            "is_error": None,
            "num_turns": chat.turns,
            "duration_ms": duration,
            "total_cost_usd": None,
            "tokens": chat.tokens,
        }
    )
    if chat.cache is not None and not chat.cache_unknown:
        collector.cache = chat.cache
