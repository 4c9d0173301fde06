"""An independent computation of the arm table's figures, straight from stream-json logs.

Written from the rules (issue #42, docs/rules.md "The arm table"), not from the package:
nothing here imports ``pytest_explore_suff``. It reads the JSON lines itself and knows
only the shapes the campaign generator below writes (Claude Code stream-json, with
subagent events carrying ``parent_tool_use_id``, and shell commands from a fixed list
whose intents are known). ``tests/test_arm_table.py`` compares the plugin's report
with it, figure by figure.

Also the generator: `held_out_campaign` writes a seeded random campaign whose runs
return overlapping files in fenced code (backtick and tilde fences, trailing blanks,
unclosed fences, a guidance quote), explore again, err, delegate, read and search by
hand, shell out to the tool's CLI, and end in success or not.
"""

from __future__ import annotations

import json
import random
import re
import statistics
from pathlib import Path
from typing import Any

EXPLORE = "mcp__codegraph__codegraph_explore"
MARKER = re.compile(r"^\*\*`([^`]+)`\*\*")
FENCE = re.compile(r"^ {0,3}(`{3,}|~{3,})(.*)$")

# -- the generator -----------------------------------------------------------------------------

#: Shell commands the generator writes, with the intent the sufficiency rules give them.
SHELL = {
    "cat lib/a.js": "read",
    "sed -n '1,40p' lib/b.js": "read",
    "head -20 src/c.ts": "read",
    "grep -rn send lib/": "search",
    "ls lib": "search",
    "rg handler src": "search",
    "npm test": None,
    "git status": None,
}
CLI = "codegraph explore 'where is send'"
FILES = ["lib/a.js", "lib/b.js", "src/c.ts", "src/d.ts", "lib/router/index.js"]
POOL = [
    "function send(body) {",
    "  return body;",
    "}",
    "const x = 1;",
    "if (a) {",
    "  b();",
    "module.exports = send;",
    "let y = x + 1;",
    "export function route() {}",
    "  // comment",
]


def _section(rng: random.Random, path: str) -> list[str]:
    out = [f"**`{path}`** send(function) x(variable)"]
    for _ in range(rng.randint(0, 2)):
        fence = rng.choice(["```js", "~~~", "````", "```"])
        out.append(rng.choice(["", " "]) + fence)
        for _ in range(rng.randint(1, 6)):
            line = rng.choice(POOL) + rng.choice(["", "", " ", "\t", "  "])
            out.append(rng.choice([line, line, "", "   "]))
        if rng.random() < 0.85:
            closer = fence[0] * len(fence.rstrip("js")) if fence[0] == "`" else "~~~"
            out.append(closer)
        out.append(rng.choice(["prose after the block", "", "see `send`"]))
    return out


def _response(rng: random.Random) -> str:
    out = ["## Flow", "1. step in lib/a.js:12"]
    for path in rng.sample(FILES, rng.randint(1, 3)):
        out += _section(rng, path)
    if rng.random() < 0.4:
        out += ["", "> next: read the router"]
    return "\n".join(out)


