"""Every delegation judged through its subagent (D7, D9), for each agent's shapes.

Fixtures come from the formats page (``transcript-formats.md``, "Subagents in
Codex CLI", "Subagents in Gemini CLI", and section 2 for Claude's inline
sidechains), built with ``agent_shapes.py`` and ``builders.py``. Each shape is
judged through the library (`discover`, then `judge` on what it grouped), a
couple through pytester with and without ``-n 2``.
"""

from __future__ import annotations

import copy
import dataclasses
import json
import zipfile
from pathlib import Path
from typing import Any

import pytest
from agent_shapes import (
    GeminiSession,
    Rollout,
    child_rollout,
    child_source,
    explore_text,
    spawn_output,
    wait_output,
)
from builders import Run, Session, response
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from pytest_explore_suff import Collector, Transcript, TranscriptError, Verdict, discover, judge
from pytest_explore_suff.campaign import Campaign, from_wire, to_wire
from pytest_explore_suff.metrics import measure

PARENT = "019a0000-0000-7000-8000-00000000000a"
CHILD = "019a0000-0000-7000-8000-00000000000b"
CHILD2 = "019a0000-0000-7000-8000-00000000000c"


use = Run.use


def _calls(verdict: Verdict) -> list[tuple[str, str, str]]:
    return [(c.thread, c.bucket, c.next) for c in verdict.calls]


def _judged(t: Transcript) -> tuple[Verdict, Collector]:
    return judge(t.kind, list(t.files), archive=t.archive)


def _campaign(root: Path) -> dict[str, Transcript]:
    return {t.path: t for t in discover(str(root)).transcripts}


# -- Claude Code: an inline sidechain written before its Task call ----------------------


def test_an_inline_sidechain_written_before_its_task_call_links_by_its_prompt(tmp_path):
    s = Session()
    s.prompt("where is f?", root=True)
    e = s.step(use("mcp__codegraph__codegraph_explore", query="f"), response(["lib/a.js"]))
    # The sidechain's lines come first (no agentId on them) ...
    s.prompt("look at lib", sidechain=True, root=True)
    s.step(use("Read", file_path="/r/lib/a.js"), "src", sidechain=True)
    # ... then the Task call, whose result names an agent the file does not hold.
    task = use("Task", prompt="look at lib", description="look")
    s.message(task)
    s.result(
        task, [{"type": "text", "text": "found it"}], toolUseResult={"agentId": "a9f9f9f", "status": "ok"}
    )
    verdict, collector = judge("interactive", [s.write(tmp_path / "p" / "s.jsonl")])
    assert [(c.id, c.bucket, c.next) for c in verdict.calls] == [
        (e["id"], "read_returned", "Task → Read a.js")
    ]
    assert not [w for w in collector.warnings if "could not be linked" in w]


# -- Codex CLI ----------------------------------------------------------------------------


def codex_parent(
    spawn_args: dict[str, Any] | None = None, *, output: str | None = None, version: str = "0.104"
):
    """A parent rollout: explore, then spawn_agent (with the version's control calls)."""
    r = Rollout("current", "exec_command", session_id=PARENT, cli_version=f"{version}.0")
    r.user("where is f?")
    e = r.explore("where is f")
    r.step(e, outputs=[explore_text(["lib/a.py"], mentioned=["lib/c.py"])])
    args = {"message": "read the code of f", **(spawn_args or {})}
    namespace = args.pop("namespace", None)
    spawn = r.spawn(args.pop("message"), namespace=namespace, **args)
    r.step(spawn, outputs=[output if output is not None else spawn_output(CHILD)])
    if version == "0.104":
        r.step(r.call("wait", ids=[CHILD], timeout_ms=30000), outputs=[wait_output(CHILD)])
    else:
        r.step(r.call("wait_agent", targets=[CHILD]), outputs=[wait_output(CHILD)])
    r.step(r.call("close_agent", id=CHILD), outputs=["{}"])
    r.finish("f is in lib/a.py")
    return r, e, spawn


def codex_child(
    agent_id: str = CHILD,
    message: str = "read the code of f",
    first: str = "sed -n 1,80p lib/a.py",
    **spawn: Any,
) -> Rollout:
    c = child_rollout(PARENT, agent_id, message, **spawn)
    c.step(c.shell(first))
    c.finish("f reads x")
    return c


def write_codex(root: Path, parent: Rollout, *children: Rollout) -> None:
    day = root / "sessions" / "2026" / "03" / "01"
    parent.write(day / f"rollout-2026-03-01T10-00-00-{PARENT}.jsonl")
    for i, child in enumerate(children):
        # The child's file name sorts before its parent's: order must not matter.
        child.write(day / f"rollout-2026-03-01T09-59-{i:02d}-{child.session_id}.jsonl")


