"""Headless ``claude -p --output-format stream-json`` runs, one file per turn."""

from __future__ import annotations

from collections.abc import Sequence

from ..events import Collector
from .base import Replays, events

_HEAD = 200


def _init(line: bytes) -> bool:
    """A ``system``/``init`` line, which the fast path would skip: it starts a run."""
    head = line[:_HEAD]
    return b'"init"' in head and b'"system"' in head


def read(files: Sequence[str], collector: Collector, *, decode_all: bool = False) -> None:
    """Feed the turn files of one run, in turn order, to ``collector``.

    Subagent events are interleaved in the same stream; ``parent_tool_use_id``
    names the Task/Agent call that spawned them, and that id is their thread.
    """
    fresh = Replays().fresh
    for path in files:
        session = None  # the session of this file's current run
        for event in events(path, collector, decode_all=decode_all, also=_init):
            kind = event.get("type")
            if kind == "result":
                collector.run_summary(event)
                continue
            if kind == "system" and event.get("subtype") == "init":
                # Loop scripts append whole runs to one file, each with its own
                # session: a new one ends the run before it. (Turn files of a
                # resumed run are separate files, and concatenated as one run.)
                sid = event.get("session_id")
                if session is not None and sid != session:
                    collector.end_run()
                session = sid
                continue
            if not fresh(event):
                continue  # a replayed line (M9): its call and result are counted already
            parent = event.get("parent_tool_use_id")
            collector.event(event, parent if isinstance(parent, str) and parent else "main")
