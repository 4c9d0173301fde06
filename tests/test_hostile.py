"""What bad input gets: one test per hostile input, each with its stated outcome.

Every test puts one hostile file (or layout) into a campaign next to two good
transcripts and runs the plugin on it. The outcome is one of: a failing item
with a one-line reason, a warning on a classified item, or an entry in the
JSON report's ``ignored`` list. In every case the good transcripts are still
classified and reported (`rest_classified`).
"""

from __future__ import annotations

import json
import os
import random
import signal
import subprocess
import sys
import textwrap
import time
from pathlib import Path
from typing import Any

import pytest
from builders import EXPLORE, Run, allocation_run, response, sufficient_run
from helpers import report

from pytest_explore_suff import judge

WARN = ("-W", "always::UserWarning")  # the outer suite turns warnings into errors


@pytest.fixture
def campaign(pytester: pytest.Pytester) -> Path:
    """Two good transcripts, arm ``good``: one sufficient call, one allocation call."""
    root = pytester.path / "camp"
    sufficient_run("fine one").write(root / "run-good-1.jsonl")
    allocation_run("fine two").write(root / "run-good-2.jsonl")
    return root


def explore_suff(pytester: pytest.Pytester, root: Path, *args: str, **kw: Any) -> pytest.RunResult:
    return pytester.runpytest(f"--explore-suff={root}", *WARN, *args, **kw)


def records(doc: dict[str, Any]) -> dict[str, dict[str, Any]]:
    return {r["path"]: r for r in doc["transcripts"]}


def rest_classified(doc: dict[str, Any]) -> None:
    """The two good transcripts came through untouched, and count in their arm."""
    recs = records(doc)
    one, two = recs["run-good-1.jsonl"], recs["run-good-2.jsonl"]
    assert (one["status"], one["warnings"], one["counts"]["sufficient"]) == ("classified", [], 1)
    assert (two["status"], two["warnings"], two["counts"]["read_returned"]) == ("classified", [], 1)
    assert doc["arms"]["good"]["transcripts"] == 2
    assert doc["arms"]["good"]["answered"] == 2


def ignored(doc: dict[str, Any]) -> dict[str, str]:
    return {i["path"]: i["reason"] for i in doc["ignored"]}


def text_of(run: Run) -> bytes:
    return ("\n".join(run.lines()) + "\n").encode()


def lines_of(run: Run) -> list[bytes]:
    return [line.encode() for line in run.lines()]


class Session:
    """An interactive session log (or one subagent's file) being written: every
    line carries ``uuid``, ``parentUuid``, ``isSidechain`` and ``sessionId``."""

    def __init__(self, session: str = "5e551011-0000-4000-8000-000000000001", *, agent: str = "") -> None:
        self.session = session
        self.agent = agent
        self.events: list[dict[str, Any]] = []

    def _add(self, kind: str, message: dict[str, Any], **extra: Any) -> None:
        uuid = f"{self.agent or 'main'}-{len(self.events) + 1}"
        event = {
            "type": kind,
            "uuid": uuid,
            "parentUuid": self.events[-1]["uuid"] if self.events else None,
            "isSidechain": bool(self.agent),
            "sessionId": self.session,
            "message": message,
            **extra,
        }
        if self.agent:
            event["agentId"] = self.agent
        self.events.append(event)

    def prompt(self, text: str) -> None:
        self._add("user", {"role": "user", "content": text})

    def step(self, block: dict[str, Any], content: Any = "ok", **extra: Any) -> dict[str, Any]:
        self._add("assistant", {"id": f"msg_{block['id']}", "role": "assistant", "content": [block]})
        result = {"type": "tool_result", "tool_use_id": block["id"], "content": content}
        self._add("user", {"role": "user", "content": [result]}, **extra)
        return block

    def write(self, path: Path) -> Path:
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text("".join(json.dumps(e) + "\n" for e in self.events), encoding="utf-8")
        return path


AGENT = "a1b2c3d4"


def delegating_session(
    root: Path, *, agent_link: bool = True, sub_prompt: str = "find send"
) -> tuple[str, dict[str, Any]]:
    """A session whose Task call spawns a subagent that explores, then Reads
    the returned file; the subagent lives in ``<session>/subagents/``.

    Returns (the session file's relative path, the Task tool_use block).
    """
    main = Session()
    main.prompt("fix the bug")
    task = Run.use("Task", prompt="find send", description="look")
    sub = Session(main.session, agent=AGENT)
    sub.prompt(sub_prompt)
    sub.step(Run.use(EXPLORE, query="send"), response(["lib/a.js"]))
    sub.step(Run.use("Read", file_path="/t/lib/a.js"))
    main.step(task, "found it", toolUseResult={"agentId": AGENT} if agent_link else {"status": "done"})
    main.write(root / f"{main.session}.jsonl")
    sub.write(root / main.session / "subagents" / f"agent-{AGENT}.jsonl")
    return f"{main.session}.jsonl", task


def meta_path(root: Path) -> Path:
    return root / Session().session / "subagents" / f"agent-{AGENT}.meta.json"


# --- lines ------------------------------------------------------------------------


