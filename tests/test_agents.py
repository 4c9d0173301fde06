"""Codex CLI rollouts and Gemini CLI sessions: the same rules as for Claude Code.

Every behaviour is checked on every shape it applies to: the Codex rollout's
current and mid-2025 shapes (and each of its shell tools), and the Gemini
session document, old checkpoint and JSONL form. The shapes come from
``agent_shapes.py``.
"""

from __future__ import annotations

import json
import zipfile
from pathlib import Path

import pytest
from agent_shapes import CODEX_EXPLORE, SHELLS, GeminiSession, Rollout, explore_text
from builders import Run, response
from helpers import listed, report

from pytest_explore_suff import ToolSpec, judge
from pytest_explore_suff.campaign import discover
from pytest_explore_suff.classify import Verdict
from pytest_explore_suff.events import Collector
from pytest_explore_suff.readers import NotATranscript
from pytest_explore_suff.readers.codex import output_of, script_of

CODEX_SHAPES = [("current", s) for s in SHELLS] + [("mid-2025", "shell")]
GEMINI_FORMS = ["session", "checkpoint", "jsonl"]


@pytest.fixture(params=CODEX_SHAPES, ids=lambda p: f"{p[0]}-{p[1]}")
def rollout(request: pytest.FixtureRequest) -> Rollout:
    shape, shell = request.param
    return Rollout(shape, shell)


@pytest.fixture(params=GEMINI_FORMS)
def session(request: pytest.FixtureRequest) -> GeminiSession:
    return GeminiSession(request.param)


def codex(r: Rollout, tmp_path: Path, spec: ToolSpec | None = None) -> tuple[Verdict, Collector]:
    return judge("codex", [r.write(tmp_path / "rollout-2026-03-01T10-00-00-0199.jsonl")], spec)


def gemini(s: GeminiSession, tmp_path: Path, spec: ToolSpec | None = None) -> tuple[Verdict, Collector]:
    return judge("gemini", [s.write(tmp_path / f"session-2026-03-01T10-00-5c1d{s.suffix()}")], spec)


def only(verdict: Verdict) -> tuple[str, str]:
    [call] = verdict.calls
    return call.bucket, call.next


# -- Codex CLI -------------------------------------------------------------------------


def test_codex_explore_then_explore_again(rollout, tmp_path):
    e1, e2 = rollout.explore("a"), rollout.explore("b")
    rollout.step(e1, outputs=[explore_text(["lib/a.py"])])
    rollout.step(e2, outputs=[explore_text(["lib/b.py"])])
    rollout.finish()
    verdict, _ = codex(rollout, tmp_path)
    assert [(c.query, c.bucket, c.next) for c in verdict.calls] == [
        ("a", "explore_again", "codegraph_explore"),
        ("b", "sufficient", "(final answer)"),
    ]


def test_codex_shell_read_of_a_returned_file_through_every_shell_shape(rollout, tmp_path):
    e = rollout.explore("where is f")
    rollout.step(e, outputs=[explore_text(["lib/a.py"])])
    rollout.step(rollout.shell("sed -n '1,80p' lib/a.py"), outputs=["def f(): pass"])
    rollout.finish()
    verdict, collector = codex(rollout, tmp_path)
    assert only(verdict) == ("read_returned", "Bash Read a.py")
    assert collector.tools == {"explore": 1, "read": 0, "search": 0, "bash": 1, "other": 0}


def test_codex_shell_read_of_a_missed_file(rollout, tmp_path):
    rollout.step(rollout.explore(), outputs=[explore_text(["lib/a.py"], mentioned=["lib/b.py"])])
    rollout.step(rollout.shell("cat lib/b.py"))
    rollout.step(rollout.explore(), outputs=[explore_text(["lib/a.py"])])
    rollout.step(rollout.shell("nl -ba lib/c.py | sed -n '1,40p'"))
    verdict, _ = codex(rollout, tmp_path)
    assert [(c.bucket, c.next, c.named) for c in verdict.calls] == [
        ("read_missed", "Bash Read b.py (named, not returned)", True),
        ("read_missed", "Bash Read c.py", False),
    ]


def test_codex_shell_search(rollout, tmp_path):
    rollout.step(rollout.explore(), outputs=[explore_text(["lib/a.py"])])
    rollout.step(rollout.shell("rg foo"))
    verdict, _ = codex(rollout, tmp_path)
    assert only(verdict) == ("search", "Bash search")


def test_codex_apply_patch_is_sufficient(rollout, tmp_path):
    rollout.step(rollout.explore(), outputs=[explore_text(["lib/a.py"])])
    rollout.step(rollout.patch(), outputs=["Success. Updated the following files:\nM lib/a.py"])
    rollout.finish()
    verdict, collector = codex(rollout, tmp_path)
    assert only(verdict) == ("sufficient", "apply_patch")
    assert collector.tools["other"] == 1


