"""Lines and calls a Claude Code log holds twice, or in another file (issue #29): M9's
replay rule, sessions copied into a new file by ``--resume``/``--fork-session``, new
work sent to a running subagent, and compressed sidecars."""

from __future__ import annotations

import copy
import gzip
import json
import tarfile
from pathlib import Path

import pytest
from builders import EXPLORE, Run, response
from real_shapes import (
    AGENT17,
    FORK_SID,
    NEW_SID,
    OLD_SID,
    SID,
    RealSession,
    delegating_parent,
    resumed_pair,
    split_message_run,
    subagent,
    write_subagent,
)

from pytest_explore_suff import Collector, Transcript, Verdict, discover, judge
from pytest_explore_suff.metrics import measure


def judge_dir(root: Path) -> tuple[Verdict, Collector]:
    """The one transcript campaign discovery finds under ``root``, judged."""
    [t] = discover(str(root)).transcripts
    return judge(t.kind, t.files, archive=t.archive)


def test_lines_sharing_a_uuid_with_different_content_are_all_read(tmp_path: Path) -> None:
    """M9: one uuid on three lines (text, explore, Read) is not a replay: the explore is
    judged, the Read is its concurrent access and its result is a read's."""
    run, explore, _ = split_message_run()
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


FOLLOW_UP = "now read where send sets it"


@pytest.mark.parametrize(
    "how",
    [
        pytest.param({"name": "Task", "resume": AGENT17, "prompt": FOLLOW_UP}, id="Task-resume"),
        pytest.param({"name": "SendMessage", "to": AGENT17, "message": FOLLOW_UP}, id="SendMessage"),
    ],
)
def test_new_work_sent_to_a_subagent_is_judged_by_what_it_did_next(
    tmp_path: Path, how: dict[str, str]
) -> None:
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
    write_subagent(tmp_path, _resumed_subagent("find where send sets ETag", FOLLOW_UP), "subagents")
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


# --- a session resumed or forked into a new file -------------------------------------------------


def _records(root: Path) -> dict[str, tuple[Transcript, Verdict, Collector]]:
    out = {}
    for t in discover(str(root)).transcripts:
        verdict, collector = judge(t.kind, t.files, archive=t.archive, copies=dict(t.copies))
        out[t.path] = (t, verdict, collector)
    return out


def _copied_lines(session: RealSession, sid: str) -> int:
    return sum(1 for line in session.lines if line.get("sessionId") == sid)


def test_a_copied_session_is_judged_once_in_the_session_that_made_it(tmp_path: Path) -> None:
    """Both files in the campaign: the copy's calls are the old session's (judged there, its
    Agent call linked to its subagent there); the new file judges its own turn, for which the
    copied explore's returned files are "earlier"; the record says which lines were a copy."""
    old, sub, new, calls = resumed_pair()
    project = tmp_path / "-r"
    old.write(project / f"{OLD_SID}.jsonl")
    write_subagent(project, sub, "subagents")
    new.write(project / f"{NEW_SID}.jsonl")
    recs = _records(tmp_path)
    (t_old, v_old, c_old), (t_new, v_new, c_new) = recs[f"-r/{OLD_SID}.jsonl"], recs[f"-r/{NEW_SID}.jsonl"]
    assert t_old.rel_files == (f"-r/{OLD_SID}.jsonl", f"-r/{OLD_SID}/subagents/agent-{AGENT17}.jsonl")
    assert [(c.id, c.bucket, c.next) for c in v_old.calls] == [
        (calls["first"]["id"], "search", "Agent → Grep"),
        (calls["second"]["id"], "read_returned", "Read utils.js"),
    ]
    assert [(c.id, c.bucket, c.next) for c in v_new.calls] == [
        (calls["third"]["id"], "read_returned", "Read utils.js (returned by an earlier explore)")
    ]
    assert (v_new.answered, v_new.errored, c_new.tools["explore"], c_new.tools["read"]) == (1, 0, 1, 1)
    assert t_new.copies == ((OLD_SID, f"-r/{OLD_SID}.jsonl"),)
    lines = _copied_lines(old, OLD_SID)
    assert c_new.copies == {
        OLD_SID: {"session": OLD_SID, "judged_in": f"-r/{OLD_SID}.jsonl", "lines": lines, "first_line": 1,
                  "last_line": len(old.lines), "calls": 4}
    }  # fmt: skip
    assert c_new.warnings == [
        f"lines 1-{len(old.lines)} ({lines} lines, 4 calls) are a copy of session {OLD_SID} (a resumed or "
        f"forked session): its calls are judged in -r/{OLD_SID}.jsonl; this session's window (occupancy) "
        "still holds them"
    ]
    assert c_old.copies == {} and c_old.warnings == []
    # The copy is in the new session's window: its requests and results count there (docs/rules.md).
    o_new, o_old = (measure(v, c)["occupancy"] for v, c in ((v_new, c_new), (v_old, c_old)))
    assert o_new["turns"] == o_old["turns"] + 3 and o_new["ctx_base"] == o_old["ctx_base"] == 1000
    assert o_new["results"]["tool"] == 3 and o_new["results"]["read"] == 2
    # Allocation: only the calls judged here.
    assert [a["id"] for a in measure(v_new, c_new)["allocation"]["calls"]] == [calls["third"]["id"]]


