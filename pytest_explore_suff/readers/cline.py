"""Cline and Roo Code tasks (VS Code global storage, ``tasks/<taskId>/``).

One transcript per task folder, from two files:

- ``api_conversation_history.json``, the model's messages (a list of Anthropic
  message params): preferred, it has the calls. Newer versions write native
  ``tool_use``/``tool_result`` blocks; older ones write each call as XML in the
  assistant's text (``<read_file><path>a.py</path></read_file>``, ``<use_mcp_tool>
  <server_name>..<tool_name>..<arguments>..``) and its result as user text
  ``[read_file for 'a.py'] Result:`` (paired with the calls in order).
- ``ui_messages.json`` (``claude_messages.json`` in early versions), what the user
  saw: ``{type: "say"|"ask", say|ask, text, ts}``. Each ``say: "api_req_started"``
  holds one request's ``{tokensIn, tokensOut, cacheWrites, cacheReads}``: its window
  is ``tokensIn + cacheWrites + cacheReads``, paired in order with the assistant
  messages of the API history. Alone (no API history), it is read for the calls too:
  ``tool`` (``{tool, path, content}``), ``command`` then its ``command_output``,
  ``use_mcp_server`` then its ``mcp_server_response``, or an ``error`` when it failed
  (paired by order: the file has no call ids); ``completion_result`` is the answer.

Tools: ``read_file`` reads, ``search_files``/``codebase_search`` are Greps,
``list_files``/``list_code_definition_names`` Globs, ``execute_command`` shell
commands, ``update_todo_list``/``focus_chain`` bookkeeping, ``use_mcp_tool`` an MCP
call named ``mcp__<server>__<tool>``, ``new_task`` a delegation (its task is a folder
of its own: judged as a subagent whose steps are not in this task), and
``attempt_completion``'s ``result`` is the answer (not a call).
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from typing import Any

from ..events import Collector
from ..sources import logical_name
from . import claims
from .base import NotATranscript, TranscriptError
from .tools import Feed, Tools, arguments, content_text, json_text, read_document

API_HISTORY = "api_conversation_history.json"
UI_MESSAGES = ("ui_messages.json", "claude_messages.json")
PATTERN = claims.CLINE
TOOLS = Tools(
    read={"read_file": ("path", "paths")},
    grep=frozenset({"search_files", "codebase_search"}),
    glob=frozenset({"list_files", "list_code_definition_names"}),
    shell={"execute_command": ("command",)},
    delegate=frozenset({"new_task"}),
    bookkeeping=frozenset({"update_todo_list", "focus_chain", "switch_mode"}),
)
MCP_TOOL = "use_mcp_tool"
ANSWER_TOOL = "attempt_completion"
#: Every tool an older version wrote as XML: only these tags are calls.
XML_TOOLS = frozenset({
    "read_file", "write_to_file", "replace_in_file", "apply_diff", "insert_content", "search_and_replace",
    "search_files", "codebase_search", "list_files", "list_code_definition_names", "execute_command",
    "use_mcp_tool", "access_mcp_resource", "ask_followup_question", "attempt_completion", "new_task",
    "plan_mode_respond", "browser_action", "web_fetch", "update_todo_list", "switch_mode",
    "fetch_instructions", "load_mcp_documentation", "new_rule", "condense", "summarize_task",
})  # fmt: skip
_XML_CALL = re.compile(r"<(?P<tag>[a-z_]+)>(?P<body>.*?)</(?P=tag)>", re.S)
_XML_PARAM = re.compile(r"<(?P<tag>[a-z_]+)>\n?(?P<value>.*?)\n?</(?P=tag)>", re.S)
_XML_RESULT = re.compile(r"^\[(?P<tool>[a-z_]+)(?: for [^\]]*)?\] Result:", re.M)
#: The user's words in the API history: the task (``<task>``; Roo Code's later messages
#: ``<user_message>``), beside the ``<environment_details>`` the extension adds.
_TASK = re.compile(r"\A\s*<(task|user_message)>\n?(?P<text>.*?)\n?</\1>\s*\Z", re.S)


def _task(text: str) -> str:
    """A user text block of the API history, less the tags that wrap the user's words."""
    m = _TASK.match(text)
    return m["text"] if m else text
