"""OpenAI Codex CLI rollouts (``~/.codex/sessions/YYYY/MM/DD/rollout-*.jsonl``).

Two shapes, both one JSON object per line:

- current: ``{"timestamp", "type", "payload"}`` lines, ``type`` one of
  ``session_meta``, ``turn_context``, ``response_item``, ``event_msg``,
  ``compacted``; the tool calls are ``response_item`` payloads;
- mid-2025: a first line ``{"id", "timestamp", "instructions"}``, then bare
  items (``{"type": "function_call", ...}``) and ``{"record_type": "state"}``
  lines.

The reader maps Codex's tools onto the contract's notions (see
``docs/rules.md``, "Codex CLI and Gemini CLI"): the shell tools become
``Bash`` actions with the script as their command, ``update_plan`` becomes
``TodoWrite`` (bookkeeping), MCP tools keep their names (the judged tool and
its family are found by name, as for Claude Code). The classifier is the
same for every agent.

**Same message.** Codex writes each call as its own item. Every call of one
model response comes before the first output of any of them, so consecutive
model-side items (reasoning, assistant text, calls) with no tool output or
user message between them share a message id: calls issued together with the
explore are not reactions to it.

``event_msg`` lines mirror the response items for the UI; they are never
actions (no call counts twice). Only ``token_count`` is read, for the tokens
figure.
"""

from __future__ import annotations

import json
import os
import re
import shlex
from collections.abc import Sequence
from datetime import datetime
from typing import Any

from ..events import RACE_MARKER, Collector, compact_json, injected, metric_len, result_text, texts_of
from ..sources import turns_of
from .base import TranscriptError, events, unlinked_child, unlinked_delegation
from .tools import arguments as _arguments
from .tools import json_text

#: ``type`` of a current-shape line.
LINE_TYPES = frozenset({"session_meta", "turn_context", "response_item", "event_msg", "compacted"})
#: ``type`` of a response item (the payload of a current line, or a bare old line).
ITEM_TYPES = frozenset(
    {
        "message", "reasoning", "function_call", "function_call_output", "custom_tool_call",
        "custom_tool_call_output", "local_shell_call", "web_search_call", "tool_search_call",
        "tool_search_output", "ghost_snapshot", "compaction",
    }
)  # fmt: skip
#: The shell tools, by the Codex version that named them (``container.exec``: the first releases).
SHELL_TOOLS = frozenset({"shell", "shell_command", "exec_command", "container.exec", "local_shell"})
#: Codex's own names for the contract's notions; every other name is kept as it is.
#: The subagent control calls (D9) are bookkeeping, transparent like TodoWrite.
NOTIONS = {
    "update_plan": "TodoWrite",
    "tool_search": "ToolSearch",
    "wait": "TodoWrite",
    "wait_agent": "TodoWrite",
    "close_agent": "TodoWrite",
}
#: Subagent tools (0.104+) that hand a child work: judged through the child's thread (D9).
SPAWN = "spawn_agent"
SEND = "send_input"
#: The namespace newer versions write beside a bare subagent tool name.
AGENT_NAMESPACES = ("multi_agent_v1",)
_MODEL_SIDE = frozenset(
    {"reasoning", "function_call", "custom_tool_call", "local_shell_call", "web_search_call",
     "tool_search_call"}
)  # fmt: skip
_OUTPUTS = frozenset({"function_call_output", "custom_tool_call_output", "tool_search_output"})
_SHELLS = frozenset({"bash", "sh", "zsh", "dash", "ksh"})
_HEAD = 512
_OUTPUT_TYPE = re.compile(rb'"type"\s*:\s*"(?:custom_tool_call_output|function_call_output)"')
_CALL_ID = re.compile(rb'"call_id"\s*:\s*"((?:[^"\\]|\\.)*)"')
_TOKEN_COUNT = b'"token_count"'
_RACE = RACE_MARKER.encode()
_EVENT_MSG = re.compile(rb'"type"\s*:\s*"event_msg"')


