"""Qwen Code chats, GitHub Copilot CLI sessions, Cursor transcripts, and readers a
third party registers through the ``pytest_explore_suff_readers`` hook.

The logs are written from the formats page (section 5) by ``agent_shapes.py``.
"""

from __future__ import annotations

import json
import textwrap
from pathlib import Path
from typing import Any

import pytest
from agent_shapes import CopilotSession, QwenChat, explore_text, mixed_estimated_campaign
from builders import Run, response
from helpers import listed, report

from pytest_explore_suff import judge
from pytest_explore_suff.campaign import discover

SUB_READ = ("read_file", {"absolute_path": "/work/t/lib/b.py"})


def qwen(chat: QwenChat, tmp_path: Path) -> Any:
    return judge("qwen", [chat.write(tmp_path / "chats" / f"{chat.session_id}.jsonl")])


def copilot(s: CopilotSession, tmp_path: Path) -> Any:
    return judge("copilot", [s.write(tmp_path / "session-state" / s.session_id / "events.jsonl")])


def labels(verdict: Any) -> list[tuple[str, str]]:
    return [(c.bucket, c.next) for c in verdict.calls]


# -- Qwen Code ----------------------------------------------------------------------------


def test_a_qwen_chat_is_found_as_qwen_not_as_a_claude_session(tmp_path):
    chat = QwenChat()
    chat.user("where is f?")
    chat.step(chat.explore("f"), results=[explore_text(["lib/a.py"])])
    chat.finish()
    chat.write(tmp_path / "proj" / "chats" / "7e1f.jsonl")
    [t] = discover(str(tmp_path)).transcripts
    assert (t.kind, t.agent, t.arm) == ("qwen", "qwen", "qwen")


def test_qwen_tools_map_onto_the_contracts_notions(tmp_path):
    chat = QwenChat()
    chat.user("where is f?")
    chat.step(chat.explore("a"), results=[explore_text(["lib/a.py"], ["lib/b.py"])])
    chat.step(chat.call("todo_write", todos=[]))  # bookkeeping: transparent
    chat.step(chat.call("read_file", absolute_path="/work/t/lib/b.py"))
    chat.step(chat.explore("b"), results=[explore_text(["lib/a.py"])])
    chat.step(chat.call("grep_search", pattern="f("))
    chat.step(chat.explore("c"), results=[explore_text(["lib/a.py"])])
    chat.step(chat.call("run_shell_command", command="sed -n '1,40p' lib/a.py"))
    chat.step(chat.explore("d"), results=[explore_text(["lib/a.py"])])
    chat.step(chat.call("edit", file_path="lib/a.py", old_string="a", new_string="b"))
    chat.step(chat.explore("e"), results=[("error", "MCP error -32603: boom")])
    chat.step(chat.explore("f"), results=[explore_text(["lib/a.py"])])
    chat.finish("f is in `lib/a.py`")
    verdict, collector = qwen(chat, tmp_path)
    assert labels(verdict) == [
        ("read_missed", "Read b.py (named, not returned)"),
        ("search", "Grep"),
        ("read_returned", "Bash Read a.py"),
        ("sufficient", "edit"),
        ("sufficient", "(final answer)"),
    ]
    assert verdict.errored == 1
    assert collector.tools == {"explore": 6, "read": 1, "search": 1, "bash": 1, "other": 2}
    assert collector.answer() == "f is in `lib/a.py`"  # the thought part is not the answer


def test_qwen_calls_of_one_record_are_one_message(tmp_path):
    chat = QwenChat()
    chat.step(chat.explore(), chat.call("read_file", absolute_path="lib/z.py"),
              results=[explore_text(["lib/a.py"]), "..."])  # fmt: skip
    chat.step(chat.call("write_file", file_path="notes.md", content="x"))
    verdict, _ = qwen(chat, tmp_path)
    assert labels(verdict) == [("sufficient", "write_file")]
    assert verdict.concurrent == 1


def test_a_qwen_delegation_is_judged_by_its_subagents_first_step_from_the_telemetry(tmp_path):
    chat = QwenChat()
    chat.user("where is f?")
    chat.step(chat.explore(), results=[explore_text(["lib/a.py"], ["lib/b.py"])])
    chat.delegate("explorer", [("todo_write", {"todos": []}), SUB_READ, ("grep_search", {"pattern": "x"})])
    chat.finish()
    verdict, collector = qwen(chat, tmp_path)
    assert labels(verdict) == [("read_missed", "agent → Read b.py (named, not returned)")]
    assert collector.warnings == []
    # the subagent's calls are counted; the main thread's telemetry mirrors are not
    assert collector.tools == {"explore": 1, "read": 1, "search": 1, "bash": 0, "other": 2}