@pytest.mark.parametrize("version", ["0.104", "0.126"])
def test_codex_spawn_agent_is_judged_by_the_childs_first_action(version, tmp_path):
    parent, _, spawn = codex_parent(
        output=spawn_output(CHILD, nickname="Euclid") if version == "0.126" else None, version=version
    )
    extra = {"agent_nickname": "Euclid", "agent_role": "explorer"} if version == "0.126" else {}
    write_codex(tmp_path, parent, codex_child(**extra))
    [t] = _campaign(tmp_path).values()
    assert t.path.endswith(f"{PARENT}.jsonl")
    assert len(t.files) == len(t.rel_files) == 2  # the child's file is listed in the parent's
    verdict, collector = _judged(t)
    assert _calls(verdict) == [("main", "read_returned", "spawn_agent → Bash Read a.py")]
    assert not collector.warnings
    # Each call counted once, the child's in its own thread keyed by the spawning call.
    assert [a.name for a in collector.threads[spawn["call_id"]]] == ["Bash"]
    # other: spawn_agent and the control calls (bookkeeping is counted, never judged)
    assert collector.tools == {"explore": 1, "read": 0, "search": 0, "bash": 1, "other": 3}
    assert collector.runs[0]["tokens"] == parent.tokens + 1000  # the child's own token_count, added


def test_codex_multi_agent_v2_links_by_task_name_and_agent_path(tmp_path):
    parent, _, _ = codex_parent(
        {"namespace": "multi_agent_v1", "task_name": "explorer_1", "fork_turns": 0},
        output=spawn_output(task_name="/root/explorer_1", nickname="Noether"),
        version="0.140",
    )
    write_codex(tmp_path, parent, codex_child(agent_path="/root/explorer_1", first="rg -n 'def f' lib"))
    [t] = _campaign(tmp_path).values()
    verdict, collector = _judged(t)
    assert _calls(verdict) == [("main", "search", "spawn_agent → Bash search")]
    assert not collector.warnings


def test_codex_links_by_parent_and_first_message_when_the_output_names_no_child(tmp_path):
    parent, _, _ = codex_parent(output="spawned")  # no agent_id, no task_name
    other = codex_child(CHILD2, message="something else", first="cat lib/zzz.py")
    write_codex(tmp_path, parent, codex_child(), other)
    [t] = _campaign(tmp_path).values()
    verdict, collector = _judged(t)
    assert _calls(verdict) == [("main", "read_returned", "spawn_agent → Bash Read a.py")]
    assert any("could not be linked" in w and CHILD2 in w for w in collector.warnings)


def test_a_desktop_spawn_end_event_names_the_child(tmp_path):
    parent, _, spawn = codex_parent(output="{}")
    parent.event({"type": "collab_agent_spawn_end", "call_id": spawn["call_id"], "new_thread_id": CHILD})
    write_codex(tmp_path, parent, codex_child(message="a reworded task"))
    [t] = _campaign(tmp_path).values()
    verdict, collector = _judged(t)
    assert _calls(verdict) == [("main", "read_returned", "spawn_agent → Bash Read a.py")]
    assert not collector.warnings


def test_explore_calls_inside_a_codex_child_are_judged_in_its_thread(tmp_path):
    parent, _, spawn = codex_parent()
    c = child_rollout(PARENT, CHILD, "read the code of f")
    c.step(c.explore("inner"), outputs=[json.dumps([{"type": "text", "text": explore_text(["lib/b.py"])}])])
    c.step(c.shell("cat lib/b.py"))
    c.finish()
    write_codex(tmp_path, parent, c)
    [t] = _campaign(tmp_path).values()
    verdict, _ = _judged(t)
    assert _calls(verdict) == [
        ("main", "explore_again", "spawn_agent → codegraph_explore"),
        (spawn["call_id"], "read_returned", "Bash Read b.py"),
    ]


def forked(parent: Rollout, message: str) -> Rollout:
    """A forked child: its session_meta, a copy of ``parent`` (as it was at the spawn), its task."""
    child = Rollout("current", "exec_command", session_id=CHILD, fork_of=parent, source=child_source(PARENT))
    child.user(message)
    return child


def test_a_forked_codex_childs_copy_of_the_parents_history_is_the_parents(tmp_path):
    parent = Rollout("current", "exec_command", session_id=PARENT)
    parent.user("where is f?")
    e = parent.explore("where is f")
    parent.step(e, outputs=[explore_text(["lib/a.py"])])
    parent.step(parent.shell("cat lib/zzz.py"))  # the parent's own reaction, before it forks
    spawn = parent.spawn("now read f", fork_context=True)
    parent.item({"type": "reasoning", "summary": [], "encrypted_content": "x"})
    parent.item(spawn)
    snapshot = Rollout("current", "exec_command", session_id=PARENT)
    snapshot.lines = list(parent.lines)  # the history up to the spawn, as the child copies it
    parent.output(spawn, spawn_output(CHILD))
    parent.finish()
    child = forked(snapshot, "now read f")
    child.step(child.shell("nl -ba lib/a.py"))
    child.finish()
    write_codex(tmp_path, parent, child)
    [t] = _campaign(tmp_path).values()
    verdict, collector = _judged(t)
    # The parent's explore: answered by its own `cat lib/zzz.py`, not by anything copied.
    assert _calls(verdict) == [("main", "read_missed", "Bash Read zzz.py")]
    assert [a.arg for a in collector.threads[spawn["call_id"]]] == ["nl -ba lib/a.py"]
    assert collector.tools["explore"] == 1 and collector.tools["bash"] == 2
    assert not collector.warnings


