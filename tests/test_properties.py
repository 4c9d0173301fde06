"""Properties of the readers and the classifier, checked on generated input.

Two kinds: nothing a file can hold makes an exception other than a
`TranscriptError` escape ``judge`` (on arbitrary bytes, and on arbitrary JSON
events shaped enough like the real ones to reach deep into the code); and
metamorphic properties on generated transcripts: rewrites a harness or a newer
agent version can make (noise events, blank lines, one line per message
instead of per block, results written late, ``Task`` renamed ``Agent``,
a run split into turn files) never change a verdict.

Bounded for CI: ``max_examples`` below 100, no deadline. The ``check_*``
functions are also what a long, out-of-CI fuzz run drives.
"""

from __future__ import annotations

import copy
import json
import os
import tempfile
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import Any

import pytest
from builders import EXPLORE, Run, response
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from pytest_explore_suff import TranscriptError, judge
from pytest_explore_suff.events import RACE_MARKER
from pytest_explore_suff.terminal import call_line, clean

SETTINGS = settings(max_examples=80, deadline=None, suppress_health_check=list(HealthCheck))

# --- writing and judging ----------------------------------------------------------


def _write(tmp: str, files: dict[str, bytes]) -> list[str]:
    """Write ``files`` (relative path -> bytes) under ``tmp``; the paths a reader is handed (not
    a subagent's sidecar, nor a database's ``-wal`` and ``-shm``: SQLite finds those itself)."""
    paths = []
    for rel, data in files.items():
        path = os.path.join(tmp, rel)
        os.makedirs(os.path.dirname(path), exist_ok=True)
        with open(path, "wb") as fh:
            fh.write(data)
        if not rel.endswith((".meta.json", "-wal", "-shm")):
            paths.append(path)
    return paths


def _judge(
    kind: str, paths: Sequence[str], session: str = ""
) -> tuple[dict[str, Any], list[str]] | TranscriptError:
    try:
        verdict, collector = judge(kind, paths, session=session)
    except TranscriptError as exc:
        assert str(exc) and "\n" not in str(exc), "a TranscriptError is one line"
        return exc
    return verdict.to_dict(), collector.warnings


def judge_files(
    kind: str, files: dict[str, bytes], session: str = ""
) -> tuple[dict[str, Any], list[str]] | TranscriptError:
    """Write ``files`` (relative path -> bytes; the first is the main file) to a
    fresh directory and judge them (``session``: the one judged, in a log of many).
    A `TranscriptError` is returned, not raised."""
    with tempfile.TemporaryDirectory(prefix="explore-suff-prop-") as tmp:
        return _judge(kind, _write(tmp, files), session)


def _reportable(out: tuple[dict[str, Any], list[str]] | TranscriptError) -> None:
    """What ``judge`` returned can be reported: JSON-encodable as UTF-8, printable through
    the terminal escaper."""
    if isinstance(out, TranscriptError):
        return
    verdict, warnings = out
    json.dumps(verdict, ensure_ascii=False).encode("utf-8")
    json.dumps(warnings, ensure_ascii=False).encode("utf-8")
    assert verdict["answered"] == len(verdict["calls"]) == sum(verdict["counts"].values())
    for i, call in enumerate(verdict["calls"], 1):
        line = call_line(i, call)
        assert "\x1b" not in line and "\n" not in line
    for warning in warnings:
        assert "\x1b" not in clean(warning)


def check_no_escape(kind: str, files: dict[str, bytes]) -> None:
    """``judge`` returns or raises a TranscriptError, and what it returns can be reported."""
    _reportable(judge_files(kind, files))


def check_no_escape_in_many(kind: str, files: dict[str, bytes]) -> list[str]:
    """A log of many sessions (a database, a storage folder), read as a run reads it:
    discovery lists its sessions (or, if it cannot, the log as one item), and each item is
    judged; so is the session `MAIN` (a damaged log may no longer list it). Nothing but a
    one-line TranscriptError escapes either. Returns the sessions discovery listed."""
    from pytest_explore_suff.campaign import discover

    with tempfile.TemporaryDirectory(prefix="explore-suff-prop-") as tmp:
        paths = _write(tmp, files)
        listed = []
        for t in discover(tmp).transcripts:
            _reportable(_judge(t.kind, t.files, t.session))
            if t.kind == kind:
                listed.append(t.session)
        _reportable(_judge(kind, paths, MAIN))
        return listed


# --- arbitrary bytes --------------------------------------------------------------


def _sample_lines() -> list[bytes]:
    run = Run()
    task = run.use("Task", prompt="look")
    run.message(task)
    run.step(run.explore("q"), response(["lib/a.js"], ["lib/b.js"]), parent=task["id"])
    run.step(run.use("Read", file_path="/t/lib/a.js"), parent=task["id"])
    run.result(task, "done")
    run.step(run.use("Bash", command="codegraph explore x"), "out")
    run.step(run.explore("race"), RACE_MARKER, is_error=True)
    run.finish()
    return [line.encode() for line in run.lines()]


SAMPLE = _sample_lines()

line_bytes = st.one_of(
    st.binary(max_size=120),
    st.sampled_from(SAMPLE),
    st.tuples(st.sampled_from(SAMPLE), st.integers(0, 400)).map(lambda t: t[0][: t[1]]),  # cut short
    st.sampled_from([b"", b"  ", b"\x00\x00", b"\xef\xbb\xbf", b"[]", b"null", b"{}", b'{"type":"user"}']),
)
file_bytes = st.one_of(
    st.binary(max_size=2000),
    st.lists(line_bytes, max_size=12).map(b"\n".join),
    st.tuples(st.lists(line_bytes, max_size=12).map(b"\n".join), st.sampled_from([b"", b"\n", b"\r\n"])).map(
        lambda t: t[0] + t[1]
    ),
)


@SETTINGS
@given(
    kind=st.sampled_from(["stream-json", "interactive"]),
    contents=st.lists(file_bytes, min_size=1, max_size=3),
    meta=st.one_of(st.none(), st.binary(max_size=200)),
)
def test_no_exception_escapes_on_arbitrary_bytes(kind, contents, meta):
    files = {"s.jsonl": contents[0]}
    for i, data in enumerate(contents[1:]):
        files[f"s/subagents/agent-{i}.jsonl"] = data
        if meta is not None:
            files[f"s/subagents/agent-{i}.meta.json"] = meta
    check_no_escape(kind, files)


# --- arbitrary JSON events ----------------------------------------------------------