def test_a_copy_whose_session_is_not_in_the_campaign_is_judged_in_the_new_file(tmp_path: Path) -> None:
    """The old session's file is gone: the copy's lines are judged in the new file, and the
    copied Agent call links to its subagent under ``<old-session>/subagents/``."""
    old, sub, new, calls = resumed_pair()
    project = tmp_path / "-r"
    write_subagent(project, sub, "subagents")
    new.write(project / f"{NEW_SID}.jsonl")
    [(t, verdict, collector)] = _records(tmp_path).values()
    assert t.rel_files == (f"-r/{NEW_SID}.jsonl", f"-r/{OLD_SID}/subagents/agent-{AGENT17}.jsonl")
    assert [(c.id, c.bucket, c.next) for c in verdict.calls] == [
        (calls["first"]["id"], "search", "Agent → Grep"),
        (calls["second"]["id"], "read_returned", "Read utils.js"),
        (calls["third"]["id"], "read_returned", "Read utils.js (returned by an earlier explore)"),
    ]
    assert collector.tools["explore"] == 3
    assert t.copies == ((OLD_SID, ""),)
    [copied] = collector.copies.values()
    assert (copied["judged_in"], copied["calls"]) == (None, 4)
    assert collector.warnings == [
        f"lines 1-{len(old.lines)} ({_copied_lines(old, OLD_SID)} lines, 4 calls) are a copy of session "
        f"{OLD_SID} (a resumed or forked session), which is not in the campaign: judged here"
    ]


def test_two_forks_of_an_absent_session_judge_its_calls_once(tmp_path: Path) -> None:
    """Two new files copy one session that is not in the campaign: the first (by path) judges
    the copied calls and holds the subagent; the other judges only its own turn."""
    old, sub, new, calls = resumed_pair()
    project = tmp_path / "-r"
    write_subagent(project, sub, "subagents")
    new.write(project / f"{NEW_SID}.jsonl")
    fork = RealSession(FORK_SID)
    fork.lines = [copy.deepcopy(line) for line in old.lines]
    fork.parent = old.parent
    fork.prompt("another way")
    other = Run.use(EXPLORE, query="strong etag")
    fork.step(other, response(["lib/strong.js"]))
    fork.write(project / f"{FORK_SID}.jsonl")
    recs = _records(tmp_path)
    assert sorted(recs) == [f"-r/{FORK_SID}.jsonl", f"-r/{NEW_SID}.jsonl"]  # "c0c0..." < "f1e2..."
    _, v_fork, _ = recs[f"-r/{FORK_SID}.jsonl"]
    _, v_new, c_new = recs[f"-r/{NEW_SID}.jsonl"]
    assert [c.id for c in v_fork.calls] == [calls["first"]["id"], calls["second"]["id"], other["id"]]
    assert v_fork.calls[0].next == "Agent → Grep"
    assert [c.id for c in v_new.calls] == [calls["third"]["id"]]
    assert c_new.copies[OLD_SID]["judged_in"] == f"-r/{FORK_SID}.jsonl"


