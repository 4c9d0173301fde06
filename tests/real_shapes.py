"""Builders for the shapes real Claude Code session logs have and generated campaigns lacked.

Written from the facts in ``transcript-formats.md`` ("What real logs show"),
not copied from anyone's logs: line types without a uuid at the top of a
file, ``progress`` lines that repeat a subagent's messages in the parent file,
the three subagent layouts, ``.meta.json`` sidecars holding only
``agentType`` and ``description``, interrupted Agent calls, side questions,
plain hex message ids, persisted-output stubs, and headless runs appended
into one file.
"""

from __future__ import annotations

import copy
import itertools
import json
from pathlib import Path
from typing import Any

from builders import Run, Session, response

SID = "5f0c3a1e-9b7d-4c2a-8e6f-1a2b3c4d5e6f"
AGENT7 = "a1b2c3d"  # agent ids of early versions
AGENT17 = "a0f1e2d3c4b5a6978"  # and of later ones
_clock = itertools.count(1)
_hex = itertools.count(0xC0FFEE)


def stamp() -> str:
    """An ever later ISO timestamp, as Claude Code writes on each line."""
    n = next(_clock)
    return f"2026-01-02T{n // 3600 % 24:02d}:{n // 60 % 60:02d}:{n % 60:02d}.{n % 1000:03d}Z"


def stub(session: str = SID, call_id: str = "toolu_01Big", preview: str = "") -> tuple[str, str]:
    """(a persisted-output stub of the real kind, the path it says the output was saved to)."""
    saved = f"/root/.claude/projects/-r/{session}/tool-results/{call_id}.txt"
    text = (
        "<persisted-output>\n"
        f"Output too large (68.3KB). Full output saved to: {saved}\n\n"
        f"Preview (first 2KB):\n{preview}\n...\n</persisted-output>"
    )
    return text, saved


class RealSession(Session):
    """A session log line by line, with what real ones add around the messages."""

    def __init__(
        self,
        session_id: str = SID,
        *,
        sidechain: bool = False,
        agent_id: str | None = None,
        hex_ids: bool = False,
    ) -> None:
        super().__init__(session_id, sidechain=sidechain, agent_id=agent_id)
        self.hex_ids = hex_ids  # another model backend: message ids are plain hex

    def _line(
        self, kind: str, message: dict[str, Any], *, sidechain: bool | None = None, **extra: Any
    ) -> None:
        super()._line(kind, message, sidechain=sidechain, **extra)
        self.lines[-1].update(timestamp=stamp(), version="2.1.40", cwd="/r", userType="external")

    def message(self, *blocks: dict[str, Any], sidechain: bool | None = None) -> None:
        mid = f"{next(_hex):032x}" if self.hex_ids else f"msg_01{next(_hex):x}"
        for block in blocks:
            self._line("assistant", {"id": mid, "role": "assistant", "content": [block]}, sidechain=sidechain)

    def bare(self, kind: str, *, session: bool = True, **fields: Any) -> None:
        """A line with no uuid (``ai-title``, ``queue-operation``, ...)."""
        self.lines.append({"type": kind, **({"sessionId": self.id} if session else {}), **fields})

    def header(self) -> None:
        """What a real session file can start with, before any message."""
        self.bare("permission-mode", permissionMode="default")
        self.bare("queue-operation", operation="enqueue", timestamp=stamp(), content="fix it")
        self.bare("queue-operation", operation="dequeue", timestamp=stamp())
        for _ in range(6):  # no session id on these: only their snapshot says what they are
            self.bare(
                "file-history-snapshot",
                session=False,
                messageId=f"m-{next(_hex)}",
                snapshot={"trackedFileBackups": {}, "timestamp": stamp()},
                isSnapshotUpdate=False,
            )
        self.bare("ai-title", aiTitle="Fix the send bug")
        self.bare("last-prompt", lastPrompt="fix it")

    def noise(self) -> None:
        """Bookkeeping lines real sessions write between messages."""
        self.bare("custom-title", customTitle="send bug")
        self.bare("agent-name", agentName="main")
        for sub in ("task_reminder", "deferred_tools_delta", "skill_listing", "edited_text_file"):
            self.bare("attachment", attachment={"type": sub, "content": []})
        for sub in (
            "away_summary", "bridge_status", "microcompact_boundary", "compact_boundary",
            "api_error", "stop_hook_summary", "local_command", "turn_duration",
        ):  # fmt: skip
            self.lines.append(
                {"type": "system", "subtype": sub, "uuid": f"s-{next(_hex)}", "sessionId": self.id,
                 "parentUuid": self.parent, "isSidechain": False, "content": "", "timestamp": stamp()}
            )  # fmt: skip

    def progress(self, kind: str, spawn: str, data: dict[str, Any], *, data_first: bool = False) -> None:
        """A ``progress`` line; Claude Code writes ``type`` before ``data``."""
        line: dict[str, Any] = {
            "parentUuid": self.parent,
            "isSidechain": False,
            "sessionId": self.id,
            "type": "progress",
            "data": {**data, "type": kind},
            "toolUseID": f"progress-{next(_hex)}",
            "parentToolUseID": spawn,
            "uuid": f"p-{next(_hex)}",
            "timestamp": stamp(),
        }
        if data_first:  # another writer's key order: the line must still be only a link
            line = {"data": line.pop("data"), **line}
        self.lines.append(line)

    def mirror(self, spawn: str, sub: RealSession, **kw: Any) -> None:
        """The parent's ``agent_progress`` lines repeating each of a subagent's messages."""
        for event in sub.lines:
            if event.get("type") in ("assistant", "user"):
                embedded = {k: event[k] for k in ("type", "message", "uuid", "timestamp")}
                data = {"message": embedded, "prompt": "", "agentId": sub.agent_id}
                self.progress("agent_progress", spawn, data, **kw)

    def other_progress(self, spawn: str) -> None:
        self.progress("hook_progress", spawn, {"hookEvent": "PreToolUse", "hookName": "PreToolUse:Bash"})
        self.progress("bash_progress", spawn, {"output": "lib/a.js\n", "elapsedTimeSeconds": 1})
        self.progress("mcp_progress", spawn, {"status": "started", "serverName": "codegraph"})


