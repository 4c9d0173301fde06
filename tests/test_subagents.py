"""Every delegation judged through its subagent (D7, D9), for each agent's shapes.

Fixtures come from the formats page (``transcript-formats.md``, "Subagents in
Codex CLI", "Subagents in Gemini CLI", and section 2 for Claude's inline
sidechains), built with ``agent_shapes.py`` and ``builders.py``. Each shape is
judged through the library (`discover`, then `judge` on what it grouped), a
couple through pytester with and without ``-n 2``.
"""

from __future__ import annotations

from pathlib import Path

from builders import Run, Session, response

from pytest_explore_suff import Collector, Transcript, Verdict, discover, judge

PARENT = "019a0000-0000-7000-8000-00000000000a"
CHILD = "019a0000-0000-7000-8000-00000000000b"
CHILD2 = "019a0000-0000-7000-8000-00000000000c"


use = Run.use


def _calls(verdict: Verdict) -> list[tuple[str, str, str]]:
    return [(c.thread, c.bucket, c.next) for c in verdict.calls]


def _judged(t: Transcript) -> tuple[Verdict, Collector]:
    return judge(t.kind, list(t.files), archive=t.archive)


def _campaign(root: Path) -> dict[str, Transcript]:
    return {t.path: t for t in discover(str(root)).transcripts}


# -- Claude Code: an inline sidechain written before its Task call ----------------------


def test_an_inline_sidechain_written_before_its_task_call_links_by_its_prompt(tmp_path):
    s = Session()
    s.prompt("where is f?", root=True)
    e = s.step(use("mcp__codegraph__codegraph_explore", query="f"), response(["lib/a.js"]))
    # The sidechain's lines come first (no agentId on them) ...
    s.prompt("look at lib", sidechain=True, root=True)
    s.step(use("Read", file_path="/r/lib/a.js"), "src", sidechain=True)
    # ... then the Task call, whose result names an agent the file does not hold.
    task = use("Task", prompt="look at lib", description="look")
    s.message(task)
    s.result(
        task, [{"type": "text", "text": "found it"}], toolUseResult={"agentId": "a9f9f9f", "status": "ok"}
    )
    verdict, collector = judge("interactive", [s.write(tmp_path / "p" / "s.jsonl")])
    assert [(c.id, c.bucket, c.next) for c in verdict.calls] == [
        (e["id"], "read_returned", "Task → Read a.js")
    ]
    assert not [w for w in collector.warnings if "could not be linked" in w]
