"""The bookkeeping list, the basename rule and concurrent accesses counted once.

The contract: ``ToolSearch`` and ``TodoWrite`` are transparent, and so are the
other agents' equivalents (Codex ``update_plan``, Gemini ``write_todos`` and
``update_topic``) and the subagent control calls of D9 (``wait``,
``wait_agent``, ``close_agent``). A label's basename is the last non-empty
path component. A same-message file access is concurrent once, however many
explore calls share its message.
"""

from __future__ import annotations

import json

import pytest
from agent_shapes import GeminiSession, Rollout, explore_text
from builders import response

from pytest_explore_suff import judge


def _only(verdict):
    [call] = verdict.calls
    return call.bucket, call.next


@pytest.mark.parametrize(
    ("name", "args"),
    [
        ("update_plan", {"plan": [{"step": "read", "status": "in_progress"}]}),
        ("wait", {"ids": ["019a-child"], "timeout_ms": 30000}),
        ("wait_agent", {"targets": ["019a-child"]}),
        ("close_agent", {"id": "019a-child"}),
    ],
)
def test_codex_bookkeeping_is_transparent(name, args, tmp_path):
    r = Rollout("current", "exec_command")
    r.step(r.explore(), outputs=[explore_text(["lib/a.py"])])
    r.step(r.call(name, **args), outputs=[json.dumps({"status": {}, "timed_out": True})])
    r.step(r.shell("cat lib/a.py"))
    r.finish()
    verdict, _ = judge("codex", [r.write(tmp_path / "rollout-x.jsonl")])
    assert _only(verdict) == ("read_returned", "Bash Read a.py")


def test_codex_bookkeeping_in_the_multi_agent_namespace_is_transparent(tmp_path):
    r = Rollout("current", "exec_command")
    r.step(r.explore(), outputs=[explore_text(["lib/a.py"])])
    wait = r.call("wait_agent", targets=["x"])
    wait["namespace"] = "multi_agent_v1"
    r.step(wait)
    r.step(r.shell("rg -n f lib"))
    verdict, _ = judge("codex", [r.write(tmp_path / "rollout-x.jsonl")])
    assert _only(verdict) == ("search", "Bash search")


@pytest.mark.parametrize("form", ["session", "checkpoint", "jsonl"])
@pytest.mark.parametrize(
    ("name", "args"),
    [
        ("write_todos", {"todos": [{"description": "x", "status": "pending"}]}),
        ("update_topic", {"topic": "x"}),
    ],
)
def test_gemini_bookkeeping_is_transparent(form, name, args, tmp_path):
    s = GeminiSession(form)
    s.step(s.explore(), results=[explore_text(["lib/a.py"])])
    s.step(s.call(name, **args))
    s.step(s.call("read_file", file_path="lib/a.py"))
    s.finish()
    verdict, _ = judge("gemini", [s.write(tmp_path / f"session-x{s.suffix()}")])
    assert _only(verdict) == ("read_returned", "Read a.py")


@pytest.mark.parametrize(
    ("tool", "input", "label"),
    [
        ("Bash", {"command": "cat lib/"}, "Bash Read lib"),
        ("Read", {"file_path": "lib/"}, "Read lib"),
        ("Read", {"file_path": "/repo/src/pkg//"}, "Read pkg"),
        ("Read", {"file_path": "lib\\sub\\"}, "Read sub"),
        ("Read", {"file_path": "/"}, "Read /"),
    ],
)
def test_a_labels_basename_is_the_last_non_empty_component(tool, input, label, run, verdict_of):
    run.step(run.explore(), response(["lib/a.js"]))
    run.step(run.use(tool, **input))
    v = verdict_of(run)
    assert v.calls[0].next == label


def test_a_same_message_access_is_concurrent_once_however_many_explores_share_it(run, verdict_of):
    e1, e2, read, grep = (
        run.explore("a"),
        run.explore("b"),
        run.use("Read", file_path="lib/a.js"),
        run.use("Grep", pattern="x"),
    )
    run.message(e1, e2, read, grep)
    run.result(e1, response(["lib/a.js"]))
    run.result(e2, response(["lib/b.js"]))
    run.result(read, "x")
    run.result(grep, "x")
    run.step(run.use("Edit", file_path="lib/a.js"))
    v = verdict_of(run)
    assert v.answered == 2
    assert v.concurrent == 2  # the Read and the Grep, each once


def test_codex_parallel_explores_share_their_concurrent_read_once(tmp_path):
    r = Rollout("current", "exec_command")
    e1, e2, cat = r.explore("a"), r.explore("b"), r.shell("cat lib/a.py")
    r.step(e1, e2, cat, outputs=[explore_text(["lib/a.py"]), explore_text(["lib/b.py"]), "x"])
    r.finish()
    verdict, _ = judge("codex", [r.write(tmp_path / "rollout-x.jsonl")])
    assert (verdict.answered, verdict.concurrent) == (2, 1)
