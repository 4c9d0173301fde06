"""The verdict cache: each transcript's record kept between runs, in pytest's cache directory.

A run judges a transcript again only when something that bears on its record
changed. The key of a record (`VerdictCache.key`) is the XXH3-128 digest of:

- the plugin's code (`code_identity`: a digest of the package's source files,
  its version, orjson's and Python's): a development commit changes it;
- every option that changes a record (`options.record_key`: one declared
  table next to the options, which a test holds against the option table);
- what discovery says of the transcript (its path, kind, arm, group, run,
  notes, files, copies: everything `report.record` takes from it);
- the bytes of each of its files (a directory campaign's files hashed as they
  lie on disk, a ``.gz`` compressed), or of the whole archive it is a member of.

A transcript whose key is found is not read nor decoded: its record, the
warnings its judging raised and its outcome are replayed (`Entry`). Only
transcripts read by a built-in reader through the run's file opener are kept
(a database's sessions and a plug-in's reader are judged every time), and an
entry is stored only when every file the reader opened is one the key covers.

The store is one SQLite database per code identity in
``<cache_dir>/d/explore-suff/`` (``config.cache.mkdir``): ``--cache-clear``
empties it with the rest of pytest's cache, and ``-p no:cacheprovider`` (no
``config.cache``) switches it off. SQLite makes it safe for xdist workers and
for runs at the same time (each writes its entries in batches, in a
transaction of its own); measured against one file per transcript and an
append-only log in docs/performance.md. Every entry carries its key and a
checksum of its bytes: a damaged or foreign entry is a miss, never a verdict,
and a database that is no longer one is set aside and started afresh.
"""

from __future__ import annotations

import contextlib
import os
import sqlite3
import stat
import sys
import time
from collections.abc import Mapping, Sequence
from typing import Any

import orjson
import xxhash

from . import __version__
from .campaign import Transcript
from .jsonl import Undecodable, decode

#: The layout of an entry and of the database; a change makes every older entry a miss.
SCHEMA = 2
_MAGIC = b"ESV1"
_DB = "verdicts-{identity}.sqlite3"
#: Besides the current code's database, the most recently used ones of other code kept
#: (a project that switches between two installed versions); older ones are deleted.
KEEP_OTHERS = 2
#: Summaries kept (`VerdictCache.keep_summary`): the newest this many, older ones deleted.
KEEP_SUMMARIES = 256
#: Entries are written in batches of about this many bytes (or at the end of the session).
BATCH_BYTES = 4 << 20
#: Files hashed in one read up to this size, their bytes handed to the judge (`sources.SMALL_FILE`).
WHOLE = 4 << 20
_CHUNK = 1 << 20
#: How often a locked database is tried before the run does without the cache (waits of
#: 0.05 s doubling: 1.55 s in all).
_OPEN_ATTEMPTS = 5
#: How much of the database SQLite maps (address space, not memory: pages are read on use).
MMAP = 1 << 30

#: What an item's judging ended in, replayed on a hit.
CLASSIFIED, EXCLUDED, FAILING, NOT_TRANSCRIPT = range(4)

_identity: str | None = None


def code_identity() -> str:
    """A digest of the plugin's code: its source files (a development commit changes it),
    its version, and the encoder and interpreter whose output the records are. Worked out
    once a process (the package's sources are about 600 KB: about a millisecond)."""
    global _identity
    if _identity is None:
        h = xxhash.xxh3_128()
        h.update(f"{SCHEMA}\0{__version__}\0{orjson.__version__}\0{sys.version_info[:2]}\0".encode())
        package = os.path.dirname(os.path.abspath(__file__))
        for rel in sorted(_sources(package, "")):
            h.update(rel.encode() + b"\0")
            with open(os.path.join(package, rel), "rb") as fh:
                h.update(fh.read())
            h.update(b"\0")
        _identity = h.hexdigest()
    return _identity


def _sources(folder: str, prefix: str) -> list[str]:
    out = []
    with os.scandir(folder) as entries:
        for entry in entries:
            if entry.is_dir() and entry.name != "__pycache__":
                out += _sources(entry.path, f"{prefix}{entry.name}/")
            elif entry.name.endswith(".py"):
                out.append(prefix + entry.name)
    return out