def test_a_qwen_delegation_with_no_telemetry_is_moved_on_with_a_warning(tmp_path):
    chat = QwenChat()
    chat.step(chat.explore(), results=[explore_text(["lib/a.py"])])
    call = chat.delegate("explorer", [SUB_READ])
    chat.records = [r for r in chat.records if "#explorer-" not in json.dumps(r)]
    verdict, collector = qwen(chat, tmp_path)
    assert labels(verdict) == [("sufficient", "agent")]
    assert [w for w in collector.warnings if call["id"] in w]


def test_qwen_occupancy_is_measured_from_each_requests_prompt_tokens(tmp_path):
    chat = QwenChat()
    chat.user("where is f?")
    chat.step(chat.explore(), results=[explore_text(["lib/a.py"]) + "x" * 3000], prompt_tokens=2000)
    chat.step(chat.call("read_file", absolute_path="lib/a.py"), results=["y" * 1500], prompt_tokens=3300)
    chat.compress()
    chat.finish()
    verdict, collector = qwen(chat, tmp_path)
    from pytest_explore_suff.metrics import measure

    m = measure(verdict, collector)
    o = m["occupancy"]
    assert (o["ctx_base"], o["turns"], o["window"], o["compactions"]) == (2000, 3, 131072, 1)
    assert o["ctx_final"] == chat.tokens
    assert "estimated" not in o
    assert m["allocation"]["has_answer"] is True


def test_a_resumed_qwen_chat_counts_a_replayed_record_once(tmp_path):
    chat = QwenChat()
    chat.step(chat.explore(), results=[explore_text(["lib/a.py"])])
    chat.step(chat.call("read_file", absolute_path="lib/a.py"))
    chat.records += [dict(r, version="0.14.0") for r in chat.records]  # a second segment replaying
    verdict, collector = qwen(chat, tmp_path)
    assert labels(verdict) == [("read_returned", "Read a.py")]
    assert collector.tools["read"] == 1


# -- GitHub Copilot CLI ----------------------------------------------------------------------


@pytest.mark.parametrize("layout", ["folder", "flat"])
def test_copilot_sessions_are_found_in_both_layouts(tmp_path, layout):
    s = CopilotSession()
    s.step(s.explore(), results=[explore_text(["lib/a.py"])])
    s.finish()
    rel = f"{s.session_id}/events.jsonl" if layout == "folder" else f"{s.session_id}.jsonl"
    s.write(tmp_path / "session-state" / rel)
    s.history(tmp_path / "history-session-state" / "session_c0p1_1767000000000.json")
    found = {t.path: (t.kind, t.agent) for t in discover(str(tmp_path)).transcripts}
    assert found == {
        f"session-state/{rel}": ("copilot", "copilot"),
        "history-session-state/session_c0p1_1767000000000.json": ("copilot", "copilot"),
    }


def test_copilot_tools_map_onto_the_contracts_notions(tmp_path):
    s = CopilotSession()
    s.user("where is f?")
    s.step(s.explore("a"), s.call("report_intent", intent="Exploring"),
           results=[explore_text(["lib/a.py"]), "ok"])  # fmt: skip
    s.step(s.explore("b"), results=[explore_text(["lib/a.py"])])  # explore again
    s.step(s.call("view", path="/work/t/lib"))  # a folder listing: a search
    s.step(s.explore("c"), results=[explore_text(["lib/a.py"])])
    s.step(s.call("bash", command="cat lib/a.py | head -40"))
    s.step(s.explore("d"), results=[("error", "MCP server codegraph: timeout")])
    s.step(s.explore("e"), results=[explore_text(["lib/a.py"])])
    s.step(s.call("rg", pattern="f("))
    s.step(s.call("github-mcp-server-search_code", query="f"))
    s.finish("f is in lib/a.py")
    verdict, collector = copilot(s, tmp_path)
    assert labels(verdict) == [
        ("explore_again", "codegraph_explore"),
        ("search", "Glob"),
        ("read_returned", "Bash Read a.py"),
        ("search", "Grep"),
    ]
    assert verdict.errored == 1
    assert [c.query for c in verdict.calls] == ["a", "b", "c", "e"]
    assert collector.answer() == "f is in lib/a.py"
    assert {a.name for a in collector.threads["main"]} >= {"mcp__codegraph__codegraph_explore", "TodoWrite"}


