"""Google Gemini CLI sessions (``~/.gemini/tmp/<project-hash>/chats/``).

Three shapes:

- ``session-<time>-<id>.json``: one JSON document ``{sessionId, projectHash,
  startTime, lastUpdated, messages: [...]}`` (newer ones with ``kind``:
  ``main`` or ``subagent``). A ``gemini`` message carries its ``toolCalls``,
  each with its own ``result`` and ``status``;
- the older ``checkpoint-<tag>.json``: a bare list of ``{role, parts}``
  contents, ``functionCall`` parts in ``model`` contents and their
  ``functionResponse`` parts in the next ``user`` content;
- the newer JSONL form: a header line (the session's metadata), then message
  records (a message written again, with the same ``id``, replaces the
  earlier one: tool calls are filled in as they finish), ``{"$set": {...}}``
  records (a ``messages`` list there replaces the whole list) and
  ``{"$rewindTo": id}`` records (the list is cut before that message). The
  last state is what is judged.

A JSON document cannot be streamed line by line: it is read whole, and refused
(with a one-line reason) above `MAX_DOCUMENT` bytes.

Tools map onto the contract's notions (``docs/rules.md``): ``read_file`` and
``read_many_files`` are Reads, ``grep_search`` a Grep, ``glob`` and
``list_directory`` Globs, ``run_shell_command`` a Bash command,
``write_todos`` bookkeeping; every other name is kept as it is.
"""

from __future__ import annotations

import itertools
import json
import os
import re
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any, NamedTuple

from ..events import Collector, compact_json, metric_text, result_text, texts_of
from ..jsonl import Undecodable, decode
from ..sources import ArchiveError, logical_name, turns_of
from .base import (
    NotATranscript,
    TranscriptError,
    Unreadable,
    _why,
    events,
    unlinked_child,
    unlinked_delegation,
)
from .codex import timestamp_ms

#: The largest session document read (bytes). The whole document is held in
#: memory while it is decoded; real sessions are a few MB.
MAX_DOCUMENT = 256 << 20
READ_NAMES = frozenset({"read_file", "read_many_files"})
GREP_NAMES = frozenset({"grep_search", "search_file_content", "grep"})
GLOB_NAMES = frozenset({"glob", "list_directory", "ls"})
SHELL_NAMES = frozenset({"run_shell_command"})
#: Bookkeeping, transparent like TodoWrite (``update_topic`` only restates the agent's intent).
NOTIONS = {"write_todos": "TodoWrite", "update_topic": "TodoWrite"}
#: Delegation to a subagent, by name; any call whose output starts `SUBAGENT_OUTPUT` or
#: whose ``resultDisplay`` has ``isSubagentProgress`` is one too (D9).
DELEGATION = frozenset({"codebase_investigator", "delegate_to_agent", "invoke_agent"})
SUBAGENT_OUTPUT = "Subagent '"
#: Where a delegation's task is, in its arguments.
TASK_KEYS = ("objective", "prompt", "task", "query", "request")
#: ``chats/skill-extraction-<id>/``: a background agent's sessions, with no parent.
SKILL_EXTRACTION = "skill-extraction-"
#: Clock slack when a child's time span is matched to its call's (ms).
SLACK_MS = 2000
_WILDCARDS = frozenset("*?[{")


def looks_like_session(obj: Any) -> bool:
    """A session document, or the header line of the JSONL form."""
    return (
        isinstance(obj, dict)
        and isinstance(obj.get("sessionId"), str)
        and ("projectHash" in obj or isinstance(obj.get("messages"), list))
    )


_SESSION_ID = re.compile(rb'"sessionId"\s*:\s*"')
_SESSION_KEYS = re.compile(rb'"(?:messages|projectHash)"\s*:')
_CHECKPOINT = re.compile(rb'\[\s*\{\s*"(?:role|parts)"\s*:')