class _Writer:
    def __init__(self, rng: random.Random, session: str) -> None:
        self.rng = rng
        self.session = session
        self.n = 0
        self.events: list[dict[str, Any]] = [{"type": "system", "subtype": "init", "session_id": session}]

    def _id(self, prefix: str) -> str:
        self.n += 1
        return f"{prefix}_{self.session}_{self.n:04d}"

    def call(
        self,
        name: str,
        inp: dict[str, Any],
        result: str = "ok",
        *,
        error: bool = False,
        parent: str | None = None,
        answered: bool = True,
        model: str = "claude-main",
    ) -> str:
        tid = self._id("toolu")
        usage = {
            "input_tokens": self.rng.randint(1, 50),
            "cache_read_input_tokens": self.rng.randint(0, 9000),
            "cache_creation_input_tokens": self.rng.randint(0, 300),
            "output_tokens": self.rng.randint(1, 200),
        }
        self.events.append(
            {
                "type": "assistant",
                "parent_tool_use_id": parent,
                "session_id": self.session,
                "message": {
                    "id": self._id("msg"),
                    "model": model,
                    "usage": usage,
                    "content": [{"type": "tool_use", "id": tid, "name": name, "input": inp}],
                },
            }
        )
        if answered:
            self.events.append(
                {
                    "type": "user",
                    "parent_tool_use_id": parent,
                    "session_id": self.session,
                    "message": {
                        "role": "user",
                        "content": [
                            {"type": "tool_result", "tool_use_id": tid, "content": result, "is_error": error}
                        ],
                    },
                }
            )
        return tid

    def step(self, parent: str | None, model: str) -> None:
        rng = self.rng
        kind = rng.choices(
            ["explore", "read", "search", "bash", "edit", "cli", "toolsearch", "err"],
            [5, 3, 2, 3, 1, 1, 1, 1],
        )[0]
        if kind == "explore":
            self.call(EXPLORE, {"query": "q"}, _response(rng), parent=parent, model=model)
        elif kind == "err":
            self.call(
                EXPLORE,
                {"query": "q"},
                "boom",
                error=True,
                parent=parent,
                model=model,
                answered=rng.random() < 0.8,
            )
        elif kind == "read":
            self.call("Read", {"file_path": "/r/" + rng.choice(FILES)}, parent=parent, model=model)
        elif kind == "search":
            self.call(rng.choice(["Grep", "Glob"]), {"pattern": "send"}, parent=parent, model=model)
        elif kind == "bash":
            self.call("Bash", {"command": rng.choice(list(SHELL))}, parent=parent, model=model)
        elif kind == "cli":
            self.call("Bash", {"command": CLI}, "hits", error=rng.random() < 0.5, parent=parent, model=model)
        elif kind == "toolsearch":
            self.call("ToolSearch", {"query": "codegraph"}, parent=parent, model=model)
        else:
            self.call("Edit", {"file_path": "lib/a.js"}, parent=parent, model=model)


def held_out_run(seed: int, session: str) -> list[dict[str, Any]]:
    """One run's events."""
    rng = random.Random(seed)
    w = _Writer(rng, session)
    sub_model = rng.choice(["claude-sub", "claude-main"])
    for _ in range(rng.randint(0, 9)):
        if rng.random() < 0.12:
            spawn = w.call("Task", {"prompt": "look", "description": "d"}, answered=False)
            for _ in range(rng.randint(0, 4)):
                w.step(spawn, sub_model)
            w.events.append(
                {
                    "type": "user",
                    "parent_tool_use_id": None,
                    "session_id": session,
                    "message": {
                        "role": "user",
                        "content": [{"type": "tool_result", "tool_use_id": spawn, "content": "summary"}],
                    },
                }
            )
        else:
            w.step(None, "claude-main")
    for _ in range(rng.choice([0, 1, 1, 1, 2])):
        result: dict[str, Any] = {
            "type": "result",
            "session_id": session,
            "result": "The answer cites lib/a.js",
            "subtype": rng.choice(["success", "success", "success", "error_max_turns"]),
        }
        if rng.random() < 0.9:
            result["duration_ms"] = rng.randint(1000, 90000)
        if rng.random() < 0.9:
            result["total_cost_usd"] = round(rng.uniform(0.01, 0.5), 4)
        if rng.random() < 0.15:
            result["is_error"] = True
        if rng.random() < 0.7:
            result["modelUsage"] = {
                "claude-main": {
                    "inputTokens": 10,
                    "outputTokens": 5,
                    "cacheReadInputTokens": 900,
                    "cacheCreationInputTokens": 30,
                    "costUSD": round(rng.uniform(0.01, 0.3), 4),
                },
                **(
                    {
                        "claude-sub": {
                            "inputTokens": 3,
                            "outputTokens": 2,
                            "cacheReadInputTokens": 100,
                            "cacheCreationInputTokens": 0,
                            "costUSD": 0.02,
                        }
                    }
                    if sub_model == "claude-sub"
                    else {}
                ),
            }
        w.events.append(result)
    return w.events


