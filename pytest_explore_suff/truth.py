"""Ground truth: were the answers right, and did the tool return the files that answer them.

A truth file (TOML, ``docs/ground-truth.md``) lists questions: the transcripts each
covers (a campaign group, a regex on the first prompt, a turn), its gold files
(``answer`` globs), files that cannot answer it (``incidental``), the symbols a
correct answer names and regexes it must (not) match. `load` reads and validates
it once (the file is data: parsed with `tomllib`, never executed); `units` finds
what a transcript's questions cover, and `evaluate` gives each covered answer
unit its figures and verdict. Plain library code: no pytest import.
"""

from __future__ import annotations

import os
import re
import tomllib
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

import xxhash

from .allocation import Section, citations, extension
from .classify import norm_path, same_file
from .sources import TRUTH_NAME, TURN, logical_name

#: The truth file's versions this plugin reads.
VERSIONS = (1,)
#: The file used, without ``--explore-suff-truth``, when a campaign's root (or an archive's
#: top level) holds it.
DEFAULT_NAME = TRUTH_NAME
#: The verdicts a unit can have; a judge gives one of the first three.
VERDICTS = ("pass", "partial", "fail", "unjudged")
JUDGED = ("pass", "partial", "fail")

_TOP_KEYS = frozenset({"version", "defaults", "question"})
_DEFAULT_KEYS = frozenset({"min_symbols"})
_QUESTION_KEYS = frozenset(
    {"id", "group", "prompt", "turn", "answer", "incidental", "symbols", "must", "must_not", "min_symbols"}
)
#: An ASCII word character, the symbols' boundary (metrics.md: the patterns are ASCII).
_WORD = "A-Za-z0-9_"


class TruthError(ValueError):
    """A truth file that cannot be used: the message is one line naming the file and the key."""


@dataclass(frozen=True)
class Globs:
    """File patterns (``*`` and ``?`` within a path component, ``**`` across them), each
    matching a path when it matches the path or any of its ``/``-separated suffixes."""

    patterns: tuple[str, ...] = ()
    compiled: tuple[re.Pattern[str], ...] = ()
    #: what each path seen matched: a campaign's responses return the same files again and
    #: again, and each is asked of by the gold share, recall, first and incidental share
    _seen: dict[str, tuple[int, ...]] = field(default_factory=dict, compare=False, repr=False)

    def __bool__(self) -> bool:
        return bool(self.patterns)

    def matching(self, path: str) -> tuple[int, ...]:
        """The indices of the patterns ``path`` matches (``\\`` read as ``/``)."""
        got = self._seen.get(path)
        if got is None:
            p = norm_path(path)
            got = tuple(i for i, rx in enumerate(self.compiled) if rx.fullmatch(p))
            if len(self._seen) >= _SEEN_MAX:  # a bound on memory, whatever the campaign holds
                self._seen.clear()
            self._seen[path] = got
        return got

    def any(self, path: str) -> bool:
        return bool(self.matching(path))


_SEEN_MAX = 1 << 16


def glob_regex(pattern: str) -> str:
    """The regex (for ``fullmatch``) of a path ``pattern`` or any of its ``/``-suffixes.

    ``**`` must be a whole path component: ``**/`` is any number of folders (none
    included), a final ``/**`` anything below. Raises ValueError for a pattern that
    is no glob (empty, ``***``, ``**`` inside a name, an empty component).
    """
    p = pattern.replace("\\", "/")
    p = p.removeprefix("./")
    if not p.strip():
        raise ValueError("an empty pattern")
    if p.endswith("/"):
        raise ValueError(f"{pattern!r} ends with '/' (a pattern names files)")
    parts = p.split("/")
    if "" in parts[1:]:
        raise ValueError(f"{pattern!r} has an empty path component ('//')")
    out: list[str] = []
    for i, part in enumerate(parts):
        last = i == len(parts) - 1
        if part == "**":
            out.append(".*" if last else "(?:.*/)?")
            continue
        if "**" in part:
            raise ValueError(f"{pattern!r}: '**' must be a whole path component (as in 'a/**/b.js')")
        rx = "".join("[^/]*" if ch == "*" else "[^/]" if ch == "?" else re.escape(ch) for ch in part)
        out.append(rx if last else rx + "/")
    # An absolute pattern matches whole paths only; a relative one, the path or any suffix.
    body = "".join(out)
    return body if p.startswith("/") else "(?:.*/)?" + body