def test_codex_a_build_is_sufficient_and_labelled_bash(rollout, tmp_path):
    rollout.step(rollout.explore(), outputs=[explore_text(["lib/a.py"])])
    rollout.step(rollout.shell("pytest -q"), outputs=[{"text": "1 failed", "exit_code": 1}])
    verdict, _ = codex(rollout, tmp_path)
    assert only(verdict) == ("sufficient", "Bash")


def test_codex_final_answer(rollout, tmp_path):
    rollout.step(rollout.explore(), outputs=[explore_text(["lib/a.py"])])
    rollout.finish("f is in lib/a.py")
    verdict, _ = codex(rollout, tmp_path)
    assert only(verdict) == ("sufficient", "(final answer)")


def test_codex_calls_of_the_same_response_are_not_reactions_and_count_as_concurrent(rollout, tmp_path):
    e = rollout.explore()
    same = [rollout.shell("cat lib/z.py"), rollout.shell("rg foo"), rollout.call("update_plan", plan=[])]
    rollout.step(e, *same, outputs=[explore_text(["lib/a.py"]), "...", "...", "Plan updated"])
    rollout.step(rollout.patch())
    verdict, _ = codex(rollout, tmp_path)
    assert only(verdict) == ("sufficient", "apply_patch")
    assert verdict.concurrent == 2


def test_codex_a_call_after_the_output_is_a_reaction_even_without_reasoning(rollout, tmp_path):
    e = rollout.explore()
    rollout.step(e, outputs=[explore_text(["lib/a.py"])])
    rollout.step(rollout.shell("cat lib/a.py"), reasoning=False)
    verdict, _ = codex(rollout, tmp_path)
    assert only(verdict) == ("read_returned", "Bash Read a.py")
    assert verdict.concurrent == 0


def test_codex_update_plan_is_transparent(rollout, tmp_path):
    rollout.step(rollout.explore(), outputs=[explore_text(["lib/a.py"])])
    rollout.step(rollout.call("update_plan", plan=[{"step": "read", "status": "in_progress"}]))
    rollout.step(rollout.shell("sed -n '1,80p' lib/a.py"))
    verdict, _ = codex(rollout, tmp_path)
    assert only(verdict) == ("read_returned", "Bash Read a.py")


@pytest.mark.parametrize(
    "output",
    [
        {"text": "err: tool call failed for `codegraph/codegraph_explore`"},
        {"text": "", "raw": json.dumps({"content": [{"type": "text", "text": "boom"}], "isError": True})},
        None,  # never answered: the run ended first
    ],
    ids=["err", "is-error", "no-output"],
)
def test_codex_errored_explore(rollout, tmp_path, output):
    rollout.step(rollout.explore(), outputs=[output])
    rollout.finish()
    verdict, _ = codex(rollout, tmp_path)
    assert (verdict.answered, verdict.errored) == (0, 1)


def test_codex_mcp_result_as_json_content_is_read(rollout, tmp_path):
    raw = json.dumps({"content": [{"type": "text", "text": explore_text(["lib/a.py"])}], "isError": False})
    rollout.step(rollout.explore(), outputs=[{"text": "", "raw": raw}])
    rollout.step(rollout.shell("cat lib/a.py"))
    verdict, _ = codex(rollout, tmp_path)
    assert only(verdict) == ("read_returned", "Bash Read a.py")
    assert verdict.calls[0].files == 1


def test_a_lone_surrogate_escape_in_an_mcp_result_is_read_as_a_replacement_character(pytester):
    # An MCP server in JavaScript that cuts a string inside an emoji writes a lone surrogate
    # escape; decoded by json.loads it stayed a lone surrogate, in a returned file's path, and
    # no report could encode the record: the whole run failed on this one transcript.
    r = Rollout("current", "shell")
    text = explore_text(["lib/a.py"]) + "\n**`lib/b\\ud83d.py`**\nbody\n"
    raw = json.dumps({"content": [{"type": "text", "text": "TEXT"}], "isError": False})
    raw = raw.replace('"TEXT"', json.dumps(text).replace("\\\\ud83d", "\\ud83d"))
    assert "\\ud83d" in raw and "\\\\ud83d" not in raw  # a JSON escape, not an escaped backslash
    r.step(r.explore(), outputs=[{"text": "", "raw": raw}])
    r.step(r.shell("cat lib/a.py"))
    root = pytester.path / "c" / "with"
    root.mkdir(parents=True)
    r.write(root / "rollout-2026-03-01T10-00-00-0199.jsonl")
    result = pytester.runpytest(f"--explore-suff={pytester.path / 'c'}", "-p", "no:cacheprovider")
    assert result.ret == 0, result.stdout.str()
    [rec] = report(pytester)["transcripts"]
    assert rec["status"] == "classified" and rec["allocation"]["calls"][0]["files"] == 2
    assert "lib/b\ufffd.py" in json.dumps(rec["allocation"], ensure_ascii=False)


