"""What every transcript reader shares: the streaming line loop and its errors."""

from __future__ import annotations

import functools
import os
import re
import zlib
from collections.abc import Callable, Iterator
from contextvars import ContextVar
from typing import TYPE_CHECKING, Any

from .. import MAX_LINE as MAX_LINE
from .. import RACE_MARKER
from ..jsonl import Undecodable, compact_json, decode
from ..sources import MEMBER_ERRORS, ArchiveError

if TYPE_CHECKING:  # discovery sniffs with this module: the collector is imported by the readers
    from ..events import Collector

#: Line types only interactive session logs write: a file that starts with
#: them is a session log, whatever identity its first line carries.
SESSION_LOG_TYPES = frozenset(
    {
        "summary", "file-history-snapshot", "queue-operation", "attachment", "progress",
        "ai-title", "last-prompt", "permission-mode", "custom-title", "agent-name",
    }
)  # fmt: skip
#: Event types of both formats; a file whose lines carry none of them is not a transcript.
EVENT_TYPES = frozenset({"system", "assistant", "user", "result"}) | SESSION_LOG_TYPES
_RACE = RACE_MARKER.encode()
_TOOL_USE = b'"tool_use"'
_TOOL_RESULT = b'"tool_result"'
_RESULT = b'"result"'


class TranscriptError(Exception):
    """A transcript that cannot be classified; ``str()`` is a one-line reason."""


class Unreadable(TranscriptError):
    pass


class NotATranscript(TranscriptError):
    pass


def looks_like_event(obj: dict[str, Any]) -> bool:
    """An agent event, not a look-alike record in some data file.

    Real events carry a session or line identity; a fixture such as
    ``{"type": "assistant", "message": {...}}`` in a copied repository does not.
    """
    kind = obj.get("type")
    if not isinstance(kind, str) or kind not in EVENT_TYPES:  # a list or dict is not hashable
        return False
    if "session_id" in obj or "sessionId" in obj or "uuid" in obj or "parent_tool_use_id" in obj:
        return True  # an identity; spelled out, not a loop: this runs on every file's first lines
    if kind in ("assistant", "user"):
        message = obj.get("message")
        return isinstance(message, dict) and message.get("role") == kind
    if kind == "file-history-snapshot":  # real ones carry no session id, only their snapshot
        return isinstance(obj.get("snapshot"), dict)
    return "subtype" in obj or "leafUuid" in obj


def kind_of(event: dict[str, Any]) -> str:
    """``interactive`` (a session log's line) or ``stream-json`` (a headless run's)."""
    interactive = "sessionId" in event or "isSidechain" in event or "parentUuid" in event
    interactive = interactive or event.get("type") in SESSION_LOG_TYPES  # a summary line has no session id
    return "interactive" if interactive else "stream-json"


_HEAD = 4096  # the block type sits near the start of a line in both formats
_TOOL_USE_ID = b'"tool_use_id"'
_AGENT_ID = b'"agentId"'
_PARENT_TOOL_USE_ID = b'"parentToolUseID"'
_ID_VALUE = re.compile(rb'\s*:\s*"([^"\\]*)"')
# Inside a JSON string every quote is escaped, so this only meets real keys.
_TYPE_KEY = re.compile(rb'"type"\s*:\s*"([^"\\]*)"')


def is_progress(line: bytes) -> bool:
    """A session log's ``progress`` line, told by its first ``type`` key.

    Claude Code writes a line's own ``type`` before ``data`` (the embedded
    message), and an assistant or user line's ``message`` starts with a type
    of its own (``message``, ``tool_use``, ``tool_result``): so the first type
    key is the line's. Every progress line also names its ``parentToolUseID``,
    which a tool input holding a ``{"type": "progress"}`` object is unlikely
    to. A line missed here is merely decoded, and the reader routes it by its
    decoded type.
    """
    m = _TYPE_KEY.search(line, 0, _HEAD)
    return m is not None and m.group(1) == b"progress" and _PARENT_TOOL_USE_ID in line


