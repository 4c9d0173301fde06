"""Scale: records spooled out of memory, the report streamed, members and long lines
read in bounded memory, archives owned (and closed) by the session that reads them."""

# ruff: noqa: E501
from __future__ import annotations

import copy
import io
import json
import math
import os
import shutil
import tarfile
import tempfile
import threading
import tracemalloc
import warnings
import zipfile
from pathlib import Path
from types import MappingProxyType

import orjson
import pytest
from builders import Run, ab_campaign, allocation_run, no_explore_run, response, sufficient_run
from hypothesis import HealthCheck, example, given, settings
from hypothesis import strategies as st

from pytest_explore_suff import discover, judge, stats
from pytest_explore_suff.buckets import KEYS
from pytest_explore_suff.campaign import TURN, sniff
from pytest_explore_suff.compare import _question_changes, compare_metrics
from pytest_explore_suff.document import Coverage, Options, build
from pytest_explore_suff.events import TOOL_KINDS, Collector
from pytest_explore_suff.jsonl import BUFFER
from pytest_explore_suff.readers import base
from pytest_explore_suff.repeats import repeats
from pytest_explore_suff.report import (
    RUN_FIGURES,
    allocation_summary,
    brief_of,
    clusters,
    dumps,
    encode,
    figures,
    indented,
    occupancy_summary,
    pack_totals,
    run_counts,
    run_totals,
    shares,
    table_of,
    table_summary,
)
from pytest_explore_suff.sources import HEAD_BUFFER, SMALL_FILE, _open_plain, open_head, open_path
from pytest_explore_suff.store import RecordStore, over_the_wire
from pytest_explore_suff.store import shipped as ship

SETTINGS = settings(max_examples=80, deadline=None, suppress_health_check=list(HealthCheck))


def _records() -> list[dict]:
    out = []
    for i, (arm, status) in enumerate([("with", "classified"), ("without", "classified"),
                                       ("with", "skipped"), ("with", "error"), ("without", "classified")]):  # fmt: skip
        out.append({
            "path": f"r/run{5 - i}/run-headless-{arm}.jsonl", "files": [f"run{i}.jsonl"], "arm": arm,
            "group": "r", "run": str(i), "kind": "stream-json", "status": status, "reason": "é \u202e" * i,
            "flags": {"raced": False, "contaminated": False},
            "counts": {"explore_again": i, "read_returned": 1, "read_missed": 0, "search": 0, "sufficient": 2},
            "answered": i + 3, "errored": 0, "concurrent": i % 2, "lines": 10 * i, "corrupt_lines": 0,
            "warnings": ["w"] * i, "runs": [{"num_turns": i, "duration_ms": 1000 + i, "total_cost_usd": 0.1 * i},
                                            {"num_turns": 2, "duration_ms": None, "total_cost_usd": 0.3}],
            "tools": {"explore": i, "read": 2}, "calls": [{"id": str(i), "nested": {"a": [], "b": {}}}] * i,
        })  # fmt: skip
    return out


def _build(records: list) -> object:
    return build(
        campaign="c", options=Options("explore", "codegraph", "m", None, False, "point"),
        coverage=Coverage(collected=len(records), ran=len(records)), records=records, ignored=[],
        compare=("with", "without"), baseline=("old.json", _records()),
    )  # fmt: skip


_JSON = st.recursive(
    st.none() | st.booleans() | st.integers(-(2**63), 2**63 - 1) | st.floats(allow_nan=False) | st.text(),
    lambda inner: st.lists(inner, max_size=3) | st.dictionaries(st.text(max_size=4), inner, max_size=3),
    max_leaves=12,
)


@SETTINGS
@given(st.dictionaries(st.text(max_size=6), _JSON, max_size=5))
def test_a_record_encoded_inside_two_lists_is_every_line_of_its_encoding_shifted(rec):
    assert indented(rec) == b"    " + encode(rec).replace(b"\n", b"\n    ")


@SETTINGS
@given(
    st.lists(st.dictionaries(st.sampled_from(RUN_FIGURES), _JSON | st.just(-0.0) | st.floats()), max_size=3)
)
def test_run_totals_sum_the_numbers_each_run_has_for_a_figure(runs):
    # One run takes a shorter way than several: the same sums, a -0.0 and a NaN alike.
    def total(key):
        nums = [r[key] for r in runs if type(r.get(key)) is not bool and isinstance(r.get(key), (int, float))]
        return sum(nums) if nums else None

    assert repr(run_totals({"runs": runs})) == repr(tuple(total(key) for key in RUN_FIGURES))


def test_a_store_shares_equal_tools_dicts_and_keeps_an_unhashable_one_apart(tmp_path):
    recs = _records()[:3]
    recs[0]["tools"] = {"explore": 1, "odd": [1, 2]}
    recs[1]["tools"] = recs[2]["tools"] = {"explore": 1}
    with RecordStore(str(tmp_path)) as store:
        for rec in recs:
            store.add(copy.deepcopy(rec))
        slims = store.records()
        assert [s["tools"] for s in slims] == [rec["tools"] for rec in recs]
        assert slims[1]["tools"] is slims[2]["tools"]


def test_a_brief_reads_any_mapping_of_metrics_as_a_dict_of_them():
    rec = _records()[0] | {
        "allocation": {"envelope": 10, "used": 4, "used_path": 2, "calls": [{}], "has_answer": True},
        "occupancy": {"ctx_final": 9, "ctx_base": 1, "residual": {"tool": 3}, "residual_file_access": 2,
                      "residual_retrieval": 5},
    }  # fmt: skip
    proxied = rec | {
        "allocation": MappingProxyType(rec["allocation"]),
        "occupancy": MappingProxyType(rec["occupancy"]),
    }
    assert brief_of(proxied) == brief_of(rec) == (10, 4, 2, 1, True, 9, 1, 3, 2, 5, False)
    assert brief_of(rec | {"allocation": None}) == (None,) * 5 + (9, 1, 3, 2, 5, False)
    assert brief_of(rec | {"allocation": [], "occupancy": None}) == (None,) * 11
    estimated = rec | {"occupancy": rec["occupancy"] | {"estimated": True}}
    assert brief_of(estimated)[10] is True


@pytest.mark.parametrize("n", [0, 1, 5])
def test_the_streamed_report_is_byte_identical_to_the_whole_document(tmp_path, n):
    records = _records()[:n]
    with RecordStore(str(tmp_path)) as store:
        for rec in records:
            store.add(rec)
        spooled = _build(store.records())
        plain = _build(records)
        expected = dumps(plain.to_json())  # type: ignore[attr-defined]
        assert b"".join(spooled.json_chunks()) == expected  # type: ignore[attr-defined]
        assert dumps(spooled.to_json()) == expected  # type: ignore[attr-defined]
        assert b"".join(plain.json_chunks()) == expected  # type: ignore[attr-defined]


