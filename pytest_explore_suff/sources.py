"""Where a campaign's bytes come from: a directory, or an archive read in place.

Archived campaigns (``.tar.gz``, ``.tgz``, ``.tar``, ``.zip``) are read without
extracting them to disk. Zip and plain tar members are read at their offsets.
A ``.tar.gz`` is one gzip stream, which cannot seek: `IndexedGzip` decompresses
it once, keeps a decompressor checkpoint every few MB (the idea of zlib's
zran.c), and then serves any offset by resuming from the nearest checkpoint.
Transcripts stored as ``.jsonl.gz`` are decompressed as they stream, in a
directory or inside an archive.
"""

from __future__ import annotations

import bisect
import gzip
import io
import os
import posixpath
import re
import stat
import tarfile
import weakref
import zipfile
import zlib
from collections.abc import Callable, Iterable, Sequence
from contextvars import ContextVar, Token
from typing import Any, BinaryIO

import xxhash

from .jsonl import BUFFER

ARCHIVE_SUFFIXES = (".tar.gz", ".tgz", ".tar", ".zip")
Opener = Callable[[str], BinaryIO]


#: SQLite databases (OpenCode's, Crush's): an archive lists them, to say they are not read.
DATABASE_SUFFIXES = (".db", ".sqlite", ".sqlite3")


class ArchiveError(Exception):
    """An archive that cannot be read; ``str()`` says why in one line."""


#: What reading a damaged archive member raises, besides OSError.
MEMBER_ERRORS = (EOFError, zlib.error, zipfile.BadZipFile, tarfile.TarError)


def logical_name(name: str) -> str:
    """``run-x.jsonl.gz`` -> ``run-x.jsonl`` (a Gemini ``session-*.json.gz`` too): names are
    matched without the compression suffix."""
    return name[:-3] if name.endswith((".jsonl.gz", ".json.gz")) else name


#: The ground-truth file a campaign can hold at its root (``docs/ground-truth.md``).
TRUTH_NAME = "explore-suff-truth.toml"

#: Directories that hold no transcripts, only bulk (``__MACOSX``: the resource forks a
#: macOS Finder zip adds beside its folder): never walked, and their archive members skipped.
SKIP_DIRS = frozenset({".git", "node_modules", "__pycache__", ".venv", ".hg", ".svn", "__MACOSX"})

#: A later turn of a multi-turn run, ``<base>.t<k>.jsonl`` (its first turn is ``<base>.jsonl``).
TURN = re.compile(r"^(?P<base>.+)\.t(?P<turn>\d+)\.jsonl$")


def turns_of(files: Sequence[str]) -> int:
    """How many of ``files[1:]`` are later turns of the run ``files[0]`` begins (discovery
    lists them right after it, before any subagent file); the first may be missing."""
    first = logical_name(files[0])
    m = TURN.match(first)
    base = m["base"] if m else first.removesuffix(".jsonl")
    count = 0
    for name in files[1:]:
        m = TURN.match(logical_name(name))
        if m is None or m["base"] != base:
            break
        count += 1
    return count


def is_transcript_name(name: str) -> bool:
    """A file that may hold a transcript: JSONL (Claude Code, Codex CLI, Gemini CLI's newer
    form), or a JSON document (Gemini CLI sessions; other ``.json`` files are sniffed and
    listed as ignored). A Claude subagent's ``.meta.json`` sidecar is read with its subagent."""
    name = logical_name(name)
    return name.endswith(".jsonl") or (name.endswith(".json") and not name.endswith(".meta.json"))


#: The names a Claude subagent's sidecar can have: plain first, then gzipped (``gzip -r``).
SIDECAR_SUFFIXES = (".meta.json", ".meta.json.gz")


def is_sidecar_name(name: str) -> bool:
    """A Claude subagent's ``.meta.json`` sidecar, plain or gzipped."""
    return name.endswith(SIDECAR_SUFFIXES)