def test_codex_query_and_d8(rollout, tmp_path):
    spec = ToolSpec(explore="get-library-docs", family="context7")
    rollout.step(rollout.explore("how routing works"), outputs=[explore_text()])
    rollout.step(rollout.call("mcp__context7__get-library-docs", context7CompatibleLibraryID="/x/y",
                              libraryName="react"), outputs=["docs"])  # fmt: skip
    verdict, _ = codex(rollout, tmp_path, spec)
    assert [c.query for c in verdict.calls] == ["react"]
    verdict, _ = codex(rollout, tmp_path)
    assert verdict.calls[0].query == "how routing works"


def test_codex_raced_only_for_a_family_call(rollout, tmp_path):
    rollout.step(rollout.call("mcp__happy__change_title", title="x"), outputs=["No such tool available: x"])
    assert codex(rollout, tmp_path)[0].raced is False
    rollout.step(
        rollout.explore(), outputs=["Error: No such tool available: mcp__codegraph__codegraph_explore"]
    )
    verdict, _ = codex(rollout, tmp_path)
    assert verdict.raced is True


def test_codex_tool_counts_are_the_calls_of_the_log_not_their_ui_mirrors(rollout, tmp_path):
    rollout.user("where is f?")
    rollout.step(rollout.explore(), rollout.shell("ls lib"), outputs=[explore_text(["lib/a.py"]), "a.py"])
    rollout.step(rollout.shell("sed -n 1,5p lib/a.py"), rollout.call("update_plan", plan=[]))
    rollout.step(rollout.patch())
    rollout.step(rollout.call("mcp__codegraph__codegraph_node", symbol="f"))
    rollout.finish()
    _, collector = codex(rollout, tmp_path)
    assert collector.tools == {"explore": 1, "read": 0, "search": 0, "bash": 2, "other": 3}
    assert sum(len(actions) for actions in collector.threads.values()) == 6


def test_codex_runs_have_turns_tokens_and_duration_but_no_cost(tmp_path):
    r = Rollout("current", "exec_command")
    r.step(r.explore(), outputs=[explore_text(["lib/a.py"])])
    r.step(r.shell("cat lib/a.py"))
    r.finish()
    _, collector = codex(r, tmp_path)
    [run] = collector.runs
    assert run["num_turns"] == 3  # two responses with calls, then the answer
    assert run["tokens"] == 2000
    assert run["total_cost_usd"] is None
    assert isinstance(run["duration_ms"], int) and run["duration_ms"] > 0


def test_codex_non_openai_call_ids(tmp_path):
    r = Rollout("current", "shell", call_ids="functions")
    e = r.explore()
    assert e["call_id"].startswith("functions.")
    r.step(e, outputs=[explore_text(["lib/a.py"])])
    r.step(r.shell("sed -n '1,80p' lib/a.py"))
    verdict, _ = codex(r, tmp_path)
    assert only(verdict) == ("read_returned", "Bash Read a.py")


def test_codex_spawn_agent_without_its_child_is_moved_on_with_a_warning_naming_the_call(tmp_path):
    # D9: only when every link fails (here: no child rollout at all).
    r = Rollout("current", "exec_command")
    r.step(r.explore(), outputs=[explore_text(["lib/a.py"])])
    spawn = r.call("spawn_agent", message="look at lib/a.py")
    r.step(spawn)
    verdict, collector = codex(r, tmp_path)
    assert only(verdict) == ("sufficient", "spawn_agent")
    assert any(f"spawn_agent call {spawn['call_id']}" in w for w in collector.warnings)


def test_codex_a_resumed_rollout_replaying_a_call_keeps_the_first(tmp_path):
    r = Rollout("current", "shell_command")
    e = r.explore()
    r.step(e, outputs=[explore_text(["lib/a.py"])])
    r.lines.append(r.lines[2])  # the explore call written again
    r.step(r.shell("cat lib/a.py"))
    verdict, collector = codex(r, tmp_path)
    assert only(verdict) == ("read_returned", "Bash Read a.py")
    assert collector.tools["explore"] == 1


def test_codex_big_outputs_count_in_the_parents_window_and_still_split_responses(tmp_path):
    # The parent's every output is decoded now (occupancy counts it, in its call's family);
    # an output still ends a model response, so the next call is a reaction.
    r = Rollout("current", "shell")
    r.step(r.explore(), outputs=[explore_text(["lib/a.py"])])
    r.step(r.shell("cat lib/zzz.py"), outputs=["x" * 200_000])
    r.step(r.shell("cat lib/a.py"), reasoning=False)
    path = r.write(tmp_path / "rollout-x.jsonl")
    verdict, collector = judge("codex", [path])
    assert collector.skipped_results == 0
    assert only(verdict) == ("read_missed", "Bash Read zzz.py")
    collector.timeline.settle()  # no token counts here: every addition is in one gap
    results = [n for g in collector.timeline.gaps for _, n in g.results] + [
        n for _, n in collector.timeline.pending_results + collector.timeline.before_first
    ]
    assert 200_000 in results
    assert judge("codex", [path])[0] == verdict