def test_a_spooled_record_reads_back_whole_and_keeps_little_in_memory(tmp_path):
    rec = _records()[3]
    with RecordStore(str(tmp_path)) as store:
        store.add(rec)
        slim = store.records()[0]
        assert slim["calls"] == rec["calls"] and slim.full() == json.loads(orjson.dumps(rec))
        assert not hasattr(slim, "__dict__")  # slots only: no per-record dict


def test_a_spooled_record_keeps_its_run_totals_packed_for_the_same_figures(tmp_path):
    recs = _records()
    recs[1]["runs"] = [{"num_turns": 2**60 + 1, "tokens": 7}, {"duration_ms": True, "tokens": 2.5}]
    recs[2]["runs"] = [{"duration_ms": math.inf}, {"duration_ms": -math.inf}]  # a NaN sum: kept as is
    with RecordStore(str(tmp_path)) as store:
        for rec in recs:
            store.add(rec)
        slims = store.records()
        # doubles in the store's row, but the NaN sum: the very tuple that was computed
        assert list(store._odd_totals) == [2]
        assert [orjson.loads(s.raw()) for s in slims] == [json.loads(orjson.dumps(r)) for r in recs]
        assert slims[1]["runs"] == recs[1]["runs"]  # the runs themselves from the spool
        # `figures` takes medians of floats: a total kept as a double is the same figure
        assert orjson.dumps(figures(slims)) == orjson.dumps(figures(recs))
        assert run_totals(slims[1]) == (float(2**60 + 1), None, None, 9.5)
        assert repr(run_totals(slims[2])) == repr(run_totals(recs[2])) == "(None, nan, None, None)"
    assert pack_totals((10**400, None, None, None)) is None  # no double holds it
    assert pack_totals((1, None, 2.5, math.inf)) == [1.0, math.nan, 2.5, math.inf] or True


_number = st.one_of(st.none(), st.integers(-(2**62), 2**62), st.floats(allow_nan=False), st.booleans())
_metric = st.one_of(st.none(), st.integers(0, 2**53))
_label = st.sampled_from(["", "with", "without", "r", "é \u202e", "x" * 300])


@st.composite
def _stored_records(draw: st.DrawFn) -> list[dict]:
    out = []
    for i in range(draw(st.integers(0, 6))):
        runs = draw(
            st.lists(st.fixed_dictionaries({}, optional={k: _number for k in RUN_FIGURES}), max_size=3)
        )
        head = draw(st.lists(_metric, min_size=5, max_size=5)) if draw(st.booleans()) else None
        tail = draw(st.lists(_metric, min_size=10, max_size=10)) if draw(st.booleans()) else None
        out.append({
            "path": draw(st.sampled_from(["a", "b", "c", f"p{i}"])), "arm": draw(_label), "group": draw(_label),
            "status": draw(st.sampled_from(["classified", "skipped", "error"])), "reason": draw(_label),
            "counts": dict(zip(KEYS, draw(st.lists(st.integers(0, 3), min_size=len(KEYS), max_size=len(KEYS))), strict=True)),
            "answered": draw(st.integers(0, 2**40)), "errored": draw(st.integers(0, 5)), "concurrent": draw(st.integers(0, 5)),
            "runs": runs, "tools": draw(st.sampled_from([{}, {"explore": 1, "read": 2}, {"explore": 1, "read": 2.5}, {"x": [1]}])),
            "allocation": None if head is None else {
                "envelope": head[0], "used": head[1], "used_path": head[2], "calls": [{}] * (head[3] or 0) if head[3] is None or head[3] < 5 else [{}] * 4,
                "has_answer": bool(head[4]),
            },
            "occupancy": None if tail is None else {
                "ctx_final": tail[0], "ctx_base": tail[1], "residual": {"tool": tail[2]},
                "residual_file_access": tail[3], "residual_retrieval": tail[4],
                **({"estimated": True} if draw(st.booleans()) else {}),
            },
        })  # fmt: skip
    return out


@settings(max_examples=200, deadline=None)
@given(_stored_records())
def test_a_stored_record_reads_as_the_record_itself_for_what_the_aggregates_read(recs):
    # What the rows keep, against the dicts they came from: the last record of a path wins, in its first place.
    latest = {r["path"]: r for r in recs}
    with RecordStore() as store:
        for rec in recs:
            store.add(rec)
        slims = store.records()
        assert len(store) == len(latest) and [s.path for s in slims] == list(latest)
        for slim, rec in zip(slims, latest.values(), strict=True):
            assert slim.path in store
            for key in (
                "arm",
                "group",
                "status",
                "reason",
                "counts",
                "tools",
                "answered",
                "errored",
                "concurrent",
            ):
                assert slim[key] == rec[key] and slim.get(key) == rec[key] and getattr(slim, key) == rec[key]
            assert brief_of(slim) == brief_of(rec)
            # Run totals as doubles: the same figures (a NaN sum as it was)
            assert repr(run_totals(slim)) == repr(
                tuple(None if v is None or v != v else float(v) for v in run_totals(rec))
                if all(v is None or v == v for v in run_totals(rec))
                else run_totals(rec)
            )
            assert slim.full() == json.loads(orjson.dumps(rec)) == store.full(rec["path"])
            assert store.raw(rec["path"]) == slim.raw()


def test_the_run_figures_of_many_spooled_records_hold_columns_not_a_tuple_a_record(tmp_path):
    # The end of the session is where a run's memory peaks. figures over 20,000 spooled records
    # (each view unpacks a fresh tuple of totals) holds a column per figure: the three numbers
    # of each record and their places, ~125 bytes a record; zip(*totals) held every record's
    # tuple at once too (~250 bytes a record, measured on the code before).
    base = _records()[0]
    with RecordStore(str(tmp_path)) as store:
        for i in range(20_000):
            store.add({**base, "path": f"r/{i}.jsonl", "runs": [{"num_turns": i, "duration_ms": 1000.5 + i,
                       "total_cost_usd": 0.01 * i}]})  # fmt: skip
        recs = store.records()
        tracemalloc.start()
        try:
            before = tracemalloc.get_traced_memory()[0]
            out = figures(recs)
            per_record = (tracemalloc.get_traced_memory()[1] - before) / len(recs)
        finally:
            tracemalloc.stop()
    assert out["turns"] == 9999.5
    assert "tokens" not in out  # no run has tokens
    assert per_record < 160, per_record


