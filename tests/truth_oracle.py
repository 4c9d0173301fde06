"""An independent reading of docs/ground-truth.md, for the tests: the per-unit and per-call
figures of stream-json transcripts, computed straight from their lines.

Written from the spec alone, not from the package: it reads the raw events itself,
matches globs component by component (no regex translation), finds symbols by
scanning, and never imports pytest_explore_suff. The tests compare the plugin's
records with what this computes.
"""

from __future__ import annotations

import json
import re
import tomllib
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

EXPLORE = "codegraph_explore"
WORD = set("ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789_")
MARKER = re.compile(r"^\*\*`([^`]+)`\*\*")


# -- globs: component by component ----------------------------------------------------------


def _component(pattern: str, name: str) -> bool:
    """``*`` any run, ``?`` one character, within one path component."""
    if not pattern:
        return not name
    head = pattern[0]
    if head == "*":
        return any(_component(pattern[1:], name[i:]) for i in range(len(name) + 1))
    if not name:
        return False
    if head == "?" or head == name[0]:
        return _component(pattern[1:], name[1:])
    return False


def _parts(pattern: list[str], parts: list[str]) -> bool:
    if not pattern:
        return not parts
    if pattern[0] == "**":
        return any(_parts(pattern[1:], parts[i:]) for i in range(len(parts) + 1))
    return bool(parts) and _component(pattern[0], parts[0]) and _parts(pattern[1:], parts[1:])


def glob_matches(pattern: str, path: str) -> bool:
    """The pattern matches the path or one of its ``/``-separated suffixes."""
    pattern = pattern.replace("\\", "/")
    path = path.replace("\\", "/")
    if pattern.startswith("./"):
        pattern = pattern[2:]
    if path.startswith("./"):
        path = path[2:]
    pat = pattern.split("/")
    parts = path.split("/")
    if pattern.startswith("/"):
        return _parts(pat, parts)
    return any(_parts(pat, parts[i:]) for i in range(len(parts)))


# -- text ----------------------------------------------------------------------------------------


def symbol_found(symbol: str, text: str) -> bool:
    start = text.find(symbol)
    while start != -1:
        before = text[start - 1] if start > 0 else ""
        end = start + len(symbol)
        after = text[end] if end < len(text) else ""
        if before not in WORD and after not in WORD:
            return True
        start = text.find(symbol, start + 1)
    return False


def sections(text: str) -> list[tuple[str, int]]:
    """(path, characters) of each returned-file section of a response."""
    starts: list[tuple[int, str]] = []
    pos = 0
    for line in text.split("\n"):
        m = MARKER.match(line)
        if m:
            starts.append((pos, m.group(1)))
        pos += len(line) + 1
    out = []
    for i, (at, path) in enumerate(starts):
        if i + 1 < len(starts):
            end = starts[i + 1][0]
        else:
            quote = text.find("\n> ", at)
            end = len(text) if quote == -1 else quote
        out.append((path, end - at))
    return out


# -- a transcript's events ------------------------------------------------------------------------


@dataclass
class Call:
    id: str
    turn: int
    response: str | None = None
    error: bool = False


@dataclass
class Transcript:
    prompt: str | None = None
    calls: list[Call] = field(default_factory=list)
    results: dict[int, list[str]] = field(default_factory=dict)  # turn -> result strings
    last_text: dict[int, str] = field(default_factory=dict)  # turn -> last main-thread text
    turns: list[int] = field(default_factory=list)

    def answer(self, turn: int | None) -> str | None:
        turns = self.turns if turn is None else [turn]
        results = [r for t in turns for r in self.results.get(t, [])]
        if results:
            return "\n\n".join(results)
        texts = [self.last_text[t] for t in turns if t in self.last_text]
        return texts[-1] if texts else None


