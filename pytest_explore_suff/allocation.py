"""Allocation efficiency: of the characters an explore response spent on files,
the share that went to files the agent's final answer cites.

Implements allocation efficiency as ``docs/metrics.md`` states it, over the judged
explore responses of one transcript and its answer text. Plain library code:
no pytest import.
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any, NamedTuple

from .classify import Mark, marks_finder, norm_path, path_run, path_tokens, same_file
from .events import ToolSpec

#: Header kinds that mean the file *defines* the name (``mutateElement(calls)`` does not).
DEFINING_KINDS = frozenset(
    {
        "module", "class", "struct", "interface", "trait", "protocol", "function", "method",
        "property", "field", "variable", "constant", "enum", "enum_member", "type_alias",
        "namespace", "route", "component",
    }
)  # fmt: skip
#: Definitions that are often import bindings: a real definition elsewhere beats them.
WEAK_KINDS = frozenset({"variable", "constant"})
STOPWORDS = frozenset(
    {
        "function", "return", "const", "this", "true", "false", "null", "void", "undefined",
        "string", "object", "number", "boolean", "array", "class", "import", "export", "async",
        "await", "default", "type", "value", "name", "data", "self", "super", "else", "then",
        "case", "from", "with", "when", "where", "that", "they",
    }
)  # fmt: skip
#: A name defined by this many returned files identifies none of them.
AMBIGUITY_LIMIT = 3
MIN_SYMBOL = 4
GUIDANCE = "\n> "  # the trailing guidance quote that ends the last section

_HEADER_ENTRY = re.compile(r"([A-Za-z_$][\w$.]*)\(([a-z_]+)\)", re.ASCII)
_BASENAME = re.compile(r"\b[\w@+-]+\.[A-Za-z]\w*", re.ASCII)
_DOT_LETTER = re.compile(r"\.[A-Za-z]")
_CODE_SPAN = re.compile(r"`([^`\n]+)`")
_IDENT = re.compile(r"[A-Za-z_$][\w$]*", re.ASCII)


class Section(NamedTuple):
    """One returned file's part of a response (a tuple: several are made per response)."""

    path: str
    chars: int
    #: (name, kind) of every entry its header says the file defines
    symbols: tuple[tuple[str, str], ...]


def spans(
    text: str, marker: str = ToolSpec.marker, marks: list[Mark] | None = None
) -> list[tuple[str, int, int]]:
    """(path, start, stop) of each section of one response, in order (`sections`' bounds)."""
    if marks is None:
        marks = marks_finder(marker)(text)
    if not marks:
        return []
    tail = text.find(GUIDANCE, marks[-1][0])
    end = len(text) if tail == -1 else tail
    return [
        (path, start, max(marks[i + 1][0] if i + 1 < len(marks) else end, start))
        for i, (start, _, path) in enumerate(marks)
    ]


def sections(text: str, marker: str = ToolSpec.marker, marks: list[Mark] | None = None) -> list[Section]:
    """The per-file sections of one response, in order (empty: no envelope).

    ``marks``: the markers of ``text`` when the classifier found them already.
    """
    if marks is None:
        marks = marks_finder(marker)(text)
    out = []
    for (_, header_at, _), (path, start, stop) in zip(marks, spans(text, marker, marks), strict=True):
        line_end = text.find("\n", header_at)
        # The header's entries, read in place (the pattern has no anchor: the same matches as in
        # a copy of the line); most headers have none.
        entries = _HEADER_ENTRY.findall(text, header_at, len(text) if line_end == -1 else line_end)
        symbols = tuple([entry for entry in entries if entry[1] in DEFINING_KINDS]) if entries else ()
        out.append(Section(path, stop - start, symbols))
    return out


def extension(path: str) -> str | None:
    """The lower-cased text after a path's last dot (none for a leading dot or no dot)."""
    dot = path.rfind(".")
    return path[dot + 1 :].lower() if dot > 0 else None


@dataclass(frozen=True)
class Citations:
    paths: tuple[str, ...]
    symbols: tuple[str, ...]  # in order of first appearance


def citations(answer: str, extensions: frozenset[str]) -> Citations:
    """What an answer cites: path tokens, bare basenames of the envelope's extensions,
    and identifiers inside one-line code spans."""
    paths = dict.fromkeys(path_tokens(answer))
    for token in basenames(answer):
        if token[token.rfind(".") + 1 :].lower() in extensions:
            paths[token] = None
    symbols: dict[str, None] = {}
    for span in _CODE_SPAN.finditer(answer):
        for ident in _IDENT.findall(span.group(1)):
            if len(ident) >= MIN_SYMBOL and ident.lower() not in STOPWORDS:
                symbols[ident] = None
    return Citations(tuple(norm_path(p) for p in paths), tuple(symbols))


