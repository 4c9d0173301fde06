"""Amp threads, Cline and Roo Code tasks, Continue sessions, OpenHands sessions, OpenCode
and Crush databases (transcript-formats.md, section 5).

The logs are written from the formats page by ``agent_shapes.py``.
"""

from __future__ import annotations

import json
import tarfile
from pathlib import Path
from typing import Any

import pytest
from agent_shapes import (
    AmpThread,
    ClineTask,
    ContinueSession,
    CrushSession,
    OpenCodeSession,
    OpenHandsConversation,
    OpenHandsSession,
    explore_text,
    write_crush_db,
    write_opencode_db,
    write_opencode_storage,
)
from helpers import report

from pytest_explore_suff import TranscriptError, judge
from pytest_explore_suff.campaign import discover
from pytest_explore_suff.metrics import measure


def labels(verdict: Any) -> list[tuple[str, str]]:
    return [(c.bucket, c.next) for c in verdict.calls]


# -- Amp ------------------------------------------------------------------------------------


def amp(thread: AmpThread, tmp_path: Path) -> Any:
    return judge("amp", [thread.write(tmp_path / "threads" / f"{thread.id}.json")])


def test_an_amp_thread_is_found_as_amp(tmp_path):
    t = AmpThread()
    t.user("where is f?")
    t.step(t.explore(), results=[explore_text(["lib/a.py"])])
    t.finish()
    t.write(tmp_path / "threads" / f"{t.id}.json")
    (tmp_path / "threads" / "settings.json").write_text('{"id": "x", "messages": []}')
    campaign = discover(str(tmp_path))
    assert [(t.path, t.kind, t.agent, t.arm) for t in campaign.transcripts] == [
        (f"threads/{t.id}.json", "amp", "amp", "amp")
    ]
    assert [d["path"] for d in campaign.ignored] == ["threads/settings.json"]


def test_amp_tools_map_onto_the_contracts_notions(tmp_path):
    t = AmpThread()
    t.user("where is f?")
    t.step(t.explore("a"), results=[explore_text(["lib/a.py"], ["lib/b.py"])])
    t.step(t.call("todo_write", todos=[]))  # bookkeeping: transparent
    t.step(t.call("Read", path="/work/t/lib/b.py"))
    t.step(t.explore("b"), results=[explore_text(["lib/a.py"])])
    t.step(t.call("Grep", pattern="f(", path="lib"))
    t.step(t.explore("c"), results=[explore_text(["lib/a.py"])])
    t.step(t.call("Bash", cmd="sed -n '1,40p' lib/a.py"))
    t.step(t.explore("d"), results=[("error", "MCP error -32603: boom")])
    t.step(t.explore("e"), results=[explore_text(["lib/a.py"])])
    t.step(t.call("Task", prompt="find the callers of f", description="callers"))
    t.step(t.explore("f"), results=[explore_text(["lib/a.py"])])
    t.step(t.call("edit_file", path="lib/a.py", old_str="a", new_str="b"))
    t.finish("f is in `lib/a.py`")
    verdict, collector = amp(t, tmp_path)
    assert labels(verdict) == [
        ("read_missed", "Read b.py (named, not returned)"),
        ("search", "Grep"),
        ("read_returned", "Bash Read a.py"),
        # the thread holds no step of the subagent: judged as a delegation that ran no tool
        ("sufficient", "Task"),
        ("sufficient", "edit_file"),
    ]
    assert verdict.errored == 1
    assert collector.tools == {"explore": 6, "read": 1, "search": 1, "bash": 1, "other": 3}
    assert collector.answer() == "f is in `lib/a.py`"
    assert collector.warnings == []


def test_amp_calls_of_one_message_are_one_message_and_a_cancelled_call_is_an_error(tmp_path):
    t = AmpThread()
    t.step(t.explore(), t.call("Read", path="lib/z.py"), results=[explore_text(["lib/a.py"]), "..."])
    t.step(t.call("create_file", path="notes.md", content="x"))
    t.step(t.explore("again"), results=[None])
    verdict, _ = amp(t, tmp_path)
    assert labels(verdict) == [("sufficient", "create_file")]
    assert (verdict.concurrent, verdict.errored) == (1, 1)


def test_amp_occupancy_is_measured_from_each_requests_usage(tmp_path):
    t = AmpThread()
    t.user("where is f?")
    t.step(t.explore(), results=[explore_text(["lib/a.py"]) + "x" * 3000], prompt_tokens=2000)
    t.step(t.call("Read", path="lib/a.py"), results=["y" * 1500], prompt_tokens=3300)
    t.finish("in lib/a.py")
    verdict, collector = amp(t, tmp_path)
    m = measure(verdict, collector)
    o = m["occupancy"]
    # the window: input + cache creation + cache read, of each assistant message
    assert (o["ctx_base"], o["turns"], o["ctx_final"]) == (2000, 3, t.tokens)
    assert o["chars"]["tool"] == len(explore_text(["lib/a.py"])) + 3000
    assert o["chars"]["read"] == 1500
    assert m["allocation"]["has_answer"] is True


def test_a_json_document_with_a_t_id_and_no_messages_is_not_a_transcript(tmp_path):
    path = tmp_path / "T-1.json"
    path.write_text('{"id": "T-1", "title": "x"}')
    with pytest.raises(Exception, match="no Amp thread messages"):
        judge("amp", [path])


# -- Cline and Roo Code ------------------------------------------------------------------------


def cline(task: ClineTask, tmp_path: Path, files: tuple[str, ...] = ("api", "ui")) -> Any:
    folder = task.write(tmp_path / "tasks" / task.task_id, files)
    return judge("cline", sorted(str(p) for p in folder.iterdir()))