any_text = st.text(st.characters(exclude_categories=()), max_size=12)  # lone surrogates too
json_values = st.recursive(
    st.none() | st.booleans() | st.integers() | st.floats(allow_nan=False, allow_infinity=False) | any_text,
    lambda inner: st.lists(inner, max_size=3) | st.dictionaries(st.text(max_size=6), inner, max_size=3),
    max_leaves=8,
)


def mostly(good: st.SearchStrategy[Any], odd: st.SearchStrategy[Any] = json_values) -> st.SearchStrategy[Any]:
    """The real shape three times in four: enough matched calls and results to
    reach the classifier, with any other JSON value in the remaining case."""
    return st.one_of(good, good, good, odd)


ids = mostly(st.sampled_from(["toolu_1", "toolu_2", "toolu_3", "toolu_4"]), json_values | st.just(""))
names = mostly(
    st.sampled_from(
        [EXPLORE, EXPLORE, "mcp__codegraph__other", "Read", "NotebookRead", "Bash", "Grep", "Glob", "Task",
         "Agent", "TodoWrite", "ToolSearch", "Edit"]
    )
)  # fmt: skip
paths = st.sampled_from(["lib/a.js", "/t/lib/a.js", "lib/b.js", "./lib/c.js", "/tmp/out.txt", ""]) | any_text
commands = st.sampled_from(
    ["cat lib/a.js", "sed -n '1,9p' /t/lib/b.js", "codegraph explore 'x'", "rg send lib/", "ls",
     "head -5 lib/a.js | grep x", "echo $(cat lib/a.js) > /dev/null", "npm test", "cat <<EOF\nx\nEOF"]
) | st.text(max_size=40)  # fmt: skip
inputs = mostly(
    st.fixed_dictionaries(
        {},
        optional={
            "query": any_text | json_values,
            "file_path": mostly(paths),
            "command": commands,
            "prompt": any_text,
            "notebook_path": paths,
        },
    )
)
texts = st.one_of(
    any_text,
    st.builds(response, st.lists(paths, max_size=3), st.lists(paths, max_size=2)),
    st.just(RACE_MARKER),
    paths.map(lambda p: f"<persisted-output>\nFull output saved to: {p}\n**`lib/a.js`**"),
)
contents = (
    texts
    | st.lists(st.fixed_dictionaries({"type": st.just("text"), "text": texts}), max_size=2)
    | json_values
)
blocks = st.one_of(
    st.fixed_dictionaries({"type": st.just("tool_use"), "id": ids, "name": names, "input": inputs}),
    st.fixed_dictionaries(
        {"type": st.just("tool_result"), "tool_use_id": ids, "content": contents},
        optional={"is_error": st.booleans() | json_values},
    ),
    st.fixed_dictionaries({"type": st.sampled_from(["text", "thinking"]), "text": any_text}),
    json_values,
)
messages = mostly(
    st.fixed_dictionaries(
        {"content": mostly(st.lists(blocks, min_size=1, max_size=3))},
        optional={
            "id": mostly(st.sampled_from(["msg_1", "msg_2", "msg_3"])),
            "role": mostly(st.sampled_from(["assistant", "user"])),
        },
    )
)
uuids = mostly(st.sampled_from(["u1", "u2", "u3", "u4"]))
agent_ids = mostly(st.sampled_from(["0", "1"]))
events = st.fixed_dictionaries(
    {
        "type": mostly(
            st.sampled_from(["assistant", "user"]), st.sampled_from(["system", "result"]) | any_text
        ),
        "message": messages,
    },
    optional={
        "session_id": st.just("s"),
        "sessionId": mostly(st.sampled_from(["s", "other"])),
        "uuid": uuids,
        "parentUuid": uuids,
        "isSidechain": mostly(st.booleans()),
        "parent_tool_use_id": ids | st.none(),
        "toolUseResult": mostly(st.fixed_dictionaries({"agentId": agent_ids})),
        "subtype": any_text,
        "agentId": agent_ids,
        "num_turns": json_values,
    },
)
line_extras = st.fixed_dictionaries(
    {"session_id": st.just("s")},
    optional={"parent_tool_use_id": st.sampled_from(["toolu_1", "toolu_2"]), "uuid": uuids,
              "parentUuid": uuids, "sessionId": st.just("s"), "isSidechain": st.booleans(),
              "agentId": agent_ids},
)  # fmt: skip


def _pair(
    use: dict[str, Any], content: Any, error: Any, extra: dict[str, Any], link: Any, msg: str
) -> list[Any]:
    result = {"type": "tool_result", "tool_use_id": use["id"], "content": content, "is_error": error}
    return [
        {"type": "assistant", "message": {"id": msg, "role": "assistant", "content": [use]}, **extra},
        {"type": "user", "message": {"role": "user", "content": [result]}, "toolUseResult": link, **extra},
    ]


#: A tool call and its result, well formed around generated values: without
#: these, random events almost never make an answered explore call.
pairs = st.builds(
    _pair,
    st.fixed_dictionaries(
        {
            "type": st.just("tool_use"),
            "id": st.sampled_from(["toolu_1", "toolu_2", "toolu_3"]),
            "name": st.sampled_from([EXPLORE, "Read", "Bash", "Grep", "Task", "Agent", "TodoWrite"]),
            "input": inputs,
        }
    ),
    contents,
    st.booleans() | json_values,
    line_extras,
    st.fixed_dictionaries({"agentId": agent_ids}) | json_values,
    st.sampled_from(["msg_1", "msg_2", "msg_3", "msg_4"]),
)
event_files = st.lists(pairs | events.map(lambda e: [e]), max_size=8).map(
    lambda groups: "".join(json.dumps(e) + "\n" for g in groups for e in g).encode("utf-8", "surrogatepass")
)
meta_files = st.one_of(
    st.builds(lambda v: json.dumps({"toolUseId": v}).encode(), ids),
    json_values.map(lambda v: json.dumps(v).encode("utf-8", "surrogatepass")),
)


@SETTINGS
@given(
    kind=st.sampled_from(["stream-json", "interactive"]),
    main=event_files,
    subagents=st.lists(st.tuples(event_files, st.none() | meta_files), max_size=2),
)
def test_no_exception_escapes_on_arbitrary_json_events(kind, main, subagents):
    files = {"s.jsonl": main}
    for i, (data, meta) in enumerate(subagents):
        files[f"s/subagents/agent-{i}.jsonl"] = data
        if meta is not None:
            files[f"s/subagents/agent-{i}.meta.json"] = meta
    check_no_escape(kind, files)


