"""What the readers of Amp, Cline, Continue, OpenHands, OpenCode and Crush share: each
agent's tool names mapped onto the contract's notions, a JSON document read whole, and
a `Feed` that hands calls, results and text to the `Collector`.
"""

from __future__ import annotations

import os
import shlex
from collections.abc import Iterable, Iterator, Mapping
from dataclasses import dataclass, field
from typing import Any

from ..events import Collector, compact_json, metric_text, result_text
from ..jsonl import Undecodable, decode
from ..sources import MEMBER_ERRORS, ArchiveError, logical_name
from .base import NotATranscript, TranscriptError, Unreadable, _why

#: A JSON document is read whole; past this it is refused (one line on its item).
MAX_DOCUMENT = 256 << 20


def json_text(raw: str | bytes) -> Any:
    """JSON text found inside a record (a call's arguments, a database column), decoded as a
    line is (`jsonl.decode`); None when it is not JSON. Not ``json.loads``: it keeps a lone
    surrogate escape (``JSON.stringify`` of a string cut inside an emoji) as a lone surrogate,
    which no report can write as UTF-8; `jsonl.decode` reads it as U+FFFD."""
    try:
        return decode(raw.encode("utf-8", "replace") if isinstance(raw, str) else raw)
    except Undecodable:
        return None


def arguments(raw: Any) -> Any:
    """A call's arguments: a JSON string (OpenAI-style, Crush) decoded; anything else as it is."""
    if isinstance(raw, str):
        value = json_text(raw)
        return {} if value is None else value
    return raw


def _first(data: dict[str, Any], keys: tuple[str, ...]) -> str:
    for key in keys:
        value = data.get(key)
        if isinstance(value, str):
            return value
        if isinstance(value, list) and value and all(isinstance(v, str) for v in value):
            return value[0] if key.endswith("s") else shlex.join(value)  # paths: the first; argv: joined
    return ""


def mcp_name(name: str, family: str, prefix: str = "") -> str:
    """A tool of the judged server as Claude Code names it, ``mcp__<server>__<tool>``, from an
    agent's ``<server>_<tool>`` (``prefix``: what the agent puts before, Crush's ``mcp_``).

    The server is what comes before the last ``_<family>`` (``codegraph_codegraph_explore``:
    server ``codegraph``, tool ``codegraph_explore``); a bare tool name stays as it is."""
    if name.startswith("mcp__"):
        return name
    bare = name[len(prefix) :] if prefix and name.startswith(prefix) else name
    at = bare.rfind(family)
    while at > 0 and bare[at - 1] != "_":
        at = bare.rfind(family, 0, at)
    if at > 1:
        return f"mcp__{bare[: at - 1]}__{bare[at:]}"
    return name


@dataclass(frozen=True)
class Tools:
    """One agent's tool names for the contract's notions (every other name is kept).

    ``read``, ``shell``, ``delegate``: a name and the argument keys of its path, command
    or prompt (the first present wins); ``listing``: folder listings, searches labelled
    ``Glob``; ``mcp_prefix``: what the agent writes before ``<server>_<tool>``."""

    read: Mapping[str, tuple[str, ...]] = field(default_factory=dict)
    grep: frozenset[str] = frozenset()
    glob: frozenset[str] = frozenset()
    shell: Mapping[str, tuple[str, ...]] = field(default_factory=dict)
    delegate: frozenset[str] = frozenset()
    bookkeeping: frozenset[str] = frozenset()
    mcp_prefix: str = ""

    def notion(self, name: str, args: Any, explore: str, family: str) -> tuple[str, dict[str, Any]]:
        """(the name the rules see, the input they read) for one call."""
        data: dict[str, Any] = args if isinstance(args, dict) else {}
        if explore in name or family in name:
            return mcp_name(name, family, self.mcp_prefix), data
        if name in self.read:
            return "Read", {"file_path": _first(data, self.read[name])}
        if name in self.grep:
            return "Grep", data
        if name in self.glob:
            return "Glob", data
        if name in self.shell:
            return "Bash", {"command": _first(data, self.shell[name])}
        if name in self.bookkeeping:
            return "TodoWrite", data
        return name, data


def read_document(path: str, collector: Collector) -> Any:
    """A JSON document, read whole and decoded (its lines counted); `Unreadable` if it
    cannot be read or is not JSON."""
    name = os.path.basename(logical_name(path)) if "/" in path else path
    try:
        with collector.open_file(path) as fh:
            raw = fh.read(MAX_DOCUMENT + 1)
    except (OSError, ArchiveError, EOFError, *MEMBER_ERRORS) as exc:
        raise Unreadable(f"cannot read {name}: {_why(exc)}") from None
    if len(raw) > MAX_DOCUMENT:
        raise Unreadable(f"{name}: a JSON document over {MAX_DOCUMENT >> 20} MB, not read (it is read whole)")
    collector.lines += raw.count(b"\n") + (1 if raw and not raw.endswith(b"\n") else 0)
    try:
        return decode(raw.lstrip(b"\xef\xbb\xbf").strip())
    except Undecodable as exc:
        collector.corrupt += 1
        raise Unreadable(f"{name}: not valid JSON ({exc})") from None


