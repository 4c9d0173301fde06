#!/usr/bin/env python3
"""Where a run on many small transcripts spends its time, phase by phase.

    .venv/bin/python benchmarks/profile.py --pytest-args "-p no:hypothesispytest"   # 10,000 small
    .venv/bin/python benchmarks/profile.py --small 2000 --reps 1 --fine
    .venv/bin/python benchmarks/profile.py --campaign DIR --freeze   # an existing campaign

Not cProfile: its per-call cost, on functions called once per line, would
distort what it measures. Each repetition is one fresh process running one
in-process ``pytest.main`` (``-p no:cacheprovider --explore-suff=DIR
--explore-suff-json=F -q``; the per-item progress goes to a file) with timing
wrappers around the plugin's own functions, each counting its calls, and hook
wrappers around pytest's phases:

- start-up: ``pytest.main`` up to the end of configure, less discovery (plugin
  loading, option parsing; the imports of this script came before);
- discovery: ``campaign.discover``, split into the walk (``_walk``), the sniff
  of each file's first lines (``sniff``), and the rest (grouping, naming);
- collection: pytest's collection, the items built from the discovered list;
- reading lines: the readers' ``load`` less the decoding below (the line loop:
  ``readline``, strip, the byte scan that skips lines, feeding the collector);
  ``--fine`` splits out opening the file, the byte scan (``worth_decoding``),
  making the ``Collector`` and feeding it (``Collector.event``, ...);
- decoding: ``jsonl.decode`` as the readers call it, per decoded line;
- judging: ``classify`` (the rules), on the collector;
- recording: ``report.record`` (the record on the item), ``RecordStore.add``
  (encoding it, writing it to the spool) and the ``Shrinker``;
- pytest per item: ``pytest_runtest_protocol`` less all of the above (setup,
  call and teardown, three reports, every plugin's hooks, the progress);
- end of session: building and writing the report, the summary;
- and, across all of them, the garbage collector (``gc.callbacks``).

Each wrapper's cost (measured on a no-op) is subtracted from the phase that
holds the wrapped calls. Interleaved with those runs, pytest alone runs on as
many do-nothing items (``run.py``'s conftest), timed the same way: its column
is what pytest costs per item without the plugin. ``--freeze`` is an
experiment: both runs call ``gc.freeze()`` once collection is done. Figures
are medians over ``--reps``, in ms per transcript; the floors below the table
(``readline`` of every line of the same files; then ``orjson.loads`` of each)
are measured in the plugin's process after its run.
"""

from __future__ import annotations

import argparse
import functools
import gc
import json
import os
import shlex
import statistics
import subprocess
import sys
import tempfile
import time
from collections.abc import Callable, Generator
from pathlib import Path
from typing import Any

import pytest
from run import TRIVIAL_CONFTEST  # this script's folder is on sys.path

HERE = Path(__file__).resolve().parent
PROJECT = HERE.parent


class Clock:
    """Total seconds and calls of one wrapped function."""

    def __init__(self) -> None:
        self.total = 0.0
        self.calls = 0


CLOCKS: dict[str, Clock] = {}


def timed(name: str, fn: Callable[..., Any]) -> Callable[..., Any]:
    clock = CLOCKS.setdefault(name, Clock())
    now = time.perf_counter

    @functools.wraps(fn)
    def wrapper(*args: Any, **kwargs: Any) -> Any:
        t = now()
        try:
            return fn(*args, **kwargs)
        finally:
            clock.total += now() - t
            clock.calls += 1

    return wrapper


def wrapper_cost() -> float:
    """Seconds one `timed` wrapper adds to a call (median of a few rounds)."""

    def nothing(x: Any) -> Any:
        return x

    wrapped = timed("#calibration", nothing)
    rounds = []
    for _ in range(5):
        t = time.perf_counter()
        for i in range(100_000):
            nothing(i)
        plain = time.perf_counter() - t
        t = time.perf_counter()
        for i in range(100_000):
            wrapped(i)
        rounds.append((time.perf_counter() - t - plain) / 100_000)
    del CLOCKS["#calibration"]
    return sorted(rounds)[2]


