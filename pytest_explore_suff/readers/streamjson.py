"""Headless ``claude -p --output-format stream-json`` runs, one file per turn."""

from __future__ import annotations

from collections.abc import Sequence

from ..events import Collector
from .base import events


def read(files: Sequence[str], collector: Collector, *, decode_all: bool = False) -> None:
    """Feed the turn files of one run, in turn order, to ``collector``.

    Subagent events are interleaved in the same stream; ``parent_tool_use_id``
    names the Task/Agent call that spawned them, and that id is their thread.
    """
    for path in files:
        for event in events(path, collector, decode_all=decode_all):
            if event.get("type") == "result":
                collector.run_summary(event)
                continue
            parent = event.get("parent_tool_use_id")
            collector.event(event, parent if isinstance(parent, str) and parent else "main")
