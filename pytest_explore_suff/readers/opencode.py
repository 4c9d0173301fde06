"""OpenCode sessions: its SQLite database (``~/.local/share/opencode/opencode.db``, tables
``session``, ``message``, ``part``; read in place, read-only, with its WAL), its legacy
JSON storage (``storage/session/<project>/<id>.json``, ``storage/message/<session
id>/<id>.json``, ``storage/part/<message id>/<id>.json``: one document each), and the
JSON export (``opencode export <id>``: ``{info, messages: [{info, parts}]}``).

A database, or a storage folder, is a campaign of its own: one transcript per session,
named ``<database or storage folder>/<session id>``. A subagent's session (its
``parent_id``, ``parentID`` in the storage, is the caller's session) is the caller's
delegation thread, not a transcript of its own.

Parts: ``text`` (the assistant's text: the last is the answer), ``reasoning``,
``tool`` (``{callID, tool, state: {status, input, output, error, metadata}}``:
``error`` is an error), ``step-start``/``step-finish`` bound one model request
(its calls are one message; ``step-finish.tokens`` gives its window, ``input +
cache.read + cache.write``), ``compaction`` a compaction.

Tools: ``read`` reads ``filePath``, ``grep`` and ``codesearch`` are Greps, ``glob``
and ``list`` Globs, ``bash`` runs ``command``, ``todowrite``/``todoread`` are
bookkeeping, ``task`` delegates (its subagent's session is ``state.metadata.sessionId``,
else the caller's next child session), MCP tools are ``<server>_<tool>`` (read as
``mcp__<server>__<tool>``).
"""

from __future__ import annotations

import re
import sqlite3
from collections.abc import Callable, Iterable, Sequence
from typing import Any

from ..events import Collector
from ..sources import logical_name
from . import claims
from .base import NotATranscript
from .sqlite import columns, connect, require
from .tools import Feed, Tools, documents, json_text, number, transcript_document, window

PATTERN = claims.OPENCODE
TOOLS = Tools(
    read={"read": ("filePath", "file_path", "path")},
    grep=frozenset({"grep", "codesearch"}),
    glob=frozenset({"glob", "list"}),
    shell={"bash": ("command",)},
    delegate=frozenset({"task"}),
    bookkeeping=frozenset({"todowrite", "todoread"}),
)
_EXPORT = re.compile(rb'^\{\s*"info"\s*:')
_MESSAGES = re.compile(rb'"messages"\s*:')
#: How deep subagents of subagents are followed (a cycle in a damaged database stops there).
MAX_DEPTH = 8


def looks_like_export(head: bytes) -> bool:
    """``opencode export``'s first bytes: ``{"info": {...}, "messages": [...]}``."""
    return _EXPORT.match(head) is not None and (_MESSAGES.search(head) is not None or b'"sessionID"' in head)


def _parent_column(conn: sqlite3.Connection) -> str:
    have = columns(conn, "session")
    return "parent_id" if "parent_id" in have else "parentID"


def sessions(path: str) -> list[str]:
    """The database's sessions that are no subagent's: theirs are read as delegations."""
    with connect(path) as conn:
        require(conn, path, {"session": ("id",), "message": ("id", "session_id", "data"),
                             "part": ("id", "message_id", "data")})  # fmt: skip
        parent = _parent_column(conn)
        order = "time_created, id" if "time_created" in columns(conn, "session") else "id"
        rows = conn.execute(
            f"SELECT id FROM session WHERE {parent} IS NULL OR {parent} = '' "
            f"OR {parent} NOT IN (SELECT id FROM session) ORDER BY {order}"
        )
        return [row[0] for row in rows if isinstance(row[0], str)]


def _json(raw: Any) -> Any:
    return json_text(raw) if isinstance(raw, (str, bytes)) else raw


