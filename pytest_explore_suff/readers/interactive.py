"""Interactive Claude Code session logs (``~/.claude/projects/<cwd>/<session>.jsonl``).

A subagent's events live in one of three places, by Claude Code version:
inline in the session file (``isSidechain: true``), a flat
``agent-<id>.jsonl`` beside it, or ``<session>/subagents/agent-<id>.jsonl``
with an ``agent-<id>.meta.json`` sidecar. Each subagent is read into a
provisional thread, then linked to the Task/Agent call that spawned it (D7).
``progress`` lines in any file are links, never actions.
"""

from __future__ import annotations

import os
import re
import zlib
from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Any

from ..events import DELEGATION_TOOLS, Action, Collector, result_text
from ..jsonl import Undecodable, decode
from ..sources import SIDECAR_SUFFIXES, ArchiveError, logical_name
from .base import Replays, events, is_progress, unlinked_child

_HEAD = 4096
# Compact JSON from Claude Code, but tolerate other writers' spacing.
_SIDECHAIN = re.compile(rb'"isSidechain"\s*:\s*true')
WARMUP = "Warmup"
#: ``agent-aside_question-<hex>.jsonl``: a question the user asked on the side.
ASIDE = "aside_question-"


@dataclass
class _Subagent:
    thread: str  # provisional key, until linked
    label: str  # how warnings name it
    prompt: str | None = None
    tool_use_id: str | None = None  # from meta.json
    description: str | None = None  # from meta.json: the spawning call's input.description
    agent_id: str | None = None
    inline: bool = False
    started: str = ""  # the first line's timestamp: subagents are matched earliest first
    #: its user prompts (the spawn's first, then new work sent to it), each with the
    #: number of its thread's actions before it
    inputs: list[tuple[str, int]] = field(default_factory=list)
    key: str | None = None  # the spawning call's id, once linked


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


def _user_prompt(line: bytes) -> bool:
    """A user line that is not a tool result (a subagent's task, or new work sent to it):
    the fast path would skip it. Told by its head; a line missed is merely decoded."""
    return line.find(b'"user"', 0, _HEAD) != -1 and line.find(b'"tool_result"', 0, _HEAD) == -1


def _input(collector: Collector, sub: _Subagent, prompt: str) -> None:
    """A user prompt of a subagent: its task (the first), or new work sent to it, which
    starts where its thread's actions stand now."""
    if sub.prompt is None:
        sub.prompt = prompt
    sub.inputs.append((prompt, len(collector.threads.get(sub.thread, ()))))


def _copy_note(copy: dict[str, Any]) -> str:
    """What the record's ``copies`` entry says, for the warnings."""
    where = f"lines {copy['first_line']}-{copy['last_line']} ({copy['lines']} lines, {copy['calls']} calls)"
    if copy["judged_in"] is None:
        return (
            f"{where} are a copy of session {copy['session']} (a resumed or forked session), "
            "which is not in the campaign: judged here"
        )
    return (
        f"{where} are a copy of session {copy['session']} (a resumed or forked session): its calls are "
        f"judged in {copy['judged_in']}; this session's window (occupancy) still holds them"
    )


def agent_id_of(path: str) -> str:
    """``agent-abc123.jsonl`` -> ``abc123``."""
    name = logical_name(os.path.basename(path))
    return name[len("agent-") : -len(".jsonl")] if name.startswith("agent-") else name


def _meta(path: str, collector: Collector) -> dict[str, Any]:
    """A subagent file's ``agent-<id>.meta.json`` sidecar, or its ``.gz`` (``gzip -r``)."""
    stem = logical_name(path)[: -len(".jsonl")]
    for suffix in SIDECAR_SUFFIXES:
        meta_path = stem + suffix
        try:
            with collector.open_file(meta_path) as fh:
                meta = decode(fh.read(1 << 20))  # a lone surrogate escape as U+FFFD
        except FileNotFoundError:
            continue
        except (OSError, Undecodable, EOFError, zlib.error, ArchiveError):
            collector.warnings.append(f"{os.path.basename(meta_path)}: unreadable, ignored")
            return {}
        return meta if isinstance(meta, dict) else {}
    return {}