def test_a_copilot_task_is_judged_by_its_subagents_first_step(tmp_path):
    s = CopilotSession()
    s.step(s.explore(), results=[explore_text(["lib/a.py"])])
    s.delegate([s.call("report_intent", intent="x"), s.call("view", path="/work/t/lib/a.py")])
    s.finish()
    verdict, collector = copilot(s, tmp_path)
    assert labels(verdict) == [("read_returned", "task → Read a.py")]
    assert collector.warnings == []


def test_copilot_occupancy_is_estimated_from_the_window_at_the_end(tmp_path):
    s = CopilotSession()
    s.user("u" * 100)
    s.step(s.explore(), results=["t" * 1000])
    s.step(s.call("view", path="lib/old.py"), results=["r" * 5000])
    s.compact()  # what came before left the window
    s.step(s.explore(), results=[explore_text(["lib/a.py"]) + "t" * 2000])
    s.step(s.call("view", path="lib/a.py"), results=["r" * 1000])
    s.finish("done")
    s.shutdown(current=12000, system=1000, tools=1000)
    verdict, collector = copilot(s, tmp_path)
    from pytest_explore_suff.metrics import measure

    o = measure(verdict, collector)["occupancy"]
    assert o["estimated"] is True
    assert (o["ctx_final"], o["ctx_base"], o["compactions"]) == (12000, 2000, 1)
    tool_chars, read_chars = len(explore_text(["lib/a.py"])) + 2000, 1000
    assert (o["chars"]["tool"], o["chars"]["read"]) == (tool_chars + 1000, read_chars + 5000)
    in_window = o["chars_per_token"] * 10000  # every character after the compaction
    assert o["residual"]["tool"] == round(tool_chars / in_window * 10000)
    assert o["residual"]["read"] == round(read_chars / in_window * 10000)
    assert o["share"] == pytest.approx(o["residual_retrieval"] / 12000, abs=1e-3)


def test_copilot_without_a_shutdown_has_no_occupancy_and_says_why(tmp_path):
    s = CopilotSession()
    s.step(s.explore(), results=[explore_text(["lib/a.py"])])
    verdict, collector = copilot(s, tmp_path)
    from pytest_explore_suff.metrics import measure

    m = measure(verdict, collector)
    assert m["occupancy"] is None and "no token counts" in m["occupancy_reason"]


def test_a_resumed_copilot_session_goes_on_in_the_same_file(tmp_path):
    s = CopilotSession()
    s.step(s.explore(), results=[explore_text(["lib/a.py"])])
    s.shutdown()
    s.resume()
    s.step(s.call("view", path="lib/a.py"))
    s.shutdown(current=40000)
    verdict, collector = copilot(s, tmp_path)
    assert labels(verdict) == [("read_returned", "Read a.py")]
    from pytest_explore_suff.metrics import measure

    assert measure(verdict, collector)["occupancy"]["ctx_final"] == 40000


def test_a_copilot_history_document_is_read(tmp_path):
    s = CopilotSession()
    s.user("where is f?")
    s.step(s.explore(), results=[explore_text(["lib/a.py"], ["lib/b.py"])])
    s.step(s.call("view", path="lib/b.py"))
    s.finish("in lib/b.py")
    verdict, collector = judge("copilot", [s.history(tmp_path / "session_x_1.json")])
    assert labels(verdict) == [("read_missed", "Read b.py (named, not returned)")]
    assert collector.answer() == "in lib/b.py"


# -- Cursor ------------------------------------------------------------------------------------


def test_cursor_agent_transcripts_are_listed_as_ignored_with_the_reason(tmp_path):
    folder = tmp_path / "cursor" / "agent-transcripts"
    folder.mkdir(parents=True)
    (folder / "a1.txt").write_text("user:\nwhere is f?\n\nassistant:\n[Tool call] read_file\n")
    (folder / "a2.jsonl").write_text(json.dumps({"role": "user", "message": {"content": "x"}}) + "\n")
    campaign = discover(str(tmp_path))
    assert campaign.transcripts == []
    reasons = {d["path"]: d["reason"] for d in campaign.ignored}
    assert set(reasons) == {"cursor/agent-transcripts/a1.txt", "cursor/agent-transcripts/a2.jsonl"}
    cursor = "Cursor agent transcript: no tool call ids and no tool results"
    assert all(r.startswith(cursor) for r in reasons.values())


# -- a third party's reader, through the hook ----------------------------------------------

