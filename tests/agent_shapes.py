"""Builders that emit the session-log shapes of OpenAI Codex CLI and Google Gemini CLI.

Written from the formats page (``transcript-formats.md``, section 4), not
copied from anyone's logs:

- `Rollout` writes a Codex rollout, in the current shape (``{"timestamp",
  "type", "payload"}`` lines, with the ``event_msg`` mirrors the CLI writes
  for the UI) or the mid-2025 one (a first line ``{"id", "timestamp",
  "instructions"}``, bare items, ``{"record_type": "state"}`` lines). Each
  `Rollout.step` is one model response: its calls, then their outputs.
- `GeminiSession` writes a Gemini CLI session as a JSON document
  (``session-*.json``), an old checkpoint (a list of ``{role, parts}``), or
  the newer JSONL form (a header line, message records rewritten as their
  tool calls finish, ``$set`` records).
"""

from __future__ import annotations

import itertools
import json
from pathlib import Path
from typing import Any

from builders import Run, with_usage

CODEX_EXPLORE = "mcp__codegraph__codegraph_explore"
GEMINI_EXPLORE = "codegraph_explore"
SHELLS = ("shell", "shell_command", "exec_command", "local_shell_call")
_ids = itertools.count(1)
HEADER = {
    "sessionId": "5c1d-session",
    "projectHash": "ab12",
    "startTime": "2026-03-01T10:00:00.000Z",
    "lastUpdated": "2026-03-01T10:00:00.000Z",
}
_clock = itertools.count(0)


def _stamp() -> str:
    n = next(_clock)
    return f"2026-03-01T10:{n // 60 % 60:02d}:{n % 60:02d}.000Z"


def explore_text(returned: list[str] = (), mentioned: list[str] = ()) -> str:  # type: ignore[assignment]
    """An explore response: a flow section naming files, then per-file source sections."""
    out = ["## Flow"]
    out += [f"{i}. step in {path}:12" for i, path in enumerate(mentioned, 1)]
    for path in returned:
        out += [f"**`{path}`**", "```python", "def f(): pass", "```"]
    return "\n".join(out)


class Rollout:
    """A Codex CLI rollout being written item by item."""

    def __init__(
        self,
        shape: str = "current",
        shell: str = "shell",
        *,
        call_ids: str = "call",
        session_id: str = "0199-session",
        source: Any = None,
        fork_of: Rollout | None = None,
        cli_version: str = "0.99.0",
    ) -> None:
        """``source``: the session_meta's ``source`` (a subagent's names its parent, see
        `child_source`); ``fork_of``: a forked child, whose file copies the parent's
        session_meta and history after its own session_meta."""
        assert shape in ("current", "mid-2025")
        self.shape = shape
        self.shell_kind = shell
        self.call_ids = call_ids  # "call": call_...; "functions": functions.shell:0 (non-OpenAI models)
        self.session_id = session_id
        self.lines: list[dict[str, Any]] = []
        self.tokens = 0
        #: cached input tokens each request adds to the running total (None: not written, as
        #: builds before prompt caching was counted)
        self.cached: int | None = None
        self.cached_total = 0
        if shape == "current":
            meta: dict[str, Any] = {"id": session_id, "cwd": "/work/t", "originator": "codex_exec",
                                    "cli_version": cli_version, "instructions": None}  # fmt: skip
            if source is not None:
                meta["source"] = source
            self._line("session_meta", meta)
            if fork_of is not None:
                self.lines.extend(json.loads(json.dumps(fork_of.lines)))
            self._line("turn_context", {"cwd": "/work/t", "model": "gpt-5-codex"})
        else:
            self.lines.append({"id": "0199-session", "timestamp": _stamp(), "instructions": ""})
            self.lines.append({"record_type": "state"})

    # -- raw lines -----------------------------------------------------------------
    def _line(self, kind: str, payload: dict[str, Any]) -> None:
        self.lines.append({"timestamp": _stamp(), "type": kind, "payload": payload})

    def item(self, item: dict[str, Any]) -> None:
        if self.shape == "current":
            self._line("response_item", item)
        else:
            self.lines.append(item)

    def event(self, payload: dict[str, Any]) -> None:
        """A UI event: only the current shape writes them."""
        if self.shape == "current":
            self._line("event_msg", payload)

    # -- calls (not yet written) ---------------------------------------------------
    def _id(self, name: str) -> str:
        n = next(_ids)
        return f"functions.{name}:{n}" if self.call_ids == "functions" else f"call_{n:04d}"

    def call(self, name: str, **arguments: Any) -> dict[str, Any]:
        return {
            "type": "function_call",
            "name": name,
            "arguments": json.dumps(arguments),
            "call_id": self._id(name),
        }

    def explore(self, query: str = "q", name: str = CODEX_EXPLORE) -> dict[str, Any]:
        return self.call(name, query=query)

    def spawn(self, message: str, *, namespace: str | None = None, **arguments: Any) -> dict[str, Any]:
        """A ``spawn_agent`` call; newer versions write a bare name with a ``namespace``."""
        call = self.call("spawn_agent", agent_type=arguments.pop("agent_type", "explorer"),
                         message=message, **arguments)  # fmt: skip
        if namespace is not None:
            call["namespace"] = namespace
        return call

    def shell(self, script: str) -> dict[str, Any]:
        """The script, run through this rollout's shell tool."""
        kind = self.shell_kind
        if kind == "shell":
            return self.call("shell", command=["bash", "-lc", script], workdir="/work/t")
        if kind == "shell_command":
            return self.call("shell_command", command=script, workdir="/work/t")
        if kind == "exec_command":
            return self.call("exec_command", cmd=script, yield_time_ms=1000)
        return {"type": "local_shell_call", "call_id": self._id("local_shell"), "status": "completed",
                "action": {"type": "exec", "command": ["bash", "-lc", script]}}  # fmt: skip

    def patch(self, text: str = "*** Begin Patch\n*** End Patch") -> dict[str, Any]:
        return {
            "type": "custom_tool_call",
            "name": "apply_patch",
            "input": text,
            "call_id": self._id("apply_patch"),
        }

    # -- writing -------------------------------------------------------------------
    def user(self, text: str) -> None:
        self.item({"type": "message", "role": "user", "content": [{"type": "input_text", "text": text}]})
        self.event({"type": "user_message", "message": text})

    def say(self, text: str) -> None:
        self.item(
            {"type": "message", "role": "assistant", "content": [{"type": "output_text", "text": text}]}
        )
        self.event({"type": "agent_message", "message": text})

    def output(
        self, call: dict[str, Any], text: str, *, exit_code: int | None = None, raw: Any = None
    ) -> None:
        """The output item of ``call`` (and the UI event mirroring it)."""
        kind = "custom_tool_call_output" if call["type"] == "custom_tool_call" else "function_call_output"
        if raw is not None:
            out = raw
        elif exit_code is not None or call.get("name") == "shell" or call["type"] == "local_shell_call":
            out = json.dumps(
                {"output": text, "metadata": {"exit_code": exit_code or 0, "duration_seconds": 0.1}}
            )
        else:
            out = text
        self.item({"type": kind, "call_id": call["call_id"], "output": out})
        if call.get("name", "").startswith("mcp__"):
            self.event({"type": "mcp_tool_call_end", "call_id": call["call_id"],
                        "result": {"Ok": {"content": [{"type": "text", "text": text}]}}})  # fmt: skip
        elif call["type"] == "local_shell_call" or call.get("name") in SHELLS:
            self.event({"type": "exec_command_end", "call_id": call["call_id"], "aggregated_output": text,
                        "exit_code": exit_code or 0})  # fmt: skip

    def step(self, *calls: dict[str, Any], outputs: list[Any] | None = None, reasoning: bool = True) -> None:
        """One model response issuing ``calls``, then each call's output (text, or dict of kwargs)."""
        if reasoning:
            self.item({"type": "reasoning", "summary": [], "encrypted_content": "gAAAA"})
        for call in calls:
            self.item(call)
        for call, out in zip(calls, outputs or ["ok"] * len(calls), strict=True):
            if out is None:
                continue  # never answered
            if isinstance(out, dict):
                self.output(call, **out)
            else:
                self.output(call, out)
        self.tokens += 1000
        usage = {"input_tokens": self.tokens - 100, "output_tokens": 100, "total_tokens": self.tokens}
        if self.cached is not None:
            self.cached_total += self.cached
            usage["cached_input_tokens"] = self.cached_total
        self.event({"type": "token_count", "info": {"total_token_usage": usage}})
        if self.shape == "mid-2025":
            self.lines.append({"record_type": "state"})

    def finish(self, text: str = "Done.") -> None:
        self.say(text)
        self.event({"type": "task_complete", "last_agent_message": text})

    def write(self, path: Path) -> Path:
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text("".join(json.dumps(line) + "\n" for line in self.lines), encoding="utf-8")
        return path


