"""The 14 behaviours the reference's self-test pins down, one test each,
then every row of the reaction table."""

from __future__ import annotations

from builders import response

RESPONSE = "/private/tmp/t-base/lib/response.js"


def only_call(verdict):
    assert verdict.answered == 1, verdict
    return verdict.calls[0]


def test_an_explore_followed_by_an_explore_is_explore_again(run, verdict_of):
    e1 = run.step(run.explore("first"), response(["lib/a.js"]))
    run.step(run.explore("second"), response(["lib/b.js"]))
    v = verdict_of(run)
    assert v.calls[0].id == e1["id"]
    assert (v.calls[0].bucket, v.calls[0].next) == ("explore_again", "codegraph_explore")


def test_a_read_of_a_returned_file_by_absolute_path_is_allocation(run, verdict_of):
    run.step(run.explore(), response(["lib/response.js"]))
    run.step(run.use("Read", file_path=RESPONSE), "source")
    call = only_call(verdict_of(run))
    assert (call.bucket, call.next, call.named) == ("read_returned", "Read response.js", False)


def test_a_read_of_a_file_named_but_not_returned_is_recall_and_named(run, verdict_of):
    run.step(run.explore(), response(["lib/response.js"], mentioned=["lib/utils.js"]))
    run.step(run.use("Read", file_path="/repo/lib/utils.js"))
    call = only_call(verdict_of(run))
    assert (call.bucket, call.next, call.named) == (
        "read_missed",
        "Read utils.js (named, not returned)",
        True,
    )


def test_a_read_of_a_never_mentioned_file_is_recall_not_named(run, verdict_of):
    run.step(run.explore(), response(["lib/response.js"], mentioned=["lib/utils.js"]))
    run.step(run.use("Read", file_path="/repo/lib/view.js"))
    call = only_call(verdict_of(run))
    assert (call.bucket, call.next, call.named) == ("read_missed", "Read view.js", False)


def test_grep_and_glob_are_search(run, verdict_of):
    run.step(run.explore("a"), response(["lib/a.js"]))
    run.step(run.use("Grep", pattern="send"))
    run.step(run.explore("b"), response(["lib/a.js"]))
    run.step(run.use("Glob", pattern="**/*.js"))
    v = verdict_of(run)
    assert [(c.bucket, c.next) for c in v.calls] == [("search", "Grep"), ("search", "Glob")]


def test_a_sed_range_of_a_returned_file_is_allocation(run, verdict_of):
    run.step(run.explore(), response(["lib/response.js"]))
    run.step(run.use("Bash", command="sed -n '100,200p' lib/response.js"))
    call = only_call(verdict_of(run))
    assert (call.bucket, call.next) == ("read_returned", "Bash Read response.js")


def test_a_recursive_grep_in_bash_is_search(run, verdict_of):
    run.step(run.explore(), response(["lib/response.js"]))
    run.step(run.use("Bash", command="grep -rn send lib/"))
    call = only_call(verdict_of(run))
    assert (call.bucket, call.next) == ("search", "Bash search")


def test_a_heredoc_write_is_sufficient(run, verdict_of):
    run.step(run.explore(), response(["lib/response.js"]))
    run.step(run.use("Bash", command="cat > /tmp/note.md <<'EOF'\nlib/response.js is it\nEOF"))
    call = only_call(verdict_of(run))
    assert (call.bucket, call.next) == ("sufficient", "Bash")


def test_npm_test_and_edit_are_sufficient(run, verdict_of):
    run.step(run.explore("a"), response(["lib/a.js"]))
    run.step(run.use("Bash", command="npm test"))
    run.step(run.explore("b"), response(["lib/a.js"]))
    run.step(run.use("Edit", file_path="lib/a.js", old_string="x", new_string="y"))
    v = verdict_of(run)
    assert [(c.bucket, c.next) for c in v.calls] == [("sufficient", "Bash"), ("sufficient", "Edit")]