def cline_run(form: str) -> ClineTask:
    t = ClineTask(form)
    t.user("where is f?")
    t.step(t.explore("a"), results=[explore_text(["lib/a.py"], ["lib/b.py"])], text="Let me look.")
    t.step(t.call("update_todo_list", todos="[ ] find f"))  # bookkeeping: transparent
    t.step(t.call("read_file", path="lib/b.py"))
    t.step(t.explore("b"), results=[explore_text(["lib/a.py"])])
    t.step(t.call("search_files", path="lib", regex="f\\("))
    t.step(t.explore("c"), results=[explore_text(["lib/a.py"])])
    t.step(t.call("execute_command", command="cat lib/a.py"))
    t.step(t.explore("d"), results=[("error", "MCP error -32603: boom")])
    t.step(t.explore("e"), results=[explore_text(["lib/a.py"])])
    t.step(t.call("list_files", path="lib"))
    t.step(t.explore("f"), results=[explore_text(["lib/a.py"])])
    t.finish("f is in `lib/a.py`")
    return t


CLINE_LABELS = [
    ("read_missed", "Read b.py (named, not returned)"),
    ("search", "Grep"),
    ("read_returned", "Bash Read a.py"),
    ("search", "Glob"),
    ("sufficient", "(final answer)"),
]


def test_a_cline_task_folder_is_one_transcript(tmp_path):
    t = cline_run("native")
    t.write(tmp_path / "tasks" / t.task_id)
    ClineTask(task_id="17").write(tmp_path / "tasks" / "17", ("ui",))  # an empty UI log: not a task
    campaign = discover(str(tmp_path))
    [found] = campaign.transcripts
    assert (found.path, found.kind, found.agent, found.arm, found.group) == (
        f"tasks/{t.task_id}",
        "cline",
        "cline",
        "cline",
        "tasks",
    )
    assert found.rel_files == tuple(
        f"tasks/{t.task_id}/{n}"
        for n in ("api_conversation_history.json", "task_metadata.json", "ui_messages.json")
    )
    assert {d["path"] for d in campaign.ignored} == {
        "tasks/17/ui_messages.json",
        "tasks/17/task_metadata.json",
    }


@pytest.mark.parametrize("form", ["native", "xml"])
def test_cline_tools_map_onto_the_contracts_notions_in_both_forms(tmp_path, form):
    verdict, collector = cline(cline_run(form), tmp_path)
    assert labels(verdict) == CLINE_LABELS
    assert verdict.errored == 1
    assert collector.tools == {"explore": 6, "read": 1, "search": 2, "bash": 1, "other": 1}
    assert {a.name for a in collector.threads["main"]} >= {"mcp__codegraph__codegraph_explore"}
    assert collector.answer() == "f is in `lib/a.py`"  # attempt_completion's result


def test_the_ui_log_alone_pairs_results_with_calls_by_order(tmp_path):
    verdict, collector = cline(cline_run("native"), tmp_path, ("ui",))
    assert labels(verdict) == CLINE_LABELS
    assert verdict.errored == 1  # an ``error`` in place of the MCP server's response
    assert collector.answer() == "f is in `lib/a.py`"


@pytest.mark.parametrize("files", [("api", "ui"), ("ui",)])
def test_cline_occupancy_is_measured_from_the_ui_logs_requests(tmp_path, files):
    t = ClineTask()
    t.user("where is f?")
    t.step(t.explore(), results=[explore_text(["lib/a.py"]) + "x" * 3000], prompt_tokens=2000)
    t.step(t.call("read_file", path="lib/a.py"), results=["y" * 1500], prompt_tokens=3300)
    t.finish("in lib/a.py")
    verdict, collector = cline(t, tmp_path, files)
    o = measure(verdict, collector)["occupancy"]
    # each request's window: tokensIn + cacheWrites + cacheReads
    assert (o["ctx_base"], o["turns"], o["ctx_final"]) == (2000, 3, t.tokens)
    assert o["chars"]["tool"] == len(explore_text(["lib/a.py"])) + 3000


def test_a_cline_api_history_without_a_ui_log_has_no_occupancy_and_says_why(tmp_path):
    verdict, collector = cline(cline_run("native"), tmp_path, ("api",))
    assert labels(verdict) == CLINE_LABELS
    m = measure(verdict, collector)
    assert m["occupancy"] is None and "no token counts" in m["occupancy_reason"]
    assert m["allocation"]["has_answer"] is True


def test_a_cline_new_task_is_a_delegation_judged_as_a_subagent_that_left_no_step_here(tmp_path):
    t = ClineTask()
    t.step(t.explore(), results=[explore_text(["lib/a.py"])])
    t.step(t.call("new_task", mode="code", message="implement f"))
    verdict, _ = cline(t, tmp_path)
    assert labels(verdict) == [("sufficient", "new_task")]


# -- Continue ------------------------------------------------------------------------------------


def continue_run() -> ContinueSession:
    s = ContinueSession()
    s.user("where is f?")
    s.step(s.explore("a"), results=[explore_text(["lib/a.py"], ["lib/b.py"])])
    s.step(s.call("read_file", filepath="lib/b.py"))
    s.step(s.explore("b"), results=[explore_text(["lib/a.py"])])
    s.step(s.call("grep_search", query="f("))
    s.step(s.explore("c"), results=[explore_text(["lib/a.py"])])
    s.step(s.call("run_terminal_command", command="head -40 lib/a.py"))
    s.step(s.explore("d"), results=[("error", "MCP error -32603: boom")])
    s.step(s.explore("e"), results=[explore_text(["lib/a.py"])])
    s.step(s.call("ls", dirPath="lib"))
    s.step(s.explore("f"), results=[None])  # cancelled: an error
    s.step(s.call("edit_existing_file", filepath="lib/a.py", changes="..."))
    s.finish("f is in `lib/a.py`")
    return s


