"""pytest-xdist: one discovery for every worker, one message per item, what workers deselected,
and less memory per report.

The controller discovers the campaign once and hands the list to each worker
(`CAMPAIGN_KEY`); each item's record travels on its test report
(`nodes.RECORD_ATTR`), and an item's events travel as one message (`Batcher`);
each worker sends back the transcripts it deselected (`DESELECTED_KEY`). The
`Shrinker` also runs without xdist: it is the controller's memory that
thousands of kept reports fill.
"""

from __future__ import annotations

import sys
import threading
import time
from collections.abc import Callable
from typing import Any

import orjson
import pytest

from .campaign import from_wire, to_wire
from .nodes import RECORD_ATTR, cache_hits_key, campaign_key, close_cache, deselected_key, shared_properties

CAMPAIGN_KEY = "explore_suff_campaign"  # workerinput key: the controller's discovery
DESELECTED_KEY = "explore_suff_deselected"  # workeroutput key: the transcripts a worker deselected
WIRE = "explore-suff-wire"  # the plug-in name of `Wire`
CACHE_HITS_KEY = "explore_suff_cache_hits"  # workeroutput key: its transcripts from the verdict cache
BATCH_KEY = "explore_suff_batch"  # workerinput key: the controller unpacks an item's batch (`Batcher`)
BATCH_EVENT = "explore_suff_batch"  # the event a batch travels as: {"packed": ...} or {"events": [...]}
#: A transcript's test report as a worker sends it (`report_to_wire`): its fields as one JSON
#: document, and its record as the two bytes objects it already is.
WIRE_REPORT = "explore_suff_report"
WIRE_RECORD = "explore_suff_record"


class Controller:
    """On the controller: what it tells each worker, and what it hears back."""

    def __init__(self, config: pytest.Config) -> None:
        self.config = config
        self._wire: Any = None  # the discovery as every worker gets it: made once
        self._starting = 0  # workers handed it and not ready yet

    @pytest.hookimpl(optionalhook=True)
    def pytest_configure_node(self, node: Any) -> None:
        # xdist: hand every worker the one discovery instead of letting each walk the campaign.
        if self._wire is None:
            self._wire = to_wire(self.config.stash[campaign_key])
        node.workerinput[CAMPAIGN_KEY] = self._wire
        self._starting += 1
        if unpack_batches(node):
            node.workerinput[BATCH_KEY] = 1

    @pytest.hookimpl(optionalhook=True)
    def pytest_testnodeready(self, node: Any) -> None:
        # The worker has its campaign list: the controller's copy of it can go (made again
        # for a worker xdist restarts).
        if node.workerinput.pop(CAMPAIGN_KEY, None) is not None:
            self._starting -= 1
            if self._starting <= 0:
                self._wire = None

    @pytest.hookimpl(optionalhook=True)
    def pytest_testnodedown(self, node: Any, error: Any) -> None:
        output = getattr(node, "workeroutput", {})
        self.config.stash.setdefault(deselected_key, []).extend(output.get(DESELECTED_KEY, ()))
        hits = output.get(CACHE_HITS_KEY)
        if isinstance(hits, int):
            self.config.stash[cache_hits_key] = self.config.stash.get(cache_hits_key, 0) + hits


def stopped_at_maxfail(session: pytest.Session) -> bool:
    """Whether xdist's controller stopped the session because ``-x``/``--maxfail`` was reached
    (it raises an interrupt to stop its workers), not because of a keyboard interrupt."""
    dsession = session.config.pluginmanager.getplugin("dsession")
    stop = getattr(dsession, "shouldstop", None)
    return bool(isinstance(session.shouldfail, str) and session.shouldfail and isinstance(stop, str)
                and "keyboard-interrupt" not in stop)  # fmt: skip


def configure_worker(config: pytest.Config, workerinput: dict[str, Any]) -> None:
    # The controller discovered the campaign once; every worker collects that
    # list, so files a harness adds or removes meanwhile cannot split them.
    config.stash[campaign_key] = from_wire(workerinput[CAMPAIGN_KEY])
    config.pluginmanager.register(WorkerShrinker(), "explore-suff-worker-shrinker")
    config.pluginmanager.register(Wire(), WIRE)
    if workerinput.get(BATCH_KEY) == 1:
        Batcher.install(config)


#: What a worker sends while it runs an item, from its ``logstart`` to its ``runtest_protocol_complete``.
ITEM_EVENTS = frozenset(
    {"logstart", "testreport", "warning_recorded", "logfinish", "runtest_protocol_complete"}
)