TOY_READER = '''
from pytest_explore_suff import Reader


def read(files, collector):
    """A toy agent: one JSON object a line, {"toy": "call"|"result"|"answer", ...}."""
    for path in files:
        with collector.open_file(path) as fh:
            for raw in fh:
                collector.lines += 1
                line = json.loads(raw)
                if line.get("toy") == "call":
                    collector.recognized = True
                    collector.call(line["id"], line["name"], line["input"], message=line["msg"])
                elif line.get("toy") == "result":
                    collector.result(line["id"], line["text"], error=line.get("error", False))
                elif line.get("toy") == "request":
                    collector.timeline.request(line["tokens"])
                elif line.get("toy") == "answer":
                    collector.said(line["text"])


def pytest_explore_suff_readers(config):
    return Reader("toy", "toyagent", read, line=lambda obj: "toy" in obj)
'''


def toy_lines(explore_files: list[str], then: tuple[str, dict[str, Any]]) -> str:
    lines = [
        {"toy": "request", "tokens": 1000},
        {
            "toy": "call",
            "id": "t1",
            "name": "mcp__codegraph__codegraph_explore",
            "input": {"query": "f"},
            "msg": "m1",
        },
        {"toy": "result", "id": "t1", "text": response(explore_files) + "x" * 900},
        {"toy": "request", "tokens": 1400},
        {"toy": "call", "id": "t2", "name": then[0], "input": then[1], "msg": "m2"},
        {"toy": "result", "id": "t2", "text": "ok"},
        {"toy": "request", "tokens": 1500},
        {"toy": "answer", "text": "f is in lib/a.js"},
    ]
    return "".join(json.dumps(line) + "\n" for line in lines)


def toy_campaign(root: Path) -> Path:
    (root / "q1").mkdir(parents=True)
    read, edit = ("Read", {"file_path": "lib/a.js"}), ("Edit", {"file_path": "lib/a.js"})
    (root / "q1" / "run-with-1.jsonl").write_text(toy_lines(["lib/a.js"], read))
    (root / "q1" / "run-with-2.jsonl").write_text(toy_lines(["lib/a.js"], edit))
    run = Run()
    run.step(run.explore("f"), response(["lib/a.js"]))
    run.finish()
    run.write(root / "q1" / "run-claude-1.jsonl")
    return root


@pytest.mark.parametrize("how", ["conftest", "plugin"])
@pytest.mark.parametrize("dist", [[], ["-n", "2"]], ids=["plain", "xdist"])
def test_a_third_party_reader_registered_through_the_hook_is_used(pytester, monkeypatch, how, dist):
    root = toy_campaign(pytester.path / "c")
    source = "import json\n" + textwrap.dedent(TOY_READER)
    args = [f"--explore-suff={root}", "-p", "no:cacheprovider", "--max-read-returned=0.4", *dist]
    if how == "conftest":
        pytester.makeconftest(source)
    else:
        pytester.makepyfile(toyreader=source)
        pytester.syspathinsert()
        monkeypatch.setenv("PYTHONPATH", str(pytester.path))  # xdist workers import it too
        args += ["-p", "toyreader"]
    # A plug-in named with -p is imported by each xdist worker: a process of its own.
    run = pytester.runpytest_subprocess if how == "plugin" and dist else pytester.runpytest
    result = run(*args)
    doc = report(pytester)
    toy = [r for r in doc["transcripts"] if r["agent"] == "toyagent"]
    assert [(r["path"], r["kind"], r["arm"], r["status"]) for r in toy] == [
        ("q1/run-with-1.jsonl", "toy", "with", "classified"),
        ("q1/run-with-2.jsonl", "toy", "with", "classified"),
    ]
    assert [c["next"] for r in toy for c in r["calls"]] == ["Read a.js", "Edit"]
    assert toy[0]["occupancy"]["ctx_final"] == 1500 and toy[0]["allocation"]["has_answer"] is True
    assert doc["arms"]["with"]["counts"]["read_returned"] == 1
    assert doc["arms"]["with"]["agents"] == {"toyagent": 2}
    assert listed(doc) == {"q1/run-with-1.jsonl", "q1/run-with-2.jsonl", "q1/run-claude-1.jsonl"}
    # the gate reads the toy arm like any other: half its calls read a returned file
    result.assert_outcomes(passed=3)
    assert result.ret == 1
    result.stdout.fnmatch_lines(["*max-read-returned*"])


