"""Line-by-line JSON decoding that survives whatever a crashed harness left behind."""

from __future__ import annotations

import json
import re
from collections.abc import Callable
from typing import Any

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


_BOM = b"\xef\xbb\xbf"
# A JSON escape: an escaped backslash (consumed whole, so the next match starts
# at a real escape), a surrogate pair, or (group 1) a lone surrogate.
_ESCAPE = re.compile(
    rb"\\(?:\\|u[dD][89abAB][0-9a-fA-F]{2}\\u[dD][c-fC-F][0-9a-fA-F]{2}|(u[dD][89a-fA-F][0-9a-fA-F]{2}))"
)


def _mend(line: bytes) -> bytes | None:
    """What JavaScript writers emit and orjson refuses, made decodable: a UTF-8
    BOM, and lone surrogate escapes (``JSON.stringify`` of a string cut in the
    middle of an emoji, as a 2 KB preview is), which become U+FFFD."""
    out = line[len(_BOM) :] if line.startswith(_BOM) else line
    if b"\\u" in out:
        out = _ESCAPE.sub(lambda m: b"\\ufffd" if m.group(1) else m.group(0), out)
    return None if out == line else out


def decode(line: bytes) -> Any:
    """Decode one JSONL line, turning every decoder failure into `Undecodable`."""
    try:
        return _decode(line)
    except _DECODE_ERRORS as exc:
        error = str(exc)[:120]
    mended = _mend(line)  # only on the failure path: valid lines pay nothing
    if mended is not None:
        try:
            return _decode(mended)
        except _DECODE_ERRORS:
            pass
    raise Undecodable(error)


def compact_json(value: Any) -> str:
    """``JSON.stringify(value)``: no spaces after separators, non-ASCII kept."""
    try:
        return orjson.dumps(value).decode()
    except (TypeError, ValueError):  # an integer past 64 bits, a lone surrogate
        try:
            return json.dumps(value, separators=(",", ":"), ensure_ascii=False)
        except (TypeError, ValueError, RecursionError):
            return ""