def is_archive(path: str) -> bool:
    return path.lower().endswith(ARCHIVE_SUFFIXES) and os.path.isfile(path)


#: A regular file shorter than this is read whole, in one call: a buffered reader costs
#: microseconds more a file (its object, a `BUFFER`-sized buffer, system calls to size,
#: place and close it and a read at the end to see EOF), and its readline calls cost
#: more than those of a file in memory: reading an explore-heavy campaign's lines (400
#: transcripts, 95 MB, files of 5 KB to 1.4 MB) took 68 ms through it, 33 ms from memory.
#: A file is read one at a time: at most this much is held, against the reader's `BUFFER`.
#: On a 1.1 GB campaign whose files are 1.4 MB in the median (the threshold was 64 KB):
#: 8.1 -> 7.0 s CPU, peak RSS 62.6 -> 65.2 MB; at 16 MB, no faster and 68.6 MB.
SMALL_FILE = 4 << 20

#: What reading a file's first lines (sniffing) reads at a time. A transcript's first
#: lines are a few KB; with `BUFFER` the first readline would read a megabyte of
#: every file, most of it again when the file is judged.
HEAD_BUFFER = 1 << 14


def _open_plain(path: str, small: int, buffer: int, *, regular: bool = False) -> BinaryIO:
    """An uncompressed file: a regular one shorter than ``small`` read whole and served
    from memory, anything else through a reader with a ``buffer``-byte buffer.

    ``os.open`` and ``os.read``: no file object for the small ones, whose bytes are
    in memory before the first line is asked for. Only a regular file is trusted to be
    whole after one short read (a pipe's is only what was written so far): its type is
    asked unless the caller knows it (``regular``: a file discovery walked), and then
    its size too, so that a large file is not read in part before it is streamed."""
    fd = os.open(path, os.O_RDONLY)
    try:
        if regular:
            want = small
        else:
            info = os.fstat(fd)
            # One byte past its size, to see that it grew: reading ``small`` bytes would make
            # a buffer of that size for every file (megabytes, to hold a few KB).
            want = info.st_size + 1 if stat.S_ISREG(info.st_mode) and info.st_size < small else 0
        data = os.read(fd, want) if want else None
        if data is None or len(data) == want:  # not regular, or not small (or grown since): streamed
            if data is not None:
                os.lseek(fd, 0, os.SEEK_SET)
            # A directory passes os.open: this raises its IsADirectoryError, as open(path) does.
            return open(fd, "rb", buffering=buffer)
    except BaseException:
        os.close(fd)
        raise
    os.close(fd)  # all of it is in memory (a file that grows past ``small`` later is read as it was)
    return io.BytesIO(data)


def open_path(path: str) -> BinaryIO:
    """A file of a directory campaign, decompressed when it is ``.gz``.

    One below `SMALL_FILE` is read whole: for a small transcript, 5-6 us less than
    through a buffered reader in a loop of loads, 0.025 ms in a pytest session (profile.py
    --fine: opening and the line loop; one read and one lseek less a file, no buffered
    reader made and freed). At 626ef21 that cost 0.5 MB more peak RSS on 10,000
    small transcripts (88.2 -> 88.75 MB); at 2508c62 it costs none (85.32 -> 85.27 MB,
    means of six runs each)."""
    if path.endswith(".gz"):
        return gzip.open(path, "rb")  # type: ignore[return-value]
    return _open_plain(path, SMALL_FILE, BUFFER)


def open_head(path: str) -> BinaryIO:
    """A regular file of a directory campaign (discovery walked it), for its first lines
    only (sniffing): `open_path` with `HEAD_BUFFER` (discovery opens every file; a small
    one is read whole), and no system call to ask what the walk said already."""
    if path.endswith(".gz"):
        return gzip.open(path, "rb")  # type: ignore[return-value]
    return _open_plain(path, HEAD_BUFFER, HEAD_BUFFER, regular=True)