def looks_like_document(head: bytes) -> bool:
    """A ``.json`` file's first bytes are a session document (``{"sessionId": ...,
    "projectHash"/"messages": ...}``) or a checkpoint (a list of ``{role, parts}``)."""
    if head[:1] == b"{" and _SESSION_ID.search(head) and _SESSION_KEYS.search(head):
        return True
    return _CHECKPOINT.match(head) is not None and b'"parts"' in head


def looks_like_checkpoint(obj: Any) -> bool:
    return (
        isinstance(obj, list)
        and bool(obj)
        and all(isinstance(c, dict) and isinstance(c.get("parts"), list) and "role" in c for c in obj[:8])
    )


def _first(data: dict[str, Any], *keys: str) -> Any:
    return next((data[k] for k in keys if data.get(k) is not None), None)


def notion(name: str, args: Any, spec_names: tuple[str, str]) -> tuple[str, dict[str, Any]]:
    """(the name the rules see, the input they read) for one Gemini tool call."""
    data: dict[str, Any] = args if isinstance(args, dict) else {}
    explore, family = spec_names
    if explore in name or family in name:
        return name, data
    if name in READ_NAMES:
        if name == "read_many_files":
            paths = data.get("paths")
            if not isinstance(paths, list) or not paths:
                paths = data.get("include")
            first = paths[0] if isinstance(paths, list) and paths else None
            if isinstance(first, str) and any(ch in _WILDCARDS for ch in first):
                return "Glob", {"pattern": first}  # a pattern to expand: a search
            return "Read", {"file_path": first if isinstance(first, str) else ""}
        path = _first(data, "file_path", "absolute_path", "path")
        return "Read", {"file_path": path if isinstance(path, str) else ""}
    if name in GREP_NAMES:
        return "Grep", data
    if name in GLOB_NAMES:
        return "Glob", data
    if name in SHELL_NAMES:
        command = data.get("command")
        return "Bash", {"command": command if isinstance(command, str) else ""}
    return NOTIONS.get(name, name), data


class Response(NamedTuple):
    """A session tool call's result: its text for the verdicts, and for the metrics."""

    text: str
    error: bool
    metric: str  # an MCP content list counted as metrics.md's "Text of a result" says


def response_of(call: dict[str, Any]) -> Response | None:
    """A session tool call's result; None when it never got a result.

    The text is each ``functionResponse``'s ``response.output`` (or its
    ``error``, or its ``content`` blocks' text; else the response as JSON),
    plus any plain text parts. ``status`` ``error`` or ``cancelled``, or an
    ``error`` in a response, makes it an error.
    """
    status = call.get("status")
    result = call.get("result")
    error = status in ("error", "cancelled")
    if result is None or result == []:
        return Response("", True, "") if error else None
    texts: list[str] = []
    metrics: list[str] = []
    parts = result if isinstance(result, list) else [result]
    for part in parts:
        if isinstance(part, str):
            texts.append(part)
            metrics.append(part)
            continue
        if not isinstance(part, dict):
            continue
        fr = part.get("functionResponse")
        if isinstance(fr, dict):
            got = _function_response(fr)
            texts.append(got.text)
            metrics.append(got.metric)
            error = error or got.error
        elif isinstance(part.get("text"), str):
            texts.append(part["text"])
            metrics.append(part["text"])
    return Response("\n".join(t for t in texts if t), error, "\n".join(t for t in metrics if t))


# What ``run_shell_command`` answers: ``Command:``, ``Directory:``, ``Output:`` (the
# command's own, any number of lines), then ``Error:``, ``Exit Code:``, ``Signal:``, ...
_SHELL_EXIT = re.compile(r"\nExit Code: (-?\d+)(?:\n|$)")


def _failed_shell(output: str) -> bool:
    """A shell command's result whose exit code is not 0 (a failed CLI run is no
    contamination). The last ``Exit Code:`` line is the tool's: the output comes before it."""
    if not output.startswith("Command: "):
        return False
    codes = _SHELL_EXIT.findall(output, max(0, output.rfind("\nError: ")))
    return bool(codes) and int(codes[-1]) != 0