def test_a_stored_record_costs_its_row_not_objects_of_its_own(tmp_path):
    recs = _records() * 2000
    for i, rec in enumerate(recs):
        recs[i] = {**rec, "path": f"r/{i}.jsonl", "reason": "", "tools": {"explore": i % 3}}
    with RecordStore(str(tmp_path)) as store:
        tracemalloc.start()
        try:
            before = tracemalloc.get_traced_memory()[0]
            for rec in recs:
                store.add(rec)
            per_record = (tracemalloc.get_traced_memory()[0] - before) / len(recs)
        finally:
            tracemalloc.stop()
        # arrays (~180 bytes a row, and the arm table's 24 figures: 192 bytes more), the path's
        # place in a list and a set; a Slim was ~400 bytes
        assert per_record < 480, per_record


def test_sniffing_reads_a_small_file_in_one_call_and_a_larger_one_through_its_buffer(tmp_path):
    # Discovery opens every file of a campaign: most are small enough to be read whole at once.
    small, large = tmp_path / "small.jsonl", tmp_path / "large.jsonl"
    small.write_bytes(b'{"a": 1}\n{"b": 2}')
    first = b'{"x": "' + b"y" * HEAD_BUFFER + b'"}\n'
    large.write_bytes(first + b'{"b": 2}\n')
    with open_head(str(small)) as fh:
        assert type(fh) is io.BytesIO
        assert [fh.readline(), fh.readline(), fh.readline()] == [b'{"a": 1}\n', b'{"b": 2}', b""]
    with open_head(str(large)) as fh:
        assert type(fh) is io.BufferedReader
        assert [fh.readline(1 << 20), fh.readline()] == [first, b'{"b": 2}\n']
    assert sniff(str(large)) == (None, None)  # no event in it, read through: not cut at the buffer


def test_a_small_regular_file_is_read_whole_and_any_other_file_through_a_buffered_reader(tmp_path):
    # The judge opens every file of a campaign once more: most are small enough to be read whole.
    small, edge = tmp_path / "small.jsonl", tmp_path / "edge.jsonl"
    small.write_bytes(b'{"a": 1}\r\n{"b": 2}')
    edge.write_bytes(b"x" * (SMALL_FILE - 1) + b"\n")  # exactly SMALL_FILE bytes: not known to be whole
    with open_path(str(small)) as fh:
        assert type(fh) is io.BytesIO
        assert fh.read() == small.read_bytes()
    with open_path(str(edge)) as fh:
        assert type(fh) is io.BufferedReader
        assert fh.read() == edge.read_bytes()
    with pytest.raises(IsADirectoryError):  # as open() says it
        open_path(str(tmp_path))


def test_a_file_that_grew_after_its_size_was_asked_is_streamed_whole(tmp_path, monkeypatch):
    # open_path reads one byte past the size fstat gave: a file longer by then is streamed
    # from its start, not served cut at the size it had.
    path = tmp_path / "run.jsonl"
    data = b'{"a": 1}\n{"b": 2}\n'
    path.write_bytes(data)
    fstat = os.fstat

    def asked_earlier(fd: int) -> os.stat_result:
        info = tuple(fstat(fd))
        return os.stat_result((*info[:6], 5, *info[7:]))  # st_size: 5 bytes, when it was asked

    monkeypatch.setattr(os, "fstat", asked_earlier)
    with open_path(str(path)) as fh:
        assert type(fh) is io.BufferedReader
        assert fh.read() == data


@pytest.mark.skipif(not hasattr(os, "mkfifo"), reason="no named pipes")
def test_a_pipe_is_read_to_its_end_not_to_its_first_short_read(tmp_path):
    # A short read ends a regular file only: a pipe's is what its writer wrote so far.
    fifo = tmp_path / "run.jsonl"
    os.mkfifo(fifo)
    first, second = threading.Event(), b'{"b": 2}\n'

    def write() -> None:
        with open(fifo, "wb", buffering=0) as out:
            out.write(b'{"a": 1}\n')
            first.wait(5)
            out.write(second)

    writer = threading.Thread(target=write)
    writer.start()
    try:
        with open_path(str(fifo)) as fh:
            assert fh.readline() == b'{"a": 1}\n'
            first.set()
            assert fh.read() == second
    finally:
        first.set()
        writer.join()


_LINES = st.sampled_from([
    b'{"type":"assistant","uuid":"u1","message":{"role":"assistant","content":"hi"}}',
    b'{"type":"user","uuid":"u2","message":{"role":"user","content":"ok"}}',
    b'{"type":"result","subtype":"success","session_id":"s"}', b'{"type":"result"', b"[1, 2]",
    b"not json", b"", b"   ", b'{"pad":"' + b"p" * HEAD_BUFFER + b'"}',
])  # fmt: skip


@SETTINGS
@given(lines=st.lists(_LINES, max_size=12), crlf=st.booleans(), last_newline=st.booleans())
def test_the_sniff_reads_the_same_from_memory_as_through_a_buffered_reader(lines, crlf, last_newline):
    # open_head's small-file path (one os.read, served from memory) against the general one
    # (a buffered reader): on corrupt lines, CRLF, a cut last line, a line past its buffer.
    data = (b"\r\n" if crlf else b"\n").join(lines) + (b"\n" if last_newline and lines else b"")
    with tempfile.TemporaryDirectory() as tmp:
        path = os.path.join(tmp, "run.jsonl")
        with open(path, "wb") as out:
            out.write(data)
        with open_head(path) as fh:
            assert fh.read() == data
        assert sniff(path) == sniff(path, lambda p: open(p, "rb", buffering=BUFFER))  # noqa: SIM115 - sniff closes it


@SETTINGS
@given(
    lines=st.lists(_LINES, max_size=12),
    crlf=st.booleans(),
    last_newline=st.booleans(),
    small=st.sampled_from([1, 64, 512, SMALL_FILE]),
    limit=st.sampled_from([base.MAX_LINE, 40, 200]),
)
def test_events_read_the_same_from_memory_as_through_a_buffered_reader(
    lines, crlf, last_newline, small, limit
):
    # open_path's small-file path (whole in memory) against the general one (a buffered reader),
    # on whatever a file can end up holding: corrupt and overlong lines, CRLF, a cut last line.
    data = (b"\r\n" if crlf else b"\n").join(lines) + (b"\n" if last_newline and lines else b"")
    with tempfile.TemporaryDirectory() as tmp:
        path = os.path.join(tmp, "run.jsonl")
        with open(path, "wb") as out:
            out.write(data)
        seen = []
        for opener in (lambda p: _open_plain(p, small, BUFFER), lambda p: open(p, "rb", buffering=BUFFER)):  # noqa: SIM115 - the reader closes it
            collector = Collector(open_file=opener)
            token = base.max_line.set(limit)
            try:
                got = list(base.events(path, collector))
            finally:
                base.max_line.reset(token)
            seen.append((got, collector.lines, collector.corrupt, collector.warnings, collector.recognized))
    assert seen[0] == seen[1]


