"""A SQLite database of an agent's sessions, read in place: read-only, never copied,
never written (its ``-wal`` is read by SQLite itself). Only the tables a reader names
are queried (OpenCode's database also holds an ``account`` table with tokens)."""

from __future__ import annotations

import os
import sqlite3
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

from .base import Unreadable


@contextmanager
def connect(path: str) -> Iterator[sqlite3.Connection]:
    """A read-only connection; `Unreadable` (one line) when the file is no database."""
    name = os.path.basename(path)
    if not os.path.isfile(path):
        raise Unreadable(f"cannot open {name}: not a regular file")
    try:
        conn = sqlite3.connect(f"{Path(path).resolve().as_uri()}?mode=ro", uri=True)
    except sqlite3.Error as exc:
        raise Unreadable(f"cannot open {name}: {exc}") from None
    try:
        conn.execute("PRAGMA query_only = ON")
        yield conn
    except sqlite3.Error as exc:
        raise Unreadable(f"cannot read {name}: {exc}") from None
    finally:
        conn.close()


def columns(conn: sqlite3.Connection, table: str) -> set[str]:
    """The columns of ``table`` (none when it is missing)."""
    return {row[1] for row in conn.execute(f"PRAGMA table_info({table})")}


def require(conn: sqlite3.Connection, path: str, tables: dict[str, tuple[str, ...]]) -> None:
    """`Unreadable` unless each table has the columns named (an older or other schema)."""
    for table, needed in tables.items():
        have = columns(conn, table)
        missing = [c for c in needed if c not in have]
        if missing:
            what = f"no {table} table" if not have else f"its {table} table has no {', '.join(missing)}"
            raise Unreadable(f"{os.path.basename(path)}: not a database this reader knows ({what})")
