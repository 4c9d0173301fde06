"""Where transcript records wait for the report: on disk, not in memory.

A record (``report.record``) carries a transcript's calls, warnings, runs and
files: kilobytes each, and a campaign has tens of thousands. `RecordStore`
writes each record, as it arrives, to a temporary spool file, already encoded
the way the JSON report holds it, and keeps in memory only one row of a few
arrays per record: what aggregation, intervals, comparisons and gates read
(arm, group, status, reason, counts, totals, the metrics' brief) and where the
spool holds the rest. `records` hands out `Slim` views of the rows. The report
is then written by copying the spooled bytes (`document.Report.json_chunks`),
and whatever else a record holds is read back from the spool on first use
(``slim["calls"]``).
"""

from __future__ import annotations

import math
import os
import tempfile
from array import array
from collections.abc import Iterator, Mapping
from typing import Any

import orjson
import xxhash

from .jsonl import decode
from .report import (
    BRIEF_SIZE,
    TABLE_SIZE,
    Brief,
    Totals,
    brief_of,
    indented,
    models_of,
    pack_brief,
    pack_table,
    pack_totals,
    run_totals,
    table_of,
    truth_brief_of,
    unpack_brief,
    unpack_table,
    unpack_totals,
)

#: A row's items per array. `_VALUES` are indices into the store's table of values:
#: the strings, and the counts and tools dicts, that thousands of records share.
_PLACE = 2  # the record's offset in the spool and its size
_NUMBERS = ("answered", "errored", "concurrent")
_VALUES = ("arm", "group", "status", "reason", "counts", "tools", "agent", "models")
_TOTALS = 4  # `report.run_totals`, then the metrics' brief (`report.brief_of`): doubles, NaN for None
_FIGURES = _TOTALS + BRIEF_SIZE + TABLE_SIZE  # then the arm table's figures (`report.table_of`)
_KEPT = frozenset({"path", "digest", *_NUMBERS, *_VALUES}) - {"models"}  # models: not a record field
#: A record's digest (`sources.Digests`, 32 hex digits) as its row keeps it: 16 bytes, all
#: zero for none (the digest of any bytes is not, but for a chance of 2**-128).
_DIGEST = 16
_NO_DIGEST = bytes(_DIGEST)
#: Rows per block of arrays. A block's arrays are made at their full size, never grown: an
#: array that grows moves to a larger piece of the heap, and the pieces it leaves behind
#: (about as large as the array, in all) stay in the process's memory.
_BLOCK = 1024