@dataclass(frozen=True)
class Question:
    """One question of a truth file, validated."""

    id: str
    answer: Globs
    group: str | None = None
    prompt: re.Pattern[str] | None = None
    turn: int | None = None
    incidental: Globs = field(default_factory=Globs)
    symbols: tuple[str, ...] = ()
    symbol_res: tuple[re.Pattern[str], ...] = ()
    must: tuple[re.Pattern[str], ...] = ()
    must_not: tuple[re.Pattern[str], ...] = ()
    min_symbols: float = 1.0
    #: the question's table as the file gives it (what a judge is handed)
    table: Mapping[str, Any] = field(default_factory=dict)

    @property
    def judged(self) -> bool:
        """Whether the rules can give a verdict (else it is ``unjudged``: gold figures only)."""
        return bool(self.symbols or self.must or self.must_not)

    def covers(self, group: str, prompt: str | None) -> bool:
        """Whether it covers a transcript of ``group`` whose first user prompt is ``prompt``."""
        if self.group is not None and self.group != group:
            return False
        return self.prompt is None or (prompt is not None and self.prompt.search(prompt) is not None)


@dataclass(frozen=True)
class Truth:
    """A validated truth file."""

    path: str
    digest: str
    questions: tuple[Question, ...]
    min_symbols: float = 1.0

    def to_dict(self) -> dict[str, Any]:
        """What the report says of it."""
        return {"path": self.path, "digest": self.digest, "algorithm": DIGEST,
                "questions": len(self.questions)}  # fmt: skip


#: How a truth file's bytes are digested (the report names the file and its digest).
DIGEST = "xxh3-128"


def digest_of(data: bytes) -> str:
    """The digest of a truth file's bytes, as the report gives it (`Truth.digest`)."""
    return xxhash.xxh3_128(data).hexdigest()


def load(path: str, shown: str | None = None, data: bytes | None = None) -> Truth:
    """Read and validate the truth file at ``path`` (``data``: its bytes, read already).
    ``shown``: how errors name it. Raises `TruthError` with one line."""
    name = shown or path
    if data is None:
        try:
            with open(path, "rb") as fh:
                data = fh.read()
        except OSError as exc:
            raise TruthError(f"{name}: cannot read it: {exc.strerror or exc}") from None
    try:
        text = data.decode("utf-8")
    except UnicodeDecodeError as exc:
        raise TruthError(f"{name}: not TOML: not UTF-8 text (byte {exc.start})") from None
    try:
        doc = tomllib.loads(text)
    except tomllib.TOMLDecodeError as exc:
        raise TruthError(f"{name}: not TOML: {_one_line(str(exc))}") from None
    return parse(doc, name, digest_of(data))


def _one_line(text: str) -> str:
    return " ".join(text.split())


