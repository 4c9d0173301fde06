"""Regenerate the mixed-agent example campaign (``examples/mixed-agents/``).

    python examples/make_mixed_agents.py

The same four questions about one repository, asked of three agents with the
same MCP server: Claude Code (headless stream-json runs, ``run-claude-<i>.jsonl``),
OpenAI Codex CLI (rollouts, one of them in the mid-2025 shape), Google
Gemini CLI (session documents, one in the newer JSONL form, with the CLI's
``logs.json`` beside them, which is not a transcript), Amp (threads), Cline
(task folders, one in the older XML form), OpenCode (a SQLite database of
two sessions, one with a subagent) and GitHub Copilot CLI (two sessions, whose
occupancy is estimated from the window at the end). Each agent's column of the summary is its
own arm. The event shapes are those of tests/builders.py
and tests/agent_shapes.py.

It also writes the campaign's truth file (``explore-suff-truth.toml``, docs/ground-truth.md):
one question per asked question, found in every agent's log by its prompt (each run's first
user message), graded on what the agent answered: a full answer, or a partial or wrong one
(``ANSWERED``); OpenCode's sessions answer "Answered." and fail.
"""

from __future__ import annotations

import json
import shutil
import sys
from pathlib import Path

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE.parent / "tests"))

from agent_shapes import (  # noqa: E402
    AmpThread,
    ClineTask,
    CopilotSession,
    GeminiSession,
    OpenCodeSession,
    Rollout,
    explore_text,
    write_opencode_db,
)
from builders import Run, response  # noqa: E402

OUT = HERE / "mixed-agents"
T = "/work/t-flask"
QUESTIONS = [
    ("how does flask route a request to a view", ["src/flask/app.py", "src/flask/sansio/scaffold.py"]),
    ("where are blueprints registered", ["src/flask/blueprints.py"]),
    ("how is the request context pushed", ["src/flask/ctx.py", "src/flask/globals.py"]),
    ("what does url_for build", ["src/flask/helpers.py"]),
]
MISSED = "src/flask/wrappers.py"
#: Per question: its id, the regex that finds it in a run's prompt, what a correct answer
#: mentions, and two answers: a full one, and a partial (or, for blueprints, a wrong) one.
GRADED = [
    ("flask-routing", "flask route a request", ["add_url_rule", "url_map", "dispatch_request"],
     "A view is registered with add_url_rule, which adds a Werkzeug Rule to app.url_map; for each "
     "request the matched rule's endpoint picks the view that dispatch_request calls.",
     "Routes are kept in app.url_map (add_url_rule adds them) and Werkzeug matches the URL."),
    ("flask-blueprints", "blueprints registered",
     ["register_blueprint", "BlueprintSetupState", "record_once"],
     "app.register_blueprint calls the blueprint's register, which makes a BlueprintSetupState and "
     "replays the deferred functions recorded with record and record_once.",
     "Blueprints are registered at import time, by the module that defines them."),
    ("flask-request-context", "request context pushed", ["RequestContext", "push", "_cv_request"],
     "wsgi_app makes a RequestContext and calls its push, which sets the _cv_request context "
     "variable (pushing an app context first when none is active).",
     "A RequestContext is made per request and pushed."),
    ("flask-url-for", "url_for build", ["url_for", "MapAdapter", "build"],
     "url_for finds the endpoint and asks the url_map's MapAdapter to build the URL, with the "
     "script root and, with _external, the host.",
     "url_for returns the URL of an endpoint."),
]  # fmt: skip
#: Which answer each agent's run i gives: f (the full one) or p (the other).
ANSWERED = {
    "claude": "fffp", "codex": "fpff", "gemini": "pfpf", "amp": "ffpf", "cline": "fp", "copilot": "ff",
}  # fmt: skip


def answer(agent: str, i: int) -> str:
    _, _, _, full, other = GRADED[i - 1]
    return full if ANSWERED[agent][i - 1] == "f" else other


TRUTH = """# The questions this campaign asked (docs/ground-truth.md), written by make_mixed_agents.py.
# Each is found in every agent's log by its prompt: the run's first user message. Read as
# data by pytest-explore-suff when the campaign is graded: never executed.
version = 1
""" + "".join(
    f"""
[[question]]
id = "{qid}"
prompt = '{regex}'
answer = {json.dumps(files)}
symbols = {json.dumps(symbols)}
"""
    + ("must_not = ['(?i)at import time']\n" if qid == "flask-blueprints" else "")
    for (qid, regex, symbols, _, _), (_, files) in zip(GRADED, QUESTIONS, strict=True)
)


def claude(i: int, question: str, files: list[str]) -> Run:
    r = Run(f"claude-{i}")
    # The prompt, as a run with --verbose writes it: a prompt question finds the run by it.
    prompt = {"role": "user", "content": question}
    r.events.append({"type": "user", "message": prompt, "session_id": r.session})
    r.step(r.explore(question), response(files, mentioned=[MISSED]))
    if i == 1:
        r.step(r.use("Read", file_path=f"{T}/{files[0]}"), "...source...")
    elif i == 2:
        r.step(r.explore("blueprint register deferred functions"), response(files))
        r.step(r.use("Grep", pattern="record_once", path="src"), "src/flask/blueprints.py:88")
    elif i == 3:
        r.step(r.use("Read", file_path=f"{T}/{MISSED}"), "...source...")
    r.finish(answer("claude", i))
    return r