def spawn_output(agent_id: str | None = None, **fields: Any) -> str:
    """A ``spawn_agent`` output: ``{"agent_id", "nickname"?}`` (0.104, 0.126), or
    MultiAgentV2's ``{"task_name", "nickname"}`` (no thread id)."""
    out = {"agent_id": agent_id} if agent_id is not None else {}
    return json.dumps({**out, **fields})


def wait_output(*ids: str, message: str = "done") -> str:
    return json.dumps({"status": {i: {"completed": message} for i in ids}})


def child_source(parent_id: str, **spawn: Any) -> dict[str, Any]:
    """A subagent rollout's ``session_meta.source``: spawned by ``parent_id``."""
    return {"subagent": {"thread_spawn": {"parent_thread_id": parent_id, "depth": 1, **spawn}}}


def child_rollout(parent_id: str, agent_id: str, message: str, **spawn: Any) -> Rollout:
    """A subagent's rollout, started with the spawn ``message`` as its first user message."""
    r = Rollout("current", "exec_command", session_id=agent_id, source=child_source(parent_id, **spawn),
                cli_version="0.126.0")  # fmt: skip
    r.user(message)
    return r


class GeminiSession:
    """A Gemini CLI session being written message by message."""

    def __init__(self, form: str = "session", *, kind: str | None = None, **header: Any) -> None:
        """``header``: fields of the session's metadata to set (``sessionId``, ``startTime``, ...)."""
        assert form in ("session", "checkpoint", "jsonl")
        self.form = form
        self.kind = kind
        self.header = header
        self.messages: list[dict[str, Any]] = []
        self.records: list[dict[str, Any]] = []  # the JSONL form's records, in write order
        self.cached: int | None = 0  # each model message's ``tokens.cached`` (None: not written)

    @staticmethod
    def call(name: str, **args: Any) -> dict[str, Any]:
        return {"id": f"{name}-{next(_ids)}", "name": name, "args": args}

    def explore(self, query: str = "q", name: str = GEMINI_EXPLORE) -> dict[str, Any]:
        return self.call(name, query=query)

    def _message(self, kind: str, content: Any, **extra: Any) -> dict[str, Any]:
        message = {"id": f"m-{next(_ids)}", "timestamp": _stamp(), "type": kind, "content": content, **extra}
        self.messages.append(message)
        return message

    def user(self, text: str) -> None:
        self.records.append(self._message("user", [{"text": text}]))

    def step(self, *calls: dict[str, Any], results: list[Any] | None = None, text: str = "") -> None:
        """One model message issuing ``calls``; each gets its result: a text, ``("error", text)``,
        None (cancelled), or a dict: the ``functionResponse``'s whole ``response``."""
        records = []
        for call, result in zip(calls, results or ["ok"] * len(calls), strict=True):
            record: dict[str, Any] = {**call, "timestamp": _stamp(), "status": "success"}
            if isinstance(result, tuple):
                record["status"] = "error"
                response = {"error": result[1]}
            elif result is None:
                record["status"] = "cancelled"
                response = None
            elif isinstance(result, dict):
                response = result
            else:
                response = {"output": result}
            if response is not None:
                record["result"] = [{"functionResponse": {"id": call["id"], "name": call["name"],
                                                          "response": response}}]  # fmt: skip
            records.append(record)
        message = self._message("gemini", text, thoughts=[], model="gemini-2.5-pro",
                                tokens={"input": 900, "output": 100,
                                        **({} if self.cached is None else {"cached": self.cached}),
                                        "total": 1000})  # fmt: skip
        if calls:
            # The JSONL form writes the message as soon as the model answered, then again
            # once its calls finished (same id): the last one holds the results.
            pending = [
                {k: v for k, v in r.items() if k != "result"} | {"status": "executing"} for r in records
            ]
            self.records.append({**message, "toolCalls": pending})
            message["toolCalls"] = records
        self.records.append(dict(message))

    def finish(self, text: str = "Done.") -> None:
        self.step(text=text)

    def document(self) -> Any:
        if self.form == "checkpoint":
            return self._checkpoint()
        doc: dict[str, Any] = {**HEADER, "lastUpdated": "2026-03-01T10:05:00.000Z", **self.header,
                               "messages": self.messages}  # fmt: skip
        if self.kind is not None:
            doc["kind"] = self.kind
        return doc

    def _checkpoint(self) -> list[dict[str, Any]]:
        out: list[dict[str, Any]] = []
        for m in self.messages:
            if m["type"] == "user":
                out.append({"role": "user", "parts": m["content"]})
                continue
            parts: list[dict[str, Any]] = [{"text": m["content"]}] if m["content"] else []
            parts += [
                {"functionCall": {"name": c["name"], "args": c["args"]}} for c in m.get("toolCalls", [])
            ]
            out.append({"role": "model", "parts": parts})
            responses = [r for c in m.get("toolCalls", []) for r in c.get("result", [])]
            if responses:  # old checkpoints name the call only by its name
                out.append({"role": "user", "parts": [{"functionResponse": {
                    "name": r["functionResponse"]["name"], "response": r["functionResponse"]["response"]}}
                    for r in responses]})  # fmt: skip
        return out

    def write(self, path: Path) -> Path:
        path.parent.mkdir(parents=True, exist_ok=True)
        if self.form == "jsonl":
            header = {**HEADER, "kind": self.kind or "main", **self.header}
            last = self.header.get("lastUpdated", "2026-03-01T10:05:00.000Z")
            lines = [header, *self.records, {"$set": {"lastUpdated": last}}]
            path.write_text("".join(json.dumps(r) + "\n" for r in lines), encoding="utf-8")
        else:
            path.write_text(json.dumps(self.document(), indent=2), encoding="utf-8")
        return path

    def suffix(self) -> str:
        return ".jsonl" if self.form == "jsonl" else ".json"


# -- Qwen Code and GitHub Copilot CLI (transcript-formats.md, section 5) ------------------

QWEN_SESSION = "7e1f-qwen-session"