def instrument(fine: bool) -> None:
    """Wrap the plugin's functions where their callers look them up; ``fine``: also
    the parts of the readers' line loop (one more wrapper per line)."""
    import pytest_explore_suff as pkg
    from pytest_explore_suff import campaign, events, nodes, readers, session, sources, store, xdist
    from pytest_explore_suff.readers import base

    if fine:
        sources.open_path = timed("open", sources.open_path)  # type: ignore[assignment]
        base.worth_decoding = timed("scan", base.worth_decoding)  # type: ignore[assignment]
        readers.Collector = timed("new collector", readers.Collector)  # type: ignore[assignment,misc]
        for method in ("event", "run_summary", "end_run", "progress"):
            setattr(events.Collector, method, timed("collector", getattr(events.Collector, method)))

    session.discover = timed("discovery", session.discover)  # type: ignore[assignment]
    campaign._walk = timed("walk", campaign._walk)  # type: ignore[assignment]
    campaign.sniff = timed("sniff", campaign.sniff)  # type: ignore[assignment]
    nodes.judge = timed("judge", nodes.judge)  # type: ignore[assignment]
    pkg.load = timed("load", pkg.load)  # type: ignore[assignment]
    base.decode = timed("decode", base.decode)  # type: ignore[assignment]
    pkg.classify = timed("classify", pkg.classify)  # type: ignore[assignment]
    nodes.record = timed("record", nodes.record)  # type: ignore[assignment]
    store.RecordStore.add = timed("spool", store.RecordStore.add)  # type: ignore[method-assign]
    xdist.Shrinker.shrink = timed("shrink", xdist.Shrinker.shrink)  # type: ignore[method-assign]


class Phases:
    """pytest's phases, timed by outermost hook wrappers; and the garbage collector's time."""

    def __init__(self, freeze: bool = False) -> None:
        self.freeze = freeze
        self.gc = 0.0
        self._gc_start = 0.0
        gc.callbacks.append(self._gc)
        self.configured = 0.0
        self.collection = 0.0
        self.protocol = 0.0
        self.items = 0
        self.finish = 0.0
        self.summary = 0.0

    def _gc(self, phase: str, info: dict[str, int]) -> None:
        if phase == "start":
            self._gc_start = time.perf_counter()
        else:
            self.gc += time.perf_counter() - self._gc_start

    def _span(self, attr: str) -> Generator[None, Any, Any]:
        """A hook wrapper's body: adds the time of what it wraps to ``attr``."""
        t = time.perf_counter()
        try:
            return (yield)
        finally:
            setattr(self, attr, getattr(self, attr) + time.perf_counter() - t)

    @pytest.hookimpl(wrapper=True, tryfirst=True)
    def pytest_collection(self, session: Any) -> Any:
        return (yield from self._span("collection"))

    def pytest_collection_finish(self, session: Any) -> None:
        if self.freeze:  # the experiment: what plugin.py could do once the items exist
            gc.freeze()

    @pytest.hookimpl(wrapper=True, tryfirst=True)
    def pytest_runtest_protocol(self, item: Any, nextitem: Any) -> Any:
        self.items += 1
        return (yield from self._span("protocol"))

    @pytest.hookimpl(wrapper=True, tryfirst=True)
    def pytest_sessionfinish(self, session: Any, exitstatus: Any) -> Any:
        return (yield from self._span("finish"))

    @pytest.hookimpl(wrapper=True, tryfirst=True)
    def pytest_terminal_summary(self, terminalreporter: Any) -> Any:
        return (yield from self._span("summary"))

    @pytest.hookimpl(trylast=True)
    def pytest_configure(self, config: Any) -> None:
        self.configured = time.perf_counter()


def floors(root: str) -> dict[str, float]:
    """Seconds to readline every line of the campaign's files, and to also orjson.loads each."""
    import orjson

    paths = [os.path.join(top, n) for top, _, names in os.walk(root) for n in names if n.endswith(".jsonl")]
    t = time.perf_counter()
    lines = 0
    for p in paths:
        with open(p, "rb") as fh:
            for _line in fh:
                lines += 1
    read = time.perf_counter() - t
    loads = orjson.loads
    t = time.perf_counter()
    for p in paths:
        with open(p, "rb") as fh:
            for line in fh:
                if line.strip():
                    loads(line)
    return {"readline floor": read, "decode floor": time.perf_counter() - t, "files": len(paths),
            "lines": lines}  # fmt: skip


