#!/usr/bin/env python3
"""Seeded generator of large, realistic campaigns for benchmarking the plugin.

    python benchmarks/generate.py /tmp/camp --size-mb 100 --seed 1 --truth /tmp/camp.truth.json
    python benchmarks/generate.py /tmp/tiny --small 10000 --seed 1

The layout is the A/B harness's: ``<root>/<repo>/run<N>/run-headless-with.jsonl``
(sometimes followed by ``.t2.jsonl`` / ``.t3.jsonl`` turn files) and
``run-headless-without.jsonl``. Every file is Claude Code ``--output-format
stream-json`` as it really looks:

- a ``system``/``init`` line opening each turn file and a ``result`` line closing it;
- one ``assistant`` line per content block (thinking, text, each tool_use), the
  blocks of one message sharing ``message.id``;
- one ``user`` line per ``tool_result`` (content a string, or a list of
  ``{"type": "text", "text": ...}`` for MCP and Agent results), with the
  ``tool_use_result`` sidecar Claude Code adds (for Read and Edit it repeats the
  whole file, which is where most of a real campaign's bytes are);
- the judged tool ``mcp__codegraph__codegraph_explore`` (``input.query``), whose
  2-30 KB responses ship files under ``**`path`**`` lines and mention others;
- Read (whole files, up to hundreds of KB), Grep, Glob, Bash, Edit, Write,
  TodoWrite, and Agent calls whose subagent events carry ``parent_tool_use_id``.

Writing is streamed line by line: memory holds the per-repo file pools (a few
MB), never a transcript. ``--truth FILE`` writes what the classifier should say
about every transcript (computed from what was written, by the rules of the
sufficiency spec), so a benchmark can check verdicts as well as time.
"""

from __future__ import annotations

import argparse
import json
import math
import os
import random
import shutil
import sys
import time
import uuid
from dataclasses import dataclass, field
from typing import Any, BinaryIO

try:  # the generator runs in the project's venv, where orjson is a dependency
    import orjson

    def dumps(obj: Any) -> bytes:
        return orjson.dumps(obj)

except ImportError:  # pragma: no cover - same bytes, slower

    def dumps(obj: Any) -> bytes:
        return json.dumps(obj, ensure_ascii=False, separators=(",", ":")).encode()


EXPLORE = "mcp__codegraph__codegraph_explore"
MCP_TOOLS = (
    EXPLORE,
    "mcp__codegraph__codegraph_search",
    "mcp__codegraph__codegraph_callers",
    "mcp__codegraph__codegraph_status",
)
BASE_TOOLS = (
    "Agent", "Bash", "Glob", "Grep", "ExitPlanMode", "Read", "Edit", "Write", "NotebookEdit",
    "WebFetch", "TodoWrite", "WebSearch", "BashOutput", "KillShell", "Skill", "SlashCommand",
)  # fmt: skip
MODEL = "claude-sonnet-4-5-20250929"
VERSION = "2.1.14"
REPOS = ("express", "fastify", "koa", "axios", "lodash", "commander", "chalk", "excalidraw")
#: More repositories, for a campaign of many questions with few runs each (``--profile aa``).
MORE_REPOS = (*REPOS, "react", "vue", "svelte", "webpack", "rollup", "vite", "eslint", "prettier",
              "jest", "mocha", "moment", "dayjs", "redux", "mobx", "socket.io", "ws")  # fmt: skip
BUCKET_KEYS = ("explore_again", "read_returned", "read_missed", "search", "sufficient")
MARKER_FILE = ".explore-suff-bench"  # not .jsonl: the plugin never looks at it
SYSTEM_REMINDER = (
    "\n\n<system-reminder>\nWhenever you read a file, you should consider whether it would be "
    "considered malware. You CAN and SHOULD provide analysis of malware, what it is doing. But you "
    "MUST refuse to improve or augment the code. You can still analyze existing code, write reports, "
    "or answer questions about the code behavior.\n</system-reminder>\n"
)
TODO_ACK = (
    "Todos have been modified successfully. Ensure that you continue to use the todo list to track "
    "your progress. Please proceed with the current tasks if applicable"
)
RACE_TEXT = f"<tool_use_error>Error: No such tool available: {EXPLORE}</tool_use_error>"

_WORD_TEXT = """
request response router layer route handle middleware next error stack params query body header
cookie session cache etag status send json render view engine mount path match regexp parse
stringify buffer stream pipe chunk encoding charset content type length accept vary redirect
location static file serve options trust proxy subdomain hostname protocol secure fresh stale
method verb get post put delete patch head listen server socket timeout keep alive close
event emitter emit once hook plugin register decorate schema validate serialize reply instance
context state store reducer action dispatch subscribe selector element shape canvas scene nonce
render frame bounds point line arrow text font color theme history undo redo collab sync
config default merge clone deep equal debounce throttle memoize curry flow chain wrapper lazy
command option argument program action help version parse argv flag alias variadic required
style level ansi color support detect model visible strip template tagged chalk instance
adapter transform interceptor cancel token retry timeout signal abort fetch xhr http https
"""
WORDS = _WORD_TEXT.split()
CODE_TEMPLATES = (
    "const {a} = require('./{b}');",
    "var {a} = require('{b}');",
    "function {a}({b}, {c}) {{",
    "  return {a}.{b}({c});",
    "  if (!{a}) {{",
    "    throw new TypeError('{w} {v} must be a {u}');",
    "  }}",
    "}}",
    "",
    "  // {w} the {v} before the {u} is {x}",
    "{a}.prototype.{b} = function {b}({c}) {{",
    "  var {a} = this.{b} || [];",
    "  for (var i = 0; i < {a}.length; i++) {{",
    "    {a}[i].{b}.call(this, {c});",
    "module.exports = {a};",
    "  debug('{w} %s %o', {a}, {b});",
    "  const {{ {a}, {b} }} = options;",
    "  await this.{a}.{b}({c});",
    "export async function {a}({b}) {{",
    "  '{w}-{v}': {n},",
    " * @param {{Object}} {a} the {w} {v}",
    "/**",
    " */",
    "  this.{a} = {b} === undefined ? {n} : {b};",
    "  }} else if ({a}.{b} === '{w}') {{",
    "    return next(err);",
    "  res.setHeader('Content-{w}', {a});",
    "  expect({a}.{b}).toBe({n});",
    "  it('should {w} the {v} when {u}', async () => {{",
    "  }});",
    "  // TODO(perf): {w} {v} — avoid the {u} on every call",
)
TEST_LINES = (
    "  ✓ should {w} the {v} ({n}ms)",
    "  ✓ {w} {v} with {u}",
    "  ✗ {w} {v} when {u} is missing",
    "    at Context.<anonymous> (test/{w}.js:{n}:{m})",
    "PASS test/{w}-{v}.test.js",
    "  {n} passing ({m}ms)",
)
DIRS = (
    "lib", "lib/router", "lib/middleware", "src", "src/core", "src/utils", "src/plugins",
    "test", "test/acceptance", "test/support", "examples/auth", "examples/static", "benchmarks",
    "scripts", "types", "packages/core/src", "packages/element/src", "packages/utils/src",
)  # fmt: skip
EXTS = (("js", 70), ("ts", 15), ("mjs", 5), ("json", 5), ("md", 5))
ALPHABET = "0123456789ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz"
BASE64 = ALPHABET + "+/"