def held_out_campaign(root: Path, seed: int = 42, groups: int = 4, runs: int = 5) -> Path:
    """<group>/run<N>/run-headless-{with,without}.jsonl, every run seeded from ``seed``."""
    for g in range(groups):
        for n in range(1, runs + 1):
            for arm in ("with", "without"):
                path = root / f"repo{g}" / f"run{n}" / f"run-headless-{arm}.jsonl"
                path.parent.mkdir(parents=True, exist_ok=True)
                events = held_out_run(seed * 10_000 + g * 100 + n * 2 + (arm == "with"), f"s{g}{n}{arm}")
                path.write_text("".join(json.dumps(e) + "\n" for e in events), encoding="utf-8")
    return root


# -- the oracle ---------------------------------------------------------------------------------


def _text(content: Any) -> str:
    if isinstance(content, str):
        return content
    return "".join(b.get("text", "") for b in content if isinstance(b, dict))


def _sections(text: str) -> list[tuple[str, str]]:
    """(path, text) of each returned-file section."""
    lines = text.split("\n")
    starts, pos = [], 0
    for line in lines:
        m = MARKER.match(line)
        if m:
            starts.append((pos, m.group(1)))
        pos += len(line) + 1
    out = []
    for i, (start, path) in enumerate(starts):
        if i + 1 < len(starts):
            end = starts[i + 1][0]
        else:
            quote = text.find("\n> ", start)
            end = len(text) if quote < 0 else quote
        out.append((path, text[start:end]))
    return out


def _code_lines(section: str) -> list[str]:
    out, open_fence = [], None
    for line in section.split("\n"):
        m = FENCE.match(line)
        if open_fence is None:
            if m and not (m.group(1)[0] == "`" and "`" in m.group(2)):
                open_fence = m.group(1)
            continue
        if (
            m
            and m.group(1)[0] == open_fence[0]
            and len(m.group(1)) >= len(open_fence)
            and not m.group(2).strip()
        ):
            open_fence = None
            continue
        if line.strip():
            out.append(line)
    return out


def _same(a: str, b: str) -> bool:
    return a == b or a.endswith("/" + b) or b.endswith("/" + a)


def _intent(name: str, inp: dict[str, Any]) -> str | None:
    if name in ("Read",):
        return "read"
    if name in ("Grep", "Glob"):
        return "search"
    if name == "Bash":
        return SHELL.get(inp.get("command", ""))
    return None