# --- metamorphic properties on generated transcripts ----------------------------------

PATHS = ["lib/a.js", "lib/b.js", "lib/router/index.js", "test/app.js"]
path_lists = st.lists(st.sampled_from(PATHS), max_size=3, unique=True)
simple_steps = st.one_of(
    st.tuples(st.just("explore"), path_lists, path_lists),
    st.tuples(st.just("read"), st.sampled_from([*PATHS, "lib/other.js"]), st.sampled_from(["", "/t/", "./"])),
    st.tuples(st.just("bash"), st.sampled_from(
        ["cat lib/a.js", "sed -n '1,5p' lib/b.js", "grep -rn send lib", "npm test", "ls lib"])),
    st.tuples(st.sampled_from(["Grep", "Glob", "Edit", "TodoWrite", "ToolSearch", "Write"])),
    st.tuples(st.just("failed explore")),
    st.tuples(st.just("parallel"), st.sampled_from(PATHS)),
)  # fmt: skip
plans = st.lists(
    st.one_of(simple_steps, st.tuples(st.just("delegate"), st.lists(simple_steps, max_size=4))),
    min_size=1,
    max_size=10,
)


def _do(run: Run, step: tuple[Any, ...], parent: str | None) -> None:
    kind = step[0]
    if kind == "explore":
        run.step(run.explore(f"q{len(run.events)}"), response(step[1], step[2]), parent=parent)
    elif kind == "failed explore":
        run.step(run.explore("bad"), "MCP error -32603: boom", is_error=True, parent=parent)
    elif kind == "read":
        run.step(run.use("Read", file_path=step[2] + step[1]), parent=parent)
    elif kind == "bash":
        run.step(run.use("Bash", command=step[1]), parent=parent)
    elif kind == "parallel":  # an explore and a Read issued in one message
        explore, read = run.explore("par"), run.use("Read", file_path=step[1])
        run.message(explore, read, parent=parent)
        run.result(explore, response([step[1]]), parent=parent)
        run.result(read, parent=parent)
    else:
        run.step(run.use(kind, pattern="x"), parent=parent)


def build(plan: Sequence[tuple[Any, ...]]) -> Run:
    """A headless run (the builders' one line per block) carrying out ``plan``."""
    run = Run()
    for step in plan:
        if step[0] == "delegate":
            task = run.use("Task", prompt="look into it", description="d")
            run.message(task)
            for sub in step[1]:
                _do(run, sub, task["id"])
            run.result(task, "the subagent's answer")
        else:
            _do(run, step, None)
    run.finish()
    return run


def encode(evs: Sequence[dict[str, Any] | str]) -> bytes:
    """Events to JSONL; a ``str`` item is written as a raw line (blank lines)."""
    text = "".join((e if isinstance(e, str) else json.dumps(e)) + "\n" for e in evs)
    return text.encode("utf-8", "surrogatepass")  # a raw line may carry a lone surrogate: bad bytes


def verdict_of(*files: bytes) -> dict[str, Any]:
    out = judge_files("stream-json", {f"run-x.t{i}.jsonl": data for i, data in enumerate(files, 1)})
    assert not isinstance(out, TranscriptError), out
    return out[0]


NOISE = [
    {"type": "rate_limit_event", "session_id": "sess-1", "rate_limit_info": {"status": "allowed"}},
    {"type": "stream_event", "event": {"type": "content_block_delta"}, "session_id": "sess-1"},
    {"type": "system", "subtype": "hook_started", "session_id": "sess-1", "hook": "PreToolUse"},
    {"type": "system", "subtype": "compact_boundary", "session_id": "sess-1"},
    {"type": "assistant", "message": {"id": "msg_noise", "role": "assistant",
     "content": [{"type": "thinking", "thinking": "", "signature": "x"}]}, "session_id": "sess-1"},
    {"type": "assistant", "message": {"id": "msg_noise2", "role": "assistant",
     "content": [{"type": "text", "text": "Let me look."}]}, "session_id": "sess-1"},
    {"type": "user", "message": {"role": "user", "content": "a follow-up prompt"}, "session_id": "sess-1"},
    {"type": "future_event_type", "payload": [1, 2, {"tool_use": "no"}], "session_id": "sess-1"},
    "",
    "   ",
]  # fmt: skip


def with_noise(evs: list[Any], inserts: Sequence[tuple[int, int]]) -> list[Any]:
    out = list(evs)
    for where, which in inserts:
        out.insert(where % (len(out) + 1), NOISE[which % len(NOISE)])
    return out


def merged(evs: list[dict[str, Any]]) -> list[dict[str, Any]]:
    """One line per message: consecutive assistant lines of one ``message.id`` merged."""
    out: list[dict[str, Any]] = []
    for e in evs:
        prev = out[-1] if out else None
        if (
            prev is not None
            and e["type"] == prev["type"] == "assistant"
            and e["message"]["id"] == prev["message"]["id"]
        ):
            prev["message"]["content"] = prev["message"]["content"] + e["message"]["content"]
        else:
            out.append(copy.deepcopy(e))
    return out


def moved_result(evs: list[dict[str, Any]], pick: int, to: int) -> list[dict[str, Any]]:
    """One tool_result line moved elsewhere in the file (file order is not causal order)."""
    results = [i for i, e in enumerate(evs) if e["type"] == "user"]
    if not results:
        return evs
    out = list(evs)
    line = out.pop(results[pick % len(results)])
    out.insert(to % (len(out) + 1), line)
    return out


def renamed(evs: list[dict[str, Any]], old: str, new: str) -> list[dict[str, Any]]:
    out = copy.deepcopy(evs)
    for e in out:
        for block in e.get("message", {}).get("content", []):
            if isinstance(block, dict) and block.get("name") == old:
                block["name"] = new
    return out


def check_metamorphic(plan: Sequence[tuple[Any, ...]], transform: Callable[[list[Any]], list[Any]]) -> None:
    evs = build(plan).events
    assert verdict_of(encode(transform(evs))) == verdict_of(encode(evs))


