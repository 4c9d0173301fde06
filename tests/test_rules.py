"""The reaction table row by row, D4/D5, path equality, transcript flags, and configuration."""

from __future__ import annotations

import time

import pytest
from builders import response
from hypothesis import given, settings
from hypothesis import strategies as st

from pytest_explore_suff import ToolSpec
from pytest_explore_suff.classify import PATH_TOKEN, names_file, norm_path, path_tokens, same_file, short_name


def only(verdict):
    assert verdict.answered == 1, verdict
    return verdict.calls[0]


@pytest.mark.parametrize(
    ("tool", "label"),
    [
        ("mcp__codegraph__codegraph_explore", "codegraph_explore"),
        ("mcp__codegraph__codegraph_callers", "codegraph_callers"),
        ("mcp__plugin_codegraph_codegraph__codegraph_node", "codegraph_node"),
        ("mcp__code_graph__codegraph_search", "codegraph_search"),
    ],
)
def test_any_codegraph_tool_next_is_explore_again_labelled_without_its_prefix(run, verdict_of, tool, label):
    run.step(run.explore(), response(["lib/a.js"]))
    run.step(run.use(tool, symbol="x"), "**`lib/b.js`**")
    first = verdict_of(run).calls[0]
    assert (first.bucket, first.next) == ("explore_again", label)


def test_a_notebook_read_counts_as_a_read(run, verdict_of):
    run.step(run.explore(), response(["nb/analysis.ipynb"]))
    run.step(run.use("NotebookRead", notebook_path="/work/nb/analysis.ipynb"))
    call = only(verdict_of(run))
    assert (call.bucket, call.next) == ("read_returned", "Read analysis.ipynb")


@pytest.mark.parametrize(
    ("command", "bucket", "label"),
    [
        ("cat lib/a.js | grep y", "read_returned", "Bash Read a.js"),
        (
            "cd /r && nl -ba lib/b.js | sed -n '100,140p'",
            "read_missed",
            "Bash Read b.js (named, not returned)",
        ),
        ("head -50 lib/zzz.js 2>/dev/null", "read_missed", "Bash Read zzz.js"),
        ("rg -n send lib", "search", "Bash search"),
        ("git grep -n send", "search", "Bash search"),
        ("ls -la lib", "search", "Bash search"),
        ("sed -i 's/a/b/' lib/a.js", "sufficient", "Bash"),
        ("npm test 2>&1 | tail -20", "sufficient", "Bash"),
        ("cat lib/a.js > /tmp/copy.js", "sufficient", "Bash"),
    ],
)
def test_bash_is_judged_by_its_shell_intent(run, verdict_of, command, bucket, label):
    run.step(run.explore(), response(["lib/a.js"], mentioned=["lib/b.js"]))
    run.step(run.use("Bash", command=command))
    call = only(verdict_of(run))
    assert (call.bucket, call.next) == (bucket, label)


def test_task_is_a_delegation_like_agent(run, verdict_of):
    run.step(run.explore(), response(["lib/a.js"]))
    task = run.use("Task", prompt="p", description="d")
    run.message(task)
    run.step(run.use("Read", file_path="lib/c.js"), parent=task["id"])
    run.result(task, "done")
    call = only(verdict_of(run))
    assert (call.bucket, call.next) == ("read_missed", "Task → Read c.js")


def test_a_subagent_that_runs_no_qualifying_tool_leaves_the_call_sufficient(run, verdict_of):
    run.step(run.explore(), response(["lib/a.js"]))
    agent = run.use("Agent", prompt="p", description="d")
    run.message(agent)
    run.step(run.use("TodoWrite", todos=[]), parent=agent["id"])
    run.result(agent, "done")
    call = only(verdict_of(run))
    assert (call.bucket, call.next) == ("sufficient", "Agent")


def test_a_nested_delegation_is_stepped_over_for_the_subagents_next_action(run, verdict_of):
    run.step(run.explore(), response(["lib/a.js"]))
    outer = run.use("Agent", prompt="p", description="d")
    run.message(outer)
    inner = run.use("Task", prompt="q", description="e")
    run.message(inner, parent=outer["id"])
    run.step(run.use("Glob", pattern="*"), parent=inner["id"])
    run.step(run.use("Grep", pattern="x"), parent=outer["id"])
    call = only(verdict_of(run))
    assert (call.bucket, call.next) == ("search", "Agent → Grep")