def read(files: Sequence[str], collector: Collector, *, decode_all: bool = False) -> None:
    """Feed a session file (``files[0]``) and its subagent files to ``collector``."""
    inline: dict[str, _Subagent] = {}  # by root uuid
    root_of: dict[str, str] = {}  # sidechain uuid -> its conversation's root

    fresh = Replays().fresh  # a resumed session replays earlier lines

    main = files[0]
    # A subagent file judged alone (its session is not in the campaign): every
    # line is a sidechain, and the subagent is the transcript's main thread.
    alone = os.path.basename(main).startswith("agent-")

    def sidechain(line: bytes) -> bool:
        # A progress line embeds a subagent's message: its isSidechain is not the line's.
        return _SIDECHAIN.search(line) is not None and not is_progress(line)

    copies = collector.copy_sessions
    for event in events(main, collector, decode_all=decode_all, also=sidechain, links=True):
        if not fresh(event):
            continue
        if copies:
            # A line of another session (a resumed or forked session's copy of it).
            sid = event.get("sessionId")
            if isinstance(sid, str) and sid in copies:
                collector.copy_line(sid, collector.lines)
            else:
                collector.copying = None
        if event.get("type") == "progress":
            collector.progress(event)
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
                agent = event.get("agentId")  # later inline sidechains name their agent too
                inline[root] = _Subagent(
                    f"sidechain-{root}",
                    f"inline sidechain {root}",
                    agent_id=agent if isinstance(agent, str) else None,
                    inline=True,
                )
            if isinstance(uuid, str):
                root_of[uuid] = root
            sub = inline[root]
            if (p := _prompt(event)) is not None:
                _input(collector, sub, p)
            collector.event(event, sub.thread)
        else:
            collector.event(event, "main")

    collector.copying = None

    in_files: list[_Subagent] = []
    # Subagent files are other windows (M1): only what can change a verdict is decoded.
    collector.main_file = False
    for path in files[1:]:
        agent = agent_id_of(path)
        meta = _meta(path, collector) if "subagents" in path.replace("\\", "/").split("/") else {}
        tool_use_id = meta.get("toolUseId")
        description = meta.get("description")
        sub = _Subagent(
            f"agent-{agent}",
            os.path.basename(path),
            tool_use_id=tool_use_id if isinstance(tool_use_id, str) else None,
            description=description if isinstance(description, str) else None,
            agent_id=agent,
        )
        for event in events(path, collector, decode_all=decode_all, also=_user_prompt, links=True):
            if not fresh(event):
                continue
            if not sub.started and isinstance(stamp := event.get("timestamp"), str):
                sub.started = stamp
            if event.get("type") == "progress":  # a nested spawn's link
                collector.progress(event)
                continue
            if (p := _prompt(event)) is not None:
                _input(collector, sub, p)
            collector.event(event, sub.thread)
        in_files.append(sub)

    subs = [*in_files, *inline.values()]
    _link(collector, in_files, list(inline.values()))
    if collector.sends:
        _link_sends(collector, subs)
    collector.order_by_spawn()
    for copy in sorted(collector.copies.values(), key=lambda c: c["first_line"]):
        collector.warnings.append(_copy_note(copy))