def test_a_continue_session_is_read_and_its_index_is_not_a_transcript(tmp_path):
    s = continue_run()
    s.write(tmp_path / "sessions" / f"{s.session_id}.json")
    index = [{"sessionId": s.session_id, "title": "where is f", "workspaceDirectory": "file:///work/t"}]
    (tmp_path / "sessions" / "sessions.json").write_text(json.dumps(index))
    campaign = discover(str(tmp_path))
    assert [(t.kind, t.agent, t.arm) for t in campaign.transcripts] == [("continue", "continue", "continue")]
    [ignored] = campaign.ignored
    assert ignored["path"] == "sessions/sessions.json" and "Continue's session index" in ignored["reason"]
    verdict, collector = judge("continue", [tmp_path / "sessions" / f"{s.session_id}.json"])
    assert labels(verdict) == [
        ("read_missed", "Read b.py (named, not returned)"),
        ("search", "Grep"),
        ("read_returned", "Bash Read a.py"),
        ("search", "Glob"),
    ]
    assert verdict.errored == 2
    assert collector.tools == {"explore": 6, "read": 1, "search": 2, "bash": 1, "other": 1}
    assert collector.answer() == "f is in `lib/a.py`"
    m = measure(verdict, collector)
    # Continue records no token figure: no occupancy, and the record says why
    assert m["occupancy"] is None and "no token counts" in m["occupancy_reason"]
    assert m["allocation"]["has_answer"] is True


def test_a_continue_call_answered_only_in_its_state_gets_that_output(tmp_path):
    s = ContinueSession()
    s.step(s.explore(), results=[explore_text(["lib/a.py"], ["lib/b.py"])])
    s.history = [h for h in s.history if h["message"]["role"] != "tool"]  # the output is in the state alone
    s.step(s.call("read_file", filepath="lib/b.py"))
    verdict, _ = judge("continue", [s.write(tmp_path / "s.json")])
    assert labels(verdict) == [("read_missed", "Read b.py (named, not returned)")]


# -- OpenHands -----------------------------------------------------------------------------------


def openhands(s: OpenHandsSession, tmp_path: Path) -> Any:
    folder = s.write(tmp_path / "sessions" / s.session_id)
    return judge("openhands", sorted(str(p) for p in folder.rglob("*.json")))


def test_an_openhands_session_folder_is_one_transcript(tmp_path):
    s = OpenHandsSession()
    s.user("where is f?")
    for n in range(11):  # events/10.json sorts before events/2.json: read in number order all the same
        s.step(s.call("think", thought=f"step {n}"))
    s.step(s.explore(), results=[explore_text(["lib/a.py"])])
    s.step(s.call("read", path="/work/t/lib/a.py"))
    s.finish("in lib/a.py")
    s.write(tmp_path / "sessions" / s.session_id)
    (tmp_path / "other").mkdir()
    (tmp_path / "other" / "metadata.json").write_text('{"name": "not a session"}')
    campaign = discover(str(tmp_path))
    [found] = campaign.transcripts
    assert (found.path, found.kind, found.agent, found.arm) == (
        f"sessions/{s.session_id}",
        "openhands",
        "openhands",
        "openhands",
    )
    assert len(found.rel_files) == len(s.events) + 1
    assert [d["path"] for d in campaign.ignored] == ["other/metadata.json"]
    verdict, collector = judge("openhands", found.files)
    assert labels(verdict) == [("read_returned", "Read a.py")]
    assert collector.answer() == "in lib/a.py"


def test_openhands_actions_map_onto_the_contracts_notions(tmp_path):
    s = OpenHandsSession()
    s.user("where is f?")
    s.step(s.explore("a"), results=[explore_text(["lib/a.py"], ["lib/b.py"])])
    s.step(s.call("task_tracking", command="plan", task_list=[]))  # bookkeeping
    s.step(s.call("edit", command="view", path="/work/t/lib/b.py"))  # a view is a read
    s.step(s.explore("b"), results=[explore_text(["lib/a.py"])])
    s.step(s.call("run", command="grep -rn 'def f' lib"))
    s.step(s.explore("c"), results=[explore_text(["lib/a.py"])])
    s.step(s.call("run", command="cat lib/a.py"))
    s.step(s.explore("d"), results=[("error", "MCP error -32603: boom")])
    s.step(s.explore("e"), results=[explore_text(["lib/a.py"])])
    s.step(s.call("delegate", agent="BrowsingAgent", inputs={"task": "look"}))
    s.step(s.explore("f"), s.call("read", path="lib/z.py"), results=[explore_text(["lib/a.py"]), "..."])
    s.step(s.call("edit", command="str_replace", path="lib/a.py", old_str="a", new_str="b"))
    s.finish("f is in `lib/a.py`")
    verdict, collector = openhands(s, tmp_path)
    assert labels(verdict) == [
        ("read_missed", "Read b.py (named, not returned)"),
        ("search", "Bash search"),
        ("read_returned", "Bash Read a.py"),
        ("sufficient", "delegate"),
        ("sufficient", "edit"),
    ]
    assert (verdict.errored, verdict.concurrent) == (1, 1)
    assert collector.tools == {"explore": 6, "read": 2, "search": 0, "bash": 2, "other": 3}
    assert collector.answer() == "f is in `lib/a.py`"