def parse(doc: Mapping[str, Any], name: str, digest: str = "") -> Truth:
    """A truth file's decoded table, validated (``name`` names it in errors)."""

    def fail(where: str, what: str) -> TruthError:
        return TruthError(f"{name}: {where}: {what}")

    unknown = sorted(set(doc) - _TOP_KEYS)
    if unknown:
        raise fail(f"key {unknown[0]!r}", f"unknown key (expected {', '.join(sorted(_TOP_KEYS))})")
    if "version" not in doc:
        raise fail("key 'version'", f"missing (this plugin reads version {VERSIONS[-1]})")
    version = doc["version"]
    if type(version) is not int or version not in VERSIONS:
        raise fail(
            "key 'version'",
            f"unknown version {version!r} (this plugin reads {', '.join(map(str, VERSIONS))})",
        )
    defaults = doc.get("defaults", {})
    if not isinstance(defaults, dict):
        raise fail("key 'defaults'", "must be a table ([defaults])")
    bad = sorted(set(defaults) - _DEFAULT_KEYS)
    if bad:
        raise fail(f"key 'defaults.{bad[0]}'", "unknown key (expected min_symbols)")
    default_min = _min_symbols(
        defaults.get("min_symbols", 1.0), lambda what: fail("key 'defaults.min_symbols'", what)
    )
    tables = doc.get("question", [])
    if not isinstance(tables, list) or not all(isinstance(t, dict) for t in tables):
        raise fail("key 'question'", "must be an array of tables ([[question]])")
    questions: list[Question] = []
    seen: dict[str, int] = {}
    for number, table in enumerate(tables, 1):
        qid = table.get("id")
        label = f"question {qid!r}" if isinstance(qid, str) and qid else f"question #{number}"
        questions.append(_question(table, number, default_min, lambda key, what, label=label: fail(
            f"{label}, key {key!r}" if key else label, what)))  # fmt: skip
        q = questions[-1]
        if q.id in seen:
            raise fail(f"question {q.id!r}", f"duplicate id (questions #{seen[q.id]} and #{number})")
        seen[q.id] = number
    return Truth(name, digest, tuple(questions), default_min)


def _min_symbols(value: Any, fail: Any) -> float:
    if isinstance(value, bool) or not isinstance(value, int | float):
        raise fail(f"must be a number in (0, 1], not {value!r}")
    if not 0 < value <= 1:
        raise fail(f"must be in (0, 1] (a share of the symbols), not {value!r}")
    return float(value)


def _strings(table: Mapping[str, Any], key: str, fail: Any) -> tuple[str, ...]:
    value = table.get(key, [])
    if isinstance(value, str):
        value = [value]
    if not isinstance(value, list) or not all(isinstance(v, str) for v in value):
        raise fail(key, "must be a list of strings")
    if any(not v for v in value):
        raise fail(key, "holds an empty string")
    return tuple(value)


def _regexes(
    table: Mapping[str, Any], key: str, fail: Any, flags: int = re.ASCII
) -> tuple[re.Pattern[str], ...]:
    out = []
    for text in _strings(table, key, fail):
        try:
            out.append(re.compile(text, flags))
        except re.error as exc:
            raise fail(key, f"not a valid regular expression {text!r}: {exc}") from None
    return tuple(out)


def _globs(table: Mapping[str, Any], key: str, fail: Any) -> Globs:
    patterns = _strings(table, key, fail)
    compiled = []
    for p in patterns:
        try:
            compiled.append(re.compile(glob_regex(p)))
        except ValueError as exc:
            raise fail(key, f"not a valid glob: {exc}") from None
    return Globs(patterns, tuple(compiled))