class Entry:
    """A record as the cache gives it back: the shipment's bytes and what the store keeps
    of it (as JSON, as an xdist worker ships it), the warnings the reader raised, the files
    it looked for and did not find, and how the item ended (`CLASSIFIED`, ...)."""

    __slots__ = ("absent", "kept", "outcome", "record", "row", "warnings")

    def __init__(
        self, outcome: int, record: bytes, kept: bytes, warnings: list[str], absent: list[str]
    ) -> None:
        self.outcome, self.record, self.kept, self.warnings = outcome, record, kept, warnings
        #: relative to the campaign: a hit only while they are still missing (a subagent's sidecar)
        self.absent = absent
        self.row: list[Any] | None = None  # ``kept`` decoded, once read back


def pack(key: bytes, entry: Entry) -> bytes:
    """An entry as the database holds it: magic, key, checksum, then the header (outcome,
    warnings, absent files), what the store keeps and the record, each but the last after
    its length. Raises TypeError for what JSON cannot hold (a name no UTF-8 can)."""
    header = orjson.dumps([entry.outcome, entry.warnings, entry.absent])
    body = b"".join((len(header).to_bytes(4, "little"), header, len(entry.kept).to_bytes(4, "little"),
                     entry.kept, entry.record))  # fmt: skip
    return _MAGIC + key + xxhash.xxh3_64_digest(key + body) + body


def unpack(key: bytes, data: Any) -> Entry | None:
    """The entry ``data`` holds for ``key``; None when it is damaged, of another key or of
    another layout (a miss)."""
    if not isinstance(data, bytes) or len(data) < 36 or data[:4] != _MAGIC or data[4:20] != key:
        return None
    if xxhash.xxh3_64_digest(key + data[28:]) != data[20:28]:
        return None
    at = 28
    size = int.from_bytes(data[at : at + 4], "little")
    header = data[at + 4 : at + 4 + size]
    at += 4 + size
    size = int.from_bytes(data[at : at + 4], "little")
    kept = data[at + 4 : at + 4 + size]
    record = data[at + 4 + size :]
    if len(kept) != size or not record:
        return None
    try:
        outcome, warnings, absent = decode(header)
        row = decode(kept)
    except (Undecodable, ValueError, TypeError):
        return None
    if (
        outcome not in (CLASSIFIED, EXCLUDED, FAILING, NOT_TRANSCRIPT)
        or not isinstance(row, list)
        or not isinstance(warnings, list)
        or not all(isinstance(w, str) for w in warnings)
        or not isinstance(absent, list)
        or not all(isinstance(a, str) for a in absent)
    ):
        return None
    entry = Entry(outcome, record, kept, warnings, absent)
    entry.row = row
    return entry


def unpack_summary(key: bytes, data: Any) -> dict[str, Any] | None:
    """The summary ``data`` holds for ``key``; None when it is damaged or of another key."""
    if not isinstance(data, bytes) or len(data) < 29 or data[:4] != _MAGIC or data[4:20] != key:
        return None
    if xxhash.xxh3_64_digest(key + data[28:]) != data[20:28]:
        return None
    try:
        summary = decode(data[28:])
    except (Undecodable, ValueError, TypeError):
        return None
    return summary if isinstance(summary, dict) else None


class Prehashed:
    """A transcript's files hashed before it is judged: the key's digests, and the bytes of
    the files read whole, which the judge then reads from memory (`sources.Digests` takes
    their digests as they are: each byte is read and hashed once)."""

    __slots__ = ("covered", "digests", "streamed", "whole")

    def __init__(self) -> None:
        self.digests: list[bytes] = []
        #: files hashed chunk by chunk (large, or .gz): path -> (size, mtime) when hashed; the
        #: judge reads them again, and an entry is kept only if they did not change meanwhile
        self.streamed: dict[str, tuple[int, int] | None] = {}
        #: absolute path -> (its bytes, their XXH3-128 state): files read whole
        self.whole: dict[str, tuple[bytes, Any]] = {}
        #: every file the key covers (the judge may open no other)
        self.covered: set[str] = set()