def child(kind: str, target: str, tmp: str, more: list[str], fine: bool, freeze: bool) -> dict[str, Any]:
    """One instrumented in-process pytest run: the plugin on a campaign, or pytest alone
    on as many do-nothing items (``target``: how many)."""
    cost = wrapper_cost()
    if kind == "plugin":
        instrument(fine)
        out = os.path.join(tmp, "report.json")
        argv = [
            "-p",
            "no:cacheprovider",
            f"--explore-suff={target}",
            f"--explore-suff-json={out}",
            "-q",
            *more,
        ]
    else:
        trivial = Path(tmp, "trivial")
        trivial.mkdir()
        (trivial / "conftest.py").write_text(TRIVIAL_CONFTEST)
        items = trivial / f"items-{target}.trivial"
        items.touch()
        argv = ["-p", "no:cacheprovider", f"--rootdir={trivial}", str(items), "-q", *more]
    phases = Phases(freeze)
    t = time.perf_counter()
    with open(os.path.join(tmp, f"{kind}.log"), "w") as log:
        saved = sys.stdout
        sys.stdout = log  # the per-item progress is pytest's cost too: written, to a file
        try:
            code = pytest.main(argv, plugins=[phases])
        finally:
            sys.stdout = saved
    wall = time.perf_counter() - t
    c = CLOCKS

    def own(name: str, *inner: str) -> float:
        """A clock's seconds less its inner clocks' and their wrappers' cost."""
        total = c[name].total if name in c else 0.0
        for i in inner:
            if i in c:
                total -= c[i].total + c[i].calls * cost
        return total

    def tot(name: str) -> float:
        return c[name].total if name in c else 0.0

    per_item = ("judge", "record", "spool", "shrink")
    figures = {
        "start-up": phases.configured - t - tot("discovery"),
        "discovery: walk": tot("walk"),
        "discovery: sniff": tot("sniff"),
        "discovery: the rest": own("discovery", "walk", "sniff"),
        "collection": phases.collection,
        "reading lines": own("load", "decode", "open", "scan", "new collector", "collector"),
        "reading: open": tot("open"),
        "reading: byte scan": tot("scan"),
        "reading: new Collector": tot("new collector"),
        "reading: feeding the collector": tot("collector"),
        "decoding": tot("decode"),
        "judging": tot("classify"),
        "judge, the rest": own("judge", "load", "classify"),
        "recording: record": tot("record"),
        "recording: spool": tot("spool"),
        "recording: shrink": tot("shrink"),
        "pytest per item": phases.protocol - sum(tot(k) + c[k].calls * cost for k in per_item if k in c),
        "end of session": phases.finish + phases.summary,
    }
    accounted = phases.configured - t + phases.collection + phases.protocol + phases.finish + phases.summary
    figures["the rest"] = wall - accounted
    figures["total"] = wall
    figures["of which garbage collection"] = phases.gc
    figures["items"] = phases.items
    figures["exit"] = int(code)
    figures["decoded lines"] = c["decode"].calls if "decode" in c else 0
    figures["wrapper ns"] = cost * 1e9
    if kind == "plugin":
        figures.update(floors(target))
    return figures


