"""Transcript readers, one module per format. Each feeds a `Collector`.

`BUILTIN` holds the built-in readers as `registry.Reader` objects: the plugin
registers them through the ``pytest_explore_suff_readers`` hook, the way a
third party registers its own. Each agent's module is imported when its reader
is first asked something (a claim, a read): a campaign imports the readers its
files need (none, when every transcript comes from the verdict cache), and the
paths they claim by are in `claims`.
"""

from __future__ import annotations

import importlib
from collections.abc import Callable, Mapping, Sequence
from typing import TYPE_CHECKING, Any

from .. import ToolSpec
from ..registry import Reader, Readers
from ..sources import Opener, open_path
from . import claims
from .base import NotATranscript, TranscriptError, Unreadable, kind_of, looks_like_event

if TYPE_CHECKING:
    from ..events import Collector

__all__ = [
    "AGENTS", "BUILTIN", "READERS", "NotATranscript", "Reader", "Readers", "TranscriptError",
    "Unreadable", "builtin_readers", "load",
]  # fmt: skip

Read = Callable[..., None]


def _lazy(module: str, name: str) -> Callable[..., Any]:
    """``readers.<module>.<name>``, imported when first called."""
    found: Callable[..., Any] | None = None

    def call(*args: Any, **kwargs: Any) -> Any:
        nonlocal found
        if found is None:
            found = getattr(importlib.import_module(f"{__name__}.{module}"), name)
        return found(*args, **kwargs)

    call.__name__ = call.__qualname__ = name
    call.__module__ = f"{__name__}.{module}"
    return call


READERS: dict[str, Read] = {
    # Every reader's module is imported when first called, Claude Code's too: a re-run whose
    # transcripts all come from the verdict cache imports no reader, collector nor classifier.
    "stream-json": _lazy("streamjson", "read"),
    "interactive": _lazy("interactive", "read"),
    "codex": _lazy("codex", "read"),
    "gemini": _lazy("gemini", "read"),
    "qwen": _lazy("qwen", "read"),
    "copilot": _lazy("copilot", "read"),
    "amp": _lazy("amp", "read"),
    "cline": _lazy("cline", "read"),
    "continue": _lazy("continue_", "read"),
    "openhands": _lazy("openhands", "read"),
    "openhands-sdk": _lazy("openhands_sdk", "read"),
    "opencode": _lazy("opencode", "read"),
    "opencode-export": _lazy("opencode", "read"),
    "opencode-storage": _lazy("opencode", "read_storage"),
    "crush": _lazy("crush", "read"),
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


_gemini_session = _lazy("gemini", "looks_like_session")


def _gemini_line(obj: dict[str, Any]) -> bool:
    return bool(_gemini_session(obj)) or isinstance(obj.get("$set"), dict)


def builtin_readers() -> list[Reader]:
    """The built-in readers, in the order their claims are tried: the agents whose lines
    look like Claude Code's (Qwen Code) before Claude Code's."""
    r = READERS
    return [
        Reader("qwen", "qwen", _reading(r["qwen"]), line=claims.looks_like_qwen),
        Reader("copilot", "copilot", _reading(r["copilot"]), line=claims.looks_like_copilot_event,
               head=_lazy("copilot", "looks_like_history")),
        Reader("amp", "amp", _reading(r["amp"]), head=_lazy("amp", "looks_like_thread")),
        Reader("cline", "cline", _reading(r["cline"]), head=_lazy("cline", "looks_like_task"),
               pattern=claims.CLINE, group=_lazy("cline", "group")),
        Reader("continue", "continue", _reading(r["continue"]),
               head=_lazy("continue_", "looks_like_session")),
        Reader("openhands", "openhands", _reading(r["openhands"]),
               head=_lazy("openhands", "looks_like_event"), pattern=claims.OPENHANDS,
               group=_lazy("openhands", "group")),
        Reader("openhands-sdk", "openhands", _reading(r["openhands-sdk"]),
               head=_lazy("openhands_sdk", "looks_like_conversation"), pattern=claims.OPENHANDS_SDK,
               group=_lazy("openhands_sdk", "group")),
        Reader("opencode", "opencode", _reading(r["opencode"]), pattern=claims.OPENCODE,
               sessions=_lazy("opencode", "sessions")),
        Reader("opencode-export", "opencode", _reading(r["opencode-export"]),
               head=_lazy("opencode", "looks_like_export")),
        Reader("opencode-storage", "opencode", _reading(r["opencode-storage"]),
               head=_lazy("opencode", "looks_like_storage"), pattern=claims.OPENCODE_STORAGE,
               group=_lazy("opencode", "storage_group"), split=_lazy("opencode", "split")),
        Reader("crush", "crush", _reading(r["crush"]), pattern=claims.CRUSH,
               sessions=_lazy("crush", "sessions")),
        Reader("interactive", "claude", _reading(r["interactive"]), line=_session_log),
        Reader("stream-json", "claude", _reading(r["stream-json"]), line=_stream_json),
        Reader("codex", "codex", _reading(r["codex"]), line=_lazy("codex", "looks_like_rollout")),
        Reader("gemini", "gemini", _reading(r["gemini"]), line=_gemini_line,
               head=_lazy("gemini", "looks_like_document")),
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
    from ..events import Collector

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