def test_codex_fork_alone_drops_the_copy(tmp_path):
    parent = Rollout("current", "exec_command", session_id=PARENT)
    parent.user("where is f?")
    parent.step(parent.explore(), outputs=[explore_text(["lib/a.py"])])
    spawn = parent.spawn("now read f", fork_context=True)
    parent.item(spawn)
    child = forked(parent, "now read f")
    child.step(child.explore("own"), outputs=[explore_text(["lib/b.py"])])
    child.step(child.shell("cat lib/b.py"))
    child.write(tmp_path / f"rollout-2026-03-01T10-00-05-{CHILD}.jsonl")  # its parent is not kept
    [t] = _campaign(tmp_path).values()
    assert any("parent session" in n and PARENT in n for n in t.notes)
    verdict, _ = _judged(t)
    assert [(c.query, c.bucket) for c in verdict.calls] == [("own", "read_returned")]


def test_send_input_is_judged_by_the_childs_first_action_after_that_input(tmp_path):
    r = Rollout("current", "exec_command", session_id=PARENT, cli_version="0.126.0")
    r.user("where is f?")
    r.step(r.explore("a"), outputs=[explore_text(["lib/a.py"])])
    spawn = r.spawn("read f")
    r.step(spawn, outputs=[spawn_output(CHILD, nickname="Euclid")])
    r.step(r.explore("b"), outputs=[explore_text(["lib/b.py"])])
    send = r.call("send_input", id=CHILD, interrupt=True, message="now grep for g")
    r.step(send, outputs=['{"submission_id": "x"}'])
    r.step(r.call("wait_agent", targets=[CHILD]), outputs=[wait_output(CHILD)])
    r.finish()
    c = child_rollout(PARENT, CHILD, "read f")
    c.step(c.shell("cat lib/a.py"))
    c.event({"type": "turn_aborted", "reason": "interrupted"})
    c.user("now grep for g")
    c.step(c.shell("grep -rn g lib"))
    c.finish()
    write_codex(tmp_path, r, c)
    [t] = _campaign(tmp_path).values()
    verdict, collector = _judged(t)
    assert [(c.query, c.bucket, c.next) for c in verdict.calls] == [
        ("a", "read_returned", "spawn_agent → Bash Read a.py"),
        ("b", "search", "send_input → Bash search"),
    ]
    assert not collector.warnings


def test_a_codex_child_without_its_parent_is_its_own_transcript_with_a_note(tmp_path):
    write_codex(tmp_path, Rollout("current", session_id="019a-other"), codex_child())
    ts = _campaign(tmp_path)
    child = next(t for t in ts.values() if CHILD in t.path)
    assert child.files == (str(tmp_path / child.path),)
    assert any(f"parent session {PARENT} is not in the campaign" in n for n in child.notes)
    verdict, _ = _judged(child)
    assert verdict.answered == 0


@pytest.mark.parametrize("source", [{"subagent": "review"}, {"subagent": {"other": "guardian"}}, "exec"])
def test_review_and_guardian_sessions_are_transcripts_of_their_own(source, tmp_path):
    parent, _, _ = codex_parent()
    guardian = Rollout("current", session_id=CHILD2, source=source)
    guardian.step(guardian.explore(), outputs=[explore_text(["lib/a.py"])])
    write_codex(tmp_path, parent, codex_child(), guardian)
    ts = _campaign(tmp_path)
    assert len(ts) == 2
    g = next(t for t in ts.values() if CHILD2 in t.path)
    assert len(g.files) == 1 and not g.notes


def test_grouped_codex_transcripts_survive_the_wire_and_archives(tmp_path):
    parent, _, _ = codex_parent()
    write_codex(tmp_path / "c", parent, codex_child())
    campaign = discover(str(tmp_path / "c"))
    wired = to_wire(campaign)
    assert isinstance(wired, bytes)  # JSON: execnet's serializer is plain Python
    assert from_wire(wired).transcripts == campaign.transcripts
    # A path UTF-8 cannot hold (a surrogate: bytes no codec decoded) goes as plain data.
    odd = Campaign("/tmp/\udcff", [dataclasses.replace(t, root="/tmp/\udcff") for t in campaign.transcripts])
    plain = to_wire(odd)
    assert isinstance(plain, dict)
    assert from_wire(json.loads(json.dumps(plain))) == odd  # lists on the wire: tuples again
    archive = tmp_path / "c.zip"
    with zipfile.ZipFile(archive, "w") as zf:
        for f in sorted((tmp_path / "c").rglob("*.jsonl"), reverse=True):  # children first
            zf.write(f, f.relative_to(tmp_path / "c").as_posix())
    [t] = discover(str(archive)).transcripts
    assert len(t.files) == 2
    verdict, _ = _judged(t)
    assert _calls(verdict) == [("main", "read_returned", "spawn_agent → Bash Read a.py")]


# -- Gemini CLI ---------------------------------------------------------------------------

PSID = "7c3e0a52-1111-4222-8333-444455556666"


def gemini_child(
    first_text: str, *actions: dict[str, Any], form: str = "jsonl", sid: str = "c1d2"
) -> GeminiSession:
    """A subagent's session: its first user text embeds the task, then one step per action."""
    c = GeminiSession(form, kind="subagent", sessionId=sid)
    c.user(f"Your task: {first_text}\nReport back.")
    for action in actions:
        c.step(action)
    c.finish("found it")
    stamps = [m["timestamp"] for m in c.messages]
    c.header.update(startTime=stamps[0], lastUpdated=stamps[-1])
    return c


