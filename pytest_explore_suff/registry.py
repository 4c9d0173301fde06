"""Transcript readers as plug-ins: what a reader is, and the set a run uses.

A `Reader` says which files it claims and how to read one transcript into a
`Collector`. The built-in readers (Claude Code, Codex CLI, Gemini CLI, Qwen
Code, GitHub Copilot CLI) and a third party's are registered the same way,
through the ``pytest_explore_suff_readers`` hook (``hookspecs.py``).

This module stays light (no reader is imported here): pytest imports the
plugin, and with it this module, in every run, campaign or not.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Iterable, Iterator, Mapping, Sequence
from dataclasses import dataclass, field, fields
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from .events import Collector

#: A reader's name is a transcript's ``kind`` in the report, and travels to xdist workers.
_NAME = re.compile(r"^[A-Za-z0-9][A-Za-z0-9_.+-]*$")


@dataclass(frozen=True)
class Reader:
    """One transcript format.

    ``name``: the format (the report's ``kind``; unique in a run: a plug-in's reader of
    a built-in's name replaces it). ``agent``: the agent that writes it (the report's
    ``agent``, a ``-k`` keyword, and the arm of a session whose path names none).
    ``read(files, collector)``: feed one transcript (its files, main first, each opened
    with ``collector.open_file``) to the collector; raise
    ``pytest_explore_suff.TranscriptError`` (one line) for a file it cannot read.

    What it claims, tried in this order for each ``.jsonl``/``.json`` file (also
    compressed as ``.gz``) of a campaign:

    - ``pattern``: a regular expression searched in the file's path relative to the
      campaign (``/`` separators, without ``.gz``): a match claims the file;
    - ``head(first_bytes)``: the first 8 KiB of the file (BOM and leading blanks
      stripped): True claims it (a JSON document, or any other text);
    - ``line(obj)``: each of the first 8 JSON objects of a JSONL file: True claims it.

    Readers are tried in registration order (a plug-in's before the built-in ones).

    Transcripts that are not one file (each claimed by ``pattern``, never sniffed):

    - ``group(rel)``: the path of the transcript a claimed file belongs to (its folder:
      a Cline task, an OpenHands session), or None to claim it alone. The files of one
      group are read as one transcript, in path order; when the reader has a ``head``,
      a group is its transcript only if one of its first files passes it.
    - ``split(files, head)``: with ``group``, a group that holds many transcripts (a
      folder of sessions whose files are spread over subfolders, OpenCode's legacy
      storage): the group's files (paths relative to the campaign) split into
      ``(session id, its files)`` pairs, each a transcript named ``<group>/<id>`` and
      read with ``collector.session`` set to the id. ``head(file)`` gives a file's
      first 8 KiB, for what its path does not say. A file in no pair is listed as
      ignored.
    - ``sessions(path)``: a file that holds many transcripts (a SQLite database),
      claimed by ``pattern`` whatever its name: the ids of its sessions, each a
      transcript named ``<file>/<id>`` and read with ``collector.session`` set to the
      id. Raise ``TranscriptError`` for a file it cannot open (its item says why).
    """

    name: str
    agent: str
    read: Callable[[Sequence[str], Collector], None]
    line: Callable[[dict[str, Any]], bool] | None = None
    head: Callable[[bytes], bool] | None = None
    pattern: str | None = None
    group: Callable[[str], str | None] | None = None
    sessions: Callable[[str], Sequence[str]] | None = None
    split: Callable[[Sequence[str], Callable[[str], bytes]], Iterable[tuple[str, Sequence[str]]]] | None = (
        None
    )
    #: the compiled ``pattern``
    regex: re.Pattern[str] | None = field(default=None, init=False, repr=False, compare=False)

    def __post_init__(self) -> None:
        if not isinstance(self.name, str) or not _NAME.match(self.name):
            raise ValueError(
                f"a reader's name must be a word of letters, digits and ._+- (got {self.name!r})"
            )
        if not isinstance(self.agent, str) or not self.agent:
            raise ValueError(f"reader {self.name}: its agent must be a non-empty string")
        if not callable(self.read):
            raise ValueError(f"reader {self.name}: read must be callable")
        if self.line is None and self.head is None and self.pattern is None:
            raise ValueError(f"reader {self.name}: it claims no file (give line, head or pattern)")
        if (self.group is not None or self.sessions is not None) and self.pattern is None:
            raise ValueError(f"reader {self.name}: group and sessions claim files by a pattern (give one)")
        if self.group is not None and self.sessions is not None:
            raise ValueError(f"reader {self.name}: give group or sessions, not both")
        if self.split is not None and self.group is None:
            raise ValueError(f"reader {self.name}: split divides a group (give group too)")
        if self.pattern is not None:
            try:
                object.__setattr__(self, "regex", re.compile(self.pattern))
            except re.error as exc:
                raise ValueError(f"reader {self.name}: pattern {self.pattern!r}: {exc}") from None


class Readers(Mapping[str, Reader]):
    """The readers of a run, by name, in the order they are tried."""

    def __init__(self, readers: Iterable[Reader]) -> None:
        self._by_name: dict[str, Reader] = {}
        for reader in readers:
            self._by_name.setdefault(reader.name, reader)  # the first registered wins
        whole = [r for r in self._by_name.values() if r.group is None and r.sessions is None]
        self.patterned = tuple(r for r in whole if r.regex is not None)
        #: readers of transcripts that span several files, or many in one file
        self.units = tuple(r for r in self._by_name.values() if r.group is not None or r.sessions is not None)
        self.containers = tuple(r for r in self.units if r.sessions is not None)
        # One search per file before the readers' own: discovery asks of every file of a campaign.
        self._any_unit = _either(self.units)
        self._any_container = _either(self.containers)
        # A unit's reader claims by its pattern alone (its head only tells a group apart).
        self.heads = tuple(r for r in whole if r.head is not None)
        self.lines = tuple(r for r in whole if r.line is not None)

    def __getitem__(self, name: str) -> Reader:
        return self._by_name[name]

    def __iter__(self) -> Iterator[str]:
        return iter(self._by_name)

    def __len__(self) -> int:
        return len(self._by_name)

    def agent(self, name: str, default: str = "claude") -> str:
        reader = self._by_name.get(name)
        return reader.agent if reader is not None else default

    def by_path(self, rel: str) -> Reader | None:
        for reader in self.patterned:
            assert reader.regex is not None
            if reader.regex.search(rel):
                return reader
        return None

    def by_unit(self, rel: str) -> Reader | None:
        """The reader whose ``group`` or ``sessions`` claims the file at ``rel``."""
        if self._any_unit is None or not self._any_unit.search(rel):
            return None
        for reader in self.units:
            assert reader.regex is not None
            if reader.regex.search(rel):
                return reader
        return None

    def container(self, rel: str) -> Reader | None:
        """The reader that claims ``rel`` (any name) as a file of many transcripts."""
        if self._any_container is None or not self._any_container.search(rel):
            return None
        for reader in self.containers:
            assert reader.regex is not None
            if reader.regex.search(rel):
                return reader
        return None

    def by_head(self, head: bytes) -> Reader | None:
        for reader in self.heads:
            assert reader.head is not None
            if reader.head(head):
                return reader
        return None

    def by_line(self, obj: dict[str, Any]) -> Reader | None:
        for reader in self.lines:
            assert reader.line is not None
            if reader.line(obj):
                return reader
        return None


def _either(readers: Sequence[Reader]) -> re.Pattern[str] | None:
    """One regular expression that matches where any of the readers' patterns does."""
    if not readers:
        return None
    try:
        return re.compile("|".join(f"(?:{r.pattern})" for r in readers))
    except re.error:  # a pattern with inline flags cannot be joined: every file is asked of each
        return re.compile("")


def _another_copy(item: Any) -> bool:
    """A `Reader` of another import of this very module. The plugin imports its readers only
    when a campaign is asked for, so a process that runs pytest more than once (pytester's
    in-process runs, which drop the modules a run imported) can hold a reader made by the
    module of an earlier run: the same class, by its module and name, and the same fields."""
    cls = type(item)
    return cls.__module__ == __name__ and cls.__qualname__ == Reader.__qualname__


def collect(results: Iterable[Any]) -> Readers:
    """The readers the hook's implementations returned (each a `Reader` or a list of them)."""
    out: list[Reader] = []
    for result in results:
        items = result if isinstance(result, (list, tuple)) else [result]
        for item in items:
            if item is None:
                continue
            if not isinstance(item, Reader) and _another_copy(item):
                item = Reader(**{f.name: getattr(item, f.name) for f in fields(Reader) if f.init})
            if not isinstance(item, Reader):
                raise TypeError(f"pytest_explore_suff_readers returned {type(item).__name__}, not a Reader")
            out.append(item)
    return Readers(out)