def prehash(t: Transcript) -> Prehashed | None:
    """The digests of a directory campaign's transcript's files (all of ``rel_files``:
    sidecars too), as they lie on disk; None when one cannot be read (the judge says why)."""
    out = Prehashed()
    for rel in t.rel_files:
        path = os.path.join(t.root, rel)
        out.covered.add(path)
        try:
            fd = os.open(path, os.O_RDONLY | os.O_NONBLOCK)  # a FIFO must not block here
        except FileNotFoundError:
            out.digests.append(b"-")  # listed and gone: judged as it is, and keyed so
            continue
        except OSError:
            return None
        try:
            info = os.fstat(fd)
            if not stat.S_ISREG(info.st_mode):
                return None
            size = info.st_size
            h = xxhash.xxh3_128()
            if size < WHOLE and not path.endswith(".gz"):
                data = os.read(fd, size + 1)
                if len(data) > size:  # grew while being read: left to the judge
                    return None
                h.update(data)
                out.whole[path] = (data, h)
            else:
                out.streamed[path] = (info.st_size, info.st_mtime_ns)
                while chunk := os.read(fd, _CHUNK):
                    h.update(chunk)
        except OSError:
            return None
        finally:
            os.close(fd)
        out.digests.append(h.digest())
    return out


def _transcript_identity(t: Transcript) -> bytes:
    """What discovery says of a transcript, as far as its record reads it (not where the
    campaign lies: a record names its files relative to the campaign)."""
    fields = (t.path, t.kind, t.arm, t.group, t.run, t.notes, t.rel_files, t.read, t.agent, t.copies,
              t.session)  # fmt: skip
    return repr(fields).encode("utf-8", "surrogateescape")


