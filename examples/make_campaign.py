"""Regenerate the bundled example campaign (``examples/campaign/``).

    python examples/make_campaign.py

A small A/B campaign as a harness writes it: two repos, two runs each, the
with-tool arm and the without-tool arm; one multi-turn run; a subagent; an
interactive session with its subagent file; and a diagnostic sidecar that is
not a transcript. Also ``examples/new-vs-baseline/``: a new build of the tool
against the old one, 8 runs per repo and arm, for the comparison features.
The event shapes are Claude Code's (see tests/builders.py).
"""

from __future__ import annotations

import json
import random
import shutil
import sys
from pathlib import Path

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE.parent / "tests"))

from builders import Run, response  # noqa: E402

OUT = HERE / "campaign"
OUT_NB = HERE / "new-vs-baseline"
T = "/private/tmp/t-new"
#: The first prompt of each arm (system, tool schemas, the question): the tool's
#: schemas and instructions cost the with-tool arm a fixed 546 tokens more.
BASE_WITH, BASE_WITHOUT = 18_900, 18_354
CHARS_PER_TOKEN = 2.3


def source(path: str, lines: int = 60) -> str:
    """A file's text as a Read returns it: numbered lines of plausible source."""
    name = path.rsplit("/", 1)[-1].split(".")[0]
    return "".join(f"{i:6d}\t  const {name}_{i} = compute({name}, options[{i}]); // step {i}\n"
                   for i in range(1, lines + 1))  # fmt: skip


def priced(run: Run, base: int) -> Run:
    """Give each model request of the run the usage Claude Code logs: the prompt grows by
    what the previous requests added, at about 2.3 characters per token (subagents have
    a window of their own, from a smaller base)."""
    # The answer is the run's last request: its text, then the result line.
    for i, event in enumerate(run.events):
        if event["type"] == "result":
            answer = {"type": "text", "text": event["result"]}
            run.events.insert(i, {"type": "assistant", "parent_tool_use_id": None, "session_id": run.session,
                                  "message": {"id": f"msg_answer_{i}", "role": "assistant",
                                              "content": [answer]}})  # fmt: skip
            break
    windows: dict[object, list[float]] = {}  # thread -> [prompt so far, characters since]
    seen: set[str] = set()
    for event in run.events:
        if event["type"] not in ("assistant", "user"):
            continue
        thread = event.get("parent_tool_use_id")
        window = windows.setdefault(thread, [float(base if thread is None else 6_000), 0.0])
        message = event["message"]
        if event["type"] == "assistant" and message["id"] not in seen:
            seen.add(message["id"])
            window[0] += window[1] / CHARS_PER_TOKEN
            window[1] = 0.0
            prompt = round(window[0])
            message["usage"] = {"input_tokens": 4, "cache_creation_input_tokens": 600,
                                "cache_read_input_tokens": prompt - 604, "output_tokens": 120}  # fmt: skip
        window[1] += len(json.dumps(message["content"]))
    return run


def express_with_1() -> Run:
    r = Run("express-with-1")
    r.step(
        r.explore("res.send Content-Type ETag generation"),
        response(["lib/response.js", "lib/utils.js"], mentioned=["lib/request.js"]),
    )
    r.step(r.explore("response.js res.send function body"), response(["lib/response.js"]))
    r.step(
        r.use("Read", file_path=f"{T}/lib/response.js", offset=120, limit=80), source("lib/response.js", 80)
    )
    r.finish("res.send sets Content-Type from the body type and computes a weak ETag.")
    return r


def express_with_1_turn2() -> Run:
    r = Run("express-with-1")
    r.step(
        r.explore("how does app.use mount middleware on the router"),
        response(["lib/application.js", "lib/router/index.js"]),
    )
    r.finish("app.use delegates to router.use.")
    return r


def express_with_1_turn3() -> Run:
    r = Run("express-with-1")
    r.step(r.explore("router layer match path params"), response(["lib/router/layer.js"]))
    r.step(r.use("Bash", command="sed -n '1,80p' lib/router/route.js"), source("lib/router/route.js", 80))
    r.finish("Layer.match uses path-to-regexp.")
    return r


def express_with_2() -> Run:
    r = Run("express-with-2")
    r.step(r.explore("res.send Content-Type ETag generation"), response(["lib/response.js", "lib/utils.js"]))
    r.finish("See lib/response.js and lib/utils.js.")
    return r


def without(session: str, reads: list[str]) -> Run:
    r = Run(session)
    r.step(r.use("Grep", pattern="ETag", path="lib"), "lib/utils.js:42: exports.etag")
    for path in reads:
        r.step(r.use("Read", file_path=f"{T}/{path}"), source(path, 240))
    r.finish("Answered from the source.")
    return r