def interactive(evs: list[dict[str, Any]], layout: str) -> dict[str, Any]:
    """The same run as an interactive session log (relative path -> its events,
    or a sidecar's content): subagent events ``inline`` (``isSidechain``), in
    ``flat`` ``agent-<id>.jsonl`` files linked by ``toolUseResult.agentId``, or
    in ``subagents/`` files linked by a meta sidecar's ``toolUseId``."""
    main: list[dict[str, Any]] = []
    subs: dict[str, list[dict[str, Any]]] = {}
    last: dict[str, str | None] = {}
    spawned_at: dict[str, str] = {}  # Task id -> uuid of the line that called it
    agents: dict[str, str] = {}
    count = iter(range(1 << 30))

    def add(e: dict[str, Any], thread: str) -> None:
        e = {k: v for k, v in e.items() if k not in ("parent_tool_use_id", "session_id")}
        e |= {"uuid": f"u{next(count)}", "sessionId": "s", "isSidechain": thread != "main"}
        e["parentUuid"] = last.get(thread, spawned_at.get(thread))
        if thread != "main":
            e["agentId"] = agents[thread]
        last[thread] = e["uuid"]
        (main if thread == "main" or layout == "inline" else subs[thread]).append(e)

    for event in copy.deepcopy(evs):
        thread = event.get("parent_tool_use_id") or "main"
        spawns = []
        for block in event["message"]["content"] if "message" in event else []:
            if block.get("name") in ("Task", "Agent"):
                spawns.append(block)
            if block.get("type") == "tool_result" and block["tool_use_id"] in agents and layout == "flat":
                event["toolUseResult"] = {"agentId": agents[block["tool_use_id"]]}
        add(event, thread)
        for block in spawns:  # a subagent's file starts with its prompt, even if it does nothing
            agents[block["id"]] = f"ag{len(agents)}"
            subs[block["id"]] = []
            spawned_at[block["id"]] = last[thread]  # type: ignore[assignment]
            add(
                {"type": "user", "message": {"role": "user", "content": block["input"]["prompt"]}},
                block["id"],
            )
    files: dict[str, Any] = {"s.jsonl": main}
    for tid, lines in subs.items():
        if layout == "flat":
            files[f"agent-{agents[tid]}.jsonl"] = lines
        elif layout == "subagents":
            files[f"s/subagents/agent-{agents[tid]}.jsonl"] = lines
            files[f"s/subagents/agent-{agents[tid]}.meta.json"] = {"toolUseId": tid}
    return files


def encode_files(files: dict[str, Any]) -> dict[str, bytes]:
    return {rel: json.dumps(v).encode() if rel.endswith(".json") else encode(v) for rel, v in files.items()}


@SETTINGS
@given(plan=plans, layout=st.sampled_from(["inline", "flat", "subagents"]))
def test_a_run_reads_the_same_as_stream_json_and_as_an_interactive_session(plan, layout):
    evs = build(plan).events
    out = judge_files("interactive", encode_files(interactive(evs, layout)))
    assert not isinstance(out, TranscriptError), out
    verdict, warnings = out
    assert warnings == []
    assert verdict == verdict_of(encode(evs))


def mutated(value: Any, mutations: Sequence[tuple[int, str, int, Any]]) -> Any:
    """Real events (or a sidecar) with fields dropped, retyped or duplicated anywhere in them."""
    out = copy.deepcopy(value)
    for where, op, pick, new in mutations:
        nodes: list[Any] = []
        stack: list[Any] = [out]
        while stack:
            node = stack.pop()
            if isinstance(node, dict | list):
                nodes.append(node)
                stack.extend(node.values() if isinstance(node, dict) else node)
        node = nodes[where % len(nodes)]
        keys = list(node) if isinstance(node, dict) else list(range(len(node)))
        if not keys:
            continue
        key = keys[pick % len(keys)]
        if op == "drop":
            del node[key]
        elif op == "set":
            node[key] = copy.deepcopy(new)  # never the generated object itself: no cycles
        elif op == "dup":
            node[key] = copy.deepcopy(node[keys[where % len(keys)]])
    return out


mutations = st.lists(
    st.tuples(st.integers(0, 9999), st.sampled_from(["drop", "set", "dup"]), st.integers(0, 99), json_values),
    min_size=1,
    max_size=6,
)


@SETTINGS
@given(plan=plans, muts=mutations, layout=st.sampled_from(["stream-json", "inline", "flat", "subagents"]))
def test_no_exception_escapes_on_mutated_real_transcripts(plan, muts, layout):
    evs = build(plan).events
    if layout == "stream-json":
        check_no_escape("stream-json", {"s.jsonl": encode(mutated(evs, muts))})
    else:
        files = interactive(evs, layout)
        # The mutations land in one file (or sidecar) at a time.
        for rel in files:
            check_no_escape("interactive", encode_files(files | {rel: mutated(files[rel], muts)}))


@SETTINGS
@given(
    plan=plans, inserts=st.lists(st.tuples(st.integers(0, 999), st.integers(0, 99)), min_size=1, max_size=8)
)
def test_unknown_events_and_blank_lines_never_change_a_verdict(plan, inserts):
    check_metamorphic(plan, lambda evs: with_noise(evs, inserts))


@SETTINGS
@given(plan=plans)
def test_one_line_per_message_instead_of_per_block_never_changes_a_verdict(plan):
    check_metamorphic(plan, merged)


@SETTINGS
@given(plan=plans, pick=st.integers(0, 99), to=st.integers(0, 999))
def test_moving_a_tool_result_anywhere_never_changes_a_verdict(plan, pick, to):
    check_metamorphic(plan, lambda evs: moved_result(evs, pick, to))


@SETTINGS
@given(plan=plans)
def test_renaming_task_to_agent_changes_only_the_delegation_labels(plan):
    evs = build(plan).events
    as_task, as_agent = verdict_of(encode(evs)), verdict_of(encode(renamed(evs, "Task", "Agent")))
    for call in as_task["calls"]:
        if call["next"] == "Task" or call["next"].startswith("Task → "):
            call["next"] = "Agent" + call["next"][len("Task") :]
    assert as_agent == as_task


@SETTINGS
@given(plan=plans, cuts=st.lists(st.integers(0, 999), max_size=3))
def test_splitting_a_run_into_turn_files_never_changes_a_verdict(plan, cuts):
    evs = build(plan).events
    at = sorted({c % (len(evs) + 1) for c in cuts})
    parts = [evs[a:b] for a, b in zip([0, *at], [*at, len(evs)], strict=True)]
    assert verdict_of(*(encode(p) for p in parts)) == verdict_of(encode(evs))


# --- fast paths against the contract's regexes -------------------------------------

_MARKER_TEXT = st.lists(
    st.sampled_from(["**`", "`**", "\n**`", "\n", "`", "*", "a", "b.js", "/", " ", "\r", "é"]), max_size=30
).map("".join)