def test_a_delegation_judges_against_the_parents_earlier_files(run, verdict_of):
    run.step(run.explore("one"), response(["lib/old.js"]))
    run.step(run.explore("two"), response(["lib/a.js"]))
    agent = run.use("Agent", prompt="p", description="d")
    run.message(agent)
    run.step(run.use("Bash", command="sed -n 1,9p lib/old.js"), parent=agent["id"])
    verdict = verdict_of(run)
    assert verdict.calls[1].next == "Agent → Bash Read old.js (returned by an earlier explore)"


def test_errored_calls_add_nothing_to_the_earlier_files(run, verdict_of):
    run.step(run.explore("broken"), response(["lib/x.js"]), is_error=True)
    run.step(run.explore("ok"), response(["lib/a.js"]))
    run.step(run.use("Read", file_path="lib/x.js"))
    verdict = verdict_of(run)
    assert (verdict.errored, verdict.calls[0].bucket) == (1, "read_missed")


PERSISTED = (
    "<persisted-output>\nOutput too large (61.3KB). Full output saved to: "
    "/root/.claude/projects/-r/abc/tool-results/mcp-codegraph-1.txt\n\nPreview (first 2KB):\n"
    + response(["lib/a.js"])
    + "\n...\n</persisted-output>"
)


@pytest.mark.parametrize(
    "reader",
    [
        {"name": "Read", "file_path": "/root/.claude/projects/-r/abc/tool-results/mcp-codegraph-1.txt"},
        {
            "name": "Bash",
            "command": "sed -n 200,400p /root/.claude/projects/-r/abc/tool-results/mcp-codegraph-1.txt",
        },
    ],
)
def test_reading_a_persisted_response_is_reading_our_own_output(run, verdict_of, reader):
    run.step(run.explore(), PERSISTED)
    name = reader.pop("name")
    run.step(run.use(name, **reader))
    run.step(run.use("Read", file_path="lib/a.js"))
    call = only(verdict_of(run))
    assert (call.bucket, call.next, call.truncated, call.files) == ("read_returned", "Read a.js", True, 1)


@pytest.mark.parametrize(
    "saved",
    [
        "/Users/John Smith/.claude/projects/-r/abc/tool-results/toolu_01Big.txt",
        "C:\\Users\\John Smith\\.claude\\projects\\-r\\abc\\tool-results\\toolu_01Big.txt",
    ],
)
def test_a_saved_response_path_with_a_space_is_read_to_the_end_of_its_line(run, verdict_of, saved):
    stub = PERSISTED.replace("/root/.claude/projects/-r/abc/tool-results/mcp-codegraph-1.txt", saved)
    run.step(run.explore(), stub)
    run.step(run.use("Read", file_path=saved))
    run.step(run.use("Read", file_path="lib/a.js"))
    call = only(verdict_of(run))
    assert (call.bucket, call.next, call.truncated) == ("read_returned", "Read a.js", True)


def test_a_replayed_tool_use_is_the_same_action(run, verdict_of):
    explore = run.explore()
    run.message(explore, msg_id="msg_A")
    run.result(explore, response(["lib/a.js"]))
    run.step(run.use("Grep", pattern="x"))
    run.message(explore, msg_id="msg_B")  # a resumed session replays the explore line
    verdict = verdict_of(run)
    assert (verdict.answered, verdict.calls[0].bucket) == (1, "search")


def test_a_block_without_a_message_id_is_its_own_message(run, verdict_of):
    explore, read = run.explore(), run.use("Read", file_path="lib/a.js")
    for block in (explore, read):
        run.events.append(
            {
                "type": "assistant",
                "message": {"role": "assistant", "content": [block]},
                "parent_tool_use_id": None,
                "session_id": "s",
            }
        )
    run.result(explore, response(["lib/a.js"]))
    verdict = verdict_of(run)
    assert (verdict.concurrent, verdict.calls[0].bucket) == (0, "read_returned")


def test_a_response_given_as_text_blocks_is_joined(run, verdict_of):
    run.step(
        run.explore(), [{"type": "text", "text": "## Flow"}, {"type": "text", "text": "**`lib/a.js`**\nx"}]
    )
    run.step(run.use("Read", file_path="lib/a.js"))
    assert only(verdict_of(run)).bucket == "read_returned"