def gemini_parent(
    *delegations: dict[str, Any], cancelled: bool = False
) -> tuple[GeminiSession, dict[str, Any]]:
    p = GeminiSession("session", sessionId=PSID, startTime="2026-03-01T09:00:00.000Z")
    p.user("where is f?")
    e = p.explore("where is f")
    p.step(e, results=[explore_text(["lib/a.py"], mentioned=["lib/c.py"])])
    results = [
        None
        if cancelled
        else "Subagent 'codebase_investigator' finished.\nTermination Reason: GOAL\nResult:\nok"
    ]
    p.step(*delegations, results=results * len(delegations))
    return p, e


def write_gemini(root: Path, parent: GeminiSession, *children: GeminiSession, folder: str = PSID) -> Path:
    chats = root / ".gemini" / "tmp" / "ab12" / "chats"
    parent.write(chats / "session-2026-03-01T09-00-7c3e0a52.json")
    for child in children:
        child.write(chats / folder / f"{child.header['sessionId']}{child.suffix()}")
    return chats


def test_gemini_invoke_agent_links_by_its_agent_id(tmp_path):
    call = GeminiSession.call("invoke_agent", agent_name="codebase_investigator", prompt="find f")
    call["agentId"] = "c1d2"
    parent, _ = gemini_parent(call)
    child = gemini_child("something unrelated", GeminiSession.call("read_file", file_path="lib/a.py"))
    parent.finish()
    write_gemini(tmp_path, parent, child)
    [t] = _campaign(tmp_path).values()
    assert len(t.files) == 2
    verdict, collector = _judged(t)
    assert _calls(verdict) == [("main", "read_returned", "invoke_agent → Read a.py")]
    assert not collector.warnings
    assert collector.threads[call["id"]][0].name == "Read"


@pytest.mark.parametrize("form", ["session", "jsonl"])
def test_gemini_codebase_investigator_links_by_time_and_objective(form, tmp_path):
    call = GeminiSession.call("codebase_investigator", objective="find where f is defined")
    parent, _ = gemini_parent(call)
    child = gemini_child(
        "find where f is defined", GeminiSession.call("grep_search", pattern="def f"), form=form
    )
    parent.finish()
    write_gemini(tmp_path, parent, child)
    [t] = _campaign(tmp_path).values()
    verdict, collector = _judged(t)
    assert _calls(verdict) == [("main", "search", "codebase_investigator → Grep")]
    assert not collector.warnings


def test_a_gemini_call_stamped_when_issued_still_spans_its_child(tmp_path):
    # The call's timestamp may be when it was issued; the session's last message has no
    # next message: the session's last update bounds the call.
    call = GeminiSession.call("codebase_investigator", objective="find f")
    parent, _ = gemini_parent(call)
    message = parent.messages[-1]
    message["toolCalls"][0]["timestamp"] = message["timestamp"]
    child = gemini_child("find f", GeminiSession.call("read_file", file_path="lib/a.py"))
    parent.header["lastUpdated"] = child.header["lastUpdated"]
    write_gemini(tmp_path, parent, child)
    [t] = _campaign(tmp_path).values()
    verdict, collector = _judged(t)
    assert _calls(verdict) == [("main", "read_returned", "codebase_investigator → Read a.py")]
    assert not collector.warnings


def test_a_gemini_delegating_turn_with_no_text_is_stamped_when_its_calls_completed(tmp_path):
    # gemini-cli records a turn with neither text nor thoughts only once its calls complete:
    # the message (and its call) are stamped after the child started. The message before it
    # bounds when the call was issued.
    call = GeminiSession.call("codebase_investigator", objective="find f")
    parent, _ = gemini_parent(call)
    child = gemini_child("find f", GeminiSession.call("grep_search", pattern="def f"))
    parent.finish()
    turn = parent.messages[-2]
    assert turn["toolCalls"][0]["id"] == call["id"] and not turn["content"] and not turn["thoughts"]
    turn["timestamp"] = turn["toolCalls"][0]["timestamp"] = child.header["lastUpdated"]
    write_gemini(tmp_path, parent, child)
    [t] = _campaign(tmp_path).values()
    verdict, collector = _judged(t)
    assert _calls(verdict) == [("main", "search", "codebase_investigator → Grep")]
    assert not collector.warnings