def unpack_batches(node: Any) -> bool:
    """On the controller, before xdist starts the worker `node` stands for: its events are
    given to xdist's ``process_from_remote`` one by one, in order, whether they came alone or
    in a batch (`Batcher`). False, and nothing changed, where xdist is not laid out as this
    expects (another version): the worker is then not told it may batch."""
    process = getattr(node, "process_from_remote", None)
    # xdist hands the bound method to execnet (`setcallback`) once the channel is made, after
    # this hook: a channel already made would keep calling the method this cannot replace.
    if not callable(process) or hasattr(node, "channel") or not isinstance(node.workerinput, dict):
        return False

    def process_from_remote(eventcall: Any) -> None:
        if type(eventcall) is tuple and len(eventcall) == 2 and eventcall[0] == BATCH_EVENT:
            batch = eventcall[1]
            for event in unpack(batch["packed"]) if "packed" in batch else batch["events"]:
                process(event)
        else:
            process(eventcall)

    node.process_from_remote = process_from_remote
    return True


#: The keys of a test report's data as xdist sends the compact form (`report_to_wire`), in order.
_XDIST_KEYS = ("item_index", "worker_id", "testrun_uid")
_PLAIN = (WIRE_REPORT, *_XDIST_KEYS)
_WITH_RECORD = (WIRE_REPORT, WIRE_RECORD, *_XDIST_KEYS)


def pack(events: list[tuple[str, dict[str, Any]]]) -> tuple[bytes, bytes] | None:
    """An item's events as two bytes objects: a JSON list of what each holds beside its bytes,
    and the bytes of its reports and records one after the other. execnet's serializer (plain
    Python) then handles two objects, not about a hundred. None (the events go as they are)
    for any event but the usual ones in the usual shape: a report in pytest's own form, a
    warning, a string UTF-8 cannot hold."""
    head: list[Any] = []
    body: list[bytes] = []
    for name, kwargs in events:
        if name == "testreport" and len(kwargs) == 1:
            data = kwargs.get("data")
            if type(data) is not dict:
                return None
            keys, report, record = tuple(data), data.get(WIRE_REPORT), data.get(WIRE_RECORD)
            if keys != (_PLAIN if record is None else _WITH_RECORD) or type(report) is not bytes:
                return None
            index, worker, run = data["item_index"], data["worker_id"], data["testrun_uid"]
            if not (type(index) is int and type(worker) is str and type(run) is str):
                return None
            body.append(report)
            if record is None:
                head.append((name, len(report), -1, -1, index, worker, run))
            elif type(record) is tuple and len(record) == 2 and all(type(x) is bytes for x in record):
                body += record
                head.append((name, len(report), len(record[0]), len(record[1]), index, worker, run))
            else:
                return None
        elif name in ("logstart", "logfinish") and tuple(kwargs) == ("nodeid", "location"):
            nodeid, location = kwargs["nodeid"], kwargs["location"]
            if not (type(nodeid) is str and type(location) is tuple and len(location) == 3):
                return None
            path, line, domain = location
            if not (type(path) is str and (line is None or type(line) is int) and type(domain) is str):
                return None
            head.append((name, nodeid, path, line, domain))
        elif name == "runtest_protocol_complete" and tuple(kwargs) == ("item_index", "duration"):
            index, duration = kwargs["item_index"], kwargs["duration"]
            if not (type(index) is int and type(duration) is float and duration - duration == 0):  # finite
                return None
            head.append((name, index, duration))
        else:
            return None
    try:
        return orjson.dumps(head), b"".join(body)
    except TypeError:  # a string UTF-8 cannot hold
        return None


def unpack(packed: tuple[bytes, bytes]) -> list[tuple[str, dict[str, Any]]]:
    """The events `pack` packed, as execnet would have delivered them."""
    head, body = packed
    events: list[tuple[str, dict[str, Any]]] = []
    at = 0
    for entry in orjson.loads(head):
        name = entry[0]
        if name == "testreport":
            _, size, first, second, index, worker, run = entry
            data: dict[str, Any] = {WIRE_REPORT: body[at : at + size]}
            at += size
            if first >= 0:
                data[WIRE_RECORD] = (body[at : at + first], body[at + first : at + first + second])
                at += first + second
            data["item_index"], data["worker_id"], data["testrun_uid"] = index, worker, run
            events.append((name, {"data": data}))
        elif name == "runtest_protocol_complete":
            events.append((name, {"item_index": entry[1], "duration": entry[2]}))
        else:
            events.append((name, {"nodeid": entry[1], "location": (entry[2], entry[3], entry[4])}))
    return events