def _function_response(fr: dict[str, Any]) -> Response:
    response = fr.get("response")
    if not isinstance(response, dict):
        text = response if isinstance(response, str) else ""
        return Response(text, False, text)
    if "error" in response and response.get("error") not in (None, ""):
        err = response["error"]
        text = err if isinstance(err, str) else json.dumps(err, ensure_ascii=False)
        return Response(text, True, text)
    output = response.get("output")
    if isinstance(output, str):
        return Response(output, _failed_shell(output), output)
    content = response.get("content")
    if isinstance(content, list):
        # The verdicts join the blocks' texts, as a tool_result's; the metrics count them.
        return Response(result_text(content), response.get("isError") is True, metric_text(content))
    try:
        text = json.dumps(response, ensure_ascii=False)
    except (TypeError, ValueError, RecursionError):
        text = ""
    return Response(text, False, text)


@dataclass
class _Delegation:
    """A parent's call that handed a subagent work, and what links it to the child's file."""

    id: str
    name: str
    owner: str | None  # the session id of the file it is in
    agent_id: str | None
    task: str
    start: float | None  # the calling message's timestamp
    end: float | None  # by when the call had finished: the later of its timestamp and the next message's
    last: bool = False  # in the session's last message: its last update bounds the call too


@dataclass
class _Child:
    path: str
    thread: str
    sid: str | None
    folder: str  # the folder it sits in: its parent's session id (v0.37+)
    start: float | None
    end: float | None
    first_text: str


def is_delegation(call: dict[str, Any], text: str | None) -> bool:
    """A Gemini delegation, whatever the tool's name (D9)."""
    if call.get("name") in DELEGATION:
        return True
    display = call.get("resultDisplay")
    if isinstance(display, dict) and display.get("isSubagentProgress"):
        return True
    return text is not None and text.startswith(SUBAGENT_OUTPUT)


def _task(args: Any) -> str:
    data = args if isinstance(args, dict) else {}
    for key in TASK_KEYS:
        if isinstance(data.get(key), str) and data[key].strip():
            return str(data[key])
    return ""


def _agent_id(call: dict[str, Any]) -> str | None:
    for where in (call, call.get("resultDisplay"), call.get("args")):
        if isinstance(where, dict) and isinstance(where.get("agentId"), str) and where["agentId"]:
            return str(where["agentId"])
    return None


def _text_of(content: Any) -> str:
    if isinstance(content, str):
        return content
    if isinstance(content, list):
        return "\n".join(
            p if isinstance(p, str) else str(p.get("text"))
            for p in content
            if isinstance(p, str) or (isinstance(p, dict) and isinstance(p.get("text"), str))
        )
    return ""


def _texts(content: Any) -> list[str]:
    """The text parts of a user message (its string, or its parts' ``text``)."""
    if isinstance(content, str):
        return [content]
    if not isinstance(content, list):
        return []
    return [p if isinstance(p, str) else p["text"] for p in content
            if isinstance(p, str) or (isinstance(p, dict) and isinstance(p.get("text"), str))]  # fmt: skip


def _stamp_of(message: Any) -> float | None:
    return timestamp_ms(message.get("timestamp")) if isinstance(message, dict) else None


def _next_stamp(messages: list[Any], i: int) -> float | None:
    """The timestamp of the message after ``messages[i]`` (a delegation's end, when its
    call's own timestamp says nothing later)."""
    for n in itertools.islice(messages, i + 1, None):
        if isinstance(n, dict):
            return timestamp_ms(n.get("timestamp"))
    return None


def _count(value: Any) -> bool:
    """Whether a token figure is a count (a whole number, not a bool)."""
    return isinstance(value, int | float) and not isinstance(value, bool) and float(value).is_integer()