class QwenChat:
    """A Qwen Code chat (``chats/<sessionId>.jsonl``) being written record by record.

    Each `step` is one ``assistant`` record (its calls are one message) followed by a
    ``tool_result`` record per call, and by the ``ui_telemetry`` events Qwen writes for
    the main thread's calls too (``prompt_id`` ``<sessionId>########<n>``: not a subagent)."""

    def __init__(self, session_id: str = QWEN_SESSION, version: str = "0.13.0") -> None:
        self.session_id = session_id
        self.version = version
        self.records: list[dict[str, Any]] = []
        self.parent: str | None = None
        self.prompt = 0
        self.tokens = 1000

    def record(self, kind: str, **fields: Any) -> dict[str, Any]:
        uuid = f"q-{next(_ids)}"
        rec = {"uuid": uuid, "parentUuid": self.parent, "sessionId": self.session_id, "timestamp": _stamp(),
               "type": kind, "cwd": "/work/t", "version": self.version, **fields}  # fmt: skip
        self.parent = uuid
        self.records.append(rec)
        return rec

    def user(self, text: str) -> None:
        self.prompt += 1
        self.record("user", message={"role": "user", "parts": [{"text": text}]})

    @staticmethod
    def call(name: str, **args: Any) -> dict[str, Any]:
        return {"id": f"call_{next(_ids):04d}", "name": name, "args": args}

    @classmethod
    def explore(cls, query: str = "q", name: str = CODEX_EXPLORE) -> dict[str, Any]:
        return cls.call(name, query=query)

    def telemetry(self, prompt_id: str, name: str, args: Any, success: bool = True) -> None:
        self.record("system", subtype="ui_telemetry", systemPayload={"uiEvent": {
            "event.name": "qwen-code.tool_call", "event.timestamp": _stamp(), "function_name": name,
            "function_args": args, "duration_ms": 5, "success": success, "prompt_id": prompt_id,
            "response_id": f"resp-{next(_ids)}"}})  # fmt: skip

    def step(
        self, *calls: dict[str, Any], results: list[Any] | None = None, text: str = "", thought: str = "",
        prompt_tokens: int | None = None, display: list[Any] | None = None,
    ) -> None:  # fmt: skip
        """One model response: ``thought``, ``text`` and ``calls``; each call's result is a text,
        ``("error", text)``, or None (never answered)."""
        parts: list[dict[str, Any]] = []
        if thought:
            parts.append({"text": thought, "thought": True})
        if text:
            parts.append({"text": text})
        parts += [{"functionCall": c} for c in calls]
        self.tokens += 500
        prompt = self.tokens if prompt_tokens is None else prompt_tokens
        self.record("assistant", model="qwen3-coder-plus", contextWindowSize=131072,
                    message={"role": "model", "parts": parts},
                    usageMetadata={"promptTokenCount": prompt, "candidatesTokenCount": 50,
                                   "thoughtsTokenCount": 0, "cachedContentTokenCount": prompt // 2,
                                   "totalTokenCount": prompt + 50})  # fmt: skip
        for i, (call, result) in enumerate(zip(calls, results or ["ok"] * len(calls), strict=True)):
            self.telemetry(f"{self.session_id}########{self.prompt}", call["name"], call["args"])
            if result is None:
                continue
            status, response = "success", {"output": result}
            if isinstance(result, tuple):
                status, response = "error", {"error": result[1]}
            shown = display[i] if display else (result if isinstance(result, str) else result[1])
            self.record("tool_result", message={"role": "user", "parts": [{"functionResponse": {
                "id": call["id"], "name": call["name"], "response": response}}]},
                toolCallResult={"callId": call["id"], "status": status, "resultDisplay": shown})  # fmt: skip

    def delegate(
        self, subagent: str, steps: list[tuple[str, dict[str, Any]]], *, text: str = ""
    ) -> dict[str, Any]:
        """An ``agent`` call whose subagent runs ``steps`` (seen only in the telemetry)."""
        call = self.call(
            "agent", description="look into it", prompt="find where f is", subagent_type=subagent
        )
        self.tokens += 500
        self.record("assistant", message={"role": "model", "parts": [{"functionCall": call}]},
                    usageMetadata={"promptTokenCount": self.tokens,
                                   "totalTokenCount": self.tokens + 20})  # fmt: skip
        self.telemetry(f"{self.session_id}########{self.prompt}", "agent", call["args"])
        suffix = f"{next(_ids):x}"
        for n, (name, args) in enumerate(steps, 1):
            self.telemetry(f"{self.session_id}#{subagent}-{suffix}#{n}", name, args)
        self.record("tool_result", message={"role": "user", "parts": [{"functionResponse": {
            "id": call["id"], "name": "agent", "response": {"output": text or "the subagent's answer"}}}]},
            toolCallResult={"callId": call["id"], "status": "success", "resultDisplay": {
                "type": "task_execution", "subagentName": subagent, "status": "completed",
                "terminateReason": "GOAL", "result": text,
                "executionSummary": {"rounds": 1, "totalToolCalls": len(steps)}}})  # fmt: skip
        return call

    def compress(self) -> None:
        self.record("system", subtype="chat_compression", systemPayload={"info": {
            "originalTokenCount": self.tokens, "newTokenCount": 800}})  # fmt: skip
        self.tokens = 800

    def finish(self, text: str = "Done.") -> None:
        self.step(text=text, thought="I have what I need.")

    def lines(self) -> list[dict[str, Any]]:
        return self.records

    def write(self, path: Path) -> Path:
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text("".join(json.dumps(r) + "\n" for r in self.records), encoding="utf-8")
        return path


COPILOT_SESSION = "c0p1-4e2a-session"