def _link(collector: Collector, in_files: list[_Subagent], inline: list[_Subagent]) -> None:
    """D7: give every subagent thread the id of the Task/Agent call that spawned it."""
    known = {a.id for actions in collector.threads.values() for a in actions}
    # In stream order, across threads: "the earliest not yet linked" call.
    # A resume (``Task``/``Agent`` with ``resume``) spawned nothing: it is new work for an agent.
    sends = collector.sends
    delegations = sorted(
        (
            a
            for actions in collector.threads.values()
            for a in actions
            if a.name in DELEGATION_TOOLS and a.id not in sends
        ),
        key=lambda a: collector.seen_tool_ids[a.id],
    )
    linked: set[str] = set()
    # A call that a tool result or a progress line gives to some agent was that
    # agent's spawn, even when its file is missing: no prompt match may take it.
    claimed = {*collector.agent_links.values(), *collector.progress_links.values()}

    attached: set[str] = set()  # the provisional thread keys of linked subagents

    def attach(sub: _Subagent, tool_use_id: str) -> None:
        sub.key = tool_use_id
        linked.add(tool_use_id)
        attached.add(sub.thread)
        collector.rename_thread(sub.thread, tool_use_id)

    def unlinked(sub: _Subagent) -> None:
        unlinked_child(collector, sub.label, "Task/Agent")

    def by_prompt(sub: _Subagent, description: str | None = None) -> Action | None:
        """The earliest free call given the subagent's first prompt (and ``description``, if set).

        An inline sidechain that names no agent may be the very agent a tool result
        names: for it, only calls claimed by a subagent the transcript holds are taken.
        """
        prompt = (sub.prompt or "").strip()
        if not prompt:
            return None
        taken = claimed_by_present if sub.inline and sub.agent_id is None else claimed
        # A subagent file of this transcript is this session's: a copied call (judged in its
        # own session) did not spawn it. An inline sidechain can sit in the copy.
        copied = () if sub.inline else collector.copied
        return next(
            (
                d
                for d in delegations
                if d.id not in linked
                and d.id not in taken
                and d.id not in copied
                and d.arg.strip() == prompt
                and (description is None or collector.descriptions.get(d.id) == description)
            ),
            None,
        )

    live = []
    for sub in in_files + inline:
        if sub.prompt is not None and sub.prompt.strip() == WARMUP:
            collector.drop_thread(sub.thread)
        else:
            live.append(sub)
    present = {sub.agent_id for sub in live if sub.agent_id}
    links = {**collector.progress_links, **collector.agent_links}
    claimed_by_present = {call for agent, call in links.items() if agent in present}

    pending: list[_Subagent] = []
    for sub in live:
        if sub.inline and sub.agent_id is None:
            continue  # an inline sidechain that names no agent: by prompt, then by order (below)
        agent = sub.agent_id or ""
        if agent.startswith(ASIDE):
            continue  # a side question: no call spawned it, so none is looked for
        ways = (sub.tool_use_id, collector.agent_links.get(agent), collector.progress_links.get(agent))
        via = next((t for t in ways if t in known and t not in sends), None)
        if via is not None:
            attach(sub, via)
        elif not sub.inline:
            pending.append(sub)
    # By prompt: an interrupted call has no result, and real meta sidecars
    # often no toolUseId. Calls that share a prompt go by the meta's
    # description first, then earliest subagent to earliest call.
    pending.sort(key=lambda s: s.started)
    for sub in list(pending):
        if sub.description is not None and (match := by_prompt(sub, sub.description)) is not None:
            attach(sub, match.id)
            pending.remove(sub)
    for sub in pending:
        if (match := by_prompt(sub)) is not None:
            attach(sub, match.id)
        else:
            unlinked(sub)

    # Inline sidechains carry no ids: by prompt, then the n-th unmatched
    # sidechain to the n-th unmatched call.
    rest = []
    for sub in (s for s in live if s.inline and s.thread not in attached):
        if (match := by_prompt(sub)) is not None:
            attach(sub, match.id)
        else:
            rest.append(sub)
    free = [d for d in delegations if d.id not in linked and d.id not in claimed]
    for sub in rest:
        if free:
            attach(sub, free.pop(0).id)
        else:
            unlinked(sub)


def _link_sends(collector: Collector, subs: list[_Subagent]) -> None:
    """New work for a subagent (``SendMessage``, ``Task``/``Agent`` with ``resume``), as
    Codex ``send_input`` (D9): judged by the subagent's first action after the user prompt
    that carries it (the first not yet claimed equal to the message, else holding it, else
    its next unclaimed prompt; the first prompt is the spawn's). The target is the agent's
    id or the ``name`` its spawning call gave it. Otherwise "moved on", with a warning."""
    by_target: dict[str, _Subagent] = {}
    for sub in subs:
        if sub.agent_id and (sub.prompt or "").strip() != WARMUP:
            by_target.setdefault(sub.agent_id, sub)
    by_key = {sub.key: sub for sub in subs if sub.key is not None}
    for name, call in collector.agent_names.items():
        if (named := by_key.get(call)) is not None:
            by_target.setdefault(name, named)
    claimed: dict[int, set[int]] = {}
    for call_id in sorted(collector.sends, key=collector.seen_tool_ids.__getitem__):
        tool, target, message = collector.sends[call_id]
        to = by_target.get(target)
        if to is None:
            collector.warnings.append(
                f"{tool} call {call_id}: no subagent {target} in the transcript; judged as moved on"
            )
            continue
        taken = claimed.setdefault(id(to), {0})
        text = message.strip()
        free = [i for i in range(len(to.inputs)) if i not in taken]
        at = next((i for i in free if to.inputs[i][0].strip() == text), None)
        if at is None and text:
            at = next((i for i in free if text in to.inputs[i][0]), None)
        if at is None and free:
            at = free[0]
        if at is None:
            collector.warnings.append(
                f"{tool} call {call_id}: its message is not in subagent {target}'s log; judged as moved on"
            )
            continue
        taken.add(at)
        collector.delegations[call_id] = (to.key or to.thread, to.inputs[at][1])