def test_a_truncated_last_line_is_a_warning_not_corruption(pytester, campaign):
    (campaign / "run-cut.jsonl").write_bytes(text_of(allocation_run()) + b'{"type":"assistant","mess')
    result = explore_suff(pytester, campaign)
    result.assert_outcomes(passed=3, warnings=1)
    result.stdout.fnmatch_lines(["*run-cut.jsonl: last line 7 is cut short (run killed mid-write?)*"])
    doc = report(pytester)
    rest_classified(doc)
    cut = records(doc)["run-cut.jsonl"]
    assert (cut["status"], cut["corrupt_lines"], cut["counts"]["read_returned"]) == ("classified", 0, 1)


def test_corrupt_middle_lines_are_a_warning_with_their_count_and_line_numbers(pytester, campaign):
    lines = lines_of(allocation_run())
    hostile = [lines[0], b"{oops", lines[1], b"DEBUG: mcp server started", *lines[2:]]
    (campaign / "run-corrupt.jsonl").write_bytes(b"\n".join(hostile) + b"\n")
    result = explore_suff(pytester, campaign)
    result.assert_outcomes(passed=3, warnings=1)
    result.stdout.fnmatch_lines(["*run-corrupt.jsonl: 2 corrupt line(s) skipped (line 2, 4)*"])
    doc = report(pytester)
    rest_classified(doc)
    rec = records(doc)["run-corrupt.jsonl"]
    assert (rec["status"], rec["corrupt_lines"], rec["counts"]["read_returned"]) == ("classified", 2, 1)


def test_many_corrupt_lines_list_the_first_five_and_the_strict_flag_fails_the_item(pytester, campaign):
    lines = lines_of(sufficient_run())
    (campaign / "run-noisy.jsonl").write_bytes(b"\n".join([lines[0], *[b"noise"] * 7, *lines[1:]]) + b"\n")
    result = explore_suff(pytester, campaign)
    result.assert_outcomes(passed=3, warnings=1)
    result.stdout.fnmatch_lines(["*7 corrupt line(s) skipped (line 2, 3, 4, 5, 6, ...)*"])
    strict = explore_suff(pytester, campaign, "--explore-suff-strict")
    strict.assert_outcomes(passed=2, failed=1, warnings=1)
    strict.stdout.fnmatch_lines(["*run-noisy.jsonl: 7 corrupt line(s) (--explore-suff-strict)"])
    rest_classified(report(pytester))


@pytest.mark.parametrize(
    ("name", "content", "reason"),
    [
        ("empty", b"", "not a transcript: the file is empty"),
        ("blank", b"\n\n  \n\t\n", "not a transcript: the file is empty"),
        (
            "binary",
            random.Random(1).randbytes(8192),
            "not a transcript: none of its * line(s) is an agent event",
        ),
        ("nul", b"\x00" * 4096, "not a transcript: none of its 1 line(s) is an agent event"),
        ("utf16", '{"type": "system"}\n'.encode("utf-16"), "not a transcript: none of its *"),
    ],
)
def test_a_run_file_that_holds_no_events_fails_with_one_line(pytester, campaign, name, content, reason):
    (campaign / f"run-{name}.jsonl").write_bytes(content)
    result = explore_suff(pytester, campaign)
    result.assert_outcomes(passed=2, failed=1)
    result.stdout.fnmatch_lines([f"run-{name}.jsonl: {reason}"])
    assert "Traceback" not in result.stdout.str()
    doc = report(pytester)
    rest_classified(doc)
    rec = records(doc)[f"run-{name}.jsonl"]
    assert rec["status"] == "error" and rec["reason"].startswith("not a transcript")


@pytest.mark.parametrize("content", [b"", random.Random(2).randbytes(8192), b"\x00" * 100])
def test_a_file_not_named_like_a_run_that_holds_no_events_is_ignored(pytester, campaign, content):
    (campaign / "data.jsonl").write_bytes(content)
    result = explore_suff(pytester, campaign)
    result.assert_outcomes(passed=2)
    doc = report(pytester)
    rest_classified(doc)
    assert ignored(doc) == {"data.jsonl": "not a transcript (no agent events in its first lines)"}


@pytest.mark.parametrize("where", ["a tool_use line", "a text line"])
def test_invalid_utf8_makes_a_line_that_matters_corrupt_and_the_rest_counts(pytester, campaign, where):
    """A line that could change a verdict is decoded, and invalid UTF-8 makes it
    corrupt; any other line is skipped undecoded (it cannot change a verdict)."""
    lines = lines_of(allocation_run())
    block = b'{"type":"tool_use","id":"toolu_x","name":"TodoWrite","input":{"todos":"caf\xe9 \xff"}}'
    if where == "a text line":
        block = b'{"type":"text","text":"caf\xe9 \xff"}'
    bad = b'{"type":"assistant","message":{"role":"assistant","content":[' + block + b']},"session_id":"s"}'
    (campaign / "run-latin1.jsonl").write_bytes(b"\n".join([*lines[:5], bad, *lines[5:]]) + b"\n")
    result = explore_suff(pytester, campaign)
    if where == "a tool_use line":
        result.assert_outcomes(passed=3, warnings=1)
        result.stdout.fnmatch_lines(["*run-latin1.jsonl: 1 corrupt line(s) skipped (line 6)*"])
    else:
        result.assert_outcomes(passed=3)
    doc = report(pytester)
    rest_classified(doc)
    assert records(doc)["run-latin1.jsonl"]["counts"]["read_returned"] == 1


