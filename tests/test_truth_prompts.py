"""A truth file's ``prompt`` questions on every agent's logs: the run's first prompt is the
main thread's first message the user wrote, never the context the CLI writes as a user
message (AGENTS.md, the environment, system reminders), a subagent's task, or a later
message; in a multi-turn run, the first turn's. Checked through pytest (plain and ``-n 2``)
against `truth_oracle.first_prompt`, which reads each agent's files on its own."""

from __future__ import annotations

import functools
import json
import re
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest
import truth_oracle as oracle
from agent_shapes import (
    AmpThread,
    ClineTask,
    ContinueSession,
    CopilotSession,
    CrushSession,
    GeminiSession,
    OpenCodeSession,
    OpenHandsConversation,
    OpenHandsSession,
    QwenChat,
    Rollout,
    child_rollout,
    explore_text,
    write_crush_db,
    write_opencode_db,
)
from builders import Run, Session, response

from pytest_explore_suff import judge, truth

ASKED = "How does res.send set the Content-Type?"
OTHER = "Where is the router defined?"
#: Context a CLI writes as a user message, holding words the question's regex finds.
CONTEXT = "res.send and the Content-Type header (project notes)"
REGEX = r"res\.send.*Content-Type"
TRUTH = f"""version = 1
[[question]]
id = "send"
prompt = '{REGEX}'
answer = ["lib/response.js"]
symbols = ["res.send"]
"""
GOLD = ["lib/response.js"]


# -- one writer per agent: (root, name, the first prompt) -> the transcript's files ---------------
# Each run's main thread starts with the context its CLI writes (where it writes one), then the
# first prompt; a subagent's task and a later user message say ASKED whatever the first prompt.


def claude_stream(root: Path, name: str, first: str) -> None:
    r = Run(f"s-{name}")
    reminder = {"type": "text", "text": f"<system-reminder>{CONTEXT}</system-reminder>"}
    r.events.append(
        {
            "type": "user",
            "message": {"role": "user", "content": [reminder, {"type": "text", "text": first}]},
            "session_id": r.session,
            "parent_tool_use_id": None,
        }
    )
    task = r.use("Task", prompt=ASKED, description="look")
    r.message(task)
    r.events.append(
        {
            "type": "user",
            "message": {"role": "user", "content": ASKED},
            "parent_tool_use_id": task["id"],
            "session_id": r.session,
        }
    )
    r.step(r.explore("send"), response(GOLD), parent=task["id"])
    r.result(task, "found it")
    r.events.append({"type": "user", "message": {"role": "user", "content": ASKED}, "session_id": r.session})
    r.step(r.explore("send"), response(GOLD))
    r.finish("res.send sets it in lib/response.js")
    r.write(root / "claude" / f"run-{name}.jsonl")


def claude_session(root: Path, name: str, first: str) -> None:
    s = Session(f"11111111-2222-4333-8444-55555555555{len(name) % 10}")
    s._line(
        "user",
        {"role": "user", "content": f"<local-command-caveat>{CONTEXT}</local-command-caveat>"},
        isMeta=True,
    )
    s._line("user", {"role": "user", "content": "<command-name>/clear</command-name>"})
    s._line("user", {"role": "user", "content": CONTEXT}, isMeta=True)  # a command's expansion
    s.prompt(first)
    s.step(Run.use("mcp__codegraph__codegraph_explore", query="send"), response(GOLD))
    s.prompt(ASKED)
    s.message({"type": "text", "text": "res.send sets it in lib/response.js"})
    s.write(root / "claude-session" / f"run-{name}.jsonl")