def _value_field(name: str) -> Any:
    """A `Slim` property: the record's ``name``, from its row's index into the table of values."""
    at = _VALUES.index(name)

    def get(self: Slim) -> Any:
        row = self._row
        store = self._store
        return store._values[store._blocks[row // _BLOCK].refs[row % _BLOCK * len(_VALUES) + at]]

    return property(get, doc=f"The record's {name!r}.")


def _number_field(name: str) -> Any:
    """A `Slim` property: the record's ``name``, a count its row holds."""
    at = _NUMBERS.index(name)

    def get(self: Slim) -> int:
        row = self._row
        return self._store._blocks[row // _BLOCK].numbers[row % _BLOCK * len(_NUMBERS) + at]

    return property(get, doc=f"The record's {name!r}.")


class Slim(Mapping[str, Any]):
    """A record as its store keeps it: the fields the aggregates need; the rest from the spool.

    A view of one row of the store, made when the records are asked for: while a
    session runs, a record costs its row, no object of its own.
    """

    __slots__ = ("_row", "_store", "path")

    def __init__(self, store: RecordStore, row: int, path: str) -> None:
        self._store = store
        self._row = row
        self.path = path

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
        return self._store.decoded(self._row)

    def raw(self) -> bytes:
        """The record as the JSON report holds it (an element of ``transcripts``)."""
        return self._store.read(self._row)

    arm: str = _value_field("arm")
    group: str = _value_field("group")
    status: str = _value_field("status")
    reason: str = _value_field("reason")
    counts: dict[str, int] = _value_field("counts")
    tools: dict[str, Any] = _value_field("tools")
    agent: str = _value_field("agent")
    models: dict[str, float] = _value_field("models")
    answered: int = _number_field("answered")
    errored: int = _number_field("errored")
    concurrent: int = _number_field("concurrent")

    @property
    def digest(self) -> str | None:
        """The digest of the transcript's bytes (None: it has none)."""
        return self._store.digest(self._row)

    @property
    def content(self) -> bytes | None:
        """`RecordStore.content` of the record."""
        return self._store.content(self._row)

    @property
    def totals(self) -> Totals:
        """What `report.run_totals` reads of the record's runs."""
        return self._store.totals(self._row)

    @property
    def brief(self) -> Brief:
        """What `report.brief_of` reads of the record's metrics."""
        return self._store.brief(self._row)

    @property
    def truth_brief(self) -> Any:
        """What `report.truth_brief_of` reads of the record's ground truth (None: no truth file)."""
        return self._store._truth.get(self._row)

    @property
    def table(self) -> tuple[Any, ...]:
        """What `report.table_of` reads of the record's arm-table figures."""
        return self._store.table(self._row)


class _Block:
    """The arrays of `_BLOCK` rows: each row's items side by side (`_PLACE` of them in
    ``place``, ...)."""

    __slots__ = ("contents", "digests", "figures", "numbers", "place", "refs")

    def __init__(self) -> None:
        self.digests = bytearray(_DIGEST * _BLOCK)
        self.contents = bytearray(_DIGEST * _BLOCK)  # `RecordStore.content`: all zero for none
        self.place = array("q", [0]) * (_PLACE * _BLOCK)
        self.numbers = array("q", [0]) * (len(_NUMBERS) * _BLOCK)
        self.refs = array("I", [0]) * (len(_VALUES) * _BLOCK)  # four bytes, not a reference and an object
        self.figures = array("d", [0.0]) * (_FIGURES * _BLOCK)


#: What a store keeps of a record (`kept`): path, arm, group, status, reason, counts, tools,
#: agent, answered, errored, concurrent, run totals (`report.run_totals`), the metrics'
#: brief (`report.brief_of`), digest, the arm table's figures (`report.table_of`), cost per
#: model (`report.models_of`), the ground truth's brief (`report.truth_brief_of`).
Kept = tuple[Any, ...]
#: A record as an item ships it (`shipped`): the bytes the report will hold and what the
#: store keeps of it, as it is, or (from an xdist worker, `over_the_wire`) as JSON.
Shipment = tuple[bytes, "Kept | bytes"]


def kept(rec: Mapping[str, Any]) -> Kept:
    """What a `RecordStore` keeps of ``rec`` in memory (the rest waits in its spool)."""
    return (
        rec["path"], rec["arm"], rec["group"], rec["status"], rec["reason"], rec["counts"],
        rec.get("tools") or {},
        rec.get("agent", ""),  # the arm's agents (a report of schema 1 has none)
        rec["answered"], rec["errored"], rec["concurrent"],
        run_totals(rec), brief_of(rec), rec.get("digest"), table_of(rec), models_of(rec),
        truth_brief_of(rec),
    )  # fmt: skip


def shipped(rec: Mapping[str, Any]) -> Mapping[str, Any] | Shipment:
    """A record as its report carries it: the bytes the report will hold (`indented`),
    which the store keeps as they came, and what the store keeps of it in memory
    (`kept`), worked out once, where the item ran: the store neither decodes the
    bytes nor reads the record again, and (without xdist) its row refers to the
    item's own strings (the transcript's path, its arm), no copies of them.

    The record itself when its JSON would not read back as it is: JSON has no infinity
    (a sum of huge figures can reach it; orjson writes null), and what the store keeps
    of the record must not depend on where it was encoded. Raises TypeError (orjson's
    JSONEncodeError) for a record that cannot be encoded at all."""
    row = kept(rec)
    tools = row[6]
    numbers = (*row[11], *row[12], *row[14], *(tools.values() if isinstance(tools, dict) else ()),
               *row[15].values())  # fmt: skip
    if any(type(v) is float and math.isinf(v) for v in numbers):
        indented(rec)  # encodable all the same (as null), or it raises here
        return rec
    return indented(rec), row


_shipped = shipped  # `RecordStore.add` has a parameter of that name


def over_the_wire(shipment: Mapping[str, Any] | Shipment) -> Mapping[str, Any] | Shipment:
    """A shipment as an xdist worker sends it: what the store keeps, as JSON too (execnet's
    serializer is plain Python, half a millisecond per record each way; two bytes
    objects go through whole). `shipped` left a record with an infinite figure as it is."""
    if isinstance(shipment, tuple):
        data, row = shipment
        return data, row if isinstance(row, bytes) else orjson.dumps(row)
    return shipment


class RecordStore:
    """Transcript records by path: spooled to a temporary file, a row of arrays in memory.

    A record for a path already stored replaces it (as a dict would), in its first place.
    """

    def __init__(self, directory: str | None = None) -> None:
        # A large buffer: records are a few kilobytes, one write call for many of them.
        self._file = tempfile.TemporaryFile(prefix="explore-suff-records-", dir=directory, buffering=1 << 16)  # noqa: SIM115
        self._end = 0
        self._dirty = False
        # The paths in arrival order, a row each: a dict for its order and look-ups, not
        # a set (half the size) nor path -> row (an int object each above 256).
        self._paths: dict[str, None] = {}
        self._rows: dict[str, int] | None = None  # path -> row, made on the first look-up by path
        self._blocks: list[_Block] = []  # row r: block r // _BLOCK, its row r % _BLOCK
        self._odd_totals: dict[int, Totals] = {}  # by row: run totals no double holds (`pack_totals`)
        #: by row: what the truth figures read of a record (`report.truth_brief_of`), when a
        #: truth file is in play (no entry otherwise)
        self._truth: dict[int, Any] = {}
        self._values: list[Any] = []
        self._value_refs: dict[Any, int] = {}  # a string -> its index in _values
        self._dict_refs: dict[tuple[Any, ...], int] = {}  # a dict's pairs -> its index in _values

    def add(self, shipped: Mapping[str, Any] | Shipment) -> None:
        """Store a record: a mapping, or a `shipped` pair."""
        if not isinstance(shipped, tuple):
            # encode first: a record that cannot be encoded fails here, not at the end
            shipped = _shipped(shipped)
        content = _NO_DIGEST
        if isinstance(shipped, tuple):
            data, fields = shipped
            # What the row and the spool hold, hashed: the summaries' key (`content`).
            h = xxhash.xxh3_128(data)
            h.update(b"\0")
            if isinstance(fields, bytes):  # from an xdist worker (`over_the_wire`), or the cache
                h.update(fields)
                fields = decode(fields)
            else:
                h.update(orjson.dumps(fields))
            content = h.digest()
        else:  # an infinite figure: the bytes (null) are not the record; no content digest
            data, fields = indented(shipped), kept(shipped)
        (path, arm, group, status, reason, counts, tools, agent,
         answered, errored, concurrent, totals, brief, digest, table, models, *rest) = fields  # fmt: skip
        truth = rest[0] if rest else None
        # The whole row before any of it is stored: a field that does not fit fails here, rows intact.
        numbers = array("q", [answered, errored, concurrent])
        refs = array("I", [self._ref(arm), self._ref(group), self._ref(status), self._ref(reason)])
        refs.append(self._shared(counts))
        refs.append(self._shared(tools))
        refs.append(self._ref(agent))
        refs.append(self._shared(models))
        totals = tuple(totals)
        packed = pack_totals(totals)
        figures = array("d", [*(packed or (0.0,) * _TOTALS), *pack_brief(brief), *pack_table(table)])
        place = array("q", [self._end, len(data)])
        packed_digest = (
            bytes.fromhex(digest) if isinstance(digest, str) and len(digest) == 2 * _DIGEST else None
        )
        if isinstance(digest, str) and packed_digest is None:
            raise ValueError(f"a record's digest must be {2 * _DIGEST} hex digits, not {digest!r}")
        self._file.write(data)
        self._end += len(data)
        self._dirty = True
        row = self._row(path) if path in self._paths else self._new_row(path)  # the same path again: its row
        block, at = self._blocks[row // _BLOCK], row % _BLOCK
        block.place[at * _PLACE : (at + 1) * _PLACE] = place
        block.numbers[at * len(_NUMBERS) : (at + 1) * len(_NUMBERS)] = numbers
        block.refs[at * len(_VALUES) : (at + 1) * len(_VALUES)] = refs
        block.figures[at * _FIGURES : (at + 1) * _FIGURES] = figures
        block.digests[at * _DIGEST : (at + 1) * _DIGEST] = packed_digest or _NO_DIGEST
        block.contents[at * _DIGEST : (at + 1) * _DIGEST] = content
        if packed is None:
            self._odd_totals[row] = totals
        elif self._odd_totals:
            self._odd_totals.pop(row, None)
        if truth is not None:
            self._truth[row] = truth
        elif self._truth:
            self._truth.pop(row, None)

    def _new_row(self, path: str) -> int:
        row = len(self._paths)
        self._paths[path] = None
        if self._rows is not None:
            self._rows[path] = row
        if row % _BLOCK == 0:
            self._blocks.append(_Block())
        return row

    def __len__(self) -> int:
        return len(self._paths)

    def __contains__(self, path: object) -> bool:
        return path in self._paths

    def records(self) -> list[Slim]:
        """Every record, in arrival order (the first arrival of a path)."""
        return [Slim(self, row, path) for row, path in enumerate(self._paths)]

    def raw(self, path: str) -> bytes:
        return self.read(self._row(path))

    def full(self, path: str) -> dict[str, Any]:
        return self.decoded(self._row(path))

    def read(self, row: int) -> bytes:
        """The bytes of the record in ``row``, from the spool."""
        if self._dirty:
            self._file.flush()
            self._dirty = False
        block, at = self._blocks[row // _BLOCK], row % _BLOCK
        at, size = block.place[at * _PLACE : (at + 1) * _PLACE]
        data = os.pread(self._file.fileno(), size, at)
        if len(data) != size:  # pragma: no cover - our own temporary file, cut short
            raise OSError(f"the record spool lost the record in row {row}")
        return data

    def decoded(self, row: int) -> dict[str, Any]:
        out: dict[str, Any] = decode(self.read(row))
        return out

    def totals(self, row: int) -> Totals:
        if row in self._odd_totals:
            return self._odd_totals[row]
        block, at = self._blocks[row // _BLOCK], row % _BLOCK
        return unpack_totals(block.figures[at * _FIGURES : at * _FIGURES + _TOTALS])

    def content(self, row: int) -> bytes | None:
        """A digest of all the record in ``row`` is (its report bytes and its row's fields):
        equal digests, equal records, whatever aggregates them gets the same. None for a
        record whose bytes are not all of it (an infinite figure, which JSON writes null)."""
        block, at = self._blocks[row // _BLOCK], row % _BLOCK
        packed = bytes(block.contents[at * _DIGEST : (at + 1) * _DIGEST])
        return None if packed == _NO_DIGEST else packed

    def digest(self, row: int) -> str | None:
        block, at = self._blocks[row // _BLOCK], row % _BLOCK
        packed = bytes(block.digests[at * _DIGEST : (at + 1) * _DIGEST])
        return None if packed == _NO_DIGEST else packed.hex()

    def brief(self, row: int) -> Brief:
        block, at = self._blocks[row // _BLOCK], row % _BLOCK
        return unpack_brief(block.figures[at * _FIGURES + _TOTALS : at * _FIGURES + _TOTALS + BRIEF_SIZE])

    def table(self, row: int) -> tuple[Any, ...]:
        block, at = self._blocks[row // _BLOCK], row % _BLOCK
        return unpack_table(block.figures[(at + 1) * _FIGURES - TABLE_SIZE : (at + 1) * _FIGURES])

    def _row(self, path: str) -> int:
        if self._rows is None:
            self._rows = {p: row for row, p in enumerate(self._paths)}
        return self._rows[path]

    def _ref(self, value: Any) -> int:
        """The index of ``value`` (a string) in the table of values: one copy of each."""
        ref = self._value_refs.get(value)
        if ref is None:
            ref = self._value_refs[value] = len(self._values)
            self._values.append(value)
        return ref

    def _shared(self, mapping: Mapping[str, Any]) -> int:
        """The index of a dict with ``mapping``'s pairs in the table of values: one for
        every record with equal pairs (they are only read)."""
        key = tuple(mapping.items())
        try:
            ref = self._dict_refs.get(key)  # hashed once: a tuple does not keep its hash
        except TypeError:  # an unhashable value: a copy of its own
            self._values.append(dict(mapping))
            return len(self._values) - 1
        if ref is None:
            ref = self._dict_refs[key] = len(self._values)
            self._values.append(dict(mapping))
        return ref

    def close(self) -> None:
        self._file.close()

    def __enter__(self) -> RecordStore:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()
