"""Small builders that emit the real event shapes of Claude Code transcripts.

Claude Code writes one assistant line per content block, all sharing one
``message.id``; tool results come back as user lines. The builders do the same,
so the tests exercise what real transcripts look like.
"""

from __future__ import annotations

import itertools
import json
from collections.abc import Iterable
from pathlib import Path
from typing import Any

EXPLORE = "mcp__codegraph__codegraph_explore"
_ids = itertools.count(1)


def response(returned: Iterable[str] = (), mentioned: Iterable[str] = ()) -> str:
    """An explore response: a flow section naming files, then per-file source sections."""
    out = ["## Flow"]
    out += [f"{i}. step in {path}:12" for i, path in enumerate(mentioned, 1)]
    for path in returned:
        out += [f"**`{path}`**", "```js", "function f() {}", "```"]
    return "\n".join(out)


class Run:
    """A headless stream-json run being written event by event."""

    def __init__(self, session: str = "sess-1") -> None:
        self.session = session
        self.events: list[dict[str, Any]] = [
            {"type": "system", "subtype": "init", "session_id": session, "tools": [EXPLORE]}
        ]

    @staticmethod
    def use(name: str, **input: Any) -> dict[str, Any]:
        """A tool_use block (not yet emitted)."""
        return {"type": "tool_use", "id": f"toolu_{next(_ids):04d}", "name": name, "input": input}

    def explore(self, query: str = "q") -> dict[str, Any]:
        return self.use(EXPLORE, query=query)

    def message(self, *blocks: dict[str, Any], parent: str | None = None, msg_id: str | None = None) -> None:
        """One assistant message: a line per block, all sharing ``message.id``."""
        mid = msg_id or f"msg_{next(_ids):04d}"
        for block in blocks:
            self.events.append(
                {
                    "type": "assistant",
                    "message": {"id": mid, "role": "assistant", "content": [block]},
                    "parent_tool_use_id": parent,
                    "session_id": self.session,
                }
            )

    def result(
        self, block: dict[str, Any], content: Any = "ok", *, is_error: bool = False, parent: str | None = None
    ) -> None:
        self.events.append(
            {
                "type": "user",
                "message": {
                    "role": "user",
                    "content": [
                        {
                            "type": "tool_result",
                            "tool_use_id": block["id"],
                            "content": content,
                            "is_error": is_error,
                        }
                    ],
                },
                "parent_tool_use_id": parent,
                "session_id": self.session,
            }
        )

    def step(
        self, block: dict[str, Any], content: Any = "ok", *, parent: str | None = None, **kw: Any
    ) -> dict[str, Any]:
        """A message with one tool call, then its result."""
        self.message(block, parent=parent)
        self.result(block, content, parent=parent, **kw)
        return block

    def finish(self, text: str = "done") -> None:
        self.events.append(
            {
                "type": "result",
                "subtype": "success",
                "result": text,
                "num_turns": 3,
                "duration_ms": 1200,
                "total_cost_usd": 0.01,
                "session_id": self.session,
            }
        )

    def lines(self) -> list[str]:
        return [json.dumps(e) for e in self.events]

    def write(self, path: Path) -> Path:
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text("\n".join(self.lines()) + "\n", encoding="utf-8")
        return path


def sufficient_run(query: str = "q") -> Run:
    """explore, then an Edit: one sufficient call."""
    run = Run()
    run.step(run.explore(query), response(["lib/a.js"]))
    run.step(run.use("Edit", file_path="lib/a.js"))
    run.finish()
    return run


def allocation_run(query: str = "q") -> Run:
    """explore, then a Read of the file it returned: one read_returned call."""
    run = Run()
    run.step(run.explore(query), response(["lib/a.js"]))
    run.step(run.use("Read", file_path="/t/lib/a.js"))
    run.finish()
    return run


def no_explore_run() -> Run:
    run = Run()
    run.step(run.use("Grep", pattern="send"))
    run.finish()
    return run


def ab_campaign(
    root: Path, *, with_runs: Iterable[Run], without_runs: Iterable[Run], repo: str = "express"
) -> Path:
    """The ab-readme layout: <repo>/run<N>/run-headless-{with,without}.jsonl."""
    for n, run in enumerate(with_runs, 1):
        run.write(root / repo / f"run{n}" / "run-headless-with.jsonl")
    for n, run in enumerate(without_runs, 1):
        run.write(root / repo / f"run{n}" / "run-headless-without.jsonl")
    return root


class Session:
    """An interactive session log: lines with uuid/parentUuid/sessionId/isSidechain."""

    def __init__(
        self,
        session_id: str = "11111111-2222-4333-8444-555555555555",
        *,
        sidechain: bool = False,
        agent_id: str | None = None,
    ) -> None:
        self.id = session_id
        self.sidechain = sidechain
        self.agent_id = agent_id
        self.lines: list[dict[str, Any]] = []
        self.parent: str | None = None

    def _line(
        self, kind: str, message: dict[str, Any], *, sidechain: bool | None = None, **extra: Any
    ) -> None:
        uuid = f"u-{next(_ids):06d}"
        line = {
            "type": kind,
            "uuid": uuid,
            "parentUuid": self.parent,
            "sessionId": self.id,
            "isSidechain": self.sidechain if sidechain is None else sidechain,
            "message": message,
            **extra,
        }
        if self.agent_id:
            line["agentId"] = self.agent_id
        self.lines.append(line)
        self.parent = uuid

    def prompt(self, text: str, *, sidechain: bool | None = None, root: bool = False) -> None:
        if root:
            self.parent = None
        self._line("user", {"role": "user", "content": text}, sidechain=sidechain)

    def message(self, *blocks: dict[str, Any], sidechain: bool | None = None) -> None:
        mid = f"msg_{next(_ids):04d}"
        for block in blocks:
            self._line("assistant", {"id": mid, "role": "assistant", "content": [block]}, sidechain=sidechain)

    def result(
        self,
        block: dict[str, Any],
        content: Any = "ok",
        *,
        is_error: bool = False,
        sidechain: bool | None = None,
        **extra: Any,
    ) -> None:
        self._line(
            "user",
            {
                "role": "user",
                "content": [
                    {
                        "type": "tool_result",
                        "tool_use_id": block["id"],
                        "content": content,
                        "is_error": is_error,
                    }
                ],
            },
            sidechain=sidechain,
            **extra,
        )

    def step(
        self, block: dict[str, Any], content: Any = "ok", *, sidechain: bool | None = None
    ) -> dict[str, Any]:
        self.message(block, sidechain=sidechain)
        self.result(block, content, sidechain=sidechain)
        return block

    def write(self, path: Path) -> Path:
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text("".join(json.dumps(e) + "\n" for e in self.lines), encoding="utf-8")
        return path


def with_usage(run: Run, base: int, per_char: float = 0.45) -> Run:
    """Give each model request (the first line of each assistant message) a prompt size:
    ``base`` tokens, growing by ``per_char`` tokens for every character of tool output since
    the previous request, as Claude Code's ``message.usage`` records it."""
    ctx, added, seen = base, 0, set()
    for e in run.events:
        if e["type"] == "user":
            added += sum(
                len(b["content"]) for b in e["message"]["content"] if isinstance(b.get("content"), str)
            )
        elif e["type"] == "assistant":
            if e["message"]["id"] not in seen:
                seen.add(e["message"]["id"])
                ctx, added = ctx + int(added * per_char), 0
            e["message"]["usage"] = {"input_tokens": 3, "cache_read_input_tokens": ctx - 3}
    return run