@SETTINGS
@given(st.one_of(_MARKER_TEXT, st.text(max_size=60)))
def test_the_marker_fast_path_finds_exactly_what_the_regex_finds(text):
    import re

    from pytest_explore_suff.classify import _marker
    from pytest_explore_suff.events import ToolSpec

    assert _marker(ToolSpec.marker)(text) == re.findall(ToolSpec.marker, text, re.M)


# --- the same run in other agents' formats (transcript-formats.md, section 5) -----------

#: Each plan step's tool, by agent: the agent's own name for the same notion.
_OWN_TOOLS = {
    "qwen": {"Grep": ("grep_search", {"pattern": "x"}), "Glob": ("glob", {"pattern": "x"}),
             "Edit": ("edit", {"file_path": "lib/a.js"}), "TodoWrite": ("todo_write", {"todos": []}),
             "ToolSearch": ("todo_write", {"todos": []}), "Write": ("write_file", {"file_path": "n.md"})},
    "copilot": {"Grep": ("grep", {"pattern": "x"}), "Glob": ("glob", {"pattern": "x"}),
                "Edit": ("edit", {"path": "lib/a.js"}), "TodoWrite": ("report_intent", {"intent": "x"}),
                "ToolSearch": ("report_intent", {"intent": "y"}), "Write": ("create", {"path": "n.md"})},
}  # fmt: skip


#: Each agent's tool that reads a file (and its path argument), and its shell (and command).
_READ = {"qwen": ("read_file", "absolute_path"), "copilot": ("view", "path"), "amp": ("Read", "path"),
         "cline": ("read_file", "path"), "continue": ("read_file", "filepath"),
         "openhands": ("read", "path"), "opencode": ("read", "filePath"), "crush": ("view", "file_path"),
         "openhands-sdk": ("file_editor", "path")}  # fmt: skip
#: The other arguments of a read, where the reading tool is one of several commands.
_READ_ARGS = {"openhands-sdk": {"command": "view"}}
_SHELL = {"qwen": ("run_shell_command", "command"), "copilot": ("bash", "command"), "amp": ("Bash", "cmd"),
          "cline": ("execute_command", "command"),
          "continue": ("run_terminal_command", "command"), "openhands": ("run", "command"),
          "opencode": ("bash", "command"), "crush": ("bash", "command"),
          "openhands-sdk": ("terminal", "command")}  # fmt: skip
#: The delegation of an agent whose log holds no step of the subagent.
_DELEGATE = {"amp": ("Task", {"prompt": "look into it", "description": "d"}),
             "cline": ("new_task", {"mode": "code", "message": "look into it"}),
             "openhands": ("delegate", {"agent": "BrowsingAgent", "inputs": {"task": "look"}}),
             "opencode": ("task", {"description": "d", "prompt": "look into it", "subagent_type": "general"}),
             "openhands-sdk": ("delegate", {"command": "spawn", "ids": ["explorer"]})}  # fmt: skip
_OWN_TOOLS["openhands"] = {
    "Grep": ("run", {"command": "rg -n x lib"}), "Glob": ("run", {"command": "find lib -name '*.js'"}),
    "Edit": ("edit", {"command": "str_replace", "path": "lib/a.js"}),
    "TodoWrite": ("think", {"thought": "x"}), "ToolSearch": ("task_tracking", {"command": "view"}),
    "Write": ("edit", {"command": "create", "path": "n.md"}),
}  # fmt: skip
_OWN_TOOLS["continue"] = {
    "Grep": ("grep_search", {"query": "x"}), "Glob": ("file_glob_search", {"pattern": "x"}),
    "Edit": ("edit_existing_file", {"filepath": "lib/a.js"}),
    "Write": ("create_new_file", {"filepath": "n.md"}),
}  # fmt: skip
_OWN_TOOLS["opencode"] = {
    "Grep": ("grep", {"pattern": "x"}), "Glob": ("glob", {"pattern": "x"}),
    "Edit": ("edit", {"filePath": "lib/a.js", "oldString": "a", "newString": "b"}),
    "TodoWrite": ("todowrite", {"todos": []}), "ToolSearch": ("todoread", {}),
    "Write": ("write", {"filePath": "n.md", "content": "x"}),
}  # fmt: skip
#: Crush's: the formats page lists no bookkeeping tool of Crush; its todo list (``todos``)
#: stands for both.
_OWN_TOOLS["crush"] = {
    "Grep": ("grep", {"pattern": "x"}), "Glob": ("glob", {"pattern": "x"}),
    "Edit": ("edit", {"file_path": "lib/a.js", "old_string": "a", "new_string": "b"}),
    "TodoWrite": ("todos", {"todos": []}), "ToolSearch": ("todos", {"todos": []}),
    "Write": ("write", {"file_path": "n.md", "content": "x"}),
}  # fmt: skip
_OWN_TOOLS["openhands-sdk"] = {
    "Grep": ("grep", {"pattern": "x", "path": "lib"}), "Glob": ("glob", {"pattern": "lib/*.js"}),
    "Edit": ("file_editor", {"command": "str_replace", "path": "lib/a.js", "old_str": "a", "new_str": "b"}),
    "TodoWrite": ("task_tracker", {"command": "plan", "task_list": []}),
    "ToolSearch": ("think", {"thought": "x"}),
    "Write": ("file_editor", {"command": "create", "path": "n.md", "file_text": "x"}),
}  # fmt: skip


def _no_bookkeeping_nor_delegation(plan: Sequence[tuple[Any, ...]]) -> list[tuple[Any, ...]]:
    """Continue has neither a bookkeeping tool nor a delegation: the run without them."""
    return [p for p in plan if p[0] not in ("TodoWrite", "ToolSearch", "delegate")]


_OWN_TOOLS["cline"] = {
    "Grep": ("search_files", {"path": "lib", "regex": "x"}), "Glob": ("list_files", {"path": "lib"}),
    "Edit": ("replace_in_file", {"path": "lib/a.js", "diff": "x"}),
    "TodoWrite": ("update_todo_list", {"todos": "[ ] x"}),
    "ToolSearch": ("update_todo_list", {"todos": "[x] x"}),
    "Write": ("write_to_file", {"path": "n.md", "content": "x"}),
}  # fmt: skip
_OWN_TOOLS["amp"] = {
    "Grep": ("Grep", {"pattern": "x"}), "Glob": ("glob", {"filePattern": "x"}),
    "Edit": ("edit_file", {"path": "lib/a.js"}), "TodoWrite": ("todo_write", {"todos": []}),
    "ToolSearch": ("todo_read", {}), "Write": ("create_file", {"path": "n.md"}),
}  # fmt: skip