class CopilotSession:
    """A GitHub Copilot CLI session's events being written one by one.

    `write` gives the ``session-state/<id>/events.jsonl`` form (or the flat
    ``session-state/<id>.jsonl``: the same events); `history` the older
    ``history-session-state`` document."""

    def __init__(self, session_id: str = COPILOT_SESSION, version: str = "1.0.40") -> None:
        self.session_id = session_id
        self.events: list[dict[str, Any]] = []
        self.chat: list[dict[str, Any]] = [{"role": "system", "content": "You are Copilot."}]
        self.last: str | None = None
        self.event("session.start", sessionId=session_id, copilotVersion=version, selectedModel="gpt-5",
                   context={"cwd": "/work/t"})  # fmt: skip

    def event(self, kind: str, **data: Any) -> None:
        eid = f"ev-{next(_ids)}"
        self.events.append(
            {"type": kind, "data": data, "id": eid, "timestamp": _stamp(), "parentId": self.last}
        )
        self.last = eid

    def user(self, text: str) -> None:
        self.event("user.message", content=text)
        self.chat.append({"role": "user", "content": text})

    @staticmethod
    def call(name: str, **args: Any) -> dict[str, Any]:
        return {"toolCallId": f"toolu_{next(_ids):04d}", "name": name, "arguments": args, "type": "function"}

    @classmethod
    def explore(
        cls, query: str = "q", server: str = "codegraph", tool: str = "codegraph_explore"
    ) -> dict[str, Any]:
        call = cls.call(f"{server}-{tool}", query=query)
        call["mcp"] = (server, tool)
        return call

    def step(
        self, *calls: dict[str, Any], results: list[Any] | None = None, text: str = "",
        parent: str | None = None, phase: str | None = None,
    ) -> None:  # fmt: skip
        """One assistant message issuing ``calls``; each result is a text, ``("error", text)``
        or None (never completed)."""
        inner = {"parentToolCallId": parent} if parent else {}
        turn = f"turn-{next(_ids)}"
        self.event("assistant.turn_start", turnId=turn, **inner)
        requests = [{k: v for k, v in c.items() if k != "mcp"} for c in calls]
        extra = {"phase": phase} if phase else {}
        self.event("assistant.message", messageId=f"msg-{next(_ids)}", content=text, toolRequests=requests,
                   outputTokens=40, **extra, **inner)  # fmt: skip
        if parent is None:
            self.chat.append({"role": "assistant", "content": text, "tool_calls": [
                {"id": c["toolCallId"], "type": "function", "function": {
                    "name": c["name"], "arguments": json.dumps(c["arguments"])}}
                for c in calls]})  # fmt: skip
        for call, result in zip(calls, results or ["ok"] * len(calls), strict=True):
            mcp = {}
            if "mcp" in call:
                mcp = {"mcpServerName": call["mcp"][0], "mcpToolName": call["mcp"][1]}
            self.event("tool.execution_start", toolCallId=call["toolCallId"], toolName=call["name"],
                       arguments=call["arguments"], **mcp, **inner)  # fmt: skip
            if result is None:
                continue
            if isinstance(result, tuple):
                self.event("tool.execution_complete", toolCallId=call["toolCallId"], success=False,
                           error={"message": result[1], "code": "failure"}, **inner)  # fmt: skip
                text_out = result[1]
            else:
                self.event("tool.execution_complete", toolCallId=call["toolCallId"], success=True,
                           result={"content": result, "detailedContent": result}, **inner)  # fmt: skip
                text_out = result
            if parent is None:
                self.chat.append({"role": "tool", "tool_call_id": call["toolCallId"], "content": text_out})
        self.event("assistant.turn_end", turnId=turn, **inner)

    def delegate(self, steps: list[dict[str, Any]], *, text: str = "done") -> dict[str, Any]:
        """A ``task`` call whose subagent issues ``steps`` (calls), one message each."""
        task = self.call("task", description="look into it", prompt="find where f is", agent_type="explore")
        self.event("assistant.message", messageId=f"msg-{next(_ids)}", content="", toolRequests=[task],
                   outputTokens=20)  # fmt: skip
        self.event("tool.execution_start", toolCallId=task["toolCallId"], toolName="task",
                   arguments=task["arguments"])  # fmt: skip
        self.event("subagent.started", toolCallId=task["toolCallId"], agentName="explore")
        for call in steps:
            self.step(call, parent=task["toolCallId"])
        self.event("subagent.completed", toolCallId=task["toolCallId"], agentName="explore")
        self.event("tool.execution_complete", toolCallId=task["toolCallId"], success=True,
                   result={"content": text})  # fmt: skip
        return task

    def compact(self) -> None:
        self.event("session.compaction_start")
        self.event("session.compaction_complete", success=True, preCompactionTokens=50000,
                   summaryContent="summary of the work so far")  # fmt: skip

    def resume(self) -> None:
        self.event("session.resume", resumeTime=_stamp(), eventCount=len(self.events))

    def shutdown(self, current: int = 30000, system: int = 4000, tools: int = 6000) -> None:
        self.event("session.shutdown", shutdownType="routine", currentTokens=current, systemTokens=system,
                   toolDefinitionsTokens=tools, conversationTokens=current - system - tools,
                   modelMetrics={"gpt-5": {"requests": {"count": 3}, "usage": {
                       "inputTokens": 90000, "outputTokens": 1200, "cacheReadTokens": 60000,
                       "cacheWriteTokens": 0}}})  # fmt: skip

    def finish(self, text: str = "Done.") -> None:
        self.step(text=text, phase="final_answer")

    def write(self, path: Path) -> Path:
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text("".join(json.dumps(e) + "\n" for e in self.events), encoding="utf-8")
        return path

    def history(self, path: Path) -> Path:
        path.parent.mkdir(parents=True, exist_ok=True)
        doc = {"sessionId": self.session_id, "startTime": "2026-03-01T10:00:00.000Z",
               "chatMessages": self.chat,
               "timeline": []}  # fmt: skip
        path.write_text(json.dumps(doc, indent=2), encoding="utf-8")
        return path


# -- Amp, Cline and Roo Code, Continue, OpenHands, OpenCode, Crush (section 5) --------------


def _result_of(result: Any) -> tuple[Any, bool]:
    """(text, is_error) of a builder's result: a text, or ``("error", text)``."""
    if isinstance(result, tuple):
        return result[1], True
    return result, False


class AmpThread:
    """An Amp thread (``threads/T-<id>.json``) being written message by message: each
    `step` is one assistant message (its usage is that request) and a user message with
    each call's ``tool_result`` (``toolUseID``, ``run: {status, result}``)."""

    def __init__(self, thread_id: str = "T-5e3a0d2c-7f41-4b6a-9c11-0a1b2c3d4e5f") -> None:
        self.id = thread_id
        self.messages: list[dict[str, Any]] = []
        self.tokens = 1000

    def _message(self, role: str, content: list[Any], **extra: Any) -> None:
        self.messages.append({"role": role, "messageId": len(self.messages), "content": content, **extra})

    def user(self, text: str) -> None:
        self._message("user", [{"type": "text", "text": text}])

    @staticmethod
    def call(name: str, **input: Any) -> dict[str, Any]:
        return {"type": "tool_use", "id": f"toolu_{next(_ids):04d}", "name": name, "input": input}

    @classmethod
    def explore(cls, query: str = "q", name: str = "mcp__codegraph__codegraph_explore") -> dict[str, Any]:
        return cls.call(name, query=query)

    def step(
        self, *calls: dict[str, Any], results: list[Any] | None = None, text: str = "",
        prompt_tokens: int | None = None, thinking: str = "",
    ) -> None:  # fmt: skip
        """One model response; each result is a text, ``("error", text)``, a dict (the run's
        ``result`` as it is), or None (cancelled)."""
        self.tokens += 500
        prompt = self.tokens if prompt_tokens is None else prompt_tokens
        content: list[dict[str, Any]] = []
        if thinking:
            content.append({"type": "thinking", "thinking": thinking})
        if text:
            content.append({"type": "text", "text": text})
        content += calls
        usage = {"model": "claude-sonnet-4", "inputTokens": 10, "outputTokens": 60,
                 "cacheCreationInputTokens": 200, "cacheReadInputTokens": prompt - 210}  # fmt: skip
        self._message("assistant", content, state={"type": "complete",
                      "stopReason": "tool_use" if calls else "end_turn"}, usage=usage)  # fmt: skip
        if not calls:
            return
        blocks = []
        for call, result in zip(calls, results or ["ok"] * len(calls), strict=True):
            if result is None:
                run: dict[str, Any] = {"status": "cancelled"}
            elif isinstance(result, tuple):
                run = {"status": "error", "error": {"message": result[1]}}
            elif isinstance(result, str) and "codegraph" in call["name"]:
                run = {"status": "done", "result": [{"type": "text", "text": result}]}  # an MCP result
            elif isinstance(result, str) and call["name"] == "Bash":
                run = {"status": "done", "result": {"output": result, "exitCode": 0}}
            else:
                run = {"status": "done", "result": result}
            blocks.append({"type": "tool_result", "toolUseID": call["id"], "run": run})
        self._message("user", blocks)

    def finish(self, text: str = "Done.") -> None:
        self.step(text=text)

    def document(self) -> dict[str, Any]:
        return {"v": len(self.messages), "id": self.id, "created": 1767865803494,
                "env": {"initial": {"trees": [{"displayName": "t", "uri": "file:///work/t"}]}},
                "messages": self.messages, "usageLedger": {"events": []}}  # fmt: skip

    def write(self, path: Path) -> Path:
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(json.dumps(self.document(), indent=2), encoding="utf-8")
        return path