class Batcher:
    """On an xdist worker: the events of one item (its ``logstart``, three test reports, any
    warnings, its ``logfinish`` and ``runtest_protocol_complete``) sent as one message
    instead of six.

    xdist sends each event as it happens: six execnet messages a transcript, each one a
    serialization, a write and a flush on the worker, and on the controller a wake-up of
    the thread that reads them and one more of the main thread. Batched, an item's events
    reach the controller together when the item is done, in the order they happened, and
    are handed to xdist there one by one (`unpack_batches`): the controller does what it
    did. Items are never batched together: an item's events are sent before the next
    item starts, so a worker that crashes or is killed was running the item the
    controller names. Any other event (the worker's collection, a steal's answer, its
    end, an internal error) sends what is held first. An item that runs long has what
    it holds sent after `LIVENESS` seconds, so the controller hears of its start."""

    LIVENESS = 1.0  # seconds an event may wait while its item runs

    def __init__(self, send: Callable[..., None]) -> None:
        self._send = send  # xdist's own `sendevent`
        self._lock = threading.Lock()  # xdist sends from execnet's receiving thread too (steal)
        self._held: list[tuple[str, dict[str, Any]]] = []
        self._since = 0.0  # when the first held event came
        self._in_item = False
        self._ticker: threading.Thread | None = None
        self._done = threading.Event()

    @classmethod
    def install(cls, config: pytest.Config) -> Batcher | None:
        """The batcher of this worker's xdist `WorkerInteractor`, in place of its `sendevent`;
        None (and xdist's own sending) where there is no such plug-in."""
        for plugin in config.pluginmanager.get_plugins():
            send = getattr(plugin, "sendevent", None)
            if type(plugin).__name__ == "WorkerInteractor" and callable(send) and hasattr(plugin, "channel"):
                batcher = cls(send)
                plugin.sendevent = batcher.sendevent
                return batcher
        return None

    def sendevent(self, name: str, **kwargs: Any) -> None:
        with self._lock:
            if name == "logstart":
                self._in_item = True
            if self._in_item and name in ITEM_EVENTS:
                if not self._held:
                    self._since = time.monotonic()
                    if self._ticker is None:
                        self._start_ticker()
                self._held.append((name, kwargs))
                if name == "runtest_protocol_complete":
                    self._in_item = False
                    self._flush()
                return
            self._flush()
            if name == "workerfinished":
                self._done.set()
            self._send(name, **kwargs)

    def _flush(self) -> None:
        held = self._held
        if not held:
            return
        self._held = []
        if len(held) == 1:
            self._send(held[0][0], **held[0][1])
            return
        packed = pack(held)
        if packed is not None:
            self._send(BATCH_EVENT, packed=packed)
        else:
            self._send(BATCH_EVENT, events=held)

    def _start_ticker(self) -> None:
        self._ticker = threading.Thread(target=self._tick, name="explore-suff-batcher", daemon=True)
        self._ticker.start()

    def _tick(self) -> None:
        while not self._done.wait(self.LIVENESS / 2):
            with self._lock:
                if self._held and time.monotonic() - self._since >= self.LIVENESS:
                    try:
                        self._flush()
                    except OSError:  # the channel is closed: the worker is going down
                        return


def send_deselected(config: pytest.Config) -> None:
    """The session is done: the verdict cache written and closed; on an xdist worker, what
    it deselected (-k, -m, --lf deselect on the workers) and took from the cache, sent."""
    hits = close_cache(config)
    workeroutput = getattr(config, "workeroutput", None)
    if workeroutput is not None:
        workeroutput[DESELECTED_KEY] = config.stash.get(deselected_key, [])
        if hits is not None:
            workeroutput[CACHE_HITS_KEY] = hits


_ABSENT = object()


class Shrinker:
    """Keeps less of what pytest holds to the end of the session: three reports per item.

    pytest builds each of an item's setup, call and teardown reports with a dict
    of every keyword of the item, a list of its user properties and its
    location (under xdist also its own copy of every string and the parsed node
    id), and the terminal reporter keeps all of them. Once every plugin has seen
    a report (`shrink` runs last), values equal to the item's previous report's
    are swapped for that report's objects, and (on the xdist controller) the few
    strings every report repeats for one copy: equal values, about two kilobytes
    less per item.
    """

    SHARED = ("keywords", "user_properties", "location", "_id")

    def __init__(self) -> None:
        self._latest: dict[str, dict[str, Any]] = {}  # nodeid -> the fields of its latest report

    def shrink(self, report: pytest.TestReport) -> None:
        fields = vars(report)
        nodeid = report.nodeid
        latest = self._latest.get(nodeid)
        # A report from an xdist worker, unpacked here on the controller (xdist gave it its
        # `node`), has its own copy of every string; one made in this process has the nodes'.
        unpacked = "node" in fields
        if latest is not None:
            for name in self.SHARED:
                mine, theirs = fields.get(name, _ABSENT), latest.get(name, _ABSENT)
                # `is` first: the location is often the very same object, and a parsed node id
                # compares by a dataclass's __eq__
                if mine is not theirs and mine is not _ABSENT and theirs is not _ABSENT and mine == theirs:
                    fields[name] = theirs
        elif unpacked:
            keywords = fields.get("keywords")
            # One copy of each name that items repeat (folders, arms, groups), but for the
            # item's own name: no other item has it, and interned it would only add an entry
            # an item to the interpreter's table of interned strings.
            own = nodeid.rpartition("::")[2]
            if type(keywords) is dict and not all(key == own or sys.intern(key) is key for key in keywords):
                fields["keywords"] = {
                    key if key == own else sys.intern(key): value for key, value in keywords.items()
                }
        properties = fields.get("user_properties")
        if type(properties) is list and (latest is None or properties is not latest.get("user_properties")):
            fields["user_properties"] = shared_properties(properties)
        if unpacked:
            for name in ("when", "outcome", "worker_id", "testrun_uid"):
                if type(fields.get(name)) is str:
                    fields[name] = sys.intern(fields[name])
        if report.when == "teardown":
            self._latest.pop(nodeid, None)
        else:
            self._latest[nodeid] = fields