def looks_like_rollout(obj: dict[str, Any]) -> bool:
    """A line of a Codex rollout, in either shape (not a look-alike record of some data file)."""
    kind = obj.get("type")
    if isinstance(kind, str) and kind in LINE_TYPES:
        return isinstance(obj.get("payload"), dict) and "timestamp" in obj
    if kind is None:
        if obj.get("record_type") == "state":
            return True
        return "instructions" in obj and "id" in obj and "timestamp" in obj  # the mid-2025 first line
    if isinstance(kind, str) and kind in ("function_call", "local_shell_call", "custom_tool_call"):
        return "call_id" in obj or ("id" in obj and "status" in obj)
    return False


def script_of(command: Any) -> str:
    """The shell script a Codex shell call runs.

    An argv list: the script after ``-c`` (``-lc``, ``-ic``) of a shell, or
    after ``-Command`` of PowerShell; any other argv is joined with shell
    quoting. A string is the script itself.
    """
    if isinstance(command, str):
        return command
    if not isinstance(command, list) or not all(isinstance(w, str) for w in command):
        return ""
    argv: list[str] = command
    if argv:
        program = argv[0].replace("\\", "/").rsplit("/", 1)[-1].lower()
        for i, word in enumerate(argv[1:-1], 1):
            if program in _SHELLS and re.fullmatch(r"-[a-z]*c", word):
                return argv[i + 1]
            if program.startswith(("powershell", "pwsh")) and word.lower() in ("-command", "-c"):
                return " ".join(argv[i + 1 :])
    return shlex.join(argv)


def output_of(raw: Any) -> tuple[str, bool]:
    """(text, is_error) of a ``function_call_output``/``custom_tool_call_output`` payload:
    `output_content` with a content list's texts joined, as a tool_result's blocks are."""
    content, error = output_content(raw)
    return result_text(content), error


def output_content(raw: Any) -> tuple[str | list[Any], bool]:
    """(content, is_error) of a ``function_call_output``/``custom_tool_call_output``
    payload: its text, or the MCP content list it holds, for the verdicts to join its
    texts and the metrics to count its blocks (metrics.md, "Text of a result").

    ``output`` is plain text, or JSON (an object, a list, or a string holding
    either) in one of the shapes the CLI has written over its versions:
    ``{"output", "metadata": {"exit_code"}}`` (shell tools; a non-zero exit
    code is an error); an MCP result ``{"content": [...], "isError"}``, also
    wrapped as ``{"Ok": ...}`` / ``{"Err": "..."}``; or a bare content list
    ``[{"type": "text", "text": ...}]`` (MCP tools; real rollouts also drop
    the ``"type"``).
    ``success: false`` on the payload, and a text starting ``err: `` (Codex's
    words for an MCP call that failed before the server answered) are errors
    too.
    """
    if not isinstance(raw, dict):
        return "", True
    out = raw.get("output")
    error = raw.get("success") is False
    if isinstance(out, dict):
        return _decoded_output(out, error)
    if isinstance(out, list):
        return out, error
    if not isinstance(out, str):
        return "", error
    decoded = _json_output(out)
    if isinstance(decoded, dict):
        return _decoded_output(decoded, error)
    if isinstance(decoded, list):
        return decoded, error
    return out, error or out.startswith("err: ") or _failed_exit(out)


# The header the CLI writes above a command's output in plain text: ``Exit code: N``
# (``shell_command``, 0.63+), ``Process exited with code N`` (``exec_command``, 0.98+).
_EXIT_LINE = re.compile(r"^(?:Exit code: |Process exited with code )(-?\d+)$", re.MULTILINE)
_HEADER = 400  # the header's few lines; the command's own output below it is not read


def _failed_exit(text: str) -> bool:
    """A plain-text shell output whose header gives a non-zero exit code (a failed CLI
    run is no contamination, as the JSON shape's ``metadata.exit_code`` says already)."""
    end = text.find("Output:", 0, _HEADER)
    if end == -1:
        return False
    m = _EXIT_LINE.search(text, 0, end)
    return m is not None and int(m.group(1)) != 0