def test_openhands_occupancy_is_measured_from_each_model_responses_prompt_tokens(tmp_path):
    s = OpenHandsSession()
    s.user("where is f?")
    s.step(s.explore(), results=[explore_text(["lib/a.py"]) + "x" * 3000], prompt_tokens=2000)
    s.step(s.call("read", path="lib/a.py"), s.call("read", path="lib/b.py"), results=["y" * 1500, "z" * 500],
           prompt_tokens=3300)  # fmt: skip
    s.condense()
    s.finish("in lib/a.py")
    verdict, collector = openhands(s, tmp_path)
    o = measure(verdict, collector)["occupancy"]
    # two actions of one response are one request
    assert (o["ctx_base"], o["turns"], o["ctx_final"], o["compactions"]) == (2000, 3, s.tokens, 1)
    assert o["chars"]["read"] == 2000


# -- OpenHands, the software-agent-sdk's conversation folders ---------------------------------


def sdk(c: OpenHandsConversation, tmp_path: Path) -> Any:
    folder = c.write(tmp_path / "conversations" / c.id)
    return judge("openhands-sdk", sorted(str(p) for p in folder.rglob("*.json")))


def test_an_openhands_sdk_conversation_folder_is_one_transcript(tmp_path):
    c = OpenHandsConversation()
    c.user("where is f?")
    for n in range(11):  # event-00010 after event-00002: read in index order
        c.step(c.call("think", "ThinkAction", thought=f"step {n}"))
    c.step(c.explore(), results=[explore_text(["lib/a.py"])])
    c.step(c.call("file_editor", "FileEditorAction", command="view", path="/work/t/lib/a.py"))
    c.finish("in lib/a.py")
    c.write(tmp_path / "conversations" / c.id)
    (tmp_path / "other").mkdir()
    (tmp_path / "other" / "base_state.json").write_text('{"name": "not a conversation"}')
    campaign = discover(str(tmp_path))
    [found] = campaign.transcripts
    assert (found.path, found.kind, found.agent, found.arm) == (
        f"conversations/{c.id}", "openhands-sdk", "openhands", "openhands",
    )  # fmt: skip
    assert len(found.rel_files) == len(c.events) + 1
    assert [d["path"] for d in campaign.ignored] == ["other/base_state.json"]
    verdict, collector = judge("openhands-sdk", found.files)
    assert labels(verdict) == [("read_returned", "Read a.py")]
    assert collector.answer() == "in lib/a.py"
    assert collector.tools["other"] == 11  # the thinks; finish is no call


def test_openhands_sdk_tools_map_onto_the_contracts_notions(tmp_path):
    c = OpenHandsConversation()
    c.user("where is f?")
    c.step(c.explore("a"), results=[explore_text(["lib/a.py"], ["lib/b.py"])])
    c.step(c.call("task_tracker", "TaskTrackerAction", command="plan", task_list=[]))  # bookkeeping
    c.step(c.call("file_editor", "FileEditorAction", command="view", path="/work/t/lib/b.py"))
    c.step(c.explore("b"), results=[explore_text(["lib/a.py"])])
    c.step(c.call("grep", "GrepAction", pattern="def f", path="lib"))
    c.step(c.explore("c"), results=[explore_text(["lib/a.py"])])
    c.step(c.call("terminal", "TerminalAction", command="cat lib/a.py"))
    c.step(c.explore("d"), results=[("error", "MCP error -32603: boom")])
    c.step(c.explore("e"), results=[("rejected", "the user said no")])
    c.step(c.explore("f"), results=[explore_text(["lib/a.py"])])
    c.step(c.call("delegate", "DelegateAction", command="spawn", ids=["x"]))
    c.step(c.explore("g"), c.call("glob", "GlobAction", pattern="lib/*.py"),
           results=[explore_text(["lib/a.py"]), "lib/a.py"])  # fmt: skip
    c.step(c.call("file_editor", "FileEditorAction", command="str_replace", path="lib/a.py", old_str="a",
                  new_str="b"))  # fmt: skip
    c.finish("f is in `lib/a.py`")
    verdict, collector = sdk(c, tmp_path)
    assert labels(verdict) == [
        ("read_missed", "Read b.py (named, not returned)"),
        ("search", "Grep"),
        ("read_returned", "Bash Read a.py"),
        ("sufficient", "delegate"),
        ("sufficient", "file_editor"),
    ]
    assert (verdict.errored, verdict.concurrent) == (2, 1)
    assert collector.tools == {"explore": 7, "read": 1, "search": 2, "bash": 1, "other": 3}
    assert collector.answer() == "f is in `lib/a.py`"


def test_openhands_sdk_occupancy_is_measured_from_each_responses_token_usage(tmp_path):
    c = OpenHandsConversation()
    c.user("where is f?")
    c.step(c.explore(), results=[explore_text(["lib/a.py"]) + "x" * 3000], prompt_tokens=2000)
    c.step(c.call("file_editor", "FileEditorAction", command="view", path="lib/a.py"),
           c.call("file_editor", "FileEditorAction", command="view", path="lib/b.py"),
           results=["y" * 1500, "z" * 500], prompt_tokens=3300)  # fmt: skip
    c.condense()
    c.finish("in lib/a.py")
    verdict, collector = sdk(c, tmp_path)
    o = measure(verdict, collector)["occupancy"]
    # two actions of one response are one request; the finish is the last
    assert (o["ctx_base"], o["turns"], o["ctx_final"], o["compactions"]) == (2000, 3, c.tokens, 1)
    assert o["chars"]["read"] == 2000
    assert collector.processed == sum(u["prompt_tokens"] + 60 for u in c.usages)