def _shape(agent: str) -> Any:
    import agent_shapes

    return {"qwen": agent_shapes.QwenChat, "copilot": agent_shapes.CopilotSession,
            "amp": agent_shapes.AmpThread, "cline": agent_shapes.ClineTask,
            "continue": agent_shapes.ContinueSession,
            "openhands": agent_shapes.OpenHandsSession, "opencode": agent_shapes.OpenCodeSession,
            "crush": agent_shapes.CrushSession,
            "openhands-sdk": agent_shapes.OpenHandsConversation}[agent]  # fmt: skip


def _own_call(agent: str, step: tuple[Any, ...], n: int) -> tuple[Any, Any]:
    """(the call, its result) of one simple plan step, written as ``agent`` writes it."""
    shape = _shape(agent)
    kind = step[0]
    if kind == "explore":
        return shape.explore(f"q{n}"), response(step[1], step[2])
    if kind == "failed explore":
        return shape.explore("bad"), ("error", "MCP error -32603: boom")
    if kind == "read":
        name, key = _READ[agent]
        return shape.call(name, **_READ_ARGS.get(agent, {}), **{key: step[2] + step[1]}), "ok"
    if kind == "bash":
        name, key = _SHELL[agent]
        return shape.call(name, **{key: step[1]}), "ok"
    name, args = _OWN_TOOLS[agent][kind]
    return shape.call(name, **args), "ok"


def _own_step(log: Any, agent: str, step: tuple[Any, ...], n: int) -> None:
    """One plan step that is no delegation, as one model response of ``agent``'s log (whose
    builder has `step`): a parallel step's explore and read are two calls of that response."""
    if step[0] == "parallel":
        e, r = _own_call(agent, ("explore", [step[1]], []), n), _own_call(agent, ("read", step[1], ""), n)
        log.step(e[0], r[0], results=[e[1], r[1]])
    else:
        call, result = _own_call(agent, step, n)
        log.step(call, results=[result])


def _no_subagent_steps(plan: Sequence[tuple[Any, ...]]) -> list[tuple[Any, ...]]:
    """Amp's thread holds no step of a ``Task``'s subagent (nor Cline's task, an OpenHands
    conversation, an OpenCode export: the subagent's steps are in a log of their own): the
    same run, its subagents idle."""
    return [("delegate", []) if p[0] == "delegate" else p for p in plan]


def _build_flat(agent: str, plan: Sequence[tuple[Any, ...]], *args: Any) -> Any:
    """The run, in the log of an agent whose builder has `step` and `finish` (delegations
    written as calls whose subagent left nothing in the log)."""
    log = _shape(agent)(*args)
    log.user("where is f?")
    for n, step in enumerate(plan):
        if step[0] == "delegate":
            name, delegate_args = _DELEGATE[agent]
            log.step(log.call(name, **delegate_args), results=["the answer"])
        else:
            _own_step(log, agent, step, n)
    log.finish()
    return log


#: The session of the run, in a log that holds many (its subagents' are sessions too).
MAIN = "ses_0main"


def build_sessions(agent: str, plan: Sequence[tuple[Any, ...]]) -> list[Any]:
    """The run as OpenCode's or Crush's sessions: the caller's (`MAIN`), then one per
    delegation, the subagent's (its parent: the caller's session). OpenCode's ``task`` call
    names its subagent's session in its metadata, or (every other one here) does not: the
    caller's next child session is then its subagent's. Crush names the child session by the
    ``agent`` call's id."""
    shape = _shape(agent)
    main = shape(MAIN)
    children: list[Any] = []
    main.user("where is f?")
    for n, step in enumerate(plan):
        if step[0] != "delegate":
            _own_step(main, agent, step, n)
            continue
        child = shape(f"{MAIN}_{n:03d}", parent=MAIN)
        if agent == "opencode":
            main.delegate(child, named=len(children) % 2 == 0)
        else:
            main.delegate(child)
        for sub in step[1]:
            _own_step(child, agent, sub, n)
        children.append(child)
    main.finish()
    return [main, *children]


def _rows(agent: str, plan: Sequence[tuple[Any, ...]]) -> dict[str, list[dict[str, Any]]]:
    """The rows of the run's sessions in ``agent``'s database."""
    from agent_shapes import crush_rows, opencode_rows

    return (opencode_rows if agent == "opencode" else crush_rows)(build_sessions(agent, plan))


def _cell(column: str, value: Any) -> Any:
    """A column's value as a damaged database holds it: the JSON columns as JSON text (what
    they hold, whatever it became), a value SQLite has no type for as text (JSON, or digits),
    a string that is no UTF-8 (a lone surrogate) as its bytes."""
    from agent_shapes import JSON_COLUMNS

    if column in JSON_COLUMNS or isinstance(value, dict | list):
        return json.dumps(value)
    if isinstance(value, int) and not isinstance(value, bool) and not -(1 << 63) <= value < 1 << 63:
        return str(value)
    if isinstance(value, str):
        try:
            value.encode("utf-8")
        except UnicodeEncodeError:
            return value.encode("utf-8", "surrogatepass")
    return value


def database(agent: str, rows: Any, *, live: bool = False) -> dict[str, bytes]:
    """The files of ``agent``'s database holding ``rows`` (table -> rows, each a dict of its
    columns; damaged or not), written as the agent does (WAL mode): closed (checkpointed, its
    ``-wal`` gone), or ``live``: as an agent that died left it, every row in its ``-wal``,
    its ``-shm`` beside. A row that is no dict, a column its table lacks, a second row with
    an id already written (a primary key) are left out: a database cannot hold them."""
    import sqlite3

    from agent_shapes import CRUSH_SCHEMA, OPENCODE_SCHEMA

    name = DATABASES[agent]
    with tempfile.TemporaryDirectory(prefix="explore-suff-db-") as tmp:
        path = os.path.join(tmp, name)
        conn = sqlite3.connect(path)
        try:
            conn.execute("PRAGMA journal_mode=WAL")
            conn.execute("PRAGMA wal_autocheckpoint=0")
            conn.executescript(OPENCODE_SCHEMA if agent == "opencode" else CRUSH_SCHEMA)
            for table, table_rows in rows.items() if isinstance(rows, dict) else ():
                have = {r[1] for r in conn.execute("SELECT * FROM pragma_table_info(?)", (table,))}
                for row in table_rows if have and isinstance(table_rows, list) else ():
                    names = [c for c in row if c in have] if isinstance(row, dict) else []
                    if names:
                        conn.execute(
                            f"INSERT OR IGNORE INTO {table} ({', '.join(names)}) VALUES "
                            f"({', '.join('?' * len(names))})",
                            [_cell(c, row[c]) for c in names],
                        )
            conn.commit()
            if live:
                return {n: Path(tmp, n).read_bytes() for n in (name, f"{name}-wal", f"{name}-shm")}
        finally:
            conn.close()
        return {name: Path(path).read_bytes()}