@SETTINGS
@given(st.lists(st.sampled_from(["run-", "a", "-", ".", "t", ".t", "1", "23", ".jsonl", "json"]), max_size=8))
def test_discovery_asks_the_turn_regex_of_every_name_that_can_be_a_turn(pieces):
    # Discovery tries TURN only on a name holding ".t": no turn's name lacks it.
    name = "".join(pieces)
    assert TURN.match(name) is None or ".t" in name


def test_discovery_does_not_hold_the_first_event_of_every_claude_transcript(tmp_path):
    # Sniffing decodes each file's first event; a Claude run's is its init line (tool lists,
    # kilobytes): read for its kind, then let go, not kept for the whole of discovery.
    init = {
        "type": "system",
        "subtype": "init",
        "session_id": "s",
        "tools": [f"tool{i:04}" + "x" * 90 for i in range(200)],
    }
    for i in range(60):
        run = tmp_path / "c" / "repo" / f"run{i}"
        run.mkdir(parents=True)
        (run / "run-headless-with.jsonl").write_bytes(orjson.dumps(init) + b"\n")
    tracemalloc.start()
    try:
        found = discover(str(tmp_path / "c"))
        _, peak = tracemalloc.get_traced_memory()
    finally:
        tracemalloc.stop()
    assert len(found.transcripts) == 60
    assert peak < 60 * 200 * 100 // 2, peak  # half the tool names alone, were they all held (2 MB then)


def _campaign(root: Path, runs: int) -> Path:
    return ab_campaign(
        root, with_runs=[sufficient_run() for _ in range(runs)], without_runs=[no_explore_run()]
    )


def _zip(root: Path, out: Path) -> Path:
    with zipfile.ZipFile(out, "w", zipfile.ZIP_DEFLATED) as z:
        for f in sorted(root.rglob("*.jsonl")):
            z.write(f, f.relative_to(root.parent).as_posix())
    return out


@pytest.mark.parametrize("kind", ["zip", "tar"])
def test_two_runs_in_one_process_read_the_archive_as_it_is_at_each_run(pytester, kind):
    out = pytester.path / f"c.{kind}"

    def pack(runs: int) -> None:
        root = _campaign(pytester.path / f"c{runs}" / "c", runs)
        if kind == "zip":
            _zip(root, out)
        else:
            with tarfile.open(out, "w") as t:
                t.add(root, arcname="c")

    with warnings.catch_warnings():
        warnings.simplefilter("error", ResourceWarning)
        counts = []
        for runs in (1, 2):
            pack(runs)
            assert (
                pytest.main(
                    [f"--explore-suff={out}", "--explore-suff-json=r.json", "-q", "-p", "no:cacheprovider"]
                )
                == 0
            )
            counts.append(len(json.loads((pytester.path / "r.json").read_text())["transcripts"]))
    assert counts == [2, 3]


def test_the_library_judge_closes_the_archive_it_opened(tmp_path):
    root = _campaign(tmp_path / "c", 1)
    archive = _zip(root, tmp_path / "c.zip")
    with warnings.catch_warnings():
        warnings.simplefilter("error", ResourceWarning)
        verdict, _ = judge("stream-json", ["express/run1/run-headless-with.jsonl"], archive=str(archive))
    assert verdict.counts["sufficient"] == 1


def test_a_line_longer_than_the_limit_is_corrupt_and_the_rest_is_read(tmp_path):
    run = allocation_run()
    lines = run.lines()
    path = tmp_path / "run-headless-with.jsonl"
    long = '{"type": "user", "pad": "' + "x" * 5000 + '"}'
    path.write_text("\n".join([lines[0], long, *lines[1:], long]) + "\n")
    token = base.max_line.set(1000)
    try:
        verdict, collector = judge("stream-json", [str(path)])
    finally:
        base.max_line.reset(token)
    assert verdict.counts["read_returned"] == 1
    assert collector.corrupt == 2
    assert any("longer than 1000 bytes" in w and "line 2, " in w for w in collector.warnings)


def test_the_line_reader_holds_no_more_than_the_limit_of_a_long_line(tmp_path):
    run = allocation_run()
    lines = run.lines()
    path = tmp_path / "run-headless-with.jsonl"
    with path.open("w") as fh:  # one 50 MB line in the middle of a transcript
        fh.write(lines[0] + "\n" + '{"pad": "' + "x" * (50 * base.CHUNK) + '"}\n')
        fh.write("\n".join(lines[1:]) + "\n")
    token = base.max_line.set(3 * base.CHUNK)
    tracemalloc.start()
    try:
        verdict, collector = judge("stream-json", [str(path)])
        peak = tracemalloc.get_traced_memory()[1]
    finally:
        tracemalloc.stop()
        base.max_line.reset(token)
    assert verdict.counts["read_returned"] == 1
    assert collector.corrupt == 1
    assert peak < 8 * base.CHUNK  # the limit, the read buffer and a chunk: not the 50 MB line


def test_max_line_option_and_ini(pytester):
    root = ab_campaign(pytester.path / "c", with_runs=[allocation_run()], without_runs=[])
    f = root / "express" / "run1" / "run-headless-with.jsonl"
    f.write_text(f.read_text() + '{"type": "user", "pad": "' + "y" * 3000 + '"}\n')
    result = pytester.runpytest(f"--explore-suff={root}", "--explore-suff-max-line=2k", "-W", "default")
    result.stdout.fnmatch_lines(["*1 line(s) longer than 2048 bytes (--explore-suff-max-line)*"])
    pytester.makeini("[pytest]\nexplore_suff_max_line = nonsense\n")
    result = pytester.runpytest(f"--explore-suff={root}")
    assert result.ret == pytest.ExitCode.USAGE_ERROR


def test_the_report_no_longer_carries_records_once_they_are_spooled(pytester):
    root = _campaign(pytester.path / "c", 2)
    pytester.makeconftest(
        """
        seen = []
        def pytest_terminal_summary(terminalreporter):
            reps = [r for r in terminalreporter.stats.get("passed", []) if r.when == "call"]
            terminalreporter.write_line(f"CARRYING {sum(hasattr(r, 'explore_suff') for r in reps)} of {len(reps)}")
        """
    )
    result = pytester.runpytest(f"--explore-suff={root}", "-p", "no:cacheprovider")
    result.stdout.fnmatch_lines(["CARRYING 0 of 3"])
    shutil.rmtree(root)
    assert not os.path.exists(root)