def excalidraw_with_1() -> Run:
    r = Run("excalidraw-with-1")
    r.step(
        r.explore("canvas nonce data flow"),
        response(
            [
                "packages/excalidraw/components/App.tsx",
                "packages/excalidraw/components/canvases/InteractiveCanvas.tsx",
            ],
            mentioned=["packages/excalidraw/components/canvases/StaticCanvas.tsx"],
        ),
    )
    r.step(r.use("Read", file_path="packages/excalidraw/components/canvases/StaticCanvas.tsx"), "...")
    r.step(r.explore("renderStaticScene sceneNonce"), response(["packages/element/src/shape.ts"]))
    agent = r.use("Agent", description="Trace the nonce", prompt="Find where sceneNonce is bumped.")
    r.message(agent)
    r.step(
        r.use("Bash", command="grep -rn sceneNonce packages/"), "packages/...: sceneNonce", parent=agent["id"]
    )
    r.step(r.use("Read", file_path="packages/excalidraw/scene/Scene.ts"), "...", parent=agent["id"])
    r.result(agent, "sceneNonce is bumped in Scene.triggerUpdate.")
    r.finish("The nonce is bumped on every scene update.")
    return r


def excalidraw_with_2() -> Run:
    r = Run("excalidraw-with-2")
    r.step(r.explore("canvas nonce data flow"), response(["packages/excalidraw/scene/Scene.ts"]))
    r.step(r.use("Edit", file_path="packages/excalidraw/scene/Scene.ts", old_string="a", new_string="b"))
    r.finish("Patched.")
    return r


def interactive_session(root: Path) -> None:
    """A Claude Code >= 2.1.2 session: the subagent lives in <session>/subagents/."""
    session = "5f0c2a57-8a1e-4c6b-9d3e-2b7f1e0c9a11"
    project = root / "sessions" / "-private-tmp-t-new"
    base = {"sessionId": session, "cwd": T, "version": "2.1.40", "isSidechain": False}
    lines: list[dict] = []
    uuid = iter(f"00000000-0000-4000-8000-{i:012d}" for i in range(1, 1000))
    parent = None

    def add(kind: str, content: object, msg_id: str | None = None, **extra: object) -> None:
        nonlocal parent
        u = next(uuid)
        message: dict = {"role": kind, "content": content}
        if msg_id:
            message["id"] = msg_id
        lines.append({**base, "type": kind, "uuid": u, "parentUuid": parent, "message": message, **extra})
        parent = u

    add("user", "Where does the router decide which layer handles a request?")
    explore = {
        "type": "tool_use",
        "id": "toolu_i1",
        "name": "mcp__codegraph__codegraph_explore",
        "input": {"query": "router handle request layer dispatch"},
    }
    add("assistant", [explore], "msg_i1")
    add(
        "user",
        [
            {
                "type": "tool_result",
                "tool_use_id": "toolu_i1",
                "content": [
                    {"type": "text", "text": response(["lib/router/index.js"], ["lib/router/layer.js"])}
                ],
            }
        ],
    )
    task = {
        "type": "tool_use",
        "id": "toolu_i2",
        "name": "Task",
        "input": {"description": "layer matching", "prompt": "How does Layer.match work?"},
    }
    add("assistant", [task], "msg_i2")
    add(
        "user",
        [{"type": "tool_result", "tool_use_id": "toolu_i2", "content": "It uses path-to-regexp."}],
        toolUseResult={"agentId": "a1b2c3", "status": "completed"},
    )
    add("assistant", [{"type": "text", "text": "The router walks its stack; Layer.match decides."}], "msg_i3")
    write_jsonl(project / f"{session}.jsonl", lines)

    sub = project / session / "subagents"
    agent_base = {**base, "isSidechain": True, "agentId": "a1b2c3"}
    write_jsonl(
        sub / "agent-a1b2c3.jsonl",
        [
            {
                **agent_base,
                "type": "user",
                "uuid": "10000000-0000-4000-8000-000000000001",
                "parentUuid": None,
                "message": {"role": "user", "content": "How does Layer.match work?"},
            },
            {
                **agent_base,
                "type": "assistant",
                "uuid": "10000000-0000-4000-8000-000000000002",
                "parentUuid": "10000000-0000-4000-8000-000000000001",
                "message": {
                    "id": "msg_s1",
                    "role": "assistant",
                    "content": [
                        {
                            "type": "tool_use",
                            "id": "toolu_s1",
                            "name": "Read",
                            "input": {"file_path": f"{T}/lib/router/layer.js"},
                        }
                    ],
                },
            },
            {
                **agent_base,
                "type": "user",
                "uuid": "10000000-0000-4000-8000-000000000003",
                "parentUuid": "10000000-0000-4000-8000-000000000002",
                "message": {
                    "role": "user",
                    "content": [
                        {"type": "tool_result", "tool_use_id": "toolu_s1", "content": "...source..."}
                    ],
                },
            },
        ],
    )
    (sub / "agent-a1b2c3.meta.json").write_text(
        json.dumps({"agentType": "general-purpose", "toolUseId": "toolu_i2"}) + "\n"
    )