def codex(root: Path, name: str, first: str) -> None:
    c = Rollout("current", "exec_command", session_id=f"0199-{name}")
    c.item(
        {
            "type": "message",
            "role": "user",
            "content": [
                {
                    "type": "input_text",
                    "text": f"# AGENTS.md instructions for /work/t\n\n<INSTRUCTIONS>\n{CONTEXT}\n"
                    "</INSTRUCTIONS>",
                },
                {
                    "type": "input_text",
                    "text": f"<environment_context>\n  <cwd>{CONTEXT}</cwd>\n</environment_context>",
                },
            ],
        }
    )
    c.user(first)
    spawn = c.spawn(ASKED)
    c.step(spawn, outputs=[json.dumps({"agent_id": f"0199-{name}-child"})])
    c.step(c.explore("send"), outputs=[explore_text(GOLD)])
    c.user(ASKED)
    c.finish("res.send sets it in lib/response.js")
    day = root / "codex" / "sessions" / "2026" / "03" / "01"
    c.write(day / f"rollout-2026-03-01T10-00-00-{name}.jsonl")
    child = child_rollout(f"0199-{name}", f"0199-{name}-child", ASKED)
    child.step(child.explore("send"), outputs=[explore_text(GOLD)])
    child.finish("found")
    child.write(day / f"rollout-2026-03-01T10-00-01-{name}-child.jsonl")


def codex_mid2025(root: Path, name: str, first: str) -> None:
    """The mid-2025 shape: items only, no ``user_message`` events; the context a message of its own."""
    c = Rollout("mid-2025", "shell")
    c.item(
        {
            "type": "message",
            "role": "user",
            "content": [
                {"type": "input_text", "text": f"<user_instructions>\n{CONTEXT}\n</user_instructions>"}
            ],
        }
    )
    c.user(first)
    c.step(c.explore("send"), outputs=[explore_text(GOLD)])
    c.user(ASKED)
    c.finish("res.send sets it in lib/response.js")
    c.write(
        root / "codex-2025" / "sessions" / "2025" / "07" / "01" / f"rollout-2025-07-01T10-00-00-{name}.jsonl"
    )


def gemini(root: Path, name: str, first: str, form: str = "session") -> None:
    g = GeminiSession(form, sessionId=f"5c1d-{name}")
    g.user(f"<session_context>\nThis is the Gemini CLI. Context: {CONTEXT}\n</session_context>")
    g.user(first)
    g.step(g.explore("send"), results=[explore_text(GOLD)])
    g.user(ASKED)
    g.finish("res.send sets it in lib/response.js")
    g.write(
        root / f"gemini-{form}" / "tmp" / "ab12" / "chats" / f"session-2026-03-01T10-00-{name}{g.suffix()}"
    )


def gemini_checkpoint(root: Path, name: str, first: str) -> None:
    """An old checkpoint: the API history, whose first user content is the CLI's context."""
    g = GeminiSession("checkpoint")
    g.user(f"This is the Gemini CLI. We are setting up the context for our chat.\n{CONTEXT}")
    g.step(text="Got it. Thanks for the context!")
    g.user(first)
    g.step(g.explore("send"), results=[explore_text(GOLD)])
    g.user(ASKED)
    g.finish("res.send sets it in lib/response.js")
    g.write(root / "gemini-checkpoint" / "tmp" / "ab12" / f"checkpoint-{name}.json")


def qwen(root: Path, name: str, first: str) -> None:
    chat = QwenChat(session_id=f"7e1f-{name}")
    chat.user(f"This is the Qwen Code. We are setting up the context for our chat.\n{CONTEXT}")
    chat.user(first)
    chat.step(chat.explore("send"), results=[explore_text(GOLD)])
    chat.user(ASKED)
    chat.finish("res.send sets it in lib/response.js")
    chat.write(root / "qwen" / "chats" / f"{chat.session_id}.jsonl")


def copilot(root: Path, name: str, first: str) -> None:
    s = CopilotSession(f"c0p1-{name}")
    s.user(first)
    s.events[-1]["data"]["transformedContent"] = f"<current_datetime>now</current_datetime>\n\n{CONTEXT}"
    s.step(s.explore("send"), results=[explore_text(GOLD)])
    s.event("user.message", content=ASKED, parentToolCallId="toolu_sub")  # a subagent's, were it one
    s.user(ASKED)
    s.finish("res.send sets it in lib/response.js")
    s.write(root / "copilot" / "session-state" / s.session_id / "events.jsonl")