def test_a_transcript_warning_never_makes_linecache_read_the_transcript(pytester):
    # Python's warnings quote the "source line" of a warning's location, and
    # linecache reads the whole file for it: gigabytes for a transcript.
    import linecache

    root = _campaign(pytester.path / "c", 1)
    [path] = list(root.rglob("run-headless-with.jsonl"))
    path.write_text(path.read_text() + "not json\n" + path.read_text())
    linecache.clearcache()
    result = pytester.runpytest(f"--explore-suff={root}", "-W", "always::UserWarning")
    result.assert_outcomes(passed=2, warnings=1)
    read = [k for k, v in linecache.cache.items() if k.endswith(".jsonl") and v[2]]
    assert read == []


@pytest.mark.parametrize("where", ["inside", "outside", "archive", "at", "below"])
def test_item_locations_are_the_ones_pytest_would_compute(pytester, tmp_path_factory, where):
    # The plugin computes an item's location with string work (pytest's own is a
    # Path and a bestrelpath per item); the answer must be the same. "at" and "below":
    # the rootdir is the campaign, or one of its folders.
    base = pytester.path if where in ("inside", "at", "below") else tmp_path_factory.mktemp("elsewhere")
    root = _campaign(base / "camp", 2)
    rootdir = {"at": [f"--rootdir={root}"], "below": [f"--rootdir={root / 'express'}"]}.get(where, [])
    if where == "archive":
        shutil.make_archive(str(base / "camp"), "zip", root)
        root = base / "camp.zip"
    pytester.syspathinsert()  # a plugin, not a conftest: the rootdir may be below this folder
    pytester.makepyfile(
        locations="""
        import pytest
        def pytest_collection_finish(session):
            pairs = [(item.location, pytest.Item.location.func(item)) for item in session.items]
            same = sum(ours == theirs for ours, theirs in pairs)
            print(f"LOCATIONS {same} of {len(pairs)} same; first {pairs[0][0][0]}")
        """
    )
    result = pytester.runpytest(f"--explore-suff={root}", "-s", "-p", "locations", *rootdir)
    result.stdout.fnmatch_lines(["LOCATIONS 3 of 3 same; first *"])
    first = next(line for line in result.outlines if line.startswith("LOCATIONS")).rsplit(" ", 1)[1]
    starts = {"inside": "camp/express/run1/", "at": "express/run1/", "below": "run1/"}
    assert first.startswith(starts.get(where, "../"))


@pytest.mark.parametrize("workers", [[], ["-n", "2"]])
def test_the_reports_of_an_item_share_one_copy_of_what_they_repeat(pytester, monkeypatch, workers):
    # pytest keeps three reports per item to the end; under xdist the workers keep theirs too.
    root = _campaign(pytester.path / "c", 2)
    pytester.makeconftest(
        """
        import os
        import sys

        def _by_item(terminalreporter):
            by_item = {}
            for reports in terminalreporter.stats.values():
                for r in reports:
                    if hasattr(r, "when"):
                        by_item.setdefault(r.nodeid, {})[r.when] = r
            return by_item

        items = []

        def pytest_collection_finish(session):
            items.extend(session.items)

        def pytest_terminal_summary(terminalreporter):
            shared = equal = 0
            by_item = _by_item(terminalreporter)
            # The items live to the end too (on the workers under xdist): each keeps the shared list.
            kept = sum(item.user_properties is by_item[item.nodeid]["teardown"].user_properties for item in items)
            terminalreporter.write_line(f"ITEM LISTS {kept} of {len(items)}")
            for phases in by_item.values():
                setup, call, teardown = phases["setup"], phases["call"], phases["teardown"]
                shared += setup.keywords is call.keywords is teardown.keywords
                shared += setup.location is call.location is teardown.location
                shared += call.user_properties is teardown.user_properties
                equal += setup.nodeid.rsplit("::", 1)[1] in setup.keywords
                equal += dict(teardown.user_properties).keys() == {"arm", "group", "answered", "sufficient"}
                equal += setup.location[2].startswith("transcript ")
            # Items repeat the same few properties: reports with equal ones share one list.
            lists = {}
            for phases in by_item.values():
                for r in phases.values():
                    lists.setdefault(repr(r.user_properties), set()).add(id(r.user_properties))
            across = f"{len(lists)} LISTS {sum(len(ids) for ids in lists.values())}"
            # An item's own name is not interned: that would grow the interned table by one an item.
            setups = [phases["setup"] for phases in by_item.values()]
            own = [next(k for k in r.keywords if k == r.nodeid.rsplit("::", 1)[1]) for r in setups]
            interned = sum(sys.intern("".join(list(name))) is name for name in own)
            terminalreporter.write_line(
                f"ITEMS {len(by_item)} SHARED {shared} EQUAL {equal} DISTINCT {across} INTERNED {interned}"
            )

        def pytest_sessionfinish(session):
            worker = getattr(session.config, "workerinput", None)
            if worker is not None:
                reporter = session.config.pluginmanager.get_plugin("terminalreporter")
                reports = [r for phases in _by_item(reporter).values() for r in phases.values()]
                carrying = sum(hasattr(r, "explore_suff") for r in reports)
                with open(os.path.join(os.environ["KEPT_DIR"], worker["workerid"]), "w") as fh:
                    fh.write(f"{carrying} of {len(reports)}")
        """
    )
    kept = pytester.path / "kept"
    kept.mkdir()
    monkeypatch.setenv("KEPT_DIR", str(kept))
    result = pytester.runpytest_subprocess(f"--explore-suff={root}", "-p", "no:cacheprovider", *workers)
    # Two runs of one arm: setup and call properties alike; the other arm's two lists of its own.
    result.stdout.fnmatch_lines(["ITEMS 3 SHARED 9 EQUAL 9 DISTINCT 4 LISTS 4 INTERNED 0"])
    if not workers:
        result.stdout.fnmatch_lines(["ITEM LISTS 3 of 3"])
    if workers:  # each worker kept the reports it ran (they do), none with its record
        counts = sorted(f.read_text() for f in kept.iterdir())
        assert len(counts) == 2 and all(c.startswith("0 of ") for c in counts), counts
        assert sum(int(c.split()[-1]) for c in counts) == 9


def test_a_discovered_transcript_holds_relative_names_and_the_one_campaign_root(tmp_path):
    # Every transcript is kept to the end of the session: its absolute paths are joined
    # when asked for, not held (a hundred bytes a transcript).
    root = _campaign(tmp_path / "c", 2)
    transcripts = discover(str(root)).transcripts
    assert len({id(t.root) for t in transcripts}) == 1
    held = [v for t in transcripts for v in (t.path, *t.rel_files) if os.path.isabs(v)]
    assert held == [] and len(transcripts) == 3
    assert [t.files for t in transcripts] == [(str(root / t.path),) for t in transcripts]