def codex(i: int, question: str, files: list[str]) -> Rollout:
    c = Rollout("mid-2025" if i == 4 else "current", "shell" if i == 4 else "exec_command")
    c.user(question)
    if i == 3:  # a listing issued together with the explore: not a reaction, but concurrent
        c.step(
            c.explore(question), c.shell("ls src/flask"), outputs=[explore_text(files, [MISSED]), "app.py"]
        )
    else:
        c.step(c.explore(question), outputs=[explore_text(files, [MISSED])])
    if i == 1:
        c.step(c.call("update_plan", plan=[{"step": "read the router", "status": "in_progress"}]))
        c.step(c.shell(f"sed -n '1,120p' {files[0]}"))
    elif i == 2:
        c.step(c.shell("rg -n 'def register' src/flask"))
    elif i == 3:
        c.step(c.patch())
    else:
        c.step(c.shell(f"nl -ba {MISSED} | sed -n '40,90p'"))
    c.finish(answer("codex", i))
    return c


def gemini(i: int, question: str, files: list[str]) -> GeminiSession:
    g = GeminiSession("jsonl" if i == 2 else "session")
    g.user(question)
    g.step(g.explore(question), results=[explore_text(files, [MISSED])])
    if i == 1:
        g.step(g.call("read_file", file_path=f"{T}/{files[0]}"))
    elif i == 2:
        g.step(g.explore("blueprint register deferred functions"), results=[explore_text(files)])
        g.step(g.call("grep_search", pattern="record_once"))
    elif i == 3:
        g.step(g.call("read_many_files", paths=[files[1], MISSED]))
    g.finish(answer("gemini", i))
    return g


def amp(i: int, question: str, files: list[str]) -> AmpThread:
    t = AmpThread(f"T-0a1b2c3d-0000-4000-8000-00000000000{i}")
    t.user(question)
    t.step(t.explore(question), results=[explore_text(files, [MISSED])])
    if i == 1:
        t.step(t.call("Read", path=f"{T}/{files[0]}"))
    elif i == 2:
        t.step(t.call("Grep", pattern="record_once", path="src"))
    elif i == 3:
        t.step(t.call("Read", path=f"{T}/{MISSED}"))
    t.finish(answer("amp", i))
    return t


def cline(i: int, question: str, files: list[str]) -> ClineTask:
    c = ClineTask("xml" if i == 2 else "native", task_id=f"176786580349{i}")
    c.user(question)
    c.step(c.explore(question), results=[explore_text(files, [MISSED])])
    if i == 1:
        c.step(c.call("execute_command", command=f"sed -n '1,80p' {files[0]}"))
    else:
        c.step(c.call("list_files", path="src/flask"))
    c.finish(answer("cline", i))
    return c


def opencode(i: int, question: str, files: list[str]) -> list[OpenCodeSession]:
    s = OpenCodeSession(f"ses_mixed{i}")
    s.user(question)
    s.step(s.explore(question), results=[explore_text(files, [MISSED])])
    if i != 2:
        s.step(s.call("read", filePath=f"{T}/{MISSED}"))
        s.finish("Answered.")
        return [s]
    child = OpenCodeSession(f"ses_mixed{i}_sub", parent=s.id)
    s.delegate(child)
    child.step(child.call("grep", pattern="record_once", path="src"))
    s.finish("Answered.")
    return [s, child]


def copilot(i: int, question: str, files: list[str]) -> CopilotSession:
    s = CopilotSession(f"0c0ffee{i}-0000-4000-8000-00000000000{i}")
    s.user(question)
    s.step(s.explore(question), results=[explore_text(files, [MISSED])])
    if i == 1:
        s.step(s.call("view", path=f"{T}/{files[0]}"), results=["...source..."])
    else:
        s.step(s.call("grep", pattern="record_once", path="src"), results=["src/flask/blueprints.py:88"])
    s.finish(answer("copilot", i))
    s.shutdown(current=21000 + 1000 * i, system=4000, tools=6000)
    return s


def main() -> None:
    shutil.rmtree(OUT, ignore_errors=True)
    for i, (question, files) in enumerate(QUESTIONS, 1):
        claude(i, question, files).write(OUT / "claude" / f"run-claude-{i}.jsonl")
        day = "2025/07/01" if i == 4 else "2026/03/01"
        stamp = f"{day.replace('/', '-')}T10-0{i}-00"
        codex(i, question, files).write(
            OUT / "codex" / "sessions" / day / f"rollout-{stamp}-0199a1b{i}.jsonl"
        )
        g = gemini(i, question, files)
        g.write(
            OUT / "gemini" / "tmp" / "ab12" / "chats" / f"session-2026-03-01T10-0{i}-5c1d000{i}{g.suffix()}"
        )
    # The newer agents after the first three, whose files the shared id counters keep as they were.
    for i, (question, files) in enumerate(QUESTIONS, 1):
        t = amp(i, question, files)
        t.write(OUT / "amp" / "threads" / f"{t.id}.json")
    for i, (question, files) in enumerate(QUESTIONS[:2], 1):
        cline(i, question, files).write(OUT / "cline" / "tasks" / f"176786580349{i}")
    sessions = [s for i, (q, files) in enumerate(QUESTIONS[:2], 1) for s in opencode(i, q, files)]
    write_opencode_db(OUT / "opencode" / "opencode.db", sessions).close()  # closed: the WAL checkpointed
    for i, (question, files) in enumerate(QUESTIONS[:2], 1):
        s = copilot(i, question, files)
        s.write(OUT / "copilot" / "session-state" / s.session_id / "events.jsonl")
    prompts = (
        '[{"sessionId": "5c1d0001", "messageId": 0, "type": "user", "message": "how does flask route"}]\n'
    )
    (OUT / "gemini" / "tmp" / "ab12" / "logs.json").write_text(prompts, encoding="utf-8")
    (OUT / "explore-suff-truth.toml").write_text(TRUTH, encoding="utf-8")
    print(f"wrote {OUT}")


if __name__ == "__main__":
    main()