#: UI ``tool`` messages' ``tool`` field, as the API's names.
UI_TOOLS = {
    "readFile": "read_file", "listFilesTopLevel": "list_files", "listFilesRecursive": "list_files",
    "listCodeDefinitionNames": "list_code_definition_names", "searchFiles": "search_files",
    "codebaseSearch": "codebase_search", "updateTodoList": "update_todo_list",
}  # fmt: skip


def group(rel: str) -> str | None:
    """A task's files belong to its folder."""
    return rel.rpartition("/")[0]


def looks_like_task(head: bytes) -> bool:
    """The first bytes of an API history (a list of ``{role, content}``) or a UI log (a list
    of ``{ts, type, say|ask}``)."""
    return head[:1] == b"[" and (b'"role"' in head or (b'"ts"' in head and b'"type"' in head))


def _mcp(data: Any) -> tuple[str, Any]:
    """A ``use_mcp_tool`` call's (name, arguments)."""
    if not isinstance(data, dict):
        return MCP_TOOL, {}
    server = data.get("server_name", data.get("serverName"))
    tool = data.get("tool_name", data.get("toolName"))
    if isinstance(server, str) and server and isinstance(tool, str) and tool:
        return f"mcp__{server}__{tool}", arguments(data.get("arguments"))
    return MCP_TOOL, data


def _failed(text: str) -> bool:
    head = text.lstrip()[:200]
    return head.startswith(("<error>", "[ERROR]", "Error:")) or "The tool execution failed" in head