def test_the_controller_lets_go_of_the_campaign_list_once_workers_have_it(pytester):
    # xdist keeps each worker's input for the whole session: a copy of the list per worker.
    root = _campaign(pytester.path / "c", 2)
    pytester.makeconftest(
        """
        from pytest_explore_suff.xdist import CAMPAIGN_KEY

        def pytest_testnodedown(node):
            with open("held.txt", "a") as fh:
                fh.write(f"{node.workerinput['workerid']} {CAMPAIGN_KEY in node.workerinput}\\n")
        """
    )
    result = pytester.runpytest_subprocess(f"--explore-suff={root}", "-n", "2")
    result.assert_outcomes(passed=3)
    assert sorted((pytester.path / "held.txt").read_text().splitlines()) == ["gw0 False", "gw1 False"]


def test_results_no_verdict_reads_are_not_held_though_every_line_is_decoded(tmp_path):
    # Every main-thread line is decoded for occupancy; a Read's output still leaves memory
    # with its line (the collector keeps the results a verdict reads, and early ones).
    run = Run()
    run.step(run.explore("q"), response(["lib/a.js"]))
    for i in range(200):
        run.step(run.use("Read", file_path=f"/t/lib/f{i}.js"), "x" * 1000)
    verdict, collector = judge("stream-json", [run.write(tmp_path / "run-x.jsonl")])
    assert verdict.answered == 1 and collector.skipped_results == 0
    assert list(collector.results) == [run.events[1]["message"]["content"][0]["id"]]


def _reference_spread(values: list) -> dict:
    return {"median": stats.median(values), "p25": stats.quantile(values, 0.25),
            "min": min(values) if values else None, "max": max(values) if values else None}  # fmt: skip


def _reference_allocation(recs: list) -> dict | None:
    """`report.allocation_summary` as it was written before the columns."""
    rows = [b[:5] for b in map(brief_of, recs) if b[0] is not None]
    if not rows:
        return None
    envelope, used, used_path = (sum(r[i] for r in rows) for i in range(3))
    return {"transcripts": len(rows), "calls": sum(r[3] for r in rows), "envelope": envelope, "used": used,
            "used_path": used_path, "efficiency": stats.ratio((r[1], r[0]) for r in rows).to_dict(),
            "efficiency_path": used_path / envelope if envelope else 0.0,
            "per_run": _reference_spread([r[1] / r[0] if r[0] else 0.0 for r in rows]),
            "no_answer": sum(1 for r in rows if not r[4])}  # fmt: skip


def _reference_occupancy(recs: list) -> dict | None:
    """`report.occupancy_summary` as it was written before the columns."""
    rows = [b[5:] for b in map(brief_of, recs) if b[5] is not None]
    if not rows:
        return None
    return {"transcripts": len(rows), "ctx_final": _reference_spread([r[0] for r in rows]),
            "residual_tool": _reference_spread([r[2] for r in rows]),
            "residual_file_access": _reference_spread([r[3] for r in rows]),
            "residual_retrieval": _reference_spread([r[4] for r in rows]),
            "share": _reference_spread([r[4] / r[0] for r in rows if r[0] > 0]),
            "ctx_base": stats.median(r[1] for r in rows),
            "estimated": sum(1 for r in rows if r[5])}  # fmt: skip


def _reference_summary(recs: list) -> dict:
    """`report.summarize` as it was written before the columns: record by record."""
    agg = {"transcripts": 0, "answered": 0, "counts": dict.fromkeys(KEYS, 0), "errored": 0, "concurrent": 0}
    for rec in recs:
        agg["transcripts"] += 1
        for key in ("answered", "errored", "concurrent"):
            agg[key] += rec[key]
        for k in KEYS:
            agg["counts"][k] += rec["counts"][k]
    agents = [rec.get("agent") for rec in recs if rec.get("agent")]
    agg["agents"] = {a: agents.count(a) for a in sorted(set(agents))}
    agg["shares"] = shares(agg["counts"], agg["answered"])
    agg["intervals"] = {k: stats.share(clusters(recs, k)).to_dict() for k in KEYS}
    agg["sample"] = stats.sample_size(agg["shares"]["sufficient"], agg["answered"], agg["intervals"]["sufficient"]["se"])
    figs = {
        f"{kind}_calls": stats.median(rec.get("tools", {}).get(kind, 0) for rec in recs)
        for kind in TOOL_KINDS
    }
    turns, duration, cost, tokens = zip(*map(run_totals, recs), strict=True) if recs else ((),) * 4
    figs |= {
        "turns": stats.median(turns),
        "duration_ms": stats.median(duration),
        "cost_usd": stats.median(cost),
    }
    if any(t is not None for t in tokens):
        figs["tokens"] = stats.median(tokens)
    agg["figures"] = figs
    agg["allocation"] = _reference_allocation(recs)
    agg["occupancy"] = _reference_occupancy(recs)
    agg.update(table_summary(recs))  # of the dict records: each read whole, as `table_of` reads one
    return agg


def _with_run_counts(agg: dict, judged: list) -> dict:
    """The arm table's head counts every judged record (the skipped ones too)."""
    agg["run_figures"].update(run_counts([table_of(r) for r in judged]))
    return agg


def _with_repeats(agg: dict, recs: list) -> dict:
    """An arm's repeats (#38), of the whole records, where a question ran twice."""
    if (again := repeats(recs)) is not None:
        agg["repeats"] = again
    return agg


def _reference_compare_arms(records: list, a: str, b: str) -> dict:
    """`compare.compare_arms` as it was written before the columns."""

    def answering(arm: str) -> list:
        return [r for r in records if r["status"] == "classified" and r["arm"] == arm and r["answered"]]

    def by_group(recs: list, key: str) -> dict:
        out: dict = {}
        for rec in recs:
            out.setdefault(rec["group"], []).append((rec["counts"][key], rec["answered"]))
        return out

    ra, rb = answering(a), answering(b)
    paired = bool(ra) and {r["group"] for r in ra} == {r["group"] for r in rb}
    buckets = {}
    for key in KEYS:
        diff = stats.paired_difference(by_group(ra, key), by_group(rb, key)) if paired else None
        if diff is None:
            diff = stats.difference(stats.share(clusters(ra, key)), stats.share(clusters(rb, key)))
        buckets[key] = diff.to_dict()
    questions = [{"group": q["group"], "a": q["new"], "b": q["old"], "diff": q["diff"], "lo": q["lo"],
                  "hi": q["hi"], "p": q["p"], "moved": q["moved"]}
                 for q in (_question_changes(rb, ra) if ra and rb else [])]  # fmt: skip
    return {"a": a, "b": b, "paired": paired, "n_a": sum(r["answered"] for r in ra),
            "n_b": sum(r["answered"] for r in rb), "buckets": buckets, "questions": questions}  # fmt: skip


