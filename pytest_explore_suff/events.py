"""The normalized transcript: per-thread actions and the results that matter.

Readers (one module per transcript format) decode lines and feed them to a
`Collector`; the classifier only ever sees the collector. Nothing here imports
pytest.
"""

from __future__ import annotations

import json
from dataclasses import dataclass, field
from typing import Any

from . import RACE_MARKER as RACE_MARKER  # re-exported: these live in the package, light
from . import TOOL_KINDS as TOOL_KINDS
from . import ToolSpec as ToolSpec  # re-exported: its home before the options needed it light
from .jsonl import compact_json as compact_json
from .occupancy import Timeline
from .shell import invokes
from .sources import Opener, open_path

DELEGATION_TOOLS = frozenset({"Agent", "Task"})
#: Claude Code 2.1.77+: new work for a running (or finished) subagent, ``{to, message}``.
SEND_MESSAGE = "SendMessage"
_SEND_TARGETS = ("to", "recipient", "agentId", "agent_id")
_SEND_TEXTS = ("message", "content", "prompt")
READ_TOOLS = frozenset({"Read", "NotebookRead"})
SEARCH_TOOLS = frozenset({"Grep", "Glob"})
SHELL_TOOLS = frozenset({"Bash", "BashOutput"})
COMPACTION_SUBTYPES = frozenset({"compact_boundary", "compaction"})
SYNTHETIC_MODEL = "<synthetic>"  # an assistant message Claude Code wrote itself: no request (M8)
#: Not a tool: where one of several runs appended to one file ends (see `Collector.end_run`).
END_OF_RUN = "\x00end of run"
#: D8: where the judged tool's query is, when it is not codegraph's and has no ``query``.
QUERY_FALLBACKS = ("task", "symbol", "question", "topic", "pattern", "libraryName")


#: A request's usage fields, as the cost split sums them: input, cache read, cache creation, output.
_BILLED = ("input_tokens", "cache_read_input_tokens", "cache_creation_input_tokens", "output_tokens")
#: ``result.modelUsage.<model>`` fields, and the names the record gives them (its ``cost.by_model``).
MODEL_USAGE = (
    ("inputTokens", "input_tokens"),
    ("outputTokens", "output_tokens"),
    ("cacheReadInputTokens", "cache_read_tokens"),
    ("cacheCreationInputTokens", "cache_creation_tokens"),
    ("costUSD", "cost_usd"),
)


def tool_kind(name: str, spec: ToolSpec) -> str:
    if spec.explore in name:
        return "explore"
    if name in READ_TOOLS:
        return "read"
    if name in SEARCH_TOOLS:
        return "search"
    return "bash" if name == "Bash" else "other"


@dataclass(slots=True)
class Action:
    """One tool_use, as the classifier needs it."""

    thread: str
    message: str
    id: str
    name: str
    #: Read: the path; Bash: the command; explore: the query; delegation: the prompt.
    arg: str


@dataclass(slots=True)
class Result:
    text: str
    is_error: bool
    #: False: a result nobody waited for when it came; its text was not kept
    kept: bool = True


def result_text(content: Any) -> str:
    """A tool_result's text: a string, or the ``text`` fields of its blocks joined."""
    if isinstance(content, str):
        return content
    if isinstance(content, list):
        return "\n".join(b["text"] for b in content if isinstance(b, dict) and isinstance(b.get("text"), str))
    return ""


def texts_of(content: Any) -> str:
    """A message's text: a string, or the ``text`` of its items with nothing between them
    (an answer of Codex or Gemini, a Codex item's words)."""
    if isinstance(content, str):
        return content
    if not isinstance(content, list):
        return ""
    return "".join(b["text"] for b in content if isinstance(b, dict) and isinstance(b.get("text"), str))


def family(name: str, spec: ToolSpec) -> str:
    """The occupancy family of a tool (M2: the configured family, each agent's notions)."""
    if spec.family in name:
        return "tool"
    if name in READ_TOOLS:
        return "read"
    if name in SEARCH_TOOLS:
        return "search"
    return "bash" if name in SHELL_TOOLS else "other"


def _piece(block: Any) -> str:
    """One element of a content list, as the metrics count it (M7: an image counts nothing)."""
    if isinstance(block, str):
        return block
    if isinstance(block, dict):
        if block.get("type") == "image":
            return ""
        text = block.get("text")
        if text is not None:
            return text if isinstance(text, str) else compact_json(text)
    return compact_json(block)