class IndexedGzip(io.RawIOBase):
    """A gzip file with random access: a checkpoint every `SPAN` uncompressed bytes.

    The index is built lazily, while the stream is first read front to back
    (listing a tar reads it front to back), so a .tar.gz is inflated once to
    list and index it and once more to read its members.
    """

    SPAN = 1 << 20
    CHUNK = 1 << 16

    def __init__(self, path: str) -> None:
        self._file = open(path, "rb")  # noqa: SIM115 - closed in close()
        d = zlib.decompressobj(47)  # 32 + 15: gzip or zlib header, detected
        # (uncompressed offset, compressed offset, decompressor state there)
        self._points: list[tuple[int, int, zlib._Decompress]] = [(0, 0, d.copy())]
        self._offsets = [0]  # the uncompressed offsets of _points, for bisect
        self._size: int | None = None  # known once the stream was inflated to its end
        self._pos = 0
        self._cursor: tuple[zlib._Decompress, int, int] = (d, 0, 0)  # (decompressor, comp, uncomp)
        self._pending = b""  # output already inflated just before the cursor, not yet returned

    @staticmethod
    def _inflate(d: zlib._Decompress, data: bytes) -> bytes:
        try:
            return d.decompress(data)
        except zlib.error as exc:
            raise ArchiveError(f"corrupt gzip data: {exc}") from None

    def _next_member(self, d: zlib._Decompress) -> tuple[zlib._Decompress, bytes]:
        """The decompressor of the next gzip member, and what its first bytes gave."""
        rest = d.unused_data
        if not rest.strip(b"\0"):  # tar pads with zeros; nothing more to inflate
            return d, b""
        nxt = zlib.decompressobj(47)
        return nxt, self._inflate(nxt, rest)

    def readable(self) -> bool:
        return True

    def seekable(self) -> bool:
        return True

    def tell(self) -> int:
        return self._pos

    @property
    def compressed(self) -> int:
        """How far into the file the stream has been inflated: the bytes read of it."""
        return self._cursor[1]

    def seek(self, offset: int, whence: int = io.SEEK_SET) -> int:
        if whence == io.SEEK_END and self._size is None:
            while self._read_at(self._cursor[2], self.CHUNK * 16):  # inflate to the end
                pass
        base = {io.SEEK_SET: 0, io.SEEK_CUR: self._pos, io.SEEK_END: self._size or 0}[whence]
        self._pos = max(0, base + offset)
        return self._pos

    def readinto(self, buffer: bytearray | memoryview) -> int:  # type: ignore[override]
        want = len(buffer) if self._size is None else min(len(buffer), self._size - self._pos)
        if want <= 0:
            return 0
        data = self._read_at(self._pos, want)
        buffer[: len(data)] = data
        self._pos += len(data)
        return len(data)

    def _read_at(self, pos: int, n: int) -> bytes:
        d, comp, uncomp = self._cursor
        start = uncomp - len(self._pending)  # offset of self._pending[0]
        i = bisect.bisect_right(self._offsets, pos) - 1
        if pos < start or (pos - uncomp > self.SPAN and self._offsets[i] > uncomp):
            # Behind the cursor, or a checkpoint lies closer: resume from the checkpoint.
            uncomp, comp, state = self._points[i]
            d = state.copy()
            self._pending, start = b"", uncomp
        out = bytearray(self._pending[pos - start :] if pos < uncomp else b"")
        self._file.seek(comp)
        while len(out) < n:
            chunk = self._file.read(self.CHUNK)
            if not chunk:
                if not d.eof:
                    raise ArchiveError("the gzip stream is cut short")
                self._size = uncomp
                break
            comp += len(chunk)
            data = self._inflate(d, chunk)
            if d.eof and d.unused_data:
                d, more = self._next_member(d)
                data += more
            uncomp += len(data)
            if uncomp - self._offsets[-1] >= self.SPAN and not d.unused_data:
                self._points.append((uncomp, comp, d.copy()))  # new ground: index it
                self._offsets.append(uncomp)
            if uncomp > pos:
                out += data[max(0, pos - (uncomp - len(data))) :]
        self._pending = bytes(out[n:])
        self._cursor = (d, comp, uncomp)
        return bytes(out[:n])

    def close(self) -> None:
        self._file.close()
        super().close()