_JSON_KEYS = ('"output"', '"content"', '"text"', '"type"', '"Ok"', '"Err"')


def _json_output(out: str) -> dict[str, Any] | list[Any] | None:
    """The JSON an output string encodes, when it is one of the shapes `output_of` knows."""
    stripped = out.lstrip()
    if not stripped.startswith(("{", "[")) or not any(k in out for k in _JSON_KEYS):
        return None  # plain text (a shell's output): not worth a decode
    decoded = json_text(out)  # a lone surrogate escape as U+FFFD, as in every line
    if isinstance(decoded, dict):
        known = ("output", "content", "Ok", "Err")
        return decoded if any(k in decoded for k in known) else None
    if isinstance(decoded, list) and _is_content_list(decoded):
        return decoded
    return None


def _is_content_list(items: list[Any]) -> bool:
    """A list of MCP content items (``{"type"?, "text"}``, images ...), not some other JSON array."""
    return all(
        isinstance(b, dict) and (isinstance(b.get("text"), str) or isinstance(b.get("type"), str))
        for b in items
    )


def _decoded_output(data: dict[str, Any], error: bool) -> tuple[str | list[Any], bool]:
    if "Ok" in data and "output" not in data and "content" not in data:
        ok = data["Ok"]  # an MCP call's Result, as the CLI serializes it
        if isinstance(ok, dict):
            return _decoded_output(ok, error)
        if isinstance(ok, list):
            return ok, error
        return (ok if isinstance(ok, str) else ""), error
    if "Err" in data and "output" not in data and "content" not in data:
        err = data["Err"]
        return (err if isinstance(err, str) else json.dumps(err, ensure_ascii=False)), True
    meta = data.get("metadata")
    if isinstance(meta, dict):
        code = meta.get("exit_code")
        error = error or (isinstance(code, int) and not isinstance(code, bool) and code != 0)
    error = error or data.get("isError") is True or data.get("is_error") is True
    for key in ("output", "content"):
        value = data.get(key)
        if isinstance(value, str):
            return value, error
        if isinstance(value, list):
            return value, error
    try:
        return json.dumps(data, ensure_ascii=False), error
    except (TypeError, ValueError, RecursionError):
        return "", error


def timestamp_ms(value: Any) -> float | None:
    if not isinstance(value, str) or not value:
        return None
    try:
        return datetime.fromisoformat(value.replace("Z", "+00:00")).timestamp() * 1000
    except ValueError:
        return None


def tool_name(name: str, namespace: Any) -> str:
    """A call's name as the rules see it: newer versions write a bare name plus a
    ``namespace`` (``multi_agent_v1``; an MCP server's ``mcp__<server>``)."""
    for ns in AGENT_NAMESPACES:
        for sep in (".", "__", "/", ":"):
            if name.startswith(ns + sep):
                return name[len(ns) + len(sep) :]
    if isinstance(namespace, str) and namespace.startswith("mcp__") and not name.startswith("mcp__"):
        return namespace.rstrip("_") + "__" + name
    return name


def session_identity(payload: Any) -> tuple[str | None, str | None, str | None]:
    """(session id, parent thread id, agent path) of a ``session_meta`` payload.

    A subagent's ``source`` is ``{"subagent": {"thread_spawn": {"parent_thread_id",
    "agent_path"?, ...}}}``; review and guardian sessions (``{"subagent": "review"}``,
    ``{"subagent": {"other": ...}}``) name no parent.
    """
    if not isinstance(payload, dict):
        return None, None, None
    sid = payload.get("id")
    parent = path = None
    source = payload.get("source")
    sub = source.get("subagent") if isinstance(source, dict) else None
    spawn = sub.get("thread_spawn") if isinstance(sub, dict) else None
    if isinstance(spawn, dict):
        p, a = spawn.get("parent_thread_id"), spawn.get("agent_path")
        parent = p if isinstance(p, str) and p else None
        path = a if isinstance(a, str) and a else None
    return (sid if isinstance(sid, str) and sid else None), parent, path


