"""Under pytest-xdist a worker sends an item's events as one message (`xdist.Batcher`), which
the controller hands to xdist one by one (`xdist.unpack_batches`): what the controller does
with them, and so every report, is what it did with six messages an item."""

from __future__ import annotations

import threading
import time
import xml.etree.ElementTree as ET
from pathlib import Path
from types import SimpleNamespace
from typing import Any

import pytest
from builders import ab_campaign, allocation_run, no_explore_run, sufficient_run

from pytest_explore_suff.xdist import (
    BATCH_EVENT,
    WIRE_RECORD,
    WIRE_REPORT,
    Batcher,
    pack,
    unpack,
    unpack_batches,
)

ITEM = [
    ("logstart", {"nodeid": "c::a", "location": ("c/a", None, "a")}),
    ("testreport", {"data": {"when": "setup"}}),
    ("testreport", {"data": {"when": "call"}}),
    ("warning_recorded", {"nodeid": "c::a", "when": "runtest"}),
    ("testreport", {"data": {"when": "teardown"}}),
    ("logfinish", {"nodeid": "c::a", "location": ("c/a", None, "a")}),
    ("runtest_protocol_complete", {"item_index": 0, "duration": 0.25}),
]


class Sent(list[tuple[str, dict[str, Any]]]):
    """What a `Batcher` handed to xdist's own `sendevent`."""

    def __call__(self, name: str, **kwargs: Any) -> None:
        self.append((name, kwargs))


def test_an_items_events_go_as_one_message_in_the_order_they_happened():
    sent = Sent()
    batcher = Batcher(sent)
    for _ in range(2):
        for name, kwargs in ITEM[:-1]:
            batcher.sendevent(name, **kwargs)
        assert len(sent) in (0, 1)  # nothing of the item's until it is done
        batcher.sendevent(*ITEM[-1][:1], **ITEM[-1][1])
    assert sent == [(BATCH_EVENT, {"events": ITEM}), (BATCH_EVENT, {"events": ITEM})]


def test_any_other_event_sends_what_is_held_first_and_goes_as_it_is():
    sent = Sent()
    batcher = Batcher(sent)
    batcher.sendevent("collectionfinish", ids=["c::a"])
    batcher.sendevent("warning_recorded", nodeid="", when="collect")  # outside an item: as it is
    batcher.sendevent("logstart", nodeid="c::a", location=("c/a", None, "a"))
    batcher.sendevent("testreport", data={"when": "setup"})
    # a steal's answer comes from execnet's receiving thread, while the item runs
    answer = threading.Thread(target=batcher.sendevent, args=("unscheduled",), kwargs={"indices": [3]})
    answer.start()
    answer.join()
    batcher.sendevent("testreport", data={"when": "call"})
    batcher.sendevent("workerfinished", workeroutput={})
    assert sent == [
        ("collectionfinish", {"ids": ["c::a"]}),
        ("warning_recorded", {"nodeid": "", "when": "collect"}),
        (BATCH_EVENT, {"events": [ITEM[0], ("testreport", {"data": {"when": "setup"}})]}),
        ("unscheduled", {"indices": [3]}),
        ("testreport", {"data": {"when": "call"}}),  # one event held: sent as itself
        ("workerfinished", {"workeroutput": {}}),
    ]


def test_an_item_that_runs_long_has_its_start_sent_meanwhile():
    sent = Sent()
    batcher = Batcher(sent)
    batcher.LIVENESS = 0.1
    batcher.sendevent("logstart", nodeid="c::a", location=("c/a", None, "a"))
    deadline = time.monotonic() + 10
    while not sent and time.monotonic() < deadline:
        time.sleep(0.02)
    assert sent == [ITEM[0]]
    batcher.sendevent("workerfinished", workeroutput={})  # and the ticking stops with the worker
    assert batcher._ticker is not None
    batcher._ticker.join(5)
    assert not batcher._ticker.is_alive()


def wire_report(when: str, record: bool) -> dict[str, Any]:
    data: dict[str, Any] = {WIRE_REPORT: b'{"when": "%s"}' % when.encode()}
    if record:
        data[WIRE_RECORD] = (b'{"path": "a"}', b"")
    return {**data, "item_index": 4, "worker_id": "gw1", "testrun_uid": "f00"}


#: A transcript's events as xdist gives them to `Batcher.sendevent` (reports in the compact form).
COMPACT = [
    ("logstart", {"nodeid": "c::a \u00e9", "location": ("c/a", None, "a")}),
    ("testreport", {"data": wire_report("setup", False)}),
    ("testreport", {"data": wire_report("call", True)}),
    ("testreport", {"data": wire_report("teardown", False)}),
    ("logfinish", {"nodeid": "c::a \u00e9", "location": ("c/a", 7, "a")}),
    ("runtest_protocol_complete", {"item_index": 4, "duration": 0.1 + 0.2}),
]