def transcript_document(path: str, collector: Collector, key: str, missing: str) -> dict[str, Any]:
    """A transcript that is one JSON document (`read_document`): an object whose ``key`` is
    a list, or `NotATranscript` saying it has no ``missing``."""
    doc = read_document(path, collector)
    if not isinstance(doc, dict) or not isinstance(doc.get(key), list):
        raise NotATranscript(f"not a transcript: a JSON document with no {missing}")
    collector.recognized = True
    return doc


def event_folder(rel: str) -> str:
    """The folder of a session whose events are files of their own: an event file
    (``<folder>/events/<file>``) and the files beside ``events/`` belong to it."""
    parts = rel.split("/")
    return "/".join(parts[:-2] if len(parts) >= 2 and parts[-2] == "events" else parts[:-1])


def documents(
    paths: Iterable[str], collector: Collector, skipped: str
) -> Iterator[tuple[str, dict[str, Any]]]:
    """Each of ``paths`` with the JSON object it holds (`read_document`): a file that cannot
    be read is skipped with a warning (``<why>: <skipped>``), one that holds another JSON
    value is counted as a corrupt line."""
    for path in paths:
        try:
            doc = read_document(path, collector)
        except TranscriptError as exc:
            collector.warnings.append(f"{exc}: {skipped}")
            continue
        if isinstance(doc, dict):
            yield path, doc
        else:
            collector.corrupt += 1


def content_text(content: Any) -> tuple[str, str]:
    """(verdict text, metric text) of a result's content: a string, a list of content blocks
    (an MCP result), or any other JSON value (as its compact JSON)."""
    if isinstance(content, str):
        return content, content
    if isinstance(content, list):
        return result_text(content), metric_text(content)
    text = "" if content is None else compact_json(content)
    return text, text


class Feed:
    """Calls, results and the agent's text, into a `Collector`: the main thread's fill its
    window (occupancy) and its last text is the answer (allocation)."""

    def __init__(self, collector: Collector, tools: Tools) -> None:
        self.c = collector
        self.tools = tools
        self.explore, self.family = collector.spec.explore, collector.spec.family
        self.main_ids: set[str] = set()  # calls of the main thread: their results fill its window
        self.turns = 0

    def call(
        self, call_id: Any, name: Any, args: Any, *, thread: str = "main", message: str | None = None
    ) -> str | None:
        """One call; returns its id (one made up when it has none), None when it has no name."""
        if not isinstance(name, str) or not name:
            return None
        args = arguments(args)
        c = self.c
        tid = call_id if isinstance(call_id, str) and call_id else f"#call-{len(c.seen_tool_ids)}"
        if thread == "main":
            c.timeline.add(len(name) + len(compact_json({} if args is None else args)))
            self.main_ids.add(tid)
        fresh = tid not in c.seen_tool_ids
        kind, data = self.tools.notion(name, args, self.explore, self.family)
        c.tool_use(thread, message, {"id": tid, "name": kind, "input": data})
        if fresh and name in self.tools.delegate:
            c.delegations[tid] = (tid, 0)  # its subagent's thread is keyed by the call's id
        return tid

    def result(self, call_id: Any, content: Any, *, error: bool = False) -> None:
        if not isinstance(call_id, str) or not call_id:
            return
        text, metric = content_text(content)
        if call_id in self.main_ids:
            self.c.timeline.result(call_id, len(metric))
        self.c.tool_result({"tool_use_id": call_id, "content": text, "is_error": error}, metric=metric)

    def said(self, text: Any, *, thread: str = "main") -> None:
        """The agent's own text; the main thread's last non-blank one is the answer."""
        if thread == "main" and isinstance(text, str):
            self.c.timeline.add(len(text))
            if text.strip():
                self.c.last_text = text

    def added(self, text: Any) -> None:
        """Text that fills the window and is no answer (the user's, the agent's reasoning)."""
        if isinstance(text, str):
            self.c.timeline.add(len(text))

    def run(self, tokens: int | None = None, duration_ms: float | None = None) -> None:
        """The run's figures, as the other agents' readers give them."""
        self.c.runs.append({
            "subtype": None, "is_error": None, "num_turns": self.turns,
            "duration_ms": round(duration_ms) if duration_ms is not None else None,
            "total_cost_usd": None, "tokens": tokens,
        })  # fmt: skip


def number(value: Any) -> int | None:
    """A token count: an int (a bool is no count)."""
    return value if type(value) is int else None


def window(*values: Any) -> int | None:
    """A request's whole prompt from its parts (input, cache writes, cache reads); None when
    the log gives none of them."""
    counts = [v for v in values if type(v) is int]
    return sum(counts) if counts else None
