"""Crush sessions: its SQLite database (``<repo>/.crush/crush.db``; tables ``sessions``
and ``messages``), read in place, read-only, with its WAL. One transcript per session,
named ``<database>/<session id>``; a subagent's session (``parent_session_id``) is the
caller's ``agent`` call's thread (the session whose id is the call's, else the caller's
next child session), not a transcript of its own.

A message row's ``parts`` is a JSON list: ``text``, ``reasoning``, ``tool_call``
(``{id, name, input: a JSON string, finished}`` in an assistant row: the calls of one
row are one message), ``tool_result`` (``{tool_call_id, name, content, is_error}`` in a
``tool`` row), ``finish``. The last assistant text is the answer. Tokens are counted per
session only: occupancy is null, with the reason.

Tools: ``view`` reads ``file_path``, ``grep`` and ``rg`` are Greps, ``glob`` and ``ls``
Globs, ``bash`` runs ``command``, ``todos`` is bookkeeping, ``agent`` delegates, MCP
tools are ``mcp_<server>_<tool>`` (read as ``mcp__<server>__<tool>``); a malformed name a
local model wrote is a tool of its own, not an error.
"""

from __future__ import annotations

import sqlite3
from collections.abc import Sequence
from typing import Any

from ..events import Collector
from . import claims
from .base import NotATranscript
from .opencode import MAX_DEPTH
from .sqlite import columns, connect, require
from .tools import Feed, Tools, json_text, number

PATTERN = claims.CRUSH
TOOLS = Tools(
    read={"view": ("file_path", "path")},
    grep=frozenset({"grep", "rg", "sourcegraph"}),
    glob=frozenset({"glob", "ls"}),
    shell={"bash": ("command",)},
    delegate=frozenset({"agent"}),
    bookkeeping=frozenset({"todos"}),
    mcp_prefix="mcp_",
)
SCHEMA = {"sessions": ("id", "parent_session_id"), "messages": ("id", "session_id", "role", "parts")}


def sessions(path: str) -> list[str]:
    """The database's sessions that are no subagent's."""
    with connect(path) as conn:
        require(conn, path, SCHEMA)
        order = "created_at, id" if "created_at" in columns(conn, "sessions") else "id"
        rows = conn.execute(
            "SELECT id FROM sessions WHERE parent_session_id IS NULL OR parent_session_id = '' "
            f"OR parent_session_id NOT IN (SELECT id FROM sessions) ORDER BY {order}"
        )
        return [row[0] for row in rows if isinstance(row[0], str)]


def _parts(raw: Any) -> list[Any]:
    parts = json_text(raw) if isinstance(raw, (str, bytes)) else raw
    return parts if isinstance(parts, list) else []


def _messages(conn: sqlite3.Connection, session: str) -> list[tuple[str, Any, list[Any]]]:
    order = "created_at, id" if "created_at" in columns(conn, "messages") else "rowid"
    rows = conn.execute(
        f"SELECT id, role, parts FROM messages WHERE session_id = ? ORDER BY {order}", (session,)
    )
    return [(str(mid), role, _parts(parts)) for mid, role, parts in rows]


def _feed(feed: Feed, thread: str, messages: list[tuple[str, Any, list[Any]]]) -> list[str]:
    """One session's messages into ``thread``; the ids of its ``agent`` calls, in order."""
    main = thread == "main"
    agents: list[str] = []
    for mid, role, parts in messages:
        texts: list[str] = []
        if role == "user" and main:
            said = [p.get("data") for p in parts if isinstance(p, dict) and p.get("type") == "text"]
            feed.c.asked(*[d["text"] for d in said if isinstance(d, dict) and isinstance(d.get("text"), str)])
        for part in parts:
            data = part.get("data") if isinstance(part, dict) else None
            if not isinstance(data, dict):
                continue
            kind = part.get("type")
            if kind == "text" and isinstance(data.get("text"), str):
                if role == "assistant":
                    texts.append(data["text"])
                elif main:
                    feed.added(data["text"])
            elif kind == "reasoning" and main:
                feed.added(data.get("thinking"))
            elif kind == "tool_call":
                tid = feed.call(
                    data.get("id"),
                    data.get("name"),
                    data.get("input"),
                    thread=thread,
                    message=f"#crush-{mid}",
                )
                if tid is not None and data.get("name") in TOOLS.delegate:
                    agents.append(tid)
            elif kind == "tool_result":
                feed.result(data.get("tool_call_id"), data.get("content"), error=data.get("is_error") is True)
        if role == "assistant" and main:
            feed.turns += 1
            if texts:
                feed.said("".join(texts))
    return agents


def read(files: Sequence[str], collector: Collector, *, decode_all: bool = False) -> None:
    """Feed one Crush session of a database to ``collector``."""
    del decode_all
    path, session = files[0], collector.session
    feed = Feed(collector, TOOLS)
    tokens: int | None = None
    with connect(path) as conn:
        require(conn, path, SCHEMA)
        row = conn.execute("SELECT * FROM sessions WHERE id = ?", (session,)).fetchone() if session else None
        if row is None:
            raise NotATranscript(f"not a transcript: no session {session!r} in the database")
        have = columns(conn, "sessions")
        if {"prompt_tokens", "completion_tokens"} <= have:
            counts = conn.execute(
                "SELECT prompt_tokens, completion_tokens FROM sessions WHERE id = ?", (session,)
            ).fetchone()
            if counts is not None and number(counts[0]) is not None:
                tokens = counts[0] + (number(counts[1]) or 0)
        messages = _messages(conn, session)
        collector.lines += len(messages)
        collector.recognized = True
        queue = [(session, _feed(feed, "main", messages), 0)]
        seen = {session}
        while queue:
            caller, calls, depth = queue.pop(0)
            children = [
                r[0]
                for r in conn.execute(
                    "SELECT id FROM sessions WHERE parent_session_id = ? ORDER BY "
                    + ("created_at, id" if "created_at" in have else "id"),
                    (caller,),
                )
            ]
            spare = [c for c in children if c not in calls]
            for tid in calls:
                child = tid if tid in children else (spare.pop(0) if spare else None)
                if child is None or child in seen or depth >= MAX_DEPTH:
                    continue
                seen.add(child)
                sub = _messages(conn, child)
                collector.lines += len(sub)
                queue.append((child, _feed(feed, tid, sub), depth + 1))
    collector.order_by_spawn()
    collector.processed = tokens
    feed.run(tokens)
