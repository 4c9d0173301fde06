"""What every transcript reader shares: the streaming line loop and its errors."""

from __future__ import annotations

import os
from collections.abc import Callable, Iterator
from typing import Any

from ..events import RACE_MARKER, Collector
from ..jsonl import BUFFER, Undecodable, decode, lines

#: Event types of both formats; a file whose lines carry none of them is not a transcript.
EVENT_TYPES = frozenset(
    {
        "system", "assistant", "user", "result",
        "summary", "file-history-snapshot", "queue-operation", "attachment", "progress",
    }
)  # fmt: skip
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


_IDENTITY = ("session_id", "sessionId", "uuid", "parent_tool_use_id")


def looks_like_event(obj: dict[str, Any]) -> bool:
    """An agent event, not a look-alike record in some data file.

    Real events carry a session or line identity; a fixture such as
    ``{"type": "assistant", "message": {...}}`` in a copied repository does not.
    """
    kind = obj.get("type")
    if not isinstance(kind, str) or kind not in EVENT_TYPES:  # a list or dict is not hashable
        return False
    if any(key in obj for key in _IDENTITY):
        return True
    if kind in ("assistant", "user"):
        message = obj.get("message")
        return isinstance(message, dict) and message.get("role") == kind
    return "subtype" in obj or "leafUuid" in obj


def worth_decoding(line: bytes, collector: Collector) -> bool:
    """Cheap byte scan: can this line change a verdict?

    Most of a campaign's bytes are tool_result payloads of tools that are not
    the judged one (whole files the agent Read). Those lines are skipped
    without decoding unless they carry an id whose result we need, the race
    marker, or a subagent link.
    """
    if _TOOL_USE in line:
        return True
    if _TOOL_RESULT in line:
        if _RACE in line or b'"agentId"' in line:
            return True
        for wanted in collector.wanted_bytes:
            if wanted in line:
                return True
        collector.skipped_results += 1
        return False
    return _RESULT in line and len(line) < 65536


def events(
    path: str,
    collector: Collector,
    *,
    decode_all: bool = False,
    also: Callable[[bytes], bool] | None = None,
) -> Iterator[dict[str, Any]]:
    """Yield the decoded event objects of one file that are worth decoding.

    Counts lines and corrupt lines on ``collector``. A last line without a
    newline that does not decode is a run killed mid-write: a note, not
    corruption.
    """
    try:
        stream = open(path, "rb", buffering=BUFFER)  # noqa: SIM115 - closed below
    except OSError as exc:
        raise Unreadable(f"cannot open {os.path.basename(path)}: {exc.strerror or exc}") from None
    corrupt_at: list[int] = []
    pending: tuple[int, bool] | None = None  # a bad line, unless it turns out to be the last
    with stream:
        try:
            for number, line, has_newline in lines(stream):
                collector.lines += 1
                if pending is not None:
                    corrupt_at.append(pending[0])
                    pending = None
                if collector.recognized and not (
                    decode_all or worth_decoding(line, collector) or (also and also(line))
                ):
                    if line[:1] != b"{" or line[-1:] != b"}":
                        pending = (number, has_newline)
                    continue
                try:
                    obj = decode(line)
                except Undecodable:
                    pending = (number, has_newline)
                    continue
                if not isinstance(obj, dict):
                    corrupt_at.append(number)
                    continue
                if not collector.recognized:
                    # Until a line proves this is a transcript, every line is decoded.
                    if not looks_like_event(obj):
                        continue
                    collector.recognized = True
                yield obj
        except OSError as exc:  # removed, or a directory named like a file
            raise Unreadable(f"cannot read {os.path.basename(path)}: {exc.strerror or exc}") from None
    name = os.path.basename(path)
    if pending is not None:
        if pending[1]:
            corrupt_at.append(pending[0])
        else:
            collector.warnings.append(f"{name}: last line {pending[0]} is cut short (run killed mid-write?)")
    if corrupt_at:
        collector.corrupt += len(corrupt_at)
        shown = ", ".join(map(str, corrupt_at[:5])) + (", ..." if len(corrupt_at) > 5 else "")
        collector.warnings.append(f"{name}: {len(corrupt_at)} corrupt line(s) skipped (line {shown})")
