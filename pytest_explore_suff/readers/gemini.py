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

import json
import os
from collections.abc import Sequence
from typing import Any

from ..events import Collector
from ..jsonl import Undecodable, decode
from ..sources import ArchiveError, logical_name
from .base import NotATranscript, Unreadable, _why, events
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
#: Delegation to a subagent; its calls are not linked (see the docs): "other".
DELEGATION = frozenset({"codebase_investigator", "delegate_to_agent"})
_WILDCARDS = frozenset("*?[{")


def looks_like_session(obj: Any) -> bool:
    """A session document, or the header line of the JSONL form."""
    return (
        isinstance(obj, dict)
        and isinstance(obj.get("sessionId"), str)
        and ("projectHash" in obj or isinstance(obj.get("messages"), list))
    )


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


def response_of(call: dict[str, Any]) -> tuple[str, bool] | None:
    """(text, is_error) of a session tool call; None when it never got a result.

    The text is each ``functionResponse``'s ``response.output`` (or its
    ``error``, or its ``content`` blocks' text; else the response as JSON),
    plus any plain text parts. ``status`` ``error`` or ``cancelled``, or an
    ``error`` in a response, makes it an error.
    """
    status = call.get("status")
    result = call.get("result")
    error = status in ("error", "cancelled")
    if result is None or result == []:
        return ("", True) if error else None
    texts: list[str] = []
    parts = result if isinstance(result, list) else [result]
    for part in parts:
        if isinstance(part, str):
            texts.append(part)
            continue
        if not isinstance(part, dict):
            continue
        fr = part.get("functionResponse")
        if isinstance(fr, dict):
            text, err = _function_response(fr)
            texts.append(text)
            error = error or err
        elif isinstance(part.get("text"), str):
            texts.append(part["text"])
    return "\n".join(t for t in texts if t), error


def _function_response(fr: dict[str, Any]) -> tuple[str, bool]:
    response = fr.get("response")
    if not isinstance(response, dict):
        return (response, False) if isinstance(response, str) else ("", False)
    if "error" in response and response.get("error") not in (None, ""):
        err = response["error"]
        return (err if isinstance(err, str) else json.dumps(err, ensure_ascii=False)), True
    output = response.get("output")
    if isinstance(output, str):
        return output, False
    content = response.get("content")
    if isinstance(content, list):
        text = "\n".join(b["text"] for b in content if isinstance(b, dict) and isinstance(b.get("text"), str))
        return text, response.get("isError") is True
    try:
        return json.dumps(response, ensure_ascii=False), False
    except (TypeError, ValueError, RecursionError):
        return "", False


class _Session:
    def __init__(self, collector: Collector) -> None:
        self.c = collector
        self.spec_names = (collector.spec.explore, collector.spec.family)
        self.turns = 0
        self.tokens: int | None = None
        self.delegations: set[str] = set()

    def call(self, msg: str, call_id: Any, name: Any, args: Any) -> str | None:
        if not isinstance(name, str):
            return None
        kind, data = notion(name, args, self.spec_names)
        if name in DELEGATION:
            self.delegations.add(name)
        tid = call_id if isinstance(call_id, str) and call_id else None
        self.c.tool_use("main", msg, {"id": tid, "name": kind, "input": data})
        return tid

    def result(self, tid: str, text: str, error: bool) -> None:
        self.c.tool_result({"tool_use_id": tid, "content": text, "is_error": error})

    def messages(self, messages: Any) -> None:
        if not isinstance(messages, list):
            raise NotATranscript("not a transcript: a Gemini session whose messages are not a list")
        for i, m in enumerate(messages):
            if not isinstance(m, dict) or m.get("type") != "gemini":
                continue
            self.turns += 1
            tokens = m.get("tokens")
            total = tokens.get("total") if isinstance(tokens, dict) else None
            if isinstance(total, (int, float)) and not isinstance(total, bool):
                self.tokens = (self.tokens or 0) + int(total)
            mid = m.get("id")
            msg = f"#gemini-{mid}" if isinstance(mid, str) and mid else f"#gemini-message-{i}"
            calls = m.get("toolCalls")
            if not isinstance(calls, list):
                continue
            for j, call in enumerate(calls):
                if not isinstance(call, dict):
                    continue
                call_id = call.get("id")
                if not isinstance(call_id, str) or not call_id:
                    call_id = f"{msg}#{j}"  # results travel with their call: any unique id will do
                tid = self.call(msg, call_id, call.get("name"), call.get("args"))
                got = response_of(call)
                if tid is not None and got is not None:
                    self.result(tid, *got)

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
            if role == "model":
                self.turns += 1
                msg = f"#gemini-content-{i}"
                for j, part in enumerate(parts):
                    fc = part.get("functionCall") if isinstance(part, dict) else None
                    if not isinstance(fc, dict):
                        continue
                    call_id = fc.get("id") if isinstance(fc.get("id"), str) and fc.get("id") else f"{msg}#{j}"
                    tid = self.call(msg, call_id, fc.get("name"), fc.get("args"))
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


def read(files: Sequence[str], collector: Collector, *, decode_all: bool = False) -> None:
    """Feed one Gemini CLI session (a document, a checkpoint, or the JSONL form) to ``collector``."""
    del decode_all  # every record is decoded: there is nothing to skip
    state = _Session(collector)
    path = files[0]
    start = end = None
    if logical_name(path).endswith(".jsonl"):
        messages, meta = _replay(path, collector)
        if not collector.recognized:
            return
        state.messages(messages)
    else:
        doc = _load_document(path, collector)
        if looks_like_session(doc):
            meta = doc
            state.messages(doc.get("messages"))
        elif looks_like_checkpoint(doc):
            meta = {}
            state.checkpoint(doc)
        else:
            return  # not recognized: load() says it is not a transcript
        collector.recognized = True
    start, end = timestamp_ms(meta.get("startTime")), timestamp_ms(meta.get("lastUpdated"))
    if meta.get("kind") == "subagent":
        collector.warnings.append(
            "a Gemini subagent session (kind: subagent): judged as its own transcript, "
            "not linked to the call that spawned it"
        )
    for name in sorted(state.delegations):
        collector.warnings.append(
            f"{name}: the subagent's own calls are not linked in Gemini sessions; "
            "the call counts as an other action"
        )
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