def _input_text(item: dict[str, Any]) -> str | None:
    """The text of a user ``message`` item (its ``input_text`` blocks)."""
    content = item.get("content")
    if isinstance(content, str):
        return content
    if not isinstance(content, list):
        return None
    return "\n".join(b["text"] for b in content if isinstance(b, dict) and isinstance(b.get("text"), str))


def _input_blocks(item: dict[str, Any]) -> list[str]:
    """The texts of a user ``message`` item's blocks (one, for a string)."""
    content = item.get("content")
    if isinstance(content, str):
        return [content]
    if not isinstance(content, list):
        return []
    return [b["text"] for b in content if isinstance(b, dict) and isinstance(b.get("text"), str)]


def _is_context(text: str) -> bool:
    """A user message the CLI writes itself (``<environment_context>``, ``<user_instructions>``,
    ``# AGENTS.md instructions for ...``: `events.injected`)."""
    return injected(text)


class _File:
    """One rollout file of a transcript: the parent's, or a subagent's."""

    def __init__(self, path: str, thread: str) -> None:
        self.path = path
        self.thread = thread  # provisional for a child, until linked
        self.sid: str | None = None
        self.parent: str | None = None
        self.agent_path: str | None = None
        self.started = ""  # the first line's timestamp: children are linked earliest first
        self.tokens: int | None = None
        #: (input tokens, of them cached) of the running total, where every ``token_count``
        #: says both; ``cache_unknown`` when one gave input tokens without the cached part
        self.cache: tuple[int, int] | None = None
        self.cache_unknown = False
        #: user inputs: (text, how many actions the thread had then); from event_msg
        #: ``user_message``, else from user message items the CLI did not write itself
        self.inputs: list[tuple[str, int]] = []
        self.item_inputs: list[tuple[str, int]] = []
        #: inside a forked child's copy of its parent's history (D5: the parent's)
        self.copy = False
        self.copy_messages: set[str] = set()  # spawn messages met in the copy

    def first_inputs(self) -> list[tuple[str, int]]:
        return self.inputs or self.item_inputs