def _question(table: Mapping[str, Any], number: int, default_min: float, fail: Any) -> Question:
    unknown = sorted(set(table) - _QUESTION_KEYS)
    if unknown:
        raise fail(unknown[0], f"unknown key (expected {', '.join(sorted(_QUESTION_KEYS))})")
    qid = table.get("id")
    if not isinstance(qid, str) or not qid.strip():
        raise fail("id", "missing or empty (every question needs a unique id)")
    group = table.get("group")
    if group is not None and (not isinstance(group, str) or not group):
        raise fail("group", "must be a non-empty string (a campaign group)")
    prompt_text = table.get("prompt")
    prompt = None
    if prompt_text is not None:
        if not isinstance(prompt_text, str) or not prompt_text:
            raise fail("prompt", "must be a non-empty string (a regex searched in the first prompt)")
        try:
            prompt = re.compile(prompt_text)
        except re.error as exc:
            raise fail("prompt", f"not a valid regular expression: {exc}") from None
    if group is None and prompt is None:
        raise fail("", "needs 'group' or 'prompt' (which transcripts it covers)")
    turn = table.get("turn")
    if turn is not None and (type(turn) is not int or turn < 1):
        raise fail("turn", f"must be a whole number >= 1 (1: run-X.jsonl, 2: run-X.t2.jsonl), not {turn!r}")
    if "answer" not in table:
        raise fail("answer", "missing (the gold files: paths or globs; [] for none)")
    symbols = _strings(table, "symbols", fail)
    min_symbols = (
        _min_symbols(table["min_symbols"], lambda what: fail("min_symbols", what))
        if "min_symbols" in table else default_min
    )  # fmt: skip
    return Question(
        id=qid,
        answer=_globs(table, "answer", fail),
        group=group,
        prompt=prompt,
        turn=turn,
        incidental=_globs(table, "incidental", fail),
        symbols=symbols,
        symbol_res=tuple(re.compile(f"(?<![{_WORD}]){re.escape(s)}(?![{_WORD}])") for s in symbols),
        must=_regexes(table, "must", fail),
        must_not=_regexes(table, "must_not", fail),
        min_symbols=min_symbols,
        table=dict(table),
    )


# -- what a transcript's questions cover ---------------------------------------------------


class Conflict(Exception):
    """A transcript (or segment) two questions cover: its item fails naming both."""


#: What the reason of an item a `Conflict` failed says (the terminal counts such items apart).
CONFLICT = "is covered by two questions of the truth file:"


def file_turn(path: str, first: str) -> int | None:
    """The turn a transcript's file holds: ``run-X.t<k>.jsonl`` is turn k, the run's first
    file (``first``) turn 1 unless named as a later one; None for another file (a subagent's)."""
    name = logical_name(path.replace("\\", "/").rsplit("/", 1)[-1])
    m = TURN.match(name)
    if m is not None:
        return int(m["turn"])
    return 1 if path == first else None


def units(
    truth: Truth, group: str, prompt: str | None, turns: Sequence[int]
) -> list[tuple[Question, int | None]]:
    """The answer units a transcript of ``group`` whose first prompt is ``prompt`` and whose
    segments are ``turns`` has: (question, its turn or None for the whole transcript).
    Raises `Conflict` when two questions cover one transcript or segment."""
    found: list[tuple[Question, int | None]] = []
    for q in truth.questions:
        if q.covers(group, prompt) and (q.turn is None or q.turn in turns):
            found.append((q, q.turn))
    for i, (a, ta) in enumerate(found):
        for b, tb in found[i + 1 :]:
            if ta is None or tb is None or ta == tb:
                where = "the transcript" if ta is None and tb is None else f"turn {ta or tb}"
                raise Conflict(f"{where} {CONFLICT} {a.id!r} and {b.id!r}")
    return found


# -- the figures of one answer unit ----------------------------------------------------------


@dataclass
class UnitCall:
    """A judged explore call of a unit: its id, bucket, and its response's sections."""

    id: str
    bucket: str
    sections: Sequence[Section] | None  # None: its response has no section


def shares(question: Question, sections: Sequence[Section] | None) -> tuple[float | None, float | None]:
    """(gold_share, incidental_share) of one response (None, None without sections)."""
    if not sections:
        return None, None
    total = gold = incidental = 0
    for s in sections:
        total += s.chars
        if question.answer.any(s.path):
            gold += s.chars
        if question.incidental.any(s.path):
            incidental += s.chars
    if not total:
        return 0.0, 0.0
    return gold / total, incidental / total