class _Session:
    def __init__(self, collector: Collector) -> None:
        self.c = collector
        self.spec_names = (collector.spec.explore, collector.spec.family)
        self.turns = 0
        self.tokens: int | None = None
        #: (input tokens, of them cached) summed over the messages, where each says both;
        #: ``cache_unknown`` when one gave input tokens without the cached part
        self.cache: tuple[int, int] | None = None
        self.cache_unknown = False
        self.thread = "main"
        self.owner: str | None = None  # the session id of the file being read
        self.prefix = ""  # message ids of a child file are its own
        self.delegations: list[_Delegation] = []

    def cached(self, prompt: Any, cached: Any) -> None:
        """A request's prompt tokens and, of them, those read from the cache (Gemini's
        ``cachedContentTokenCount``: the prompt count includes it)."""
        if not _count(prompt):
            return
        if not _count(cached) or cached > prompt:
            self.cache_unknown = True
            return
        read, hit = self.cache or (0, 0)
        self.cache = (read + int(prompt), hit + int(cached))

    def call(self, msg: str, call_id: Any, name: Any, args: Any) -> str | None:
        if not isinstance(name, str):
            return None
        kind, data = notion(name, args, self.spec_names)
        tid = call_id if isinstance(call_id, str) and call_id else None
        self.c.tool_use(self.thread, msg, {"id": tid, "name": kind, "input": data})
        return tid

    def result(self, tid: str, text: str, error: bool, metric: str) -> None:
        self.c.tool_result({"tool_use_id": tid, "content": text, "is_error": error}, metric=metric)

    def messages(self, messages: Any) -> None:
        if not isinstance(messages, list):
            raise NotATranscript("not a transcript: a Gemini session whose messages are not a list")
        for i, m in enumerate(messages):
            if isinstance(m, dict) and self.thread == "main":
                self.occupy(m)
                if m.get("type") == "user" and self.c.prompt is None:
                    self.c.asked(*_texts(m.get("content")))
            if not isinstance(m, dict) or m.get("type") != "gemini":
                continue
            self.turns += 1
            said = texts_of(m.get("content"))
            if said.strip() and self.thread == "main":
                self.c.last_text = said  # the answer, when it is the last one (metrics.md)
            tokens = m.get("tokens")
            total = tokens.get("total") if isinstance(tokens, dict) else None
            if isinstance(total, (int, float)) and not isinstance(total, bool):
                self.tokens = (self.tokens or 0) + int(total)
            if isinstance(tokens, dict):
                self.cached(tokens.get("input"), tokens.get("cached"))
            mid = m.get("id")
            msg = (
                f"#gemini-{self.prefix}{mid}"
                if isinstance(mid, str) and mid
                else f"#gemini-{self.prefix}message-{i}"
            )
            start = timestamp_ms(m.get("timestamp"))
            if not said.strip() and not m.get("thoughts") and i:
                # gemini-cli records a turn with neither text nor thoughts only when its calls
                # complete, stamped then: its calls were issued after the message before it.
                start = _stamp_of(messages[i - 1]) or start
            calls = m.get("toolCalls")
            if not isinstance(calls, list):
                continue
            for j, call in enumerate(calls):
                if not isinstance(call, dict):
                    continue
                call_id = call.get("id")
                if not isinstance(call_id, str) or not call_id:
                    call_id = f"{msg}#{j}"  # results travel with their call: any unique id will do
                fresh = call_id not in self.c.seen_tool_ids
                tid = self.call(msg, call_id, call.get("name"), call.get("args"))
                got = response_of(call)
                if tid is not None and got is not None:
                    self.result(tid, *got)
                if tid is not None and fresh and is_delegation(call, got.text if got else None):
                    # The call's own timestamp may be when it was issued: the span ends
                    # with the later of it and the next message (the call had finished by
                    # then), or, for the last message, the session's last update.
                    bounds = [t for t in (timestamp_ms(call.get("timestamp")), _next_stamp(messages, i)) if t]
                    end = max(bounds) if bounds else None
                    self.c.delegations[tid] = (tid, 0)  # judged through its child, once linked
                    name, task = str(call.get("name")), _task(call.get("args"))
                    last = i == len(messages) - 1
                    self.delegations.append(
                        _Delegation(tid, name, self.owner, _agent_id(call), task, start, end, last)
                    )

    def occupy(self, m: dict[str, Any]) -> None:
        """What a message adds to the main session's window: a ``gemini`` message is a request
        of ``tokens.input`` tokens, then its text, its calls, and their results."""
        timeline = self.c.timeline
        kind = m.get("type")
        if kind == "user":
            timeline.add(len(texts_of(m.get("content"))))
        if kind != "gemini":
            return
        tokens = m.get("tokens")
        prompt = tokens.get("input") if isinstance(tokens, dict) else None
        if isinstance(prompt, int) and not isinstance(prompt, bool):
            timeline.request(prompt)
        timeline.add(len(texts_of(m.get("content"))))
        calls = m.get("toolCalls")
        if not isinstance(calls, list):
            return
        answered = []
        for call in calls:
            if isinstance(call, dict):
                name = call.get("name")
                timeline.add(
                    len(compact_json(call.get("args") or {})) + (len(name) if isinstance(name, str) else 0)
                )
                answered.append(call)
        for call in answered:  # the results come back after the message: the next request's
            got = response_of(call)
            if got is not None and isinstance(call.get("id"), str):
                timeline.result(call["id"], len(got.metric))

    def checkpoint(self, contents: list[Any]) -> None:
        """A bare list of ``{role, parts}``: calls in model contents, responses in the next user content."""
        open_calls: list[tuple[str, str]] = []  # (name, id) waiting for a response, in order
        for i, content in enumerate(contents):
            if not isinstance(content, dict):
                continue
            parts = content.get("parts")
            if not isinstance(parts, list):
                continue
            role = content.get("role")
            if role == "user" and self.thread == "main" and self.c.prompt is None:
                self.c.asked(*_texts(parts))  # the first is the CLI's context: `events.injected`
            if role == "model":
                self.turns += 1
                said = texts_of(parts)
                if said.strip() and self.thread == "main":
                    self.c.last_text = said
                msg = f"#gemini-content-{i}"
                for j, part in enumerate(parts):
                    fc = part.get("functionCall") if isinstance(part, dict) else None
                    if not isinstance(fc, dict):
                        continue
                    call_id = fc.get("id") if isinstance(fc.get("id"), str) and fc.get("id") else f"{msg}#{j}"
                    tid = self.call(msg, call_id, fc.get("name"), fc.get("args"))
                    if tid is not None and fc.get("name") in DELEGATION:
                        self.c.delegations[tid] = (tid, 0)  # a checkpoint keeps no child: moved on
                        name = str(fc.get("name"))
                        self.delegations.append(_Delegation(tid, name, None, None, "", None, None))
                    if tid is not None:
                        open_calls.append((str(fc.get("name")), tid))
            else:
                for part in parts:
                    fr = part.get("functionResponse") if isinstance(part, dict) else None
                    if not isinstance(fr, dict):
                        continue
                    rid = fr.get("id")
                    match = next((c for c in open_calls if isinstance(rid, str) and c[1] == rid), None)
                    if match is None:  # no id: the earliest open call of that name
                        match = next((c for c in open_calls if c[0] == fr.get("name")), None)
                    if match is None:
                        continue
                    open_calls.remove(match)
                    self.result(match[1], *_function_response(fr))