#: Told, while an archive's members are listed (the whole archive read through once), how
#: many of its bytes have been read so far: a progress display (`session`) sets it.
INDEXING: ContextVar[Callable[[int], None] | None] = ContextVar("explore_suff_indexing", default=None)


class ArchiveSource:
    """A campaign inside an archive: its transcript members, and how to open them."""

    def __init__(self, path: str) -> None:
        self.path = path
        self.ignored: list[dict[str, str]] = []
        self.files: list[str] = []  # relative names, in archive order
        #: members no reader reads (names), and folders under `SKIP_DIRS` (ending "/")
        self.others: list[str] = []
        self.sidecars: set[str] = set()  # relative names of the subagents' .meta.json(.gz) files
        #: relative names of the SQLite databases in it (an agent's: listed, never read in place)
        self.databases: list[str] = []
        #: the campaign's truth file at its top level (`TRUTH_NAME`), if the archive holds one
        self.truth: str | None = None
        self._extract: Callable[[str], BinaryIO]  # a member's stored bytes; FileNotFoundError if none
        self._closers: list[Callable[[], None]] = []
        # Closed by close(), or when garbage collected (a library caller that forgot).
        self._finalizer = weakref.finalize(self, _close_all, self._closers)
        try:
            if path.lower().endswith(".zip"):
                self._zip(path)
            else:
                self._tar(path)
        except (OSError, EOFError, tarfile.TarError, zipfile.BadZipFile, zlib.error) as exc:
            self.close()
            raise ArchiveError(f"not a readable archive: {exc}") from None
        except BaseException:
            self.close()
            raise

    def close(self) -> None:
        self._finalizer()

    def _tar(self, path: str) -> None:
        if path.lower().endswith((".tar.gz", ".tgz")):
            raw = IndexedGzip(path)
            self._closers.append(raw.close)
            # A small buffer: reading a 512-byte header must not inflate a megabyte past it.
            buffered = io.BufferedReader(raw, 1 << 14)
            tar = tarfile.open(fileobj=buffered, mode="r:")  # noqa: SIM115 - closed in close()
            read_so_far: Callable[[], int] = lambda: raw.compressed  # noqa: E731
        else:
            tar = tarfile.open(path, mode="r:")  # noqa: SIM115 - closed in close()
            plain = tar.fileobj
            read_so_far = (lambda: plain.tell()) if plain is not None else (lambda: 0)
        self._closers.insert(0, tar.close)
        members = {}
        entries = []
        progress = INDEXING.get()
        for i, info in enumerate(tar):  # archive order
            if progress is not None and not i & 15:
                progress(read_so_far())
            if info.isdir():
                continue
            if info.issym() or info.islnk():
                self.ignored.append({"path": info.name, "reason": "a link inside the archive, not followed"})
                continue
            entries.append((info.name, info.isfile()))
            members[info.name] = info
        found = {rel: members[name] for rel, name in self._accept(entries).items()}

        def extract(rel: str) -> BinaryIO:
            info = found.get(rel)
            fh = tar.extractfile(info) if info is not None else None
            if fh is None:
                raise FileNotFoundError(rel)
            return fh  # type: ignore[return-value]

        self._extract = extract

    def _zip(self, path: str) -> None:
        archive = zipfile.ZipFile(path)
        self._closers.append(archive.close)
        entries = []
        for info in archive.infolist():
            if info.is_dir():
                continue
            mode = (info.external_attr >> 16) & 0o170000
            if mode == 0o120000:  # a symlink stored by Info-ZIP
                reason = "a link inside the archive, not followed"
                self.ignored.append({"path": info.filename, "reason": reason})
                continue
            entries.append((info.filename, True))
        names = self._accept(entries)

        def extract(rel: str) -> BinaryIO:
            name = names.get(rel)
            if name is None:
                raise FileNotFoundError(rel)
            return archive.open(name)  # type: ignore[return-value]

        self._extract = extract

    def _accept(self, entries: list[tuple[str, bool]]) -> dict[str, str]:
        """Relative name -> member name, for the members a campaign can use.

        Names that escape the archive root are refused; a single top-level
        folder (``tar czf c.tar.gz ab-readme``) is the campaign root.
        """
        safe: list[tuple[str, str]] = []  # (clean name, member name)
        databases: list[str] = []
        others: list[str] = []
        truths: list[tuple[str, str]] = []  # a truth file's candidates (clean name, member name)
        for name, regular in entries:
            clean = posixpath.normpath(name.replace("\\", "/"))
            if name.startswith(("/", "\\")) or clean == ".." or clean.startswith("../") or ":" in name[:3]:
                self.ignored.append({"path": name, "reason": "escapes the archive root, not read"})
                continue
            folders = clean.split("/")[:-1]
            if not SKIP_DIRS.isdisjoint(folders):  # as a folder's walk never enters them
                skipped = next(i for i, part in enumerate(folders) if part in SKIP_DIRS)
                others.append("/".join(folders[: skipped + 1]) + "/")
                continue
            if not (is_transcript_name(clean) or is_sidecar_name(clean)):
                if regular and clean.rpartition("/")[2] == TRUTH_NAME:
                    truths.append((clean, name))
                if clean.lower().endswith(DATABASE_SUFFIXES) and regular:
                    databases.append(clean)
                else:
                    others.append(clean)
                continue
            if not regular:
                self.ignored.append({"path": clean, "reason": "not a regular file"})
                continue
            safe.append((clean, name))
        tops = {c.split("/", 1)[0] for c, _ in safe}
        strip = len(tops) == 1 and all("/" in c for c, _ in safe)
        if strip:  # ignored members are named like every other path: relative to the campaign root
            prefix = f"{next(iter(tops))}/"
            for entry in self.ignored:
                if entry["path"].startswith(prefix):
                    entry["path"] = entry["path"][len(prefix) :]
        top = f"{next(iter(tops))}/" if strip else None
        self.databases = [d[len(top) :] if top and d.startswith(top) else d for d in databases]
        unread = {o[len(top) :] if top and o.startswith(top) else o for o in others}
        self.others = [o for o in unread if o]  # a member that is the top folder itself: not one
        out: dict[str, str] = {}
        for clean, name in safe:
            rel = clean.split("/", 1)[1] if strip else clean
            if rel not in out:
                out[rel] = name
                if is_transcript_name(rel):
                    self.files.append(rel)
                else:
                    self.sidecars.add(rel)
        for clean, name in truths:  # at the campaign's top level: readable with `open`
            rel = clean[len(top) :] if top and clean.startswith(top) else clean
            if rel == TRUTH_NAME:
                out[rel] = name
                self.truth = rel
        return out

    def open(self, rel: str) -> BinaryIO:
        """A member to read through, streamed: never held whole (a member may inflate to
        gigabytes), buffered so that reading it line by line is fast; damage found
        while it is read raises `ArchiveError`."""
        try:
            fh = self._extract(rel)
        except MEMBER_ERRORS as exc:  # a bad CRC, damaged deflate data, a cut-short member
            raise ArchiveError(f"corrupt archive member: {exc}") from None
        member = io.BufferedReader(_Member(fh), BUFFER)
        # A .gz member's own stream is decompressed above the archive's: the archive's damage
        # is an `ArchiveError`, a transcript's cut .gz (a killed `| gzip`) the EOFError it is
        # in a folder, so that both keep what was readable and say the same.
        return _maybe_gunzip(rel, member)

    def head(self, rel: str) -> BinaryIO:
        """A member for reading its first lines only (sniffing): streamed."""
        return _maybe_gunzip(rel, self._extract(rel))