def subagent(agent_id: str, prompt: str, *steps: tuple[dict[str, Any], Any]) -> RealSession:
    """A subagent file's lines: its first user prompt, then (call, result) steps."""
    sub = RealSession(sidechain=True, agent_id=agent_id)
    sub.prompt(prompt)
    for block, content in steps:
        sub.step(block, content)
    return sub


def write_subagent(
    root: Path, sub: RealSession, layout: str, *, meta: dict[str, Any] | None = None, name: str | None = None
) -> Path:
    """Write a subagent file where ``layout`` ("flat" or "subagents") puts it, with its meta sidecar."""
    name = name or f"agent-{sub.agent_id}"
    folder = root if layout == "flat" else root / sub.id / "subagents"
    path = sub.write(folder / f"{name}.jsonl")
    if meta is not None:
        (folder / f"{name}.meta.json").write_text(json.dumps(meta), encoding="utf-8")
    return path


def delegating_parent(
    prompt: str = "find where send sets ETag", description: str = "find ETag"
) -> tuple[RealSession, dict[str, Any]]:
    """A session that explores, then hands the rest to an Agent call (not yet answered)."""
    s = RealSession()
    s.header()
    s.prompt("fix the ETag bug")
    s.step(Run.use("mcp__codegraph__codegraph_explore", query="send ETag"), response(["lib/response.js"]))
    agent = Run.use("Agent", prompt=prompt, description=description, subagent_type="general-purpose")
    s.message(agent)
    return s, agent


def appended_runs() -> list[str]:
    """Two headless runs a loop script appended to one stream-json file."""
    first = Run("run-one")
    first.step(first.explore("first"), response(["lib/a.js"]))
    first.step(first.use("Read", file_path="lib/a.js"))
    first.finish()
    second = Run("run-two")
    second.step(second.explore("second"), response(["lib/b.js"]))
    second.events.append(
        {"type": "result", "subtype": "success", "is_error": True, "result": "Credit balance is too low",
         "num_turns": 1, "duration_ms": 300, "total_cost_usd": 0, "session_id": "run-two"}
    )  # fmt: skip
    return first.lines() + second.lines()