def test_nul_bytes_in_a_line_make_it_corrupt_and_trailing_nuls_read_as_a_cut_last_line(pytester, campaign):
    # A crash on some filesystems leaves a file padded with NUL blocks.
    lines = lines_of(allocation_run())
    content = b"\n".join([lines[0], b"\x00\x00\x00", *lines[1:]]) + b"\n" + b"\x00" * 4096
    (campaign / "run-nul.jsonl").write_bytes(content)
    result = explore_suff(pytester, campaign)
    result.assert_outcomes(passed=3, warnings=2)
    result.stdout.fnmatch_lines(
        [
            "*run-nul.jsonl: last line 8 is cut short (run killed mid-write?)*",
            "*run-nul.jsonl: 1 corrupt line(s) skipped (line 2)*",
        ]
    )
    doc = report(pytester)
    rest_classified(doc)
    assert records(doc)["run-nul.jsonl"]["counts"]["read_returned"] == 1


@pytest.mark.parametrize("where", ["first line", "middle"])
def test_json_nested_100000_deep_on_one_line_is_a_corrupt_line(pytester, campaign, where):
    deep = b'{"type":"tool_use","x":' + b"[" * 100_000 + b"]" * 100_000 + b"}"
    lines = lines_of(allocation_run())
    hostile = [deep, *lines] if where == "first line" else [*lines[:2], deep, *lines[2:]]
    (campaign / "run-deep.jsonl").write_bytes(b"\n".join(hostile) + b"\n")
    result = explore_suff(pytester, campaign)
    result.assert_outcomes(passed=3, warnings=1)
    line = 1 if where == "first line" else 3
    result.stdout.fnmatch_lines([f"*run-deep.jsonl: 1 corrupt line(s) skipped (line {line})*"])
    doc = report(pytester)
    rest_classified(doc)
    assert records(doc)["run-deep.jsonl"]["counts"]["read_returned"] == 1


def test_a_50_mb_line_is_read_without_crashing_in_bounded_memory(pytester, campaign):
    size = 50 << 20
    run = Run()
    run.step(run.explore("big"), response(["lib/a.js"]))
    run.step(run.use("Read", file_path="/t/lib/a.js"), "x" * size)
    run.step(run.explore("after"), response(["lib/b.js"]))
    run.step(run.use("Grep", pattern="b"))
    path = run.write(campaign / "run-big.jsonl")
    result = explore_suff(pytester, campaign)
    result.assert_outcomes(passed=3)
    doc = report(pytester)
    rest_classified(doc)
    assert [c["bucket"] for c in records(doc)["run-big.jsonl"]["calls"]] == ["read_returned", "search"]
    # Peak memory of a fresh process judging the file: the line, not the file, bounds it.
    code = textwrap.dedent(
        """
        import sys
        from pytest_explore_suff import judge
        def peak():
            return next(int(l.split()[1]) for l in open("/proc/self/status") if l.startswith("VmHWM")) << 10
        before = peak()
        verdict, _ = judge("stream-json", [sys.argv[1]])
        print(verdict.answered, peak() - before)
        """
    )
    if not os.path.exists("/proc/self/status"):
        return
    out = subprocess.run([sys.executable, "-c", code, str(path)], capture_output=True, text=True, check=True)
    answered, grew = map(int, out.stdout.split())
    assert answered == 2
    # The line is decoded (occupancy counts every main-thread result): its bytes, its
    # text and the read buffers it was gathered in, never a multiple of the file.
    assert grew < 4 * size, f"judging a {size >> 20} MB line took {grew >> 20} MB more memory"


def test_lines_that_are_arrays_numbers_strings_or_null_are_corrupt_lines(pytester, campaign):
    lines = lines_of(allocation_run())
    scalars = [b"[1, 2]", b"42", b'"a string"', b"null", b"true", b"[]"]
    (campaign / "run-scalars.jsonl").write_bytes(b"\n".join([lines[0], *scalars, *lines[1:]]) + b"\n")
    result = explore_suff(pytester, campaign)
    result.assert_outcomes(passed=3, warnings=1)
    result.stdout.fnmatch_lines(["*run-scalars.jsonl: 6 corrupt line(s) skipped (line 2, 3, 4, 5, 6, ...)*"])
    doc = report(pytester)
    rest_classified(doc)
    assert records(doc)["run-scalars.jsonl"]["counts"]["read_returned"] == 1


def test_a_file_of_json_values_that_are_not_objects_fails_as_not_a_transcript(pytester, campaign):
    (campaign / "run-values.jsonl").write_bytes(b'[1]\n2\n"three"\nnull\n')
    result = explore_suff(pytester, campaign)
    result.assert_outcomes(passed=2, failed=1)
    result.stdout.fnmatch_lines(
        ["run-values.jsonl: not a transcript: none of its 4 line(s) is an agent event"]
    )
    rest_classified(report(pytester))


def test_a_type_that_is_a_list_or_an_object_is_ignored(pytester, campaign):
    """Once crashed collection of the whole campaign (an unhashable ``type``)."""
    odd = [b'{"type": [], "session_id": "s"}', b'{"type": {"a": 1}, "uuid": "u"}']
    (campaign / "run-odd.jsonl").write_bytes(b"\n".join([*odd, *lines_of(allocation_run())]) + b"\n")
    (campaign / "data.jsonl").write_bytes(b"\n".join(odd) + b"\n")
    result = explore_suff(pytester, campaign)
    result.assert_outcomes(passed=3)
    doc = report(pytester)
    rest_classified(doc)
    assert records(doc)["run-odd.jsonl"]["counts"]["read_returned"] == 1
    assert ignored(doc) == {"data.jsonl": "not a transcript (no agent events in its first lines)"}