def test_an_openhands_sdk_conversation_without_its_state_has_no_token_figures(tmp_path):
    c = OpenHandsConversation()
    c.step(c.explore(), results=[explore_text(["lib/a.py"])])
    c.finish("done")
    folder = c.write(tmp_path / c.id)
    (folder / "base_state.json").unlink()
    verdict, collector = judge("openhands-sdk", sorted(str(p) for p in folder.rglob("*.json")))
    assert verdict.answered == 1
    m = measure(verdict, collector)
    assert m["occupancy"] is None and m["occupancy_reason"]


# -- OpenCode ------------------------------------------------------------------------------------


def opencode_run(session_id: str = "ses_a") -> tuple[OpenCodeSession, OpenCodeSession]:
    s = OpenCodeSession(session_id)
    child = OpenCodeSession(f"{session_id}_child", parent=session_id)
    s.user("where is f?")
    s.step(s.explore("a"), results=[explore_text(["lib/a.py"], ["lib/b.py"])])
    s.step(s.call("todowrite", todos=[]))  # bookkeeping
    s.step(s.call("read", filePath="/work/t/lib/b.py"))
    s.step(s.explore("b"), results=[explore_text(["lib/a.py"])])
    s.step(s.explore("c"), results=[explore_text(["lib/a.py"])])  # explore again
    s.step(s.call("bash", command="cat lib/a.py"))
    s.step(s.explore("d"), results=[("error", "MCP error -32603: boom")])
    s.step(s.explore("e"), results=[explore_text(["lib/a.py"])])
    s.delegate(child)
    child.step(child.call("grep", pattern="f(", path="lib"))
    s.compact()
    s.finish("f is in `lib/a.py`")
    return s, child


OPENCODE_LABELS = [
    ("read_missed", "Read b.py (named, not returned)"),
    ("explore_again", "codegraph_explore"),
    ("read_returned", "Bash Read a.py"),
    ("search", "task → Grep"),
]


def test_an_opencode_database_is_a_campaign_of_its_sessions_read_in_place(tmp_path):
    a, a_child = opencode_run("ses_a")
    b, _ = opencode_run("ses_b")
    db = tmp_path / "proj" / "opencode.db"
    conn = write_opencode_db(db, [a, a_child, b])
    try:
        assert (tmp_path / "proj" / "opencode.db-wal").stat().st_size > 0  # the rows are in the WAL
        # (not the -shm: SQLite's shared memory, whose read marks every reader sets)
        before = {p.name: p.read_bytes() for p in db.parent.iterdir() if not p.name.endswith("-shm")}
        campaign = discover(str(tmp_path))
        found = [(t.path, t.kind, t.agent, t.arm, t.group, t.session) for t in campaign.transcripts]
        # a subagent's session is its caller's delegation thread, not a transcript
        assert found == [
            ("proj/opencode.db/ses_a", "opencode", "opencode", "opencode", "proj", "ses_a"),
            ("proj/opencode.db/ses_b", "opencode", "opencode", "opencode", "proj", "ses_b"),
        ]
        # its -wal and -shm files are listed as the database's (the report accounts for every file)
        assert [(i["path"], i["reason"].split(" of the SQLite database ")[0]) for i in campaign.ignored] == [
            ("proj/opencode.db-shm", "the shared-memory index"),
            ("proj/opencode.db-wal", "the write-ahead log"),
        ]
        t = campaign.transcripts[0]
        verdict, collector = judge(t.kind, t.files, session=t.session)
        after = {p.name: p.read_bytes() for p in db.parent.iterdir() if not p.name.endswith("-shm")}
        assert after == before  # never written
    finally:
        conn.close()
    assert labels(verdict) == OPENCODE_LABELS
    assert verdict.errored == 1
    assert collector.tools == {"explore": 5, "read": 1, "search": 1, "bash": 1, "other": 2}
    assert collector.answer() == "f is in `lib/a.py`"
    o = measure(verdict, collector)["occupancy"]
    # each step-finish: input + cache.read + cache.write; the compaction part is one
    assert (o["ctx_final"], o["turns"], o["compactions"]) == (a.tokens, len(a.messages) - 2, 1)


def test_an_opencode_task_finds_its_subagent_session_by_order_when_the_call_does_not_name_it(tmp_path):
    s = OpenCodeSession("ses_x")
    child = OpenCodeSession("ses_x1", parent="ses_x")
    s.step(s.explore(), results=[explore_text(["lib/a.py"])])
    s.delegate(child, named=False)
    child.step(child.call("read", filePath="lib/a.py"))
    write_opencode_db(tmp_path / "opencode.db", [s, child]).close()
    verdict, collector = judge("opencode", [tmp_path / "opencode.db"], session="ses_x")
    assert labels(verdict) == [("read_returned", "task → Read a.py")]
    assert collector.warnings == []


def test_an_opencode_export_is_read_as_the_same_session(tmp_path):
    s, _ = opencode_run()
    path = tmp_path / "export.json"
    path.write_text(json.dumps(s.export(), indent=2))
    [t] = discover(str(tmp_path)).transcripts
    assert (t.kind, t.agent) == ("opencode-export", "opencode")
    verdict, collector = judge(t.kind, t.files)
    # the export holds no subagent session: the task is a delegation with no step here
    assert labels(verdict) == [*OPENCODE_LABELS[:3], ("sufficient", "task")]
    assert collector.answer() == "f is in `lib/a.py`"