class _Reader:
    def __init__(self, collector: Collector) -> None:
        self.c = collector
        self.feed = Feed(collector, TOOLS)
        self.tokens: int | None = None
        #: (prompt tokens, of them cache reads) over the steps where each says both;
        #: ``cache_unknown`` when a step gave its input without its cache reads
        self.cache: tuple[int, int] | None = None
        self.cache_unknown = False
        self.tasks: list[tuple[str, str | None]] = []  # (task call id, its session id), per thread

    def messages(self, thread: str, messages: Iterable[tuple[str, dict[str, Any], list[Any]]]) -> None:
        """One session's messages, each (id, info, parts), into ``thread``."""
        main = thread == "main"
        for mid, info, parts in messages:
            role = info.get("role")
            step = 0
            texts: list[str] = []
            if role == "user" and main and self.c.prompt is None:
                # The user's words: text parts OpenCode did not add itself (``synthetic``: a
                # file attached with @, a command's expansion; ``ignored``).
                self.c.asked(*[p["text"] for p in parts if isinstance(p, dict) and p.get("type") == "text"
                               and isinstance(p.get("text"), str) and p.get("synthetic") is not True
                               and p.get("ignored") is not True])  # fmt: skip
            for part in parts:
                if not isinstance(part, dict):
                    continue
                kind = part.get("type")
                if kind == "text" and isinstance(part.get("text"), str):
                    if role == "assistant":
                        texts.append(part["text"])
                    elif main:
                        self.feed.added(part["text"])
                elif kind == "reasoning" and main:
                    self.feed.added(part.get("text"))
                elif kind == "step-start":
                    step += 1
                    if main:
                        self.feed.turns += 1
                        self.c.timeline.begin()
                elif kind == "step-finish" and main:
                    self.step_finish(part.get("tokens"))
                elif kind == "compaction" and main:
                    self.c.timeline.compact()
                elif kind == "tool":
                    self.tool(thread, f"#opencode-{mid}-{step}", part)
            if texts and main:
                self.feed.said("".join(texts))

    def step_finish(self, tokens: Any) -> None:
        if not isinstance(tokens, dict):
            return
        cache: dict[str, Any] = tokens["cache"] if isinstance(tokens.get("cache"), dict) else {}
        ctx = window(tokens.get("input"), cache.get("read"), cache.get("write"))
        if ctx is not None:
            self.c.timeline.measured(ctx)
            self.tokens = (self.tokens or 0) + ctx + (number(tokens.get("output")) or 0)
            read = number(cache.get("read"))
            if number(tokens.get("input")) is None or read is None:
                self.cache_unknown = True
            else:
                whole, hit = self.cache or (0, 0)
                self.cache = (whole + ctx, hit + read)

    def tool(self, thread: str, msg: str, part: dict[str, Any]) -> None:
        state: dict[str, Any] = part["state"] if isinstance(part.get("state"), dict) else {}
        name = part.get("tool")
        tid = self.feed.call(part.get("callID") or part.get("id"), name, state.get("input"), thread=thread,
                             message=msg)  # fmt: skip
        if tid is None:
            return
        if name in TOOLS.delegate:
            meta = state.get("metadata")
            child = meta.get("sessionId") if isinstance(meta, dict) else None
            self.tasks.append((tid, child if isinstance(child, str) and child else None))
        status = state.get("status")
        if status == "completed":
            self.feed.result(tid, state.get("output"))
        elif status == "error":
            error = state.get("error")
            self.feed.result(tid, error if isinstance(error, str) else "", error=True)


def _db_messages(conn: sqlite3.Connection, session: str) -> list[tuple[str, dict[str, Any], list[Any]]]:
    order_m = "time_created, id" if "time_created" in columns(conn, "message") else "id"
    order_p = "time_created, id" if "time_created" in columns(conn, "part") else "id"
    parts: dict[str, list[Any]] = {}
    rows = conn.execute(
        "SELECT p.message_id, p.data FROM part p JOIN message m ON m.id = p.message_id "
        f"WHERE m.session_id = ? ORDER BY p.{order_p.replace(', ', ', p.')}",
        (session,),
    )
    for message_id, data in rows:
        parts.setdefault(message_id, []).append(_json(data))
    out = []
    for mid, data in conn.execute(
        f"SELECT id, data FROM message WHERE session_id = ? ORDER BY {order_m}", (session,)
    ):
        info = _json(data)
        out.append((mid, info if isinstance(info, dict) else {}, parts.get(mid, [])))
    return out


