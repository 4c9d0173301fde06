"""Interactive Claude Code session logs (``~/.claude/projects/<cwd>/<session>.jsonl``).

A subagent's events live in one of three places, by Claude Code version:
inline in the session file (``isSidechain: true``), a flat
``agent-<id>.jsonl`` beside it, or ``<session>/subagents/agent-<id>.jsonl``
with an ``agent-<id>.meta.json`` sidecar. Each subagent is read into a
provisional thread, then linked to the Task/Agent call that spawned it.
"""

from __future__ import annotations

import json
import os
import re
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

from ..events import DELEGATION_TOOLS, Collector, result_text
from ..sources import logical_name
from .base import events

# Compact JSON from Claude Code, but tolerate other writers' spacing.
_SIDECHAIN = re.compile(rb'"isSidechain"\s*:\s*true')
WARMUP = "Warmup"


@dataclass
class _Subagent:
    thread: str  # provisional key, until linked
    label: str  # how warnings name it
    prompt: str | None = None
    tool_use_id: str | None = None  # from meta.json
    agent_id: str | None = None
    inline: bool = False


def _prompt(event: dict[str, Any]) -> str | None:
    message = event.get("message")
    if event.get("type") != "user" or not isinstance(message, dict):
        return None
    content = message.get("content")
    if isinstance(content, list) and any(
        isinstance(b, dict) and b.get("type") == "tool_result" for b in content
    ):
        return None
    return result_text(content)


def agent_id_of(path: str) -> str:
    """``agent-abc123.jsonl`` -> ``abc123``."""
    name = logical_name(os.path.basename(path))
    return name[len("agent-") : -len(".jsonl")] if name.startswith("agent-") else name


def _meta(path: str, collector: Collector) -> dict[str, Any]:
    meta_path = logical_name(path)[: -len(".jsonl")] + ".meta.json"
    try:
        with collector.open_file(meta_path) as fh:
            meta = json.loads(fh.read(1 << 20))
    except FileNotFoundError:
        return {}
    except (OSError, ValueError, RecursionError):
        collector.warnings.append(f"{os.path.basename(meta_path)}: unreadable, ignored")
        return {}
    return meta if isinstance(meta, dict) else {}


def read(files: Sequence[str], collector: Collector, *, decode_all: bool = False) -> None:
    """Feed a session file (``files[0]``) and its subagent files to ``collector``."""
    seen: set[str] = set()
    inline: dict[str, _Subagent] = {}  # by root uuid
    root_of: dict[str, str] = {}  # sidechain uuid -> its conversation's root

    def fresh(event: dict[str, Any]) -> bool:
        uuid = event.get("uuid")
        if isinstance(uuid, str):
            if uuid in seen:  # a resumed session replays earlier lines
                return False
            seen.add(uuid)
        return True

    main = files[0]
    # A subagent file judged alone (its session is not in the campaign): every
    # line is a sidechain, and the subagent is the transcript's main thread.
    alone = os.path.basename(main).startswith("agent-")
    for event in events(
        main, collector, decode_all=decode_all, also=lambda b: _SIDECHAIN.search(b) is not None, links=True
    ):
        if not fresh(event):
            continue
        if event.get("type") == "result":
            collector.run_summary(event)
            continue
        if event.get("isSidechain") is True and not alone:
            uuid = event.get("uuid")
            parent = event.get("parentUuid")
            root = root_of.get(parent) if isinstance(parent, str) else None
            if root is None:
                root = uuid if isinstance(uuid, str) else f"#{len(inline)}"
                inline[root] = _Subagent(f"sidechain-{root}", f"inline sidechain {root}", inline=True)
            if isinstance(uuid, str):
                root_of[uuid] = root
            sub = inline[root]
            if sub.prompt is None:
                sub.prompt = _prompt(event)
            collector.event(event, sub.thread)
        else:
            collector.event(event, "main")

    in_files: list[_Subagent] = []
    for path in files[1:]:
        agent = agent_id_of(path)
        meta = _meta(path, collector) if "subagents" in path.replace("\\", "/").split("/") else {}
        tool_use_id = meta.get("toolUseId")
        sub = _Subagent(
            f"agent-{agent}",
            os.path.basename(path),
            tool_use_id=tool_use_id if isinstance(tool_use_id, str) else None,
            agent_id=agent,
        )
        need_prompt = [True]

        def first_prompt(line: bytes, need: list[bool] = need_prompt) -> bool:
            return need[0] and b'"user"' in line

        for event in events(path, collector, decode_all=decode_all, also=first_prompt, links=True):
            if not fresh(event):
                continue
            if need_prompt[0] and (p := _prompt(event)) is not None:
                sub.prompt = p
                need_prompt[0] = False
            collector.event(event, sub.thread)
        in_files.append(sub)

    _link(collector, in_files, list(inline.values()))
    collector.order_by_spawn()


def _link(collector: Collector, in_files: list[_Subagent], inline: list[_Subagent]) -> None:
    known = {a.id for actions in collector.threads.values() for a in actions}
    linked: set[str] = set()

    def attach(sub: _Subagent, tool_use_id: str) -> None:
        linked.add(tool_use_id)
        collector.rename_thread(sub.thread, tool_use_id)

    live = []
    for sub in in_files + inline:
        if sub.prompt is not None and sub.prompt.strip() == WARMUP:
            collector.drop_thread(sub.thread)
        else:
            live.append(sub)

    for sub in live:
        if sub.inline:
            continue
        if sub.tool_use_id and sub.tool_use_id in known:
            attach(sub, sub.tool_use_id)
        elif sub.agent_id and (via := collector.agent_links.get(sub.agent_id)) in known:
            attach(sub, via)
        else:
            collector.warnings.append(
                f"subagent {sub.label} could not be linked to its Task/Agent call; judged as its own thread"
            )

    delegations = [
        a
        for actions in collector.threads.values()
        for a in actions
        if a.name in DELEGATION_TOOLS and a.id not in linked
    ]
    pending = [s for s in live if s.inline]
    # By prompt first: the subagent's first user message is the Task's input.prompt.
    for sub in list(pending):
        prompt = (sub.prompt or "").strip()
        match = next((d for d in delegations if d.arg.strip() == prompt and d.id not in linked), None)
        if match is not None and prompt:
            attach(sub, match.id)
            pending.remove(sub)
    # Then by order: the n-th unmatched sidechain to the n-th unmatched call.
    rest = [d for d in delegations if d.id not in linked]
    for sub in pending:
        if rest:
            attach(sub, rest.pop(0).id)
        else:
            collector.warnings.append(
                f"subagent {sub.label} could not be linked to its Task/Agent call; judged as its own thread"
            )