def _load_document(path: str, collector: Collector) -> Any:
    name = os.path.basename(path)
    try:
        with collector.open_file(path) as fh:
            data = fh.read(MAX_DOCUMENT + 1)
    except (OSError, ArchiveError, EOFError) as exc:
        raise Unreadable(f"cannot read {name}: {_why(exc)}") from None
    if len(data) > MAX_DOCUMENT:
        raise Unreadable(f"{name}: a JSON document over {MAX_DOCUMENT >> 20} MB, not read (it is read whole)")
    collector.lines += data.count(b"\n") + (1 if data and not data.endswith(b"\n") else 0)
    try:
        return decode(data.strip())
    except Undecodable as exc:
        collector.corrupt += 1
        raise Unreadable(f"{name}: not valid JSON ({exc})") from None


def _replay(path: str, collector: Collector) -> tuple[list[Any], dict[str, Any]]:
    """The JSONL form: the message list as its last record leaves it, and the metadata."""
    messages: dict[str, Any] = {}  # by id, in first-written order
    meta: dict[str, Any] = {}
    anon = 0

    def recognize(obj: dict[str, Any]) -> bool:
        if looks_like_session(obj) or "$set" in obj:
            return True
        message = obj.get("type") in ("user", "gemini", "info") and "content" in obj
        return message and "id" in obj and "timestamp" in obj

    for obj in events(path, collector, decode_all=True, recognize=recognize):
        if "$set" in obj:
            update = obj["$set"]
            if isinstance(update, dict):
                if isinstance(update.get("messages"), list):
                    messages = {}
                    for m in update["messages"]:
                        if isinstance(m, dict):
                            anon += 1
                            mid = m.get("id")
                            messages[mid if isinstance(mid, str) else f"#{anon}"] = m
                meta.update({k: v for k, v in update.items() if k != "messages"})
        elif "$rewindTo" in obj:
            target = obj["$rewindTo"]
            keys = list(messages)
            cut = keys.index(target) if target in keys else 0
            messages = {k: messages[k] for k in keys[:cut]}
        elif isinstance(obj.get("type"), str) and "sessionId" not in obj:
            anon += 1
            mid = obj.get("id")
            messages[mid if isinstance(mid, str) else f"#{anon}"] = obj
        elif looks_like_session(obj):
            meta.update({k: v for k, v in obj.items() if k != "messages"})
            if isinstance(obj.get("messages"), list):
                messages = {str(i): m for i, m in enumerate(obj["messages"])}
    return list(messages.values()), meta