class ClineTask:
    """A Cline (or Roo Code) task folder being written: ``api_conversation_history.json``
    (native ``tool_use``/``tool_result`` blocks, or the older ``form="xml"``: calls as XML in
    the assistant's text, results as ``[tool for 'x'] Result:`` user text) and
    ``ui_messages.json`` (an ``api_req_started`` per request with its token figures, and
    what the user saw of each call)."""

    def __init__(self, form: str = "native", task_id: str = "1767865803494") -> None:
        assert form in ("native", "xml")
        self.form = form
        self.task_id = task_id
        self.api: list[dict[str, Any]] = []
        self.ui: list[dict[str, Any]] = []
        self.ts = 1767865803494
        self.tokens = 1000

    def _ui(self, kind: str, what: str, text: str, **extra: Any) -> None:
        self.ts += 1000
        self.ui.append({"ts": self.ts, "type": kind, kind: what, "text": text, **extra})

    def user(self, text: str) -> None:
        self._ui("say", "task", text)
        self.api.append({"role": "user", "content": [{"type": "text", "text": f"<task>\n{text}\n</task>"}]})

    @staticmethod
    def call(name: str, **input: Any) -> dict[str, Any]:
        return {"type": "tool_use", "id": f"toolu_{next(_ids):04d}", "name": name, "input": input}

    @classmethod
    def explore(
        cls, query: str = "q", server: str = "codegraph", tool: str = "codegraph_explore"
    ) -> dict[str, Any]:
        return cls.call(
            "use_mcp_tool", server_name=server, tool_name=tool, arguments=json.dumps({"query": query})
        )

    @staticmethod
    def _xml(call: dict[str, Any]) -> str:
        params = "".join(f"<{k}>\n{v}\n</{k}>\n" for k, v in call["input"].items())
        return f"<{call['name']}>\n{params}</{call['name']}>"

    def _ui_call(self, call: dict[str, Any], text: str, error: bool) -> None:
        name, args = call["name"], call["input"]
        if name == "use_mcp_tool":
            request = {"type": "use_mcp_tool", "serverName": args["server_name"],
                       "toolName": args["tool_name"], "arguments": args["arguments"]}  # fmt: skip
            self._ui("ask", "use_mcp_server", json.dumps(request))
            self._ui("say", "error" if error else "mcp_server_response", text)
        elif name == "execute_command":
            self._ui("ask", "command", args["command"])
            self._ui("say", "command_output", text)
        elif name == "new_task":
            self._ui("ask", "new_task", args.get("message", ""))
        else:
            tool = {"read_file": "readFile", "search_files": "searchFiles", "list_files": "listFilesTopLevel",
                    "update_todo_list": "updateTodoList", "write_to_file": "newFileCreated",
                    "replace_in_file": "editedExistingFile"}  # fmt: skip
            self._ui("say", "tool", json.dumps({"tool": tool.get(name, name), **args, "content": text}))

    def step(
        self, *calls: dict[str, Any], results: list[Any] | None = None, text: str = "",
        prompt_tokens: int | None = None,
    ) -> None:  # fmt: skip
        """One request: its ``api_req_started``, the assistant message, then each call's
        result (a text or ``("error", text)``)."""
        self.tokens += 500
        prompt = self.tokens if prompt_tokens is None else prompt_tokens
        self._ui("say", "api_req_started", json.dumps({"request": "...", "tokensIn": 12, "tokensOut": 80,
                 "cacheWrites": 300, "cacheReads": prompt - 312, "cost": 0.01}))  # fmt: skip
        if text:
            self._ui("say", "text", text)
        if self.form == "native":
            content: list[dict[str, Any]] = ([{"type": "text", "text": text}] if text else []) + list(calls)
        else:
            body = "\n\n".join([text, *map(self._xml, calls)]) if calls else text
            content = [{"type": "text", "text": body}]
        self.api.append({"role": "assistant", "content": content})
        if not calls:
            return
        blocks: list[dict[str, Any]] = []
        for call, result in zip(calls, results or ["ok"] * len(calls), strict=True):
            out, error = _result_of(result)
            if error:
                out = f"The tool execution failed with the following error:\n<error>\n{out}\n</error>"
            self._ui_call(call, out, error)
            if self.form == "native":
                blocks.append(
                    {"type": "tool_result", "tool_use_id": call["id"], "content": out, "is_error": error}
                )
            else:
                what = call["input"].get("path") or call["input"].get("server_name") or ""
                blocks += [{"type": "text", "text": f"[{call['name']} for '{what}'] Result:"},
                           {"type": "text", "text": out}]  # fmt: skip
        self.api.append({"role": "user", "content": blocks})

    def finish(self, text: str = "Done.") -> None:
        """``attempt_completion``: its result is the answer."""
        call = self.call("attempt_completion", result=text)
        self.step(call)
        del self.api[-1]  # the completion is the task's last act: nothing answers it
        del self.ui[-1]
        self._ui("say", "completion_result", text)

    def write(self, folder: Path, files: tuple[str, ...] = ("api", "ui")) -> Path:
        folder.mkdir(parents=True, exist_ok=True)
        if "api" in files:
            (folder / "api_conversation_history.json").write_text(json.dumps(self.api), encoding="utf-8")
        if "ui" in files:
            (folder / "ui_messages.json").write_text(json.dumps(self.ui), encoding="utf-8")
        (folder / "task_metadata.json").write_text('{"files_in_context": []}', encoding="utf-8")
        return folder


class ContinueSession:
    """A Continue session (``sessions/<sessionId>.json``) being written: each `step` is an
    assistant message with its ``toolCalls`` and ``toolCallStates``, then a ``role: "tool"``
    message per call."""

    def __init__(self, session_id: str = "c0n7-1a2b-session") -> None:
        self.session_id = session_id
        self.history: list[dict[str, Any]] = []

    def user(self, text: str) -> None:
        self.history.append({"message": {"role": "user", "content": text}, "contextItems": []})

    @staticmethod
    def call(name: str, **args: Any) -> dict[str, Any]:
        return {"id": f"call_{next(_ids):04d}", "type": "function",
                "function": {"name": name, "arguments": json.dumps(args)}}  # fmt: skip

    @classmethod
    def explore(cls, query: str = "q", name: str = "codegraph_explore") -> dict[str, Any]:
        return cls.call(name, query=query)

    def step(self, *calls: dict[str, Any], results: list[Any] | None = None, text: str = "") -> None:
        """One assistant message; each result is a text, ``("error", text)`` or None (never
        answered: no tool message, and the state has no output)."""
        states = []
        messages = []
        for call, result in zip(calls, results or ["ok"] * len(calls), strict=True):
            state = {"toolCallId": call["id"], "toolCall": call, "parsedArgs": json.loads(call["function"]
                     ["arguments"]), "status": "done"}  # fmt: skip
            if result is None:
                state["status"] = "canceled"
            else:
                out, error = _result_of(result)
                state["status"] = "errored" if error else "done"
                state["output"] = [{"name": "Tool output", "description": "", "content": out}]
                messages.append({"message": {"role": "tool", "content": out, "toolCallId": call["id"]},
                                 "contextItems": []})  # fmt: skip
            states.append(state)
        message: dict[str, Any] = {"role": "assistant", "content": text}
        if calls:
            message["toolCalls"] = list(calls)
        self.history.append({"message": message, "contextItems": [], "toolCallStates": states})
        self.history += messages

    def finish(self, text: str = "Done.") -> None:
        self.step(text=text)

    def document(self) -> dict[str, Any]:
        return {"sessionId": self.session_id, "title": "where is f", "workspaceDirectory": "file:///work/t",
                "history": self.history}  # fmt: skip

    def write(self, path: Path) -> Path:
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(json.dumps(self.document()), encoding="utf-8")
        return path