# --- every pytest mode -------------------------------------------------------------------------


def _all_shapes(root: Path) -> Path:
    """A campaign with each shape of issue #29's Claude part, each in its own folder."""
    run, _, _ = split_message_run()
    run.write(root / "old-stream" / "run-old.jsonl")
    old, sub, new, _ = resumed_pair()
    old.write(root / "both" / f"{OLD_SID}.jsonl")
    write_subagent(root / "both", sub, "subagents")
    new.write(root / "both" / f"{NEW_SID}.jsonl")
    write_subagent(root / "alone", sub, "subagents")
    new.write(root / "alone" / f"{NEW_SID}.jsonl")
    parent, agent = delegating_parent()
    parent.result(agent, "done", toolUseResult={"agentId": AGENT17, "status": "completed"})
    parent.step(Run.use(EXPLORE, query="who sets ETag"), response(["lib/response.js"]))
    parent.message(Run.use("SendMessage", to=AGENT17, message="now read it"))
    parent.write(root / "send" / f"{SID}.jsonl")
    write_subagent(root / "send", _resumed_subagent("find where send sets ETag", "now read it"), "subagents")
    gz = root / "gz"
    parent, agent = delegating_parent()
    parent.write(gz / f"{SID}.jsonl")
    sub2 = subagent(AGENT17, "another prompt", (Run.use("Grep", pattern="etag"), "lib/x.js"))
    write_subagent(gz, sub2, "subagents", meta={"agentType": "Explore", "toolUseId": agent["id"]})
    _gzip_tree(gz)
    return root


def test_each_call_is_judged_once_and_xdist_writes_the_same_report(pytester: pytest.Pytester) -> None:
    campaign = _all_shapes(pytester.path / "campaign")
    out = {}
    for name, args in (("serial", ()), ("xdist", ("-n", "2"))):
        json_at = f"--explore-suff-json={name}.json"
        result = pytester.runpytest(f"--explore-suff={campaign}", json_at, "-W", "always::UserWarning", *args)
        result.assert_outcomes(passed=6)
        out[name] = (pytester.path / f"{name}.json").read_bytes()
    assert out["serial"] == out["xdist"]
    doc = json.loads(out["serial"])
    recs = {r["path"]: r for r in doc["transcripts"]}
    for folder in ("both", "alone"):  # one session and its copy: no call judged twice
        ids = [c["id"] for r in doc["transcripts"] if r["path"].startswith(folder) for c in r["calls"]]
        assert len(ids) == len(set(ids)) == 3
    assert recs["old-stream/run-old.jsonl"]["answered"] == 1
    assert [c["next"] for c in recs[f"both/{OLD_SID}.jsonl"]["calls"]] == ["Agent → Grep", "Read utils.js"]
    assert [c["next"] for c in recs[f"both/{NEW_SID}.jsonl"]["calls"]] == [
        "Read utils.js (returned by an earlier explore)"
    ]
    assert [(c["session"], c["judged_in"], c["calls"]) for c in recs[f"both/{NEW_SID}.jsonl"]["copies"]] == [
        (OLD_SID, f"both/{OLD_SID}.jsonl", 4)
    ]
    assert recs[f"both/{OLD_SID}.jsonl"]["copies"] == []
    assert recs[f"alone/{NEW_SID}.jsonl"]["calls"][0]["next"] == "Agent → Grep"
    assert recs[f"alone/{NEW_SID}.jsonl"]["copies"][0]["judged_in"] is None
    assert [c["next"] for c in recs[f"send/{SID}.jsonl"]["calls"]] == [
        "Agent → Grep",
        "SendMessage → Read response.js",
    ]
    assert recs[f"gz/{SID}.jsonl.gz"]["calls"][0]["next"] == "Agent → Grep"