@pytest.mark.parametrize(
    ("command", "script"),
    [
        (["bash", "-lc", "sed -n '1,80p' x.py"], "sed -n '1,80p' x.py"),
        (["/bin/zsh", "-c", "cat a.py"], "cat a.py"),
        (["rg", "-n", "foo bar", "src"], "rg -n 'foo bar' src"),
        (["powershell.exe", "-Command", "Get-Content", "x.py"], "Get-Content x.py"),
        ("cat a.py", "cat a.py"),
        ([1, 2], ""),
    ],
)
def test_codex_shell_scripts(command, script):
    assert script_of(command) == script


@pytest.mark.parametrize(
    ("payload", "expected"),
    [
        ({"output": "plain"}, ("plain", False)),
        ({"output": json.dumps({"output": "x", "metadata": {"exit_code": 2}})}, ("x", True)),
        ({"output": json.dumps({"output": "x", "metadata": {"exit_code": 0}})}, ("x", False)),
        ({"output": "ok", "success": False}, ("ok", True)),
        (
            {"output": [{"type": "input_text", "text": "a"}, {"type": "input_text", "text": "b"}]},
            ("a\nb", False),
        ),
        ({"output": '{"not": "an output"}'}, ('{"not": "an output"}', False)),
    ],
)
def test_codex_output_shapes(payload, expected):
    assert output_of(payload) == expected


def test_a_codex_file_without_rollout_lines_is_not_a_transcript(tmp_path):
    path = tmp_path / "rollout-x.jsonl"
    path.write_text('{"type": "function_call", "name": "x"}\n{"a": 1}\n')
    with pytest.raises(NotATranscript):
        judge("codex", [path])


# -- Gemini CLI ------------------------------------------------------------------------


def test_gemini_explore_then_explore_again(session, tmp_path):
    session.user("where is f?")
    session.step(session.explore("a"), results=[explore_text(["lib/a.py"])])
    session.step(session.explore("b"), results=[explore_text(["lib/b.py"])])
    session.finish()
    verdict, _ = gemini(session, tmp_path)
    assert [(c.query, c.bucket, c.next) for c in verdict.calls] == [
        ("a", "explore_again", "codegraph_explore"),
        ("b", "sufficient", "(final answer)"),
    ]


@pytest.mark.parametrize(
    ("call", "label"),
    [
        (GeminiSession.call("read_file", file_path="/work/t/lib/a.py"), "Read a.py"),
        (GeminiSession.call("read_file", absolute_path="/work/t/lib/a.py"), "Read a.py"),
        (GeminiSession.call("run_shell_command", command="sed -n '1,80p' lib/a.py"), "Bash Read a.py"),
        (GeminiSession.call("read_many_files", paths=["lib/a.py", "lib/b.py"]), "Read a.py"),
    ],
    ids=["read_file", "read_file-absolute_path", "run_shell_command", "read_many_files"],
)
def test_gemini_read_of_a_returned_file(session, tmp_path, call, label):
    session.step(session.explore(), results=[explore_text(["lib/a.py"])])
    session.step(call)
    verdict, collector = gemini(session, tmp_path)
    assert only(verdict) == ("read_returned", label)
    assert collector.tools["explore"] == 1


def test_gemini_read_of_a_missed_file(session, tmp_path):
    session.step(session.explore(), results=[explore_text(["lib/a.py"], mentioned=["lib/b.py"])])
    session.step(session.call("read_file", file_path="lib/b.py"))
    verdict, _ = gemini(session, tmp_path)
    assert only(verdict) == ("read_missed", "Read b.py (named, not returned)")
    assert verdict.calls[0].named


@pytest.mark.parametrize(
    ("call", "label"),
    [
        (GeminiSession.call("grep_search", pattern="foo"), "Grep"),
        (GeminiSession.call("search_file_content", pattern="foo"), "Grep"),
        (GeminiSession.call("glob", pattern="**/*.py"), "Glob"),
        (GeminiSession.call("list_directory", dir_path="lib"), "Glob"),
        (GeminiSession.call("read_many_files", paths=["lib/**/*.py"]), "Glob"),
        (GeminiSession.call("run_shell_command", command="rg foo"), "Bash search"),
    ],
    ids=["grep_search", "search_file_content", "glob", "list_directory", "read_many_files-glob", "shell"],
)
def test_gemini_search(session, tmp_path, call, label):
    session.step(session.explore(), results=[explore_text(["lib/a.py"])])
    session.step(call)
    verdict, _ = gemini(session, tmp_path)
    assert only(verdict) == ("search", label)