def amp(root: Path, name: str, first: str) -> None:
    t = AmpThread(f"T-5e3a0d2c-7f41-4b6a-9c11-{name}")
    t.messages.append(
        {
            "role": "user",
            "messageId": 0,
            "content": [
                {"type": "text", "text": f"<attached_files>{CONTEXT}</attached_files>"},
                {"type": "text", "text": first},
            ],
        }
    )
    t.step(t.explore("send"), results=[explore_text(GOLD)])
    t.user(ASKED)
    t.finish("res.send sets it in lib/response.js")
    t.write(root / "amp" / "threads" / f"{t.id}.json")


def cline(root: Path, name: str, first: str, files: tuple[str, ...] = ("api", "ui")) -> None:
    c = ClineTask(task_id=f"task-{name}")
    c.user(first)
    c.api[-1]["content"].append(
        {"type": "text", "text": f"<environment_details>\n{CONTEXT}\n</environment_details>"}
    )
    c.step(c.explore("send"), results=[explore_text(GOLD)])
    c._ui("say", "user_feedback", ASKED)
    c.api.append({"role": "user", "content": [{"type": "text", "text": f"<feedback>\n{ASKED}\n</feedback>"}]})
    c.finish("res.send sets it in lib/response.js")
    c.write(root / ("cline" if len(files) == 2 else f"cline-{files[0]}") / "tasks" / c.task_id, files)


def cline_api(root: Path, name: str, first: str) -> None:
    """The API history alone: the task is the ``<task>`` block."""
    cline(root, name, first, ("api",))


def continue_(root: Path, name: str, first: str) -> None:
    s = ContinueSession(f"c0n7-{name}")
    s.user(first)
    s.step(s.explore("send"), results=[explore_text(GOLD)])
    s.user(ASKED)
    s.finish("res.send sets it in lib/response.js")
    s.write(root / "continue" / "sessions" / f"{s.session_id}.json")


def openhands(root: Path, name: str, first: str) -> None:
    s = OpenHandsSession(f"0h{name}")
    s._event(source="agent", message="", action="system", args={"content": CONTEXT})
    s._event(source="user", message=CONTEXT, action="recall", args={"query": CONTEXT})
    s.user(first)
    s.step(s.explore("send"), results=[explore_text(GOLD)])
    s.user(ASKED)
    s.finish("res.send sets it in lib/response.js")
    s.write(root / "openhands" / "sessions" / s.session_id)


def openhands_sdk(root: Path, name: str, first: str) -> None:
    c = OpenHandsConversation(f"5dc0c0a1-7e2f-4c4e-9b1a-{name}")
    c.user(first)
    c.events[-1]["extended_content"] = [{"type": "text", "text": CONTEXT}]
    c.step(c.explore("send"), results=[explore_text(GOLD)])
    c.user(ASKED)
    c.finish("res.send sets it in lib/response.js")
    c.write(root / "openhands-sdk" / "conversations" / c.id)


def opencode_sessions(name: str, first: str) -> list[OpenCodeSession]:
    s = OpenCodeSession(f"ses_{name}")
    s._message(
        "user",
        [
            {"type": "text", "text": f"Called the Read tool: {CONTEXT}", "synthetic": True},
            {"type": "text", "text": first},
        ],
    )
    child = OpenCodeSession(f"ses_{name}_sub", parent=s.id)
    child.user(ASKED)
    s.delegate(child)
    child.step(child.explore("send"), results=[explore_text(GOLD)])
    s.user(ASKED)
    s.finish("res.send sets it in lib/response.js")
    return [s, child]


def crush_sessions(name: str, first: str) -> list[CrushSession]:
    s = CrushSession(f"crush-{name}")
    s.user(first)
    child = CrushSession()
    child.user(ASKED)
    s.delegate(child)
    child.step(child.explore("send"), results=[explore_text(GOLD)])
    s.user(ASKED)
    s.finish("res.send sets it in lib/response.js")
    return [s, child]