def test_an_opencode_storage_folder_is_a_campaign_of_its_sessions(tmp_path):
    a, a_child = opencode_run("ses_a")
    b, _ = opencode_run("ses_b")
    storage = write_opencode_storage(tmp_path / "proj", [a, a_child, b])
    # a part whose message is not in the storage belongs to no session
    (storage / "part" / "msg_gone").mkdir()
    orphan = {"id": "prt_1", "messageID": "msg_gone", "sessionID": "ses_z", "type": "text"}
    (storage / "part" / "msg_gone" / "prt_1.json").write_text(json.dumps(orphan))
    campaign = discover(str(tmp_path))
    found = [(t.path, t.kind, t.agent, t.arm, t.group, t.session) for t in campaign.transcripts]
    # a subagent's session is its caller's delegation thread, not a transcript
    assert found == [
        ("proj/storage/ses_a", "opencode-storage", "opencode", "opencode", "proj", "ses_a"),
        ("proj/storage/ses_b", "opencode-storage", "opencode", "opencode", "proj", "ses_b"),
    ]
    assert campaign.ignored == [
        {
            "path": "proj/storage/part/msg_gone/prt_1.json",
            "reason": "belongs to no opencode session of its folder",
        }
    ]
    t = campaign.transcripts[0]
    child_files = [f for f in t.rel_files if "ses_a_child" in f]
    assert len(child_files) == 1 + len(a_child.messages)  # its session and its messages travel with ses_a
    n_parts = sum(len(p) for s in (a, a_child) for _, p in s.messages)
    assert len(t.rel_files) == 2 + len(a.messages) + len(a_child.messages) + n_parts
    verdict, collector = judge(t.kind, t.files, session=t.session)
    # the same session as the database's, read the same
    db = tmp_path / "db" / "opencode.db"
    write_opencode_db(db, [a, a_child, b]).close()
    from_db = judge("opencode", [db], session="ses_a")
    assert labels(verdict) == labels(from_db[0]) == OPENCODE_LABELS
    assert verdict.errored == 1 and collector.tools == from_db[1].tools
    assert collector.answer() == "f is in `lib/a.py`"
    assert measure(verdict, collector) == measure(*from_db)


def test_opencode_storage_sessions_split_by_their_paths_and_parents():
    def head(rel: str) -> bytes:
        return b'{"id": "ses_2", "parentID": "ses_1"}' if rel.endswith("ses_2.json") else b'{"id": "x"}'

    files = [
        "s/storage/message/ses_1/msg_1.json",
        "s/storage/message/ses_2/msg_2.json",
        "s/storage/message/ses_3/msg_3.json",  # a session with no session document
        "s/storage/part/msg_1/prt_1.json",
        "s/storage/part/msg_2/prt_2.json",
        "s/storage/part/msg_9/prt_9.json",  # no message: in no session
        "s/storage/session/p/ses_1.json",
        "s/storage/session/p/ses_2.json",
    ]
    from pytest_explore_suff.readers.opencode import split

    assert split(files, head) == [
        ("ses_1", sorted([files[0], files[3], files[6], files[1], files[4], files[7]])),
        ("ses_3", [files[2]]),
    ]


def test_a_damaged_opencode_database_fails_its_own_item_with_one_line(tmp_path):
    (tmp_path / "opencode.db").write_bytes(b"SQLite format 3\x00" + b"\x00" * 200)
    [t] = discover(str(tmp_path)).transcripts
    assert (t.path, t.session) == ("opencode.db", "")
    with pytest.raises(TranscriptError) as info:
        judge(t.kind, t.files, session=t.session)
    assert "opencode.db" in str(info.value) and "\n" not in str(info.value)


def _files(folder: Path) -> dict[str, bytes]:
    return {p.name: p.read_bytes() for p in sorted(folder.iterdir())}


def _read_all(root: Path) -> list[Any]:
    """Every transcript of a campaign, judged as a run judges it."""
    out = []
    for t in discover(str(root)).transcripts:
        try:
            out.append(labels(judge(t.kind, t.files, session=t.session)[0]))
        except TranscriptError as exc:
            out.append(str(exc))
    return out


@pytest.mark.parametrize("state", ["closed", "rows in the wal"])
def test_reading_a_database_writes_nothing_beside_it(tmp_path, state):
    # SQLite opened with mode=ro still creates a -wal and a -shm beside a WAL-mode database
    # that has none, and writes its read marks in the -shm: neither may happen to a campaign.
    a, a_child = opencode_run("ses_a")
    db = tmp_path / "live" / "opencode.db"
    conn = write_opencode_db(db, [a, a_child])
    try:
        root = tmp_path / "c"
        root.mkdir()
        if state == "closed":
            conn.close()  # checkpointed: the -wal and -shm are gone
            names = ["opencode.db"]
        else:  # as an agent that died left them: rows only in the -wal, its -shm beside
            names = ["opencode.db", "opencode.db-wal", "opencode.db-shm"]
        for name in names:
            (root / name).write_bytes((db.parent / name).read_bytes())
    finally:
        conn.close()
    before = _files(root)
    assert sorted(before) == sorted(names)
    assert _read_all(root) == [OPENCODE_LABELS]  # the -wal's rows are read
    assert _files(root) == before