def build_as(agent: str, plan: Sequence[tuple[Any, ...]]) -> bytes:
    """The run ``build(plan)`` writes, as a Qwen Code chat or a Copilot CLI event log."""
    from agent_shapes import CopilotSession, QwenChat

    if agent in ("amp", "continue"):
        return json.dumps(_build_flat(agent, plan).document()).encode()
    if agent == "opencode-export":  # one session's export: its subagents' are not in it
        return json.dumps(_build_flat("opencode", plan).export()).encode()
    if agent == "qwen":
        chat = QwenChat()
        chat.user("where is f?")
        for n, step in enumerate(plan):
            if step[0] == "delegate":
                flat = [x for s in step[1] for x in ([("explore", [s[1]], []), ("read", s[1], "")]
                                                    if s[0] == "parallel" else [s])]  # fmt: skip
                subs = [_own_call(agent, s, n) for s in flat]
                chat.delegate("explorer", [(c["name"], c["args"]) for c, _ in subs])
            else:
                _own_step(chat, agent, step, n)
        chat.finish()
        return encode(chat.records)
    session = CopilotSession()
    session.user("where is f?")
    for n, step in enumerate(plan):
        if step[0] == "delegate":
            task = session.delegate([])
            # the subagent's own messages, inside the task call's span
            del session.events[-2:]
            for sub in step[1]:
                if sub[0] == "parallel":
                    e, r = (
                        _own_call(agent, ("explore", [sub[1]], []), n),
                        _own_call(agent, ("read", sub[1], ""), n),
                    )
                    session.step(e[0], r[0], results=[e[1], r[1]], parent=task["toolCallId"])
                else:
                    call, result = _own_call(agent, sub, n)
                    session.step(call, results=[result], parent=task["toolCallId"])
            session.event("subagent.completed", toolCallId=task["toolCallId"])
            session.event("tool.execution_complete", toolCallId=task["toolCallId"], success=True,
                          result={"content": "the subagent's answer"})  # fmt: skip
        else:
            _own_step(session, agent, step, n)
    session.finish()
    session.shutdown()
    return encode(session.events)


def _judged(verdict: dict[str, Any]) -> tuple[Any, ...]:
    """What a verdict says of each call, less its labels and query (each agent names its own
    tools; the builders number their queries their own way)."""
    calls = [(c["bucket"], c["named"], c["files"], c["thread"] == "main") for c in verdict["calls"]]
    return calls, verdict["counts"], verdict["errored"], verdict["concurrent"], verdict["flags"]


def _no_subagent_explores(plan: Sequence[tuple[Any, ...]]) -> list[tuple[Any, ...]]:
    """Qwen Code logs a subagent's calls in its telemetry alone, with no result: an explore
    made inside a subagent has no response to judge there (the formats page)."""
    keep = ("explore", "failed explore", "parallel")
    return [("delegate", [s for s in p[1] if s[0] not in keep]) if p[0] == "delegate" else p for p in plan]


#: The file each agent's log is judged from.
LOG_NAMES = {"qwen": "chat.jsonl", "copilot": "events.jsonl", "amp": "T-1.json", "continue": "s.json",
             "opencode-export": "export.json"}  # fmt: skip
#: Logs of several files, as (reader, the files written): a Cline task, in each form.
FOLDERS = {
    "cline": ("cline", ("native", ("api", "ui"))),
    "cline-xml": ("cline", ("xml", ("api", "ui"))),
    "cline-ui": ("cline", ("native", ("ui",))),
    "openhands": ("openhands", ()),
    "openhands-sdk": ("openhands-sdk", ()),
}
#: Logs that are SQLite databases of many sessions: the database's file name.
DATABASES = {"opencode": "opencode.db", "crush": "crush.db"}
#: Logs of many sessions: the databases, and OpenCode's legacy JSON storage (a file a
#: session, message and part).
MANY = (*sorted(DATABASES), "opencode-storage")
AGENTS = sorted(LOG_NAMES)
EVERY_LOG = AGENTS + sorted(FOLDERS) + list(MANY)


def build_files(agent: str, plan: Sequence[tuple[Any, ...]]) -> tuple[str, dict[str, bytes]]:
    """(the reader, the files) of the run ``build(plan)`` writes, as ``agent`` logs it."""
    if agent in LOG_NAMES:
        return agent, {LOG_NAMES[agent]: build_as(agent, plan)}
    if agent in DATABASES:
        return agent, database(agent, _rows(agent, plan))
    with tempfile.TemporaryDirectory() as tmp:
        if agent == "opencode-storage":
            from agent_shapes import write_opencode_storage

            folder = write_opencode_storage(Path(tmp) / "p", build_sessions("opencode", plan))
            reader = agent
        else:
            reader, write_args = FOLDERS[agent]
            task = _build_flat(reader, _no_subagent_steps(plan), *write_args[:1])
            folder = task.write(Path(tmp) / "t", *write_args[1:])
        return reader, {p.relative_to(tmp).as_posix(): p.read_bytes() for p in sorted(folder.rglob("*.json"))}


def _as_logged(agent: str, plan: Sequence[tuple[Any, ...]]) -> list[tuple[Any, ...]]:
    """The part of ``plan`` ``agent``'s log can hold (see each helper's reason)."""
    if agent == "qwen":
        return _no_subagent_explores(plan)
    if agent == "continue":
        return _no_bookkeeping_nor_delegation(plan)
    if agent in ("amp", "opencode-export") or agent in FOLDERS:
        return _no_subagent_steps(plan)
    return list(plan)


@pytest.mark.parametrize("agent", EVERY_LOG)  # each agent its own examples
@SETTINGS
@given(plan=plans)
def test_a_run_reads_the_same_in_every_agents_format(plan, agent):
    plan = _as_logged(agent, plan)
    reader, files = build_files(agent, plan)
    if agent in MANY:
        # the subagents' sessions are the delegations' threads, not transcripts of their own
        assert check_no_escape_in_many(reader, files) == [MAIN]
    out = judge_files(reader, files, MAIN if agent in MANY else "")
    assert not isinstance(out, TranscriptError), out
    verdict, warnings = out
    assert warnings == []
    assert _judged(verdict) == _judged(verdict_of(encode(build(plan).events)))


