"""Builders for the allocation and occupancy tests (``docs/metrics.md``).

`Stream` writes headless stream-json runs the way Claude Code does: one
assistant line per content block, every line of a message with the same
``message.id``, ``model`` and ``usage``; every line with a ``uuid``. The
arithmetic of the tests depends on the characters each block adds, so the
blocks here are small and their sizes easy to count by hand:

- ``Stream.use("Read")`` (no input) adds ``len("Read") + len("{}")`` = 6;
- ``Stream.explore()`` adds ``len(EXPLORE) + len('{"query":"q"}')`` = 33 + 13 = 46.
"""

from __future__ import annotations

import copy
import json
from pathlib import Path
from typing import Any

from builders import EXPLORE, Run, Session, _ids

MODEL = "claude-sonnet-4-5"
SYNTHETIC = "<synthetic>"


def usage(ctx: int) -> dict[str, int]:
    """A usage whose whole prompt is ``ctx``: all of it ``input_tokens``."""
    return {"input_tokens": ctx, "output_tokens": 11}


def text(s: str) -> dict[str, Any]:
    return {"type": "text", "text": s}


def section(path: str, body: str = "", header: str = "") -> str:
    """One returned-file section: the marker line (with ``header`` after it), then ``body``."""
    return f"**`{path}`**{header}\n{body}"


class Stream(Run):
    """A stream-json run with usage on every assistant line and a uuid on every line."""

    def _uuid(self) -> str:
        return f"uuid-{next(_ids):06d}"

    def ask(
        self,
        *blocks: dict[str, Any],
        ctx: int | None = None,
        use: dict[str, Any] | None = None,
        model: str = MODEL,
        parent: str | None = None,
        msg_id: str | None = None,
    ) -> str:
        """One model request: a line per block, all with one id, model and usage.

        ``ctx`` is a usage of that many input tokens; ``use`` a whole usage
        object; neither: no usage at all.
        """
        mid = msg_id or f"msg_{next(_ids):04d}"
        u = use if use is not None else (usage(ctx) if ctx is not None else None)
        for block in blocks:
            message: dict[str, Any] = {
                "id": mid,
                "type": "message",
                "role": "assistant",
                "model": model,
                "content": [block],
            }
            if u is not None:
                message["usage"] = dict(u)
            self.events.append(
                {
                    "type": "assistant",
                    "message": message,
                    "parent_tool_use_id": parent,
                    "session_id": self.session,
                    "uuid": self._uuid(),
                }
            )
        return mid

    def answer(self, *pairs: tuple[dict[str, Any], Any], parent: str | None = None) -> None:
        """One user line holding the tool_result of each (call, content) pair."""
        self.events.append(
            {
                "type": "user",
                "message": {
                    "role": "user",
                    "content": [
                        {"type": "tool_result", "tool_use_id": b["id"], "content": c, "is_error": False}
                        for b, c in pairs
                    ],
                },
                "parent_tool_use_id": parent,
                "session_id": self.session,
                "uuid": self._uuid(),
            }
        )

    def user(self, content: Any, parent: str | None = None) -> None:
        """A user line with arbitrary content (a string, or blocks)."""
        self.events.append(
            {
                "type": "user",
                "message": {"role": "user", "content": content},
                "parent_tool_use_id": parent,
                "session_id": self.session,
                "uuid": self._uuid(),
            }
        )

    def compact(self, subtype: str = "compact_boundary") -> None:
        self.events.append(
            {
                "type": "system",
                "subtype": subtype,
                "session_id": self.session,
                "uuid": self._uuid(),
                "compact_metadata": {"trigger": "auto", "pre_tokens": 150000},
            }
        )

    def replay(self, index: int) -> None:
        """Append a copy of an earlier line (same uuid): a resumed session's replay."""
        self.events.append(copy.deepcopy(self.events[index]))

    def end(self, result: str | None = "done", subtype: str = "success") -> None:
        """The run's ``result`` event; ``result=None``: one without a result string."""
        event: dict[str, Any] = {
            "type": "result",
            "subtype": subtype,
            "is_error": subtype != "success",
            "num_turns": 3,
            "duration_ms": 1000,
            "total_cost_usd": 0.01,
            "session_id": self.session,
            "usage": {"input_tokens": 5, "output_tokens": 7},
        }
        if result is not None:
            event["result"] = result
        self.events.append(event)

    def write(self, path: Path) -> Path:
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text("".join(json.dumps(e, ensure_ascii=False) + "\n" for e in self.events), "utf-8")
        return path


class Log(Session):
    """An interactive session log whose assistant lines carry model and usage."""

    def ask(self, *blocks: dict[str, Any], ctx: int, sidechain: bool | None = None) -> str:
        mid = f"msg_{next(_ids):04d}"
        for block in blocks:
            message = {
                "id": mid,
                "role": "assistant",
                "model": MODEL,
                "content": [block],
                "usage": usage(ctx),
            }
            self._line("assistant", message, sidechain=sidechain)
        return mid


__all__ = ["EXPLORE", "MODEL", "SYNTHETIC", "Log", "Stream", "section", "text", "usage"]
