"""Transcript readers, one module per format. Each feeds a `Collector`.

`BUILTIN` holds the built-in readers as `registry.Reader` objects: the plugin
registers them through the ``pytest_explore_suff_readers`` hook, the way a
third party registers its own.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from typing import Any

from ..events import Collector, ToolSpec
from ..registry import Reader, Readers
from ..sources import Opener, open_path
from . import (
    amp,
    cline,
    codex,
    continue_,
    copilot,
    crush,
    gemini,
    interactive,
    opencode,
    openhands,
    openhands_sdk,
    qwen,
    streamjson,
)
from .base import NotATranscript, TranscriptError, Unreadable, kind_of, looks_like_event

__all__ = [
    "AGENTS", "BUILTIN", "READERS", "NotATranscript", "Reader", "Readers", "TranscriptError",
    "Unreadable", "builtin_readers", "load",
]  # fmt: skip

Read = Callable[..., None]

READERS: dict[str, Read] = {
    "stream-json": streamjson.read,
    "interactive": interactive.read,
    "codex": codex.read,
    "gemini": gemini.read,
    "qwen": qwen.read,
    "copilot": copilot.read,
    "amp": amp.read,
    "cline": cline.read,
    "continue": continue_.read,
    "openhands": openhands.read,
    "openhands-sdk": openhands_sdk.read,
    "opencode": opencode.read,
    "opencode-export": opencode.read,
    "opencode-storage": opencode.read_storage,
    "crush": crush.read,
}
#: The agent that writes each kind of transcript.
AGENTS = {
    "stream-json": "claude", "interactive": "claude", "codex": "codex", "gemini": "gemini",
    "qwen": "qwen", "copilot": "copilot", "amp": "amp", "cline": "cline",
    "continue": "continue", "openhands": "openhands", "openhands-sdk": "openhands", "opencode": "opencode",
    "opencode-export": "opencode", "opencode-storage": "opencode",
    "crush": "crush",
}  # fmt: skip


def _reading(read: Read) -> Callable[[Sequence[str], Collector], None]:
    """A built-in reader as a `Reader` reads: on the re-read (``keep_texts``) every line is decoded."""

    def run(files: Sequence[str], collector: Collector) -> None:
        read(files, collector, decode_all=collector.keep_texts)

    run.__name__ = run.__qualname__ = f"{read.__module__}.read"
    return run


def _session_log(obj: dict[str, Any]) -> bool:
    return looks_like_event(obj) and kind_of(obj) == "interactive"


def _stream_json(obj: dict[str, Any]) -> bool:
    return looks_like_event(obj) and kind_of(obj) == "stream-json"


def _gemini_line(obj: dict[str, Any]) -> bool:
    return gemini.looks_like_session(obj) or isinstance(obj.get("$set"), dict)


def builtin_readers() -> list[Reader]:
    """The built-in readers, in the order their claims are tried: the agents whose lines
    look like Claude Code's (Qwen Code) before Claude Code's."""
    return [
        Reader("qwen", "qwen", _reading(qwen.read), line=qwen.looks_like_qwen),
        Reader("copilot", "copilot", _reading(copilot.read), line=copilot.looks_like_event,
               head=copilot.looks_like_history),
        Reader("amp", "amp", _reading(amp.read), head=amp.looks_like_thread),
        Reader("cline", "cline", _reading(cline.read), head=cline.looks_like_task, pattern=cline.PATTERN,
               group=cline.group),
        Reader("continue", "continue", _reading(continue_.read), head=continue_.looks_like_session),
        Reader("openhands", "openhands", _reading(openhands.read), head=openhands.looks_like_event,
               pattern=openhands.PATTERN, group=openhands.group),
        Reader("openhands-sdk", "openhands", _reading(openhands_sdk.read),
               head=openhands_sdk.looks_like_conversation, pattern=openhands_sdk.PATTERN,
               group=openhands_sdk.group),
        Reader("opencode", "opencode", _reading(opencode.read), pattern=opencode.PATTERN,
               sessions=opencode.sessions),
        Reader("opencode-export", "opencode", _reading(opencode.read), head=opencode.looks_like_export),
        Reader("opencode-storage", "opencode", _reading(opencode.read_storage),
               head=opencode.looks_like_storage, pattern=opencode.STORAGE_PATTERN,
               group=opencode.storage_group, split=opencode.split),
        Reader("crush", "crush", _reading(crush.read), pattern=crush.PATTERN, sessions=crush.sessions),
        Reader("interactive", "claude", _reading(interactive.read), line=_session_log),
        Reader("stream-json", "claude", _reading(streamjson.read), line=_stream_json),
        Reader("codex", "codex", _reading(codex.read), line=codex.looks_like_rollout),
        Reader("gemini", "gemini", _reading(gemini.read), line=_gemini_line, head=gemini.looks_like_document),
    ]  # fmt: skip


BUILTIN = Readers(builtin_readers())


def load(
    kind: str,
    files: Sequence[str],
    spec: ToolSpec,
    open_file: Opener = open_path,
    readers: Readers | None = None,
    copies: Mapping[str, str] | None = None,
    session: str = "",
) -> Collector:
    """Read one transcript (all its files) into a `Collector`.

    ``readers``: the run's readers (the built-in ones when None). ``copies``: the
    sessions a session log holds a copy of (`Transcript.copies`). ``session``: the
    session of a file that holds many (``collector.session``). Raises
    `TranscriptError` subclasses with a one-line reason.
    """
    found = (readers or BUILTIN).get(kind)
    if found is None:
        raise Unreadable(f"no reader named {kind!r} in this run (is the plug-in that registers it loaded?)")
    read = found.read
    copy_sessions = dict(copies or {})
    collector = Collector(spec, open_file=open_file, copy_sessions=copy_sessions, session=session)
    read(files, collector)
    if collector.missing_results():
        # A result we need came before its call (file order is not causal order),
        # skipped or not kept. Rare: read again, decoding all, keeping every text.
        collector = Collector(
            spec, open_file=open_file, keep_texts=True, copy_sessions=copy_sessions, session=session
        )
        read(files, collector)
    if not collector.recognized:
        if collector.lines == 0:
            raise NotATranscript("not a transcript: the file is empty")
        raise NotATranscript(f"not a transcript: none of its {collector.lines} line(s) is an agent event")
    return collector