@pytest.mark.parametrize("content", [None, {"type": "tool_result"}, 7, "plain text"], ids=repr)
def test_an_odd_message_content_on_the_explore_result_leaves_the_call_errored(pytester, campaign, content):
    run = Run()
    explore = run.explore()
    run.message(explore)
    run.result(explore, response(["lib/a.js"]))
    run.events[-1]["message"]["content"] = content
    run.step(run.use("Read", file_path="/t/lib/a.js"))
    run.write(campaign / "run-odd.jsonl")
    result = explore_suff(pytester, campaign)
    result.assert_outcomes(passed=3)
    doc = report(pytester)
    rest_classified(doc)
    rec = records(doc)["run-odd.jsonl"]
    assert (rec["status"], rec["answered"], rec["errored"]) == ("classified", 0, 1)


@pytest.mark.parametrize("content", [None, {"type": "tool_use"}, 7, "plain text"], ids=repr)
def test_an_odd_message_content_on_an_assistant_line_is_ignored(pytester, campaign, content):
    run = allocation_run()
    odd = {**run.events[1], "message": {**run.events[1]["message"], "id": "msg_odd", "content": content}}
    run.events.insert(2, odd)
    run.events.insert(2, {**odd, "message": content})  # the message itself not an object
    run.write(campaign / "run-odd.jsonl")
    result = explore_suff(pytester, campaign)
    result.assert_outcomes(passed=3)
    doc = report(pytester)
    rest_classified(doc)
    rec = records(doc)["run-odd.jsonl"]
    assert (rec["warnings"], rec["counts"]["read_returned"]) == ([], 1)


def test_a_tool_result_written_before_its_tool_use_is_still_matched(pytester, campaign):
    run = Run()
    explore = run.explore("early")
    run.result(explore, response(["lib/a.js"]))  # file order is not causal order
    run.message(explore)
    run.step(run.use("Read", file_path="/t/lib/a.js"))
    run.write(campaign / "run-early.jsonl")
    result = explore_suff(pytester, campaign)
    result.assert_outcomes(passed=3)
    doc = report(pytester)
    rest_classified(doc)
    (call,) = records(doc)["run-early.jsonl"]["calls"]
    assert (call["bucket"], call["files"], call["next"]) == ("read_returned", 1, "Read a.js")


def test_a_tool_result_for_an_unknown_id_is_ignored(pytester, campaign):
    run = Run()
    run.message(run.explore("q"))
    run.result({"id": "toolu_nobody"}, response(["lib/a.js"]))
    run.step(run.use("Edit", file_path="lib/a.js"))
    run.write(campaign / "run-orphan.jsonl")
    result = explore_suff(pytester, campaign)
    result.assert_outcomes(passed=3)
    doc = report(pytester)
    rest_classified(doc)
    rec = records(doc)["run-orphan.jsonl"]
    assert (rec["warnings"], rec["answered"], rec["errored"]) == ([], 0, 1)


def test_duplicated_lines_are_counted_once(pytester, campaign):
    run = allocation_run()
    run.step(run.explore("two"), response(["lib/b.js"]))
    run.step(run.use("Grep", pattern="b"))
    (campaign / "run-twice.jsonl").write_bytes(
        b"".join(line + b"\n" + line + b"\n" for line in lines_of(run))
    )
    run.write(campaign / "run-once.jsonl")
    result = explore_suff(pytester, campaign)
    result.assert_outcomes(passed=4)
    doc = report(pytester)
    rest_classified(doc)
    twice, once = records(doc)["run-twice.jsonl"], records(doc)["run-once.jsonl"]
    assert twice["calls"] == once["calls"] and len(once["calls"]) == 2
    assert twice["runs"] == once["runs"] * 2  # each result event is kept: a replayed run summary


def test_a_replayed_interactive_session_judges_each_uuid_once(pytester, campaign):
    name, _ = delegating_session(campaign)
    path = campaign / name
    path.write_bytes(path.read_bytes() * 2)
    result = explore_suff(pytester, campaign)
    result.assert_outcomes(passed=3)
    doc = report(pytester)
    rest_classified(doc)
    assert records(doc)[name]["answered"] == 1


def test_a_utf8_bom_and_lone_surrogate_escapes_are_tolerated(pytester, campaign):
    # JSON.stringify escapes a string cut in the middle of an emoji as a lone surrogate.
    run = Run()
    run.step(run.explore("cut \ud83d"), response(["lib/a.js"]) + "\n\ud83d")
    run.step(run.use("Read", file_path="/t/lib/a.js"))
    text = "\n".join(run.lines()) + "\n"  # json.dumps writes the lone surrogates as \ud83d
    assert "\\ud83d" in text
    (campaign / "run-js.jsonl").write_bytes(b"\xef\xbb\xbf" + text.encode())
    result = explore_suff(pytester, campaign)
    result.assert_outcomes(passed=3)
    doc = report(pytester)
    rest_classified(doc)
    rec = records(doc)["run-js.jsonl"]
    assert (rec["warnings"], rec["corrupt_lines"]) == ([], 0)
    (call,) = rec["calls"]
    assert (call["query"], call["bucket"]) == ("cut \ufffd", "read_returned")


