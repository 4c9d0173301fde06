"""Line-by-line JSON decoding that survives whatever a crashed harness left behind."""

from __future__ import annotations

import json
from collections.abc import Callable, Iterator
from typing import Any, BinaryIO

try:  # orjson decodes transcript lines several times faster than the stdlib.
    import orjson

    _decode: Callable[[bytes], Any] = orjson.loads
    _DECODE_ERRORS: tuple[type[BaseException], ...] = (
        orjson.JSONDecodeError,
        RecursionError,
        ValueError,
    )
except ImportError:  # pragma: no cover - orjson is a dependency, but optional in spirit
    _decode = json.loads
    _DECODE_ERRORS = (ValueError, RecursionError)

#: Read buffer for transcript files. Lines are split by the buffered reader, so
#: memory is bounded by the longest line, never by the file.
BUFFER = 1 << 20


class Undecodable(Exception):
    """A line that is not valid JSON (or nests deeper than a decoder can go)."""


def decode(line: bytes) -> Any:
    """Decode one JSONL line, turning every decoder failure into `Undecodable`."""
    try:
        return _decode(line)
    except _DECODE_ERRORS as exc:
        raise Undecodable(str(exc)[:120]) from None


def lines(stream: BinaryIO) -> Iterator[tuple[int, bytes, bool]]:
    """Yield ``(line_number, stripped_line, has_newline)`` for non-blank lines."""
    for number, raw in enumerate(stream, 1):
        has_newline = raw.endswith(b"\n")
        line = raw.strip()
        if line:
            yield number, line, has_newline