def worth_decoding(line: bytes, collector: Collector, *, links: bool = False) -> bool:
    """Cheap byte scan: can this line change a verdict?

    Most of a campaign's bytes are tool_result payloads of tools that are not
    the judged one (whole files the agent Read). Those lines are skipped
    without decoding unless they answer an id whose result we need, carry the
    race marker, or (``links``, session logs) a subagent link. The scan is two
    passes over such a line: its ``tool_use_id`` keys, then the race marker.

    A ``progress`` line (session logs) repeats a subagent's message, tool
    results included, and matters only as a link: it is decoded only when it
    names an ``agentId`` no earlier progress line named.
    """
    if links and is_progress(line):
        names = set()
        at = line.find(_AGENT_ID)
        while at != -1:
            if (m := _ID_VALUE.match(line, at + len(_AGENT_ID))) is not None:
                names.add(m.group(1))
            at = line.find(_AGENT_ID, at + 1)
        names -= collector.progress_agents
        collector.progress_agents |= names
        return bool(names)
    if collector.main_file:
        # The main thread's every line counts for its window (occupancy); `events` knows,
        # and does not ask for a main file's lines unless progress lines are in play.
        return True
    head = line[:_HEAD]
    if _TOOL_USE in head:
        return True
    if _TOOL_RESULT not in head:
        if _TOOL_USE in line:
            return True
        if _TOOL_RESULT not in line:
            return _RESULT in line and len(line) < 65536
    wanted = collector.wanted_bytes
    at = line.find(_TOOL_USE_ID)
    while at != -1:
        m = _ID_VALUE.match(line, at + len(_TOOL_USE_ID))
        if m is not None and m.group(1) in wanted:
            return True
        at = line.find(_TOOL_USE_ID, at + 1)
    if _RACE in line or (links and _AGENT_ID in line):
        return True
    collector.skipped_results += 1
    return False


def unlinked_delegation(collector: Collector, name: str, call_id: str, what: str) -> None:
    """D9: a delegation no child links to is judged "moved on", with a warning naming the call."""
    collector.warnings.append(
        f"{name} call {call_id}: no subagent {what} in the transcript is its child; judged as moved on"
    )


def unlinked_child(collector: Collector, label: str, call: str) -> None:
    """A subagent that no call links to: judged as its own thread, with a warning."""
    collector.warnings.append(
        f"subagent {label} could not be linked to its {call} call; judged as its own thread"
    )


#: Keys that say where and when a line was written, not what it says: a line without a
#: ``message`` is compared less these (M9). A copy into a resumed or forked session
#: re-chains ``parentUuid`` and can carry another session's id.
BOOKKEEPING_KEYS = frozenset(
    {
        "uuid", "parentUuid", "logicalParentUuid", "agentId", "isSidechain", "promptId", "slug",
        "sessionId", "session_id", "timestamp", "cwd", "version", "gitBranch", "userType",
    }
)  # fmt: skip


def _block_key(block: Any) -> int:
    """What one content block says, cheaply: a call or a result is its id (ids are unique
    to one call), a text its string's hash; anything else its compact JSON's hash.
    (No tuples: this runs on every line that carries a uuid.)"""
    if isinstance(block, dict):
        kind = block.get("type")
        if kind == "tool_use":
            tid = block.get("id")
            if isinstance(tid, str):
                return hash(tid)
        elif kind == "tool_result":
            tid = block.get("tool_use_id")
            if isinstance(tid, str):  # its call's id, told apart from the call's own key
                return ~hash(tid) if block.get("is_error") is True else -hash(tid)
        elif kind == "text" or kind == "thinking":
            value = block.get(kind)
            if isinstance(value, str):
                return hash(value)
    elif isinstance(block, str):
        return hash(block)
    return hash(compact_json(block))


def content_key(event: dict[str, Any]) -> int:
    """A digest of what a line says (M9): its ``message.content``, or, for a line without a
    ``message``, the whole line less `BOOKKEEPING_KEYS`.

    Structural, not a hash of serialized bytes: it runs on every line that carries a uuid,
    and a tool result's payload (often a whole file) is told by its call's id alone.
    """
    message = event.get("message")
    if isinstance(message, dict):
        content = message.get("content")
        if isinstance(content, list):
            if len(content) == 1:  # Claude Code writes one block a line
                return _block_key(content[0])
            return hash(tuple(map(_block_key, content)))
        return _block_key(content)
    return hash(compact_json({k: v for k, v in event.items() if k not in BOOKKEEPING_KEYS}))