WRITERS: dict[str, Callable[[Path, str, str], None]] = {
    "claude": claude_stream,
    "claude-session": claude_session,
    "codex": codex,
    "codex-2025": codex_mid2025,
    "gemini-session": gemini,
    "gemini-jsonl": lambda r, n, f: gemini(r, n, f, "jsonl"),
    "gemini-checkpoint": gemini_checkpoint,
    "qwen": qwen,
    "copilot": copilot,
    "amp": amp,
    "cline": cline,
    "cline-api": cline_api,
    "continue": continue_,
    "openhands": openhands,
    "openhands-sdk": openhands_sdk,
}
DATABASES = {"opencode": opencode_sessions, "crush": crush_sessions}


def campaign(root: Path) -> Path:
    """Per agent two runs: ``hit`` asks ASKED first, ``miss`` asks OTHER first (and ASKED later)."""
    for write in WRITERS.values():
        write(root, "hit", ASKED)
        write(root, "miss", OTHER)
    sessions = [*opencode_sessions("hit", ASKED), *opencode_sessions("miss", OTHER)]
    write_opencode_db(root / "opencode" / "opencode.db", sessions).close()
    write_crush_db(
        root / "crush" / ".crush" / "crush.db",
        [*crush_sessions("hit", ASKED), *crush_sessions("miss", OTHER)],
    )
    return root


@pytest.mark.parametrize("dist", [[], ["-n", "2"]], ids=["plain", "xdist"])
def test_a_prompt_question_covers_each_agents_run_by_its_first_prompt_only(
    pytester: pytest.Pytester, dist: list[str]
) -> None:
    root = campaign(pytester.path / "c")
    (pytester.path / "truth.toml").write_text(TRUTH, encoding="utf-8")
    result = pytester.runpytest(
        f"--explore-suff={root}",
        "--explore-suff-truth=truth.toml",
        "--explore-suff-json=r.json",
        "-p",
        "no:cacheprovider",
        *dist,
    )
    assert result.ret == 0, result.stdout.str()
    doc = json.loads((pytester.path / "r.json").read_text(encoding="utf-8"))
    records = {r["path"]: r for r in doc["transcripts"]}
    folders = {path.split("/")[0] for path in records}
    assert folders == {*WRITERS, *DATABASES}, folders  # every writer's runs were found
    for path, record in records.items():
        assert record["status"] == "classified", (path, record.get("error"))
        covered = [u["question"] for u in record["truth"]]
        assert covered == (["send"] if "hit" in path else []), path  # every hit run's path says so
        # The independent reading of each agent's files finds the same first prompt.
        files = [str(root / f) for f in record["files"]]
        session = path.rsplit("/", 1)[1] if ".db/" in path else None
        prompt = oracle.first_prompt(record["agent"], files, session)
        assert prompt is not None and prompt.strip() == (ASKED if covered else OTHER), (path, prompt)
        assert bool(re.search(REGEX, prompt)) == bool(covered), path
    assert sum(bool(r["truth"]) for r in records.values()) == len(records) // 2


def _stream_turns(first: str, folder: Path) -> list[Path]:
    paths = []
    for n, prompt in enumerate((first, ASKED if first != ASKED else OTHER), 1):
        r = Run("s-turns")
        r.events.append(
            {"type": "user", "message": {"role": "user", "content": prompt}, "session_id": "s-turns"}
        )
        r.step(r.explore("send"), response(GOLD))
        r.finish("res.send sets it")
        paths.append(r.write(folder / ("run-x.jsonl" if n == 1 else f"run-x.t{n}.jsonl")))
    return paths


def _codex_turns(first: str, folder: Path) -> list[Path]:
    paths = []
    for n, prompt in enumerate((first, ASKED if first != ASKED else OTHER), 1):
        c = Rollout("current", "exec_command")
        c.user(prompt)
        c.step(c.explore("send"), outputs=[explore_text(GOLD)])
        c.finish("res.send sets it")
        paths.append(c.write(folder / ("run-x.jsonl" if n == 1 else f"run-x.t{n}.jsonl")))
    return paths