@SETTINGS
@given(plan=plans, muts=mutations, agent=st.sampled_from(EVERY_LOG), pick=st.integers(0, 9))
def test_no_exception_escapes_on_mutated_logs_of_every_agent(plan, muts, agent, pick):
    if agent == "continue":
        plan = _no_bookkeeping_nor_delegation(plan)
    if agent in DATABASES:
        # a database's rows mutated as one value: the JSON its rows hold (message and part
        # data, Crush's parts), and their ids and links (a session its own parent, a part in
        # no message), before the database is written
        check_no_escape_in_many(agent, database(agent, mutated(_rows(agent, plan), muts)))
        return
    reader, files = build_files(agent, plan)
    rel = sorted(files)[pick % len(files)]  # the mutations land in one file at a time
    if rel.endswith(".json"):  # a document: mutated as one value
        files[rel] = json.dumps(mutated(json.loads(files[rel]), muts)).encode("utf-8", "surrogatepass")
    else:
        files[rel] = encode(mutated([json.loads(line) for line in files[rel].decode().splitlines()], muts))
    if agent in MANY:
        check_no_escape_in_many(reader, files)
    else:
        check_no_escape(reader, files)


#: A run in each log of several files or many sessions, whose bytes the property below damages.
_SAMPLE_PLAN = [("explore", ["lib/a.js"], ["lib/b.js"]), ("read", "lib/b.js", "/t/"),
                ("delegate", [("parallel", "lib/a.js"), ("bash", "cat lib/a.js")]),
                ("failed explore",), ("TodoWrite",)]  # fmt: skip
#: Bytes written over a database: (where, what).
overwrites = st.lists(st.tuples(st.integers(0, 1 << 16), st.binary(min_size=1, max_size=24)), max_size=4)


def _overwritten(data: bytes, writes: Sequence[tuple[int, bytes]], cut: int | None) -> bytes:
    out = bytearray(data)
    for where, what in writes:
        at = where % max(len(out), 1)
        out[at : at + len(what)] = what
    return bytes(out if cut is None else out[: cut % (len(out) + 1)])


@SETTINGS
@given(
    contents=st.lists(file_bytes, min_size=1, max_size=2),
    agent=st.sampled_from([*AGENTS, "cline", "openhands-sdk", *MANY]),
    form=st.sampled_from(["bytes", "damaged", "damaged wal", "any wal"]),
    writes=overwrites,
    cut=st.none() | st.integers(0, 1 << 16),
    pick=st.integers(0, 999),
)
def test_no_exception_escapes_on_arbitrary_bytes_for_every_agent(contents, agent, form, writes, cut, pick):
    if agent == "cline":
        names = ["t/api_conversation_history.json", "t/ui_messages.json"]
        check_no_escape(agent, dict(zip(names, contents, strict=False)))
    elif agent in DATABASES:
        # any bytes for the database file; a real one with bytes written over it or cut short;
        # a real one whose rows are all in its -wal, the -wal damaged so, or any bytes (its
        # -shm real, or any bytes)
        name = DATABASES[agent]
        if form == "bytes":
            files = {name: contents[0]}
        elif form == "damaged":
            [sample] = database(agent, _rows(agent, _SAMPLE_PLAN)).values()
            files = {name: _overwritten(sample, writes, cut)}
        else:
            files = database(agent, _rows(agent, _SAMPLE_PLAN), live=True)
            wal = f"{name}-wal"
            files[wal] = _overwritten(files[wal], writes, cut) if form == "damaged wal" else contents[0]
            if len(contents) > 1:
                files[f"{name}-shm"] = contents[-1]
        check_no_escape_in_many(agent, files)
    elif agent in ("openhands-sdk", "opencode-storage"):
        # a real folder, one or two of its files any bytes
        files = build_files(agent, _SAMPLE_PLAN)[1]
        names = sorted(files)
        for i, data in enumerate(contents):
            files[names[(pick + 7 * i) % len(names)]] = data
        if agent in MANY:
            check_no_escape_in_many(agent, files)
        else:
            check_no_escape(agent, files)
    else:
        check_no_escape(agent, {LOG_NAMES[agent]: contents[0]})


# --- what the properties above found ------------------------------------------------


def test_a_lone_surrogate_escape_in_json_text_a_record_holds_reads_as_a_replacement_character():
    # JSON.stringify of a string cut inside an emoji writes a lone surrogate escape; in the
    # JSON text a row or a call's arguments hold, json.loads kept it as a lone surrogate, and
    # the verdict could not be written as UTF-8 (the report). Read as every line is: U+FFFD.
    plan = [("explore", ["lib/a\ud83d.js"], ["lib/b\ud83d.js"]), ("read", "lib/b\ud83d.js", "/t/")]
    for agent in ["opencode", "crush", "openhands-sdk"]:
        reader, files = build_files(agent, plan)
        out = judge_files(reader, files, MAIN if agent in MANY else "")
        assert not isinstance(out, TranscriptError), out
        _reportable(out)
        assert [c["next"] for c in out[0]["calls"]] == ["Read b\ufffd.js"], agent


def _damaged(doc: dict[str, Any]) -> None:
    """A list where a string was, in a Continue session, an OpenHands event, an SDK event."""
    if "history" in doc:
        for item in doc["history"]:
            for state in item.get("toolCallStates", []):
                state["status"] = []  # was looked up in a set
        doc["history"][-1]["message"]["toolCalls"] = 7  # was iterated
    elif doc.get("action") == "read":
        doc["id"] = []  # a V0 action's id: was a dict's key
    elif doc.get("kind") == "ActionEvent" and doc.get("tool_name") == "file_editor":
        doc["tool_name"] = []  # was looked up in a set


@pytest.mark.parametrize("agent", ["continue", "openhands", "openhands-sdk"])
def test_damaged_events_with_a_list_for_a_status_an_id_or_a_name_are_read(agent):
    # Unhashable, each made a TypeError escape the reader.
    reader, files = build_files(agent, [("explore", ["lib/a.js"], []), ("read", "lib/a.js", "")])
    for rel, data in files.items():
        doc = json.loads(data)
        if isinstance(doc, dict):
            _damaged(doc)
            files[rel] = json.dumps(doc).encode()
    out = judge_files(reader, files)
    assert not isinstance(out, TranscriptError), out
    _reportable(out)
    assert out[0]["answered"] == 1
