"""A SQLite database of an agent's sessions, read in place: read-only, never copied,
never written (its ``-wal`` is read by SQLite itself). Only the tables a reader names
are queried (OpenCode's database also holds an ``account`` table with tokens).

``mode=ro`` alone does not keep SQLite from writing beside a database in WAL mode: it
creates a ``-wal`` and a ``-shm`` when there are none, and writes its read marks in the
``-shm``. So a database with no rows in a ``-wal`` is opened ``immutable`` (nothing
beside it is opened), and one with rows there ``readonly_shm`` (SQLite reads the
``-shm`` without writing to it); one whose ``-wal`` holds rows and has no ``-shm`` is
not read (SQLite would create the ``-shm``). A ``-wal`` with no WAL header holds no rows
(SQLite ignores it)."""

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
    uri = f"{Path(path).resolve().as_uri()}?mode=ro"
    wal = _wal(f"{path}-wal")
    if not wal and not _size(f"{path}-journal"):
        uri += "&immutable=1"  # all its rows are in the file: open nothing beside it
    elif wal and not os.path.isfile(f"{path}-shm"):
        raise Unreadable(
            f"cannot read {name} without writing beside it: its -wal holds rows and it has no -shm, "
            "which SQLite would create (copy the -shm along, or checkpoint the database)"
        )
    else:
        uri += "&readonly_shm=1"  # the -wal's rows through the -shm, never writing a read mark in it
    try:
        conn = sqlite3.connect(uri, uri=True)
    except sqlite3.Error as exc:
        raise Unreadable(f"cannot open {name}: {exc}") from None
    try:
        conn.execute("PRAGMA query_only = ON")
        yield conn
    except sqlite3.Error as exc:
        raise Unreadable(f"cannot read {name}: {exc}") from None
    finally:
        conn.close()


def _size(path: str) -> int:
    try:
        return os.path.getsize(path)
    except OSError:
        return 0


def _wal(path: str) -> bool:
    """Whether the ``-wal`` at ``path`` can hold rows: it starts with a WAL header (its magic
    number, a page size SQLite allows). SQLite reads a database without the -wal when it does
    not, as the file is then read here (immutable): opened read-only beside such a -wal,
    SQLite retried for ten seconds before it failed ("locking protocol")."""
    try:
        with open(path, "rb") as fh:
            head = fh.read(32)
    except OSError:
        return False
    if len(head) < 32:
        return False
    magic, page = int.from_bytes(head[:4], "big"), int.from_bytes(head[8:12], "big")
    return magic & ~1 == 0x377F0682 and 512 <= page <= 65536 and page & (page - 1) == 0


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