class _Member(io.RawIOBase):
    """A streamed member whose damage (found only as it is read) is an `ArchiveError`.

    Raw, to sit under an `io.BufferedReader`: its readline is C, where
    zipfile's own is Python and several times slower per line."""

    def __init__(self, fh: BinaryIO) -> None:
        super().__init__()
        self._fh = fh

    def readable(self) -> bool:
        return True

    def readinto(self, buffer: bytearray | memoryview) -> int:  # type: ignore[override]
        try:
            data = self._fh.read(len(buffer))
        except MEMBER_ERRORS as exc:  # a bad CRC, damaged deflate data, a cut-short member
            raise ArchiveError(f"corrupt archive member: {exc}") from None
        buffer[: len(data)] = data
        return len(data)

    def close(self) -> None:
        if not self.closed:
            self._fh.close()
        super().close()


class _GzipOver(gzip.GzipFile):
    """A gzip stream over an archive member that closes the member with it (a GzipFile
    leaves the file object it was given open: the archive's file would stay open)."""

    def __init__(self, fh: BinaryIO) -> None:
        super().__init__(fileobj=fh, mode="rb")
        self._under = fh

    def close(self) -> None:
        try:
            super().close()
        finally:
            self._under.close()


def _maybe_gunzip(name: str, fh: BinaryIO) -> BinaryIO:
    if name.endswith(".gz"):
        return _GzipOver(fh)  # type: ignore[return-value]
    return fh