class _Task:
    def __init__(self, collector: Collector) -> None:
        self.c = collector
        self.feed = Feed(collector, TOOLS)
        self.pending: list[str] = []  # XML calls waiting for their result, in order
        self.answer: str | None = None

    def call(self, tid: str, name: str, data: Any, msg: str) -> None:
        if name == ANSWER_TOOL:
            result = data.get("result") if isinstance(data, dict) else None
            if isinstance(result, str):
                self.answer = result
                self.feed.said(result)
            return
        if name == MCP_TOOL:
            name, data = _mcp(data)
        self.feed.call(tid, name, data, message=msg)

    # -- the API history ------------------------------------------------------------------
    def history(self, messages: list[Any], windows: list[int]) -> None:
        requests = iter(windows)
        for i, message in enumerate(messages):
            if not isinstance(message, dict):
                continue
            content = message.get("content")
            blocks = [{"type": "text", "text": content}] if isinstance(content, str) else content
            if not isinstance(blocks, list):
                continue
            if message.get("role") == "assistant":
                self.feed.turns += 1
                ctx = next(requests, None)
                if ctx is not None:
                    self.c.timeline.request(ctx)
                self.assistant(blocks, f"#cline-{i}")
            elif message.get("role") == "user":
                self.user(blocks)

    def assistant(self, blocks: list[Any], msg: str) -> None:
        texts = []
        for j, block in enumerate(blocks):
            if not isinstance(block, dict):
                continue
            kind = block.get("type")
            if kind == "text" and isinstance(block.get("text"), str):
                texts.append(self.xml_calls(block["text"], f"{msg}-{j}", msg))
            elif kind in ("thinking", "reasoning"):
                self.feed.added(block.get(kind) or block.get("text"))
            elif kind == "tool_use" and isinstance(block.get("name"), str):
                self.call(block.get("id") or f"{msg}-{j}", block["name"], block.get("input"), msg)
        said = "".join(texts)
        if said.strip():
            self.feed.said(said)
        elif said:
            self.feed.added(said)

    def xml_calls(self, text: str, prefix: str, msg: str) -> str:
        """An older version's calls, written as XML in the text; the text without them."""
        if "</" not in text:
            return text
        kept: list[str] = []
        at = 0
        for n, m in enumerate(_XML_CALL.finditer(text)):
            tag = m["tag"]
            if tag not in XML_TOOLS:
                continue
            kept.append(text[at : m.start()])
            at = m.end()
            params = {p["tag"]: p["value"] for p in _XML_PARAM.finditer(m["body"])}
            tid = f"{prefix}-{n}"
            if tag != ANSWER_TOOL:
                self.pending.append(tid)
            self.call(tid, tag, params, msg)
        kept.append(text[at:])
        return "".join(kept)

    def user(self, blocks: list[Any]) -> None:
        texts: list[str] = []
        for block in blocks:
            if not isinstance(block, dict):
                continue
            kind = block.get("type")
            if kind == "tool_result":
                text, _ = content_text(block.get("content"))
                error = block.get("is_error") is True or _failed(text)
                self.feed.result(block.get("tool_use_id"), block.get("content"), error=error)
            elif kind == "text" and isinstance(block.get("text"), str):
                texts.append(block["text"])
        if not texts:
            return
        answered = any(isinstance(b, dict) and b.get("type") == "tool_result" for b in blocks)
        if not self.pending and not answered:
            self.c.asked(*map(_task, texts))  # the first is the task (when the UI log gave none)
        text = "\n".join(texts)
        heads = list(_XML_RESULT.finditer(text)) if self.pending else []
        if not heads:
            self.feed.added(text)
            return
        self.feed.added(text[: heads[0].start()])
        for k, head in enumerate(heads):
            end = heads[k + 1].start() if k + 1 < len(heads) else len(text)
            body = text[head.end() : end].strip("\n")
            if self.pending:
                self.feed.result(self.pending.pop(0), body, error=_failed(body))

    # -- the UI log alone -----------------------------------------------------------------
    def ui(self, messages: list[Any]) -> None:
        request = 0
        waiting: list[tuple[str, str]] = []  # (call id, what answers it: command_output, ...)
        outputs: dict[str, list[str]] = {}
        failed: set[str] = set()
        for i, m in enumerate(messages):
            if not isinstance(m, dict):
                continue
            kind = m.get(m.get("type")) if m.get("type") in ("say", "ask") else None
            text = m["text"] if isinstance(m.get("text"), str) else ""
            msg = f"#cline-ui-{request}"
            if kind == "api_req_started":
                ctx = ui_window(text)
                if ctx is not None:
                    request += 1
                    self.feed.turns += 1
                    self.c.timeline.request(ctx)
            elif kind == "text":
                self.feed.said(text)
            elif kind in ("reasoning", "task", "user_feedback"):
                self.feed.added(text)
            elif kind == "completion_result" and text:
                self.answer = text
                self.feed.said(text)
            elif kind == "tool":
                data = _json(text)
                tool = data.get("tool") if isinstance(data, dict) else None
                if isinstance(tool, str) and tool:
                    tid = f"#cline-ui-call-{i}"
                    self.call(tid, UI_TOOLS.get(tool, tool), data, msg)
                    self.feed.result(tid, data.get("content"))
            elif kind == "new_task":
                self.call(f"#cline-ui-call-{i}", "new_task", {"message": text}, msg)
            elif kind == "command":
                tid = f"#cline-ui-call-{i}"
                self.call(tid, "execute_command", {"command": text}, msg)
                waiting.append((tid, "command_output"))
            elif kind == "use_mcp_server":
                data = _json(text)
                tid = f"#cline-ui-call-{i}"
                self.call(tid, MCP_TOOL, data, msg)
                waiting.append((tid, "mcp_server_response"))
            elif kind == "error" and any(w[1] == "mcp_server_response" for w in waiting):
                # An MCP call that failed: the UI says so in place of its response.
                tid, wants = next(w for w in waiting if w[1] == "mcp_server_response")
                waiting.remove((tid, wants))
                failed.add(tid)
                outputs.setdefault(tid, []).append(text)
            elif kind in ("command_output", "mcp_server_response"):
                # The earliest call still waiting for this kind of answer (a command's output
                # may come in several messages: they go to the same call).
                for tid, wants in waiting:
                    if wants == kind:
                        outputs.setdefault(tid, []).append(text)
                        if kind == "mcp_server_response":
                            waiting.remove((tid, wants))
                        break
            if kind in ("api_req_started", "completion_result"):
                waiting = [w for w in waiting if w[1] != "command_output"]  # a command's output ends
        for tid, chunks in outputs.items():
            self.feed.result(tid, "\n".join(chunks), error=tid in failed)