# --- subagents --------------------------------------------------------------------


def test_a_delegating_session_links_its_subagent_by_the_meta_sidecar(pytester, campaign):
    name, task = delegating_session(campaign, agent_link=False)
    meta_path(campaign).write_text(json.dumps({"toolUseId": task["id"], "agentType": "general-purpose"}))
    result = explore_suff(pytester, campaign)
    result.assert_outcomes(passed=3)
    doc = report(pytester)
    rest_classified(doc)
    (call,) = records(doc)[name]["calls"]
    assert (call["thread"], call["bucket"]) == (task["id"], "read_returned")


@pytest.mark.parametrize(
    "meta", [b"garbage{", b"\xff\xfe\x00", b"[" * 100_000, b'{"toolUseId": ' + b"1" * (2 << 20) + b"}"]
)
def test_a_garbage_meta_sidecar_is_a_warning_and_the_agent_id_links_instead(pytester, campaign, meta):
    name, task = delegating_session(campaign)
    meta_path(campaign).write_bytes(meta)
    result = explore_suff(pytester, campaign)
    result.assert_outcomes(passed=3, warnings=1)
    result.stdout.fnmatch_lines([f"*agent-{AGENT}.meta.json: unreadable, ignored*"])
    doc = report(pytester)
    rest_classified(doc)
    (call,) = records(doc)[name]["calls"]
    assert (call["thread"], call["bucket"]) == (task["id"], "read_returned")


@pytest.mark.parametrize("meta", [b"[1, 2]", b"null", b'{"toolUseId": 42}', b'{"agentType": "x"}'])
def test_a_meta_sidecar_of_the_wrong_shape_is_ignored(pytester, campaign, meta):
    name, task = delegating_session(campaign)
    meta_path(campaign).write_bytes(meta)
    result = explore_suff(pytester, campaign)
    result.assert_outcomes(passed=3)
    doc = report(pytester)
    rest_classified(doc)
    (call,) = records(doc)[name]["calls"]
    assert call["thread"] == task["id"]


def test_a_meta_sidecar_that_is_a_directory_is_a_warning(pytester, campaign):
    name, task = delegating_session(campaign)
    meta_path(campaign).mkdir()
    result = explore_suff(pytester, campaign)
    result.assert_outcomes(passed=3, warnings=1)
    result.stdout.fnmatch_lines([f"*agent-{AGENT}.meta.json: unreadable, ignored*"])
    (call,) = records(report(pytester))[name]["calls"]
    assert call["thread"] == task["id"]


@pytest.mark.parametrize("agent_link", [True, False], ids=["agent-id-fallback", "no-fallback"])
@pytest.mark.parametrize("same_prompt", [True, False], ids=["prompt", "no-prompt"])
def test_a_meta_sidecar_naming_an_unknown_tool_use(pytester, campaign, agent_link, same_prompt):
    """Falls back to the agentId link, then (D7) to the prompt; without either, the
    subagent is judged as its own thread."""
    name, task = delegating_session(
        campaign, agent_link=agent_link, sub_prompt="find send" if same_prompt else "something else"
    )
    meta_path(campaign).write_text(json.dumps({"toolUseId": "toolu_never_issued"}))
    result = explore_suff(pytester, campaign)
    linked = agent_link or same_prompt
    result.assert_outcomes(passed=3, warnings=0 if linked else 1)
    doc = report(pytester)
    rest_classified(doc)
    rec = records(doc)[name]
    (call,) = rec["calls"]
    if linked:
        assert (call["thread"], rec["warnings"]) == (task["id"], [])
    else:
        assert call["thread"] == f"agent-{AGENT}"
        assert rec["warnings"] == [
            f"subagent agent-{AGENT}.jsonl could not be linked to its Task/Agent call; "
            "judged as its own thread"
        ]
    assert call["bucket"] == "read_returned"


@pytest.mark.parametrize("layout", ["subagents", "flat"])
def test_a_subagent_file_with_no_parent_session_is_judged_alone_with_a_note(pytester, campaign, layout):
    name, _ = delegating_session(campaign)
    (campaign / name).unlink()
    sub = f"{Session().session}/subagents/agent-{AGENT}.jsonl"
    if layout == "flat":
        (campaign / sub).rename(campaign / f"agent-{AGENT}.jsonl")
        sub = f"agent-{AGENT}.jsonl"
    result = explore_suff(pytester, campaign)
    result.assert_outcomes(passed=3, warnings=1)
    result.stdout.fnmatch_lines(["*subagent file with no parent session in the campaign; judged alone*"])
    doc = report(pytester)
    rest_classified(doc)
    rec = records(doc)[sub]
    assert (rec["status"], rec["kind"], rec["counts"]["read_returned"]) == ("classified", "interactive", 1)
    assert rec["warnings"] == ["subagent file with no parent session in the campaign; judged alone"]
    assert rec["calls"][0]["thread"] == "main"


def test_a_compaction_artifact_is_ignored(pytester, campaign):
    Session(agent="acompact-1").write(campaign / "agent-acompact-1.jsonl")
    result = explore_suff(pytester, campaign)
    result.assert_outcomes(passed=2)
    doc = report(pytester)
    rest_classified(doc)
    assert ignored(doc) == {"agent-acompact-1.jsonl": "compaction artifact (agent-acompact*)"}