def oracle(path: Path) -> dict[str, Any]:
    """The figures of one stream-json run: run figures, duplicate per call and transcript,
    the abandonment flags, the cost split."""
    events = [json.loads(line) for line in path.read_text(encoding="utf-8").splitlines() if line.strip()]
    calls: list[dict[str, Any]] = []  # stream order
    results: dict[str, tuple[str, bool]] = {}
    results_seq: list[dict[str, Any]] = []
    usage: dict[str, list[int]] = {}
    models: dict[str, set[str]] = {}
    model_usage: dict[str, dict[str, float]] = {}
    for e in events:
        if e["type"] == "assistant":
            side = "main" if e.get("parent_tool_use_id") is None else "subagents"
            m = e["message"]
            u = m.get("usage") or {}
            acc = usage.setdefault(side, [0, 0, 0, 0])
            for i, k in enumerate(
                ("input_tokens", "cache_read_input_tokens", "cache_creation_input_tokens", "output_tokens")
            ):
                acc[i] += u.get(k, 0)
            models.setdefault(side, set()).add(m["model"])
            for b in m["content"]:
                if b["type"] == "tool_use":
                    calls.append({**b, "thread": e.get("parent_tool_use_id") or "main"})
        elif e["type"] == "user":
            for b in e["message"]["content"]:
                if b.get("type") == "tool_result":
                    results[b["tool_use_id"]] = (_text(b["content"]), b.get("is_error") is True)
        elif e["type"] == "result":
            results_seq.append(e)
            for model, f in (e.get("modelUsage") or {}).items():
                acc2 = model_usage.setdefault(model, {})
                for k, v in f.items():
                    acc2[k] = acc2.get(k, 0) + v
    judged = [
        c
        for c in calls
        if "codegraph_explore" in c["name"] and c["id"] in results and not results[c["id"]][1]
    ]
    # Duplicate residual.
    seen: list[tuple[str, set[str]]] = []
    dup_calls = []
    for c in judged:
        secs = _sections(results[c["id"]][0])
        if not secs:
            continue
        env = sum(len(t) for _, t in secs)
        chars = lines = 0
        new: list[tuple[str, set[str]]] = []
        for p, t in secs:
            mine: set[str] = set()
            for line in _code_lines(t):
                if any(line.rstrip() in held for q, held in seen if _same(q, p)):
                    chars += len(line) + 1
                    lines += 1
                mine.add(line.rstrip())
            new.append((p, mine))
        seen += new
        dup_calls.append(
            {
                "id": c["id"],
                "envelope": env,
                "duplicate_chars": chars,
                "duplicate_lines": lines,
                "duplicate_share": chars / env if env else 0.0,
            }
        )
    dup = None
    if dup_calls:
        env = sum(d["envelope"] for d in dup_calls)
        ch = sum(d["duplicate_chars"] for d in dup_calls)
        dup = {
            "envelope": env,
            "duplicate_chars": ch,
            "duplicate_share": ch / env if env else 0.0,
            "duplicate_lines": sum(d["duplicate_lines"] for d in dup_calls),
            "calls": dup_calls,
        }
    # Abandonment: places in the main thread.
    main = [c for c in calls if c["thread"] == "main"]
    place = {c["id"]: i for i, c in enumerate(main)}
    at = max((place[c["id"]] if c["thread"] == "main" else place[c["thread"]] for c in judged), default=None)
    abandoned = after = None
    if at is not None:
        rest = main[at + 1 :]
        after = sum(1 for c in rest if _intent(c["name"], c["input"]) is not None)
        again = sum(1 for c in rest if "codegraph_explore" in c["name"])
        abandoned = after >= 3 and again == 0
    # Run figures.
    said = [r for r in results_seq if "subtype" in r or "is_error" in r]
    success = None
    if said:
        success = all(r.get("subtype") == "success" and r.get("is_error") is not True for r in said)
    durations = [r["duration_ms"] for r in results_seq if "duration_ms" in r]
    costs = [r["total_cost_usd"] for r in results_seq if "total_cost_usd" in r]
    cli = [c for c in calls if c["name"] == "Bash" and c["input"]["command"].startswith("codegraph ")]
    cli_returned = sum(1 for c in cli if c["id"] in results and not results[c["id"]][1])
    total = sum(costs) if costs else None
    main_usd = sub_usd = None
    main_only = models.get("main", set()) - models.get("subagents", set())
    sub_only = models.get("subagents", set()) - models.get("main", set())
    if "subagents" not in usage and total is not None:
        main_usd, sub_usd = total, 0.0
    elif model_usage and set(model_usage) <= main_only | sub_only:  # each model's cost is one side's
        main_usd = sum(f["costUSD"] for m, f in model_usage.items() if m in main_only)
        sub_usd = sum(f["costUSD"] for m, f in model_usage.items() if m in sub_only)
    inputs = sum(u[0] + u[1] + u[2] for u in usage.values())
    cache = sum(u[1] for u in usage.values())
    if not usage and model_usage:  # no request says: the result events' modelUsage does
        inputs = sum(
            f["inputTokens"] + f["cacheReadInputTokens"] + f["cacheCreationInputTokens"]
            for f in model_usage.values()
        )
        cache = sum(f["cacheReadInputTokens"] for f in model_usage.values())
    return {
        "run_figures": {
            "success": success,
            "duration_s": sum(durations) / 1000 if durations else None,
            "tool_calls": sum(1 for c in calls if c["name"] != "ToolSearch"),
            "read": sum(1 for c in calls if c["name"] == "Read"),
            "search": sum(1 for c in calls if c["name"] in ("Grep", "Glob")),
            "bash": sum(1 for c in calls if c["name"] == "Bash"),
            "retrieval": sum(1 for c in calls if "codegraph_explore" in c["name"]),
            "cli_calls": len(cli),
            "cli_returned": cli_returned,
            "errored_retrieval": sum(
                1
                for c in calls
                if "codegraph_explore" in c["name"] and c["id"] in results and results[c["id"]][1]
            ),
            "tokens_processed": None,
        },
        "abandoned": abandoned,
        "abandon_file_access_after": after,
        "last_call_retrieval": ("codegraph_explore" in main[-1]["name"]) if main else None,
        "duplicate": dup,
        "cost": {
            "total_usd": total,
            "main_usd": main_usd,
            "subagents_usd": sub_usd,
            "tokens_main": sum(usage["main"]) if "main" in usage else (0 if usage else None),
            "tokens_subagents": sum(usage["subagents"]) if "subagents" in usage else (0 if usage else None),
            "input_tokens": inputs if usage or model_usage else None,
            "cache_read_tokens": cache if usage or model_usage else None,
            "cache_read_share": cache / inputs if inputs else None,
            "by_model": {
                m: {
                    "input_tokens": f.get("inputTokens"),
                    "output_tokens": f.get("outputTokens"),
                    "cache_read_tokens": f.get("cacheReadInputTokens"),
                    "cache_creation_tokens": f.get("cacheCreationInputTokens"),
                    "cost_usd": f.get("costUSD"),
                }
                for m, f in sorted(model_usage.items())
            }
            or None,
        },
    }