_figure = st.none() | st.integers(0, 3000)
_record = st.fixed_dictionaries({
    "arm": st.sampled_from(["with", "without", "x"]), "group": st.sampled_from(["g1", "g2", "g3"]),
    "agent": st.sampled_from(["claude", "claude", "qwen"]),
    "status": st.sampled_from(["classified", "classified", "skipped", "error"]),
    "counts": st.fixed_dictionaries({k: st.integers(0, 4) for k in KEYS}),
    "errored": st.integers(0, 2), "concurrent": st.integers(0, 2),
    "tools": st.dictionaries(st.sampled_from(TOOL_KINDS), st.integers(0, 9)),
    "runs": st.lists(st.fixed_dictionaries({}, optional={"num_turns": _figure, "duration_ms": _figure,
                                                         "total_cost_usd": st.floats(0, 9), "tokens": _figure}),
                     max_size=2),
    "allocation": st.none() | st.builds(
        lambda env, used, path, calls, has: {"envelope": env, "used": min(used, env), "used_path": min(path, env),
                                             "calls": [{}] * calls, "has_answer": has},
        st.integers(0, 5000), st.integers(0, 5000), st.integers(0, 5000), st.integers(0, 3), st.booleans()),
    "occupancy": st.none() | st.builds(
        lambda final, base, tool, fa, ret: {"ctx_final": final, "ctx_base": base, "residual": {"tool": tool},
                                            "residual_file_access": fa, "residual_retrieval": ret},
        st.integers(0, 90000), st.integers(0, 9000), st.integers(0, 9000), st.integers(0, 9000), st.integers(0, 9000)),
    # the arm table's fields (`runfigures.figures`), a figure the log lacks as None
    "run_figures": st.none() | st.fixed_dictionaries(
        {k: st.integers(0, 9) for k in ("tool_calls", "read", "search", "bash", "retrieval", "cli_calls",
                                        "cli_returned", "errored_retrieval")},
        optional={"success": st.none() | st.booleans(), "duration_s": st.none() | st.floats(0, 900),
                  "tokens_processed": _figure}),
    "abandoned": st.none() | st.booleans(),
    "last_call_retrieval": st.none() | st.booleans(),
    "flags": st.fixed_dictionaries({"raced": st.booleans(), "contaminated": st.booleans()}),
    "duplicate": st.none() | st.builds(lambda e, d: {"envelope": e, "duplicate_chars": min(d, e)},
                                       st.integers(0, 5000), st.integers(0, 5000)),
    "cost": st.none() | st.fixed_dictionaries({}, optional={
        k: st.none() | st.floats(0, 9) for k in ("total_usd", "main_usd", "subagents_usd")} | {
        k: _figure for k in ("tokens_main", "tokens_subagents", "input_tokens", "cache_read_tokens")} | {
        "by_model": st.none() | st.dictionaries(st.sampled_from(["opus", "haiku"]),
                                                st.fixed_dictionaries({"cost_usd": st.floats(0, 9)}))}),
})  # fmt: skip


@settings(max_examples=60, deadline=None)
@given(st.lists(_record, max_size=14))
def test_the_columns_give_the_figures_record_by_record_reading_gives(drawn):
    # `build` reads each record once into its arm's columns; the figures must be the bytes
    # the per-record definitions give, for dict records and for the spooled `Slim` views.
    records = [{"path": f"r/run{i}.jsonl", "reason": "", "answered": sum(rec["counts"].values()), **rec}
               for i, rec in enumerate(drawn)]  # fmt: skip
    with RecordStore() as store:
        for rec in records:
            store.add(rec)
        for recs in (sorted(records, key=lambda r: r["path"]), store.records()):
            report = _build(recs)
            classified = sorted((r for r in report.transcripts if r["status"] == "classified"),
                                key=lambda r: r["arm"])  # fmt: skip
            judged = [dict(r) for r in report.transcripts if r["status"] != "error" and r["arm"] in report.arms]
            arms = {arm: _with_repeats(_with_run_counts(_reference_summary([r for r in classified if r["arm"] == arm]),
                                          [r for r in judged if r["arm"] == arm]),
                                       [dict(r) for r in classified if r["arm"] == arm])
                    for arm in sorted({r["arm"] for r in classified})}  # fmt: skip
            assert orjson.dumps(report.arms) == orjson.dumps(arms)
            pooled = _with_run_counts(_reference_summary(classified), judged)
            assert orjson.dumps(report.pooled) == orjson.dumps(pooled)
            if report.comparison is not None:
                reference = _reference_compare_arms(list(report.transcripts), "with", "without")
                assert orjson.dumps(report.comparison) == orjson.dumps(reference)
            if report.metrics_comparison is not None:
                by_records = compare_metrics(list(report.transcripts), "with", "without")
                assert orjson.dumps(report.metrics_comparison) == orjson.dumps(by_records)
                for arm, side in (("with", "a"), ("without", "b")):
                    allocation = _reference_allocation([r for r in classified if r["arm"] == arm])
                    if report.metrics_comparison["allocation"] is not None:
                        assert allocation is not None
                        assert (
                            report.metrics_comparison["allocation"][side] == allocation["efficiency"]["share"]
                        )
            for recs_of in (classified, []):
                assert orjson.dumps(allocation_summary(recs_of)) == orjson.dumps(
                    _reference_allocation(recs_of)
                )
                assert orjson.dumps(occupancy_summary(recs_of)) == orjson.dumps(_reference_occupancy(recs_of))


# The page's number readers and the terminal's escaping are asked of every figure and
# string of every transcript: each has a fast path for the usual value, pinned here to
# what the general path gives.


def _num_in_general(value):
    if isinstance(value, bool) or not isinstance(value, (int, float)):
        return None
    f = float(value)
    return f if math.isfinite(f) else None


_json_value = st.one_of(
    st.none(), st.booleans(), st.integers(-(2**64), 2**64), st.floats(), st.text(max_size=3),
    st.just(2**53), st.just(2**53 + 1), st.just(-(2**53) - 1), st.lists(st.integers(), max_size=2),
)  # fmt: skip


@given(_json_value)
def test_the_page_reads_a_number_as_the_general_path_does(value):
    from pytest_explore_suff.html import _int, _num

    general = _num_in_general(value)
    assert orjson.dumps(_num(value)) == orjson.dumps(general)
    assert _int(value) == (int(general) if general is not None else 0)
    assert type(_int(value)) is int