def metric_text(content: Any) -> str:
    """A result's text for the metrics: a string, or its blocks' texts with nothing
    between them (a block without text as its compact JSON, an image as nothing)."""
    if isinstance(content, str):
        return content
    if isinstance(content, list):
        return "".join(map(_piece, content))
    return "" if content is None else compact_json(content)


def metric_len(content: Any) -> int:
    """``len(metric_text(content))`` without joining a copy of the text."""
    if isinstance(content, str):
        return len(content)
    if isinstance(content, list):
        return sum(len(_piece(b)) for b in content)
    return len(metric_text(content))


def assistant_chars(block: Any) -> int:
    """Characters an assistant content block adds to the next prompt."""
    if not isinstance(block, dict):
        return len(block) if isinstance(block, str) else len(compact_json(block))
    kind = block.get("type")
    if kind in ("text", "thinking"):
        value = block.get(kind)
        return len(value) if isinstance(value, str) else 0
    if kind == "tool_use":
        name = block.get("name")
        data = block.get("input")
        return len(compact_json({} if data is None else data)) + (len(name) if isinstance(name, str) else 0)
    return len(compact_json(block))


PROMPT_KEYS = ("input_tokens", "cache_read_input_tokens", "cache_creation_input_tokens")


def usage_ctx(usage: dict[str, Any]) -> int:
    """A request's whole prompt: input, cache reads and cache writes (missing: 0).

    A plain loop: this runs once per request, and a generator under ``sum`` costs
    three times as much. ``type() is int``: a decoded number is an int or a float,
    never a subclass but ``bool`` (not a count), and one test is cheaper than two.
    """
    total = 0
    for key in PROMPT_KEYS:
        value = usage.get(key)
        if type(value) is int:
            total += value
    return total


def _arg(name: str, data: Any, spec: ToolSpec) -> str:
    if not isinstance(data, dict):
        return ""
    if name in READ_TOOLS:
        value = data.get("file_path") if name == "Read" else data.get("notebook_path")
        if value is None:  # tolerate the other key, as the reference does
            value = data.get("notebook_path") if name == "Read" else data.get("file_path")
    elif name == "Bash":
        value = data.get("command")
    elif name in DELEGATION_TOOLS:
        value = data.get("prompt")
    elif spec.explore in name:
        value = data.get("query")
        # D8, literally: only a judged tool that is not codegraph's falls back.
        # The literal name, not ``spec.family``: the judged tool always belongs
        # to its own family, and codegraph's tools all take ``query``.
        if value is None and "codegraph" not in name:
            value = _fallback_query(data)
    else:
        return ""
    if value is None:
        return ""
    if isinstance(value, str):
        return value
    try:  # a query that is not a string is shown as the JSON it was
        return json.dumps(value, ensure_ascii=False)
    except (TypeError, ValueError, RecursionError):
        # Nested deeper than the encoder goes (orjson decodes 1024 levels,
        # json.dumps and str() recurse): no text is worth a crash.
        return f"<unprintable {type(value).__name__}>"


def _fallback_query(data: dict[str, Any]) -> Any:
    for key in QUERY_FALLBACKS:
        if data.get(key) is not None:
            return data[key]
    return next((v for v in data.values() if isinstance(v, str)), None)


#: How the text starts of a user message an agent's CLI writes itself (context, not a prompt):
#: Codex's AGENTS.md block, Gemini CLI's and Qwen Code's environment context (older releases:
#: newer ones wrap it in ``<session_context>``), Claude Code's note of an interrupted request.
INJECTED_PREFIXES = (
    "# AGENTS.md instructions for ",
    "This is the Gemini CLI. We are setting up the context",
    "This is the Qwen Code. We are setting up the context",
    "[Request interrupted by user",
)


def injected(text: str) -> bool:
    """A user message (or block) an agent's CLI wrote, not the user: one or more tagged
    blocks and nothing else (``<environment_context>``, ``<system-reminder>``, Cline's
    ``<environment_details>``, Claude Code's ``<command-name>``...), or a known preamble."""
    t = text.strip()
    return (t[:1] == "<" and t[-1:] == ">") or t.startswith(INJECTED_PREFIXES)


def _meta(event: dict[str, Any]) -> bool:
    """A Claude Code user line that is no prompt: written for the model (``isMeta``: a
    command's expansion, a caveat) or a compaction's summary."""
    return event.get("isMeta") is True or event.get("isCompactSummary") is True