@pytest.mark.parametrize("name", ["replace", "write_file"])
def test_gemini_edits_are_sufficient(session, tmp_path, name):
    session.step(session.explore(), results=[explore_text(["lib/a.py"])])
    session.step(session.call(name, file_path="lib/a.py", old_string="a", new_string="b"))
    verdict, _ = gemini(session, tmp_path)
    assert only(verdict) == ("sufficient", name)


def test_gemini_final_answer(session, tmp_path):
    session.step(session.explore(), results=[explore_text(["lib/a.py"])])
    session.finish("f is in lib/a.py")
    verdict, _ = gemini(session, tmp_path)
    assert only(verdict) == ("sufficient", "(final answer)")


def test_gemini_calls_of_one_message_are_not_reactions_and_count_as_concurrent(session, tmp_path):
    session.step(
        session.explore(),
        session.call("read_file", file_path="lib/z.py"),
        session.call("glob", pattern="*.py"),
        results=[explore_text(["lib/a.py"]), "...", "..."],
    )
    session.step(session.call("replace", file_path="lib/a.py"))
    verdict, _ = gemini(session, tmp_path)
    assert only(verdict) == ("sufficient", "replace")
    assert verdict.concurrent == 2


@pytest.mark.parametrize("agent", ["codex", "gemini"])
def test_later_turns_of_a_codex_or_gemini_run_go_on_in_the_main_thread(agent, tmp_path):
    # A harness that resumes the agent per question writes run-<label>.t2.jsonl, ...: the
    # same session goes on (turn 1's last explore is judged by turn 2's first act), no child.
    turns: list[Rollout | GeminiSession] = []
    if agent == "codex":
        one, two = Rollout(session_id="0199-turns"), Rollout(session_id="0199-turns")
        one.user("where is f?")
        one.step(one.explore("first"), outputs=[explore_text(["lib/a.py"])])
        two.user("and g?")
        two.step(two.shell("sed -n '1,80p' lib/a.py"), outputs=["def f(): pass"])
        two.step(two.explore("second"), outputs=[explore_text(["lib/b.py"])])
        two.step(two.shell("sed -n '1,80p' lib/b.py"), outputs=["def g(): pass"])
        turns = [one, two]
    else:
        one, two = (
            GeminiSession("jsonl", sessionId="5c1d-turns"),
            GeminiSession("jsonl", sessionId="5c1d-turns"),
        )
        one.user("where is f?")
        one.step(one.explore("first"), results=[explore_text(["lib/a.py"])])
        two.user("and g?")
        two.step(two.call("read_file", file_path="lib/a.py"))
        two.step(two.explore("second"), results=[explore_text(["lib/b.py"])])
        two.step(two.call("read_file", file_path="lib/b.py"))
        turns = [one, two]
    for t in turns:
        t.finish()
    files = [
        turns[0].write(tmp_path / f"run-{agent}.jsonl"),
        turns[1].write(tmp_path / f"run-{agent}.t2.jsonl"),
    ]
    [transcript] = discover(str(tmp_path)).transcripts
    assert transcript.files == tuple(str(f) for f in files)
    verdict, collector = judge(agent, transcript.files)
    shell = "Bash " if agent == "codex" else ""
    assert [(c.query, c.thread, c.bucket, c.next) for c in verdict.calls] == [
        ("first", "main", "read_returned", f"{shell}Read a.py"),
        ("second", "main", "read_returned", f"{shell}Read b.py"),
    ]
    assert collector.warnings == []


@pytest.mark.parametrize("code", [127, 0])
@pytest.mark.parametrize("agent", ["codex", "gemini"])
def test_a_codegraph_cli_run_that_failed_does_not_contaminate(agent, code, tmp_path):
    # Current Codex shell tools and Gemini's run_shell_command give the exit code only in
    # their text: "codegraph: command not found" (127) ran nothing of the CLI.
    if agent == "codex":
        r = Rollout("current", "shell_command")
        r.user("where is f?")
        out = f"Exit code: {code}\nWall time: 0.1 seconds\nOutput:\nbash: codegraph: command not found\n"
        r.step(r.shell("codegraph explore 'where is f'"), outputs=[{"text": "", "raw": out}])
        r.finish("f is in lib/a.py")
        verdict, _ = codex(r, tmp_path)
    else:
        s = GeminiSession("session")
        s.user("where is f?")
        out = (
            "Command: codegraph explore 'where is f'\nDirectory: (root)\nOutput: bash: codegraph: "
            f"command not found\nError: (none)\nExit Code: {code}\nSignal: (none)\n"
            "Background PIDs: (none)\nProcess Group PGID: 4242"
        )
        s.step(s.call("run_shell_command", command="codegraph explore 'where is f'"), results=[out])
        s.finish("f is in lib/a.py")
        verdict, _ = gemini(s, tmp_path)
    assert verdict.contaminated is (code == 0)