def test_a_query_is_kept_whole_and_an_absent_one_is_empty(run, verdict_of):
    run.step(run.use("mcp__codegraph__codegraph_explore", maxFiles=3), response(["lib/a.js"]))
    assert only(verdict_of(run)).query == ""


@pytest.mark.parametrize(
    ("a", "b", "same"),
    [
        ("/private/tmp/t-base/lib/response.js", "lib/response.js", True),
        ("./lib/response.js", "lib/response.js", True),
        ("lib\\response.js", "lib/response.js", True),
        ("lib/response.js", "response.js", True),
        ("lib/xresponse.js", "response.js", False),
        ("lib/response.js", "lib/response.jsx", False),
        ("", "lib/a.js", False),
    ],
)
def test_path_equality(a, b, same):
    from pytest_explore_suff.classify import norm_path

    assert same_file(norm_path(a), norm_path(b)) is same


def test_short_name_strips_only_an_mcp_prefix():
    assert short_name("Edit") == "Edit"
    assert short_name("mcp__x__tool_name") == "tool_name"


def test_a_no_such_tool_result_marks_the_run_raced(run, verdict_of):
    run.step(run.explore(), "Error: No such tool available: mcp__codegraph__codegraph_explore", is_error=True)
    verdict = verdict_of(run)
    assert (verdict.raced, verdict.errored) == (True, 1)


@pytest.mark.parametrize(
    ("command", "is_error", "contaminated"),
    [
        ("codegraph explore 'send'", False, True),
        ("cd /r && ./node_modules/.bin/codegraph query x", False, True),
        ("codegraph explore 'send'", True, False),
        ("grep codegraph src/", False, False),
        ("ls .codegraph", False, False),
        ("which codegraph", False, False),
    ],
)
def test_a_bash_run_of_the_codegraph_cli_that_got_output_contaminates(
    run, verdict_of, command, is_error, contaminated
):
    run.step(run.use("Bash", command=command), "output", is_error=is_error)
    assert verdict_of(run).contaminated is contaminated


def test_another_retrieval_tool_can_be_judged(run, verdict_of):
    spec = ToolSpec(explore="search_code", family="mytool", marker=r"^=== (\S+) ===$")
    run.step(run.use("mcp__mytool__search_code", query="q"), "=== src/a.py ===\ncode")
    run.step(run.use("mcp__mytool__search_code", query="q2"), "=== src/b.py ===\ncode")
    run.step(run.use("Read", file_path="/r/src/a.py"))
    verdict = verdict_of(run, spec=spec)
    assert [(c.bucket, c.next) for c in verdict.calls] == [
        ("explore_again", "search_code"),
        ("read_returned", "Read a.py (returned by an earlier explore)"),
    ]


@settings(max_examples=300, deadline=None)
@given(st.text(alphabet="ab./-_@+1 \nxZ:", max_size=40))
def test_the_linear_path_scanner_finds_exactly_what_the_regex_finds(text):
    assert path_tokens(text) == PATH_TOKEN.findall(text)


@settings(max_examples=500, deadline=None)
@given(st.text(alphabet="ab./-_@+1 \nxZ:", max_size=40), st.text(alphabet="ab./-_1xZ é\\", max_size=12))
def test_names_file_agrees_with_every_path_token_of_the_text(text, path):
    path = norm_path(path)
    assert names_file(text, path) == any(same_file(path, norm_path(t)) for t in PATH_TOKEN.findall(text))


def test_names_file_finds_the_file_in_a_run_with_several_of_its_names():
    text = "see x/a.py,b/a.py and ./lib/a.py; not lib/a.pyc"
    assert names_file(text, "lib/a.py")
    assert names_file(text, "/repo/lib/a.py")
    assert not names_file(text, "src/a.py")
    assert not names_file("lib/a.pyc", "lib/a.py")


def test_the_path_scanner_is_linear_on_a_long_run_of_path_characters():
    started = time.perf_counter()
    assert path_tokens("data:/" + "x" * 200_000 + " " + "a/" * 20_000) == []
    assert not names_file("data:/" + "x" * 200_000 + " " + "a/" * 20_000, "a/x")
    assert time.perf_counter() - started < 1.0  # the plain regex takes about a minute here