def test_a_database_whose_wal_has_rows_but_no_shm_fails_its_item_and_writes_nothing(tmp_path):
    a, a_child = opencode_run("ses_a")
    db = tmp_path / "live" / "opencode.db"
    conn = write_opencode_db(db, [a, a_child])
    try:
        for name in ("opencode.db", "opencode.db-wal"):  # copied without its -shm
            (tmp_path / "c" / name).parent.mkdir(exist_ok=True)
            (tmp_path / "c" / name).write_bytes((db.parent / name).read_bytes())
    finally:
        conn.close()
    before = _files(tmp_path / "c")
    [error] = _read_all(tmp_path / "c")
    assert error.startswith("cannot read opencode.db without writing beside it: its -wal holds rows")
    assert "\n" not in error
    assert _files(tmp_path / "c") == before


def test_a_wal_without_a_wal_header_is_ignored_as_sqlite_ignores_it_and_at_once(tmp_path):
    # SQLite reads no row of a -wal that does not start with a WAL header; opened beside one
    # with a -shm read-only, it retried for ten seconds, then failed ("locking protocol").
    import time

    a, a_child = opencode_run("ses_a")
    write_opencode_db(tmp_path / "opencode.db", [a, a_child]).close()
    (tmp_path / "opencode.db-wal").write_bytes(b"\x00garbage" * 100)
    (tmp_path / "opencode.db-shm").write_bytes(b"\xff" * 32768)
    before = _files(tmp_path)
    start = time.monotonic()
    assert _read_all(tmp_path) == [OPENCODE_LABELS]
    assert time.monotonic() - start < 5
    assert _files(tmp_path) == before


@pytest.mark.parametrize("shipped", [True, False], ids=["as-shipped", "database-alone"])
def test_a_run_leaves_the_example_opencode_database_byte_identical(pytester, tmp_path, shipped):
    # The mixed-agents example ships its database with a -wal and a -shm; a run (its
    # discovery and each worker's items) writes none of them, nor creates them.
    import shutil

    from helpers import EXAMPLES

    root = tmp_path / "mixed"
    shutil.copytree(EXAMPLES / "mixed-agents", root)
    folder = root / "opencode"
    assert {p.name for p in folder.iterdir()} >= {"opencode.db", "opencode.db-wal", "opencode.db-shm"}
    if not shipped:
        (folder / "opencode.db-wal").unlink()
        (folder / "opencode.db-shm").unlink()
    before = _files(folder)
    result = pytester.runpytest(f"--explore-suff={root}", "-n", "2", "-p", "no:cacheprovider")
    result.assert_outcomes(passed=22)
    assert _files(folder) == before


# -- Crush ---------------------------------------------------------------------------------------


def crush_run(session_id: str = "crush-a") -> list[CrushSession]:
    s = CrushSession(session_id)
    child = CrushSession()
    s.user("where is f?")
    s.step(s.explore("a"), results=[explore_text(["lib/a.py"], ["lib/b.py"])])
    s.step(s.call("view", file_path="/work/t/lib/b.py"))
    s.step(s.explore("b"), results=[explore_text(["lib/a.py"])])
    s.step(s.call("bash", command="sed -n 1,20p lib/a.py"))
    s.step(s.explore("c"), results=[("error", "MCP error -32603: boom")])
    s.step(s.explore("d"), results=[explore_text(["lib/a.py"])])
    s.step(s.call("repo_browser.read_file<|channel|>analysis", path="lib/a.py"))  # a local model's name
    s.step(s.explore("e"), results=[explore_text(["lib/a.py"])])
    s.delegate(child)
    child.step(child.call("ls", path="lib"))
    s.finish("f is in `lib/a.py`")
    return [s, child]


def test_a_crush_database_is_read_in_place_and_has_no_occupancy(tmp_path):
    write_crush_db(tmp_path / "repo" / ".crush" / "crush.db", crush_run())
    [t] = discover(str(tmp_path)).transcripts
    assert (t.path, t.kind, t.agent, t.arm) == ("repo/.crush/crush.db/crush-a", "crush", "crush", "crush")
    assert t.group == "repo"
    verdict, collector = judge(t.kind, t.files, session=t.session)
    assert labels(verdict) == [
        ("read_missed", "Read b.py (named, not returned)"),
        ("read_returned", "Bash Read a.py"),
        ("sufficient", "repo_browser.read_file<|channel|>analysis"),  # an unknown tool, not an error
        ("search", "agent → Glob"),
    ]
    assert verdict.errored == 1
    assert {a.name for a in collector.threads["main"]} >= {"mcp__codegraph__codegraph_explore"}
    assert collector.answer() == "f is in `lib/a.py`"
    m = measure(verdict, collector)
    # tokens per session only: no request's window
    assert m["occupancy"] is None and "no token counts" in m["occupancy_reason"]
    assert collector.runs[0]["tokens"] == 52000 + 1800


# -- a campaign of them all, through pytest ------------------------------------------------------


def new_agents_campaign(root: Path) -> Any:
    """One session of each agent: its folder, in the layout it writes (an open connection to the
    OpenCode database keeps its rows in the WAL: closed by the caller)."""
    t = AmpThread()
    t.step(t.explore("\x1b[31mred <img src=x onerror=alert(1)>"), results=[explore_text(["lib/a.py"])])
    t.step(t.call("Read", path="lib/a.py"))
    t.write(root / "amp" / "threads" / f"{t.id}.json")
    c = ClineTask()
    c.step(c.explore(), results=[explore_text(["lib/a.py"], ["lib/<b>.py"])])
    c.step(c.call("read_file", path="lib/<b>.py"))
    c.write(root / "cline" / "tasks" / c.task_id)
    cont = ContinueSession()
    cont.step(cont.explore(), results=[explore_text(["lib/a.py"])])
    cont.finish()
    cont.write(root / "continue" / "sessions" / f"{cont.session_id}.json")
    oh = OpenHandsSession()
    oh.step(oh.explore(), results=[explore_text(["lib/a.py"])])
    oh.step(oh.call("run", command="grep -rn f lib"))
    oh.write(root / "openhands" / "sessions" / oh.session_id)
    sdk = OpenHandsConversation()
    sdk.step(sdk.explore(), results=[explore_text(["lib/a.py"])])
    sdk.step(sdk.call("grep", "GrepAction", pattern="f", path="lib"))
    sdk.finish("in lib/a.py")
    sdk.write(root / "openhands-sdk" / "conversations" / sdk.id)
    write_opencode_storage(root / "opencode-json", list(opencode_run("ses_s")))
    write_crush_db(root / "crush" / ".crush" / "crush.db", crush_run())
    a, a_child = opencode_run("ses_a")
    b, _ = opencode_run("ses_b")
    return write_opencode_db(root / "opencode" / "opencode.db", [a, a_child, b])


