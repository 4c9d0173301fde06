"""Transcript readers, one module per format. Each feeds a `Collector`."""

from __future__ import annotations

from collections.abc import Mapping, Sequence

from ..events import Collector, ToolSpec
from ..sources import Opener, open_path
from . import codex, gemini, interactive, streamjson
from .base import NotATranscript, TranscriptError, Unreadable

__all__ = ["AGENTS", "READERS", "NotATranscript", "TranscriptError", "Unreadable", "load"]

READERS = {
    "stream-json": streamjson.read,
    "interactive": interactive.read,
    "codex": codex.read,
    "gemini": gemini.read,
}
#: The agent that writes each kind of transcript.
AGENTS = {"stream-json": "claude", "interactive": "claude", "codex": "codex", "gemini": "gemini"}


def load(
    kind: str,
    files: Sequence[str],
    spec: ToolSpec,
    open_file: Opener = open_path,
    copies: Mapping[str, str] | None = None,
) -> Collector:
    """Read one transcript (all its files) into a `Collector`. ``copies``: the sessions a
    session log holds a copy of (`Transcript.copies`).

    Raises `TranscriptError` subclasses with a one-line reason.
    """
    read = READERS[kind]
    copy_sessions = dict(copies or {})
    collector = Collector(spec, open_file=open_file, copy_sessions=copy_sessions)
    read(files, collector)
    if collector.missing_results():
        # A result we need came before its call (file order is not causal order),
        # skipped or not kept. Rare: read again, decoding all, keeping every text.
        collector = Collector(spec, open_file=open_file, keep_texts=True, copy_sessions=copy_sessions)
        read(files, collector, decode_all=True)
    if not collector.recognized:
        if collector.lines == 0:
            raise NotATranscript("not a transcript: the file is empty")
        raise NotATranscript(f"not a transcript: none of its {collector.lines} line(s) is an agent event")
    return collector