class _Rollout:
    """The state of reading one transcript's rollouts: message grouping, results wanted, figures."""

    def __init__(self, collector: Collector) -> None:
        self.c = collector
        self.response = 0  # model responses so far
        self.in_response = False  # the last item was model-side
        self.first_ms: float | None = None
        self.last_ms: float | None = None
        #: ids whose output can matter: explore, codegraph CLI runs, family calls (race), spawns
        self.wanted: set[bytes] = set()
        self.file = _File("", "main")
        #: spawn_agent / send_input calls, in stream order: (call id, file, arguments)
        self.spawns: list[tuple[str, _File, dict[str, Any]]] = []
        self.sends: list[tuple[str, _File, dict[str, Any]]] = []
        self.outputs: dict[str, str] = {}  # the output text of each spawn
        #: ``collab_agent_spawn_end`` events (desktop builds): spawning call id -> child thread id
        self.spawned: dict[str, str] = {}
        self.last_total: Any = None  # the previous token_count's running total

    def message_id(self) -> str:
        if not self.in_response:
            self.response += 1
            self.in_response = True
            if self.main:
                # A model request starts here; its token count comes after the response.
                self.c.timeline.begin()
        return f"#codex-response-{self.response}"

    @property
    def main(self) -> bool:
        """Whether the items being read are the parent's own: its window is the one measured (M1)."""
        return self.file.thread == "main" and not self.file.copy

    def occupy(self, item: dict[str, Any], kind: Any) -> None:
        """What a response item adds to the parent's window: model text and calls, inputs, outputs."""
        timeline = self.c.timeline
        if kind in ("function_call", "custom_tool_call"):
            name = item.get("name")
            body = item.get("arguments") if kind == "function_call" else item.get("input")
            size = len(body) if isinstance(body, str) else len(compact_json(body))
            timeline.add(size + (len(name) if isinstance(name, str) else 0))
        elif kind in ("local_shell_call", "web_search_call"):
            timeline.add(len(compact_json(item.get("action"))))
        elif kind == "message":
            timeline.add(len(texts_of(item.get("content"))))
        elif kind == "reasoning":
            summary = item.get("summary")
            if isinstance(summary, list):
                timeline.add(len(texts_of(summary)))

    def measured(self, info: dict[str, Any]) -> None:
        """A ``token_count``: the prompt size of the request it reports (a repeat of the previous
        figures is the same request), and the window the model had."""
        total = info.get("total_token_usage")
        if total is not None and total == self.last_total:
            return
        self.last_total = total
        last = info.get("last_token_usage")
        prompt = last.get("input_tokens") if isinstance(last, dict) else None
        if isinstance(prompt, int) and not isinstance(prompt, bool):
            self.c.timeline.measured(prompt)
        window = info.get("model_context_window")
        if isinstance(window, int) and not isinstance(window, bool) and window > 0:
            self.c.timeline.window = window

    def boundary(self) -> None:
        self.in_response = False

    def worth(self, line: bytes) -> bool:
        """Whether a line can change a verdict: not an output nobody waits for, nor a UI event."""
        head = line[:_HEAD]
        if _OUTPUT_TYPE.search(head):
            if _RACE in line or self.main:  # the parent's every output counts for its window
                return True
            m = _CALL_ID.search(line)
            if m is None or m.group(1) in self.wanted:
                return True
            # Skipped, but still a boundary between model responses.
            if not self.file.copy:
                self.boundary()
            self.c.skipped_results += 1
            return False
        if _EVENT_MSG.search(head) is None:
            return True
        if _TOKEN_COUNT in head or _USER_MESSAGE in head or _SPAWN_END in head:
            return True
        return self.file.copy and _TASK_STARTED in head  # where a fork's copy ends

    def call(self, call_id: Any, name: str, data: Any) -> None:
        """One tool call, mapped onto the contract's notions."""
        msg = self.message_id()
        tid = call_id if isinstance(call_id, str) and call_id else None
        spec = self.c.spec
        if spec.explore in name or spec.family in name:
            kind, block_input = name, data if isinstance(data, dict) else {}
        elif name in SHELL_TOOLS:
            d = data if isinstance(data, dict) else {}
            command = d.get("cmd") if name == "exec_command" else d.get("command")
            if command is None:
                command = d.get("command", d.get("cmd"))
            kind, block_input = "Bash", {"command": script_of(command)}
        else:
            kind = NOTIONS.get(name, name)
            block_input = data if isinstance(data, dict) else {}
        before = len(self.c.wanted), len(self.c.family_ids)
        fresh = tid is None or tid not in self.c.seen_tool_ids
        self.c.tool_use(self.file.thread, msg, {"id": tid, "name": kind, "input": block_input})
        if (len(self.c.wanted), len(self.c.family_ids)) != before and tid is not None:
            self.wanted.add(tid.encode())
        if name in (SPAWN, SEND) and tid is not None and fresh:
            (self.spawns if name == SPAWN else self.sends).append((tid, self.file, block_input))
            self.c.delegations[tid] = (tid, 0)  # judged through its child, once linked
            self.wanted.add(tid.encode())

    def output(self, payload: dict[str, Any]) -> None:
        self.boundary()
        call_id = payload.get("call_id")
        if not isinstance(call_id, str):
            return
        content, error = output_content(payload)
        if self.main:
            self.c.timeline.result(call_id, metric_len(content))
        if call_id in self.c.delegations and call_id not in self.outputs:
            self.outputs[call_id] = result_text(content)
        self.c.tool_result({"tool_use_id": call_id, "content": content, "is_error": error})

    def item(self, item: dict[str, Any]) -> None:
        kind = item.get("type")
        if self.file.copy:
            self.copied(item)
            return
        if kind not in _OUTPUTS and self.main:
            if kind in _MODEL_SIDE or (kind == "message" and item.get("role") == "assistant"):
                self.message_id()  # the request starts before what it answers with
            self.occupy(item, kind)
        if kind == "function_call":
            name = item.get("name")
            if isinstance(name, str):
                name = tool_name(name, item.get("namespace"))
                self.call(item.get("call_id"), name, _arguments(item.get("arguments")))
        elif kind == "custom_tool_call":
            name = item.get("name")
            if isinstance(name, str):
                self.call(
                    item.get("call_id"), tool_name(name, item.get("namespace")), {"input": item.get("input")}
                )
        elif kind == "local_shell_call":
            action = item.get("action")
            command = action.get("command") if isinstance(action, dict) else None
            self.call(item.get("call_id") or item.get("id"), "local_shell", {"command": command})
        elif kind == "web_search_call":
            self.call(item.get("id"), "web_search", item.get("action"))
        elif kind == "tool_search_call":
            self.call(item.get("call_id") or item.get("id"), "tool_search", {})
        elif kind in _OUTPUTS:
            self.output(item)
        elif kind == "message":
            if item.get("role") == "assistant":
                self.message_id()  # text of the model's response: the calls after it share its id
                said = texts_of(item.get("content"))
                if said.strip() and self.main:
                    self.c.last_text = said  # the answer, when it is the last one (metrics.md)
            else:
                self.boundary()  # a user or developer message starts a new exchange
                if item.get("role") == "user":
                    # The CLI writes its context (AGENTS.md, the environment) as user
                    # messages too, several blocks in one message in newer releases.
                    text, blocks = _input_text(item), _input_blocks(item)
                    if text is not None and not (blocks and all(map(_is_context, blocks))):
                        self.file.item_inputs.append((text, self.actions()))
                        if self.main:
                            self.c.asked(*blocks)
        elif kind in _MODEL_SIDE:
            self.message_id()

    def copied(self, item: dict[str, Any]) -> None:
        """An item of a forked child's copy of its parent's history: the parent's, never
        the child's (D5). Only the spawn messages are kept: the child's own part starts
        with its first ``task_started`` or the input that equals one (the formats page)."""
        if item.get("type") == "function_call" and isinstance(item.get("name"), str):
            if tool_name(item["name"], item.get("namespace")) == SPAWN:
                message = _spawn_message(_arguments(item.get("arguments")))
                if message:
                    self.file.copy_messages.add(message.strip())
        elif item.get("type") == "message" and item.get("role") == "user":
            text = _input_text(item)
            if text is not None and self.spawned_task(text):
                self.end_copy()
                self.file.item_inputs.append((text, self.actions()))

    def spawned_task(self, text: str) -> bool:
        """Whether a user input of a fork's copy is a spawn's task: one met in the copy, or
        one of the spawns read so far (the parent is read before its children)."""
        t = text.strip()
        if t in self.file.copy_messages:
            return True
        return any(_spawn_message(args).strip() == t for _, f, args in self.spawns if f is not self.file)

    def end_copy(self) -> None:
        self.file.copy = False
        self.boundary()

    def actions(self) -> int:
        return len(self.c.threads.get(self.file.thread, ()))

    def event(self, payload: dict[str, Any]) -> None:
        kind = payload.get("type")
        if kind == "user_message":
            text = payload.get("message")
            if not isinstance(text, str):
                return
            if self.file.copy:
                if not self.spawned_task(text):
                    return
                self.end_copy()
            self.file.inputs.append((text, self.actions()))
            if self.main:
                self.c.asked(text)
            return
        if kind == "task_started" and self.file.copy:
            # Codex Desktop 0.119 copies messages and UI events only: no spawn call in the
            # copy names the task, but the child's own turn starts here (the formats page).
            self.end_copy()
            return
        if kind == "collab_agent_spawn_end" and not self.file.copy:
            call, thread = payload.get("call_id"), payload.get("new_thread_id")
            if isinstance(call, str) and isinstance(thread, str) and thread:
                self.spawned.setdefault(call, thread)
            return
        if kind != "token_count" or self.file.copy:
            return
        info = payload.get("info")
        if isinstance(info, dict) and self.main:
            self.measured(info)
        usage = info.get("total_token_usage") if isinstance(info, dict) else None
        if not isinstance(usage, dict):
            return
        total = usage.get("total_tokens")
        if isinstance(total, int) and not isinstance(total, bool):
            self.file.tokens = max(total, self.file.tokens or 0)
        # A running total: its input tokens include the cached part (cached_input_tokens).
        read, cached = usage.get("input_tokens"), usage.get("cached_input_tokens")
        if isinstance(read, int) and not isinstance(read, bool):
            if isinstance(cached, int) and not isinstance(cached, bool) and cached <= read:
                f = self.file
                f.cache = (read, cached) if f.cache is None or read >= f.cache[0] else f.cache
            else:
                self.file.cache_unknown = True

    def session_meta(self, payload: dict[str, Any]) -> None:
        self.boundary()
        sid, parent, agent_path = session_identity(payload)
        f = self.file
        if f.sid is None:
            f.sid, f.parent, f.agent_path = sid, parent, agent_path
        elif sid is not None and sid != f.sid and f.parent is not None:
            # A forked child: a second session_meta (its parent's), then a copy of
            # the parent's history, then the child's own part.
            f.copy = True

    def stamp(self, obj: dict[str, Any]) -> None:
        ms = timestamp_ms(obj.get("timestamp"))
        if ms is not None:
            self.first_ms = ms if self.first_ms is None else min(self.first_ms, ms)
            self.last_ms = ms if self.last_ms is None else max(self.last_ms, ms)
        if not self.file.started and isinstance(obj.get("timestamp"), str):
            self.file.started = obj["timestamp"]

    def read_file(self, path: str, thread: str, decode_all: bool) -> _File:
        self.file = _File(path, thread)
        self.boundary()
        for obj in events(
            path, self.c, decode_all=decode_all, worth=self.worth, recognize=looks_like_rollout
        ):
            self.stamp(obj)
            kind = obj.get("type")
            payload = obj.get("payload")
            if kind in LINE_TYPES:
                if not isinstance(payload, dict):
                    continue
                if kind == "response_item":
                    self.item(payload)
                elif kind == "event_msg":
                    self.event(payload)
                elif kind == "session_meta":
                    self.session_meta(payload)
                else:  # turn_context, compacted: a new exchange
                    self.boundary()
            elif isinstance(kind, str) and kind in ITEM_TYPES:
                self.item(obj)  # the mid-2025 shape: bare items
            elif "instructions" in obj and isinstance(obj.get("id"), str) and self.file.sid is None:
                self.file.sid = obj["id"]  # the mid-2025 first line
        return self.file