def test_gemini_write_todos_is_transparent(session, tmp_path):
    session.step(session.explore(), results=[explore_text(["lib/a.py"])])
    session.step(session.call("write_todos", todos=[]))
    session.step(session.call("read_file", file_path="lib/a.py"))
    verdict, _ = gemini(session, tmp_path)
    assert only(verdict) == ("read_returned", "Read a.py")


@pytest.mark.parametrize("result", [("error", "MCP error -32603: boom"), None], ids=["error", "cancelled"])
def test_gemini_errored_explore(session, tmp_path, result):
    session.step(session.explore(), results=[result])
    session.finish()
    verdict, _ = gemini(session, tmp_path)
    assert (verdict.answered, verdict.errored) == (0, 1)


def test_gemini_query_and_d8(session, tmp_path):
    spec = ToolSpec(explore="get-library-docs", family="context7")
    session.step(session.explore("how routing works"), results=[explore_text()])
    session.step(session.call("get-library-docs", libraryName="react"), results=["docs"])
    assert [c.query for c in gemini(session, tmp_path, spec)[0].calls] == ["react"]
    assert gemini(session, tmp_path)[0].calls[0].query == "how routing works"


def test_gemini_raced_only_for_a_family_call(session, tmp_path):
    session.step(session.call("change_title", title="x"), results=[("error", "No such tool available: x")])
    assert gemini(session, tmp_path)[0].raced is False
    session.step(session.explore(), results=[("error", "No such tool available: codegraph_explore")])
    assert gemini(session, tmp_path)[0].raced is True


def test_gemini_tool_counts_are_the_calls_of_the_log(session, tmp_path):
    session.user("where is f?")
    session.step(
        session.explore(), session.call("glob", pattern="*"), results=[explore_text(["lib/a.py"]), "a"]
    )
    session.step(session.call("read_file", file_path="lib/a.py"), session.call("write_todos", todos=[]))
    session.step(session.call("run_shell_command", command="pytest"))
    session.step(session.call("replace", file_path="lib/a.py"))
    session.finish()
    _, collector = gemini(session, tmp_path)
    assert collector.tools == {"explore": 1, "read": 1, "search": 1, "bash": 1, "other": 2}
    [run] = collector.runs
    assert run["num_turns"] == 5
    assert run["tokens"] == (None if session.form == "checkpoint" else 5000)  # checkpoints keep no tokens
    assert run["total_cost_usd"] is None


def test_gemini_codebase_investigator_without_its_child_is_moved_on_with_a_warning(session, tmp_path):
    session.step(session.explore(), results=[explore_text(["lib/a.py"])])
    session.step(session.call("codebase_investigator", objective="find f"))
    verdict, collector = gemini(session, tmp_path)
    assert only(verdict) == ("sufficient", "codebase_investigator")
    assert any("codebase_investigator" in w for w in collector.warnings)


def test_gemini_subagent_session_is_judged_alone_with_a_warning(tmp_path):
    s = GeminiSession("session", kind="subagent")
    s.step(s.explore(), results=[explore_text(["lib/a.py"])])
    s.step(s.call("read_file", file_path="lib/a.py"))
    verdict, collector = gemini(s, tmp_path)
    assert only(verdict) == ("read_returned", "Read a.py")
    assert any("subagent session" in w for w in collector.warnings)


def test_gemini_jsonl_form_reads_the_last_state(tmp_path):
    s = GeminiSession("jsonl")
    s.step(s.explore(), results=[explore_text(["lib/a.py"])])
    s.step(s.call("read_file", file_path="lib/a.py"))
    path = s.write(tmp_path / "session-x.jsonl")
    # The message with the explore was written twice: first without its result.
    assert sum('"executing"' in line for line in path.read_text().splitlines()) == 2
    verdict, collector = judge("gemini", [path])
    assert only(verdict) == ("read_returned", "Read a.py")
    assert collector.tools["explore"] == 1
    # A rewind to the read's message drops it (and what follows).
    read_message = s.messages[-1]["id"]
    with path.open("a") as fh:
        fh.write(json.dumps({"$rewindTo": read_message}) + "\n")
    assert only(judge("gemini", [path])[0]) == ("sufficient", "(final answer)")
    # A $set of the messages replaces the whole list.
    with path.open("a") as fh:
        fh.write(json.dumps({"$set": {"messages": []}}) + "\n")
    assert judge("gemini", [path])[0].calls == []


def test_gemini_document_over_the_size_guard_is_refused(tmp_path, monkeypatch):
    from pytest_explore_suff.readers import Unreadable
    from pytest_explore_suff.readers import gemini as reader

    s = GeminiSession("session")
    s.step(s.explore(), results=[explore_text(["lib/a.py"])])
    path = s.write(tmp_path / "session-x.json")
    monkeypatch.setattr(reader, "MAX_DOCUMENT", 100)
    with pytest.raises(Unreadable, match="over 0 MB"):
        judge("gemini", [path])