def test_a_transcripts_events_travel_as_two_bytes_objects_and_come_back_as_they_were():
    packed = pack(COMPACT)
    assert packed is not None and all(type(x) is bytes for x in packed)
    back = unpack(packed)
    assert back == COMPACT
    assert [type(kw.get("location")) for _, kw in back] == [type(kw.get("location")) for _, kw in COMPACT]
    assert type(back[2][1]["data"][WIRE_RECORD]) is tuple
    assert [list(kw) for _, kw in back] == [list(kw) for _, kw in COMPACT]  # keys in xdist's order
    assert [list(kw["data"]) for _, kw in back[1:4]] == [list(kw["data"]) for _, kw in COMPACT[1:4]]
    sent = Sent()
    batcher = Batcher(sent)
    for name, kwargs in COMPACT:
        batcher.sendevent(name, **kwargs)
    assert sent == [(BATCH_EVENT, {"packed": packed})]


@pytest.mark.parametrize(
    "odd",
    [
        ("testreport", {"data": {"$report_type": "TestReport", "outcome": "failed"}}),  # pytest's own form
        ("warning_recorded", {"nodeid": "c::a", "when": "runtest"}),
        ("logstart", {"nodeid": "c::\udcff", "location": ("c/a", None, "a")}),  # no UTF-8 holds it
        ("runtest_protocol_complete", {"item_index": 4, "duration": float("nan")}),
        ("testreport", {"data": {**wire_report("call", False), "plug-in": 1}}),
    ],
    ids=["pytest-form", "warning", "surrogate", "nan", "extra-key"],
)
def test_anything_else_in_an_item_sends_its_events_as_they_are(odd):
    last = odd[0] == "runtest_protocol_complete"  # the item's last event: in place of the usual one
    events = [*COMPACT[:-1], odd] if last else [*COMPACT[:2], odd, *COMPACT[2:]]
    assert pack(events) is None
    sent = Sent()
    batcher = Batcher(sent)
    for name, kwargs in events:
        batcher.sendevent(name, **kwargs)
    assert sent == [(BATCH_EVENT, {"events": events})]


class Node:
    """What `unpack_batches` needs of xdist's WorkerController."""

    def __init__(self) -> None:
        self.workerinput: dict[str, Any] = {}
        self.calls: list[Any] = []

    def process_from_remote(self, eventcall: Any) -> None:
        self.calls.append(eventcall)


def test_the_controller_hands_a_batch_to_xdist_event_by_event():
    node = Node()
    assert unpack_batches(node)
    node.process_from_remote((BATCH_EVENT, {"events": ITEM}))
    node.process_from_remote(("workerfinished", {"workeroutput": {}}))
    node.process_from_remote((BATCH_EVENT, {"packed": pack(COMPACT)}))
    end = object()  # xdist's end marker, when the channel closes
    node.process_from_remote(end)
    assert node.calls == [*ITEM, ("workerfinished", {"workeroutput": {}}), *COMPACT, end]


def test_no_batches_where_xdist_is_not_laid_out_as_expected():
    node = Node()
    node.channel = object()  # type: ignore[attr-defined]  # the callback was set already
    assert not unpack_batches(node)
    assert node.process_from_remote.__self__ is node  # type: ignore[attr-defined]
    # a worker without xdist's interactor (another version): xdist's own sending
    config = SimpleNamespace(pluginmanager=SimpleNamespace(get_plugins=lambda: [object(), Node()]))
    assert Batcher.install(config) is None  # type: ignore[arg-type]


# -- end to end, through xdist ------------------------------------------------------------------

COUNT_BATCHES = """
import pytest

from pytest_explore_suff.xdist import BATCH_EVENT, ITEM_EVENTS, unpack

seen = {"batches": 0, "packed": 0, "batched": 0, "alone": 0}


@pytest.hookimpl(trylast=True)  # after the plug-in's: sees a batch before it is unpacked
def pytest_configure_node(node):
    process = node.process_from_remote

    def counting(eventcall):
        if type(eventcall) is tuple and eventcall[0] == BATCH_EVENT:
            seen["batches"] += 1
            if "packed" in eventcall[1]:
                seen["packed"] += 1
                seen["batched"] += len(unpack(eventcall[1]["packed"]))
            else:
                seen["batched"] += len(eventcall[1]["events"])
        elif type(eventcall) is tuple and eventcall[0] in ITEM_EVENTS:
            seen["alone"] += 1
        process(eventcall)

    node.process_from_remote = counting


def pytest_terminal_summary(terminalreporter):
    said = "BATCHES {batches} PACKED {packed} BATCHED {batched} ALONE {alone}"
    terminalreporter.write_line(said.format(**seen))
"""


def twelve(root: Path) -> Path:
    runs = [sufficient_run(f"s{i}") if i % 3 else allocation_run(f"a{i}") for i in range(8)]
    return ab_campaign(root, with_runs=runs, without_runs=[no_explore_run() for _ in range(4)])


def counts(result: pytest.RunResult) -> dict[str, int]:
    line = next(line for line in result.outlines if line.startswith("BATCHES "))
    words = line.split()
    return {words[i]: int(words[i + 1]) for i in range(0, len(words), 2)}