def cited(question: Question, answer: str, extensions: Iterable[str]) -> float | None:
    """The share of the ``answer`` patterns the answer text cites (the allocation metric's
    citation rule: path tokens, and bare basenames of the extensions given)."""
    patterns = question.answer
    if not patterns:
        return None
    if not answer.strip():
        return 0.0
    exts = set(extensions)
    for p in patterns.patterns:  # a gold file's own extension makes its basename a citation
        e = extension(p.replace("\\", "/").rsplit("/", 1)[-1])
        if e is not None and "*" not in e and "?" not in e:
            exts.add(e)
    paths = citations(answer, frozenset(exts)).paths
    hit = 0
    for pattern, rx in zip(patterns.patterns, patterns.compiled, strict=True):
        literal = "*" not in pattern and "?" not in pattern
        plain = norm_path(pattern.replace("\\", "/"))
        if any(rx.fullmatch(c) or (literal and same_file(plain, c)) for c in paths):
            hit += 1
    return hit / len(patterns.patterns)


def verdict_of(question: Question, answer: str | None) -> tuple[str, float | None]:
    """(verdict, symbols_hit) of an answer, by the spec's rules in their order."""
    text = answer or ""
    found = sum(1 for rx in question.symbol_res if rx.search(text)) if text else 0
    symbols_hit = (found / len(question.symbols)) if question.symbols else None
    if not question.judged:
        return "unjudged", symbols_hit
    if not text.strip():
        return "fail", symbols_hit
    if any(rx.search(text) for rx in question.must_not):
        return "fail", symbols_hit
    musts = [rx.search(text) is not None for rx in question.must]
    if (question.symbols or question.must) and not found and not any(musts):
        return "fail", symbols_hit
    if all(musts) and (symbols_hit is None or symbols_hit >= question.min_symbols):
        return "pass", symbols_hit
    return "partial", symbols_hit


def evaluate(
    question: Question, turn: int | None, answer: str | None, calls: Sequence[UnitCall]
) -> dict[str, Any]:
    """The record's entry for one answer unit (``calls`` in call order), without a judge."""
    verdict, symbols_hit = verdict_of(question, answer)
    recall: float | None = None
    first: bool | None = None
    if calls:
        gold = question.answer
        hit: set[int] = set()
        for c in calls:
            for s in c.sections or ():
                hit.update(gold.matching(s.path))
        recall = len(hit) / len(gold.patterns) if gold else None
        first = any(gold.any(s.path) for s in calls[0].sections or ()) if gold else None
    exts = {e for c in calls for s in c.sections or () if (e := extension(s.path)) is not None}
    return {
        "question": question.id,
        "turn": turn,
        "verdict": verdict,
        "symbols_hit": symbols_hit,
        "gold_recall": recall,
        "gold_first": first,
        "gold_cited": cited(question, answer or "", exts),
        "judge": None,
        "calls": [c.id for c in calls],
    }


def find(root: str) -> tuple[str, bytes] | None:
    """(where, bytes) of the truth file a campaign holds at its root (a folder, or an
    archive's top level), or None. Raises `TruthError` when it cannot be read."""
    from .sources import ArchiveError, active_sources, archive_source, is_archive

    if is_archive(root):
        try:
            source = archive_source(root)  # the session's listing, when one is active
        except ArchiveError:
            return None  # discovery says what is wrong with the archive
        try:
            if source.truth is None:
                return None
            where = f"{root}:{source.truth}"
            try:
                with source.open(source.truth) as fh:
                    return where, fh.read()
            except (OSError, ArchiveError) as exc:
                raise TruthError(f"{where}: cannot read it: {exc}") from None
        finally:
            if active_sources() is None:
                source.close()
    path = os.path.join(root, DEFAULT_NAME)
    if not os.path.isfile(path):
        return None
    try:
        with open(path, "rb") as fh:
            return path, fh.read()
    except OSError as exc:
        raise TruthError(f"{path}: cannot read it: {exc.strerror or exc}") from None


# -- a transcript's units, from what its reading left on the collector --------------------


@dataclass
class Unit:
    """One covered answer unit of a transcript: its record entry, its answer text and question."""

    entry: dict[str, Any]
    answer: str | None
    question: Question