def test_a_gemini_session_resumed_from_json_into_jsonl_links_its_children_to_the_jsonl(tmp_path):
    # gemini-cli resumes a .json session by writing the .jsonl form beside it (old messages,
    # then the new turns) and leaves the .json: the new turns' children are the .jsonl's.
    old = GeminiSession("session", sessionId=PSID, startTime="2026-03-01T09:00:00.000Z")
    old.user("where is f?")
    old.step(old.explore("where is f"), results=[explore_text(["lib/a.py"])])
    old.finish()
    resumed = GeminiSession("jsonl", sessionId=PSID, startTime="2026-03-01T09:00:00.000Z")
    resumed.records = copy.deepcopy(old.records)
    resumed.messages = copy.deepcopy(old.messages)
    resumed.user("and who calls it?")
    call = GeminiSession.call("codebase_investigator", objective="find the callers of f")
    resumed.step(resumed.explore("callers of f"), results=[explore_text(["lib/b.py"])])
    resumed.step(call, results=["Subagent 'codebase_investigator' finished.\nResult:\nok"])
    child = gemini_child("find the callers of f", GeminiSession.call("grep_search", pattern="f("))
    resumed.finish()
    chats = tmp_path / ".gemini" / "tmp" / "ab12" / "chats"
    old.write(chats / "session-2026-03-01T09-00-7c3e0a52.json")
    resumed.write(chats / "session-2026-03-01T09-00-7c3e0a52.jsonl")
    child.write(chats / PSID / f"{child.header['sessionId']}{child.suffix()}")
    by_name = {Path(t.path).name: t for t in _campaign(tmp_path).values()}
    jsonl = by_name["session-2026-03-01T09-00-7c3e0a52.jsonl"]
    assert len(jsonl.files) == 2 and len(by_name["session-2026-03-01T09-00-7c3e0a52.json"].files) == 1
    verdict, collector = _judged(jsonl)
    assert _calls(verdict)[-1] == ("main", "search", "codebase_investigator → Grep")
    assert not collector.warnings


def test_explore_calls_inside_a_gemini_child_are_judged_in_its_thread(tmp_path):
    call = GeminiSession.call("invoke_agent", agent_name="investigator", prompt="find f")
    call["agentId"] = "c1d2"
    parent, _ = gemini_parent(call)
    child = GeminiSession("jsonl", kind="subagent", sessionId="c1d2")
    child.user("find f")
    child.step(child.explore("inner"), results=[explore_text(["lib/b.py"])])
    child.step(GeminiSession.call("read_file", file_path="lib/b.py"))
    child.finish()
    parent.finish()
    write_gemini(tmp_path, parent, child)
    [t] = _campaign(tmp_path).values()
    verdict, collector = _judged(t)
    assert _calls(verdict) == [
        ("main", "explore_again", "invoke_agent → codegraph_explore"),
        (call["id"], "read_returned", "Read b.py"),
    ]
    assert collector.tools["explore"] == 2 and collector.tools["read"] == 1


def test_a_cancelled_gemini_delegation_is_still_judged_through_its_child(tmp_path):
    call = GeminiSession.call("codebase_investigator", objective="find f")
    parent, _ = gemini_parent(call, cancelled=True)
    child = gemini_child("find f", GeminiSession.call("read_file", file_path="lib/c.py"))
    parent.finish()
    write_gemini(tmp_path, parent, child)
    [t] = _campaign(tmp_path).values()
    verdict, _ = _judged(t)
    assert _calls(verdict) == [
        ("main", "read_missed", "codebase_investigator → Read c.py (named, not returned)")
    ]


def test_two_gemini_delegations_in_one_message_each_link_their_child(tmp_path):
    a = GeminiSession.call("codebase_investigator", objective="task A")
    b = GeminiSession.call("codebase_investigator", objective="task B")
    parent, _ = gemini_parent(a, b)
    child_b = gemini_child("task B", GeminiSession.call("glob", pattern="**/*.py"), sid="c-b")
    child_a = gemini_child("task A", GeminiSession.call("read_file", file_path="lib/a.py"), sid="c-a")
    parent.finish()
    write_gemini(tmp_path, parent, child_b, child_a)
    [t] = _campaign(tmp_path).values()
    verdict, collector = _judged(t)
    assert _calls(verdict) == [("main", "read_returned", "codebase_investigator → Read a.py")]
    assert [x.name for x in collector.threads[a["id"]]] == ["Read"]
    assert [x.name for x in collector.threads[b["id"]]] == ["Glob"]
    assert not collector.warnings


def test_a_call_whose_output_says_subagent_is_a_delegation_whatever_its_name(tmp_path):
    call = GeminiSession.call("docs_agent", objective="find f")
    parent, _ = gemini_parent(call)
    child = gemini_child("find f", GeminiSession.call("read_file", file_path="lib/a.py"))
    parent.finish()
    write_gemini(tmp_path, parent, child)
    [t] = _campaign(tmp_path).values()
    verdict, _ = _judged(t)
    assert _calls(verdict) == [("main", "read_returned", "docs_agent → Read a.py")]


def test_a_background_skill_extraction_session_is_its_own_transcript_without_a_warning(tmp_path):
    parent, _ = gemini_parent(GeminiSession.call("codebase_investigator", objective="find f"))
    parent.finish()
    skill = gemini_child("extract skills", GeminiSession.call("read_file", file_path="lib/a.py"), sid="sk1")
    chats = write_gemini(tmp_path, parent)
    skill.write(chats / "skill-extraction-sk1" / "sk1.jsonl")
    ts = _campaign(tmp_path)
    assert len(ts) == 2
    s = next(t for t in ts.values() if "skill-extraction" in t.path)
    _, collector = _judged(s)
    assert not [w for w in collector.warnings if "subagent" in w]


def test_a_gemini_child_without_its_parent_is_its_own_transcript_with_a_warning(tmp_path):
    child = gemini_child("find f", GeminiSession.call("read_file", file_path="lib/a.py"))
    child.write(tmp_path / "chats" / PSID / "c1d2.jsonl")
    [t] = _campaign(tmp_path).values()
    _, collector = _judged(t)
    assert any("no parent session linked in the campaign" in w for w in collector.warnings)