# --- the campaign directory -------------------------------------------------------


def test_symlink_loops_and_links_out_of_the_campaign_are_not_followed_and_listed(
    pytester, campaign, tmp_path
):
    outside = sufficient_run().write(tmp_path / "elsewhere" / "run-outside.jsonl")
    (campaign / "run-out.jsonl").symlink_to(outside)
    (campaign / "run-outdir.jsonl").symlink_to(outside.parent, target_is_directory=True)
    (campaign / "run-loop-a.jsonl").symlink_to("run-loop-b.jsonl")
    (campaign / "run-loop-b.jsonl").symlink_to("run-loop-a.jsonl")
    (campaign / "run-self.jsonl").symlink_to(".", target_is_directory=True)
    (campaign / "sub").mkdir()
    (campaign / "sub" / "up").symlink_to("..", target_is_directory=True)  # a directory loop
    (campaign / "run-dangling.jsonl").symlink_to(campaign / "gone.jsonl")
    (campaign / "run-latest.jsonl").symlink_to("run-good-2.jsonl")  # would count run-good-2 twice
    result = explore_suff(pytester, campaign)
    result.assert_outcomes(passed=2)
    doc = report(pytester)
    rest_classified(doc)
    assert ignored(doc) == {
        "run-dangling.jsonl": "not a regular file",
        "run-latest.jsonl": "symlink to run-good-2.jsonl, already collected",
        "run-loop-a.jsonl": "unreadable: Too many levels of symbolic links",
        "run-loop-b.jsonl": "unreadable: Too many levels of symbolic links",
        "run-out.jsonl": "symlink out of the campaign directory, not followed",
        "run-outdir.jsonl": "symlink out of the campaign directory, not followed",
        "run-self.jsonl": "symlink to a directory, not followed",
        "sub/up": "symlink to a directory, not followed",  # listed whatever its name
    }


def test_a_symlink_inside_the_campaign_to_an_uncollected_file_is_followed(pytester, campaign):
    (campaign / "store").mkdir()
    sufficient_run().write(campaign / "store" / "transcript.data")
    (campaign / "run-linked.jsonl").symlink_to("store/transcript.data")
    result = explore_suff(pytester, campaign)
    result.assert_outcomes(passed=3)
    doc = report(pytester)
    rest_classified(doc)
    assert records(doc)["run-linked.jsonl"]["status"] == "classified"


def test_a_directory_named_like_a_transcript_is_walked_as_a_directory(pytester, campaign):
    (campaign / "x.jsonl").mkdir()
    (campaign / "run-empty-dir.jsonl").mkdir()
    allocation_run().write(campaign / "x.jsonl" / "run-inside.jsonl")
    result = explore_suff(pytester, campaign)
    result.assert_outcomes(passed=3)
    doc = report(pytester)
    rest_classified(doc)
    assert records(doc)["x.jsonl/run-inside.jsonl"]["status"] == "classified"
    assert doc["ignored"] == []


def test_a_fifo_named_like_a_transcript_is_ignored_without_blocking(pytester, campaign):
    os.mkfifo(campaign / "run-fifo.jsonl")
    result = explore_suff(pytester, campaign)
    result.assert_outcomes(passed=2)
    doc = report(pytester)
    rest_classified(doc)
    assert ignored(doc) == {"run-fifo.jsonl": "not a regular file"}


class Saboteur:
    """Changes campaign files between collection and the run, as a harness still
    writing (or a cleanup job) would: passed to the in-process run as a plugin."""

    def __init__(self, root: Path) -> None:
        self.root = root

    def pytest_collection_finish(self, session: pytest.Session) -> None:
        (self.root / "run-removed.jsonl").unlink()
        cut = self.root / "run-truncated.jsonl"
        data = cut.read_bytes()
        cut.write_bytes(data[: len(data) - 40])  # mid-way through the last line
        dir_now = self.root / "run-now-a-dir.jsonl"
        dir_now.unlink()
        dir_now.mkdir()


def test_files_removed_truncated_or_replaced_during_the_run(pytester, campaign):
    for name in ("removed", "truncated", "now-a-dir"):
        allocation_run().write(campaign / f"run-{name}.jsonl")
    result = explore_suff(pytester, campaign, plugins=[Saboteur(campaign)])
    result.assert_outcomes(passed=3, failed=2, warnings=1)
    result.stdout.fnmatch_lines_random(
        [
            "run-removed.jsonl: cannot open run-removed.jsonl: No such file or directory",
            "run-now-a-dir.jsonl: cannot * run-now-a-dir.jsonl: Is a directory",
            "*run-truncated.jsonl: last line 6 is cut short (run killed mid-write?)*",
        ]
    )
    doc = report(pytester)
    rest_classified(doc)
    recs = records(doc)
    assert recs["run-removed.jsonl"]["status"] == recs["run-now-a-dir.jsonl"]["status"] == "error"
    assert recs["run-truncated.jsonl"]["counts"]["read_returned"] == 1