class VerdictCache:
    """The records of earlier runs, by key, in one SQLite database of ``directory``.

    Opened at the first look-up. A database that cannot be opened or read (another
    program's file, damaged) is deleted and made anew once; if that fails too, the
    cache is off for the rest of the run (every transcript judged, nothing stored).
    """

    def __init__(self, directory: str, options: Sequence[Any]) -> None:
        self.directory = directory
        self.identity = code_identity()
        self.path = os.path.join(directory, _DB.format(identity=self.identity[:16]))
        self._context = xxhash.xxh3_128(
            f"{self.identity}\0".encode() + repr(tuple(options)).encode("utf-8", "surrogateescape")
        ).digest()
        self._db: sqlite3.Connection | None = None
        self._broken = False
        self._pending: list[tuple[bytes, bytes]] = []
        self._pending_bytes = 0
        self._pending_summaries: list[tuple[bytes, bytes]] = []
        self._archives: dict[str, bytes | None] = {}
        self.hits = 0
        self.stored = 0

    # --- keys -------------------------------------------------------------------------------

    def key(self, t: Transcript, digests: Sequence[bytes]) -> bytes:
        h = xxhash.xxh3_128(self._context)
        h.update(_transcript_identity(t))
        for d in digests:
            h.update(b"\0" + d)
        return h.digest()

    def archive_digest(self, archive: str) -> bytes | None:
        """The digest of a whole archive's bytes, once a process: a member's key takes it
        (members are not hashed one by one: that would inflate them twice)."""
        if archive not in self._archives:
            h = xxhash.xxh3_128()
            try:
                with open(archive, "rb") as fh:
                    while chunk := fh.read(_CHUNK):
                        h.update(chunk)
                self._archives[archive] = h.digest()
            except OSError:
                self._archives[archive] = None
        return self._archives[archive]

    # --- the database -----------------------------------------------------------------------

    def _connect(self) -> sqlite3.Connection | None:
        if self._db is not None or self._broken:
            return self._db
        for attempt in range(_OPEN_ATTEMPTS):
            try:
                self._db = self._open()
                return self._db
            except sqlite3.OperationalError:
                # Locked: another worker or run is creating the database, or recovering its
                # log, at this moment. Not damage: removing the file here lost the other's
                # entries (half the cache under -n 2). Try again a few times (a loaded host
                # can hold such a lock for a while), then do without the cache for this run.
                self._close_db()
                time.sleep(0.05 * 2**attempt)
            except sqlite3.DatabaseError:
                self._close_db()
                if attempt:
                    break
                _remove_db(self.path)
            except OSError:
                break
        self._broken = True
        return None

    def _open(self) -> sqlite3.Connection:
        os.makedirs(self.directory, exist_ok=True)
        fresh = not os.path.exists(self.path)
        if fresh:
            _prune(self.directory, self.path)
        db = sqlite3.connect(self.path, timeout=10.0, isolation_level=None, check_same_thread=False)
        self._db = db
        version = db.execute("PRAGMA user_version").fetchone()[0]
        if version != SCHEMA:
            tables = db.execute("SELECT count(*) FROM sqlite_master").fetchone()[0]
            if version != 0 or tables:
                raise sqlite3.DatabaseError("not a verdict cache of this layout")
            # Pages of 16 KB: an entry (a record of a few KB) mostly fits one, no overflow chain.
            db.execute("PRAGMA page_size=16384")
            db.execute("PRAGMA journal_mode=WAL")
            db.execute("BEGIN IMMEDIATE")
            db.execute("CREATE TABLE IF NOT EXISTS entries (key BLOB PRIMARY KEY, entry BLOB NOT NULL)")
            db.execute("CREATE TABLE IF NOT EXISTS summaries (key BLOB PRIMARY KEY, summary BLOB NOT NULL)")
            db.execute(f"PRAGMA user_version={SCHEMA}")
            db.execute("COMMIT")
        # No fsync: a cache a crash damages costs a run its hits, never a verdict (each entry
        # carries its key and a checksum; a file that is no database is made anew).
        db.execute("PRAGMA synchronous=OFF")
        # Pages read from a map of the file, not a read call each.
        db.execute(f"PRAGMA mmap_size={MMAP}")
        return db

    def _close_db(self) -> None:
        if self._db is not None:
            with contextlib.suppress(sqlite3.Error):
                self._db.close()
            self._db = None

    def get(self, key: bytes) -> Entry | None:
        db = self._connect()
        if db is None:
            return None
        try:
            row = db.execute("SELECT entry FROM entries WHERE key = ?", (key,)).fetchone()
        except sqlite3.OperationalError:  # locked past the timeout, say: a miss
            return None
        except sqlite3.DatabaseError:
            self._damaged()
            return None
        entry = None if row is None else unpack(key, row[0])
        if entry is not None:
            self.hits += 1
        return entry

    def put(self, key: bytes, entry: Entry) -> None:
        if self._broken:
            return
        try:
            data = pack(key, entry)
        except (TypeError, ValueError):  # orjson's JSONEncodeError is a TypeError
            return
        self._pending.append((key, data))
        self._pending_bytes += len(data)
        if self._pending_bytes >= BATCH_BYTES:
            self.flush()

    def summary(self, key: bytes) -> dict[str, Any] | None:
        """The summary kept under ``key`` (`report.Columns.key`); None: none, or damaged."""
        db = self._connect()
        if db is None:
            return None
        try:
            row = db.execute("SELECT summary FROM summaries WHERE key = ?", (key,)).fetchone()
        except sqlite3.OperationalError:
            return None
        except sqlite3.DatabaseError:
            self._damaged()
            return None
        return None if row is None else unpack_summary(key, row[0])

    def keep_summary(self, key: bytes, summary: Mapping[str, Any]) -> None:
        """Keep ``summary`` under ``key`` (written with the entries), if JSON holds it exactly:
        read back, it must equal what was summed (no tuple, no NaN or infinity, string keys)."""
        if self._broken:
            return
        try:
            body = orjson.dumps(summary)
        except TypeError:
            return
        if decode(body) != summary:
            return
        self._pending_summaries.append((key, _MAGIC + key + xxhash.xxh3_64_digest(key + body) + body))

    def flush(self) -> None:
        pending, self._pending, self._pending_bytes = self._pending, [], 0
        summaries, self._pending_summaries = self._pending_summaries, []
        if not pending and not summaries:
            return
        db = self._connect()
        if db is None:
            return
        try:
            db.execute("BEGIN IMMEDIATE")
            try:
                db.executemany("INSERT OR REPLACE INTO entries (key, entry) VALUES (?, ?)", pending)
                if summaries:
                    db.executemany("INSERT OR REPLACE INTO summaries (key, summary) VALUES (?, ?)", summaries)
                    # The newest `KEEP_SUMMARIES` only: one a campaign's state and arm, a few KB each.
                    db.execute("DELETE FROM summaries WHERE rowid <= (SELECT max(rowid) FROM summaries) - ?",
                               (KEEP_SUMMARIES,))  # fmt: skip
                db.execute("COMMIT")
            except BaseException:
                db.execute("ROLLBACK")
                raise
            self.stored += len(pending)
        except sqlite3.OperationalError:  # busy past the timeout, disk full: not stored
            pass
        except sqlite3.DatabaseError:
            self._damaged()

    def _damaged(self) -> None:
        """The database is no longer one: set aside for the next run to start afresh."""
        self._close_db()
        _remove_db(self.path)
        self._broken = True

    def close(self) -> None:
        try:
            self.flush()
        finally:
            self._close_db()


