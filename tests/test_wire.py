"""A transcript's test report as an xdist worker sends it: one JSON document and its record's
bytes, read back on the controller as the report pytest would have sent."""

from __future__ import annotations

import pytest

from pytest_explore_suff.nodes import RECORD_ATTR
from pytest_explore_suff.xdist import from_wire_report, report_to_wire

XDIST_EXTRAS = {"item_index": 7, "worker_id": "gw1", "testrun_uid": "abc"}


def report(**fields: object) -> pytest.TestReport:
    base: dict[str, object] = {
        "nodeid": "camp::run1/run-headless-with.jsonl",
        "location": ("camp/run1/run-headless-with.jsonl", 0, "transcript run1/x [headless-with]"),
        "keywords": {"run-headless-with.jsonl": 1, "arm_headless-with": 1, "camp": 1},
        "outcome": "passed",
        "longrepr": None,
        "when": "call",
        "sections": [("Captured stdout call", "hello")],
        "duration": 0.25,
        "start": 1.5,
        "stop": 1.75,
        "user_properties": [("arm", "headless-with"), ("answered", 3)],
    }
    base.update(fields)
    return pytest.TestReport(**base)  # type: ignore[arg-type]


def round_trip(rep: pytest.TestReport) -> pytest.TestReport:
    data = report_to_wire(rep)
    assert data is not None
    back = from_wire_report({**data, **XDIST_EXTRAS})
    assert back is not None
    return back


@pytest.mark.parametrize(
    "fields",
    [
        {},
        {
            "outcome": "skipped",
            "longrepr": ("camp/run1/x.jsonl", 0, "Skipped: excluded: raced"),
            "when": "call",
        },
        {"outcome": "failed", "longrepr": "run1/x.jsonl: not a transcript", "when": "call"},
        {"when": "setup", "user_properties": [], "sections": []},
        {"extras": []},  # pytest-html's, on every call report
    ],
    ids=["passed", "skipped", "failed", "setup", "pytest-html"],
)
def test_a_report_comes_back_as_pytest_would_send_it(fields):
    rep = report(**fields)
    setattr(rep, RECORD_ATTR, (b'{"path": "run1/x.jsonl"}', b'["run1/x.jsonl"]'))
    back = round_trip(rep)
    want = pytest.TestReport._from_json({**rep._to_json(), **XDIST_EXTRAS})
    assert vars(back) == vars(want)
    assert getattr(back, RECORD_ATTR) == getattr(rep, RECORD_ATTR)
    assert type(back.location) is tuple and all(type(p) is tuple for p in back.user_properties)


def test_what_the_compact_form_cannot_carry_goes_as_pytest_sends_it():
    assert report_to_wire(report(extras=["a plug-in's field"])) is None
    assert report_to_wire(report(extras=[{"name": "page", "content": "x"}])) is None  # pytest-html's own
    assert report_to_wire(report(extras=[], more=1)) is None
    assert report_to_wire(report(user_properties=[("name", "\udcff")])) is None  # no UTF-8 holds it
    rep = report()
    setattr(rep, RECORD_ATTR, {"path": "a record kept as it is"})
    assert report_to_wire(rep) is None
    assert from_wire_report({"$report_type": "TestReport"}) is None  # pytest's own form: not ours