def split_message_run() -> tuple[Run, dict[str, Any], dict[str, Any]]:
    """An old stream-json run (M9, formats page "Pitfalls"): one assistant message written
    as three lines, a text block, an explore call and a Read, sharing one ``message.id``
    **and one ``uuid``**; then the results, and a Read of the returned file.

    Returns the run, the explore call and the same-message Read call.
    """
    run = Run("old-stream")
    run.events[0]["uuid"] = "u-init"
    explore = run.explore("where is send")
    concurrent = run.use("Read", file_path="/r/lib/other.js")
    usage = {"input_tokens": 1000, "output_tokens": 20}
    for block in ({"type": "text", "text": "Let me look."}, explore, concurrent):
        message = {"id": "msg_split", "role": "assistant", "model": "claude-sonnet-4", "content": [block]}
        run.events.append(
            {"type": "assistant", "uuid": "u-shared", "session_id": run.session, "parent_tool_use_id": None,
             "message": {**message, "usage": usage}}
        )  # fmt: skip
    run.result(explore, response(["lib/a.js"]))
    run.events[-1]["uuid"] = "u-explore-result"
    run.result(concurrent, "R" * 400)
    run.events[-1]["uuid"] = "u-read-result"
    read = run.use("Read", file_path="/r/lib/a.js")
    run.events.append(
        {"type": "assistant", "uuid": "u-next", "session_id": run.session, "parent_tool_use_id": None,
         "message": {"id": "msg_next", "role": "assistant", "model": "claude-sonnet-4", "content": [read],
                     "usage": {"input_tokens": 1400, "output_tokens": 20}}}
    )  # fmt: skip
    run.result(read, "function send() {}")
    run.events[-1]["uuid"] = "u-read2-result"
    run.finish("lib/a.js sends it")
    return run, explore, concurrent


OLD_SID = "0a1b2c3d-4e5f-4a6b-8c7d-9e0f1a2b3c4d"  # the session resumed or forked
NEW_SID = "f1e2d3c4-b5a6-4978-8695-a4b3c2d1e0f9"  # its copy, in a new file
FORK_SID = "c0c0c0c0-1111-4222-8333-444455556666"  # another fork of the same session


def with_usage_lines(session: RealSession, ctx: int) -> None:
    """Give every assistant line of ``session`` that has none a usage of ``ctx`` input tokens."""
    for line in session.lines:
        message = line.get("message")
        if line.get("type") == "assistant" and isinstance(message, dict) and "usage" not in message:
            message["usage"] = {"input_tokens": ctx, "output_tokens": 10}


def resumed_pair() -> tuple[RealSession, RealSession, RealSession, dict[str, dict[str, Any]]]:
    """A session (explore, Agent, explore, Read) and the new file an older ``--resume`` or a
    ``--fork-session`` made of it: a copy of every line (uuids, tool_use ids and the old
    ``sessionId`` kept), then the new session's own turn (an explore, then a Read of a file
    the copied second explore returned).

    Returns (old session, its subagent, new session, the calls by name).
    """
    old = RealSession(OLD_SID)
    old.header()
    old.prompt("fix the ETag bug")
    first = Run.use("mcp__codegraph__codegraph_explore", query="send ETag")
    old.step(first, response(["lib/response.js"]))
    agent = Run.use("Agent", prompt="find who calls etag", description="callers", subagent_type="Explore")
    old.message(agent)
    old.result(agent, "they are in utils", toolUseResult={"agentId": AGENT17, "status": "completed"})
    second = Run.use("mcp__codegraph__codegraph_explore", query="etag helper")
    old.step(second, response(["lib/utils.js"]))
    old.step(Run.use("Read", file_path="/r/lib/utils.js"), "function etag() {}")
    old.message({"type": "text", "text": "Fixed in lib/utils.js"})
    with_usage_lines(old, 1000)
    sub = subagent(AGENT17, "find who calls etag", (Run.use("Grep", pattern="etag("), "lib/response.js"))
    sub.id = OLD_SID
    for line in sub.lines:
        line["sessionId"] = OLD_SID
    new = RealSession(NEW_SID)
    new.lines = [copy.deepcopy(line) for line in old.lines]  # the copy keeps the old session's ids
    new.parent = old.parent
    new.prompt("now make it weak")
    third = Run.use("mcp__codegraph__codegraph_explore", query="weak etag")
    new.step(third, response(["lib/etag.js"]))
    new.step(Run.use("Read", file_path="/r/lib/utils.js"), "function etag() {}")
    new.message({"type": "text", "text": "Done in lib/utils.js"})
    with_usage_lines(new, 3000)
    return old, sub, new, {"first": first, "agent": agent, "second": second, "third": third}
