"""Shapes of real Claude Code session logs (issue #10): D6, D7, D8, progress lines, new line types."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest
from builders import EXPLORE, Run, Session, response
from helpers import listed, report
from real_shapes import (
    AGENT7,
    AGENT17,
    SID,
    RealSession,
    appended_runs,
    delegating_parent,
    stub,
    subagent,
    write_subagent,
)

from pytest_explore_suff import Collector, ToolSpec, Verdict, discover, judge
from pytest_explore_suff.jsonl import decode
from pytest_explore_suff.readers import base

MISSING = "<tool_use_error>Error: No such tool available: {}</tool_use_error>"


def judge_dir(root: Path, spec: ToolSpec | None = None) -> tuple[Verdict, Collector]:
    """The one transcript campaign discovery finds under ``root``, judged."""
    [transcript] = discover(str(root)).transcripts
    return judge(transcript.kind, transcript.files, spec)


def reading_subagent(agent_id: str = AGENT17, prompt: str = "find where send sets ETag") -> RealSession:
    return subagent(
        agent_id,
        prompt,
        (Run.use("Read", file_path="/r/lib/response.js"), "function send() {}"),
        (Run.use("Grep", pattern="etag"), "lib/utils.js"),
    )


# --- D7: linking a subagent file to its spawning call ------------------------------------------


def test_a_subagent_linked_only_by_progress_lines_is_judged_through_the_delegation(tmp_path):
    parent, agent = delegating_parent()
    sub = reading_subagent(prompt="a prompt the call does not carry")
    parent.mirror(agent["id"], sub)
    parent.result(agent, "done")  # no toolUseResult.agentId: only the progress lines link
    parent.write(tmp_path / f"{SID}.jsonl")
    write_subagent(tmp_path, sub, "subagents")  # and no meta sidecar
    verdict, collector = judge_dir(tmp_path)
    [call] = verdict.calls
    assert (call.thread, call.bucket, call.next) == ("main", "read_returned", "Agent → Read response.js")
    assert list(collector.threads) == ["main", agent["id"]]
    assert collector.warnings == []


@pytest.mark.parametrize("data_first", [False, True], ids=["type-before-data", "data-before-type"])
def test_progress_lines_are_links_and_never_the_parents_actions(tmp_path, data_first):
    parent, agent = delegating_parent()
    sub = subagent(
        AGENT17,
        "find where send sets ETag",
        (Run.use(EXPLORE, query="etag inside"), response(["lib/etag.js"])),
        (Run.use("Read", file_path="lib/etag.js"), "module.exports = etag"),
    )
    parent.mirror(agent["id"], sub, data_first=data_first)
    parent.other_progress(agent["id"])
    parent.result(agent, "done", toolUseResult={"agentId": AGENT17, "status": "completed"})
    parent.write(tmp_path / f"{SID}.jsonl")
    write_subagent(tmp_path, sub, "subagents")
    verdict, collector = judge_dir(tmp_path)
    assert [(c.thread, c.query, c.next) for c in verdict.calls] == [
        ("main", "send ETag", "Agent → codegraph_explore"),
        (agent["id"], "etag inside", "Read etag.js"),
    ]
    # Once each: the parent's explore and Agent, the subagent's explore and Read.
    assert collector.tools == {"explore": 2, "read": 1, "search": 0, "bash": 0, "other": 1}
    assert collector.warnings == []


def test_only_the_first_progress_line_of_each_subagent_is_decoded(tmp_path, monkeypatch):
    parent, agent = delegating_parent()
    sub = reading_subagent()
    parent.mirror(agent["id"], sub)  # five lines: the prompt, two calls, two results
    parent.other_progress(agent["id"])
    parent.write(tmp_path / f"{SID}.jsonl")
    write_subagent(tmp_path, sub, "subagents")
    decoded: list[bytes] = []

    def counting(line: bytes) -> Any:
        decoded.append(line)
        return decode(line)

    monkeypatch.setattr(base, "decode", counting)
    _, collector = judge_dir(tmp_path)
    assert sum(b'"progress"' in line for line in decoded) == 1
    assert collector.progress_links == {AGENT17: agent["id"]}


@pytest.mark.parametrize(
    ("layout", "meta"),
    [
        ("flat", None),
        ("subagents", None),
        ("subagents", {"agentType": "general-purpose", "description": "find ETag"}),
    ],
    ids=["flat", "subagents-no-meta", "subagents-meta-2.1.81"],
)
def test_a_subagent_of_an_interrupted_agent_call_links_by_its_prompt(tmp_path, layout, meta):
    parent, _ = delegating_parent()  # the user interrupted it: no tool_result at all
    parent.prompt("[Request interrupted by user for tool use]")
    parent.write(tmp_path / f"{SID}.jsonl")
    write_subagent(tmp_path, reading_subagent(), layout, meta=meta)
    verdict, collector = judge_dir(tmp_path)
    assert (verdict.calls[0].bucket, verdict.calls[0].next) == ("read_returned", "Agent → Read response.js")
    assert collector.warnings == []


def two_calls_with_one_prompt(tmp_path: Path) -> tuple[RealSession, dict[str, Any], dict[str, Any]]:
    """explore → Agent, explore → Agent; both Agent calls carry the same prompt, neither got a result."""
    s = RealSession()
    s.prompt("fix both")
    s.step(Run.use(EXPLORE, query="one"), response(["lib/a.js"]))
    first = Run.use("Agent", prompt="check the callers", description="callers of a")
    s.message(first)
    s.step(Run.use(EXPLORE, query="two"), response(["lib/b.js"]))
    second = Run.use("Agent", prompt="check the callers", description="callers of b")
    s.message(second)
    s.write(tmp_path / f"{SID}.jsonl")
    return s, first, second


def test_two_calls_with_one_prompt_are_told_apart_by_the_meta_description(tmp_path):
    _, first, second = two_calls_with_one_prompt(tmp_path)
    # Written in the opposite order to the calls, and named so that file order is wrong too.
    for_second = subagent(
        "a0000000000000001", "check the callers", (Run.use("Glob", pattern="**/b*"), "lib/b.js")
    )
    for_first = subagent(
        "affffffffffffffff", "check the callers", (Run.use("Read", file_path="lib/a.js"), "x")
    )
    write_subagent(
        tmp_path, for_second, "subagents", meta={"agentType": "Explore", "description": "callers of b"}
    )
    write_subagent(
        tmp_path, for_first, "subagents", meta={"agentType": "Explore", "description": "callers of a"}
    )
    verdict, collector = judge_dir(tmp_path)
    assert [c.next for c in verdict.calls] == ["Agent → Read a.js", "Agent → Glob"]
    assert [a.name for a in collector.threads[first["id"]]] == ["Read"]
    assert [a.name for a in collector.threads[second["id"]]] == ["Glob"]
    assert collector.warnings == []


def test_two_calls_with_one_prompt_and_no_description_link_in_order_earliest_first(tmp_path):
    _, first, second = two_calls_with_one_prompt(tmp_path)
    # File names sort against start order: the earliest subagent is the one named last.
    early = subagent("affffffffffffffff", "check the callers", (Run.use("Read", file_path="lib/a.js"), "x"))
    late = subagent("a0000000000000001", "check the callers", (Run.use("Glob", pattern="**/b*"), "lib/b.js"))
    write_subagent(tmp_path, early, "subagents")
    write_subagent(tmp_path, late, "subagents")
    verdict, collector = judge_dir(tmp_path)
    assert [c.next for c in verdict.calls] == ["Agent → Read a.js", "Agent → Glob"]
    assert [a.name for a in collector.threads[first["id"]]] == ["Read"]
    assert [a.name for a in collector.threads[second["id"]]] == ["Glob"]
    assert collector.warnings == []


def test_a_call_whose_result_names_another_agent_is_not_taken_by_a_prompt_match(tmp_path):
    s = RealSession()
    s.step(Run.use(EXPLORE, query="one"), response(["lib/a.js"]))
    gone = Run.use("Agent", prompt="check the callers", description="d")
    s.message(gone)
    s.result(gone, "done", toolUseResult={"agentId": "a9999999", "status": "completed"})  # file not kept
    s.step(Run.use(EXPLORE, query="two"), response(["lib/b.js"]))
    interrupted = Run.use("Agent", prompt="check the callers", description="d")
    s.message(interrupted)
    s.write(tmp_path / f"{SID}.jsonl")
    write_subagent(
        tmp_path, subagent(AGENT7, "check the callers", (Run.use("Grep", pattern="x"), "")), "flat"
    )
    verdict, collector = judge_dir(tmp_path)
    assert [c.next for c in verdict.calls] == ["Agent", "Agent → Grep"]
    assert list(collector.threads) == ["main", interrupted["id"]]


@pytest.mark.parametrize("agent_id", [AGENT7, AGENT17], ids=["7-hex", "17-hex"])
@pytest.mark.parametrize("layout", ["flat", "subagents"])
def test_agent_ids_of_seven_and_seventeen_hex_digits_both_link_through_the_tool_result(
    tmp_path, agent_id, layout
):
    parent, agent = delegating_parent(prompt="the call's prompt")
    parent.result(agent, "done", toolUseResult={"agentId": agent_id, "status": "completed"})
    parent.write(tmp_path / f"{SID}.jsonl")
    write_subagent(tmp_path, reading_subagent(agent_id, prompt="a rewritten prompt"), layout)
    verdict, collector = judge_dir(tmp_path)
    assert verdict.calls[0].next == "Agent → Read response.js"
    assert list(collector.threads) == ["main", agent["id"]]
    assert collector.warnings == []


def test_an_inline_sidechain_still_links_by_its_prompt(tmp_path):
    s, agent = delegating_parent()
    s.prompt("find where send sets ETag", sidechain=True, root=True)
    s.step(Run.use("Bash", command="sed -n '1,80p' lib/response.js"), "...", sidechain=True)
    s.result(agent, "done", sidechain=False)
    s.write(tmp_path / f"{SID}.jsonl")
    verdict, collector = judge_dir(tmp_path)
    assert (verdict.calls[0].bucket, verdict.calls[0].next) == (
        "read_returned",
        "Agent → Bash Read response.js",
    )
    assert collector.warnings == []


def test_a_subagent_no_way_links_is_still_its_own_thread_with_a_warning(tmp_path):
    parent, _ = delegating_parent()
    parent.write(tmp_path / f"{SID}.jsonl")
    write_subagent(
        tmp_path, reading_subagent(prompt="nothing spawned me"), "subagents", meta={"agentType": "x"}
    )
    verdict, collector = judge_dir(tmp_path)
    assert verdict.calls[0].next == "Agent"
    assert list(collector.threads) == ["main", f"agent-{AGENT17}"]
    assert collector.warnings == [
        f"subagent agent-{AGENT17}.jsonl could not be linked to its Task/Agent call; judged as its own thread"
    ]


def test_an_aside_question_file_is_judged_as_its_own_thread_without_a_warning(tmp_path):
    parent, _ = delegating_parent()  # interrupted: no result, and no subagent file kept
    parent.write(tmp_path / f"{SID}.jsonl")
    aside = subagent(
        "aside_question-4f2a9c01",
        # The Agent call's very prompt: even so, no call spawned a side question.
        "find where send sets ETag",
        (Run.use(EXPLORE, query="what is etag"), response(["lib/etag.js"])),
    )
    write_subagent(tmp_path, aside, "subagents")
    [transcript] = discover(str(tmp_path)).transcripts
    assert [Path(f).name for f in transcript.files] == [f"{SID}.jsonl", "agent-aside_question-4f2a9c01.jsonl"]
    verdict, collector = judge(transcript.kind, transcript.files)
    assert [(c.thread, c.next) for c in verdict.calls] == [
        ("main", "Agent"),
        ("agent-aside_question-4f2a9c01", "(final answer)"),
    ]
    assert collector.warnings == []


# --- D6: raced only by the tool family ---------------------------------------------------------


def test_no_such_tool_for_another_servers_tool_does_not_race_the_run(run, verdict_of):
    title = run.use("mcp__happy__change_title", title="x")
    run.step(title, MISSING.format(title["name"]), is_error=True)
    run.step(run.explore(), response(["lib/a.js"]))
    assert verdict_of(run).raced is False


@pytest.mark.parametrize("result_first", [False, True], ids=["call-then-result", "result-then-call"])
def test_no_such_tool_for_a_codegraph_call_races_the_run_whatever_the_file_order(
    run, verdict_of, result_first
):
    explore = run.explore()
    if result_first:  # file order is not causal order
        run.result(explore, MISSING.format(EXPLORE), is_error=True)
        run.message(explore)
    else:
        run.step(explore, MISSING.format(EXPLORE), is_error=True)
    assert verdict_of(run).raced is True


def test_no_such_tool_for_a_call_never_seen_does_not_race_the_run(run, verdict_of):
    run.result({"id": "toolu_ghost"}, MISSING.format(EXPLORE), is_error=True)
    assert verdict_of(run).raced is False


def test_no_such_tool_for_another_codegraph_tool_races_the_run(run, verdict_of):
    run.step(run.use("mcp__codegraph__codegraph_status"), MISSING.format("mcp__codegraph__codegraph_status"))
    assert verdict_of(run).raced is True


def test_a_session_log_raced_by_another_server_is_kept(tmp_path):
    s = RealSession()
    title = Run.use("mcp__happy__change_title", title="ETag")
    s.step(title, [{"type": "text", "text": MISSING.format(title["name"])}])
    s.step(Run.use(EXPLORE, query="q"), response(["lib/a.js"]))
    s.write(tmp_path / f"{SID}.jsonl")
    verdict, _ = judge_dir(tmp_path)
    assert (verdict.raced, verdict.answered) == (False, 1)


# --- D8: the query of another retrieval tool ---------------------------------------------------


@pytest.mark.parametrize(
    ("tool", "explore", "args", "query"),
    [
        ("mcp__context7__resolve-library-id", "resolve-library-id", {"libraryName": "express"}, "express"),
        (
            "mcp__context7__get-library-docs",
            "get-library-docs",
            {"context7CompatibleLibraryID": "/expressjs/express", "topic": "res.send", "tokens": 5000},
            "res.send",
        ),
        ("mcp__serena__search_for_pattern", "search_for_pattern", {"pattern": "etag", "task": "t"}, "t"),
        ("mcp__serena__find_symbol", "find_symbol", {"depth": 1, "symbol": "send", "pattern": "p"}, "send"),
        (
            "mcp__deepwiki__ask_question",
            "ask_question",
            {"repoName": "expressjs/express", "question": "q?"},
            "q?",
        ),
        ("mcp__docs__lookup", "lookup", {"limit": 3, "name_path": "Response/send"}, "Response/send"),
        ("mcp__docs__lookup", "lookup", {"limit": 3, "topic": ["a", "b"]}, '["a", "b"]'),
        ("mcp__docs__lookup", "lookup", {"limit": 3}, ""),
        ("mcp__docs__lookup", "lookup", {"query": "kept", "topic": "not this"}, "kept"),
        # Literal D8: a codegraph tool without `query` does not fall back.
        ("mcp__codegraph__codegraph_node", "codegraph_node", {"symbol": "send"}, ""),
    ],
)
def test_a_judged_tool_without_a_query_argument_shows_its_best_other_argument(
    run, verdict_of, tool, explore, args, query
):
    run.step(run.use(tool, **args), response(["lib/response.js"]))
    spec = ToolSpec(explore=explore, family=tool.split("__")[1])
    [call] = verdict_of(run, spec=spec).calls
    assert call.query == query


# --- persisted output, line types, appended runs -----------------------------------------------


def test_a_real_persisted_output_stub_is_truncated_and_reading_the_saved_file_is_skipped(tmp_path):
    s = RealSession()
    explore = Run.use(EXPLORE, query="big")
    text, saved = stub(call_id=explore["id"], preview="**`lib/response.js`**\nfunction send() {")
    s.step(explore, text)
    s.step(Run.use("Read", file_path=saved), "(the rest of the response)")
    s.step(Run.use("Read", file_path="/r/lib/response.js"), "...")
    s.write(tmp_path / f"{SID}.jsonl")
    verdict, _ = judge_dir(tmp_path)
    [call] = verdict.calls
    assert (call.truncated, call.files, call.bucket, call.next) == (
        True,
        1,
        "read_returned",
        "Read response.js",
    )


def test_every_line_type_real_sessions_write_is_read_without_a_warning(tmp_path):
    s = RealSession(hex_ids=True)
    s.header()
    s.prompt("fix it")
    s.noise()
    explore = Run.use(EXPLORE, query="send")
    s.message(explore)
    s.result(
        explore,
        [{"type": "text", "text": response(["lib/response.js"])}],
        toolUseResult=[{"type": "text", "text": "..."}],
        mcpMeta={"structuredContent": {"files": ["lib/response.js"]}},
    )
    edit = Run.use("Edit", file_path="lib/response.js", old_string="a", new_string="b")
    s.message(edit)
    s.result(edit, "User rejected tool use", is_error=True, toolUseResult="User rejected tool use")
    s.noise()
    s.other_progress(edit["id"])
    s.write(tmp_path / f"{SID}.jsonl")
    verdict, collector = judge_dir(tmp_path)
    assert [(c.bucket, c.next) for c in verdict.calls] == [("sufficient", "Edit")]
    assert (collector.warnings, collector.corrupt) == ([], 0)
    assert collector.tools == {"explore": 1, "read": 0, "search": 0, "bash": 0, "other": 1}


@pytest.mark.parametrize("first", ["bookkeeping", "snapshots", "summary"])
def test_a_session_file_that_starts_with_bookkeeping_lines_is_found_as_a_session_log(tmp_path, first):
    parent, agent = delegating_parent()  # header(): 11 lines before the first message
    if first == "snapshots":  # more than discovery sniffs, none with a session id
        parent.lines[:0] = parent.lines[3:9] * 2
    elif first == "summary":  # a resumed session of older versions: no session id either
        parent.lines[:0] = [{"type": "summary", "summary": f"s{i}", "leafUuid": f"l-{i}"} for i in range(10)]
    parent.result(agent, "done", toolUseResult={"agentId": AGENT7})
    parent.write(tmp_path / f"{SID}.jsonl")
    write_subagent(tmp_path, reading_subagent(AGENT7), "subagents")
    [transcript] = discover(str(tmp_path)).transcripts
    assert (transcript.kind, len(transcript.files)) == ("interactive", 2)
    verdict, collector = judge(transcript.kind, transcript.files)
    assert verdict.calls[0].next == "Agent → Read response.js"
    assert collector.warnings == []


def test_headless_runs_appended_to_one_file_are_one_transcript_keeping_every_runs_figures(tmp_path):
    (tmp_path / "run-loop.jsonl").write_text("\n".join(appended_runs()) + "\n", encoding="utf-8")
    verdict, collector = judge_dir(tmp_path)
    assert [(c.query, c.bucket) for c in verdict.calls] == [
        ("first", "read_returned"),
        ("second", "sufficient"),
    ]
    assert [(r["subtype"], r["is_error"]) for r in collector.runs] == [("success", None), ("success", True)]
    assert collector.warnings == []


def test_an_explore_that_ends_one_appended_run_is_not_judged_by_the_next_run(tmp_path):
    first = Run("run-one")
    first.step(first.explore("last act of run one"), response(["lib/a.js"]))
    first.finish()
    second = Run("run-two")  # a new session: its first act answers nothing of run one
    second.step(second.use("Read", file_path="lib/a.js"))
    second.finish()
    (tmp_path / "run-loop.jsonl").write_text("\n".join(first.lines() + second.lines()) + "\n")
    verdict, _ = judge_dir(tmp_path)
    assert [(c.bucket, c.next) for c in verdict.calls] == [("sufficient", "(final answer)")]


def test_the_files_one_appended_run_was_returned_are_not_earlier_for_the_next(tmp_path):
    first = Run("run-one")
    first.step(first.explore("run one"), response(["lib/a.js"]))
    first.finish()
    second = Run("run-two")  # another session: it never saw run one's response
    second.step(second.explore("run two"), response(["lib/b.js"]))
    second.step(second.use("Read", file_path="lib/a.js"))
    second.finish()
    (tmp_path / "run-loop.jsonl").write_text("\n".join(first.lines() + second.lines()) + "\n")
    verdict, _ = judge_dir(tmp_path)
    assert [(c.query, c.bucket, c.next) for c in verdict.calls] == [
        ("run one", "sufficient", "(final answer)"),
        ("run two", "read_missed", "Read a.js"),
    ]


def test_a_second_init_of_the_same_session_does_not_end_the_run(tmp_path):
    run = Run("same")
    run.step(run.explore("q"), response(["lib/a.js"]))
    run.events.append(dict(run.events[0]))  # a resumed segment re-announces the same session
    run.step(run.use("Read", file_path="lib/a.js"))
    (tmp_path / "run-loop.jsonl").write_text("\n".join(run.lines()) + "\n")
    verdict, _ = judge_dir(tmp_path)
    assert [c.bucket for c in verdict.calls] == ["read_returned"]


# --- end to end, through the plugin ------------------------------------------------------------


def real_project(root: Path) -> Path:
    """A project folder as Claude Code leaves it: sessions of every layout side by side."""
    project = root / "-r"
    # 2.1.x: subagents/ with 2.1.81-style meta, progress lines, an interrupted call, a side question.
    parent, agent = delegating_parent()
    sub = reading_subagent()
    parent.mirror(agent["id"], sub)
    parent.other_progress(agent["id"])
    parent.noise()
    parent.write(project / f"{SID}.jsonl")
    write_subagent(
        project, sub, "subagents", meta={"agentType": "general-purpose", "description": "find ETag"}
    )
    aside = subagent("aside_question-77aa01", "why ETag?", (Run.use("Grep", pattern="etag"), "lib/etag.js"))
    write_subagent(project, aside, "subagents")
    (project / SID / "tool-results").mkdir()
    (project / SID / "tool-results" / "toolu_01Big.txt").write_text("big output\n")
    # About 2.0.28 to 2.1.1: a flat agent file of another session, linked by the tool result.
    other = "0e9d8c7b-6a5f-4e3d-8c2b-1a0f9e8d7c6b"
    old = Session(other)
    old.step(Run.use(EXPLORE, query="router"), response(["lib/router/index.js"]))
    task = Run.use("Task", prompt="trace the router", description="router")
    old.message(task)
    old.result(task, "done", toolUseResult={"agentId": AGENT7, "status": "completed"})
    old.write(project / f"{other}.jsonl")
    flat = Session(other, sidechain=True, agent_id=AGENT7)
    flat.prompt("trace the router")
    flat.step(Run.use("Read", file_path="lib/router/layer.js"))
    flat.write(project / f"agent-{AGENT7}.jsonl")
    # Up to about 2.0.27: an inline sidechain.
    inline_id = "9a8b7c6d-5e4f-4a3b-9c2d-1e0f2a3b4c5d"
    s = Session(inline_id)
    s.step(Run.use(EXPLORE, query="view"), response(["lib/view.js"]))
    inline_task = Run.use("Task", prompt="look at view", description="view")
    s.message(inline_task)
    s.prompt("look at view", sidechain=True, root=True)
    s.step(Run.use("Glob", pattern="**/view*"), sidechain=True)
    s.result(inline_task, "done", sidechain=False)
    s.write(project / f"{inline_id}.jsonl")
    return project


def test_a_real_shaped_project_folder_is_classified_without_a_warning(pytester):
    project = real_project(pytester.path)
    result = pytester.runpytest(f"--explore-suff={project}", "-W", "always::UserWarning")
    result.assert_outcomes(passed=3, warnings=0)
    doc = json.loads((pytester.path / "explore-suff.json").read_text(encoding="utf-8"))
    nexts = {r["path"]: [c["next"] for c in r["calls"]] for r in doc["transcripts"]}
    assert nexts == {
        f"{SID}.jsonl": ["Agent → Read response.js"],
        "0e9d8c7b-6a5f-4e3d-8c2b-1a0f9e8d7c6b.jsonl": ["Task → Read layer.js"],
        "9a8b7c6d-5e4f-4a3b-9c2d-1e0f2a3b4c5d.jsonl": ["Task → Glob"],
    }
    assert all(r["warnings"] == [] and r["status"] == "classified" for r in doc["transcripts"])


def test_every_file_of_a_real_shaped_project_folder_is_in_the_report(pytester):
    project = real_project(pytester.path)
    (project / "agent-acompact-1.jsonl").write_text((project / f"agent-{AGENT7}.jsonl").read_text())
    pytester.runpytest(f"--explore-suff={project}")
    doc = report(pytester)
    reported = listed(doc)
    on_disk = {p.relative_to(project).as_posix() for p in project.rglob("*") if p.is_file()}
    assert reported == on_disk  # the subagents' .meta.json sidecars included, and what is not JSON
    [session] = [r for r in doc["transcripts"] if r["path"] == f"{SID}.jsonl"]
    assert session["files"] == [
        f"{SID}.jsonl",
        f"{SID}/subagents/agent-{AGENT17}.jsonl",
        f"{SID}/subagents/agent-aside_question-77aa01.jsonl",
        f"{SID}/subagents/agent-{AGENT17}.meta.json",
    ]
    assert [c["thread"] for c in session["calls"]] == ["main"]
    assert session["tools"] == {"explore": 1, "read": 1, "search": 2, "bash": 0, "other": 1}


def test_a_session_that_guessed_another_servers_tool_is_not_excluded_as_raced(pytester):
    project = real_project(pytester.path)
    s = RealSession("3c2b1a09-8f7e-4d6c-9b5a-4f3e2d1c0b9a")
    title = Run.use("mcp__happy__change_title", title="ETag")
    s.step(title, MISSING.format(title["name"]))
    s.step(Run.use(EXPLORE, query="q"), response(["lib/a.js"]))
    s.write(project / f"{s.id}.jsonl")
    result = pytester.runpytest(f"--explore-suff={project}", "-W", "always::UserWarning")
    result.assert_outcomes(passed=4, warnings=0)
    doc = json.loads((pytester.path / "explore-suff.json").read_text(encoding="utf-8"))
    [rec] = [r for r in doc["transcripts"] if r["path"] == f"{s.id}.jsonl"]
    assert (rec["flags"]["raced"], rec["answered"]) == (False, 1)