def test_a_json_document_that_is_not_a_session_is_not_a_transcript(tmp_path):
    path = tmp_path / "session-x.json"
    path.write_text('{"sessionId": "x"}')
    with pytest.raises(NotATranscript):
        judge("gemini", [path])


# -- discovery -------------------------------------------------------------------------


def mixed_campaign(root: Path) -> Path:
    """The same two questions asked of Claude Code (headless), Codex CLI and Gemini CLI."""
    for q, (returned, read) in enumerate([("lib/a.py", "lib/a.py"), ("lib/b.py", "lib/c.py")], 1):
        r = Run(f"claude-{q}")
        r.step(r.explore(f"question {q}"), response([returned]))
        r.step(r.use("Read", file_path=f"/work/t/{read}"), "...")
        r.finish("answer")
        r.write(root / f"q{q}" / "run-claude.jsonl")
        c = Rollout("current", "exec_command")
        c.step(c.explore(f"question {q}"), outputs=[explore_text([returned])])
        c.step(c.shell(f"sed -n '1,80p' {read}"))
        c.finish()
        c.write(root / f"q{q}" / "codex" / f"rollout-2026-03-01T10-0{q}-00-0199.jsonl")
        g = GeminiSession("session")
        g.step(g.explore(f"question {q}"), results=[explore_text([returned])])
        g.step(g.call("read_file", file_path=read))
        g.finish()
        g.write(root / f"q{q}" / "gemini" / "chats" / f"session-2026-03-01T10-0{q}-5c1d.json")
    (root / "q1" / "gemini" / "logs.json").write_text(
        '[{"sessionId": "5c1d", "type": "user", "message": "q"}]'
    )
    (root / "q1" / "mcp-new.json").write_text('{"mcpServers": {}}')
    old = GeminiSession("checkpoint")
    old.step(old.explore("question 1"), results=[explore_text(["lib/a.py"])])
    old.step(old.call("read_file", file_path="lib/a.py"))
    old.write(root / "q1" / "gemini" / "checkpoint-before-refactor.json")
    return root


def test_discovery_tells_the_agents_apart_by_content(tmp_path):
    campaign = discover(str(mixed_campaign(tmp_path / "c")))
    got = {t.path: (t.kind, t.agent, t.arm) for t in campaign.transcripts}
    assert got == {
        "q1/run-claude.jsonl": ("stream-json", "claude", "claude"),
        "q2/run-claude.jsonl": ("stream-json", "claude", "claude"),
        "q1/codex/rollout-2026-03-01T10-01-00-0199.jsonl": ("codex", "codex", "codex"),
        "q2/codex/rollout-2026-03-01T10-02-00-0199.jsonl": ("codex", "codex", "codex"),
        "q1/gemini/chats/session-2026-03-01T10-01-5c1d.json": ("gemini", "gemini", "gemini"),
        "q2/gemini/chats/session-2026-03-01T10-02-5c1d.json": ("gemini", "gemini", "gemini"),
        "q1/gemini/checkpoint-before-refactor.json": ("gemini", "gemini", "gemini"),
    }
    reasons = {i["path"]: i["reason"] for i in campaign.ignored}
    assert set(reasons) == {"q1/gemini/logs.json", "q1/mcp-new.json"}
    assert "prompt log" in reasons["q1/gemini/logs.json"]
    assert "not a Gemini CLI session" in reasons["q1/mcp-new.json"]


def test_the_pattern_names_the_agent_and_the_arm(tmp_path):
    import re

    root = mixed_campaign(tmp_path / "c")
    pattern = re.compile(r"(?P<agent>codex|gemini)/")
    campaign = discover(str(root), pattern)
    codex_t = next(t for t in campaign.transcripts if t.kind == "codex")
    assert (codex_t.agent, codex_t.arm) == ("codex", "codex")
    pattern = re.compile(r"q(?P<run>\d)/(?P<arm>codex)")
    campaign = discover(str(root), pattern)
    codex_t = next(t for t in campaign.transcripts if t.kind == "codex")
    assert (codex_t.arm, codex_t.run, codex_t.agent) == ("codex", "1", "codex")
    pattern = re.compile(r"(?P<agent>gemini)/(?P<arm>chats)")
    gem = [t for t in discover(str(root), pattern).transcripts if t.kind == "gemini"]
    assert {(t.agent, t.arm) for t in gem} == {("gemini", "chats"), ("gemini", "gemini")}