def _load(path: str, collector: Collector, state: _Session) -> dict[str, Any] | None:
    """Read one file into ``state`` (on its current thread); its metadata, None when it is
    not a session (then nothing is read)."""
    if logical_name(path).endswith(".jsonl"):
        recognized = collector.recognized
        collector.recognized = False
        messages, meta = _replay(path, collector)
        ok = collector.recognized
        collector.recognized = recognized or ok
        if not ok:
            return None
        state.owner = meta.get("sessionId") if isinstance(meta.get("sessionId"), str) else None
        state.messages(messages)
        meta = {**meta, "#first": _first_user(messages)}
        return meta
    doc = _load_document(path, collector)
    if looks_like_session(doc):
        state.owner = doc.get("sessionId")
        state.messages(doc.get("messages"))
        collector.recognized = True
        return {
            **{k: v for k, v in doc.items() if k != "messages"},
            "#first": _first_user(doc.get("messages")),
        }
    if looks_like_checkpoint(doc):
        state.checkpoint(doc)
        collector.recognized = True
        return {}
    return None


def _first_user(messages: Any) -> str:
    if not isinstance(messages, list):
        return ""
    for m in messages:
        if isinstance(m, dict) and m.get("type") == "user":
            return _text_of(m.get("content"))
    return ""


def _folder(path: str) -> str:
    parts = path.replace("\\", "/").split("/")
    return parts[-2] if len(parts) > 1 else ""


def _stem(path: str) -> str:
    name = os.path.basename(logical_name(path))
    return name.rsplit(".", 1)[0]