def _json(text: str) -> Any:
    return json_text(text)  # a lone surrogate escape as U+FFFD, as in every line


def ui_window(text: str) -> int | None:
    """A request's window from its ``api_req_started`` text; None when it gives no figure."""
    data = _json(text)
    if not isinstance(data, dict):
        return None
    counts = [v for k in ("tokensIn", "cacheWrites", "cacheReads") if type(v := data.get(k)) is int]
    return sum(counts) if counts and type(data.get("tokensIn")) is int else None


def ui_cache(messages: Sequence[Any]) -> tuple[int, int] | None:
    """(prompt tokens, of them cache reads) over the UI log's requests (``api_req_started``:
    ``tokensIn + cacheWrites + cacheReads``, of them ``cacheReads``); None when none says
    its tokens, or one gives ``tokensIn`` without ``cacheReads``."""
    whole = hit = 0
    seen = False
    for m in messages:
        if not (isinstance(m, dict) and m.get("say") == "api_req_started" and isinstance(m.get("text"), str)):
            continue
        data = _json(m["text"])
        if not isinstance(data, dict) or type(data.get("tokensIn")) is not int:
            continue
        reads = data.get("cacheReads")
        if type(reads) is not int:
            return None
        whole += sum(v for k in ("tokensIn", "cacheWrites", "cacheReads") if type(v := data.get(k)) is int)
        hit += reads
        seen = True
    return (whole, hit) if seen else None


def read(files: Sequence[str], collector: Collector, *, decode_all: bool = False) -> None:
    """Feed one task folder (its API history, its UI log) to ``collector``."""
    del decode_all  # documents are decoded whole
    by_name = {logical_name(f).replace("\\", "/").rpartition("/")[2]: f for f in files}
    api = by_name.get(API_HISTORY)
    ui_file = next((by_name[n] for n in UI_MESSAGES if n in by_name), None)
    ui: Any = None
    if ui_file is not None:
        try:
            ui = read_document(ui_file, collector)
        except TranscriptError as exc:
            if api is None:
                raise
            collector.warnings.append(f"{exc}: no request's window read from it")
    if not isinstance(ui, list):
        ui = None
    task = _Task(collector)
    # The user's task as typed: the UI log's first ``say: task`` (the API history wraps it).
    said = next((m.get("text") for m in ui or () if isinstance(m, dict) and m.get("say") == "task"), None)
    if isinstance(said, str):
        collector.asked(said)
    if api is not None:
        messages = read_document(api, collector)
        if not isinstance(messages, list):
            raise NotATranscript(f"not a transcript: {API_HISTORY} is not a list of messages")
        collector.recognized = True
        windows = []
        for m in ui or ():
            if isinstance(m, dict) and m.get("say") == "api_req_started" and isinstance(m.get("text"), str):
                ctx = ui_window(m["text"])
                if ctx is not None:
                    windows.append(ctx)
        task.history(messages, windows)
    elif ui is not None:
        collector.recognized = True
        task.ui(ui)
    else:
        raise NotATranscript("not a transcript: a task folder with neither its API history nor its UI log")
    if task.answer is not None:
        collector.last_text = task.answer  # the completion's result, even if text followed it
    collector.cache = ui_cache(ui or ())
    task.feed.run()