def test_ten_thousand_transcripts_are_each_one_item(pytester):
    root = pytester.path / "big"
    text = "\n".join(sufficient_run().lines()) + "\n"
    for i in range(10_000):
        folder = root / f"g{i // 500}"
        if i % 500 == 0:
            folder.mkdir(parents=True)
        (folder / f"run-arm{i % 2}-{i}.jsonl").write_text(text)
    # Its speed is benchmarks/run.py's to measure (the small campaign), not a timed test's:
    # a loaded CI host took over two minutes here.
    result = pytester.runpytest(f"--explore-suff={root}", "-q", "-p", "no:cacheprovider")
    result.assert_outcomes(passed=10_000)
    doc = report(pytester)
    assert len(doc["transcripts"]) == 10_000
    assert doc["pooled"]["counts"]["sufficient"] == 10_000
    assert {arm: a["transcripts"] for arm, a in doc["arms"].items()} == {"arm0": 5000, "arm1": 5000}


def test_control_characters_and_unicode_are_escaped_on_the_terminal_and_exact_in_json(pytester, campaign):
    query = "évil \x1b[2J\x1b]0;pwned\x07 \r\x08\x00 \x9b31m \x7f \u2028 日本 😀 e\u0301"
    read = "/t/lib/\x1b[31mred\u2029.js"
    run = Run()
    run.step(run.explore(query), response(["lib/a.js"]))
    run.step(run.use("Read", file_path=read))
    name = "run-\x1b[1mbold\r\nx\t日本😀.jsonl"
    run.write(campaign / name)
    result = explore_suff(pytester, campaign, "-v")
    result.assert_outcomes(passed=3)
    out = result.stdout.str()
    for raw in ("\x1b", "\x07", "\x08", "\x00", "\x9b", "\x7f", "\u2028", "\u2029", "\r"):
        assert raw not in out, repr(raw)
    assert "\\x1b[2J" in out and "\\x9b31m" in out and "\\u2028" in out
    assert "run-\\x1b[1mbold\\r\\nx\\t日本😀.jsonl PASSED" in out
    assert "日本 😀 e\u0301" in out  # printable unicode is shown as it is
    doc = report(pytester)
    rest_classified(doc)
    rec = records(doc)[name]
    (call,) = rec["calls"]
    assert call["query"] == query
    assert call["next"] == "Read \x1b[31mred\u2029.js"
    raw_json = (pytester.path / "explore-suff.json").read_bytes()
    assert "日本".encode() in raw_json  # kept as UTF-8, not \u-escaped


def test_a_file_name_that_is_not_utf8_is_ignored_with_its_bytes_escaped(pytester, campaign):
    sufficient_run().write(Path(os.fsdecode(bytes(campaign) + b"/run-latin1-caf\xe9.jsonl")))
    folder = Path(os.fsdecode(bytes(campaign) + b"/d\xff"))
    sufficient_run().write(folder / "run-inside.jsonl")
    result = explore_suff(pytester, campaign)
    result.assert_outcomes(passed=2)
    doc = report(pytester)
    rest_classified(doc)
    assert ignored(doc) == {
        "d\\xff/run-inside.jsonl": "file name is not valid UTF-8, not read",
        "run-latin1-caf\\xe9.jsonl": "file name is not valid UTF-8, not read",
    }


def test_a_missing_campaign_directory_is_a_one_line_usage_error(pytester):
    result = pytester.runpytest(f"--explore-suff={pytester.path / 'nope'}")
    assert result.ret == pytest.ExitCode.USAGE_ERROR == 4
    assert [line for line in result.stderr.lines if line.strip()] == [
        f"ERROR: --explore-suff: campaign directory {pytester.path / 'nope'} does not exist"
    ]
    assert not (pytester.path / "explore-suff.json").exists()


def test_an_unreadable_campaign_directory_is_a_one_line_usage_error(pytester, campaign, monkeypatch):
    campaign.chmod(0)
    if os.geteuid() == 0:
        # root reads through mode 000: make the permission check see what a user would.
        access = os.access
        monkeypatch.setattr(
            os, "access", lambda p, m, **kw: False if p == str(campaign) else access(p, m, **kw)
        )
    try:
        result = pytester.runpytest(f"--explore-suff={campaign}")
    finally:
        campaign.chmod(0o755)
    assert result.ret == pytest.ExitCode.USAGE_ERROR == 4
    assert [line for line in result.stderr.lines if line.strip()] == [
        f"ERROR: --explore-suff: campaign directory {campaign} is not readable"
    ]


# --- bugs found here, fixed: each stays a test ---


def test_an_explore_query_nested_1010_deep_is_judged(tmp_path):
    run = Run()
    run.step(run.explore("@deep@"), response(["lib/a.js"]))
    run.step(run.use("Edit", file_path="a"))
    path = tmp_path / "run-x.jsonl"
    deep = "[" * 1010 + "]" * 1010  # json.dumps itself cannot write it: splice it in
    path.write_text("\n".join(run.lines()).replace('"@deep@"', deep) + "\n")
    verdict, _ = judge("stream-json", [path])
    assert verdict.answered == 1


def test_an_explore_response_with_a_long_token_is_judged_quickly(tmp_path):
    run = Run()
    run.step(run.explore(), response(["lib/a.js"]) + "\ndata:/" + "x" * 200_000)
    run.step(run.use("Read", file_path="/t/lib/other.js"))  # needs the paths the response names
    path = run.write(tmp_path / "run-x.jsonl")
    code = "import sys; from pytest_explore_suff import judge; judge('stream-json', [sys.argv[1]])"
    subprocess.run([sys.executable, "-c", code, str(path)], check=True, timeout=5)