def read(files: list[Path]) -> Transcript:
    t = Transcript()
    by_id: dict[str, Call] = {}
    for path in files:
        m = re.search(r"\.t(\d+)\.jsonl$", path.name)
        turn = int(m.group(1)) if m else 1
        t.turns.append(turn)
        for line in path.read_text(encoding="utf-8").splitlines():
            e = json.loads(line)
            main = not e.get("parent_tool_use_id")
            msg = e.get("message") or {}
            content = msg.get("content")
            if e["type"] == "result" and isinstance(e.get("result"), str):
                t.results.setdefault(turn, []).append(e["result"])
            elif e["type"] == "user" and main and t.prompt is None and isinstance(content, str):
                t.prompt = content
            elif e["type"] == "assistant" and isinstance(content, list):
                for b in content:
                    if b.get("type") == "tool_use" and EXPLORE in b["name"] and b["id"] not in by_id:
                        by_id[b["id"]] = Call(b["id"], turn)
                        t.calls.append(by_id[b["id"]])
                    elif b.get("type") == "text" and main and b["text"].strip():
                        t.last_text[turn] = b["text"]
            elif e["type"] == "user" and isinstance(content, list):
                for b in content:
                    if b.get("type") == "tool_result" and b["tool_use_id"] in by_id:
                        c = by_id[b["tool_use_id"]]
                        c.response, c.error = b["content"], bool(b.get("is_error"))
    return t


# -- the figures ---------------------------------------------------------------------------------


def load_questions(path: Path) -> list[dict[str, Any]]:
    doc = tomllib.loads(path.read_text(encoding="utf-8"))
    default = doc.get("defaults", {}).get("min_symbols", 1.0)
    return [{"min_symbols": default, **q} for q in doc["question"]]


def covers(q: dict[str, Any], group: str, t: Transcript) -> bool:
    if "group" in q and q["group"] != group:
        return False
    if "prompt" in q and (t.prompt is None or re.search(q["prompt"], t.prompt) is None):
        return False
    return "turn" not in q or q["turn"] in t.turns


def verdict(q: dict[str, Any], answer: str | None) -> tuple[str, float | None]:
    symbols, must, must_not = q.get("symbols", []), q.get("must", []), q.get("must_not", [])
    text = answer or ""
    found = [s for s in symbols if text and symbol_found(s, text)]
    hit = len(found) / len(symbols) if symbols else None
    if not symbols and not must and not must_not:
        return "unjudged", hit
    if not text.strip():
        return "fail", hit
    if any(re.search(p, text, re.ASCII) for p in must_not):
        return "fail", hit
    musts = [re.search(p, text, re.ASCII) is not None for p in must]
    if (symbols or must) and not found and not any(musts):
        return "fail", hit
    if all(musts) and (hit is None or hit >= q["min_symbols"]):
        return "pass", hit
    return "partial", hit


def figures(questions: list[dict[str, Any]], group: str, files: list[Path]) -> dict[str, Any]:
    """{"units": [...], "calls": {id: (gold_share, incidental_share, gold chars, chars)}} of
    one transcript, as the spec defines them (calls: those of covered units only)."""
    t = read(files)
    units = []
    calls: dict[str, tuple[float | None, float | None, int, int]] = {}
    for q in questions:
        if not covers(q, group, t):
            continue
        turn = q.get("turn")
        judged = [
            c for c in t.calls if c.response is not None and not c.error and (turn is None or c.turn == turn)
        ]
        answer = t.answer(turn)
        v, hit = verdict(q, answer)
        gold = q["answer"]
        recall = first = None
        if judged and gold:
            returned = [p for c in judged for p, _ in sections(c.response or "")]
            recall = sum(1 for g in gold if any(glob_matches(g, p) for p in returned)) / len(gold)
            first = any(glob_matches(g, p) for g in gold for p, _ in sections(judged[0].response or ""))
        for c in judged:
            secs = sections(c.response or "")
            total = sum(n for _, n in secs)
            g = sum(n for p, n in secs if any(glob_matches(x, p) for x in gold))
            i = sum(n for p, n in secs if any(glob_matches(x, p) for x in q.get("incidental", [])))
            if not secs:
                calls[c.id] = (None, None, 0, 0)
            else:
                calls[c.id] = (g / total if total else 0.0, i / total if total else 0.0, g, total)
        units.append({
            "question": q["id"], "turn": turn, "verdict": v, "symbols_hit": hit, "gold_recall": recall,
            "gold_first": first, "calls": [c.id for c in judged],
        })  # fmt: skip
    return {"units": units, "calls": calls}


# -- the run's first prompt, per agent ----------------------------------------------------------------
# Written from the formats page and docs/rules.md ("prompt"), reading each agent's raw files: the
# main thread's first user message with words the user wrote, the CLI's own blocks left out.