@pytest.mark.parametrize("dist", [[], ["-n", "2"]], ids=["plain", "xdist"])
def test_every_new_agent_is_a_transcript_with_its_agent_plain_and_under_xdist(pytester, dist):
    root = pytester.path / "c"
    conn = new_agents_campaign(root)
    try:
        result = pytester.runpytest(f"--explore-suff={root}", "-p", "no:cacheprovider",
                                    "--explore-suff-html=r.html", *dist)  # fmt: skip
    finally:
        conn.close()
    result.assert_outcomes(passed=9)
    doc = report(pytester)
    assert {(r["path"], r["agent"], r["arm"]) for r in doc["transcripts"]} == {
        ("amp/threads/T-5e3a0d2c-7f41-4b6a-9c11-0a1b2c3d4e5f.json", "amp", "amp"),
        ("cline/tasks/1767865803494", "cline", "cline"),
        ("continue/sessions/c0n7-1a2b-session.json", "continue", "continue"),
        ("openhands/sessions/0h5e55", "openhands", "openhands"),
        ("crush/.crush/crush.db/crush-a", "crush", "crush"),
        ("opencode/opencode.db/ses_a", "opencode", "opencode"),
        ("opencode/opencode.db/ses_b", "opencode", "opencode"),
        ("openhands-sdk/conversations/5dc0c0a1-7e2f-4c4e-9b1a-2f3c4d5e6f70", "openhands", "openhands"),
        ("opencode-json/storage/ses_s", "opencode", "opencode"),
    }
    assert all(r["status"] == "classified" for r in doc["transcripts"])
    assert doc["arms"]["opencode"]["agents"] == {"opencode": 3}
    assert {r["kind"] for r in doc["transcripts"] if r["agent"] == "openhands"} == {
        "openhands",
        "openhands-sdk",
    }
    # whatever the tools returned is escaped where it is shown
    out = result.stdout.str() + (pytester.path / "r.html").read_text()
    assert "\x1b[31m" not in out and "<img src=x" not in out and "lib/<b>.py" not in out
    # never a table the reader has no business with
    assert "SECRET-ACCESS-TOKEN" not in out + (pytester.path / "explore-suff.json").read_text()


def test_the_new_agents_report_is_byte_identical_plain_and_under_xdist(pytester):
    root = pytester.path / "c"
    conn = new_agents_campaign(root)
    try:
        pytester.runpytest(
            f"--explore-suff={root}", "--explore-suff-json=plain.json", "-p", "no:cacheprovider"
        )
        pytester.runpytest(f"--explore-suff={root}", "-n", "2", "--explore-suff-json=dist.json", "-p",
                           "no:cacheprovider")  # fmt: skip
    finally:
        conn.close()
    assert (pytester.path / "plain.json").read_bytes() == (pytester.path / "dist.json").read_bytes()


def test_a_database_session_is_selected_by_k_like_a_file(pytester):
    root = pytester.path / "c"
    new_agents_campaign(root).close()
    result = pytester.runpytest(
        f"--explore-suff={root}", "-p", "no:cacheprovider", "-k", "ses_b or ses_s or crush"
    )
    result.assert_outcomes(passed=3, deselected=6)
    ran = {r["path"] for r in report(pytester)["transcripts"] if r["status"] == "classified"}
    # a storage folder's session too
    assert ran == {
        "opencode/opencode.db/ses_b",
        "opencode-json/storage/ses_s",
        "crush/.crush/crush.db/crush-a",
    }


def test_in_an_archive_the_folders_are_read_and_a_database_is_listed_with_the_reason(pytester, tmp_path):
    root = tmp_path / "c"
    new_agents_campaign(root).close()
    archive = pytester.path / "c.tar.gz"
    with tarfile.open(archive, "w:gz") as tar:
        tar.add(root, arcname="c")
    result = pytester.runpytest(f"--explore-suff={archive}", "-p", "no:cacheprovider")
    result.assert_outcomes(passed=6)
    doc = report(pytester)
    assert {r["agent"] for r in doc["transcripts"]} == {"amp", "cline", "continue", "openhands", "opencode"}
    # folders of files are read from the archive: an SDK conversation, a storage folder's session
    assert {r["path"] for r in doc["transcripts"] if r["kind"] in ("openhands-sdk", "opencode-storage")} == {
        "openhands-sdk/conversations/5dc0c0a1-7e2f-4c4e-9b1a-2f3c4d5e6f70",
        "opencode-json/storage/ses_s",
    }
    reasons = {d["path"]: d["reason"] for d in doc["ignored"]}
    assert set(reasons) >= {"opencode/opencode.db", "crush/.crush/crush.db"}
    assert reasons["opencode/opencode.db"].startswith("a opencode database inside an archive: SQLite reads")