def _read_db(path: str, collector: Collector) -> None:
    session = collector.session
    with connect(path) as conn:
        require(conn, path, {"session": ("id",), "message": ("id", "session_id", "data"),
                             "part": ("id", "message_id", "data")})  # fmt: skip
        if not session or conn.execute("SELECT 1 FROM session WHERE id = ?", (session,)).fetchone() is None:
            raise NotATranscript(f"not a transcript: no session {session!r} in the database")
        parent = _parent_column(conn)
        reader = _Reader(collector)
        messages = _db_messages(conn, session)
        collector.lines += len(messages)
        collector.recognized = True
        reader.messages("main", messages)

        def children(caller: str) -> list[str]:
            rows = conn.execute(f"SELECT id FROM session WHERE {parent} = ? ORDER BY id", (caller,))
            return [r[0] for r in rows]

        def sub(child: str) -> list[tuple[str, dict[str, Any], list[Any]]]:
            found = _db_messages(conn, child)
            collector.lines += len(found)
            return found

        _subagents(reader, session, children, sub)
    collector.order_by_spawn()
    _finish(reader, collector)


def _subagents(
    reader: _Reader,
    session: str,
    children: Callable[[str], list[str]],
    messages: Callable[[str], list[tuple[str, dict[str, Any], list[Any]]]],
) -> None:
    """Each task call's subagent: its session (named in the call's metadata, else the
    caller's children in order), read as the call's thread; theirs in turn."""
    queue = [(session, reader.tasks, 0)]
    seen = {session}
    while queue:
        caller, tasks, depth = queue.pop(0)
        named = {child for _, child in tasks if child is not None}
        spare = [c for c in children(caller) if c not in named]
        for tid, child in tasks:
            if child is None:
                child = spare.pop(0) if spare else None
            if child is None or child in seen or depth >= MAX_DEPTH:
                continue
            seen.add(child)
            reader.tasks = []
            reader.messages(tid, messages(child))
            queue.append((child, reader.tasks, depth + 1))


def _finish(reader: _Reader, collector: Collector) -> None:
    collector.processed = reader.tokens
    if reader.cache is not None and not reader.cache_unknown:
        collector.cache = reader.cache
    reader.feed.run(reader.tokens)


def _read_export(path: str, collector: Collector) -> None:
    doc = transcript_document(path, collector, "messages", "OpenCode messages")
    reader = _Reader(collector)
    messages = []
    for i, m in enumerate(doc["messages"]):
        if isinstance(m, dict) and isinstance(m.get("info"), dict):
            parts = m.get("parts")
            messages.append(
                (str(m["info"].get("id", i)), m["info"], parts if isinstance(parts, list) else [])
            )
    reader.messages("main", messages)
    _finish(reader, collector)


# -- the legacy JSON storage ---------------------------------------------------------------

STORAGE_PATTERN = claims.OPENCODE_STORAGE
_STORAGE_HEAD = re.compile(rb'"(?:sessionID|projectID|messageID)"\s*:')
_PARENT = re.compile(rb'"parentID"\s*:\s*"([^"\\]+)"')


def _storage_item(rel: str) -> tuple[str, str, str] | None:
    """(kind, folder, id) of a storage file: ``session`` (folder: the project), ``message``
    (folder: its session) or ``part`` (folder: its message); None for any other path."""
    parts = logical_name(rel).replace("\\", "/").split("/")
    if len(parts) >= 4 and parts[-4] == "storage" and parts[-3] in ("session", "message", "part"):
        return parts[-3], parts[-2], parts[-1][: -len(".json")]
    return None


def storage_group(rel: str) -> str | None:
    """A storage file belongs to its ``storage`` folder (split into sessions by `split`)."""
    parts = rel.split("/")
    return "/".join(parts[:-3]) if len(parts) >= 4 else None


