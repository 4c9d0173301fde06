"""Each transcript layout the readers accept, read through campaign discovery."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from builders import EXPLORE, Run, Session, response

from pytest_explore_suff import NotATranscript, Verdict, discover, judge

SID = "11111111-2222-4333-8444-555555555555"


def judge_campaign(root: Path) -> dict[str, tuple[Verdict, list[str]]]:
    """Discover a campaign and judge every transcript: {path: (verdict, warnings)}."""
    out = {}
    for t in discover(str(root)).transcripts:
        verdict, collector = judge(t.kind, t.files)
        out[t.path] = (verdict, collector.warnings)
    return out


def explore_block(query: str = "q") -> dict:
    return Run.use(EXPLORE, query=query)


# --- headless stream-json -------------------------------------------------------------


def test_turn_files_are_read_in_numeric_order_as_one_transcript(tmp_path):
    turns = [Run() for _ in range(11)]
    turns[0].step(turns[0].explore("first"), response(["lib/a.js"]))
    turns[8].step(turns[8].explore("ninth"), response(["lib/b.js"]))
    turns[9].step(turns[9].use("Read", file_path="lib/b.js"))
    turns[0].write(tmp_path / "run-new.jsonl")
    for k, run in enumerate(turns[1:], 2):
        run.write(tmp_path / f"run-new.t{k}.jsonl")
    [transcript] = discover(str(tmp_path)).transcripts
    assert [Path(f).name for f in transcript.files][-3:] == [
        "run-new.t9.jsonl",
        "run-new.t10.jsonl",
        "run-new.t11.jsonl",
    ]
    verdict, _ = judge(transcript.kind, transcript.files)
    assert [c.next for c in verdict.calls] == ["codegraph_explore", "Read b.js"]


def test_turn_files_without_their_first_turn_still_make_a_transcript(tmp_path):
    run = Run()
    run.step(run.explore(), response(["lib/a.js"]))
    run.write(tmp_path / "run-new.t2.jsonl")
    [transcript] = discover(str(tmp_path)).transcripts
    assert transcript.path == "run-new.t2.jsonl"
    assert any("first turn" in n for n in transcript.notes)


def test_subagent_events_are_threads_keyed_by_the_spawning_call(tmp_path):
    run = Run()
    task = run.use("Task", prompt="p", description="d")
    run.message(task)
    run.step(run.explore("inside"), response(["lib/a.js"]), parent=task["id"])
    run.result(task, "done")
    run.write(tmp_path / "run-x.jsonl")
    [(verdict, _)] = judge_campaign(tmp_path).values()
    assert [(c.thread, c.bucket) for c in verdict.calls] == [(task["id"], "sufficient")]


# --- interactive session logs -----------------------------------------------------------


def test_an_inline_sidechain_links_to_the_task_whose_prompt_it_received(tmp_path):
    s = Session(SID)
    s.prompt("question")
    s.step(explore_block(), response(["lib/a.js"]))
    first = Run.use("Task", prompt="look at b", description="b")
    second = Run.use("Task", prompt="look at c", description="c")
    s.message(first, second)
    # The sidechain for the SECOND task comes first: the prompt decides, not the order.
    s.prompt("look at c", sidechain=True, root=True)
    s.step(Run.use("Grep", pattern="c"), sidechain=True)
    s.prompt("look at b", sidechain=True, root=True)
    s.step(Run.use("Read", file_path="/r/lib/a.js"), sidechain=True)
    s.result(first, "b done", sidechain=False)
    s.result(second, "c done", sidechain=False)
    s.write(tmp_path / f"{SID}.jsonl")
    [(verdict, warnings)] = judge_campaign(tmp_path).values()
    assert verdict.calls[0].next == "Task → Read a.js"
    assert verdict.calls[0].bucket == "read_returned"
    assert warnings == []


def test_inline_sidechains_whose_prompt_matches_nothing_link_by_order(tmp_path):
    s = Session(SID)
    s.step(explore_block(), response(["lib/a.js"]))
    task = Run.use("Agent", prompt="the real prompt", description="d")
    s.message(task)
    s.prompt("a reworded prompt", sidechain=True, root=True)
    s.step(Run.use("Glob", pattern="**/*.js"), sidechain=True)
    s.result(task, "done", sidechain=False)
    s.write(tmp_path / f"{SID}.jsonl")
    [(verdict, _)] = judge_campaign(tmp_path).values()
    assert (verdict.calls[0].bucket, verdict.calls[0].next) == ("search", "Agent → Glob")


def test_a_flat_agent_file_links_through_the_tool_results_agent_id(tmp_path):
    s = Session(SID)
    s.step(explore_block(), response(["lib/a.js"]))
    task = Run.use("Task", prompt="p", description="d")
    s.message(task)
    s.result(task, "done", toolUseResult={"agentId": "abc123", "status": "completed"})
    s.write(tmp_path / f"{SID}.jsonl")
    sub = Session(SID, sidechain=True, agent_id="abc123")
    sub.prompt("p")
    sub.step(Run.use("Bash", command="grep -rn x lib/"))
    sub.write(tmp_path / "agent-abc123.jsonl")
    result = judge_campaign(tmp_path)
    assert list(result) == [f"{SID}.jsonl"]
    verdict, warnings = result[f"{SID}.jsonl"]
    assert verdict.calls[0].next == "Task → Bash search"
    assert warnings == []


def write_nested_session(root: Path, meta: object) -> Path:
    s = Session(SID)
    s.step(explore_block(), response(["lib/a.js"]))
    agent = Run.use("Agent", prompt="p", description="d")
    agent["id"] = "toolu_spawn"
    s.message(agent)
    s.result(agent, "done", toolUseResult={"agentId": "def456"})
    s.write(root / f"{SID}.jsonl")
    sub = Session(SID, sidechain=True, agent_id="def456")
    sub.prompt("p")
    sub.step(Run.use("Read", file_path="lib/zz.js"))
    folder = root / SID / "subagents"
    sub.write(folder / "agent-def456.jsonl")
    if meta is not None:
        (folder / "agent-def456.meta.json").write_text(meta if isinstance(meta, str) else json.dumps(meta))
    return folder


@pytest.mark.parametrize(
    "meta",
    [{"toolUseId": "toolu_spawn", "agentType": "general-purpose"}, {"agentType": "x"}, None],
    ids=["meta-tool-use-id", "meta-without-id", "no-meta"],
)
def test_a_subagents_folder_file_links_by_meta_then_by_agent_id(tmp_path, meta):
    write_nested_session(tmp_path, meta)
    [(verdict, warnings)] = judge_campaign(tmp_path).values()
    assert verdict.calls[0].next == "Agent → Read zz.js"
    assert warnings == []


def test_a_garbage_meta_file_is_a_warning_and_the_agent_id_still_links(tmp_path):
    write_nested_session(tmp_path, "{not json")
    [(verdict, warnings)] = judge_campaign(tmp_path).values()
    assert verdict.calls[0].next == "Agent → Read zz.js"
    assert any("meta.json: unreadable" in w for w in warnings)


def test_an_unlinkable_subagent_is_judged_alone_with_a_warning(tmp_path):
    s = Session(SID)
    s.step(explore_block(), response(["lib/a.js"]))
    s.write(tmp_path / f"{SID}.jsonl")
    sub = Session(SID, sidechain=True, agent_id="zzz")
    sub.prompt("p")
    sub.step(explore_block("orphan q"), response(["lib/q.js"]))
    sub.write(tmp_path / SID / "subagents" / "agent-zzz.jsonl")
    [(verdict, warnings)] = judge_campaign(tmp_path).values()
    assert [c.thread for c in verdict.calls] == ["main", "agent-zzz"]
    assert any("could not be linked" in w for w in warnings)


def test_compaction_artifacts_and_warmup_subagents_are_skipped(tmp_path):
    s = Session(SID)
    s.step(explore_block(), response(["lib/a.js"]))
    s.write(tmp_path / f"{SID}.jsonl")
    warm = Session(SID, sidechain=True, agent_id="w1")
    warm.prompt("Warmup")
    warm.step(explore_block("warm"), response(["lib/w.js"]))
    warm.write(tmp_path / SID / "subagents" / "agent-w1.jsonl")
    compact = Session(SID, sidechain=True)
    compact.step(explore_block("compact"), response(["lib/c.js"]))
    compact.write(tmp_path / "agent-acompact-1.jsonl")
    campaign = discover(str(tmp_path))
    assert {
        "path": "agent-acompact-1.jsonl",
        "reason": "compaction artifact (agent-acompact*)",
    } in campaign.ignored
    [(verdict, warnings)] = judge_campaign(tmp_path).values()
    assert [c.query for c in verdict.calls] == ["q"]
    assert warnings == []


def test_replayed_lines_with_the_same_uuid_are_read_once(tmp_path):
    s = Session(SID)
    s.step(explore_block(), response(["lib/a.js"]))
    s.step(Run.use("Read", file_path="lib/a.js"))
    s.lines += [dict(line) for line in s.lines]  # a resumed session replays everything
    s.write(tmp_path / f"{SID}.jsonl")
    [(verdict, _)] = judge_campaign(tmp_path).values()
    assert (verdict.answered, verdict.calls[0].bucket) == (1, "read_returned")


def test_a_tool_result_written_before_its_call_is_still_matched(tmp_path):
    run = Run()
    explore = run.explore()
    run.result(explore, response(["lib/a.js"]))  # out of causal order
    run.message(explore)
    run.step(run.use("Read", file_path="lib/a.js"))
    run.write(tmp_path / "run-x.jsonl")
    [(verdict, _)] = judge_campaign(tmp_path).values()
    assert (verdict.answered, verdict.errored, verdict.calls[0].bucket) == (1, 0, "read_returned")


def test_a_file_with_no_agent_events_is_not_a_transcript(tmp_path):
    path = tmp_path / "run-x.jsonl"
    path.write_text('{"id": 1}\n{"id": 2}\n')
    with pytest.raises(NotATranscript, match="none of its 2 line"):
        judge("stream-json", [path])