CLI_PREAMBLES = (
    "# AGENTS.md instructions for ",
    "This is the Gemini CLI. We are setting up the context",
    "This is the Qwen Code. We are setting up the context",
    "[Request interrupted by user",
)


def cli_wrote(text: str) -> bool:
    """Text the agent's CLI wrote as a user message: tagged blocks only, or a known preamble."""
    t = text.strip()
    return (t.startswith("<") and t.endswith(">")) or any(t.startswith(p) for p in CLI_PREAMBLES)


def _words(texts: list[Any]) -> str | None:
    kept = [t for t in texts if isinstance(t, str) and t.strip() and not cli_wrote(t)]
    return "\n".join(kept) if kept else None


def _lines(path: str) -> list[dict[str, Any]]:
    out = []
    for line in Path(path).read_text(encoding="utf-8").splitlines():
        if line.strip():
            value = json.loads(line)
            if isinstance(value, dict):
                out.append(value)
    return out


def _main_files(files: list[str]) -> list[str]:
    """The first file and its later turns (``<base>.t<N>.jsonl``): the main thread's."""
    base = re.sub(r"(\.t\d+)?\.jsonl$", "", files[0])
    return [f for f in files if f == files[0] or re.fullmatch(re.escape(base) + r"\.t\d+\.jsonl", f)]


def _claude(files: list[str]) -> str | None:
    for path in _main_files(files):
        for e in _lines(path):
            if e.get("type") != "user" or e.get("parent_tool_use_id") or e.get("isSidechain"):
                continue
            if e.get("isMeta") or e.get("isCompactSummary"):
                continue
            content = e["message"]["content"]
            if isinstance(content, list):
                if any(b.get("type") == "tool_result" for b in content):
                    continue
                content = [b.get("text") for b in content if b.get("type") == "text"]
            found = _words(content if isinstance(content, list) else [content])
            if found:
                return found
    return None


def _codex(files: list[str]) -> str | None:
    for path in _main_files(files):
        for e in _lines(path):
            payload = e.get("payload") if "payload" in e else e
            if not isinstance(payload, dict):
                continue
            if e.get("type") == "event_msg" and payload.get("type") == "user_message":
                found = _words([payload.get("message")])
            elif payload.get("type") == "message" and payload.get("role") == "user":
                found = _words([b.get("text") for b in payload.get("content", [])])
            else:
                continue
            if found:
                return found
    return None


def _gemini(files: list[str]) -> str | None:
    for path in _main_files(files) if files[0].endswith(".jsonl") else files[:1]:
        if path.endswith(".jsonl"):
            messages = [e for e in _lines(path) if e.get("type") == "user" and "content" in e]
            texts = [[p.get("text") for p in m["content"]] for m in messages]
        else:
            doc = json.loads(Path(path).read_text(encoding="utf-8"))
            if isinstance(doc, list):  # a checkpoint: {role, parts}
                texts = [[p.get("text") for p in c["parts"]] for c in doc if c["role"] == "user"]
            else:
                users = [m for m in doc["messages"] if m["type"] == "user"]
                texts = [[p.get("text") for p in m["content"]] for m in users]
        for t in texts:
            if found := _words(t):
                return found
    return None


def _qwen(files: list[str]) -> str | None:
    for path in _main_files(files):
        for e in _lines(path):
            if e.get("type") == "user" and (found := _words([p.get("text") for p in e["message"]["parts"]])):
                return found
    return None


def _copilot(files: list[str]) -> str | None:
    if files[0].endswith(".json"):
        doc = json.loads(Path(files[0]).read_text(encoding="utf-8"))
        users = [m["content"] for m in doc["chatMessages"] if m["role"] == "user"]
        return next((f for content in users if (f := _words([content]))), None)
    for path in _main_files(files):
        for e in _lines(path):
            data = e.get("data") or {}
            main = e.get("type") == "user.message" and not data.get("parentToolCallId")
            if main and (found := _words([data.get("content")])):
                return found
    return None


def _amp(files: list[str]) -> str | None:
    doc = json.loads(Path(files[0]).read_text(encoding="utf-8"))
    for m in doc["messages"]:
        blocks = m["content"]
        prompt = m["role"] == "user" and not any(b.get("type") == "tool_result" for b in blocks)
        if prompt and (found := _words([b.get("text") for b in blocks if b.get("type") == "text"])):
            return found
    return None