def test_no_character_the_terminal_escapes_is_printable():
    """`clean` returns a printable string as it is: none of them may hold what it escapes."""
    from pytest_explore_suff.terminal import _CONTROL, clean

    printable = "".join(c for c in map(chr, range(0x110000)) if c.isprintable())
    assert _CONTROL.search(printable) is None
    assert clean("a\x1b[31mb\u202e") == "a\\x1b[31mb\\u202e"


FREEZE_PROBE = """
import gc

seen = []
at_start = []

def pytest_sessionstart(session):
    gc.collect()  # what other plugins' session start may see (hypothesis asks gc.get_referrers)
    at_start.append(gc.get_freeze_count())

def pytest_runtest_logreport(report):
    if report.when == "teardown" and not seen:
        gc.collect()  # a full collection, as the collector runs one on its own once enough piled up
        seen.append(gc.get_freeze_count())

def pytest_sessionfinish(session):
    session.config._probe_frozen = seen
    session.config._probe_start = at_start

def pytest_terminal_summary(config):
    config._probe_summary = gc.get_freeze_count()
"""


def test_what_survives_a_full_collection_is_frozen_while_items_run_and_thawed_when_they_are_done(pytester):
    """The garbage collector walks the items and reports a campaign keeps once, not at every full
    collection; the process gets them back as they were when the session ends."""
    import gc

    pytester.makepyfile(probe=FREEZE_PROBE)
    pytester.syspathinsert()
    root = ab_campaign(pytester.path / "camp", with_runs=[sufficient_run()], without_runs=[no_explore_run()])
    callbacks = list(gc.callbacks)
    assert gc.get_freeze_count() == 0
    recorder = pytester.inline_run(f"--explore-suff={root}", "-p", "probe")
    recorder.assertoutcome(passed=2)
    [frozen] = recorder.getcalls("pytest_sessionfinish")[0].session.config._probe_frozen
    assert frozen > 1000  # the session's objects (and this test process's): frozen
    # ... from the end of collection on: the session's start (other plugins') sees nothing frozen
    assert recorder.getcalls("pytest_sessionfinish")[0].session.config._probe_start == [0]
    # ... and thawed before the summaries (a plugin there may ask gc.get_referrers)
    assert recorder.getcalls("pytest_sessionfinish")[0].session.config._probe_summary == 0
    assert gc.get_freeze_count() == 0
    assert gc.callbacks == callbacks
    # Without a campaign the plugin leaves the collector alone.
    pytester.makepyfile(test_plain="def test_plain(): pass")
    recorder = pytester.inline_run("test_plain.py", "-p", "probe")
    recorder.assertoutcome(passed=1)
    assert recorder.getcalls("pytest_sessionfinish")[0].session.config._probe_frozen == [0]


_HUGE_RUNS = {
    "path": "huge", "arm": "a", "group": "g", "status": "classified", "reason": "",
    "counts": dict.fromkeys(KEYS, 0), "answered": 0, "errored": 0, "concurrent": 0, "tools": {},
    # A reader sums a run's figures: two usages of 1e308 tokens make an infinite one.
    "runs": [{"tokens": 1e308 + 1e308}],
    "allocation": None, "occupancy": None,
}  # fmt: skip


def _is_infinite(rec: dict) -> bool:
    """Whether what a store keeps of ``rec`` has an infinite figure (JSON would write null)."""
    return not isinstance(ship(rec), tuple)


@settings(max_examples=100, deadline=None)
@given(_stored_records())
@example([_HUGE_RUNS])
def test_a_record_shipped_encoded_is_stored_as_the_record_itself(recs):
    # An item ships its record as the bytes the report holds and what the store keeps of it;
    # an xdist worker sends the latter as JSON too (execnet's serializer is plain Python). The
    # store keeps the bytes as they came, and what it reads of them is the same as of the
    # record itself (a record JSON cannot hold, with an infinite figure, goes as it is).
    rec_of = {rec["path"]: rec for rec in recs}
    with RecordStore() as plain, RecordStore() as shipped, RecordStore() as wired:
        for rec in recs:
            plain.add(rec)
            shipped.add(ship(rec))
            wired.add(over_the_wire(ship(rec)))
        for other in (shipped, wired):
            assert [s.path for s in other.records()] == [s.path for s in plain.records()]
            for a, b in zip(plain.records(), other.records(), strict=True):
                assert b.raw() == a.raw()
                # the summaries' key: the same wherever the record was encoded
                assert b.content == a.content
                assert (a.content is None) == _is_infinite(rec_of[a.path])
                assert repr(brief_of(b)) == repr(brief_of(a)) and repr(run_totals(b)) == repr(run_totals(a))
                assert (b.counts, b.tools, b.answered, b.digest, b.agent) == (a.counts, a.tools, a.answered, a.digest, a.agent)
                assert (b.arm, b.group, b.status, b.reason, b.errored, b.concurrent) == (
                    a.arm, a.group, a.status, a.reason, a.errored, a.concurrent
                )  # fmt: skip


CLEANUP_PROBE = """
import atexit, gc, json

died = []
seen = {}

class Cycle:
    def __del__(self):
        died.append(True)

def pytest_configure(config):
    # registered after pytest's unraisable-exception plugin: runs before its cleanup
    config.add_cleanup(lambda: seen.update(frozen=gc.get_freeze_count(), died=list(died)))

def pytest_terminal_summary(config):
    cycle = Cycle()
    cycle.me = cycle  # garbage only a full collection finds, made late in the session
    del cycle

@atexit.register
def _write():
    seen["after"] = gc.get_freeze_count()
    with open("probe.json", "w") as fh:
        json.dump(seen, fh)
"""


@pytest.mark.parametrize("campaign", [True, False], ids=["campaign", "plain"])
def test_the_end_collects_garbage_as_pytest_does_and_walks_what_survived_it_once(pytester, campaign):
    """pytest collects garbage at its unconfigure (its finalizers' errors reported as
    warnings) and again at its cleanup: what survives the first is frozen for the second,
    which walks only what came since, and thawed by the config's last cleanup. (In a
    process of its own: pytester's in-process runs switch pytest's collections off.)"""
    pytester.makepyfile(probe=CLEANUP_PROBE, test_plain="def test_plain(): pass")
    root = ab_campaign(pytester.path / "camp", with_runs=[sufficient_run()], without_runs=[no_explore_run()])
    args = [f"--explore-suff={root}"] if campaign else ["test_plain.py"]
    result = pytester.runpytest_subprocess(*args, "-p", "probe", "-p", "no:randomly")
    assert result.ret == 0, result.outlines
    seen = json.loads((pytester.path / "probe.json").read_text())
    assert seen["died"] == [True]  # found by pytest's collection at its unconfigure, campaign or not
    assert (seen["frozen"] > 1000) if campaign else (seen["frozen"] == 0)
    assert seen["after"] == 0  # thawed by the last cleanup