# -- through the plugin, with and without xdist -------------------------------------------


def subagent_campaign(root: Path) -> Path:
    parent, _, _ = codex_parent(version="0.126", output=spawn_output(CHILD, nickname="Euclid"))
    write_codex(root / "codex", parent, codex_child(agent_nickname="Euclid"))
    call = GeminiSession.call("codebase_investigator", objective="find f")
    gparent, _ = gemini_parent(call)
    gchild = gemini_child("find f", GeminiSession.call("grep_search", pattern="f"))  # before the parent ends
    gparent.finish()
    write_gemini(root / "gemini", gparent, gchild)
    return root


def test_a_subagent_campaign_reports_the_same_under_xdist(pytester):
    root = subagent_campaign(pytester.path / "c")
    flags = [f"--explore-suff={root}", "-p", "no:cacheprovider"]
    pytester.runpytest(*flags, "--explore-suff-json=plain.json").assert_outcomes(passed=2)
    pytester.runpytest(*flags, "-n", "2", "--explore-suff-json=dist.json").assert_outcomes(passed=2)
    assert (pytester.path / "plain.json").read_bytes() == (pytester.path / "dist.json").read_bytes()
    doc = json.loads((pytester.path / "plain.json").read_text())
    nexts = sorted(c["next"] for r in doc["transcripts"] for c in r["calls"])
    assert nexts == ["codebase_investigator → Grep", "spawn_agent → Bash Read a.py"]
    assert sorted(len(r["files"]) for r in doc["transcripts"]) == [2, 2]


# -- bad input never crashes ----------------------------------------------------------------


def test_an_unreadable_child_is_a_warning_and_the_parent_is_still_judged(tmp_path):
    parent, _, _ = codex_parent()
    path = parent.write(tmp_path / "rollout-p.jsonl")
    verdict, collector = judge("codex", [path, tmp_path / "gone" / "rollout-c.jsonl"])
    assert _calls(verdict) == [("main", "sufficient", "spawn_agent")]
    assert any("rollout-c.jsonl" in w and "not read" in w for w in collector.warnings)
    g, _ = gemini_parent(GeminiSession.call("codebase_investigator", objective="find f"))
    gpath = g.write(tmp_path / "session-g.json")
    broken = tmp_path / PSID / "c.json"
    broken.parent.mkdir()
    broken.write_text('{"sessionId": "c", "messages": [')
    verdict, collector = judge("gemini", [gpath, broken])
    assert _calls(verdict) == [("main", "sufficient", "codebase_investigator")]
    assert any("c.json" in w and "not read" in w for w in collector.warnings)


scalars = st.none() | st.booleans() | st.integers() | st.text(max_size=8)
junk = scalars | st.lists(scalars, max_size=3) | st.dictionaries(st.text(max_size=6), scalars, max_size=3)
ids = st.sampled_from([PARENT, CHILD, CHILD2, "", "x"]) | junk
codex_lines = st.one_of(
    st.builds(
        lambda i, s: {
            "timestamp": "2026-03-01T10:00:00Z",
            "type": "session_meta",
            "payload": {"id": i, "source": s},
        },
        ids,
        st.builds(
            lambda p, a: {"subagent": {"thread_spawn": {"parent_thread_id": p, "agent_path": a}}}, ids, ids
        )
        | junk,
    ),
    st.builds(
        lambda n, a, c, ns: {
            "timestamp": "t",
            "type": "response_item",
            "payload": {"type": "function_call", "name": n, "arguments": a, "call_id": c, "namespace": ns},
        },
        st.sampled_from(
            ["spawn_agent", "send_input", "wait_agent", "mcp__codegraph__codegraph_explore", "exec_command"]
        )
        | junk,
        st.builds(
            json.dumps,
            st.dictionaries(
                st.sampled_from(["message", "id", "cmd", "query", "items", "target"]), ids | junk
            ),
        )
        | junk,
        st.sampled_from(["c1", "c2", "c3"]) | junk,
        st.sampled_from(["multi_agent_v1", None]) | junk,
    ),
    st.builds(
        lambda c, o: {
            "timestamp": "t",
            "type": "response_item",
            "payload": {"type": "function_call_output", "call_id": c, "output": o},
        },
        st.sampled_from(["c1", "c2", "c3"]) | junk,
        st.builds(json.dumps, st.dictionaries(st.sampled_from(["agent_id", "task_name", "nickname"]), ids))
        | junk,
    ),
    st.builds(
        lambda m: {"timestamp": "t", "type": "event_msg", "payload": {"type": "user_message", "message": m}},
        ids | junk,
    ),
    st.builds(
        lambda c, t: {
            "timestamp": "t",
            "type": "event_msg",
            "payload": {"type": "collab_agent_spawn_end", "call_id": c, "new_thread_id": t},
        },
        ids,
        ids,
    ),
)
rollouts = st.lists(codex_lines, min_size=1, max_size=10).map(
    lambda ls: "".join(json.dumps(x) + "\n" for x in ls)
)