def assess(
    truth: Truth,
    group: str,
    collector: Any,
    calls: Sequence[Any],
    sections: Mapping[str, Sequence[Section]],
    first_file: str,
) -> tuple[list[Unit], dict[str, tuple[float | None, float | None]]]:
    """The answer units of one transcript and the gold shares of their calls.

    ``collector``: the transcript as read (`events.Collector`: its prompt, segments,
    answers, tool ids in stream order); ``calls``: the verdict's judged explore calls;
    ``sections``: each judged response's returned-file sections (`allocation`), by call id;
    ``first_file``: the transcript's first file (turn 1 unless named as a later turn).
    Raises `Conflict` when two questions cover one transcript or segment.
    """
    segments = collector.segments
    seg_turns = [file_turn(s[0], first_file) for s in segments]
    turns = sorted({t for t in seg_turns if t is not None}) or [1]
    covered = units(truth, group, collector.prompt, turns)
    if not covered:
        return [], {}
    order = collector.seen_tool_ids
    ordered = sorted(calls, key=lambda c: order.get(c.id, len(order)))  # call (stream) order
    call_turn: dict[str, int] = {}
    if any(turn is not None for _, turn in covered):
        call_turn = _call_turns(collector, ordered, seg_turns)
    out: list[Unit] = []
    shares_of: dict[str, tuple[float | None, float | None]] = {}
    for question, turn in covered:
        mine = [c for c in ordered if turn is None or call_turn.get(c.id) == turn]
        unit_calls = [UnitCall(c.id, c.bucket, sections.get(c.id) or None) for c in mine]
        answer = collector.answer() if turn is None else _turn_answer(collector, seg_turns, turn)
        out.append(Unit(evaluate(question, turn, answer, unit_calls), answer, question))
        for c in unit_calls:
            shares_of[c.id] = shares(question, c.sections)
    return out, shares_of


def _call_turns(collector: Any, calls: Sequence[Any], seg_turns: Sequence[int | None]) -> dict[str, int]:
    """The turn each call was made in: the segment whose file it was read from; a call read
    from a subagent's own file, the turn of the call that spawned its thread."""
    import bisect

    starts = [s[1] for s in collector.segments]
    order = collector.seen_tool_ids
    thread_of: dict[str, str] | None = None

    def turn_of(tid: str, depth: int = 0) -> int:
        nonlocal thread_of
        at = order.get(tid)
        if at is None or not starts:
            return 1
        turn = seg_turns[max(bisect.bisect_right(starts, at) - 1, 0)]
        if turn is not None or depth > 32:
            return turn or 1
        if thread_of is None:
            thread_of = {a.id: key for key, actions in collector.threads.items() for a in actions}
        parent = thread_of.get(tid, "main")
        return turn_of(parent, depth + 1) if parent in order else 1

    return {c.id: turn_of(c.id) for c in calls}


def _turn_answer(collector: Any, seg_turns: Sequence[int | None], turn: int) -> str | None:
    """The allocation metric's answer restricted to one turn: its segment's ``result``
    strings, else the last main-thread text written in it."""
    segments = collector.segments
    if not segments:
        return collector.answer() if turn == 1 else None
    at = next((i for i, t in enumerate(seg_turns) if t == turn), None)
    if at is None:
        return None
    end = at + 1
    answers = collector.answers[segments[at][2] : segments[end][2] if end < len(segments) else None]
    if answers:
        return "\n\n".join(answers)
    before = segments[at][3]
    after = segments[end][3] if end < len(segments) else collector.last_text
    return after if after is not before and after else None


def grade(question: Question, collector: Any, verdict: Any, first_file: str) -> list[dict[str, Any]]:
    """The entries of a transcript's answer units for one question, applied whatever its
    ``group`` and ``prompt`` say (the library's `judge`): the whole transcript, or its
    ``turn`` (none when the transcript has no such turn)."""
    import dataclasses

    from .metrics import measure

    sections: dict[str, list[Section]] = {}
    measure(verdict, collector, sections=sections)
    anywhere = dataclasses.replace(question, group=None, prompt=None)
    units, _ = assess(Truth("", "", (anywhere,)), "", collector, verdict.calls, sections, first_file)
    return [u.entry for u in units]