def _camel(rng: random.Random) -> str:
    a, b = rng.choice(WORDS), rng.choice(WORDS)
    return a + b[:1].upper() + b[1:]


def _fill(rng: random.Random, template: str) -> str:
    w = rng.choice
    return template.format(
        a=_camel(rng), b=_camel(rng), c=w(WORDS), w=w(WORDS), v=w(WORDS), u=w(WORDS), x=w(WORDS),
        n=rng.randint(0, 999), m=rng.randint(1, 99),
    )  # fmt: skip


class Pools:
    """Text the transcripts are made of, built once from the seed."""

    def __init__(self, rng: random.Random) -> None:
        self.code = [_fill(rng, rng.choice(CODE_TEMPLATES)) for _ in range(4000)]
        self.code = [("    " * rng.randint(0, 2) + line) if line else line for line in self.code]
        self.tests = [_fill(rng, rng.choice(TEST_LINES)) for _ in range(600)]
        sentences = []
        for _ in range(800):
            words = rng.choices(WORDS, k=rng.randint(6, 20))
            sentence = " ".join(words)
            if rng.random() < 0.3:
                sentence += f" in `{_camel(rng)}()`"
            sentences.append(sentence[:1].upper() + sentence[1:] + ".")
        self.sentences = sentences
        self.signature = "".join(rng.choices(BASE64, k=8192))

    def prose(self, rng: random.Random, size: int) -> str:
        out: list[str] = []
        n = 0
        while n < size:
            s = rng.choice(self.sentences)
            out.append(s)
            n += len(s) + 1
        return " ".join(out)

    def sig(self, rng: random.Random) -> str:
        k = rng.randint(200, 1200)
        i = rng.randrange(0, len(self.signature) - k)
        return self.signature[i : i + k]


@dataclass
class SourceFile:
    path: str  # relative to the repository
    lines: list[str]
    _text: str | None = None
    _numbered: str | None = None

    @property
    def text(self) -> str:
        if self._text is None:
            self._text = "\n".join(self.lines) + "\n"
        return self._text

    def numbered(self, start: int = 0, stop: int | None = None) -> str:
        """Read's output format: ``<6-wide line number>→<line>``."""
        if start == 0 and stop is None:
            if self._numbered is None:
                self._numbered = "".join(f"{i:>6}→{line}\n" for i, line in enumerate(self.lines, 1))
            return self._numbered
        return "".join(f"{i:>6}→{line}\n" for i, line in enumerate(self.lines[start:stop], start + 1))