def test_no_further_tool_call_is_a_final_answer(run, verdict_of):
    run.step(run.explore(), response(["lib/a.js"]))
    run.finish()
    call = only_call(verdict_of(run))
    assert (call.bucket, call.next) == ("sufficient", "(final answer)")


def test_a_read_in_the_same_message_is_concurrent_not_a_reaction(run, verdict_of):
    explore = run.explore()
    read = run.use("Read", file_path="lib/a.js")
    run.message(explore, read)
    run.result(explore, response(["lib/a.js"]))
    run.result(read, "source")
    run.step(run.use("Edit", file_path="lib/a.js"))
    v = verdict_of(run)
    assert (v.calls[0].bucket, v.calls[0].next, v.concurrent) == ("sufficient", "Edit", 1)


def test_todowrite_is_stepped_over(run, verdict_of):
    run.step(run.explore(), response(["lib/response.js"]))
    run.step(run.use("TodoWrite", todos=[]))
    run.step(run.use("ToolSearch", query="select:Read"))
    run.step(run.use("Read", file_path="lib/response.js"))
    call = only_call(verdict_of(run))
    assert (call.bucket, call.next) == ("read_returned", "Read response.js")


def test_the_task_tools_that_replace_todowrite_are_stepped_over(run, verdict_of):
    # Claude Code 2.1.16+ keeps its task list with these four instead of TodoWrite.
    run.step(run.explore(), response(["lib/response.js"]))
    run.step(run.use("TaskCreate", subject="find send", description="where is send"))
    run.step(run.use("TaskUpdate", taskId="1", status="in_progress"))
    run.step(run.use("TaskList"))
    run.step(run.use("TaskGet", taskId="1"))
    run.step(run.use("Grep", pattern="send"))
    call = only_call(verdict_of(run))
    assert (call.bucket, call.next) == ("search", "Grep")


def test_a_file_an_earlier_explore_returned_is_still_allocation(run, verdict_of):
    run.step(run.explore("one"), response(["lib/a.js", "lib/b.js"]))
    run.step(run.explore("two"), response(["lib/a.js"]))
    run.step(run.use("Read", file_path="/r/lib/b.js"))
    v = verdict_of(run)
    assert v.calls[1].bucket == "read_returned"
    assert v.calls[1].next == "Read b.js (returned by an earlier explore)"


def test_a_delegation_is_judged_by_the_subagents_first_action(run, verdict_of):
    run.step(run.explore(), response(["lib/a.js"]))
    agent = run.use("Agent", prompt="find the nonce", description="d")
    run.message(agent)
    run.step(run.use("Bash", command="grep -rn nonce lib/"), parent=agent["id"])
    run.result(agent, "found it")
    call = only_call(verdict_of(run))
    assert (call.bucket, call.next) == ("search", "Agent → Bash search")


def test_explores_inside_a_subagent_are_judged_in_their_own_thread(run, verdict_of):
    agent = run.use("Agent", prompt="look", description="d")
    run.message(agent)
    sub = run.explore("sub q")
    run.step(sub, response(["lib/response.js"]), parent=agent["id"])
    run.step(run.explore("parent q"), response(["lib/x.js"]))
    run.step(run.use("Read", file_path="lib/response.js"), parent=agent["id"])
    run.result(agent, "done")
    run.finish()
    v = verdict_of(run)
    by_query = {c.query: c for c in v.calls}
    assert v.answered == 2
    assert (by_query["parent q"].bucket, by_query["parent q"].thread) == ("sufficient", "main")
    assert (by_query["sub q"].bucket, by_query["sub q"].thread) == ("read_returned", agent["id"])


def test_an_errored_explore_is_counted_not_bucketed(run, verdict_of):
    run.step(run.explore(), "boom", is_error=True)
    run.step(run.use("Read", file_path="lib/a.js"))
    v = verdict_of(run)
    assert (v.answered, v.errored, sum(v.counts.values())) == (0, 1, 0)


def test_an_explore_that_never_got_a_response_is_errored(run, verdict_of):
    run.message(run.explore())
    v = verdict_of(run)
    assert (v.answered, v.errored) == (0, 1)