def explode_on(name: str) -> Any:
    """``judge``, but raising an unexpected exception (not a TranscriptError) for one file."""
    from pytest_explore_suff import nodes

    real = nodes.judge

    def judge(kind: str, files: Any, *args: Any, **kwargs: Any) -> Any:
        if str(files[0]).endswith(name):
            raise RuntimeError("a bug in the classifier")
        return real(kind, files, *args, **kwargs)

    return judge


def test_an_unexpected_exception_fails_only_its_item_and_is_listed_in_the_report(
    pytester, campaign, monkeypatch
):
    from pytest_explore_suff import nodes

    sufficient_run().write(campaign / "run-boom.jsonl")
    monkeypatch.setattr(nodes, "judge", explode_on("run-boom.jsonl"))
    result = explore_suff(pytester, campaign)
    result.assert_outcomes(passed=2, failed=1)
    result.stdout.fnmatch_lines(["*RuntimeError: a bug in the classifier*"])
    doc = report(pytester)
    rest_classified(doc)
    rec = records(doc)["run-boom.jsonl"]
    assert (rec["status"], rec["reason"]) == (
        "error",
        "internal error: RuntimeError: a bug in the classifier",
    )


def test_a_campaign_directory_whose_name_is_not_utf8_gets_a_report(pytester):
    root = Path(os.fsdecode(bytes(pytester.path) + b"/camp\xff"))
    sufficient_run().write(root / "run-good-1.jsonl")
    result = explore_suff(pytester, root)
    result.assert_outcomes(passed=1)
    assert report(pytester)["transcripts"][0]["status"] == "classified"


def test_bidi_overrides_are_escaped_on_the_terminal():
    from pytest_explore_suff.terminal import clean

    assert "\u202e" not in clean("evil\u202eexe.js") and "\u2066" not in clean("a\u2066b")


def test_the_report_gets_the_permissions_the_umask_gives(tmp_path):
    from pytest_explore_suff.report import write_atomic

    old = os.umask(0o022)
    try:
        write_atomic(str(tmp_path / "explore-suff.json"), {"n": 1})
    finally:
        os.umask(old)
    assert (tmp_path / "explore-suff.json").stat().st_mode & 0o777 == 0o644


# --- the JSON report under SIGKILL ------------------------------------------------

WRITER = textwrap.dedent(
    """
    import sys
    from pytest_explore_suff.report import write_atomic
    target = sys.argv[1]
    docs = [{"n": n, "pad": [str(n) * 64] * 20000} for n in (1, 2)]
    print("ready", flush=True)
    i = 0
    while True:
        write_atomic(target, docs[i % 2])
        i += 1
    """
)


def test_a_report_writer_killed_mid_write_leaves_the_old_or_the_new_report(tmp_path):
    target = tmp_path / "explore-suff.json"
    target.write_text(json.dumps({"n": 0}))
    rng = random.Random(7)
    seen = set()
    mid_write = 0  # kills that left a temporary file behind: they landed inside a write
    for _ in range(25):
        proc = subprocess.Popen([sys.executable, "-c", WRITER, str(target)], stdout=subprocess.PIPE)
        assert proc.stdout is not None and proc.stdout.readline() == b"ready\n"
        time.sleep(rng.uniform(0.0, 0.08))
        proc.send_signal(signal.SIGKILL)
        proc.wait()
        proc.stdout.close()
        partial = list(tmp_path.glob(".explore-suff-*.tmp"))
        mid_write += bool(partial)
        for path in partial:
            path.unlink()
        doc = json.loads(target.read_text())  # complete, never half a file
        assert doc["n"] in (0, 1, 2)
        if doc["n"]:
            assert doc["pad"] == [str(doc["n"]) * 64] * 20000
        seen.add(doc["n"])
    assert seen & {1, 2}, "the writer never completed a write: the test proved nothing"
    assert mid_write, "no kill landed inside a write: the test proved nothing"


def test_a_record_no_json_can_hold_fails_its_own_item_and_the_run_reports(pytester, campaign, monkeypatch):
    # A bug of ours that puts a lone surrogate in a record (a reader's decoder did, for an MCP
    # result): the record used to fail to encode in the report's hook, an INTERNALERROR that
    # lost the whole campaign. Now the item fails with one line, the others are reported.
    from pytest_explore_suff import nodes

    made = nodes.record

    def broken(t: Any, **kw: Any) -> dict[str, Any]:
        rec = made(t, **kw)
        if t.path == "run-bad.jsonl" and kw.get("status") != "error":
            rec["warnings"] = ["cut inside an emoji: \ud83d"]
        return rec

    monkeypatch.setattr(nodes, "record", broken)
    sufficient_run("bad").write(campaign / "run-bad.jsonl")
    result = explore_suff(pytester, campaign, "-p", "no:cacheprovider")
    assert result.ret == pytest.ExitCode.TESTS_FAILED
    result.assert_outcomes(passed=2, failed=1)
    assert "INTERNALERROR" not in result.stdout.str() + result.stderr.str()
    result.stdout.fnmatch_lines(["*run-bad.jsonl: internal error: its record cannot be written as JSON: *"])
    doc = report(pytester)
    bad = records(doc)["run-bad.jsonl"]
    assert bad["status"] == "error" and "cannot be written as JSON" in bad["reason"]
    rest_classified(doc)