@settings(max_examples=60, deadline=None, suppress_health_check=list(HealthCheck))
@given(parent=rollouts, children=st.lists(rollouts, max_size=3))
def test_no_exception_escapes_on_arbitrary_codex_families(parent, children, tmp_path_factory):
    root = tmp_path_factory.mktemp("fam")
    (root / "rollout-p.jsonl").write_text(parent)
    for i, child in enumerate(children):
        (root / f"rollout-c{i}.jsonl").write_text(child)
    for t in discover(str(root)).transcripts:
        try:
            verdict, _ = judge(t.kind, list(t.files))
        except Exception as exc:  # only a one-line TranscriptError may come out
            assert isinstance(exc, TranscriptError) and "\n" not in str(exc)
            continue
        assert verdict.answered == len(verdict.calls)


def test_an_archived_subagent_campaign_with_children_first_reports_what_the_directory_does(pytester):
    import tarfile

    root = subagent_campaign(pytester.path / "c")
    flags = ["-p", "no:cacheprovider"]
    pytester.runpytest(f"--explore-suff={root}", *flags, "--explore-suff-json=dir.json").assert_outcomes(
        passed=2
    )
    archive = pytester.path / "c.tar.gz"
    with tarfile.open(archive, "w:gz") as t:
        # Children first: deeper files (Gemini), then by name (a Codex child's sorts first).
        for f in sorted(root.rglob("*.json*"), key=lambda p: (-len(p.parts), p.name)):
            t.add(f, arcname=f"c/{f.relative_to(root).as_posix()}")
    result = pytester.runpytest(
        f"--explore-suff={archive}", *flags, "-n", "2", "--explore-suff-json=tar.json"
    )
    result.assert_outcomes(passed=2)
    strip = lambda d: [{k: r[k] for k in ("calls", "files", "counts")} for r in d["transcripts"]]  # noqa: E731
    docs = [json.loads((pytester.path / n).read_text()) for n in ("dir.json", "tar.json")]
    assert strip(docs[0]) == strip(docs[1])


def _usage(r: Rollout, prompt: int, total: int) -> None:
    r.event({"type": "token_count", "info": {"last_token_usage": {"input_tokens": prompt},
                                             "total_token_usage": {"total_tokens": total},
                                             "model_context_window": 272_000}})  # fmt: skip


def test_a_codex_childs_requests_are_another_window_than_its_parents(tmp_path):
    # M1: the parent's occupancy counts the parent's requests only, never the child's.
    parent, _, _ = codex_parent()
    for n, prompt in enumerate((5_000, 7_000, 9_000), 1):
        _usage(parent, prompt, prompt + n)
    child = codex_child()
    _usage(child, 50_000, 50_001)
    _usage(child, 60_000, 60_002)
    write_codex(tmp_path, parent, child)
    [t] = _campaign(tmp_path).values()
    verdict, collector = _judged(t)
    occupancy = measure(verdict, collector)["occupancy"]
    assert occupancy is not None
    assert (occupancy["turns"], occupancy["ctx_base"], occupancy["ctx_final"]) == (3, 5_000, 9_000)
    assert occupancy["window"] == 272_000


# -- Codex Desktop 0.119: a forked child whose copy holds no calls -------------------------


def desktop_copy(parent: Rollout) -> list[dict[str, Any]]:
    """The parent's history as Codex Desktop 0.119 copies it into a forked child (the formats
    page): its session_meta, messages and UI events only; no call, output or reasoning."""
    kept = []
    for line in parent.lines:
        kind, payload = line.get("type"), line.get("payload", {})
        if kind in ("session_meta", "event_msg") or (
            kind == "response_item" and payload.get("type") == "message"
        ):
            kept.append(copy.deepcopy(line))
    return kept


def desktop_parent() -> tuple[Rollout, dict[str, Any], dict[str, Any]]:
    """A parent that explores, reads, forks a child ("now read f") and answers."""
    parent = Rollout("current", "exec_command", session_id=PARENT, cli_version="0.119.0")
    parent.user("where is f?")
    e = parent.explore("where is f")
    parent.step(e, outputs=[explore_text(["lib/a.py"])])
    _usage(parent, 5_000, 5_100)
    parent.step(parent.shell("cat lib/zzz.py"))
    _usage(parent, 7_000, 12_200)
    parent.say("Forking a helper to read f.")
    spawn = parent.spawn("now read f", fork_context=True)
    return parent, e, spawn


def desktop_child(parent: Rollout, scripts: list[str], *, answer: bool = True) -> Rollout:
    """The forked child: a copy of ``parent`` as it was at the spawn, then its own turn
    (``task_started``, its task, a shell call per script, each measured by a token_count)."""
    child = Rollout("current", "exec_command", session_id=CHILD, source=child_source(PARENT),
                    cli_version="0.119.0")  # fmt: skip
    child.lines = child.lines[:1] + desktop_copy(parent)
    child.event({"type": "task_started", "turn_id": "t-child", "model_context_window": 258_400})
    child.user("now read f")
    for n, script in enumerate(scripts, 1):
        own_call(child, child.shell(script), "src", 20_000 + n * 1_000, 40_000 + n * 1_500)
    if answer:
        child.finish("f reads x")
    return child