def basenames(text: str) -> list[str]:
    """What ``_BASENAME.findall(text)`` returns, trying the regex only where it can match.

    A match holds a dot followed by a letter, inside a run of path characters (whose
    neighbours are no word characters, so its word boundaries are the run's own):
    the regex finds in each run around such a dot what it finds there in the whole
    text. Its word-boundary test at every position of a long answer is most of what
    `citations` cost otherwise.
    """
    found: list[str] = []
    dot = _DOT_LETTER.search(text)
    if dot is not None:
        back = text[::-1]
        while dot is not None:
            start, end = path_run(text, back, dot.start())
            found += _BASENAME.findall(text, start, end)
            dot = _DOT_LETTER.search(text, end)
    return found


def _owners(calls: Sequence[Sequence[Section]]) -> dict[str, set[str]]:
    """Name -> the returned files that define it (strong definers win over weak ones)."""
    strong: dict[str, set[str]] = {}
    weak: dict[str, set[str]] = {}
    for secs in calls:
        for s in secs:
            for name, kind in s.symbols:
                (weak if kind in WEAK_KINDS else strong).setdefault(name, set()).add(s.path)
    return {name: strong.get(name) or weak[name] for name in {*strong, *weak}}


def allocation(
    responses: Sequence[tuple[str, str] | tuple[str, str, list[Mark] | None]],
    answer: str | None,
    marker: str = ToolSpec.marker,
    keep: dict[str, list[Section]] | None = None,
) -> tuple[dict[str, Any] | None, str]:
    """(the transcript's allocation figures, "") or (None, why not).

    ``responses``: (call id, response text[, its markers]) of the judged
    explore calls, in stream order. ``answer``: the final answer text (None or
    blank: every file is uncited, and the figures say ``has_answer: false``). ``keep``:
    gets each call's sections, by call id (the ground truth's gold shares read them).
    """
    if not responses:
        return None, "no answered explore call"
    calls = [
        (r[0], secs) for r in responses if (secs := sections(r[1], marker, r[2] if len(r) > 2 else None))
    ]
    if keep is not None:
        keep.update(calls)
    if not calls:
        return None, "no explore response has a returned-file section"
    exts = frozenset(e for _, secs in calls for s in secs if (e := extension(s.path)) is not None)
    cited = citations(answer or "", exts)
    owners = _owners([secs for _, secs in calls])
    # Each file's first cited symbol that identifies it (defined by few enough files).
    identified: dict[str, str] = {}
    for name in cited.symbols:
        o = owners.get(name)
        if o is not None and len(o) < AMBIGUITY_LIMIT:
            for path in o:
                identified.setdefault(path, name)

    def credit(path: str) -> tuple[str | None, str | None]:
        """(via, symbol): how the answer cites a returned file."""
        p = norm_path(path)
        if any(same_file(p, c) for c in cited.paths):
            return "path", None
        symbol = identified.get(path)
        return ("symbol", symbol) if symbol is not None else (None, None)

    per_call: list[dict[str, Any]] = []
    files: dict[str, dict[str, Any]] = {}  # path -> its figures, with its credit (asked once a file)
    files_used = 0  # of them, the cited ones
    total = total_used = total_path = 0  # the characters of every call (summed as they are read)
    for cid, secs in calls:
        envelope = used = used_path = used_here = 0
        for path, chars, _ in secs:
            f = files.get(path)
            if f is None:
                via, symbol = credit(path)
                f = files[path] = {"path": path, "chars": 0, "calls": 0, "via": via, "symbol": symbol}
                if via is not None:
                    files_used += 1
            via = f["via"]
            envelope += chars
            if via is not None:
                used += chars
                used_here += 1
                if via == "path":
                    used_path += chars
            f["chars"] += chars
            f["calls"] += 1
        per_call.append(
            {
                "id": cid,
                "envelope": envelope,
                "used": used,
                "used_path": used_path,
                "efficiency": used / envelope if envelope else 0.0,
                "files": len(secs),
                "files_used": used_here,
            }
        )
        total += envelope
        total_used += used
        total_path += used_path
    ranked = sorted(files.values(), key=lambda f: -f["chars"])  # stable: ties keep first appearance
    return {
        "envelope": total,
        "used": total_used,
        "used_path": total_path,
        "efficiency": total_used / total if total else 0.0,
        "efficiency_path": total_path / total if total else 0.0,
        "files_returned": len(ranked),
        "files_used": files_used,
        "has_answer": bool((answer or "").strip()),
        "calls": per_call,
        "files": ranked,
    }, ""