class OpenHandsSession:
    """An OpenHands V0 session folder (``sessions/<id>/events/<n>.json``, one event a file,
    and ``metadata.json``) being written: each `step` is one model response, its actions
    (``tool_call_metadata`` naming the response and its ``usage``) and their observations
    (``cause``: the action's id)."""

    def __init__(self, session_id: str = "0h5e55") -> None:
        self.session_id = session_id
        self.events: list[dict[str, Any]] = []
        self.tokens = 1000

    def _event(self, **fields: Any) -> dict[str, Any]:
        ev = {"id": len(self.events), "timestamp": _stamp(), **fields}
        self.events.append(ev)
        return ev

    def user(self, text: str) -> None:
        self._event(source="user", message=text, action="message", args={"content": text})

    @staticmethod
    def call(action: str, **args: Any) -> dict[str, Any]:
        functions = {
            "run": "execute_bash",
            "read": "str_replace_editor",
            "edit": "str_replace_editor",
            "think": "think",
            "delegate": "delegate",
        }
        return {
            "action": action,
            "args": args,
            "function": functions.get(action, action),
            "tool_call_id": f"toolu_{next(_ids):04d}",
        }

    @classmethod
    def explore(cls, query: str = "q", name: str = "codegraph_explore") -> dict[str, Any]:
        call = cls.call("call_tool_mcp", name=name, arguments={"query": query})
        call["function"] = name
        return call

    def step(
        self,
        *calls: dict[str, Any],
        results: list[Any] | None = None,
        text: str = "",
        prompt_tokens: int | None = None,
    ) -> None:
        """One model response; each result is a text, ``("error", text)`` or None (no observation)."""
        self.tokens += 500
        prompt = self.tokens if prompt_tokens is None else prompt_tokens
        response = {
            "id": f"chatcmpl-{next(_ids)}",
            "model": "claude-sonnet-4",
            "usage": {
                "prompt_tokens": prompt,
                "completion_tokens": 60,
                "prompt_tokens_details": {"cached_tokens": prompt // 2},
            },
        }
        if text and not calls:
            meta = {
                "function_name": "message",
                "tool_call_id": "none",
                "model_response": response,
                "total_calls_in_response": 0,
            }
            self._event(
                source="agent",
                message=text,
                action="message",
                args={"content": text},
                tool_call_metadata=meta,
            )
            return
        actions = []
        for call in calls:
            meta = {
                "function_name": call["function"],
                "tool_call_id": call["tool_call_id"],
                "model_response": response,
                "total_calls_in_response": len(calls),
            }
            args = {**call["args"], "thought": text}
            actions.append(
                self._event(
                    source="agent", message="", action=call["action"], args=args, tool_call_metadata=meta
                )
            )
        for action, call, result in zip(actions, calls, results or ["ok"] * len(calls), strict=True):
            if result is None:
                continue
            out, error = _result_of(result)
            kind = {"run": "run", "read": "read", "edit": "edit", "call_tool_mcp": "mcp"}.get(
                call["action"], "x"
            )
            content = out
            if kind == "mcp" and not error:
                content = json.dumps(
                    {"meta": None, "content": [{"type": "text", "text": out}], "isError": False}
                )
            self._event(
                source="agent",
                message="",
                cause=action["id"],
                observation="error" if error else kind,
                content=content,
                extras={"exit_code": 0} if kind == "run" else {},
            )

    def finish(self, text: str = "Done.") -> None:
        self.tokens += 500
        response = {"id": f"chatcmpl-{next(_ids)}", "usage": {"prompt_tokens": self.tokens}}
        self._event(
            source="agent",
            message="",
            action="finish",
            args={"final_thought": text, "outputs": {}},
            tool_call_metadata={
                "function_name": "finish",
                "tool_call_id": f"toolu_{next(_ids):04d}",
                "model_response": response,
                "total_calls_in_response": 1,
            },
        )

    def condense(self) -> None:
        self._event(
            source="agent",
            message="",
            action="condensation",
            args={"forgotten_events_start_id": 1, "forgotten_events_end_id": len(self.events) - 1},
        )

    def write(self, folder: Path) -> Path:
        (folder / "events").mkdir(parents=True, exist_ok=True)
        for ev in self.events:
            (folder / "events" / f"{ev['id']}.json").write_text(json.dumps(ev), encoding="utf-8")
        (folder / "metadata.json").write_text(
            json.dumps({"accumulated_cost": 0.1, "selected_repository": None}), encoding="utf-8"
        )
        return folder


class OpenHandsConversation:
    """An OpenHands software-agent-sdk conversation folder being written: ``base_state.json``
    (``stats.usage_to_metrics.<llm>.token_usages``, one per completion, by ``response_id``)
    and ``events/event-<index>-<id>.json``. Each `step` is one model response: its
    ``ActionEvent`` s (``llm_response_id``) and their ``ObservationEvent`` s (by
    ``tool_call_id``)."""

    def __init__(self, conversation_id: str = "5dc0c0a1-7e2f-4c4e-9b1a-2f3c4d5e6f70") -> None:
        self.id = conversation_id
        self.events: list[dict[str, Any]] = []
        self.usages: list[dict[str, Any]] = []
        self.tokens = 1000
        self._event(
            "SystemPromptEvent",
            source="agent",
            system_prompt={"type": "text", "text": "You are OpenHands agent."},
            tools=[],
        )

    def _event(self, kind: str, **fields: Any) -> dict[str, Any]:
        ev = {
            "kind": kind,
            "id": f"{next(_ids):08x}-0000-4000-8000-000000000000",
            "timestamp": _stamp(),
            **fields,
        }
        self.events.append(ev)
        return ev

    def user(self, text: str) -> None:
        self._event(
            "MessageEvent",
            source="user",
            llm_message={"role": "user", "content": [{"type": "text", "text": text}]},
        )

    @staticmethod
    def call(tool: str, kind: str = "", **args: Any) -> dict[str, Any]:
        return {
            "tool": tool,
            "kind": kind or f"{tool.title().replace('_', '')}Action",
            "args": args,
            "id": f"toolu_{next(_ids):04d}",
        }

    @classmethod
    def explore(cls, query: str = "q", name: str = "codegraph_explore") -> dict[str, Any]:
        return cls.call(name, "MCPToolAction", query=query)

    def _response(self, prompt_tokens: int | None) -> str:
        self.tokens += 500
        rid = f"chatcmpl-{next(_ids)}"
        prompt = self.tokens if prompt_tokens is None else prompt_tokens
        self.usages.append(
            {
                "model": "claude-sonnet-4",
                "prompt_tokens": prompt,
                "completion_tokens": 60,
                "cache_read_tokens": prompt // 2,
                "cache_write_tokens": 0,
                "reasoning_tokens": 0,
                "context_window": 200000,
                "per_turn_token": prompt + 60,
                "response_id": rid,
            }
        )
        return rid

    def step(
        self,
        *calls: dict[str, Any],
        results: list[Any] | None = None,
        text: str = "",
        prompt_tokens: int | None = None,
    ) -> None:
        """One model response; each result is a text, ``("error", text)``, ``("rejected", text)``
        or None (no observation)."""
        rid = self._response(prompt_tokens)
        if text and not calls:
            self._event(
                "MessageEvent",
                source="agent",
                llm_response_id=rid,
                llm_message={"role": "assistant", "content": [{"type": "text", "text": text}]},
            )
            return
        actions = []
        for i, call in enumerate(calls):
            thought = [{"type": "text", "text": text}] if text and i == 0 else []
            actions.append(
                self._event(
                    "ActionEvent",
                    source="agent",
                    thought=thought,
                    tool_name=call["tool"],
                    tool_call_id=call["id"],
                    llm_response_id=rid,
                    security_risk="UNKNOWN",
                    action={"kind": call["kind"], **call["args"]},
                    tool_call={
                        "id": call["id"],
                        "name": call["tool"],
                        "arguments": json.dumps(call["args"]),
                        "origin": "completion",
                    },
                )
            )
        for action, call, result in zip(actions, calls, results or ["ok"] * len(calls), strict=True):
            if result is None:
                continue
            if isinstance(result, tuple) and result[0] == "rejected":
                self._event(
                    "UserRejectObservation",
                    source="environment",
                    tool_name=call["tool"],
                    tool_call_id=call["id"],
                    action_id=action["id"],
                    rejection_reason=result[1],
                )
                continue
            out, error = _result_of(result)
            self._event(
                "ObservationEvent",
                source="environment",
                tool_name=call["tool"],
                tool_call_id=call["id"],
                action_id=action["id"],
                observation={
                    "kind": call["kind"].replace("Action", "Observation"),
                    "content": [{"type": "text", "text": out}],
                    "is_error": error,
                },
            )

    def finish(self, text: str = "Done.") -> None:
        call = self.call("finish", message=text)
        self.step(call, results=[text])

    def condense(self) -> None:
        self._event(
            "Condensation",
            source="environment",
            forgotten_event_ids=[e["id"] for e in self.events[1:3]],
            summary="what happened so far",
            summary_offset=1,
        )

    def write(self, folder: Path) -> Path:
        (folder / "events").mkdir(parents=True, exist_ok=True)
        for i, ev in enumerate(self.events):
            (folder / "events" / f"event-{i:05d}-{ev['id']}.json").write_text(
                json.dumps(ev), encoding="utf-8"
            )
        state = {
            "id": self.id,
            "agent": {"kind": "Agent", "llm": {"model": "claude-sonnet-4", "usage_id": "agent"}},
            "workspace": {"kind": "LocalWorkspace", "working_dir": "/work/t"},
            "execution_status": "finished",
            "stats": {
                "usage_to_metrics": {
                    "agent": {
                        "model_name": "claude-sonnet-4",
                        "accumulated_cost": 0.1,
                        "token_usages": self.usages,
                        "costs": [],
                        "response_latencies": [],
                    }
                }
            },
        }
        (folder / "base_state.json").write_text(json.dumps(state, indent=2), encoding="utf-8")
        return folder


class OpenCodeSession:
    """An OpenCode session: messages ``(info, parts)`` as its database and its export hold
    them. Each `step` is one assistant message of one model request (``step-start``, text,
    ``tool`` parts with their state, ``step-finish`` with the request's ``tokens``)."""

    def __init__(self, session_id: str = "ses_0c1f", parent: str | None = None) -> None:
        self.id = session_id
        self.parent = parent
        self.messages: list[tuple[dict[str, Any], list[dict[str, Any]]]] = []
        self.tokens = 1000

    def _message(self, role: str, parts: list[dict[str, Any]], **info: Any) -> None:
        mid = f"msg_{next(_ids):06d}"
        for part in parts:
            part.update({"id": f"prt_{next(_ids):06d}", "messageID": mid, "sessionID": self.id})
        self.messages.append(
            (
                {
                    "id": mid,
                    "sessionID": self.id,
                    "role": role,
                    "time": {"created": 1767865803494 + len(self.messages)},
                    **info,
                },
                parts,
            )
        )

    def user(self, text: str) -> None:
        self._message("user", [{"type": "text", "text": text}])

    @staticmethod
    def call(name: str, **input: Any) -> dict[str, Any]:
        return {
            "type": "tool",
            "callID": f"call_{next(_ids):04d}",
            "tool": name,
            "state": {"status": "pending", "input": input},
        }

    @classmethod
    def explore(cls, query: str = "q", name: str = "codegraph_codegraph_explore") -> dict[str, Any]:
        return cls.call(name, query=query)

    def step(
        self,
        *calls: dict[str, Any],
        results: list[Any] | None = None,
        text: str = "",
        prompt_tokens: int | None = None,
    ) -> None:
        """One request; each result is a text, ``("error", text)`` or None (still running)."""
        self.tokens += 500
        prompt = self.tokens if prompt_tokens is None else prompt_tokens
        parts: list[dict[str, Any]] = [{"type": "step-start"}]
        if text:
            parts.append({"type": "text", "text": text})
        for call, result in zip(calls, results or ["ok"] * len(calls), strict=True):
            call = json.loads(json.dumps(call))
            state = call["state"]
            if result is None:
                state["status"] = "running"
            else:
                out, error = _result_of(result)
                if error:
                    state.update(status="error", error=out)
                else:
                    state.update(status="completed", output=out, title="", metadata=call.pop("metadata", {}))
            state["time"] = {"start": 1, "end": 2}
            call.pop("metadata", None)
            parts.append(call)
        tokens = {"input": 10, "output": 60, "reasoning": 0, "cache": {"read": prompt - 310, "write": 300}}
        parts.append({"type": "step-finish", "reason": "tool-calls" if calls else "stop", "tokens": tokens})
        self._message("assistant", parts, modelID="claude-sonnet-4", providerID="anthropic", tokens=tokens)

    def delegate(self, child: OpenCodeSession, *, named: bool = True) -> dict[str, Any]:
        """A ``task`` call whose subagent is ``child`` (named in the call's metadata, or not)."""
        call = self.call(
            "task", description="look into it", prompt="find where f is", subagent_type="general"
        )
        if named:
            call["metadata"] = {"sessionId": child.id}
        self.step(call, results=["the subagent's answer"])
        return call

    def compact(self) -> None:
        self._message("user", [{"type": "compaction", "auto": True}])

    def finish(self, text: str = "Done.") -> None:
        self.step(text=text)

    def export(self) -> dict[str, Any]:
        return {
            "info": {"id": self.id, "parentID": self.parent, "title": "where is f", "version": "1.0.0"},
            "messages": [{"info": info, "parts": parts} for info, parts in self.messages],
        }


OPENCODE_SCHEMA = """
    CREATE TABLE session (id TEXT PRIMARY KEY, project_id TEXT, parent_id TEXT, slug TEXT, directory TEXT,
        title TEXT, version TEXT, time_created INTEGER, time_updated INTEGER);
    CREATE TABLE message (id TEXT PRIMARY KEY, session_id TEXT, time_created INTEGER,
        time_updated INTEGER, data TEXT);
    CREATE TABLE part (id TEXT PRIMARY KEY, message_id TEXT, session_id TEXT, time_created INTEGER,
        time_updated INTEGER, data TEXT);
    CREATE TABLE account (id TEXT PRIMARY KEY, email TEXT, access_token TEXT);
    INSERT INTO account VALUES ('acc_1', 'dev@example.com', 'SECRET-ACCESS-TOKEN');
"""
#: The columns of a database's rows that hold a JSON document (written as its text).
JSON_COLUMNS = frozenset({"data", "parts"})


def opencode_rows(sessions: list[OpenCodeSession]) -> dict[str, list[dict[str, Any]]]:
    """The rows of ``sessions`` in OpenCode's tables, each a dict of its columns (``data``: the
    message's or part's JSON document, less the ids the row's own columns hold)."""
    rows: dict[str, list[dict[str, Any]]] = {"session": [], "message": [], "part": []}
    for n, s in enumerate(sessions):
        rows["session"].append(
            {
                "id": s.id,
                "project_id": "prj",
                "parent_id": s.parent,
                "slug": "slug",
                "directory": "/work/t",
                "title": "where is f",
                "version": "1.0.0",
                "time_created": 1767865803494 + n,
                "time_updated": 1767865803494 + n,
            }
        )
        for info, parts in s.messages:
            stamp = info["time"]["created"]
            rows["message"].append(
                {
                    "id": info["id"],
                    "session_id": s.id,
                    "time_created": stamp,
                    "time_updated": stamp,
                    "data": {k: v for k, v in info.items() if k not in ("id", "sessionID")},
                }
            )
            for part in parts:
                pdata = {k: v for k, v in part.items() if k not in ("id", "messageID", "sessionID")}
                rows["part"].append(
                    {
                        "id": part["id"],
                        "message_id": info["id"],
                        "session_id": s.id,
                        "time_created": stamp,
                        "time_updated": stamp,
                        "data": pdata,
                    }
                )
    return rows


def write_rows(conn: Any, rows: dict[str, list[dict[str, Any]]]) -> None:
    """Insert ``rows`` (table -> its rows, each a dict of its columns), the JSON columns as text."""
    for table, table_rows in rows.items():
        for row in table_rows:
            names = ", ".join(row)
            conn.execute(
                f"INSERT INTO {table} ({names}) VALUES ({', '.join('?' * len(row))})",
                [json.dumps(v) if k in JSON_COLUMNS else v for k, v in row.items()],
            )


def write_opencode_db(path: Path, sessions: list[OpenCodeSession]) -> Any:
    """An ``opencode.db`` holding ``sessions`` (and an ``account`` table no reader may touch),
    in WAL mode with every row still in the ``-wal``: the connection is returned open (closing
    it would checkpoint the WAL into the database)."""
    import sqlite3

    path.parent.mkdir(parents=True, exist_ok=True)
    conn = sqlite3.connect(path)
    conn.execute("PRAGMA journal_mode=WAL")
    conn.execute("PRAGMA wal_autocheckpoint=0")
    conn.executescript(OPENCODE_SCHEMA)
    write_rows(conn, opencode_rows(sessions))
    conn.commit()
    return conn


class CrushSession:
    """A Crush session's message rows (``parts`` lists): each `step` is an assistant row with
    its ``tool_call`` parts, then a ``tool`` row with their ``tool_result`` parts."""

    def __init__(self, session_id: str = "crush-1", parent: str | None = None) -> None:
        self.id = session_id
        self.parent = parent
        self.rows: list[tuple[str, str, list[dict[str, Any]]]] = []  # (id, role, parts)

    def _row(self, role: str, parts: list[dict[str, Any]]) -> None:
        self.rows.append((f"m-{next(_ids):06d}", role, parts))

    def user(self, text: str) -> None:
        self._row("user", [{"type": "text", "data": {"text": text}}])

    @staticmethod
    def call(name: str, **input: Any) -> dict[str, Any]:
        return {"id": f"toolu_{next(_ids):04d}", "name": name, "input": json.dumps(input), "finished": True}

    @classmethod
    def explore(cls, query: str = "q", name: str = "mcp_codegraph_codegraph_explore") -> dict[str, Any]:
        return cls.call(name, query=query)

    def step(self, *calls: dict[str, Any], results: list[Any] | None = None, text: str = "") -> None:
        parts: list[dict[str, Any]] = [{"type": "text", "data": {"text": text}}] if text else []
        parts += [{"type": "tool_call", "data": c} for c in calls]
        parts.append({"type": "finish", "data": {"reason": "tool_use" if calls else "end_turn", "time": 1}})
        self._row("assistant", parts)
        if not calls:
            return
        out_parts = []
        for call, result in zip(calls, results or ["ok"] * len(calls), strict=True):
            if result is None:
                continue
            out, error = _result_of(result)
            out_parts.append(
                {
                    "type": "tool_result",
                    "data": {
                        "tool_call_id": call["id"],
                        "name": call["name"],
                        "content": out,
                        "metadata": "",
                        "is_error": error,
                    },
                }
            )
        self._row("tool", out_parts)

    def delegate(self, child: CrushSession) -> dict[str, Any]:
        """An ``agent`` call; Crush makes its subagent's session with the call's id."""
        call = self.call("agent", prompt="find where f is")
        child.id = call["id"]
        child.parent = self.id
        self.step(call, results=["the subagent's answer"])
        return call

    def finish(self, text: str = "Done.") -> None:
        self.step(text=text)


CRUSH_SCHEMA = """
    CREATE TABLE sessions (id TEXT PRIMARY KEY, parent_session_id TEXT, title TEXT, message_count INTEGER,
        prompt_tokens INTEGER, completion_tokens INTEGER, cost REAL, updated_at INTEGER,
        created_at INTEGER, summary_message_id TEXT);
    CREATE TABLE messages (id TEXT PRIMARY KEY, session_id TEXT, role TEXT, parts TEXT, model TEXT,
        created_at INTEGER, updated_at INTEGER, finished_at INTEGER, provider TEXT);
"""


def crush_rows(sessions: list[CrushSession]) -> dict[str, list[dict[str, Any]]]:
    """The rows of ``sessions`` in Crush's tables, each a dict of its columns (``parts``: the
    message's JSON list)."""
    rows: dict[str, list[dict[str, Any]]] = {"sessions": [], "messages": []}
    n = 0
    for s in sessions:
        rows["sessions"].append(
            {
                "id": s.id,
                "parent_session_id": s.parent,
                "title": "where is f",
                "message_count": len(s.rows),
                "prompt_tokens": 52000,
                "completion_tokens": 1800,
                "cost": 0.12,
                "updated_at": n,
                "created_at": n,
                "summary_message_id": None,
            }
        )
        for mid, role, parts in s.rows:
            n += 1
            rows["messages"].append(
                {
                    "id": mid,
                    "session_id": s.id,
                    "role": role,
                    "parts": parts,
                    "model": "qwen3-coder",
                    "created_at": n,
                    "updated_at": n,
                    "finished_at": n,
                    "provider": "local",
                }
            )
    return rows


def write_crush_db(path: Path, sessions: list[CrushSession]) -> None:
    """A ``crush.db`` holding ``sessions`` (tokens per session only)."""
    import sqlite3

    path.parent.mkdir(parents=True, exist_ok=True)
    conn = sqlite3.connect(path)
    conn.execute("PRAGMA journal_mode=WAL")
    conn.executescript(CRUSH_SCHEMA)
    write_rows(conn, crush_rows(sessions))
    conn.commit()
    conn.close()


def mixed_estimated_campaign(root: Path) -> Path:
    """Arm ``with``: a Copilot session (occupancy estimated, M10) and a Qwen chat (measured);
    arm ``without``: a Claude Code run (measured)."""
    s = CopilotSession()
    s.user("find f")
    s.step(s.explore(), results=[explore_text(["lib/a.py"]) + "t" * 2000])
    s.step(s.call("view", path="lib/a.py"), results=["r" * 1000])
    s.finish("done")
    s.shutdown(current=12000, system=1000, tools=1000)
    s.write(root / "q1" / "run-with-1.jsonl")
    chat = QwenChat()
    chat.step(chat.explore(), results=[explore_text(["lib/a.py"])])
    chat.finish()
    chat.write(root / "q1" / "run-with-2.jsonl")
    run = Run()
    run.step(run.use("Grep", pattern="f"), "lib/a.js")
    run.finish()
    with_usage(run, 5000).write(root / "q1" / "run-without-1.jsonl")
    return root


def write_opencode_storage(root: Path, sessions: list[OpenCodeSession], project: str = "prj_0c1f") -> Path:
    """OpenCode's legacy JSON storage under ``root/storage``: a document per session
    (``session/<project>/<id>.json``, with ``parentID`` for a subagent's), per message
    (``message/<session id>/<id>.json``) and per part (``part/<message id>/<id>.json``)."""
    storage = root / "storage"
    for n, s in enumerate(sessions):
        info: dict[str, Any] = {
            "id": s.id,
            "projectID": project,
            "directory": "/work/t",
            "title": "where is f",
            "version": "0.9.0",
            "time": {"created": 1767865803494 + n, "updated": 1767865803494 + n},
        }
        if s.parent:
            info["parentID"] = s.parent
        (storage / "session" / project).mkdir(parents=True, exist_ok=True)
        (storage / "session" / project / f"{s.id}.json").write_text(json.dumps(info, indent=2))
        for message, parts in s.messages:
            (storage / "message" / s.id).mkdir(parents=True, exist_ok=True)
            (storage / "message" / s.id / f"{message['id']}.json").write_text(json.dumps(message, indent=2))
            for part in parts:
                (storage / "part" / message["id"]).mkdir(parents=True, exist_ok=True)
                (storage / "part" / message["id"] / f"{part['id']}.json").write_text(
                    json.dumps(part, indent=2)
                )
    return storage