def test_a_stray_claude_subagent_meta_json_is_listed_as_one(tmp_path):
    root = tmp_path / "c"
    sub = root / "s" / "subagents"
    sub.mkdir(parents=True)
    (sub / "agent-a1.meta.json").write_text('{"agentType": "x"}')
    r = Run("s")
    r.step(r.explore(), response(["lib/a.py"]))
    r.write(root / "run-x.jsonl")
    # No subagent transcript beside it: a stray sidecar, listed as one (the report accounts for every file).
    assert discover(str(root)).ignored == [
        {"path": "s/subagents/agent-a1.meta.json",
         "reason": "a subagent's sidecar with no subagent transcript beside it, not read"},
    ]  # fmt: skip


# -- end to end ------------------------------------------------------------------------


def every_file(root: Path) -> set[str]:
    return {p.relative_to(root).as_posix() for p in root.rglob("*") if p.is_file()}


def test_a_mixed_campaign_gives_one_summary_with_a_column_per_agent(pytester):
    root = mixed_campaign(pytester.path / "c")
    result = pytester.runpytest(f"--explore-suff={root}", "-p", "no:cacheprovider")
    result.assert_outcomes(passed=7, warnings=0)
    result.stdout.re_match_lines([r"\s+claude\s+codex\s+gemini\s+\(pooled\)"])
    result.stdout.fnmatch_lines(["transcripts*2*2*3*7*", "answered calls*2*2*3*7*"])
    doc = report(pytester)
    assert listed(doc) == every_file(root)
    agents = {r["path"]: (r["agent"], r["kind"]) for r in doc["transcripts"]}
    assert agents["q1/codex/rollout-2026-03-01T10-01-00-0199.jsonl"] == ("codex", "codex")
    arms = doc["arms"]
    assert {a: arms[a]["counts"]["read_returned"] for a in arms} == {"claude": 1, "codex": 1, "gemini": 2}
    assert {a: arms[a]["counts"]["read_missed"] for a in arms} == {"claude": 1, "codex": 1, "gemini": 1}
    assert arms["codex"]["figures"]["bash_calls"] == 1.0
    assert arms["gemini"]["figures"]["read_calls"] == 1.0
    assert arms["codex"]["figures"]["tokens"] == 2000.0
    assert "tokens" not in arms["claude"]["figures"]


def test_k_codex_selects_the_codex_transcripts(pytester):
    root = mixed_campaign(pytester.path / "c")
    result = pytester.runpytest(f"--explore-suff={root}", "-k", "codex", "-p", "no:cacheprovider")
    result.assert_outcomes(passed=2, deselected=5)
    assert {r["agent"] for r in report(pytester)["transcripts"]} == {"codex"}


def test_a_mixed_campaign_reads_the_same_under_xdist(pytester):
    root = mixed_campaign(pytester.path / "c")
    pytester.runpytest(f"--explore-suff={root}", "--explore-suff-json=plain.json", "-p", "no:cacheprovider")
    result = pytester.runpytest(
        f"--explore-suff={root}", "-n", "2", "--explore-suff-json=dist.json", "-p", "no:cacheprovider"
    )
    result.assert_outcomes(passed=7)
    assert (pytester.path / "plain.json").read_bytes() == (pytester.path / "dist.json").read_bytes()


def test_a_mixed_campaign_inside_a_zip(pytester):
    root = mixed_campaign(pytester.path / "c")
    pytester.runpytest(f"--explore-suff={root}", "--explore-suff-json=dir.json", "-p", "no:cacheprovider")
    archive = pytester.path / "c.zip"
    with zipfile.ZipFile(archive, "w") as zf:
        for path in sorted(root.rglob("*")):
            if path.is_file():
                zf.write(path, "c/" + path.relative_to(root).as_posix())
    result = pytester.runpytest(
        f"--explore-suff={archive}", "--explore-suff-json=zip.json", "-p", "no:cacheprovider"
    )
    result.assert_outcomes(passed=7)
    doc = report(pytester, "zip.json")
    assert listed(doc) == every_file(root)
    plain = report(pytester, "dir.json")
    strip = ("path", "files", "warnings")
    assert [{k: v for k, v in r.items() if k not in strip} for r in doc["transcripts"]] == [
        {k: v for k, v in r.items() if k not in strip} for r in plain["transcripts"]
    ]
    assert doc["arms"] == plain["arms"]


def test_codex_transcripts_are_listed_with_their_agent_in_verbose_output(pytester):
    root = pytester.path / "c"
    r = Rollout("mid-2025", "shell")
    r.step(r.explore(), outputs=[explore_text(["lib/a.py"])])
    r.step(r.shell("cat lib/a.py"))
    r.write(root / "rollout-2025-07-01T10-00-00-0197.jsonl")
    result = pytester.runpytest(f"--explore-suff={root}", "-v", "-p", "no:cacheprovider")
    result.assert_outcomes(passed=1)
    [rec] = report(pytester)["transcripts"]
    assert (rec["kind"], rec["agent"], rec["arm"], rec["counts"]["read_returned"]) == (
        "codex",
        "codex",
        "codex",
        1,
    )
    assert CODEX_EXPLORE in json.dumps(r.lines)