_USER_MESSAGE = b'"user_message"'
_TASK_STARTED = b'"task_started"'
_SPAWN_END = b'"collab_agent_spawn_end"'


def _spawn_message(data: Any) -> str:
    """The task a ``spawn_agent``/``send_input`` call gives: ``message``, else its ``items``' texts."""
    if not isinstance(data, dict):
        return ""
    message = data.get("message")
    if isinstance(message, str):
        return message
    items = data.get("items")
    if isinstance(items, list):
        return "\n".join(b["text"] for b in items if isinstance(b, dict) and isinstance(b.get("text"), str))
    return ""


def _decoded(text: str) -> dict[str, Any]:
    value = json_text(text)
    return value if isinstance(value, dict) else {}


def _link(state: _Rollout, main: _File, children: list[_File]) -> None:
    """D9: give every child rollout's thread the id of the call that spawned it, and
    say where in a child each ``send_input`` call's work starts."""
    c = state.c
    by_call: dict[str, _File] = {}
    linked: set[int] = set()
    pending = sorted(children, key=lambda f: f.started)
    for call_id, owner, args in state.spawns:
        out = _decoded(state.outputs.get(call_id, ""))
        agent_id, task_name = out.get("agent_id") or state.spawned.get(call_id), out.get("task_name")
        message = _spawn_message(args).strip()
        child = next((f for f in pending if id(f) not in linked and agent_id and f.sid == agent_id), None)
        if child is None and isinstance(task_name, str) and task_name:
            child = next((f for f in pending if id(f) not in linked and f.agent_path == task_name), None)
        if child is None and message:
            child = next(
                (
                    f
                    for f in pending
                    if id(f) not in linked
                    and f.parent is not None
                    and f.parent == owner.sid
                    and (first := f.first_inputs())
                    and first[0][0].strip() == message
                ),
                None,
            )
        if child is None:
            unlinked_delegation(c, SPAWN, call_id, "rollout")
            continue
        linked.add(id(child))
        by_call[call_id] = child
        c.rename_thread(child.thread, call_id)
        child.thread = call_id
    for child in pending:
        if id(child) not in linked:
            unlinked_child(c, f"rollout {os.path.basename(child.path)}", SPAWN)
    # send_input: new work for a linked child, judged from the child's input that carries it.
    claimed: dict[int, set[int]] = {id(f): {0} for f in by_call.values()}
    by_target: dict[str, _File] = {}
    for call_id, child in by_call.items():
        for key in (child.sid, child.agent_path):
            if key:
                by_target.setdefault(key, child)
        nickname = _decoded(state.outputs.get(call_id, "")).get("nickname")
        if isinstance(nickname, str) and nickname:
            by_target.setdefault(nickname, child)
    for call_id, _owner, args in state.sends:
        target = next(
            (args[k] for k in ("id", "target", "agent_id", "task_name") if isinstance(args.get(k), str)), None
        )
        child = by_target.get(target) if target else None
        if child is None:
            c.warnings.append(f"{SEND} call {call_id}: its subagent is not linked; judged as moved on")
            continue
        inputs = child.first_inputs()
        taken = claimed.setdefault(id(child), {0})
        message = _spawn_message(args).strip()
        at = next((i for i, (t, _) in enumerate(inputs) if i not in taken and t.strip() == message), None)
        if at is None:
            at = next((i for i in range(len(inputs)) if i not in taken), None)
        if at is None:
            c.warnings.append(
                f"{SEND} call {call_id}: its input is not in the subagent's rollout; judged as moved on"
            )
            continue
        taken.add(at)
        c.delegations[call_id] = (child.thread, inputs[at][1])