def own_call(r: Rollout, call: dict[str, Any], output: str, prompt: int, total: int) -> None:
    """One model response of ``r`` issuing ``call``, its output, and the token_count measuring it."""
    r.item({"type": "reasoning", "summary": [], "encrypted_content": "gAAAA"})
    r.item(call)
    r.output(call, output)
    _usage(r, prompt, total)


def test_a_desktop_forked_childs_own_calls_threads_and_tokens_are_its_own(tmp_path):
    parent, _, spawn = desktop_parent()
    child = desktop_child(parent, ["nl -ba lib/a.py", "rg -n g lib", "cat lib/b.py"])
    parent.step(spawn, outputs=[spawn_output(CHILD)])
    parent.step(parent.call("wait_agent", targets=[CHILD]), outputs=[wait_output(CHILD)])
    parent.finish("f is in lib/a.py")
    write_codex(tmp_path, parent, child)
    [t] = _campaign(tmp_path).values()
    assert len(t.files) == 2
    verdict, collector = _judged(t)
    assert _calls(verdict) == [("main", "read_missed", "Bash Read zzz.py")]
    assert [a.arg for a in collector.threads[spawn["call_id"]]] == ["nl -ba lib/a.py", "rg -n g lib",
                                                                    "cat lib/b.py"]  # fmt: skip
    assert collector.tools["bash"] == 4  # the parent's one and the child's three
    assert not collector.warnings
    # The child's last running total (its own token_counts) is added to the parent's, the
    # copied parent token_counts never.
    assert collector.runs[0]["tokens"] == parent_total(parent) + 44_500
    # The parent's window holds the parent's requests only (M1).
    occupancy = measure(verdict, collector)["occupancy"]
    assert occupancy is not None and occupancy["ctx_final"] == 7_000


def parent_total(parent: Rollout) -> int:
    totals = [
        line["payload"]["info"]["total_token_usage"]["total_tokens"]
        for line in parent.lines
        if line.get("type") == "event_msg" and line["payload"].get("type") == "token_count"
    ]
    return max(totals)


def test_a_desktop_forked_child_alone_is_judged_alone_with_its_own_calls_and_window(tmp_path):
    parent, _, _ = desktop_parent()
    c = desktop_child(parent, ["cat lib/a.py"], answer=False)
    # Its own explore, answered by a read of a returned file, then its answer.
    own_call(c, c.explore("own"), json.dumps([{"type": "text", "text": explore_text(["lib/b.py"])}]),
             30_000, 80_000)  # fmt: skip
    own_call(c, c.shell("sed -n 1,40p lib/b.py"), "src", 33_000, 120_000)
    c.finish("f reads x")
    c.write(tmp_path / f"rollout-2026-03-01T10-00-05-{CHILD}.jsonl")  # the parent is not kept
    [t] = _campaign(tmp_path).values()
    assert any(f"parent session {PARENT} is not in the campaign; judged alone" in n for n in t.notes)
    verdict, collector = _judged(t)
    own = [("own", "read_returned", "Bash Read b.py")]
    assert [(v.query, v.bucket, v.next) for v in verdict.calls] == own
    assert [a.arg for a in collector.threads["main"]] == ["cat lib/a.py", "own", "sed -n 1,40p lib/b.py"]
    assert collector.runs[0]["tokens"] == 120_000  # its own running total, not the copy's
    occupancy = measure(verdict, collector)["occupancy"]
    assert occupancy is not None
    # Its own requests: the three it measured, never the copied parent's 5 000 and 7 000.
    assert (occupancy["turns"], occupancy["ctx_base"], occupancy["ctx_final"]) == (3, 21_000, 33_000)


def test_a_desktop_forked_child_alone_reports_its_calls_and_the_warning_under_xdist(pytester):
    parent, _, _ = desktop_parent()
    c = desktop_child(parent, ["cat lib/a.py"], answer=False)
    own_call(c, c.explore("own"), explore_text(["lib/b.py"]), 30_000, 80_000)
    own_call(c, c.shell("sed -n 1,40p lib/b.py"), "src", 33_000, 120_000)
    c.finish("f reads x")
    c.write(pytester.path / "c" / f"rollout-2026-03-01T10-00-05-{CHILD}.jsonl")
    flags = [f"--explore-suff={pytester.path / 'c'}", "-p", "no:cacheprovider", "-W", "default::UserWarning"]
    plain = pytester.runpytest(*flags, "--explore-suff-json=plain.json")
    plain.assert_outcomes(passed=1, warnings=1)
    plain.stdout.fnmatch_lines([f"*parent session {PARENT} is not in the campaign; judged alone*"])
    dist = pytester.runpytest(*flags, "-n", "2", "--explore-suff-json=dist.json")
    dist.assert_outcomes(passed=1, warnings=1)
    assert (pytester.path / "plain.json").read_bytes() == (pytester.path / "dist.json").read_bytes()
    [rec] = json.loads((pytester.path / "plain.json").read_text())["transcripts"]
    assert [(x["bucket"], x["next"]) for x in rec["calls"]] == [("read_returned", "Bash Read b.py")]
    assert rec["tools"]["bash"] == 2 and rec["runs"][0]["tokens"] == 120_000
    assert rec["occupancy"] is not None and rec["occupancy"]["ctx_final"] == 33_000