def _close_all(closers: list[Callable[[], None]]) -> None:
    for close in closers:
        close()
    closers.clear()


class Sources:
    """The archives a run reads, each listed once and closed together.

    A pytest session owns one (on its config, closed at unconfigure) and makes it
    the active one while it runs; `archive_source` serves from it. Nothing is
    cached beyond it: an archive rebuilt between two runs is listed anew.
    """

    def __init__(self) -> None:
        self._open: dict[str, ArchiveSource] = {}

    def get(self, path: str) -> ArchiveSource:
        source = self._open.get(path)
        if source is None:
            source = self._open[path] = ArchiveSource(path)
        return source

    def close(self) -> None:
        for source in self._open.values():
            source.close()
        self._open.clear()


_ACTIVE: ContextVar[Sources | None] = ContextVar("explore_suff_sources", default=None)


def activate(sources: Sources | None) -> Token[Sources | None]:
    """Make ``sources`` serve `archive_source` (a session, until `deactivate`)."""
    return _ACTIVE.set(sources)


def deactivate(token: Token[Sources | None]) -> None:
    try:
        _ACTIVE.reset(token)
    except ValueError:  # pragma: no cover - set in another context
        _ACTIVE.set(None)


def active_sources() -> Sources | None:
    return _ACTIVE.get()


def archive_source(path: str) -> ArchiveSource:
    """The archive at ``path``: listed once per session while one is active; otherwise
    listed for this caller (close it, or it is closed when garbage collected)."""
    active = _ACTIVE.get()
    return active.get(path) if active is not None else ArchiveSource(path)


def opener(archive: str | None) -> Opener:
    """How to open a transcript's files: paths of a directory, or members of an archive."""
    return open_path if archive is None else archive_source(archive).open


#: The digest of a transcript's bytes, and how the report names it: XXH3 with 128 bits
#: (python-xxhash). It tells a changed transcript from an unchanged one (a chance
#: collision is 1 in 2**128); it is no defence against someone forging a transcript, which
#: the report never claims. About 8 GB/s on this project's benchmark machine, where
#: hashlib's fastest (SHA-256) ran at 1 GB/s and cost the explore-heavy benchmark 8% of
#: its CPU. A baseline whose digests are of another algorithm (``sha256/128``, of
#: development builds before December 2026) is compared as one without digests (`compare.load_baseline`).
DIGEST = "xxh3-128"
_DIGEST_HEX = 32