class Replays:
    """The lines read, by ``uuid``: a line a resumed session replays is the same line,
    read once (D5 for the verdicts, M9 for the metrics).

    A replay is a uuid seen before **with the same content** (M9): old stream-json
    writes each content block of one message as its own line, all with one uuid, and
    those lines are all new. Each uuid keeps the digest of what its lines said; the
    digests are compared only when a uuid comes again.
    """

    def __init__(self) -> None:
        self.seen: dict[str, int] = {}
        #: further distinct contents of a uuid (the other blocks of a split message)
        self.more: dict[str, set[int]] = {}

    def fresh(self, event: dict[str, Any]) -> bool:
        uuid = event.get("uuid")
        if not isinstance(uuid, str):
            return True
        key = content_key(event)
        first = self.seen.get(uuid)
        if first is None:
            self.seen[uuid] = key
            return True
        if first == key:
            return False
        more = self.more.setdefault(uuid, set())
        if key in more:
            return False
        more.add(key)
        return True


def _why(exc: BaseException) -> str:
    """An OS error's own words; for a broken .gz (EOFError, zlib.error) its message."""
    return getattr(exc, "strerror", None) or str(exc) or type(exc).__name__


#: The limit of the transcripts read in this context (the plugin sets its option's value).
max_line: ContextVar[int] = ContextVar("max_line", default=MAX_LINE)
CHUNK = 1 << 20  # how much of an overlong line is read at a time while it is skipped


def _long_line(start: bytes, readline: Callable[[int], bytes], limit: int) -> bytes | None:
    """The rest of a line longer than a chunk, read a chunk at a time: the whole
    line, or None when it is longer than ``limit`` (then read past, not held)."""
    pieces = [start]
    size = len(start)
    while True:
        piece = readline(CHUNK)
        if not piece:
            break
        size += len(piece)
        if size > limit + 1:  # over the limit (newline excluded): drop it, skip the rest
            pieces.clear()
            while piece[-1:] != b"\n" and (piece := readline(CHUNK)):
                pass
            return None
        pieces.append(piece)
        if piece[-1:] == b"\n":
            break
    return b"".join(pieces)


class _Lines:
    """Line numbers: how many, and the first `SHOWN` of them (for a warning)."""

    __slots__ = ("count", "first")
    SHOWN = 5

    def __init__(self) -> None:
        self.count = 0
        self.first: list[int] = []

    def add(self, number: int) -> None:
        self.count += 1
        if len(self.first) < self.SHOWN:
            self.first.append(number)

    def __str__(self) -> str:
        return ", ".join(map(str, self.first)) + (", ..." if self.count > self.SHOWN else "")