def read(files: Sequence[str], collector: Collector, *, decode_all: bool = False) -> None:
    """Feed a Codex rollout, its later turns (``run-x.t2.jsonl``, ...: the main thread goes
    on) and its subagents' rollouts (the rest of ``files``), to ``collector``."""
    state = _Rollout(collector)
    main = state.read_file(files[0], "main", decode_all)
    turns = 1 + turns_of(files)
    segments = [main, *(state.read_file(path, "main", decode_all) for path in files[1:turns])]
    children = []
    for n, path in enumerate(files[turns:], 1):
        try:
            child = state.read_file(path, f"#child-{n}", decode_all)
        except TranscriptError as exc:  # a broken child: the parent is still judged
            collector.warnings.append(f"{os.path.basename(path)}: {exc}; its subagent is not read")
            continue
        if child.sid is not None:
            collector.rename_thread(child.thread, f"agent-{child.sid}")
            child.thread = f"agent-{child.sid}"
        if child.copy:
            collector.warnings.append(
                f"{os.path.basename(path)}: a forked subagent whose own part was not found after "
                "the copy of its parent's history"
            )
        children.append(child)
    if state.spawns or children:
        _link(state, main, children)
        collector.order_by_spawn()
    duration = None
    if state.first_ms is not None and state.last_ms is not None:
        duration = round(state.last_ms - state.first_ms)
    # Each rollout counts its own tokens (a parent's total does not include its children's).
    totals = [f.tokens for f in (*segments, *children) if f.tokens is not None]
    # The cache-read share: of every rollout's input tokens, those it says were cached; not
    # known when a rollout counted input tokens without saying the cached part.
    caches = [f.cache for f in (*segments, *children) if f.cache is not None]
    if caches and not any(f.cache_unknown for f in (*segments, *children)):
        collector.cache = (sum(c[0] for c in caches), sum(c[1] for c in caches))
    collector.runs.append(
        {
            "subtype": None,
            "is_error": None,
            "num_turns": state.response,
            "duration_ms": duration,
            "total_cost_usd": None,
            "tokens": sum(totals) if totals else None,
        }
    )