@pytest.mark.parametrize("dist", ["load", "worksteal", "loadscope"])
def test_items_travel_in_batches_and_the_report_is_byte_identical(pytester, dist):
    root = twelve(pytester.path / "ab")
    pytester.makeconftest(COUNT_BATCHES)
    args = (f"--explore-suff={root}", "-p", "no:cacheprovider")
    pytester.runpytest(*args, "--explore-suff-json=plain.json").assert_outcomes(passed=12)
    result = pytester.runpytest(*args, "-n", "2", f"--dist={dist}", "--explore-suff-json=dist.json")
    result.assert_outcomes(passed=12)
    said = counts(result)
    # six events an item (its start, three reports, its end, "complete"), all of them batched
    # unless an item ran for over a second (`Batcher.LIVENESS`) on a very busy machine
    assert said["BATCHED"] + said["ALONE"] == 12 * 6 and said["BATCHED"] >= 10 * 6, said
    assert said["BATCHES"] >= 12 and said["PACKED"] >= 10  # a transcript's events: two bytes objects
    assert (pytester.path / "plain.json").read_bytes() == (pytester.path / "dist.json").read_bytes()


MIXED_TESTS = """
import warnings

import pytest


def test_passes():
    print("out")


def test_fails():
    assert 1 == 2


def test_skips():
    pytest.skip("not here")


@pytest.mark.xfail(reason="known")
def test_xfails():
    assert False


def test_warns():
    warnings.warn(UserWarning("careful"))


@pytest.mark.parametrize("n", range(6))
def test_many(n):
    pass
"""


def test_a_session_of_a_campaign_and_ordinary_tests_reports_every_test(pytester):
    root = twelve(pytester.path / "ab")
    pytester.makepyfile(test_mixed=MIXED_TESTS)
    pytester.makeconftest(COUNT_BATCHES)
    results = {}
    for name, args in (("plain", ()), ("dist", ("-n", "2"))):
        # (-W: the warning is reported, not raised, whatever filters the suite runs under)
        result = pytester.runpytest(f"--explore-suff={root}", str(pytester.path / "test_mixed.py"), "-p",
                                    "no:cacheprovider", "-rA", "-W", "default::UserWarning",
                                    f"--junitxml={name}.xml", *args)  # fmt: skip
        result.assert_outcomes(passed=12 + 8, failed=1, skipped=1, xfailed=1, warnings=1)
        result.stdout.fnmatch_lines(["*warnings summary*", "*UserWarning: careful*", "*FAILED*test_fails*"])
        cases = ET.parse(pytester.path / f"{name}.xml").getroot().iter("testcase")
        results[name] = sorted((c.get("classname"), c.get("name"), sorted(e.tag for e in c)) for c in cases)
        if args:
            said = counts(result)
            # 23 items of six events, and the warning (unless an item ran long: see above)
            assert said["BATCHED"] + said["ALONE"] == 23 * 6 + 1 and said["BATCHES"] >= 21, said
    assert results["plain"] == results["dist"] and len(results["plain"]) == 23


def test_a_worker_that_dies_is_said_to_have_died_on_its_own_item(pytester):
    root = twelve(pytester.path / "ab")
    pytester.makepyfile(
        test_crash="""
        import os

        def test_before():
            pass

        def test_crash():
            os._exit(3)

        def test_after():
            pass
        """
    )
    result = pytester.runpytest(f"--explore-suff={root}", str(pytester.path / "test_crash.py"), "-p",
                                "no:cacheprovider", "-n", "2", "--explore-suff-json=dist.json")  # fmt: skip
    result.stdout.fnmatch_lines(["*crashed while running 'test_crash.py::test_crash'*"])
    result.assert_outcomes(passed=12 + 2, failed=1)
    crashed = [line for line in result.outlines if "crashed while running" in line]
    assert all("test_crash.py::test_crash'" in line for line in crashed), crashed
    assert len(report_of(pytester.path / "dist.json")["transcripts"]) == 12


def report_of(path: Path) -> dict[str, Any]:
    import json

    return json.loads(path.read_text(encoding="utf-8"))  # type: ignore[no-any-return]


def test_the_controller_hears_of_a_long_items_start_before_it_ends(pytester):
    root = twelve(pytester.path / "ab")
    pytester.makepyfile(test_slow="def test_slow():\n    import time\n    time.sleep(2.5)\n")
    pytester.makeconftest(
        """
        import time

        heard = {}

        def pytest_runtest_logstart(nodeid):
            heard.setdefault(nodeid, time.monotonic())

        def pytest_runtest_logreport(report):
            if report.when == "call" and report.nodeid in heard:
                heard[report.nodeid] = time.monotonic() - heard[report.nodeid]

        def pytest_terminal_summary(terminalreporter):
            terminalreporter.write_line(f"SLOW {heard['test_slow.py::test_slow']:.2f}")
        """
    )
    result = pytester.runpytest(f"--explore-suff={root}", str(pytester.path / "test_slow.py"), "-p",
                                "no:cacheprovider", "-n", "2")  # fmt: skip
    result.assert_outcomes(passed=13)
    gap = float(next(line for line in result.outlines if line.startswith("SLOW ")).split()[1])
    assert gap >= 0.5, gap  # its start came about a second in, not with its end
