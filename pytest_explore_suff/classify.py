"""The sufficiency classifier: what did the agent do right after each explore call?

Implements the sufficiency rules (``docs/sufficiency.md``, decisions in
``docs/rules.md``) over a `Collector`. Plain library
code: no pytest import, so it can be used and tested on its own.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Iterable, Iterator, Sequence
from dataclasses import dataclass, field
from functools import lru_cache
from typing import Any

from .buckets import zero_counts
from .events import DELEGATION_TOOLS, END_OF_RUN, READ_TOOLS, SEARCH_TOOLS, Action, Collector, ToolSpec
from .shell import Intent, bash_intent

#: Bookkeeping: ToolSearch, TodoWrite, and the task tools that replace TodoWrite in Claude
#: Code 2.1.16+ (a task list created, updated, listed, read), which say no more of a response.
TRANSPARENT_TOOLS = frozenset({"ToolSearch", "TodoWrite", "TaskCreate", "TaskUpdate", "TaskList", "TaskGet"})

# A path-shaped token: one or more `dir/` components, then a name with an
# extension. ASCII classes on purpose: the reference is JavaScript, whose \w is ASCII.
# As one regex, `(?:[\w@.+-]+/)+[\w@.+-]+\.[A-Za-z]\w*`, it backtracks
# quadratically on long runs of path characters; `path_tokens` finds exactly
# its matches in linear time.
PATH_TOKEN = re.compile(r"(?:[\w@.+-]+/)+[\w@.+-]+\.[A-Za-z]\w*", re.ASCII)
_PATH_RUN = re.compile(r"[\w@.+\-/]+", re.ASCII)
_NAME_EXT = re.compile(r"[\w@.+-]+\.[A-Za-z]\w*", re.ASCII)


def path_tokens(text: str) -> list[str]:
    """What ``PATH_TOKEN.findall(text)`` returns, without its quadratic worst case.

    A match lies inside a run of path characters that holds a ``/``; each such
    run's matches are `_run_tokens`'.
    """
    return [token for run in _runs(text, "/") for token in _run_tokens(run)]


def names_file(text: str, path: str) -> bool:
    """Whether a path-shaped token of ``text`` is the same file as ``path`` (normalized):
    ``any(same_file(path, norm_path(t)) for t in path_tokens(text))``, cheaply.

    Whichever of the two ends with the other, such a token ends with the path's last
    component, so only the runs of path characters that hold that component are
    tokenized; usually there is none, and the check is one search of the text.
    """
    name = path[path.rfind("/") + 1 :]
    if _PATH_RUN.fullmatch(name) is None:
        return False  # empty, or with a character no token holds
    return any(same_file(path, norm_path(t)) for run in _runs(text, name) for t in _run_tokens(run))


def _run_tokens(run: str) -> list[str]:
    """The matches of ``PATH_TOKEN`` in one whole run of path characters, in linear time.

    Split the run at ``/``: a match is whole components ``parts[i..b-1]``
    followed by the longest ``name.ext`` prefix of ``parts[b]``, with the
    largest such ``b`` (the regex's greedy repetition). If no ``b`` works for
    the first component of a chain of non-empty parts, none works for a later
    one, so the scan moves past the chain.
    """
    found: list[str] = []
    parts = run.split("/")
    n = len(parts)
    i = 0
    while i < n:
        if not parts[i]:
            i += 1
            continue
        k = i
        while k + 1 < n and parts[k + 1]:
            k += 1
        b, m = k, None
        while b > i and (m := _NAME_EXT.match(parts[b])) is None:
            b -= 1
        if m is None:
            i = k + 1
            continue
        end = m.end()
        found.append("/".join(parts[i:b]) + "/" + parts[b][:end])
        if end < len(parts[b]):  # the rest of the part starts the next search
            parts[b] = parts[b][end:]
            i = b
        else:
            i = b + 1
    return found


def _runs(text: str, needle: str) -> Iterator[str]:
    """The runs of path characters that hold ``needle`` (itself path characters), as
    ``_PATH_RUN.findall`` finds them, in order: found from each occurrence of the
    needle (a plain search that jumps), not by a regex pass over every character
    of a long response."""
    at = text.find(needle)
    if at == -1:
        return
    back = text[::-1]
    while at != -1:
        start, end = path_run(text, back, at)
        yield text[start:end]
        at = text.find(needle, end)


def path_run(text: str, back: str, at: int) -> tuple[int, int]:
    """(start, end) of the run of path characters that holds ``text[at]`` (one of them);
    ``back`` is ``text[::-1]``: the start of a run is the end of a run read backwards."""
    r = len(text) - 1 - at  # ``text[at]``, in ``back``
    return at + 1 - (_run_end(back, r) - r), _run_end(text, at)


_RUN_TAIL = re.compile(r"[\w@.+\-/]*", re.ASCII)


def _run_end(text: str, at: int) -> int:
    """Where the run of path characters from ``at`` ends."""
    m = _RUN_TAIL.match(text, at)
    return m.end() if m is not None else at


PERSISTED = "<persisted-output>"
_PERSISTED_AT_START = re.compile(r"\s*" + re.escape(PERSISTED))
# The saved path runs to the end of its line: a profile folder can hold a space
# (``C:\Users\John Smith\.claude\...``).
SAVED_TO = re.compile(r"Full output saved to:[ \t]*([^\r\n]*[^\s])")


@dataclass(slots=True)
class Call:
    """The verdict on one answered explore call."""

    id: str
    thread: str
    query: str
    files: int
    bucket: str
    next: str
    named: bool = False
    truncated: bool = False


@dataclass(slots=True)
class Verdict:
    """Everything the metric says about one transcript (slots: one is made per transcript,
    with an instance dict it took 60% longer to make)."""

    answered: int = 0
    counts: dict[str, int] = field(default_factory=zero_counts)
    errored: int = 0
    concurrent: int = 0
    calls: list[Call] = field(default_factory=list)
    raced: bool = False
    contaminated: bool = False
    #: with a question (`judge`'s ``question``): the answer units' entries, as a record's ``truth``
    truth: list[dict[str, Any]] | None = None

    def to_dict(self) -> dict[str, Any]:
        # By hand: dataclasses.asdict deep-copies, and this runs once per transcript.
        return {
            "answered": self.answered,
            "counts": dict(self.counts),
            "errored": self.errored,
            "concurrent": self.concurrent,
            "calls": [
                {
                    "id": c.id,
                    "thread": c.thread,
                    "query": c.query,
                    "files": c.files,
                    "bucket": c.bucket,
                    "next": c.next,
                    "named": c.named,
                    "truncated": c.truncated,
                }
                for c in self.calls
            ],
            "flags": {"raced": self.raced, "contaminated": self.contaminated},
        }


def norm_path(path: str) -> str:
    path = path.replace("\\", "/")
    return path[2:] if path.startswith("./") else path


def same_file(a: str, b: str) -> bool:
    """Same file when equal, or when one ends with ``/`` + the other (normalized)."""
    if not a or not b:
        return False
    return a == b or a.endswith("/" + b) or b.endswith("/" + a)


def any_same(path: str, paths: Iterable[str]) -> bool:
    return any(same_file(path, p) for p in paths)


def basename(path: str) -> str:
    """The last non-empty component (``lib`` for ``lib/``); the path itself when it has none."""
    return norm_path(path).rstrip("/").rsplit("/", 1)[-1] or path


def short_name(tool: str) -> str:
    """``mcp__<server>__<tool>`` -> ``<tool>``; other names unchanged."""
    if tool.startswith("mcp__"):
        cut = tool.find("__", 6)  # a server name has at least one character
        if cut != -1:
            return tool[cut + 2 :]
    return tool


@lru_cache(maxsize=4096)
def _intent(command: str) -> Intent:
    return bash_intent(command)


#: A returned-file marker in a response: (start of its line, end of the match, the path).
Mark = tuple[int, int, str]


@lru_cache(maxsize=16)
def marks_finder(pattern: str) -> Callable[[str], list[Mark]]:
    """The returned-file markers of a text, for the marker regex ``pattern``: what
    ``re.finditer(pattern, text, re.MULTILINE)`` finds, with each one's line start.

    The default marker (a line that starts with ``**`path`**``) is found by a plain
    search for a newline and ``**` `` that jumps through the text; other patterns by their regex.
    """
    if pattern == ToolSpec.marker:
        return _default_marks
    regex = re.compile(pattern, re.MULTILINE)

    def marks(text: str) -> list[Mark]:
        return [(text.rfind("\n", 0, m.start()) + 1, m.end(), m.group(1)) for m in regex.finditer(text)]

    return marks


def _marker(pattern: str) -> Callable[[str], list[str]]:
    """What ``re.findall(pattern, text, re.MULTILINE)`` returns, as a function of the text."""
    find = marks_finder(pattern)
    return lambda text: [m[2] for m in find(text)]


def _line_marker(text: str, start: int) -> int:
    """Where the next line that starts with ``**` `` at or after ``start`` does (-1: none)."""
    at = text.find("\n**`", max(start - 1, 0))
    return at + 1 if at != -1 else -1


def _default_marks(text: str) -> list[Mark]:
    r"""``re.finditer(r"^\*\*`([^`]+)`\*\*", text, re.M)`` without a regex pass: a match
    starts at a line start with ``**` ``, its path runs to the next backtick (``[^`]``
    cannot pass one, so that is the only way it can match), which ``**`` must follow."""
    found: list[Mark] = []
    at = 0 if text.startswith("**`") else _line_marker(text, 0)
    while at != -1:
        close = text.find("`", at + 3)
        if close > at + 3 and text.startswith("**", close + 1):
            found.append((at, close + 3, text[at + 3 : close]))
            at = _line_marker(text, close + 3)  # the search resumes after the match
        else:
            at = _line_marker(text, at + 1)
    return found


@dataclass(slots=True)
class _Response:
    text: str
    returned: tuple[str, ...]
    earlier: tuple[str, ...]
    saved_to: str | None  # D4: where a persisted-output stub says the rest is

    def mentions(self, path: str) -> bool:
        """A path-shaped token anywhere in the response is the file ``path``; only a
        read of an unreturned file asks, once per response."""
        return names_file(self.text, path)


def is_file_access(action: Action) -> bool:
    """A read or a search as the rules classify them: Read, NotebookRead, Grep, Glob, or a
    Bash command with a read or search intent."""
    name = action.name
    if name in READ_TOOLS or name in SEARCH_TOOLS:
        return True
    return name == "Bash" and _intent(action.arg).kind is not None


def _read_path(action: Action) -> str | None:
    """The path an action reads, for Read/NotebookRead and Bash reads."""
    if action.name in READ_TOOLS:
        return action.arg
    if action.name == "Bash":
        intent = _intent(action.arg)
        if intent.kind == "read":
            return intent.path or ""
    return None


def _skipped(action: Action, response: _Response) -> bool:
    """Bookkeeping, and (D4) reading the rest of our own persisted response."""
    if action.name in TRANSPARENT_TOOLS:
        return True
    if response.saved_to is not None:
        path = _read_path(action)
        if path is not None and same_file(norm_path(path), response.saved_to):
            return True
    return False


def _reaction(action: Action, response: _Response, spec: ToolSpec) -> tuple[str, str, bool]:
    """(bucket, next label, named) for one non-transparent, non-delegation action."""
    name = action.name
    if spec.family in name:
        return "explore_again", short_name(name), False
    path = _read_path(action)
    if path is not None:
        prefix = "Bash " if name == "Bash" else ""
        p = norm_path(path)
        label = f"{prefix}Read {basename(path)}"
        if any_same(p, response.returned):
            return "read_returned", label, False
        if any_same(p, response.earlier):
            return "read_returned", f"{label} (returned by an earlier explore)", False
        if response.mentions(p):
            return "read_missed", f"{label} (named, not returned)", True
        return "read_missed", label, False
    if name in SEARCH_TOOLS:
        return "search", name, False
    if name == "Bash" and _intent(action.arg).kind == "search":
        return "search", "Bash search", False
    return "sufficient", name, False


def _is_delegation(action: Action, collector: Collector) -> bool:
    """Task/Agent, or a call a reader marked as a delegation (Codex ``spawn_agent``,
    ``send_input``; Gemini's subagent tools)."""
    return action.name in DELEGATION_TOOLS or action.id in collector.delegations


def _through_delegation(
    delegation: Action, collector: Collector, response: _Response, spec: ToolSpec
) -> tuple[str, str, bool]:
    """A delegation is judged by the subagent's first substantive action.

    The subagent's thread is keyed by the delegating call's id; a reader can
    name another thread and a place in it (Codex ``send_input``: the child's
    actions after that input).
    """
    thread, start = collector.delegations.get(delegation.id, (delegation.id, 0))
    actions = collector.threads.get(thread, ())
    for action in actions[start:]:
        if _is_delegation(action, collector) or _skipped(action, response):
            continue
        bucket, label, named = _reaction(action, response, spec)
        return bucket, f"{delegation.name} → {label}", named
    return "sufficient", delegation.name, False


def _judge(
    actions: Sequence[Action], i: int, collector: Collector, response: _Response, spec: ToolSpec
) -> tuple[str, str, bool, list[str]]:
    """(bucket, next, named, ids of concurrent file accesses) for the explore at ``actions[i]``."""
    explore = actions[i]
    concurrent: list[str] = []
    for action in actions[i + 1 :]:
        if action.name == END_OF_RUN:
            break  # the next run in the same file is another session: this one ended here
        if action.message == explore.message:
            # Issued before the response existed: not a reaction.
            if is_file_access(action):
                concurrent.append(action.id)
            continue
        if _skipped(action, response):
            continue
        if _is_delegation(action, collector):
            return (*_through_delegation(action, collector, response, spec), concurrent)
        return (*_reaction(action, response, spec), concurrent)
    return "sufficient", "(final answer)", False, concurrent


def classify(collector: Collector) -> Verdict:
    """Judge every explore call of one transcript."""
    spec = collector.spec
    marks = marks_finder(spec.marker)
    verdict = Verdict(raced=collector.raced, contaminated=collector.contaminated)
    # Main first, then subagent threads in order of first appearance.
    threads: Iterable[tuple[str, list[Action]]] = collector.threads.items()
    if len(collector.threads) > 1:  # most transcripts have the main thread only
        threads = sorted(threads, key=lambda item: item[0] != "main")
    # A same-message file access is concurrent once, however many explore calls share its message.
    concurrent: set[str] = set()
    for thread, actions in threads:
        earlier: list[str] = []
        for i, action in enumerate(actions):
            if spec.explore not in action.name:
                if action.name == END_OF_RUN:
                    earlier = []  # the next run in the file is another session: it saw none of them
                continue
            result = collector.results.get(action.id)
            copied = action.id in collector.copied
            if result is None or result.is_error:
                if not copied:
                    verdict.errored += 1
                continue
            text = result.text
            # Distinct paths: a file shipped in two sections is one returned file.
            found = marks(text)
            returned = tuple(dict.fromkeys(norm_path(m[2]) for m in found))
            if copied:
                # Judged in the session that made it (a resumed or forked session's copy);
                # here the agent has seen its response all the same.
                earlier.extend(returned)
                continue
            collector.marks[action.id] = found  # the allocation metric reads the same sections
            truncated = _PERSISTED_AT_START.match(text) is not None
            saved = SAVED_TO.search(text) if truncated else None
            response = _Response(text, returned, tuple(earlier), norm_path(saved.group(1)) if saved else None)
            bucket, label, named, accesses = _judge(actions, i, collector, response, spec)
            concurrent.update(accesses)
            verdict.counts[bucket] += 1
            verdict.calls.append(
                Call(action.id, thread, action.arg, len(returned), bucket, label, named, truncated)
            )  # fmt: skip
            earlier.extend(returned)
    verdict.answered = len(verdict.calls)
    verdict.concurrent = len(concurrent)
    return verdict
