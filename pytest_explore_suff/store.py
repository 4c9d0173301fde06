"""Where transcript records wait for the report: on disk, not in memory.

A record (``report.record``) carries a transcript's calls, warnings, runs and
files: kilobytes each, and a campaign has tens of thousands. `RecordStore`
writes each record, as it arrives, to a temporary spool file, already encoded
the way the JSON report holds it, and keeps in memory only a `Slim` view:
what aggregation, intervals, comparisons and gates read (path, arm, group,
status, reason, counts, totals). The report is then written by copying the
spooled bytes (`document.Report.json_chunks`), and whatever else a record holds
is read back from the spool on first use (``slim["calls"]``).
"""

from __future__ import annotations

import os
import struct
import sys
import tempfile
from collections.abc import Iterator, Mapping
from typing import Any

from .report import Totals, brief_of, indented, pack_brief, pack_totals, run_totals

_KEPT = frozenset({"path", "arm", "group", "status", "reason", "answered", "errored", "concurrent",
                   "counts", "tools"})  # fmt: skip


class Slim(Mapping[str, Any]):
    """A record in memory: the fields the aggregates need; the rest from the spool.

    Of the runs it keeps each figure's total (`report.run_totals`), packed with where
    the spool holds the record; counts and tools are shared between records that agree.
    """

    __slots__ = (
        "_kept",
        "_store",
        "answered",
        "arm",
        "concurrent",
        "counts",
        "errored",
        "group",
        "metrics",
        "path",
        "reason",
        "status",
        "tools",
    )  # fmt: skip

    def __init__(self, rec: Mapping[str, Any], store: RecordStore, at: int, size: int) -> None:
        self.path: str = rec["path"]
        self.arm: str = _intern(rec["arm"])
        self.group: str = _intern(rec["group"])
        self.status: str = _intern(rec["status"])
        self.reason: str = _intern(rec["reason"]) if len(rec["reason"]) < 200 else rec["reason"]
        self.answered: int = rec["answered"]
        self.errored: int = rec["errored"]
        self.concurrent: int = rec["concurrent"]
        self.counts: dict[str, int] = store.shared(rec["counts"])
        self.tools: dict[str, Any] = store.shared(rec.get("tools") or {})
        # Where the spool holds the record's bytes and its run totals: 48 bytes in one object
        # (three held apart would be two ints and a bytes); a tuple when the totals do not pack.
        totals = pack_totals(run_totals(rec))
        self._kept: bytes | tuple[int, int, Totals] = (
            _PLACE.pack(at, size) + totals if isinstance(totals, bytes) else (at, size, totals)
        )
        #: what the metrics' aggregates read (`report.brief_of`), packed
        self.metrics: bytes | None = pack_brief(brief_of(rec))
        self._store = store

    def __getitem__(self, key: str) -> Any:
        if key in _KEPT:
            return getattr(self, key)
        return self.full()[key]

    def get(self, key: str, default: Any = None) -> Any:
        # Mapping's get goes through __getitem__ and a try: the aggregates call it for
        # every record, several times.
        if key in _KEPT:
            return getattr(self, key)
        return self.full().get(key, default)

    def __iter__(self) -> Iterator[str]:
        return iter(self.full())

    def __len__(self) -> int:
        return len(self.full())

    def full(self) -> dict[str, Any]:
        """The whole record, read back from the spool."""
        return self._store.full(self.path)

    def raw(self) -> bytes:
        """The record as the JSON report holds it (an element of ``transcripts``)."""
        kept = self._kept
        at, size = _PLACE.unpack_from(kept) if isinstance(kept, bytes) else kept[:2]
        return self._store.read(at, size, self.path)

    @property
    def totals(self) -> bytes | Totals:
        """What `report.run_totals` reads of the record's runs: packed, or as they were."""
        kept = self._kept
        return kept[_PLACE.size :] if isinstance(kept, bytes) else kept[2]


_PLACE = struct.Struct("<QQ")  # the record's offset in the spool, and its size


def _intern(text: Any) -> Any:
    return sys.intern(text) if type(text) is str else text


class RecordStore:
    """Transcript records by path: spooled to a temporary file, a `Slim` view in memory.

    A record for a path already stored replaces it (as a dict would).
    """

    def __init__(self, directory: str | None = None) -> None:
        self._file = tempfile.TemporaryFile(prefix="explore-suff-records-", dir=directory)  # noqa: SIM115
        self._end = 0
        self._dirty = False
        self._slim: dict[str, Slim] = {}  # each knows where the spool holds its record
        self._shared: dict[Any, dict[str, Any]] = {}

    def add(self, rec: Mapping[str, Any]) -> None:
        data = indented(rec)  # encode first: a record that cannot be encoded fails here, not at the end
        path = rec["path"]
        at = self._end
        self._file.write(data)
        self._end += len(data)
        self._dirty = True
        self._slim[path] = Slim(rec, self, at, len(data))

    def __len__(self) -> int:
        return len(self._slim)

    def __contains__(self, path: object) -> bool:
        return path in self._slim

    def records(self) -> list[Slim]:
        """Every record, in arrival order (the first arrival of a path)."""
        return list(self._slim.values())

    def raw(self, path: str) -> bytes:
        return self._slim[path].raw()

    def read(self, at: int, size: int, path: str) -> bytes:
        """The ``size`` bytes of ``path``'s record at offset ``at`` of the spool."""
        if self._dirty:
            self._file.flush()
            self._dirty = False
        data = os.pread(self._file.fileno(), size, at)
        if len(data) != size:  # pragma: no cover - our own temporary file, cut short
            raise OSError(f"the record spool lost the record of {path}")
        return data

    def full(self, path: str) -> dict[str, Any]:
        from .jsonl import decode

        out: dict[str, Any] = decode(self.raw(path))
        return out

    def shared(self, mapping: Mapping[str, Any]) -> dict[str, Any]:
        """One dict for every record with equal (key, value) pairs: they are only read."""
        try:
            key = ("d", *mapping.items())
            hash(key)
        except TypeError:  # an unhashable value: keep its own copy
            return dict(mapping)
        found = self._shared.get(key)
        if found is None:
            found = self._shared[key] = dict(mapping)
        return found

    def close(self) -> None:
        self._file.close()

    def __enter__(self) -> RecordStore:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()