def _cline(files: list[str]) -> str | None:
    by_name = {Path(f).name: f for f in files}
    if "ui_messages.json" in by_name:
        ui = json.loads(Path(by_name["ui_messages.json"]).read_text(encoding="utf-8"))
        task = next((m["text"] for m in ui if m.get("say") == "task"), None)
        if task is not None:
            return _words([task])
    api = json.loads(Path(by_name["api_conversation_history.json"]).read_text(encoding="utf-8"))
    for m in api:
        blocks = m["content"] if isinstance(m["content"], list) else [{"type": "text", "text": m["content"]}]
        if m["role"] != "user" or any(b.get("type") == "tool_result" for b in blocks):
            continue
        texts = []
        for b in blocks:
            if b.get("type") == "text":
                inner = re.fullmatch(r"\s*<(task|user_message)>\n?(.*?)\n?</\1>\s*", b["text"], re.S)
                texts.append(inner.group(2) if inner else b["text"])
        if found := _words(texts):
            return found
    return None


def _continue(files: list[str]) -> str | None:
    doc = json.loads(Path(files[0]).read_text(encoding="utf-8"))
    for item in doc["history"]:
        m = item["message"]
        if m["role"] == "user":
            c = m["content"]
            texts = [c] if isinstance(c, str) else [b.get("text") for b in c if b.get("type") == "text"]
            if found := _words(["".join(t for t in texts if isinstance(t, str))]):
                return found
    return None


def _openhands(files: list[str]) -> str | None:
    sdk = any(Path(f).name == "base_state.json" for f in files)
    pattern = r"event-(\d+)-.*\.json" if sdk else r"(\d+)\.json"
    numbered = sorted((int(m.group(1)), f) for f in files if (m := re.fullmatch(pattern, Path(f).name)))
    for _, path in numbered:
        e = json.loads(Path(path).read_text(encoding="utf-8"))
        if sdk and e.get("kind") == "MessageEvent" and e.get("source") == "user":
            found = _words([b.get("text") for b in e["llm_message"]["content"]])
        elif not sdk and e.get("source") == "user" and e.get("action") == "message":
            found = _words([e["args"].get("content")])
        else:
            continue
        if found:
            return found
    return None


def _database(path: str, query: str, session: str) -> list[tuple[Any, ...]]:
    import sqlite3

    conn = sqlite3.connect(f"file:{path}?mode=ro", uri=True)
    try:
        return conn.execute(query, (session,)).fetchall()
    finally:
        conn.close()


def _opencode(files: list[str], session: str) -> str | None:
    rows = _database(files[0], "SELECT m.data, p.data FROM message m JOIN part p ON p.message_id = m.id "
                     "WHERE m.session_id = ? ORDER BY m.time_created, m.id, p.id", session)  # fmt: skip
    messages: dict[str, list[dict[str, Any]]] = {}
    for info, part in rows:
        if json.loads(info)["role"] == "user":
            messages.setdefault(info, []).append(json.loads(part))
    for parts in messages.values():
        own = [p for p in parts if p.get("type") == "text" and not (p.get("synthetic") or p.get("ignored"))]
        texts = [p["text"] for p in own]
        if found := _words(texts):
            return found
    return None


def _crush(files: list[str], session: str) -> str | None:
    query = "SELECT role, parts FROM messages WHERE session_id = ? ORDER BY created_at"
    for role, parts in _database(files[0], query, session):
        texts = [p["data"].get("text") for p in json.loads(parts) if p["type"] == "text"]
        if role == "user" and (found := _words(texts)):
            return found
    return None


def first_prompt(agent: str, files: list[str], session: str | None = None) -> str | None:
    """The run's first prompt, read from the raw files of ``agent``'s transcript (``session``:
    the session of a database)."""
    if agent in ("opencode", "crush"):
        assert session is not None
        return (_opencode if agent == "opencode" else _crush)(files, session)
    readers = {"claude": _claude, "codex": _codex, "gemini": _gemini, "qwen": _qwen, "copilot": _copilot,
               "amp": _amp, "cline": _cline, "continue": _continue, "openhands": _openhands}  # fmt: skip
    return readers[agent](files)