#: The fields of a test report the compact form carries; a report with any other (a plug-in's
#: own) goes as pytest sends it.
_FIELDS = frozenset({"_id", "location", "keywords", "outcome", "longrepr", "when", "user_properties",
                     "sections", "duration", "start", "stop", RECORD_ATTR})  # fmt: skip


def report_to_wire(report: Any) -> dict[str, Any] | None:
    """A transcript item's test report as one JSON document (and its record's bytes), not a
    dict of fields for execnet's serializer, which is plain Python: that serializer, and
    pytest's conversion around it, cost the worker and the controller most of a
    millisecond per report, and a transcript has three. None (pytest's own form) for a
    report with a field the compact form does not know, or a failure's traceback."""
    fields = vars(report)
    longrepr = fields.get("longrepr")
    others = fields.keys() - _FIELDS
    # pytest-html gives every call report an empty list of extras: one JSON holds as it is
    if others and not (others == {"extras"} and type(fields["extras"]) is list and not fields["extras"]):
        return None
    if type(report) is not pytest.TestReport or not (longrepr is None or type(longrepr) in (str, tuple)):
        return None
    record = fields.get(RECORD_ATTR)
    if record is not None and not (
        type(record) is tuple and len(record) == 2 and all(type(x) is bytes for x in record)
    ):
        return None
    body = {k: v for k, v in fields.items() if k != RECORD_ATTR and k != "_id"}
    body["nodeid"] = report.nodeid
    try:
        data: dict[str, Any] = {WIRE_REPORT: orjson.dumps(body)}
    except TypeError:  # a value JSON cannot hold (a string no UTF-8 can): pytest's own form
        return None
    if record is not None:
        data[WIRE_RECORD] = record
    return data


def from_wire_report(data: dict[str, Any]) -> pytest.TestReport | None:
    """The test report `report_to_wire` sent, with what xdist added beside it (its item's index,
    the worker's id, the run's id)."""
    body = data.get(WIRE_REPORT)
    if type(body) is not bytes:
        return None
    fields = orjson.loads(body)
    fields["location"] = tuple(fields["location"])
    longrepr = fields.get("longrepr")
    if type(longrepr) is list:  # a skip's (path, line, reason)
        fields["longrepr"] = tuple(longrepr)
    fields["sections"] = [tuple(x) for x in fields.get("sections", ())]
    fields["user_properties"] = [tuple(x) for x in fields.get("user_properties", ())]
    for key, value in data.items():
        if key not in (WIRE_REPORT, WIRE_RECORD):
            fields[key] = value
    report = pytest.TestReport(**fields)
    record = data.get(WIRE_RECORD)
    if record is not None:
        setattr(report, RECORD_ATTR, tuple(record))
    return report


class WireIn:
    """On the controller: the reports its workers sent in the compact form (`from_wire_report`).
    (Its own reports go out as pytest makes them: pytest-reportlog serializes them too.)"""

    @pytest.hookimpl(tryfirst=True)
    def pytest_report_from_serializable(self, config: pytest.Config, data: Any) -> pytest.TestReport | None:
        return from_wire_report(data) if isinstance(data, dict) else None


class Wire(WireIn):
    """On a worker: its transcripts' reports sent in the compact form (`report_to_wire`)."""

    @pytest.hookimpl(tryfirst=True)
    def pytest_report_to_serializable(self, config: pytest.Config, report: Any) -> dict[str, Any] | None:
        return report_to_wire(report)


class WorkerShrinker(Shrinker):
    """On an xdist worker: its terminal reporter keeps every report too, after xdist sent it."""

    @pytest.hookimpl(trylast=True)
    def pytest_runtest_logreport(self, report: pytest.TestReport) -> None:
        if hasattr(report, RECORD_ATTR):  # sent to the controller already (xdist's hook ran first)
            delattr(report, RECORD_ATTR)
        self.shrink(report)