def _turns(session: Callable[[], Any], first: str, folder: Path) -> list[Path]:
    """A two-turn run of an agent whose session builder has ``user``/``step``/``finish``
    with tool ``results`` (Gemini, Qwen, Copilot): the first turn asks ``first``."""
    paths = []
    for n, prompt in enumerate((first, ASKED if first != ASKED else OTHER), 1):
        s = session()
        s.user(prompt)
        s.step(s.explore("send"), results=[explore_text(GOLD)])
        s.finish("res.send sets it")
        paths.append(s.write(folder / ("run-x.jsonl" if n == 1 else f"run-x.t{n}.jsonl")))
    return paths


TURNS = {
    "stream-json": _stream_turns,
    "codex": _codex_turns,
    "gemini": functools.partial(_turns, lambda: GeminiSession("jsonl")),
    "qwen": functools.partial(_turns, QwenChat),
    "copilot": functools.partial(_turns, CopilotSession),
}


@pytest.mark.parametrize("kind", sorted(TURNS))
@pytest.mark.parametrize("first", [ASKED, OTHER])
def test_in_a_multi_turn_run_the_first_turns_prompt_counts(tmp_path: Path, kind: str, first: str) -> None:
    files = TURNS[kind](first, tmp_path)
    _, collector = judge(kind, [str(p) for p in files])
    assert collector.prompt == first
    questions = truth.parse(
        {"version": 1, "question": [{"id": "send", "prompt": REGEX, "answer": GOLD}]}, "t"
    )
    covered = truth.units(questions, "g", collector.prompt, list(range(1, len(files) + 1)))
    assert bool(covered) == (first == ASKED)
    assert oracle.first_prompt({"stream-json": "claude"}.get(kind, kind), [str(p) for p in files]) == first


def test_a_log_with_no_prompt_but_the_clis_context_matches_no_prompt_question(tmp_path: Path) -> None:
    c = Rollout("current", "exec_command")
    c.item(
        {
            "type": "message",
            "role": "user",
            "content": [
                {"type": "input_text", "text": f"<environment_context>{ASKED}</environment_context>"}
            ],
        }
    )
    c.step(c.explore("send"), outputs=[explore_text(GOLD)])
    c.finish("res.send sets it")
    _, collector = judge("codex", [str(c.write(tmp_path / "rollout-x.jsonl"))])
    assert collector.prompt is None


def test_the_mixed_agents_example_grades_every_agents_runs_by_their_prompts(
    pytester: pytest.Pytester,
) -> None:
    """examples/mixed-agents: its truth file finds each run's question by the run's prompt, in
    every agent's log; each verdict is what the generator had the agent answer."""
    import importlib.util

    from helpers import EXAMPLES

    spec = importlib.util.spec_from_file_location("make_mixed_agents", EXAMPLES / "make_mixed_agents.py")
    assert spec is not None and spec.loader is not None
    make = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(make)
    root = EXAMPLES / "mixed-agents"
    result = pytester.runpytest(f"--explore-suff={root}", "--explore-suff-json=r.json", "-n", "2",
                                "-p", "no:cacheprovider")  # fmt: skip
    result.assert_outcomes(passed=22)
    result.stdout.fnmatch_lines(["truth file: */mixed-agents/explore-suff-truth.toml (the campaign*"])
    doc = json.loads((pytester.path / "r.json").read_text(encoding="utf-8"))
    assert len(doc["transcripts"]) == 22
    for r in doc["transcripts"]:
        agent = r["agent"]
        i = int(re.sub(r"(/events)?\.jsonl?$", "", r["path"])[-1])  # the run's number, as named
        qid, _, _, _, _ = make.GRADED[i - 1]
        question, _ = make.QUESTIONS[i - 1]
        (unit,) = r["truth"]
        assert unit["question"] == qid, r["path"]
        given = "f" if agent == "opencode" else make.ANSWERED[agent][i - 1]
        expected = "fail" if agent == "opencode" else "pass" if given == "f" else (
            "fail" if qid == "flask-blueprints" else "partial")  # fmt: skip
        assert unit["verdict"] == expected, r["path"]
        files = [str(root / f) for f in r["files"]]
        session = r["path"].rsplit("/", 1)[1] if ".db/" in r["path"] else None
        assert oracle.first_prompt(agent, files, session) == question, r["path"]