ROWS = [
    ("start-up", "start-up: pytest.main to the end of configure, less discovery"),
    ("discovery: walk", "discovery: walk"),
    ("discovery: sniff", "discovery: sniff (first lines of each file)"),
    ("discovery: the rest", "discovery: the rest (grouping, naming)"),
    ("collection", "collection (items from the discovered list)"),
    ("reading lines", "reading lines (the readers' line loop less decoding, less the parts below)"),
    ("reading: open", "  of the loop: opening the file (--fine)"),
    ("reading: byte scan", "  of the loop: worth_decoding's byte scan (--fine)"),
    ("reading: new Collector", "  of the loop: a new Collector (--fine)"),
    ("reading: feeding the collector", "  of the loop: Collector.event and run_summary (--fine)"),
    ("decoding", "decoding (jsonl.decode of the lines worth it)"),
    ("judging", "judging (classify)"),
    ("judge, the rest", "judge's own (options, opener, collector)"),
    ("recording: record", "recording: report.record"),
    ("recording: spool", "recording: spool (RecordStore.add)"),
    ("recording: shrink", "recording: Shrinker (reports share what they repeat)"),
    ("pytest per item", "pytest per item (protocol less the above: 3 reports, hooks, progress)"),
    ("end of session", "end of session (report built and written, summary)"),
    ("the rest", "the rest of pytest.main (runtest loop, exit)"),
    ("total", "total (pytest.main)"),
    ("of which garbage collection", "  of which the garbage collector (all phases)"),
]


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--campaign", help="an existing campaign directory (default: generate one)")
    parser.add_argument("--small", type=int, default=10_000, help="small transcripts to generate")
    parser.add_argument("--seed", type=int, default=1)
    parser.add_argument("--reps", type=int, default=3, help="runs of each (interleaved; medians shown)")
    parser.add_argument(
        "--pytest-args", default="", help="more pytest arguments, e.g. '-p no:hypothesispytest'"
    )
    parser.add_argument("--fine", action="store_true", help="also split the line loop (more wrappers)")
    parser.add_argument("--freeze", action="store_true",
                        help="experiment: gc.freeze() once collected, in both runs")  # fmt: skip
    parser.add_argument("--child", nargs=2, metavar=("KIND", "TARGET"), help=argparse.SUPPRESS)
    args = parser.parse_args()
    more = shlex.split(args.pytest_args)
    if args.child:
        with tempfile.TemporaryDirectory(prefix="explore-suff-profile-") as tmp:
            print(json.dumps(child(args.child[0], args.child[1], tmp, more, args.fine, args.freeze)))
        return 0

    with tempfile.TemporaryDirectory(prefix="explore-suff-profile-") as tmp:
        root = args.campaign
        if root is None:
            root = os.path.join(tmp, "small")
            cmd = [sys.executable, str(HERE / "generate.py"), root, "--small", str(args.small), "--seed",
                   str(args.seed)]  # fmt: skip
            print(subprocess.run(cmd, check=True, capture_output=True, text=True).stdout.strip())
        runs: dict[str, list[dict[str, Any]]] = {"plugin": [], "alone": []}
        flags = ["--pytest-args", args.pytest_args, *(["--fine"] if args.fine else []),
                 *(["--freeze"] if args.freeze else [])]  # fmt: skip
        items = "0"
        for rep in range(args.reps):
            order = ["plugin", "alone"] if rep % 2 == 0 else ["alone", "plugin"]
            for kind in order:
                if kind == "alone" and items == "0":
                    continue  # its size is the plugin's item count: after the first plugin run
                target = root if kind == "plugin" else items
                cmd = [sys.executable, __file__, "--child", kind, target, *flags]
                done = subprocess.run(cmd, check=True, capture_output=True, text=True, cwd=tmp)
                runs[kind].append(json.loads(done.stdout.strip().splitlines()[-1]))
                if kind == "plugin":
                    items = str(runs["plugin"][-1]["items"])
            if rep == 0:  # pytest alone was skipped in the first round: run it now
                cmd = [sys.executable, __file__, "--child", "alone", items, *flags]
                done = subprocess.run(cmd, check=True, capture_output=True, text=True, cwd=tmp)
                runs["alone"].append(json.loads(done.stdout.strip().splitlines()[-1]))

    def med(kind: str, key: str) -> float:
        return statistics.median(r[key] for r in runs[kind])

    first = runs["plugin"][0]
    n = int(first["items"]) or 1
    print(f"{n} transcripts, {first['files']} files, {first['lines']} lines, "
          f"{first['decoded lines']} decoded; "
          f"pytest exit {first['exit']}; medians of {args.reps} runs, interleaved with pytest alone on {n} "
          f"do-nothing items; timing wrapper {first['wrapper ns']:.0f} ns a call, subtracted")  # fmt: skip
    width = max(len(label) for _, label in ROWS)
    print(f"{'phase':<{width}}  {'plugin s':>8}  {'ms/transcript':>13}  {'share':>6}  {'alone ms/item':>13}")
    total = med("plugin", "total")
    for key, label in ROWS:
        if key.startswith("reading: ") and not args.fine:
            continue
        secs = med("plugin", key)
        alone = (
            f"{med('alone', key) / n * 1000:13.4f}"
            if key in runs["alone"][0] and (runs["alone"][0][key] or key in ("pytest per item", "total"))
            else ""
        )
        print(f"{label:<{width}}  {secs:8.3f}  {secs / n * 1000:13.4f}  {secs / total:6.1%}  {alone}")
    read, decode = med("plugin", "readline floor"), med("plugin", "decode floor")
    print(f"floors in the same process, the same files: readline every line "
          f"{read / n * 1000:.4f} ms/transcript; "
          f"readline + orjson.loads every line {decode / n * 1000:.4f} ms/transcript")  # fmt: skip
    return 0 if all(r["exit"] == 0 for r in runs["plugin"]) else 1


if __name__ == "__main__":
    sys.exit(main())