def _link(collector: Collector, delegations: list[_Delegation], children: list[_Child]) -> None:
    """D9: each delegation's child file, by the call's ``agentId``; else, among the children in
    the folder named after the calling session, the earliest not yet linked whose time span
    falls inside the call's and whose first user text holds the call's task."""
    linked: set[int] = set()
    pending = sorted(children, key=lambda ch: (ch.start is None, ch.start or 0.0))

    def free(ch: _Child) -> bool:
        return id(ch) not in linked

    for d in delegations:
        child = None
        if d.agent_id:
            child = next(
                (ch for ch in pending if free(ch) and d.agent_id in (ch.sid, _stem(ch.path))), None
            ) or next((ch for ch in pending if free(ch) and _stem(ch.path).endswith(d.agent_id)), None)
        if child is None and d.task.strip():
            task = d.task.strip()
            child = next(
                (
                    ch
                    for ch in pending
                    if free(ch)
                    and (d.owner is None or ch.folder == d.owner)
                    and _within(ch, d)
                    and task in ch.first_text
                ),
                None,
            )
        if child is None:
            unlinked_delegation(collector, d.name, d.id, "session")
            continue
        linked.add(id(child))
        collector.rename_thread(child.thread, d.id)
        child.thread = d.id
    for ch in pending:
        if free(ch):
            unlinked_child(collector, f"session {os.path.basename(ch.path)}", "delegating")


def _within(child: _Child, d: _Delegation) -> bool:
    """The child's time span falls inside the call's (a bound that is not known holds)."""
    if d.start is not None and child.start is not None and child.start < d.start - SLACK_MS:
        return False
    return d.end is None or child.end is None or child.end <= d.end + SLACK_MS


def read(files: Sequence[str], collector: Collector, *, decode_all: bool = False) -> None:
    """Feed one Gemini CLI session (a document, a checkpoint, or the JSONL form), its later
    turns (``run-x.t2.jsonl``, ...: the main session goes on) and its subagents' sessions
    (the rest of ``files``), to ``collector``."""
    del decode_all  # every record is decoded: there is nothing to skip
    state = _Session(collector)
    path = files[0]
    meta = _load(path, collector, state)
    if meta is None:
        return  # not recognized: load() says it is not a transcript
    start, end = timestamp_ms(meta.get("startTime")), timestamp_ms(meta.get("lastUpdated"))
    if meta.get("kind") == "subagent" and not _folder(path).startswith(SKILL_EXTRACTION):
        collector.warnings.append(
            "a Gemini subagent session (kind: subagent) with no parent session linked in the "
            "campaign: judged as its own transcript"
        )
    turns = 1 + turns_of(files)
    for turn_path in files[1:turns]:  # later turns of the run: the main session goes on
        turn_meta = _load(turn_path, collector, state)
        if turn_meta is not None:
            end = timestamp_ms(turn_meta.get("lastUpdated")) or end
    children: list[_Child] = []
    for n, child_path in enumerate(files[turns:], 1):
        state.thread = f"#child-{n}"
        state.prefix = f"{n}-"
        try:
            child_meta = _load(child_path, collector, state)
        except TranscriptError as exc:  # a broken child: the parent is still judged
            collector.warnings.append(f"{os.path.basename(child_path)}: {exc}; its subagent is not read")
            continue
        if child_meta is None:
            continue
        sid = child_meta.get("sessionId") if isinstance(child_meta.get("sessionId"), str) else None
        thread = f"agent-{sid or _stem(child_path)}"
        collector.rename_thread(state.thread, thread)
        children.append(
            _Child(
                child_path,
                thread,
                sid,
                _folder(child_path),
                timestamp_ms(child_meta.get("startTime")),
                timestamp_ms(child_meta.get("lastUpdated")),
                str(child_meta.get("#first") or ""),
            )
        )
    for d in state.delegations:
        if d.last and end is not None:
            d.end = max(d.end or end, end)
    if state.delegations or children:
        _link(collector, state.delegations, children)
        collector.order_by_spawn()
    collector.runs.append(
        {
            "subtype": None,
            "is_error": None,
            "num_turns": state.turns,
            "duration_ms": round(end - start) if start is not None and end is not None else None,
            "total_cost_usd": None,
            "tokens": state.tokens,
        }
    )
    if state.cache is not None and not state.cache_unknown:
        collector.cache = state.cache