def spread(values: list[float]) -> dict[str, Any]:
    """median, p25 (linear interpolation between ranks), min, max, runs."""
    if not values:
        return {"runs": 0, "median": None, "p25": None, "min": None, "max": None}
    p25 = values[0] if len(values) == 1 else statistics.quantiles(values, n=4, method="inclusive")[0]
    return {
        "runs": len(values),
        "median": statistics.median(values),
        "p25": p25,
        "min": min(values),
        "max": max(values),
    }


def arm_rows(figures: list[dict[str, Any]]) -> dict[str, Any]:
    """The per-run rows of one arm from its runs' oracle figures."""
    rows = {}
    for name in ("duration_s", "tool_calls", "read", "search", "bash", "retrieval", "tokens_processed"):
        rows[name] = spread([f["run_figures"][name] for f in figures if f["run_figures"][name] is not None])
    rows["cost_usd"] = spread([f["cost"]["total_usd"] for f in figures if f["cost"]["total_usd"] is not None])
    return rows


# -- cache reads of the other agents' logs ------------------------------------------------------


def _cache(pairs: list[tuple[Any, Any]]) -> dict[str, Any]:
    """input tokens, cache reads and their share from (prompt tokens, of them cached) pairs:
    all null when none, or when a prompt's count comes without its cached part."""
    counted = [(p, c) for p, c in pairs if isinstance(p, int)]
    if not counted or any(not isinstance(c, int) for _, c in counted):
        return {"input_tokens": None, "cache_read_tokens": None, "cache_read_share": None}
    inputs, cached = sum(p for p, _ in counted), sum(c for _, c in counted)
    return {"input_tokens": inputs, "cache_read_tokens": cached,
            "cache_read_share": cached / inputs if inputs else None}  # fmt: skip


def codex_cache(path: Path) -> dict[str, Any]:
    """A Codex rollout's cache reads: its last ``token_count``'s running total (input tokens,
    of them ``cached_input_tokens``)."""
    last: tuple[Any, Any] | None = None
    for line in path.read_text(encoding="utf-8").splitlines():
        obj = json.loads(line)
        payload = obj.get("payload") if obj.get("type") == "event_msg" else None
        if isinstance(payload, dict) and payload.get("type") == "token_count":
            total = (payload.get("info") or {}).get("total_token_usage") or {}
            last = (total.get("input_tokens"), total.get("cached_input_tokens"))
    return _cache([last] if last else [])


def gemini_cache(path: Path) -> dict[str, Any]:
    """A Gemini CLI session's cache reads: each model message's ``tokens.input`` and, of them,
    ``tokens.cached``; the JSONL form's records of one message id counted once (the last)."""
    text = path.read_text(encoding="utf-8")
    if path.suffix == ".jsonl":
        latest: dict[str, dict[str, Any]] = {}
        for line in text.splitlines():
            rec = json.loads(line)
            if isinstance(rec.get("id"), str) and "type" in rec:
                latest[rec["id"]] = rec
        messages = list(latest.values())
    else:
        messages = json.loads(text)["messages"]
    pairs = [
        ((m.get("tokens") or {}).get("input"), (m.get("tokens") or {}).get("cached"))
        for m in messages
        if m.get("type") == "gemini" and "tokens" in m
    ]
    return _cache(pairs)
