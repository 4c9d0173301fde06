"""Lines and calls a Claude Code log holds twice, or in another file (issue #29): M9's
replay rule, sessions copied into a new file by ``--resume``/``--fork-session``, new
work sent to a running subagent, and compressed sidecars."""

from __future__ import annotations

import copy
import gzip
import tarfile
from pathlib import Path

import pytest
from builders import EXPLORE, Run, response
from real_shapes import (
    AGENT17,
    SID,
    RealSession,
    delegating_parent,
    split_message_run,
    subagent,
    write_subagent,
)

from pytest_explore_suff import Collector, Verdict, discover, judge
from pytest_explore_suff.report import measure


def judge_dir(root: Path) -> tuple[Verdict, Collector]:
    """The one transcript campaign discovery finds under ``root``, judged."""
    [t] = discover(str(root)).transcripts
    return judge(t.kind, t.files, archive=t.archive)


def test_lines_sharing_a_uuid_with_different_content_are_all_read(tmp_path: Path) -> None:
    """M9: one uuid on three lines (text, explore, Read) is not a replay: the explore is
    judged, the Read is its concurrent access and its result is a read's."""
    run, explore, concurrent = split_message_run()
    run.write(tmp_path / "run-old.jsonl")
    [t] = discover(str(tmp_path)).transcripts
    verdict, collector = judge(t.kind, t.files)
    [call] = verdict.calls
    assert (call.id, call.bucket, call.next) == (explore["id"], "read_returned", "Read a.js")
    assert (verdict.answered, verdict.errored, verdict.concurrent) == (1, 0, 1)
    assert collector.tools["read"] == 2 and collector.tools["explore"] == 1
    o = measure(verdict, collector)["occupancy"]
    assert o["results"]["read"] == 2 and o["results"]["other"] == 0
    assert o["chars"]["read"] == 400 + len("function send() {}")


def test_a_real_replay_of_a_split_message_still_counts_once(tmp_path: Path) -> None:
    """Same uuid and same content is a replay (M9): replaying all three lines of the split
    message and the results changes neither verdicts nor metrics."""
    run, _, _ = split_message_run()
    run.write(tmp_path / "once" / "run-old.jsonl")
    replayed = copy.deepcopy(run)
    end = replayed.events.pop()
    replayed.events += copy.deepcopy(run.events[1:6])  # the three lines and both results again
    replayed.events.append(end)
    replayed.write(tmp_path / "twice" / "run-old.jsonl")
    out = []
    for folder in ("once", "twice"):
        [t] = discover(str(tmp_path / folder)).transcripts
        verdict, collector = judge(t.kind, t.files)
        out.append((verdict.to_dict(), collector.tools, measure(verdict, collector)))
    assert out[0] == out[1]
    assert out[0][0]["answered"] == 1


# --- compressed sidecars ------------------------------------------------------------------------


def _gzip_tree(root: Path) -> None:
    """What ``gzip -r root`` does: every file replaced by ``<name>.gz``."""
    for path in sorted(p for p in root.rglob("*") if p.is_file()):
        path.with_name(path.name + ".gz").write_bytes(gzip.compress(path.read_bytes()))
        path.unlink()


@pytest.mark.parametrize("archived", [False, True], ids=["folder", "tar.gz"])
def test_a_gzipped_meta_sidecar_is_read_like_the_plain_one(tmp_path: Path, archived: bool) -> None:
    """A campaign gzipped with ``gzip -r``: the subagent's ``.meta.json.gz`` links it by its
    ``toolUseId`` (nothing else does: no result, no progress line, another prompt)."""
    project = tmp_path / "project"
    parent, agent = delegating_parent()
    parent.write(project / f"{SID}.jsonl")
    sub = subagent(AGENT17, "a prompt the call does not carry", (Run.use("Grep", pattern="etag"), "lib/x.js"))
    write_subagent(project, sub, "subagents", meta={"agentType": "Explore", "toolUseId": agent["id"]})
    _gzip_tree(project)
    root = project
    if archived:
        root = tmp_path / "campaign.tar.gz"
        with tarfile.open(root, "w:gz") as tar:
            tar.add(project, arcname="project")
    [t] = discover(str(root)).transcripts
    meta = f"{SID}/subagents/agent-{AGENT17}.meta.json.gz"
    assert t.rel_files[-1] == meta
    verdict, collector = judge(t.kind, t.files, archive=t.archive)
    [call] = verdict.calls
    assert (call.bucket, call.next) == ("search", "Agent → Grep")
    assert collector.warnings == []


# --- new work for a running subagent (D9 for Claude Code) ------------------------------------------


def _resumed_subagent(prompt: str, follow_up: str) -> RealSession:
    """A subagent file whose agent did its first task (a Grep), then was given more work
    (``follow_up``, a new user prompt in its own file) and Read a file for it."""
    sub = subagent(AGENT17, prompt, (Run.use("Grep", pattern="etag"), "lib/utils.js"))
    sub.message({"type": "text", "text": "found it"})
    sub.prompt(follow_up)
    sub.step(Run.use("Read", file_path="/r/lib/response.js"), "function send() {}")
    return sub


@pytest.mark.parametrize(
    "how",
    [
        pytest.param({"name": "Task", "resume": AGENT17, "prompt": "now read where send sets it"}, id="Task-resume"),
        pytest.param({"name": "SendMessage", "to": AGENT17, "message": "now read where send sets it"}, id="SendMessage"),
    ],
)
def test_new_work_sent_to_a_subagent_is_judged_by_its_next_action(tmp_path: Path, how: dict[str, str]) -> None:
    """SendMessage / Task(resume=...) to a subagent is a delegation (D9, as Codex send_input):
    an explore right before it is judged by what the subagent did after that message."""
    parent, agent = delegating_parent()
    parent.result(agent, "done", toolUseResult={"agentId": AGENT17, "status": "completed"})
    parent.step(Run.use(EXPLORE, query="who sets ETag"), response(["lib/response.js"]))
    name, fields = how["name"], {k: v for k, v in how.items() if k != "name"}
    send = Run.use(name, **fields)
    parent.message(send)
    parent.result(send, "done")
    parent.write(tmp_path / f"{SID}.jsonl")
    write_subagent(tmp_path, _resumed_subagent("find where send sets ETag", how.get("prompt") or how["message"]),
                   "subagents")  # fmt: skip
    verdict, collector = judge_dir(tmp_path)
    first, second = verdict.calls
    assert (first.bucket, first.next) == ("search", "Agent → Grep")
    assert (second.bucket, second.next) == ("read_returned", f"{name} → Read response.js")
    assert collector.warnings == []


def test_new_work_for_a_subagent_that_is_not_there_is_moved_on_with_a_warning(tmp_path: Path) -> None:
    parent, agent = delegating_parent()
    parent.result(agent, "done", toolUseResult={"agentId": AGENT17, "status": "completed"})
    parent.step(Run.use(EXPLORE, query="who sets ETag"), response(["lib/response.js"]))
    send = Run.use("SendMessage", to="someone-else", message="go on")
    parent.message(send)
    parent.write(tmp_path / f"{SID}.jsonl")
    write_subagent(tmp_path, _resumed_subagent("find where send sets ETag", "more"), "subagents")
    verdict, collector = judge_dir(tmp_path)
    assert (verdict.calls[1].bucket, verdict.calls[1].next) == ("sufficient", "SendMessage")
    assert collector.warnings == [
        f"SendMessage call {send['id']}: no subagent someone-else in the transcript; judged as moved on"
    ]