def looks_like_storage(head: bytes) -> bool:
    """A storage document's first bytes: a session, message or part names its session."""
    return head[:1] == b"{" and _STORAGE_HEAD.search(head) is not None


def split(files: Sequence[str], head: Callable[[str], bytes]) -> list[tuple[str, list[str]]]:
    """A storage folder's files by session: each session that is no subagent's, with its
    own files and its subagents' (a message's files name their session; a part's, its
    message; a session's document, its parent)."""
    own: dict[str, list[str]] = {}
    parents: dict[str, str] = {}
    session_of: dict[str, str] = {}  # message id -> session id
    parts: list[tuple[str, str]] = []
    for rel in files:
        item = _storage_item(rel)
        if item is None:
            continue
        kind, folder, ident = item
        if kind == "session":
            own.setdefault(ident, []).append(rel)
            m = _PARENT.search(head(rel))
            if m is not None:
                parents[ident] = m.group(1).decode("utf-8", "replace")
        elif kind == "message":
            own.setdefault(folder, []).append(rel)
            session_of[ident] = folder
        else:
            parts.append((folder, rel))
    for message, rel in parts:
        if message in session_of:
            own[session_of[message]].append(rel)
    children: dict[str, list[str]] = {}
    for sid, parent in parents.items():
        if parent in own and parent != sid:
            children.setdefault(parent, []).append(sid)
    out = []
    for sid in sorted(own):
        if parents.get(sid) in own and parents[sid] != sid:
            continue  # a subagent's: its caller's transcript holds it
        members, queue, seen = [], [(sid, 0)], {sid}
        while queue:
            at, depth = queue.pop(0)
            members += own[at]
            for child in sorted(children.get(at, ())):
                if child not in seen and depth < MAX_DEPTH:
                    seen.add(child)
                    queue.append((child, depth + 1))
        out.append((sid, sorted(members)))
    return out


def _read_storage(files: Sequence[str], collector: Collector) -> None:
    infos: dict[str, dict[str, Any]] = {}
    messages: dict[str, list[tuple[str, dict[str, Any]]]] = {}
    parts: dict[str, list[tuple[str, Any]]] = {}
    items = {path: item for path in files if (item := _storage_item(path)) is not None}
    for path, doc in documents(items, collector, "the file is skipped"):
        kind, folder, ident = items[path]
        if kind == "session":
            infos[ident] = doc
        elif kind == "message":
            messages.setdefault(folder, []).append((ident, doc))
        else:
            parts.setdefault(folder, []).append((ident, doc))
    session = collector.session
    if session not in infos and session not in messages:
        raise NotATranscript(f"not a transcript: no session {session!r} in the storage")
    collector.recognized = True

    def of(sid: str) -> list[tuple[str, dict[str, Any], list[Any]]]:
        return [(mid, info, [p for _, p in sorted(parts.get(mid, ()), key=lambda p: p[0])])
                for mid, info in sorted(messages.get(sid, ()), key=lambda m: m[0])]  # fmt: skip

    def children(caller: str) -> list[str]:
        return sorted(sid for sid, info in infos.items() if info.get("parentID") == caller and sid != caller)

    reader = _Reader(collector)
    reader.messages("main", of(session))
    _subagents(reader, session, children, of)
    collector.order_by_spawn()
    _finish(reader, collector)


def read_storage(files: Sequence[str], collector: Collector, *, decode_all: bool = False) -> None:
    """Feed one session of an OpenCode storage folder (its files and its subagents') to ``collector``."""
    del decode_all  # each file is a document of its own
    _read_storage(files, collector)


def read(files: Sequence[str], collector: Collector, *, decode_all: bool = False) -> None:
    """Feed one OpenCode session (a database's, or an export) to ``collector``."""
    del decode_all
    if files[0].endswith(".json") or files[0].endswith(".json.gz"):
        _read_export(files[0], collector)
    else:
        _read_db(files[0], collector)