REACTIONS = {
    # What the agent does after an explore, by bucket.
    "explore_again": lambda r: r.step(r.explore("a narrower follow-up query"), response(["lib/utils.js"])),
    "read_returned": lambda r: r.step(r.use("Read", file_path=f"{T}/lib/response.js", offset=200), "..."),
    "read_missed": lambda r: r.step(r.use("Read", file_path=f"{T}/lib/view.js"), "..."),
    "search": lambda r: r.step(r.use("Grep", pattern="etag", path="lib"), "lib/utils.js:42"),
    "sufficient": lambda r: None,
}


def ab_run(session: str, rng: random.Random, weights: dict[str, float]) -> Run:
    """A run of 1-4 explore calls whose reactions are drawn from ``weights``."""
    r = Run(session)
    for i in range(rng.randint(1, 4)):
        r.step(
            r.explore(f"question part {i + 1}"),
            response(["lib/response.js", "lib/utils.js"], ["lib/view.js"]),
        )
        bucket = rng.choices(list(weights), list(weights.values()))[0]
        REACTIONS[bucket](r)
        if bucket == "sufficient":
            break
    # The answer cites one of the returned files (alternating, so the rng's draws stay the same).
    cited = ("lib/response.js:42", "`compileETag` in lib/utils.js")[len(session) % 2]
    r.finish(f"See {cited}.")
    return r


def new_vs_baseline() -> None:
    """ab-new-vs-baseline: a new build against the old one, same questions, 8 runs each."""
    rng = random.Random(7)
    new = {
        "explore_again": 0.15,
        "read_returned": 0.05,
        "read_missed": 0.05,
        "search": 0.05,
        "sufficient": 0.7,
    }
    old = {"explore_again": 0.35, "read_returned": 0.2, "read_missed": 0.05, "search": 0.1, "sufficient": 0.3}
    for repo in ("express", "flask", "excalidraw"):
        for i in range(1, 9):
            # The new build's instructions are 200 tokens shorter: its fixed overhead.
            priced(ab_run(f"{repo}-new-{i}", rng, new), BASE_WITH - 200).write(
                OUT_NB / repo / f"run-new-{i}.jsonl"
            )
            priced(ab_run(f"{repo}-baseline-{i}", rng, old), BASE_WITH).write(
                OUT_NB / repo / f"run-baseline-{i}.jsonl"
            )


def write_jsonl(path: Path, events: list[dict]) -> None:
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text("".join(json.dumps(e) + "\n" for e in events), encoding="utf-8")


#: Written by hand, not by this script: kept across a regeneration.
KEPT = "explore-suff-truth.toml"


def main() -> None:
    kept: dict[Path, bytes] = {}
    for out in (OUT, OUT_NB):
        if (out / KEPT).is_file():
            kept[out / KEPT] = (out / KEPT).read_bytes()
        if out.exists():
            shutil.rmtree(out)
    priced(express_with_1(), BASE_WITH).write(OUT / "express/run1/run-headless-with.jsonl")
    priced(express_with_1_turn2(), BASE_WITH).write(OUT / "express/run1/run-headless-with.t2.jsonl")
    priced(express_with_1_turn3(), BASE_WITH).write(OUT / "express/run1/run-headless-with.t3.jsonl")
    priced(without("express-without-1", ["lib/response.js", "lib/utils.js"]), BASE_WITHOUT).write(
        OUT / "express/run1/run-headless-without.jsonl"
    )
    priced(express_with_2(), BASE_WITH).write(OUT / "express/run2/run-headless-with.jsonl")
    priced(without("express-without-2", ["lib/response.js"]), BASE_WITHOUT).write(
        OUT / "express/run2/run-headless-without.jsonl"
    )
    priced(excalidraw_with_1(), BASE_WITH).write(OUT / "excalidraw/run1/run-headless-with.jsonl")
    priced(without("excalidraw-without-1", ["packages/excalidraw/scene/Scene.ts"]), BASE_WITHOUT).write(
        OUT / "excalidraw/run1/run-headless-without.jsonl"
    )
    priced(excalidraw_with_2(), BASE_WITH).write(OUT / "excalidraw/run2/run-headless-with.jsonl")
    priced(without("excalidraw-without-2", ["packages/excalidraw/scene/Scene.ts"]), BASE_WITHOUT).write(
        OUT / "excalidraw/run2/run-headless-without.jsonl"
    )
    write_jsonl(OUT / "express/run1/explore-new.jsonl", [{"query": "res.send", "files": 2, "ms": 41}])
    interactive_session(OUT)
    new_vs_baseline()
    for path, data in kept.items():
        path.write_bytes(data)
    print(f"wrote {OUT} and {OUT_NB}")


if __name__ == "__main__":
    main()