class Digests:
    """The digest of one transcript's bytes, made while its reader reads them: each file
    hashed once, in the order the reader first opens it, from the bytes it reads.

    A file read whole (below `SMALL_FILE`: most transcripts) is hashed in one call from
    the buffer it was read into; a streamed one chunk by chunk under the reader's
    buffer (no per-line cost). A file the reader left before its end has no digest of
    its bytes: the transcript then has none (``hexdigest`` is None).
    """

    __slots__ = ("_files", "_whole", "known", "missing")

    def __init__(self, known: dict[str, tuple[bytes, Any]] | None = None) -> None:
        self._files: dict[str, Any] = {}
        self._whole = True
        #: files read and hashed already (`cache.prehash`): path -> (bytes, XXH3-128 state)
        self.known = known
        #: the paths the reader asked for and found missing (a sidecar it looks for)
        self.missing: list[str] = []

    @property
    def opened(self) -> list[str]:
        """The paths the reader opened, in the order it first opened them."""
        return list(self._files)

    def opener(self, open_file: Opener) -> Opener:
        def open_digested(path: str) -> BinaryIO:
            if self.known is not None and (known := self.known.get(path)) is not None:
                whole, digest = known  # read whole and hashed before: served from memory
                self._files.setdefault(path, digest)
                return io.BytesIO(whole)
            try:
                fh = open_file(path)
            except FileNotFoundError:
                self.missing.append(path)
                raise
            if path in self._files:  # read again (a second pass): hashed the first time
                return fh
            h = self._files[path] = xxhash.xxh3_128()
            if type(fh) is io.BytesIO:
                with fh.getbuffer() as data:
                    h.update(data)
                return fh
            return io.BufferedReader(_Hashing(fh, h, self), BUFFER)

        return open_digested

    def left_early(self) -> None:
        self._whole = False

    def hexdigest(self) -> str | None:
        if not self._whole or not self._files:
            return None
        digests: list[bytes] = [h.digest() for h in self._files.values()]
        if len(digests) == 1:
            return digests[0].hex()[:_DIGEST_HEX]
        return xxhash.xxh3_128(b"".join(digests)).hexdigest()[:_DIGEST_HEX]


class _Hashing(io.RawIOBase):
    """A streamed file's bytes, hashed as its reader's buffer is filled."""

    def __init__(self, fh: BinaryIO, h: Any, digests: Digests) -> None:
        super().__init__()
        self._fh = fh
        self._h = h
        self._digests = digests
        self._eof = False

    def readable(self) -> bool:
        return True

    def readinto(self, buffer: bytearray | memoryview) -> int:  # type: ignore[override]
        if isinstance(self._fh, gzip.GzipFile):
            # One decompressed chunk at a time: a cut stream (a killed `| gzip`) raises
            # EOFError only once every byte before the cut was handed on, so the reader
            # keeps those lines; a whole-buffer readinto would drop them with the error.
            data = self._fh.read1(len(buffer))
            n = len(data)
            buffer[:n] = data
        else:
            n = self._fh.readinto(buffer)  # type: ignore[attr-defined]
        if n:
            self._h.update(memoryview(buffer)[:n])
        else:
            self._eof = True
        return int(n or 0)

    def close(self) -> None:
        if not self.closed:
            if not self._eof:
                self._digests.left_early()
            self._fh.close()
        super().close()


def campaign_digest(pairs: Iterable[tuple[str, str | None]]) -> str:
    """One digest of a campaign: its transcripts' paths and digests, in path order."""
    h = xxhash.xxh3_128()
    for path, digest in sorted(pairs):
        h.update(f"{path}\0{digest or '-'}\n".encode("utf-8", "surrogateescape"))
    return h.hexdigest()[:_DIGEST_HEX]