@dataclass(slots=True)
class Collector:
    """Accumulates one transcript's actions and the results the verdicts need.

    Slots: one is made per transcript, and with more fields than an instance dict
    shares its keys for, each made its own dict, resized as ``__init__`` filled it.
    """

    spec: ToolSpec = field(default_factory=ToolSpec)
    threads: dict[str, list[Action]] = field(default_factory=dict)
    results: dict[str, Result] = field(default_factory=dict)
    #: ids whose result must be decoded: explore calls and CLI invocations.
    wanted: set[str] = field(default_factory=set)
    wanted_bytes: set[bytes] = field(default_factory=set)
    #: spawning tool_use id by subagent agentId, from ``toolUseResult.agentId``.
    agent_links: dict[str, str] = field(default_factory=dict)
    #: the same, from ``progress`` lines (``data.agentId`` -> ``parentToolUseID``).
    progress_links: dict[str, str] = field(default_factory=dict)
    #: agentId values already met on progress lines: a later line naming only
    #: these is skipped undecoded (it can link nothing new).
    progress_agents: set[bytes] = field(default_factory=set)
    #: Delegations other than Task/Agent (Codex ``spawn_agent``/``send_input``, Gemini's
    #: subagent tools), by call id: the thread that judges them and where in it to start.
    delegations: dict[str, tuple[str, int]] = field(default_factory=dict)
    #: ``input.description`` of each Task/Agent call, to tell apart calls with one prompt.
    descriptions: dict[str, str] = field(default_factory=dict)
    #: New work for a subagent already spawned (``Task``/``Agent`` with ``resume``,
    #: ``SendMessage``), by call id: (the tool, the agent id or name it names, its message).
    sends: dict[str, tuple[str, str, str]] = field(default_factory=dict)
    #: Task/Agent calls by the ``name`` they gave their agent (``SendMessage`` can use it).
    agent_names: dict[str, str] = field(default_factory=dict)
    runs: list[dict[str, Any]] = field(default_factory=list)
    warnings: list[str] = field(default_factory=list)
    #: D6: ids of calls of the tool family, and ids whose result said RACE_MARKER.
    #: Results can come before their calls, so the two meet only in `raced`.
    family_ids: set[str] = field(default_factory=set)
    race_ids: set[str] = field(default_factory=set)
    cli_ids: set[str] = field(default_factory=set)
    lines: int = 0
    #: set by the reader once a line has proved the file holds agent events
    recognized: bool = False
    #: opens the transcript's files: paths of a directory, or members of an archive
    open_file: Opener = open_path
    corrupt: int = 0
    #: tool_result lines skipped undecoded; if a wanted id then never got its
    #: result, the reader re-reads with every result decoded.
    skipped_results: int = 0
    #: tool calls by kind, for the per-arm figures (explore, Read, Grep/Glob, Bash, other)
    tools: dict[str, int] = field(default_factory=lambda: dict.fromkeys(TOOL_KINDS, 0))
    #: every tool_use id seen, with its place in stream order (D5, and "earliest" in D7)
    seen_tool_ids: dict[str, int] = field(default_factory=dict)
    #: the metrics' view of the main thread (occupancy) and of the answer (allocation)
    timeline: Timeline = field(default_factory=Timeline)
    #: occupancy family of every call, by tool_use id
    families: dict[str, str] = field(default_factory=dict)
    #: explore responses whose metric text differs from their verdict text (several blocks)
    metric_texts: dict[str, str] = field(default_factory=dict)
    #: the returned-file markers the classifier found in each judged response
    marks: dict[str, list[tuple[int, int, str]]] = field(default_factory=dict)
    #: the ``result`` strings of the run's ``result`` events, and the last main-thread text
    answers: list[str] = field(default_factory=list)
    last_text: str = ""
    #: tokens processed: the sum of the ``result`` events' usage (None: none said)
    processed: int | None = None
    #: whether the file being read is the main thread's (its lines are decoded for occupancy)
    main_file: bool = True
    #: every result's text is kept (the re-read after a result came before its call)
    keep_texts: bool = False
    #: Sessions this session log holds a copy of (older ``--resume``, ``--fork-session``):
    #: session id -> the transcript that judges their lines ("": this one). Discovery's.
    copy_sessions: dict[str, str] = field(default_factory=dict)
    #: the copied session whose line is being read (the reader sets it), else None
    copying: str | None = None
    #: ids of copied calls another transcript judges: in their thread (their returned files
    #: are "earlier" for later explores, their results are in this window), never judged here
    copied: set[str] = field(default_factory=set)
    #: per copied session: the record's ``copies`` entry (lines, first and last line, calls)
    copies: dict[str, dict[str, Any]] = field(default_factory=dict)
    #: the session this transcript is, in a file that holds many (a database): `Reader.sessions`
    session: str = ""
    #: the main thread's first user prompt (a truth file's ``prompt`` is searched in it)
    prompt: str | None = None
    #: per file read, in reading order: (its path, the tool ids seen and ``result`` answers
    #: kept before it, the last main-thread text then): where each turn's segment starts
    segments: list[tuple[str, int, int, str]] = field(default_factory=list)
    #: calls that are no work (`runfigures.NOT_A_CALL`): left out of the run's tool calls
    not_calls: int = 0
    #: per side ("main", "subagents"): [input, cache read, cache creation, output] tokens of its
    #: requests (Claude-shaped usage), and the models its requests named
    usage: dict[str, list[int]] = field(default_factory=dict)
    models: dict[str, set[str]] = field(default_factory=dict)
    #: the ``result`` events' ``modelUsage``, summed per model (the cost split's figures)
    model_usage: dict[str, dict[str, Any]] = field(default_factory=dict)
    #: (input tokens, of them cache reads) when a reader knows them otherwise (Codex, Gemini)
    cache: tuple[int, int] | None = None
    _requests: set[str] = field(default_factory=set)
    _billed: set[str] = field(default_factory=set)
    _anon: int = 0

    def tool_use(self, thread: str, message: Any, block: dict[str, Any]) -> None:
        tid = block.get("id")
        name = block.get("name")
        if not isinstance(name, str):
            return
        if not isinstance(tid, str) or not tid:
            self._anon += 1
            tid = f"#anon-{self._anon}"
        elif tid in self.seen_tool_ids:  # D5: a replayed line is the same action
            return
        self.seen_tool_ids[tid] = len(self.seen_tool_ids)
        if not isinstance(message, str) or not message:
            # No message id: the block is a message of its own.
            message = f"#msg-{tid}"
        copied = False
        if self.copying is not None:
            self.copies[self.copying]["calls"] += 1
            if self.copy_sessions[self.copying]:  # judged in its own session's transcript
                copied = True
                self.copied.add(tid)
        self.families[tid] = family(name, self.spec)
        data = block.get("input")
        arg = _arg(name, data, self.spec)
        actions = self.threads.get(thread)
        if actions is None:
            actions = self.threads[thread] = []
        actions.append(Action(thread, message, tid, name, arg))
        if copied:
            # Counted, flagged and judged once, where it was made; an explore's response is
            # still read: its returned files are "earlier" for this session's explores.
            if self.spec.explore in name:
                self._want(tid)
            return
        self.tools[tool_kind(name, self.spec)] += 1
        if name == "ToolSearch":
            self.not_calls += 1
        if self.spec.family in name:
            self.family_ids.add(tid)
        if (name in DELEGATION_TOOLS or name == SEND_MESSAGE) and isinstance(data, dict):
            self._delegation(tid, name, data)
        if self.spec.explore in name:
            self._want(tid)
        elif name == "Bash" and invokes(arg, self.spec.family):
            self._want(tid)
            self.cli_ids.add(tid)

    # -- the calls a reader of another format makes (``docs/agents.md``) ----------------

    def call(
        self, call_id: str, name: str, input: dict[str, Any] | None = None, *, thread: str = "main",
        message: str | None = None,
    ) -> None:  # fmt: skip
        """A tool call, named as the rules know it (``Read`` with ``file_path``, ``Grep``,
        ``Glob``, ``Bash`` with ``command``, ``TodoWrite``, ``Task`` with ``prompt``, an MCP
        tool's ``mcp__<server>__<tool>``, or the agent's own name). Calls with one
        ``message`` id were issued together. On the main thread it fills the window."""
        data = {} if input is None else input
        if thread == "main":
            self.timeline.add(len(name) + len(compact_json(data)))
        self.tool_use(thread, message, {"id": call_id, "name": name, "input": data})

    def result(self, call_id: str, text: str, *, error: bool = False) -> None:
        """The result of a call (it may come before its call). A main-thread call's result
        fills the window."""
        if call_id in self.seen_tool_ids and any(a.id == call_id for a in self.threads.get("main", ())):
            self.timeline.result(call_id, len(text))
        self.tool_result({"tool_use_id": call_id, "content": text, "is_error": error})

    def said(self, text: str, *, thread: str = "main") -> None:
        """The agent's own text; the main thread's last one is the answer."""
        if thread == "main":
            self.timeline.add(len(text))
            if text.strip():
                self.last_text = text

    def copy_line(self, session: str, line: int) -> None:
        """A line of a copied session (``copy_sessions``): counted for the record, and the
        lines after it are read as a copy until the reader says otherwise."""
        entry = self.copies.get(session)
        if entry is None:
            judged_in = self.copy_sessions[session]
            entry = self.copies[session] = {
                "session": session, "judged_in": judged_in or None,
                "lines": 0, "first_line": line, "last_line": line, "calls": 0,
            }  # fmt: skip
        entry["lines"] += 1
        entry["last_line"] = line
        self.copying = session

    def _delegation(self, tid: str, name: str, data: dict[str, Any]) -> None:
        """A Task/Agent call's description and name; a resume or a SendMessage: new work
        for a subagent spawned before, judged through it once the reader links it."""
        if name == SEND_MESSAGE:
            target = next((data[k] for k in _SEND_TARGETS if isinstance(data.get(k), str)), None)
            message = next((data[k] for k in _SEND_TEXTS if isinstance(data.get(k), str)), None)
            if target and message is not None:  # a structured message (a shutdown request) is no work
                self.sends[tid] = (name, target, message)
            return
        if isinstance(data.get("description"), str):
            self.descriptions[tid] = data["description"]
        resume = data.get("resume")
        if isinstance(resume, str) and resume:
            prompt = data.get("prompt")
            self.sends[tid] = (name, resume, prompt if isinstance(prompt, str) else "")
        elif isinstance(label := data.get("name"), str) and label:
            self.agent_names.setdefault(label, tid)

    def _want(self, tid: str) -> None:
        self.wanted.add(tid)
        self.wanted_bytes.add(tid.encode())

    def tool_result(
        self, block: dict[str, Any], tool_use_result: Any = None, metric: str | None = None
    ) -> None:
        """One tool result. ``metric``: its text for the metrics when a reader made the
        verdicts' text some other way (an MCP content list another agent wrote)."""
        tid = block.get("tool_use_id")
        if not isinstance(tid, str):
            return
        if isinstance(tool_use_result, dict):
            agent = tool_use_result.get("agentId")
            if isinstance(agent, str) and agent not in self.agent_links:
                self.agent_links[agent] = tid
        keep = self.keep_texts or tid in self.wanted
        known = tid in self.seen_tool_ids
        if not keep and known and tid not in self.family_ids:
            # A call's family is fixed when it is first seen (a replayed call is ignored),
            # so no race marker here can matter (D6): the text, often a whole file a Read
            # shipped, is not scanned.
            return
        content = block.get("content")
        text = result_text(content)
        if RACE_MARKER in text:
            self.race_ids.add(tid)
        if not keep and known:
            return  # its call is known and no verdict reads its result: nothing to hold
        if tid not in self.results:
            # Only the results a verdict reads keep their text: every line is decoded
            # for the metrics, and a transcript's Read outputs need not stay in memory.
            # One that comes before its call is remembered, so the re-read can find it.
            self.results[tid] = Result(text if keep else "", block.get("is_error") is True, keep)
            # On the re-read (keep_texts) a result can precede its call: not yet wanted,
            # but an explore response all the same, whose metric text must be kept too.
            if keep and (metric is not None or isinstance(content, list)):
                whole = metric_text(content) if metric is None else metric
                if whole != text:
                    self.metric_texts[tid] = whole

    def event(self, event: dict[str, Any], thread: str) -> None:
        """Feed one decoded event, on ``thread``.

        One pass over a message's content feeds both the verdicts (its tool calls
        and results) and, on the main thread, the window's timeline (M1): the
        readers drop replayed lines before they come here.
        """
        kind = event.get("type")
        message = event.get("message")
        main = thread == "main"
        if kind == "system":
            if main:
                subtype = event.get("subtype")
                if isinstance(subtype, str) and subtype in COMPACTION_SUBTYPES:
                    self.timeline.compact()
            return
        if not isinstance(message, dict):
            return
        if kind == "assistant":
            self._assistant(message, thread, main)
        elif kind == "user":
            self._user(event, message, main)

    def _assistant(self, message: dict[str, Any], thread: str, main: bool) -> None:
        """An assistant message: its tool calls; on the main thread also its request,
        what its blocks add to the window, and its text (the answer, if it is the last)."""
        content = message.get("content")
        mid = message.get("id")
        timeline = self.timeline
        if main:
            # One line per content block, all with the message's id and usage: a request
            # is the first line of an id (M8: not a message Claude Code wrote itself).
            if isinstance(mid, str) and mid and mid not in self._requests:
                self._requests.add(mid)
                usage = message.get("usage")
                if isinstance(usage, dict) and message.get("model") != SYNTHETIC_MODEL:
                    timeline.request(usage_ctx(usage))
            if isinstance(content, str):
                timeline.add(len(content))
                if content.strip():
                    self.last_text = content  # a message of one text, written as a string
        if isinstance(mid, str) and mid and mid not in self._billed:
            self._billed.add(mid)
            self._bill(message, "main" if main else "subagents")
        if not isinstance(content, list):
            return
        texts: list[str] = []
        for block in content:
            if main:
                timeline.add(assistant_chars(block))
            if isinstance(block, dict):
                kind = block.get("type")
                if kind == "tool_use":
                    self.tool_use(thread, mid, block)
                elif kind == "text" and main:
                    text = block.get("text")
                    if isinstance(text, str):
                        texts.append(text)
        said = "".join(texts)
        if said.strip():
            self.last_text = said

    def _bill(self, message: dict[str, Any], side: str) -> None:
        """A request's tokens for the cost split (the first line of its message id)."""
        usage = message.get("usage")
        model = message.get("model")
        if not isinstance(usage, dict) or model == SYNTHETIC_MODEL:
            return
        counts = self.usage.get(side)
        if counts is None:
            counts = self.usage[side] = [0, 0, 0, 0]
        for i, key in enumerate(_BILLED):
            v = usage.get(key)
            if type(v) is int:
                counts[i] += v
        if isinstance(model, str) and model:
            self.models.setdefault(side, set()).add(model)

    def _user(self, event: dict[str, Any], message: dict[str, Any], main: bool) -> None:
        """A user message: its tool results; on the main thread also what it adds to the window."""
        content = message.get("content")
        timeline = self.timeline
        if main and self.prompt is None and not _meta(event):
            self._first_prompt(content)
        if not isinstance(content, list):
            if main and isinstance(content, str):
                timeline.add(len(content))
            return
        extra = event.get("toolUseResult")
        for block in content:
            if isinstance(block, dict) and block.get("type") == "tool_result":
                if main:
                    tid = block.get("tool_use_id")
                    timeline.result(tid if isinstance(tid, str) else "", metric_len(block.get("content")))
                self.tool_result(block, extra)
            elif main:
                timeline.add(len(_piece(block)))

    def _first_prompt(self, content: Any) -> None:
        """The main thread's first user text (a string, or its text blocks), if any: a line
        that answers a call (its tool results) is none, nor text the CLI wrote (`injected`)."""
        if isinstance(content, str):
            self.asked(content)
        elif isinstance(content, list):
            texts = []
            for b in content:
                if isinstance(b, dict):
                    kind = b.get("type")
                    if kind == "tool_result":
                        return
                    if kind == "text" and isinstance(b.get("text"), str):
                        texts.append(b["text"])
            self.asked(*texts)

    def asked(self, *texts: Any) -> None:
        """A user message of the main thread, as its reader reads it (its text blocks): the
        first one that holds text the user wrote is the run's prompt. Blocks the CLI wrote
        itself (`injected`) are left out; a message of nothing else is no prompt."""
        if self.prompt is not None:
            return
        kept = [t for t in texts if isinstance(t, str) and t.strip() and not injected(t)]
        if kept:
            self.prompt = "\n".join(kept)

    def segment(self, path: str) -> None:
        """A file of the transcript starts being read (a turn's segment, or a subagent's file)."""
        self.segments.append((path, len(self.seen_tool_ids), len(self.answers), self.last_text))

    def family_of(self, tool_use_id: str) -> str:
        return self.families.get(tool_use_id, "other")

    def progress(self, event: dict[str, Any]) -> None:
        """A session log's ``progress`` line: a link at most, never an action.

        An ``agent_progress`` line repeats a subagent's message in the parent
        file; its ``data.agentId`` names the subagent and its top-level
        ``parentToolUseID`` the spawning call. Its message is the subagent's,
        already in the subagent's own file: reading it here would count it twice.
        """
        data = event.get("data")
        parent = event.get("parentToolUseID")
        if isinstance(data, dict) and isinstance(parent, str) and parent:
            agent = data.get("agentId")
            if isinstance(agent, str) and agent:
                self.progress_links.setdefault(agent, parent)

    def end_run(self) -> None:
        """Mark, in the main thread, the end of one of several runs appended to one file:
        an explore before it was the run's last act, not answered by the next run."""
        actions = self.threads.setdefault("main", [])
        if actions and actions[-1].name != END_OF_RUN:
            marker = f"#end-{len(actions)}"
            actions.append(Action("main", marker, marker, END_OF_RUN, ""))

    def run_summary(self, event: dict[str, Any]) -> None:
        """Keep the figures of a ``result`` event (turns, duration, cost).

        ``is_error`` too: a run can end ``subtype: success`` with ``is_error:
        true`` (no credit left, for one), and only that field says so.
        """
        get = event.get  # spelled out, not a comprehension over the keys: once per run of every transcript
        self.runs.append({
            "subtype": get("subtype"), "is_error": get("is_error"), "num_turns": get("num_turns"),
            "duration_ms": get("duration_ms"), "total_cost_usd": get("total_cost_usd"),
        })  # fmt: skip
        models = event.get("modelUsage")
        if isinstance(models, dict):
            for model, figures in models.items():
                if isinstance(figures, dict):
                    kept = self.model_usage.setdefault(str(model), {})
                    for key, name in MODEL_USAGE:
                        v = figures.get(key)
                        if isinstance(v, int | float) and not isinstance(v, bool):
                            kept[name] = kept.get(name, 0) + v
        answer = event.get("result")
        if isinstance(answer, str):
            self.answers.append(answer)
        usage = event.get("usage")
        if isinstance(usage, dict):
            out = usage.get("output_tokens")
            out = out if isinstance(out, int) and not isinstance(out, bool) else 0
            self.processed = (self.processed or 0) + usage_ctx(usage) + out

    def answer(self) -> str | None:
        """The final answer: every ``result`` string, else the last main-thread text."""
        if self.answers:
            return "\n\n".join(self.answers)
        return self.last_text or None

    def missing_results(self) -> bool:
        """A result a verdict needs that this pass could not keep: on a line skipped
        undecoded, or decoded before its call made it wanted (file order is not causal)."""
        for tid in self.wanted:
            r = self.results.get(tid)
            if (r is None and self.skipped_results) or (r is not None and not r.kept):
                return True
        return False

    def rename_thread(self, old: str, new: str) -> None:
        """Give a provisionally keyed thread (an unlinked subagent) its real key."""
        actions = self.threads.get(old)
        if actions is None:
            return
        for action in actions:
            action.thread = new
        if new in self.threads:
            self.threads[new].extend(self.threads.pop(old))
        else:  # keep the thread's place: calls are listed in thread order
            self.threads = {(new if k == old else k): v for k, v in self.threads.items()}

    def order_by_spawn(self) -> None:
        """Each subagent thread right where its Task/Agent call stands, depth first.

        Subagent files are read after the session file, in file-name order.
        Ordered like this, the threads appear as they would in one merged
        stream (a subagent's events right after the call that spawned it), so
        calls are listed in the same order as for a stream-json run.
        """
        order: list[str] = []
        seen: set[str] = set()
        for root in ["main", *self.threads]:  # main first; unlinked threads last
            stack = [root]
            while stack:
                key = stack.pop()
                if key in seen or key not in self.threads:
                    continue
                seen.add(key)
                order.append(key)
                # Push spawned threads in reverse so the first spawn is visited first.
                stack.extend(reversed([a.id for a in self.threads[key] if a.id in self.threads]))
        self.threads = {k: self.threads[k] for k in order}

    def drop_thread(self, key: str) -> None:
        for action in self.threads.pop(key, ()):
            self.wanted.discard(action.id)
            self.cli_ids.discard(action.id)

    @property
    def raced(self) -> bool:
        """D6: a call of the tool family was answered ``No such tool available``."""
        return not self.race_ids.isdisjoint(self.family_ids)

    @property
    def contaminated(self) -> bool:
        return any((r := self.results.get(i)) is not None and not r.is_error for i in self.cli_ids)