def events(
    path: str,
    collector: Collector,
    *,
    decode_all: bool = False,
    also: Callable[[bytes], bool] | None = None,
    links: bool = False,
    worth: Callable[[bytes], bool] | None = None,
    recognize: Callable[[dict[str, Any]], bool] = looks_like_event,
) -> Iterator[dict[str, Any]]:
    """Yield the decoded event objects of one file that are worth decoding.

    Counts lines and corrupt lines on ``collector``. A last line without a
    newline that does not decode is a run killed mid-write: a note, not
    corruption. ``links``: also decode results that may link a subagent.
    Other agents' readers give their own cheap byte test (``worth``: can the
    line change a verdict?) and their own ``recognize`` for a line that proves
    the file is a transcript of theirs.
    A line longer than `max_line` is corrupt, and is never held in memory.
    """
    try:
        stream = collector.open_file(path)
    except (OSError, ArchiveError) as exc:
        raise Unreadable(f"cannot open {os.path.basename(path)}: {_why(exc)}") from None
    collector.segment(path)
    # A file of a million garbage lines must not make a list of a million numbers:
    # the counts, and the first few line numbers for the warnings.
    corrupt_at = _Lines()
    too_long = _Lines()
    pending: int | None = None  # a bad line, unless it turns out to be the last
    cut: int | None = None  # the lines read when a compressed stream ended early
    number = 0
    newline = True  # whether the last line read ended with one
    limit = max_line.get()
    with stream:
        # readline is C for files, tar members, gzip streams and the buffered zip
        # members sources.py hands out: the hot loop, with no generator in between.
        readline = stream.readline
        keep = worth or functools.partial(worth_decoding, collector=collector, links=links)
        # worth_decoding says yes to every line of a main thread (occupancy reads them all),
        # but for a session log's progress lines (``links``): a stream-json run's main file
        # decodes every line without asking.
        decode_all = decode_all or (worth is None and not links and collector.main_file)
        try:
            while raw := readline(CHUNK):
                number += 1
                if len(raw) == CHUNK and raw[-1:] != b"\n":  # a line longer than a chunk
                    whole = _long_line(raw, readline, limit)
                    if whole is None:
                        too_long.add(number)
                        newline = True  # had it one or not, the line is reported as too long
                        continue
                    raw, whole = whole, None  # one reference: freed with the line
                elif len(raw) > limit and len(raw.rstrip(b"\n")) > limit:  # a limit below a chunk
                    too_long.add(number)
                    newline = True
                    continue
                newline = raw[-1:] == b"\n"
                # A line as agents write it is decoded as it came: the decoder takes the
                # newline as whitespace, and a huge line is not copied to strip it.
                line = raw if raw[:1] == b"{" and raw[-2:] == b"}\n" else raw.strip()
                raw = b""
                if not line:
                    continue
                collector.lines += 1
                if pending is not None:
                    corrupt_at.add(pending)
                    pending = None
                if collector.recognized and not (decode_all or keep(line) or (also and also(line))):
                    if line[:1] != b"{" or not line.endswith((b"}", b"}\n")):
                        pending = number
                    continue
                try:
                    obj = decode(line)
                except Undecodable:
                    pending = number
                    continue
                if not isinstance(obj, dict):
                    corrupt_at.add(number)
                    continue
                if not collector.recognized:
                    # Until a line proves this is a transcript, every line is decoded.
                    if not recognize(obj):
                        continue
                    collector.recognized = True
                yield obj
        except EOFError:
            # Only a transcript's own .gz stream ends so (an archive's damage is an
            # ArchiveError): a killed `| gzip`. The lines before the cut are read, as in a
            # plain file cut short; the partial line at the cut is lost with the stream.
            cut = number
        except ArchiveError as exc:  # a damaged member: found as it streams, reported as at its opening
            raise Unreadable(f"cannot open {os.path.basename(path)}: {_why(exc)}") from None
        except (OSError, zlib.error, *MEMBER_ERRORS) as exc:  # removed, a directory, a broken .gz
            raise Unreadable(f"cannot read {os.path.basename(path)}: {_why(exc)}") from None
    if pending is None and not too_long.count and not corrupt_at.count and cut is None:
        return  # a clean file: nothing to warn of
    name = os.path.basename(path)
    if cut is not None:
        if not collector.recognized:  # nothing readable: the item fails, saying why
            raise Unreadable(
                f"cannot read {name}: the compressed file is cut short after line {cut}, "
                "before any agent event"
            )
        collector.warnings.append(
            f"{name}: the compressed file is cut short after line {cut} (a killed `| gzip`?); "
            "the lines before the cut are read"
        )
    if pending is not None:
        if pending != number or newline:
            corrupt_at.add(pending)
        else:
            collector.warnings.append(f"{name}: last line {pending} is cut short (run killed mid-write?)")
    if too_long.count:  # corrupt lines too, with a warning of their own
        collector.lines += too_long.count
        collector.corrupt += too_long.count
        collector.warnings.append(
            f"{name}: {too_long.count} line(s) longer than {limit} bytes (--explore-suff-max-line) "
            f"skipped unread (line {too_long})"
        )
    if corrupt_at.count:
        collector.corrupt += corrupt_at.count
        collector.warnings.append(f"{name}: {corrupt_at.count} corrupt line(s) skipped (line {corrupt_at})")