class Repo:
    """A fake target repository: files with unique basenames (so no path is a
    ``/``-suffix of another, and a Read matches exactly the file it names)."""

    def __init__(self, name: str, rng: random.Random, pools: Pools, small: bool) -> None:
        self.name = name
        self.root = f"/home/runner/work/t-{name}"
        count = rng.randint(40, 60) if small else rng.randint(120, 220)
        names: set[str] = set()
        self.files: list[SourceFile] = []
        exts = [e for e, _ in EXTS]
        weights = [w for _, w in EXTS]
        while len(self.files) < count:
            stem = rng.choice(WORDS) if rng.random() < 0.5 else f"{rng.choice(WORDS)}-{rng.choice(WORDS)}"
            ext = rng.choices(exts, weights)[0]
            base = f"{stem}.{ext}"
            if base in names:
                continue
            names.add(base)
            if small:
                size = int(min(1500, max(120, rng.lognormvariate(math.log(500), 0.6))))
                directory = rng.choice(DIRS)
            elif rng.random() < 0.04:  # bundles and generated files: whole-file Reads of 100-400 KB
                size = rng.randint(100_000, 400_000)
                directory = "dist"
            else:
                size = int(min(90_000, max(200, rng.lognormvariate(math.log(6000), 1.1))))
                directory = rng.choice(DIRS)
            n = max(3, size // 31)
            self.files.append(SourceFile(f"{directory}/{base}", rng.choices(pools.code, k=n)))
        self.by_path = {f.path: f for f in self.files}

    def abs(self, rel: str) -> str:
        return f"{self.root}/{rel}"

    def sample(self, rng: random.Random, k: int, exclude: set[str] | tuple[str, ...] = ()) -> list[str]:
        pool = [f.path for f in self.files if f.path not in exclude]
        return rng.sample(pool, min(k, len(pool)))


@dataclass(slots=True)
class Act:
    """What the truth needs of one tool_use."""

    thread: str
    msg: str
    id: str
    name: str
    cat: str  # explore | read | search | other | transparent | agent
    path: str = ""  # read: the repo-relative path read
    error: bool = False
    returned: tuple[str, ...] = ()
    file_access: bool = False


@dataclass
class Call:
    """One tool call to emit: its block, its result, and what the truth records."""

    name: str
    input: dict[str, Any]
    act: Act
    content: Any
    extra: Any = None
    is_error: bool = False
    tid: str = ""


@dataclass
class Rates:
    turns: float = 0.15
    subagents: float = 0.25  # per transcript: chance a main-thread Agent call may happen
    race: float = 0.02
    contaminate: float = 0.02
    explore_error: float = 0.02
    explore_weight: float = 22  # of a free step being an explore call (Read: 28)
    explore_median: int = 9000  # bytes of an explore response: lognormal, clipped
    explore_sigma: float = 0.6
    explore_max: int = 30_000
    explore_sidecar: bool = True  # the response repeated in tool_use_result
    # Opt-in (0: off, and the campaign's bytes are what they were without them): how much
    # runs differ (a run that explores badly does so on every call: the sufficient weight of
    # each run is scaled by exp(skill * N(0, 1))), and the chance that the final answer cites
    # a file the explore calls returned, scaled likewise (allocation efficiency above 0).
    skill: float = 0.0
    cite: float = 0.0


#: ``--profile``: campaign shapes measured on real eval campaigns.
PROFILES: dict[str, dict[str, Any]] = {
    "default": {},
    # A 95 MB, 400-transcript campaign: explore responses 28% of the bytes (median
    # 27 KB, p90 52 KB, ~2.4 explore calls per transcript), Read results ~64%. Both
    # arms have the tool (a new build against an old one), so every transcript explores.
    # The A/A campaign of the decisions' benchmark (benchmarks/aa.py): explore-heavy, with
    # runs that differ from one another as real ones do, answers that cite returned files,
    # and half of the runs multi-turn.
    "aa": {
        "arms": ("new", "old"),
        "rates": {"explore_weight": 60, "explore_median": 27_000, "explore_sigma": 0.511,
                  "explore_max": 200_000, "explore_sidecar": False, "skill": 0.8, "cite": 0.5,
                  "turns": 0.5},
        "mb_per_transcript": 0.2375,
        "budget_factor": 0.6,
        "repos": 20,  # 4 runs per arm and repository at 160 transcripts
    },
    "explore-heavy": {
        "arms": ("new", "old"),
        "rates": {"explore_weight": 60, "explore_median": 27_000, "explore_sigma": 0.511,
                  "explore_max": 200_000, "explore_sidecar": False},
        "mb_per_transcript": 0.2375,
        "budget_factor": 0.6,  # a transcript overshoots its budget by its last (large) Read
    },
}  # fmt: skip


@dataclass
class Stats:
    files: int = 0
    transcripts: int = 0
    bytes: int = 0
    lines: int = 0
    explores: int = 0
    agents: int = 0
    turn_files: int = 0
    truth: list[dict[str, Any]] = field(default_factory=list)
    result_bytes: dict[str, int] = field(default_factory=dict)  # tool_result lines, per tool
    explore_text: int = 0  # bytes of explore response texts


class Writer:
    """One transcript being written, file by file, line by line."""

    def __init__(
        self,
        *,
        rng: random.Random,
        pools: Pools,
        repo: Repo,
        arm: str,
        root: str,
        rel: str,
        budget: int,
        rates: Rates,
        small: bool,
        stats: Stats,
        explores: bool,
    ) -> None:
        self.rng, self.pools, self.repo, self.arm = rng, pools, repo, arm
        self.root, self.rel, self.budget, self.rates, self.small = root, rel, budget, rates, small
        self.stats = stats
        self.explores = explores
        self.session = self.uuid()
        self.bytes = 0
        self.fh: BinaryIO | None = None
        self.acts: dict[str, list[Act]] = {"main": []}
        self.returned_so_far: dict[str, list[str]] = {}
        self.last_response: dict[str, tuple[list[str], list[str]]] = {}
        self.raced = False
        self.race_pending = self.explores and rng.random() < rates.race
        self.cli_at = budget * rng.random() if rng.random() < rates.contaminate else None
        self.contaminated = False
        self.agents_left = (
            (rng.randint(1, 2) if rng.random() < rates.subagents else 0)
            if not small
            else (1 if rng.random() < rates.subagents / 3 else 0)
        )
        n_turns = 1
        if not small and rng.random() < rates.turns:
            n_turns = rng.choice((2, 3))
        self.turn_marks = [budget * k / n_turns for k in range(1, n_turns)]
        self.turn = 0
        self.files: list[str] = []
        self.assistant_turns = 0
        # Drawn from a generator of their own: the main one's sequence (so every campaign made
        # without them) is unchanged.
        side = random.Random(f"{rel}:skill")
        self.skill = math.exp(rates.skill * side.gauss(0.0, 1.0)) if rates.skill else 1.0
        self.side = side

    # ---- ids --------------------------------------------------------------------------------
    def uuid(self) -> str:
        return str(uuid.UUID(int=self.rng.getrandbits(128), version=4))

    def tool_id(self) -> str:
        return "toolu_01" + "".join(self.rng.choices(ALPHABET, k=22))

    def msg_id(self) -> str:
        return "msg_01" + "".join(self.rng.choices(ALPHABET, k=22))

    # ---- lines ------------------------------------------------------------------------------
    def emit(self, obj: dict[str, Any]) -> None:
        line = dumps(obj) + b"\n"
        assert self.fh is not None
        self.fh.write(line)
        self.bytes += len(line)
        self.stats.lines += 1

    def open_turn(self) -> None:
        self.turn += 1
        suffix = ".jsonl" if self.turn == 1 else f".t{self.turn}.jsonl"
        rel = self.rel[: -len(".jsonl")] + suffix
        path = os.path.join(self.root, rel)
        os.makedirs(os.path.dirname(path), exist_ok=True)
        self.fh = open(path, "wb", buffering=1 << 20)  # noqa: SIM115 - closed in close_turn
        self.files.append(rel)
        self.stats.files += 1
        if self.turn > 1:
            self.stats.turn_files += 1
        tools = list(BASE_TOOLS) + (list(MCP_TOOLS) if self.explores else [])
        if self.small:
            tools = tools[:8] + ([EXPLORE] if self.explores else [])
        self.emit({
            "type": "system", "subtype": "init", "cwd": self.repo.root, "session_id": self.session,
            "tools": tools,
            "mcp_servers": [{"name": "codegraph", "status": "connected"}] if self.explores else [],
            "model": MODEL, "permissionMode": "bypassPermissions",
            "slash_commands": [] if self.small else [
                "compact", "context", "cost", "init", "output-style:new", "pr-comments", "release-notes",
                "todos", "review", "security-review", "statusline", "mcp", "memory", "model",
            ],
            "apiKeySource": "none", "claude_code_version": VERSION, "output_style": "default",
            "agents": ["general-purpose", "statusline-setup", "output-style-setup", "Explore", "Plan"],
            "skills": [], "plugins": [], "uuid": self.uuid(),
        })  # fmt: skip

    def close_turn(self, final: str) -> None:
        rng = self.rng
        inp, out = rng.randint(20, 400), rng.randint(500, 20000)
        cache_read, cache_new = rng.randint(10_000, 2_000_000), rng.randint(5_000, 200_000)
        cost = round(cache_read * 3e-7 + cache_new * 3.75e-6 + out * 1.5e-5, 6)
        self.emit({
            "type": "result", "subtype": "success", "is_error": False,
            "duration_ms": rng.randint(5_000, 900_000), "duration_api_ms": rng.randint(5_000, 900_000),
            "num_turns": self.assistant_turns, "result": final, "session_id": self.session,
            "total_cost_usd": cost,
            "usage": {
                "input_tokens": inp, "cache_creation_input_tokens": cache_new,
                "cache_read_input_tokens": cache_read, "output_tokens": out,
                "server_tool_use": {"web_search_requests": 0, "web_fetch_requests": 0},
                "service_tier": "standard",
                "cache_creation": {"ephemeral_1h_input_tokens": 0, "ephemeral_5m_input_tokens": cache_new},
            },
            "modelUsage": {MODEL: {
                "inputTokens": inp, "outputTokens": out, "cacheReadInputTokens": cache_read,
                "cacheCreationInputTokens": cache_new, "webSearchRequests": 0, "costUSD": cost,
                "contextWindow": 200000,
            }},
            "permission_denials": [], "uuid": self.uuid(),
        })  # fmt: skip
        assert self.fh is not None
        self.fh.close()
        self.fh = None
        self.assistant_turns = 0

    def usage(self) -> dict[str, Any]:
        rng = self.rng
        new = rng.randint(0, 8000)
        return {
            "input_tokens": rng.randint(1, 9), "cache_creation_input_tokens": new,
            "cache_read_input_tokens": rng.randint(10_000, 150_000),
            "cache_creation": {"ephemeral_5m_input_tokens": new, "ephemeral_1h_input_tokens": 0},
            "output_tokens": rng.randint(1, 900), "service_tier": "standard",
        }  # fmt: skip

    def assistant(self, blocks: list[dict[str, Any]], thread: str, *, chatter: bool = True) -> str:
        """One message: optional thinking and text, then the given blocks, a line each."""
        rng = self.rng
        mid = self.msg_id()
        pre: list[dict[str, Any]] = []
        if chatter and rng.random() < (0.1 if self.small else 0.35):
            size = rng.randint(60, 300) if self.small else int(rng.lognormvariate(math.log(600), 0.8))
            pre.append({"type": "thinking", "thinking": self.pools.prose(rng, size),
                        "signature": self.pools.sig(rng)})  # fmt: skip
        if chatter and rng.random() < 0.45:
            size = rng.randint(30, 120) if self.small else rng.randint(40, 400)
            pre.append({"type": "text", "text": self.pools.prose(rng, size)})
        parent = None if thread == "main" else thread
        for block in (*pre, *blocks):
            self.emit({
                "type": "assistant",
                "message": {
                    "model": MODEL, "id": mid, "type": "message", "role": "assistant", "content": [block],
                    "stop_reason": None, "stop_sequence": None, "usage": self.usage(),
                    "context_management": None,
                },
                "parent_tool_use_id": parent, "session_id": self.session, "uuid": self.uuid(),
            })  # fmt: skip
        self.assistant_turns += 1
        return mid

    def tool_result(self, call: Call, thread: str) -> None:
        block: dict[str, Any] = {"tool_use_id": call.tid, "type": "tool_result", "content": call.content}
        if call.is_error:
            block["is_error"] = True
        event: dict[str, Any] = {
            "type": "user",
            "message": {"role": "user", "content": [block]},
            "parent_tool_use_id": None if thread == "main" else thread,
            "session_id": self.session,
            "uuid": self.uuid(),
        }
        if call.extra is not None:
            event["tool_use_result"] = call.extra
        before = self.bytes
        self.emit(event)
        kind = "explore" if call.name == EXPLORE else call.name
        self.stats.result_bytes[kind] = self.stats.result_bytes.get(kind, 0) + self.bytes - before

    def calls(self, thread: str, calls: list[Call]) -> None:
        """One assistant message with these tool calls (parallel when several), then their results."""
        blocks = []
        for call in calls:
            call.tid = call.act.id = self.tool_id()
            blocks.append({"type": "tool_use", "id": call.tid, "name": call.name, "input": call.input})
        mid = self.assistant(blocks, thread)
        for call in calls:
            call.act.msg = mid
            call.act.thread = thread
            self.acts.setdefault(thread, []).append(call.act)
        for call in calls:
            self.tool_result(call, thread)

    # ---- tool calls -------------------------------------------------------------------------
    def c_explore(self, thread: str) -> Call:
        rng, repo = self.rng, self.repo
        w = rng.choice
        query = rng.choice((
            f"how does {w(WORDS)} {w(WORDS)} reach {_camel(rng)}",
            f"{_camel(rng)} {w(WORDS)} {w(WORDS)} flow",
            f"where is {w(WORDS)} {w(WORDS)} handled in {w(WORDS)}",
            f"{w(WORDS)} {w(WORDS)} {w(WORDS)} {w(WORDS)}",
        ))  # fmt: skip
        self.stats.explores += 1
        if self.race_pending:
            self.race_pending = False
            self.raced = True
            return Call(EXPLORE, {"query": query}, Act(thread, "", "", EXPLORE, "explore", error=True),
                        RACE_TEXT, f"Error: No such tool available: {EXPLORE}", is_error=True)  # fmt: skip
        if rng.random() < self.rates.explore_error:
            text = "MCP error -32001: Request timed out"
            return Call(EXPLORE, {"query": query}, Act(thread, "", "", EXPLORE, "explore", error=True),
                        f"Error: {text}", f"Error: {text}", is_error=True)  # fmt: skip
        returned = repo.sample(rng, rng.randint(1, 3) if self.small else rng.randint(1, 7))
        mentioned = repo.sample(rng, rng.randint(1, 5), exclude=set(returned))
        if self.small:
            size = rng.randint(300, 1500)
        else:
            r = self.rates
            drawn = rng.lognormvariate(math.log(r.explore_median), r.explore_sigma)
            size = int(min(r.explore_max, max(2_000, drawn)))
        text = self.explore_text(query, returned, mentioned, size)
        self.last_response[thread] = (returned, mentioned)
        content = [{"type": "text", "text": text}]
        act = Act(thread, "", "", EXPLORE, "explore", returned=tuple(returned))
        self.stats.explore_text += len(text.encode())
        return Call(EXPLORE, {"query": query}, act, content, content if self.rates.explore_sidecar else None)

    def explore_text(self, query: str, returned: list[str], mentioned: list[str], size: int) -> str:
        rng, repo = self.rng, self.repo
        out = [f"# Exploration: {query}", "", "## Flow", ""]
        flow = returned + mentioned
        rng.shuffle(flow)
        for i, path in enumerate(flow, 1):
            out.append(f"{i}. `{_camel(rng)}()` in {path}:{rng.randint(1, 400)} → `{_camel(rng)}()`")
        out += ["", "## Source", ""]
        used = sum(len(x) + 1 for x in out)
        sections = list(returned)
        if len(returned) > 1 and rng.random() < 0.1:  # one file shipped in two sections
            sections.append(rng.choice(returned))
        per = max(150, (size - used) // len(sections))
        for path in sections:
            f = repo.by_path[path]
            n = max(2, min(len(f.lines), per // 32))
            start = rng.randint(0, max(0, len(f.lines) - n))
            shown = f"./{path}" if rng.random() < 0.05 else path
            lang = path.rsplit(".", 1)[-1]
            out += [f"**`{shown}`** (lines {start + 1}-{start + n})", f"```{lang}"]
            out += f.lines[start : start + n]
            out += ["```", ""]
        out.append("Related: " + ", ".join(f"{p} ({rng.choice(WORDS)})" for p in mentioned))
        return "\n".join(out)

    def c_read(self, path: str) -> Call:
        rng, repo = self.rng, self.repo
        f = repo.by_path[path]
        act = Act("", "", "", "Read", "read", path=path, file_access=True)
        if not self.small and rng.random() < 0.01:
            msg = "<tool_use_error>File does not exist.</tool_use_error>"
            return Call("Read", {"file_path": repo.abs(path)}, act, msg, "Error: File does not exist.",
                        is_error=True)  # fmt: skip
        inp: dict[str, Any] = {"file_path": repo.abs(path)}
        start, stop = 0, None
        if len(f.lines) > 120 and rng.random() < 0.2:
            start = rng.randint(0, len(f.lines) - 100)
            limit = rng.choice((50, 80, 100, 200))
            stop = start + limit
            inp.update(offset=start + 1, limit=limit)
        body = f.numbered(start, stop)
        raw = f.text if stop is None and start == 0 else "\n".join(f.lines[start:stop])
        shown = len(f.lines[start:stop])
        extra = {"type": "text", "file": {"filePath": repo.abs(path), "content": raw, "numLines": shown,
                                          "startLine": start + 1, "totalLines": len(f.lines)}}  # fmt: skip
        return Call("Read", inp, act, body + SYSTEM_REMINDER, extra)

    def c_grep(self) -> Call:
        rng, repo = self.rng, self.repo
        pattern = rng.choice((_camel(rng), f"{rng.choice(WORDS)}\\(", f"function {rng.choice(WORDS)}"))
        act = Act("", "", "", "Grep", "search", file_access=True)
        if rng.random() < 0.5:
            hits = repo.sample(rng, rng.randint(0, 12 if self.small else 40))
            names = [repo.abs(p) for p in hits]
            text = f"Found {len(hits)} files\n" + "\n".join(names) if hits else "No files found"
            inp = {"pattern": pattern, "path": repo.root}
            extra = {"mode": "files_with_matches", "filenames": names, "numFiles": len(hits)}
            return Call("Grep", inp, act, text, extra)
        n = rng.randint(1, 8) if self.small else rng.randint(3, 300)
        lines = [f"{rng.choice(repo.files).path}:{rng.randint(1, 900)}:{rng.choice(self.pools.code)}"
                 for _ in range(n)]  # fmt: skip
        text = "\n".join(lines)
        inp = {"pattern": pattern, "path": rng.choice(DIRS), "output_mode": "content", "-n": True}
        extra = {"mode": "content", "numFiles": 0, "filenames": [], "content": text, "numLines": n}
        return Call("Grep", inp, act, text, extra)

    def c_glob(self) -> Call:
        rng, repo = self.rng, self.repo
        hits = repo.sample(rng, rng.randint(1, 10 if self.small else 100))
        text = "\n".join(repo.abs(p) for p in hits)
        extra = {"filenames": [repo.abs(p) for p in hits], "durationMs": rng.randint(2, 90),
                 "numFiles": len(hits), "truncated": False}  # fmt: skip
        inp = {"pattern": rng.choice(("**/*.js", "lib/**/*.js", "src/**/*.ts", "**/*test*"))}
        return Call("Glob", inp, Act("", "", "", "Glob", "search", file_access=True), text, extra)

    def c_bash(self, kind: str, path: str = "") -> Call:
        """kind: read (path) | search | other | cli (runs the codegraph CLI: contamination)."""
        rng, repo = self.rng, self.repo
        w = rng.choice
        if kind == "read":
            f = repo.by_path[path]
            if rng.random() < 0.5:
                command, out = f"cat {path}", f.text
            else:
                a = rng.randint(1, max(1, len(f.lines) - 10))
                b = a + rng.randint(10, 120)
                command, out = f"sed -n '{a},{b}p' {path}", "\n".join(f.lines[a - 1 : b])
            act = Act("", "", "", "Bash", "read", path=path, file_access=True)
        elif kind == "search":
            command = rng.choice((
                f'grep -rn "{_camel(rng)}" {w(DIRS)}/', f"rg -n '{w(WORDS)}\\(' {w(DIRS)}",
                f"ls {w(DIRS)}", f'find . -name "*{w(WORDS)}*" -not -path "./node_modules/*"',
                f"git grep -n {w(WORDS)}",
            ))  # fmt: skip
            n = rng.randint(1, 6) if self.small else rng.randint(2, 120)
            out = "\n".join(
                f"{w(repo.files).path}:{rng.randint(1, 500)}:{w(self.pools.code)}" for _ in range(n)
            )
            act = Act("", "", "", "Bash", "search", file_access=True)
        elif kind == "cli":
            command = rng.choice((f'codegraph explore "{w(WORDS)} {w(WORDS)}"',
                                  f"./node_modules/.bin/codegraph query {w(WORDS)}"))  # fmt: skip
            out = self.explore_text(command, repo.sample(rng, 2), repo.sample(rng, 1), 1500)
            act = Act("", "", "", "Bash", "other")
            self.contaminated = True
        else:
            command = rng.choice((
                "npm test 2>&1 | tail -n 60", "npm run lint", "git status", "git diff --stat",
                f"node -e \"console.log(require('./package.json').{w(WORDS)})\"",
                "npx jest --silent 2>&1 | tail -n 40", f"npm test -- --grep '{w(WORDS)}'",
            ))  # fmt: skip
            n = rng.randint(2, 10) if self.small else int(rng.lognormvariate(math.log(60), 1.0))
            out = "\n".join(rng.choices(self.pools.tests, k=n))
            act = Act("", "", "", "Bash", "other")
        extra = {"stdout": out, "stderr": "", "interrupted": False, "isImage": False}
        desc = self.pools.prose(rng, 20)[:60]
        return Call("Bash", {"command": command, "description": desc}, act, out, extra)

    def c_edit(self, path: str) -> Call:
        rng, repo = self.rng, self.repo
        f = repo.by_path[path]
        i = rng.randrange(0, len(f.lines))
        old = "\n".join(f.lines[i : i + rng.randint(1, 4)]) or "x"
        new = old + "\n" + rng.choice(self.pools.code)
        a = max(0, i - 4)
        snippet = f.numbered(a, a + 12)
        text = (f"The file {repo.abs(path)} has been updated. Here's the result of running `cat -n` on a "
                f"snippet of the edited file:\n{snippet}")  # fmt: skip
        diff = ["-" + x for x in old.split("\n")] + ["+" + x for x in new.split("\n")]
        extra = {
            "filePath": repo.abs(path), "oldString": old, "newString": new, "originalFile": f.text,
            "structuredPatch": [{"oldStart": i + 1, "oldLines": old.count("\n") + 1, "newStart": i + 1,
                                 "newLines": new.count("\n") + 1, "lines": diff}],
            "userModified": False, "replaceAll": False,
        }  # fmt: skip
        inp = {"file_path": repo.abs(path), "old_string": old, "new_string": new}
        return Call("Edit", inp, Act("", "", "", "Edit", "other"), text, extra)

    def c_write(self) -> Call:
        rng, repo = self.rng, self.repo
        path = f"test/{rng.choice(WORDS)}-{rng.randint(1, 9999)}.test.js"
        body = "\n".join(rng.choices(self.pools.code, k=rng.randint(5, 30 if self.small else 150)))
        text = f"File created successfully at: {repo.abs(path)}"
        extra = {"type": "create", "filePath": repo.abs(path), "content": body, "structuredPatch": [],
                 "originalFile": None}  # fmt: skip
        return Call("Write", {"file_path": repo.abs(path), "content": body},
                    Act("", "", "", "Write", "other"), text, extra)  # fmt: skip

    def c_todo(self) -> Call:
        rng = self.rng
        todos = [{"content": self.pools.prose(rng, 30)[:70], "status": rng.choice(("pending", "in_progress",
                  "completed")), "activeForm": self.pools.prose(rng, 30)[:70]}
                 for _ in range(rng.randint(2, 6))]  # fmt: skip
        return Call("TodoWrite", {"todos": todos}, Act("", "", "", "TodoWrite", "transparent"), TODO_ACK,
                    {"oldTodos": [], "newTodos": todos})  # fmt: skip

    # ---- steps ------------------------------------------------------------------------------
    def step(self, thread: str, calls: list[Call]) -> bool:
        """Emit one message; True when it holds an answered explore that awaits its reaction."""
        self.calls(thread, calls)
        pending = False
        for call in calls:
            if call.act.cat == "explore" and not call.act.error:
                self.returned_so_far.setdefault(thread, []).extend(call.act.returned)
                pending = True
        return pending

    def free(self, thread: str) -> bool:
        rng, repo = self.rng, self.repo
        if self.cli_at is not None and self.bytes >= self.cli_at and thread == "main":
            self.cli_at = None
            return self.step(thread, [self.c_bash("cli")])
        choices = ["explore", "read", "search", "bash", "edit", "todo", "parallel", "write", "agent"]
        weights = [self.rates.explore_weight if self.explores else 0, 28, 14, 12, 8, 4, 6, 3, 3]
        what = rng.choices(choices, weights)[0]
        if what == "agent" and (thread != "main" or not self.agents_left):
            what = "read"
        if what == "explore":
            return self.step(thread, [self.c_explore(thread)])
        if what == "read":
            return self.step(thread, [self.c_read(rng.choice(repo.files).path)])
        if what == "search":
            return self.step(thread, [self.c_grep() if rng.random() < 0.65 else self.c_glob()])
        if what == "bash":
            kind = rng.choices(("read", "search", "other"), (3, 3, 4))[0]
            return self.step(thread, [self.c_bash(kind, rng.choice(repo.files).path)])
        if what == "edit":
            return self.step(thread, [self.c_edit(rng.choice(repo.files).path)])
        if what == "todo":
            return self.step(thread, [self.c_todo()])
        if what == "write":
            return self.step(thread, [self.c_write()])
        if what == "parallel":
            if self.explores and rng.random() < 0.5:  # an explore and a concurrent Grep
                return self.step(thread, [self.c_explore(thread), self.c_grep()])
            return self.step(thread, [self.c_read(p) for p in repo.sample(rng, rng.randint(2, 4))])
        self.agent(thread)
        return False

    def react(self, thread: str, *, ctx: str | None = None, category: str | None = None) -> bool:
        """The first action after an answered explore of thread ``ctx`` (default: this thread)."""
        rng, repo = self.rng, self.repo
        ctx = ctx or thread
        if category is None:
            cats = ["explore_again", "read_returned", "read_missed", "search", "sufficient", "delegate"]
            weights = [14, 22, 13, 12, 36 * self.skill, 3 if thread == "main" and self.agents_left else 0]
            category = rng.choices(cats, weights)[0]
        if rng.random() < 0.08:  # bookkeeping first: transparent to the classifier
            self.step(thread, [self.c_todo()])
        if category == "delegate":
            first = rng.choice(("explore_again", "read_returned", "read_missed", "search", "sufficient"))
            if not self.explores and first == "explore_again":
                first = "search"
            self.agent(thread, first=first, ctx=ctx)
            return False
        if category == "explore_again" and self.explores:
            return self.step(thread, [self.c_explore(thread)])
        if category in ("read_returned", "read_missed"):
            returned, mentioned = self.last_response.get(ctx, ([], []))
            earlier = self.returned_so_far.get(ctx, [])
            if category == "read_returned" and earlier:
                path = rng.choice(returned if returned and rng.random() < 0.8 else earlier)
            else:
                named = [m for m in mentioned if m not in earlier]
                if named and rng.random() < 0.4:
                    path = rng.choice(named)
                else:
                    path = repo.sample(rng, 1, exclude=set(earlier))[0]
            if rng.random() < 0.2:
                return self.step(thread, [self.c_bash("read", path)])
            return self.step(thread, [self.c_read(path)])
        if category == "search":
            r = rng.random()
            call = self.c_grep() if r < 0.5 else self.c_glob() if r < 0.75 else self.c_bash("search")
            return self.step(thread, [call])
        r = rng.random()
        if r < 0.5:
            return self.step(thread, [self.c_edit(rng.choice(repo.files).path)])
        if r < 0.9:
            return self.step(thread, [self.c_bash("other")])
        return self.step(thread, [self.c_write()])

    def agent(self, thread: str, *, first: str | None = None, ctx: str | None = None) -> None:
        """An Agent call: its tool_use, the subagent's events, then its result."""
        rng = self.rng
        self.agents_left -= 1
        self.stats.agents += 1
        prompt = self.pools.prose(rng, rng.randint(100, 300 if self.small else 1200))
        inp = {"description": self.pools.prose(rng, 20)[:40], "prompt": prompt,
               "subagent_type": rng.choice(("general-purpose", "Explore"))}  # fmt: skip
        act = Act(thread, "", "", "Agent", "agent")
        call = Call("Agent", inp, act, None)
        call.tid = act.id = self.tool_id()
        mid = self.assistant([{"type": "tool_use", "id": call.tid, "name": "Agent", "input": inp}], thread)
        act.msg = mid
        self.acts[thread].append(act)
        sub = call.tid
        self.acts[sub] = []
        self.emit({"type": "user", "message": {"role": "user", "content": [{"type": "text", "text": prompt}]},
                   "parent_tool_use_id": sub, "session_id": self.session, "uuid": self.uuid()})  # fmt: skip
        remaining = max(0, self.budget - self.bytes)
        share = rng.uniform(0.05, 0.25) if not self.small else 0.3
        end = self.bytes + max(1500 if self.small else 20_000, int(remaining * share))
        self.thread(sub, end, first=first, ctx=ctx)
        summary = self.pools.prose(rng, rng.randint(80, 300 if self.small else 2500))
        content = [{"type": "text", "text": summary}]
        call.content = content
        call.extra = {
            "status": "completed", "prompt": prompt, "agentId": "".join(rng.choices(ALPHABET[:16], k=8)),
            "content": content, "totalDurationMs": rng.randint(5000, 300000),
            "totalTokens": rng.randint(5000, 90000), "totalToolUseCount": len(self.acts[sub]),
            "usage": self.usage(),
        }  # fmt: skip
        self.tool_result(call, thread)

    def thread(self, thread: str, end: int, *, first: str | None = None, ctx: str | None = None) -> None:
        pending = self.react(thread, ctx=ctx, category=first) if first else False
        while self.bytes < end:
            if thread == "main" and self.turn_marks and self.bytes >= self.turn_marks[0]:
                self.turn_marks.pop(0)
                self.close_turn(self.pools.prose(self.rng, self.rng.randint(100, 600)))
                self.open_turn()
            pending = self.react(thread) if pending else self.free(thread)

    def write(self) -> None:
        self.open_turn()
        self.thread("main", self.budget)
        rng = self.rng
        final = self.pools.prose(rng, rng.randint(80, 300) if self.small else rng.randint(200, 1500))
        if self.rates.cite:
            chance = min(1.0, self.rates.cite * self.skill)
            returned = dict.fromkeys(p for paths in self.returned_so_far.values() for p in paths)
            cited = [p for p in returned if self.side.random() < chance]
            if cited:
                final += "\n\nChanged: " + ", ".join(f"`{p}`" for p in cited) + "."
        self.assistant([{"type": "text", "text": final}], "main", chatter=False)
        self.close_turn(final)
        self.stats.bytes += self.bytes
        self.stats.transcripts += 1
        self.stats.truth.append(self.truth())

    # ---- the expected verdict ---------------------------------------------------------------
    def truth(self) -> dict[str, Any]:
        """What the sufficiency spec says of what was written (an independent, plain reading)."""
        counts = dict.fromkeys(BUCKET_KEYS, 0)
        errored = concurrent = 0

        def reaction(b: Act, returned: tuple[str, ...], earlier: list[str]) -> str:
            if b.cat == "explore":
                return "explore_again"
            if b.cat == "read":
                return "read_returned" if b.path in returned or b.path in earlier else "read_missed"
            return "search" if b.cat == "search" else "sufficient"

        for acts in self.acts.values():
            earlier: list[str] = []
            for i, a in enumerate(acts):
                if a.cat != "explore":
                    continue
                if a.error:
                    errored += 1
                    continue
                bucket = "sufficient"
                for b in acts[i + 1 :]:
                    if b.msg == a.msg:
                        concurrent += b.file_access
                        continue
                    if b.cat == "transparent":
                        continue
                    if b.cat == "agent":
                        for s in self.acts.get(b.id, ()):
                            if s.cat not in ("agent", "transparent"):
                                bucket = reaction(s, a.returned, earlier)
                                break
                    else:
                        bucket = reaction(b, a.returned, earlier)
                    break
                counts[bucket] += 1
                earlier.extend(a.returned)
        flags = [n for n, v in (("raced", self.raced), ("contaminated", self.contaminated)) if v]
        return {
            "path": self.rel, "files": self.files, "arm": self.arm,
            "status": "skipped" if flags else "classified", "flags": flags,
            "answered": sum(counts.values()), "errored": errored, "concurrent": concurrent, "counts": counts,
        }  # fmt: skip


def generate(
    root: str,
    *,
    size_mb: float | None,
    transcripts: int | None,
    small: int | None,
    seed: int,
    rates: Rates,
    budget_factor: float = 1.0,
    arms: tuple[str, str] = ("with", "without"),
    repo_names: tuple[str, ...] = REPOS,
) -> Stats:
    """Write the campaign; only an arm named ``without`` runs without the explore tool."""
    rng = random.Random(seed)
    pools = Pools(rng)
    is_small = small is not None
    repos = {name: Repo(name, random.Random(f"{seed}:{name}"), pools, is_small) for name in repo_names}
    if is_small:
        count = small
        budgets = [random.Random(f"{seed}:b:{i}").randint(1500, 4000) for i in range(count)]
    else:
        assert size_mb is not None
        count = transcripts or max(2, round(size_mb / 2))
        weights = [random.Random(f"{seed}:b:{i}").lognormvariate(0, 0.6) for i in range(count)]
        total = size_mb * 1_000_000 * budget_factor
        budgets = [max(30_000, int(total * w / sum(weights))) for w in weights]
    stats = Stats()
    runs_per_repo: dict[str, int] = {}
    for i in range(count):
        pair, arm = divmod(i, 2)
        repo = repo_names[pair % len(repo_names)]
        if arm == 0:
            runs_per_repo[repo] = runs_per_repo.get(repo, 0) + 1
        run = runs_per_repo[repo]
        arm_name = arms[arm]
        rel = f"{repo}/run{run}/run-headless-{arm_name}.jsonl"
        Writer(
            rng=random.Random(f"{seed}:{rel}"), pools=pools, repo=repos[repo], arm=arm_name, root=root,
            rel=rel, budget=budgets[i], rates=rates, small=is_small, stats=stats,
            explores=arm_name != "without",
        ).write()  # fmt: skip
    return stats


def truth_toml(seed: int, repo_names: tuple[str, ...], small: bool) -> str:
    """A ground-truth file for the campaign ``generate`` writes with ``seed``: per repository
    one question (its group) with gold files (three of its files and a glob), incidental
    globs, symbols and ``must`` / ``must_not`` regexes, so that every check a truth file asks
    for runs on every transcript (what it costs is what the benchmark measures)."""
    pools = Pools(random.Random(seed))  # the pools `generate` made: the same files per repository
    out = ["# Written by benchmarks/generate.py --truth-toml: a question per repository.", "version = 1", ""]
    for name in repo_names:
        repo = Repo(name, random.Random(f"{seed}:{name}"), pools, small)
        rng = random.Random(f"{seed}:truth:{name}")
        gold = repo.sample(rng, 3)
        folder = gold[0].rsplit("/", 1)[0]
        words = rng.sample(WORDS, 4)
        out += [
            "[[question]]", f'id = "{name}"', f'group = "{name}"',
            f"answer = {json.dumps([*gold, folder + '/*.ts'])}",
            'incidental = ["dist/**", "**/*.md", "test/**"]',
            f"symbols = {json.dumps(words[:3])}",
            f"must = ['(?i)\\b{words[3]}']", "must_not = ['(?i)cannot find', 'no such file']",
            "min_symbols = 0.6", "",
        ]  # fmt: skip
    return "\n".join(out)


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("root", help="campaign directory to create (must not exist, or be empty)")
    size = parser.add_mutually_exclusive_group(required=True)
    size.add_argument("--size-mb", type=float, help="approximate total size in MB (10^6 bytes)")
    size.add_argument("--small", type=int, metavar="N", help="write N tiny transcripts (a few KB each)")
    parser.add_argument("--transcripts", type=int, help="number of transcripts (default: one per 2 MB)")
    parser.add_argument("--seed", type=int, default=1)
    parser.add_argument("--profile", choices=sorted(PROFILES), default="default",
                        help="campaign shape: explore-heavy = long explore responses (median 27 KB), "
                        "~2.4 explore calls and ~0.24 MB per transcript")  # fmt: skip
    parser.add_argument("--truth", metavar="FILE", help="write the expected verdicts as JSON to FILE")
    parser.add_argument("--truth-toml", metavar="FILE",
                        help="write a ground-truth file (docs/ground-truth.md) for the campaign to FILE: "
                        "a question per repository, covering every transcript")  # fmt: skip
    parser.add_argument("--turn-rate", type=float, default=Rates.turns, help="share of multi-turn runs")
    parser.add_argument("--subagent-rate", type=float, default=Rates.subagents)
    parser.add_argument("--race-rate", type=float, default=Rates.race)
    parser.add_argument("--contaminate-rate", type=float, default=Rates.contaminate)
    parser.add_argument("--skill", type=float, default=None,
                        help="spread of runs' sufficient rates (0: calls independent)")
    parser.add_argument("--cite-rate", type=float, default=None,
                        help="chance the answer cites a returned file (0: never)")
    parser.add_argument("--force", action="store_true", help="replace ROOT if this script generated it")
    args = parser.parse_args(argv)

    root = os.path.abspath(args.root)
    if os.path.exists(root) and os.listdir(root):
        if not (args.force and os.path.exists(os.path.join(root, MARKER_FILE))):
            parser.error(f"{root} exists and is not empty (use --force to replace a generated campaign)")
        shutil.rmtree(root)
    os.makedirs(root, exist_ok=True)
    with open(os.path.join(root, MARKER_FILE), "w") as fh:
        fh.write(json.dumps({"seed": args.seed, "size_mb": args.size_mb, "small": args.small}) + "\n")
    profile = PROFILES[args.profile]
    chosen = {**profile.get("rates", {})}
    if args.turn_rate != Rates.turns or "turns" not in chosen:
        chosen["turns"] = args.turn_rate
    for name, value in (("skill", args.skill), ("cite", args.cite_rate)):
        if value is not None:
            chosen[name] = value
    rates = Rates(subagents=args.subagent_rate, race=args.race_rate, contaminate=args.contaminate_rate,
                  **chosen)  # fmt: skip
    if args.transcripts is None and args.size_mb and "mb_per_transcript" in profile:
        args.transcripts = max(2, round(args.size_mb / profile["mb_per_transcript"]))
    t0 = time.perf_counter()
    stats = generate(root, size_mb=args.size_mb, transcripts=args.transcripts, small=args.small,
                     seed=args.seed, rates=rates,
                     budget_factor=profile.get("budget_factor", 1.0),
                     arms=profile.get("arms", ("with", "without")),
                     repo_names=MORE_REPOS[: profile.get("repos", len(REPOS))])  # fmt: skip
    elapsed = time.perf_counter() - t0
    if args.truth:
        with open(args.truth, "wb") as fh:
            fh.write(dumps({"root": root, "seed": args.seed, "transcripts": stats.truth}))
    if args.truth_toml:
        names = MORE_REPOS[: profile.get("repos", len(REPOS))]
        with open(args.truth_toml, "w", encoding="utf-8") as fh:
            fh.write(truth_toml(args.seed, names, args.small is not None))
    print(
        f"{root}: {stats.transcripts} transcripts, {stats.files} files ({stats.turn_files} turn files), "
        f"{stats.bytes / 1e6:.1f} MB, {stats.lines} lines, {stats.explores} explore calls, "
        f"{stats.agents} subagents, in {elapsed:.1f} s"
    )
    if stats.bytes:
        shares = {k: v / stats.bytes for k, v in stats.result_bytes.items()}
        top = ", ".join(f"{k} {v:.0%}" for k, v in sorted(shares.items(), key=lambda kv: -kv[1])[:4])
        print(f"bytes of tool results: {top}; explore calls per transcript "
              f"{stats.explores / max(1, stats.transcripts):.2f}, mean response "
              f"{stats.explore_text / max(1, stats.explores) / 1000:.1f} KB")  # fmt: skip
    return 0


if __name__ == "__main__":
    sys.exit(main())