def _remove_db(path: str) -> None:
    for suffix in ("", "-wal", "-shm", "-journal"):
        with contextlib.suppress(OSError):
            os.unlink(path + suffix)


def _prune(directory: str, current: str) -> None:
    """Deletes the databases of code other than the `KEEP_OTHERS` most recently used."""
    try:
        names = [n for n in os.listdir(directory) if n.startswith("verdicts-") and n.endswith(".sqlite3")]
        others = [os.path.join(directory, n) for n in names if os.path.join(directory, n) != current]
        others.sort(key=lambda p: _mtime(p), reverse=True)
    except OSError:
        return
    for path in others[KEEP_OTHERS:]:
        _remove_db(path)


def _mtime(path: str) -> float:
    latest = 0.0
    for suffix in ("", "-wal"):
        with contextlib.suppress(OSError):
            latest = max(latest, os.path.getmtime(path + suffix))
    return latest


class Lookup:
    """A transcript's key, and what judging it on a miss needs to keep its entry."""

    __slots__ = ("covered", "key", "streamed", "whole")

    def __init__(self, key: bytes, pre: Prehashed | None) -> None:
        self.key = key
        self.whole = pre.whole if pre is not None else None
        self.covered = pre.covered if pre is not None else None  # None: members of an archive
        self.streamed = pre.streamed if pre is not None else {}


def lookup(cache: VerdictCache, t: Transcript, readers: Mapping[str, Any]) -> Lookup | None:
    """The key of ``t``; None when the cache cannot keep it: a database's session, a
    plug-in's reader (its code is not this package's), a file that cannot be read."""
    reader = readers.get(t.kind)
    if t.session or reader is None or getattr(reader.read, "__module__", None) != READERS:
        return None
    if t.archive is not None:
        digest = cache.archive_digest(t.archive)
        return None if digest is None else Lookup(cache.key(t, [digest]), None)
    pre = prehash(t)
    return None if pre is None else Lookup(cache.key(t, pre.digests), pre)


#: Where the built-in readers' `Reader.read` functions are made (`readers._reading`).
READERS = "pytest_explore_suff.readers"


def store(
    cache: VerdictCache,
    found: Lookup,
    t: Transcript,
    shipment: Any,
    outcome: int,
    warnings: Sequence[str],
    opened: Sequence[str],
    missing: Sequence[str],
) -> None:
    """Keep the entry of a transcript just judged, when its key covers all that was read:
    every file its reader opened is one the key hashed, the files hashed as they streamed
    did not change meanwhile, and every file it found missing is in the campaign."""
    if not isinstance(shipment, tuple):  # a record kept as it is (`store.shipped`): judged again
        return
    absent: list[str] = []
    if found.covered is not None:
        if not found.covered.issuperset(opened):
            return
        for path, seen in found.streamed.items():
            if _stamp(path) != seen:
                return
        base = t.root + os.sep
        for path in missing:
            if not path.startswith(base):
                return
            absent.append(path[len(base) :])
    data, row = shipment
    try:
        kept = row if isinstance(row, bytes) else orjson.dumps(row)
    except (TypeError, ValueError):
        return
    cache.put(found.key, Entry(outcome, data, kept, list(warnings), sorted(set(absent))))


def _stamp(path: str) -> tuple[int, int] | None:
    try:
        info = os.stat(path)
    except OSError:
        return None
    return info.st_size, info.st_mtime_ns