def test_a_third_party_reader_gives_the_same_report_plain_and_under_xdist(pytester):
    root = toy_campaign(pytester.path / "c")
    pytester.makeconftest("import json\n" + textwrap.dedent(TOY_READER))
    pytester.runpytest(f"--explore-suff={root}", "--explore-suff-json=plain.json", "-p", "no:cacheprovider")
    pytester.runpytest(
        f"--explore-suff={root}", "-n", "2", "--explore-suff-json=dist.json", "-p", "no:cacheprovider"
    )
    assert (pytester.path / "plain.json").read_bytes() == (pytester.path / "dist.json").read_bytes()


def test_without_the_plugin_its_files_are_not_transcripts(pytester):
    root = toy_campaign(pytester.path / "c")
    pytester.runpytest(f"--explore-suff={root}", "-p", "no:cacheprovider")
    doc = report(pytester)
    assert {r["agent"] for r in doc["transcripts"] if r["status"] == "classified"} == {"claude"}


def test_a_hook_returning_something_else_is_a_usage_error(pytester):
    root = toy_campaign(pytester.path / "c")
    pytester.makeconftest("def pytest_explore_suff_readers(config):\n    return 'toy'\n")
    result = pytester.runpytest(f"--explore-suff={root}", "-p", "no:cacheprovider")
    assert result.ret == pytest.ExitCode.USAGE_ERROR
    result.stderr.fnmatch_lines(["*pytest_explore_suff_readers returned str, not a Reader*"])


def test_an_arm_that_mixes_agents_says_so(pytester):
    root = pytester.path / "c"
    chat = QwenChat()
    chat.step(chat.explore(), results=[explore_text(["lib/a.py"])])
    chat.finish()
    chat.write(root / "q1" / "run-with-1.jsonl")
    run = Run()
    run.step(run.explore("f"), response(["lib/a.js"]))
    run.finish()
    run.write(root / "q1" / "run-with-2.jsonl")
    result = pytester.runpytest(f"--explore-suff={root}", "-p", "no:cacheprovider")
    result.assert_outcomes(passed=2)
    assert report(pytester)["arms"]["with"]["agents"] == {"claude": 1, "qwen": 1}
    result.stdout.fnmatch_lines(["note: arm with mixes agents: claude (1), qwen (1); its shares pool them"])


# -- the agent per arm and estimated occupancy, in every report -----------------------------


def test_estimated_occupancy_is_counted_and_marked_in_every_arm_table(pytester):
    root = mixed_estimated_campaign(pytester.path / "c")
    result = pytester.runpytest(f"--explore-suff={root}", "-p", "no:cacheprovider", "--explore-suff-md=s.md")
    result.assert_outcomes(passed=3)
    doc = report(pytester)
    by_agent = {r["agent"]: r for r in doc["transcripts"]}
    assert by_agent["copilot"]["occupancy"]["estimated"] is True
    assert not by_agent["qwen"]["occupancy"].get("estimated")
    occ = {arm: agg["occupancy"] for arm, agg in doc["arms"].items()}
    assert (occ["with"]["transcripts"], occ["with"]["estimated"]) == (2, 1)
    assert (occ["without"]["transcripts"], occ["without"]["estimated"]) == (1, 0)
    assert doc["pooled"]["occupancy"]["estimated"] == 1
    out = result.stdout.str()
    table = out[out.index("residual context occupancy at the end") :]
    rows = {line.split("  ")[0]: line for line in table.splitlines()[3:10]}
    assert "2 (1 estimated)" in rows["transcripts"]
    for name in ("final context", "tool residual", "share of final context", "base prompt (median)"):
        # the with column is marked, the measured without column is not
        cells = [c for c in rows[name][len(name) :].split("  ") if c.strip()]
        assert [c.strip().startswith("~") for c in cells] == [True, False], rows[name]
    result.stdout.fnmatch_lines(["~ includes estimated figures (the log gives the window only at the end)"])
    md = (pytester.path / "s.md").read_text(encoding="utf-8")
    (share,) = [line for line in md.splitlines() if line.startswith("| retrieval residual share")]
    assert share.split(" | ")[1].startswith("\\~") and not share.split(" | ")[2].startswith("\\~")
    assert "\\~ includes estimated figures" in md


def test_measured_occupancy_is_not_marked(pytester):
    root = mixed_estimated_campaign(pytester.path / "c")
    (root / "q1" / "run-with-1.jsonl").unlink()
    result = pytester.runpytest(f"--explore-suff={root}", "-p", "no:cacheprovider")
    result.assert_outcomes(passed=2)
    assert {agg["occupancy"]["estimated"] for agg in report(pytester)["arms"].values()} == {0}
    assert "estimated" not in result.stdout.str() and "~" not in result.stdout.str()
