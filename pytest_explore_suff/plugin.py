"""pytest hooks and options: a campaign directory becomes test items, a summary and gates."""

from __future__ import annotations

import argparse
import functools
import linecache
import os
import re
import sys
from collections.abc import Iterator
from contextvars import Token
from pathlib import Path
from typing import Any

import pytest
from pytest import ExitCode

from . import hookspecs, judge
from .campaign import Campaign, Transcript, discover, from_wire, shown, to_wire
from .compare import BaselineError, load_baseline
from .document import Coverage, Options, Report, build
from .events import ToolSpec
from .gates import GATES, Gate, parse_threshold
from .readers import TranscriptError
from .readers.base import MAX_LINE
from .report import record, write_atomic, write_chunks_atomic
from .sources import ARCHIVE_SUFFIXES, ArchiveError, Sources, activate, deactivate, is_archive
from .store import RecordStore
from .terminal import clean, summary_lines, verdict_lines

DEFAULT_JSON = "explore-suff.json"
RECORD_ATTR = "explore_suff"  # the report attribute a transcript's record travels on
CAMPAIGN_KEY = "explore_suff_campaign"  # workerinput key: the controller's discovery
DESELECTED_KEY = "explore_suff_deselected"  # workeroutput key: the transcripts a worker deselected

campaign_key = pytest.StashKey[Campaign]()
deselected_key = pytest.StashKey[list[str]]()
settings_key = pytest.StashKey["Settings"]()
reporter_key = pytest.StashKey["Reporter"]()
sources_key = pytest.StashKey[tuple[Sources, Token[Sources | None]]]()


#: Transcript flags that keep a run out of the aggregates, and why (as the reference harness does).
EXCLUSIONS = {
    "raced": "raced (a tool result says 'No such tool available': a start-up race)",
    "contaminated": "contaminated (the arm ran the codegraph CLI through Bash)",
}


class ExploreSuffWarning(UserWarning):
    """A transcript that was classified, but with something worth knowing (corrupt lines, ...)."""


class Settings:
    """Every option, resolved once: the command line wins over the ini file."""

    def __init__(self, config: pytest.Config) -> None:
        def opt(name: str) -> Any:
            value = config.getoption(name)
            return value if value not in (None, [], "") else config.getini(name)

        def path_opt(name: str) -> str | None:
            """A path: from the command line as given; from the ini, relative to the ini file."""
            value = config.getoption(name)
            if value:
                return str(value)
            value = config.getini(name)
            if not value or value == "none":
                return value or None
            base = config.inipath.parent if config.inipath else config.rootpath
            return os.path.join(base, value)

        given = list(dict.fromkeys(config.getoption("explore_suff") or ()))
        if len(given) > 1:
            raise pytest.UsageError(
                f"--explore-suff given {len(given)} times ({', '.join(given)}): one campaign per run"
            )
        # An empty --explore-suff= switches off a campaign the ini file sets.
        self.root: str | None = (given[0] or None) if given else path_opt("explore_suff")
        json_path = path_opt("explore_suff_json") or DEFAULT_JSON
        self.json: str | None = None if json_path == "none" else json_path
        self.html: str | None = path_opt("explore_suff_html")
        self.spec = ToolSpec(
            explore=opt("explore_suff_tool") or ToolSpec.explore,
            family=opt("explore_suff_family") or ToolSpec.family,
            marker=opt("explore_suff_marker") or ToolSpec.marker,
        )
        self.pattern = _regex(opt("explore_suff_pattern"), "--explore-suff-pattern")
        marker = _regex(self.spec.marker, "--explore-suff-marker")
        if marker is not None and marker.groups != 1:
            raise pytest.UsageError(
                f"--explore-suff-marker: needs exactly one group, the returned file's path "
                f"(this one has {marker.groups}): e.g. '^FILE: (\\S+)'"
            )
        self.max_line: int = (
            _checked(opt("explore_suff_max_line"), _byte_count, "explore_suff_max_line") or MAX_LINE
        )
        self.keep_excluded: bool = bool(opt("explore_suff_keep_excluded"))
        self.strict: bool = bool(opt("explore_suff_strict"))
        self.gates: list[Gate] = []
        for stem, (metric, op) in GATES.items():
            cli = config.getoption(stem) or []
            values = (
                cli
                if cli
                else [
                    _checked(v, parse_threshold, f"explore_suff_{stem}")
                    for v in config.getini(f"explore_suff_{stem}")
                ]
            )
            self.gates += [Gate(metric, op, frac, arm) for arm, frac in values]
        self.gate_on: str = opt("explore_suff_gate_on") or "point"
        if self.gate_on not in GATE_ON:
            raise pytest.UsageError(
                f"explore_suff_gate_on: expected one of {', '.join(GATE_ON)}, got {self.gate_on!r}"
            )
        self.min_calls: int | None = _checked(
            opt("explore_suff_min_calls"), _positive_int, "explore_suff_min_calls"
        )
        self.compare: tuple[str, str] | None = _checked(
            opt("explore_suff_compare"), _arm_pair, "explore_suff_compare"
        )
        drop = config.getoption("max_sufficient_drop")
        self.max_drop: float | None = _checked(
            config.getini("explore_suff_max_sufficient_drop") if drop is None else drop,
            _fraction,
            "explore_suff_max_sufficient_drop",
        )
        self.baseline_path: str | None = path_opt("explore_suff_baseline")
        self.baseline: list[dict[str, Any]] | None = None


def _regex(text: str | None, option: str) -> re.Pattern[str] | None:
    if not text:
        return None
    try:
        return re.compile(text, re.MULTILINE)
    except re.error as exc:
        raise pytest.UsageError(f"{option}: not a valid regular expression: {exc}") from None


GATE_ON = ("point", "bound")


def _positive_int(text: str) -> int:
    try:
        value = int(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"{text!r}: expected a whole number of calls") from None
    if value < 1:
        raise argparse.ArgumentTypeError(f"{text!r}: must be at least 1")
    return value


def _byte_count(text: str) -> int:
    """BYTES, or with a binary suffix: 64MiB, 64M, 512k."""
    t = str(text).strip().lower().removesuffix("b").removesuffix("i")
    scale = {"k": 1 << 10, "m": 1 << 20, "g": 1 << 30}.get(t[-1:], 1)
    try:
        value = int(t[:-1] if scale > 1 else t) * scale
    except ValueError:
        raise argparse.ArgumentTypeError(
            f"{text!r}: expected a number of bytes, e.g. 67108864 or 64MiB"
        ) from None
    if value < 1:
        raise argparse.ArgumentTypeError(f"{text!r}: must be at least 1 byte")
    return value


def _fraction(text: str) -> float:
    arm, frac = parse_threshold(text)
    if arm is not None:
        raise argparse.ArgumentTypeError(f"{text!r}: expected FRAC, without an arm")
    return frac


def _arm_pair(text: str) -> tuple[str, str]:
    parts = [p.strip() for p in str(text).split(",")]
    if len(parts) != 2 or not all(parts) or parts[0] == parts[1]:
        raise argparse.ArgumentTypeError(f"{text!r}: expected two different arms, as A,B")
    return parts[0], parts[1]


def _checked(value: Any, parse: Any, ini: str) -> Any:
    """Values from the command line are parsed already; from the ini, parse them here."""
    if value in (None, ""):
        return None
    if not isinstance(value, str):
        return value
    try:
        return parse(value)
    except argparse.ArgumentTypeError as exc:
        raise pytest.UsageError(f"ini {ini}: {exc}") from None


def pytest_addhooks(pluginmanager: pytest.PytestPluginManager) -> None:
    pluginmanager.add_hookspecs(hookspecs)


def _option(parser: pytest.Parser, flag: str, ini: str, help: str, **kwargs: Any) -> None:
    """A command-line option and its ini twin (the command line wins, see `Settings`)."""
    group = parser.getgroup("explore-suff", "explore sufficiency of coding-agent campaigns")
    ini_type = kwargs.pop("ini_type", None)
    group.addoption(flag, dest=kwargs.pop("dest", ini), help=help, **kwargs)
    if kwargs.get("action") == "store_true":
        parser.addini(ini, help, type="bool", default=False)
    elif kwargs.get("action") == "append" and ini_type is None:
        parser.addini(ini, help, type="linelist")
    else:
        parser.addini(ini, help)


def pytest_addoption(parser: pytest.Parser) -> None:
    _option(
        parser,
        "--explore-suff",
        "explore_suff",
        metavar="DIR",
        action="append",
        ini_type="string",
        help="classify every transcript of the campaign DIR, a folder or a .tar.gz/.tgz/.tar/.zip "
        "archive (collects the campaign and any paths named on the command line; an empty DIR "
        "switches off a campaign set in the ini file)",
    )
    _option(
        parser,
        "--explore-suff-json",
        "explore_suff_json",
        metavar="PATH",
        help=f"where to write the JSON report (default: {DEFAULT_JSON}; 'none' to skip)",
    )
    _option(
        parser,
        "--explore-suff-html",
        "explore_suff_html",
        metavar="PATH",
        help="also write the report as one self-contained HTML page (charts, per-call drill-down)",
    )
    _option(
        parser,
        "--explore-suff-pattern",
        "explore_suff_pattern",
        metavar="REGEX",
        help="regex with named groups arm, group, run, searched in each transcript's relative path",
    )
    _option(
        parser,
        "--explore-suff-tool",
        "explore_suff_tool",
        metavar="SUBSTR",
        help=f"judge tool calls whose name contains SUBSTR (default: {ToolSpec.explore})",
    )
    _option(
        parser,
        "--explore-suff-family",
        "explore_suff_family",
        metavar="SUBSTR",
        help="a call of any tool containing SUBSTR is 'explore again'; also its CLI name "
        f"(default: {ToolSpec.family})",
    )
    _option(
        parser,
        "--explore-suff-marker",
        "explore_suff_marker",
        metavar="REGEX",
        help="regex whose first group is a returned file's path (default: the **`path`** line marker)",
    )
    _option(
        parser,
        "--explore-suff-max-line",
        "explore_suff_max_line",
        type=_byte_count,
        metavar="BYTES",
        help="a line longer than BYTES is corrupt: skipped unread, with a warning "
        f"(default: {MAX_LINE >> 20}MiB; suffixes k, M, G)",
    )
    _option(
        parser,
        "--explore-suff-keep-excluded",
        "explore_suff_keep_excluded",
        action="store_true",
        default=None,
        help="keep raced and contaminated runs in the aggregates instead of skipping them",
    )
    _option(
        parser,
        "--explore-suff-strict",
        "explore_suff_strict",
        action="store_true",
        default=None,
        help="fail a transcript that has corrupt lines (default: a warning)",
    )
    _option(
        parser,
        "--explore-suff-gate-on",
        "explore_suff_gate_on",
        choices=GATE_ON,
        help="decide threshold gates on the point estimate (default) or on the 95%% interval's bound",
    )
    _option(
        parser,
        "--explore-suff-min-calls",
        "explore_suff_min_calls",
        type=_positive_int,
        metavar="N",
        help="fail when an arm has answered calls, but fewer than N",
    )
    _option(
        parser,
        "--explore-suff-compare",
        "explore_suff_compare",
        type=_arm_pair,
        metavar="A,B",
        help="the two arms to compare (default: the arms with answered calls, when there are exactly two)",
    )
    _option(
        parser,
        "--explore-suff-baseline",
        "explore_suff_baseline",
        metavar="REPORT",
        help="compare with a saved JSON report of an earlier campaign",
    )
    _option(
        parser,
        "--max-sufficient-drop",
        "explore_suff_max_sufficient_drop",
        dest="max_sufficient_drop",
        type=_fraction,
        metavar="FRAC",
        help="fail when an arm's sufficient share fell by more than FRAC from the baseline",
    )
    for stem, (metric, op) in GATES.items():
        bound = "at least" if op == "min" else "at most"
        _option(
            parser,
            f"--{stem.replace('_', '-')}",
            f"explore_suff_{stem}",
            dest=stem,
            action="append",
            type=parse_threshold,
            metavar="[ARM:]FRAC",
            help=f"fail unless the {metric} share is {bound} FRAC, in ARM or in every arm with answered "
            "calls (repeatable)",
        )


def pytest_configure(config: pytest.Config) -> None:
    settings = Settings(config)
    config.stash[settings_key] = settings
    if settings.root is None:
        return
    # The archives this session reads: listed once, closed at unconfigure, never shared with another run.
    sources = Sources()
    config.stash[sources_key] = (sources, activate(sources))
    worker = getattr(config, "workerinput", None)
    root = os.path.abspath(settings.root)
    if worker is None:
        _check_root(root, settings.root)
    settings.root = root
    if settings.baseline_path and worker is None:
        try:
            settings.baseline = load_baseline(settings.baseline_path)
        except BaselineError as exc:
            raise pytest.UsageError(f"--explore-suff-baseline: {exc}") from None
    if settings.max_drop is not None and not settings.baseline_path:
        raise pytest.UsageError("--max-sufficient-drop needs --explore-suff-baseline=REPORT")
    # The campaign replaces the usual test paths (run from a project's own root,
    # it collects the campaign, not the project's tests); paths the user named
    # on the command line are collected along with it.
    named = config.args if config.args_source == pytest.Config.ArgsSource.ARGS else []
    config.args[:] = [root, *(a for a in named if os.path.abspath(a) != root)]
    if worker is not None:
        # The controller discovered the campaign once; every worker collects that
        # list, so files a harness adds or removes meanwhile cannot split them.
        config.stash[campaign_key] = from_wire(worker[CAMPAIGN_KEY])
        config.pluginmanager.register(WorkerShrinker(), "explore-suff-worker-shrinker")
        return
    if config.option.help or config.option.version:
        return
    try:
        config.stash[campaign_key] = discover(root, settings.pattern)
    except ArchiveError as exc:
        raise pytest.UsageError(f"--explore-suff: archive {settings.root}: {exc}") from None
    reporter = Reporter(config, settings)
    config.stash[reporter_key] = reporter
    config.pluginmanager.register(reporter, "explore-suff-reporter")


def _check_root(root: str, given: str) -> None:
    if is_archive(root):
        return  # discovery lists it: a broken archive is a usage error there
    if not os.path.isdir(root):
        what = (
            "does not exist" if not os.path.exists(root)
            else f"is neither a directory nor an archive ({', '.join(ARCHIVE_SUFFIXES)})"
        )  # fmt: skip
        raise pytest.UsageError(f"--explore-suff: campaign directory {given} {what}")
    if not os.access(root, os.R_OK | os.X_OK):
        raise pytest.UsageError(f"--explore-suff: campaign directory {given} is not readable")


def pytest_unconfigure(config: pytest.Config) -> None:
    reporter = config.stash.get(reporter_key, None)
    if reporter is not None:
        del config.stash[reporter_key]
        config.pluginmanager.unregister(reporter)
        reporter.close()
    owned = config.stash.get(sources_key, None)
    if owned is not None:
        del config.stash[sources_key]
        sources, token = owned
        deactivate(token)
        sources.close()


def pytest_deselected(items: list[pytest.Item]) -> None:
    paths = [item.transcript.path for item in items if isinstance(item, TranscriptItem)]
    if paths:
        config = items[0].config
        config.stash.setdefault(deselected_key, []).extend(paths)


def pytest_sessionfinish(session: pytest.Session) -> None:
    workeroutput = getattr(session.config, "workeroutput", None)
    if workeroutput is not None:  # xdist worker: -k, -m, --lf deselect on the workers
        workeroutput[DESELECTED_KEY] = session.config.stash.get(deselected_key, [])


def _campaign_node(cls: Any, path: Path, parent: pytest.Collector) -> pytest.Collector:
    """The campaign's node. Inside the rootdir pytest names it by its relative
    path; outside, pytest would give it an empty node id (items would read
    ``::run1/x.jsonl``), so it is named by its own name, escaped: pytest writes
    node ids to its cache as UTF-8, and a name may not be."""
    try:
        path.relative_to(parent.config.rootpath)
        inside = shown(str(path)) == str(path)
    except ValueError:
        inside = False
    if inside:
        return cls.from_parent(parent, path=path)  # type: ignore[no-any-return]
    name = shown(path.name)
    return cls.from_parent(parent, path=path, name=name, nodeid=name)  # type: ignore[no-any-return]


def pytest_collect_directory(path: Path, parent: pytest.Collector) -> pytest.Collector | None:
    settings = parent.config.stash.get(settings_key, None)
    if settings is not None and settings.root is not None and str(path) == settings.root:
        return _campaign_node(CampaignDir, path, parent)
    return None


def pytest_collect_file(file_path: Path, parent: pytest.Collector) -> pytest.Collector | None:
    settings = parent.config.stash.get(settings_key, None)
    if settings is not None and settings.root is not None and str(file_path) == settings.root:
        return _campaign_node(CampaignArchive, file_path, parent)
    return None


def _collect_campaign(node: pytest.Collector) -> Iterator[pytest.Item]:
    campaign = node.config.stash[campaign_key]
    # Sorted by path (a directory) or archive order: the same order on every worker.
    for transcript in campaign.transcripts:
        # Escaped: pytest prints node ids raw, and a file name can carry ANSI codes.
        yield TranscriptItem.from_parent(node, name=clean(transcript.path), transcript=transcript)


class CampaignDir(pytest.Directory):
    """The campaign directory: one item per transcript, nothing else collected."""

    def collect(self) -> Iterator[pytest.Item]:
        return _collect_campaign(self)


class CampaignArchive(pytest.File):
    """A campaign read in place from a .tar.gz, .tgz, .tar or .zip archive."""

    def collect(self) -> Iterator[pytest.Item]:
        return _collect_campaign(self)


class TranscriptItem(pytest.Item):
    def __init__(self, *, transcript: Transcript, **kwargs: Any) -> None:
        super().__init__(**kwargs)
        self.transcript = transcript
        self.record: dict[str, Any] | None = None
        for keyword in (transcript.arm, transcript.group, transcript.kind, transcript.agent):
            if keyword:
                self.extra_keyword_matches.add(keyword)
        self.user_properties += [_property("arm", transcript.arm), _property("group", transcript.group)]

    def runtest(self) -> None:
        settings = self.config.stash[settings_key]
        t = self.transcript
        try:
            verdict, collector = judge(t.kind, t.files, settings.spec, t.archive, max_line=settings.max_line)
        except TranscriptError as exc:
            self.record = record(t, status="error", reason=str(exc))
            raise
        except Exception as exc:  # a bug of ours: fail this item, keep the transcript in the report
            self.record = record(t, status="error", reason=f"internal error: {type(exc).__name__}: {exc}")
            raise
        why = [EXCLUSIONS[flag] for flag in EXCLUSIONS if getattr(verdict, flag)]
        excluded = bool(why) and not settings.keep_excluded
        failing = settings.strict and collector.corrupt
        reason = (
            f"{collector.corrupt} corrupt line(s) (--explore-suff-strict)" if failing
            else "; ".join(why) if excluded else ""
        )  # fmt: skip
        status = "error" if failing else "skipped" if excluded else "classified"
        # The record first: whatever a warning filter turns the notes below into,
        # the transcript is in the report.
        self.record = record(t, status=status, reason=reason, verdict=verdict, collector=collector)
        notes = (*t.notes, *collector.warnings)
        if notes:
            _no_source_line(self.location[0])
        for note in notes:
            # Located at the transcript (reportinfo), not at this line of the plugin.
            self.warn(ExploreSuffWarning(clean(note)))
        if failing:
            raise TranscriptError(reason)
        self.user_properties += [
            _property("answered", verdict.answered),
            _property("sufficient", verdict.counts["sufficient"]),
        ]
        if excluded:
            raise pytest.skip.Exception(f"excluded: {reason}", _use_item_location=True)

    def repr_failure(self, excinfo: pytest.ExceptionInfo[BaseException], style: Any = None) -> str:
        where = clean(self.transcript.path)
        error = excinfo.value
        if isinstance(error, TranscriptError):
            return f"{where}: {clean(error)}"
        if isinstance(error, ExploreSuffWarning):
            # Its text names the file already.
            return f"{clean(error)} (a warning, made an error by the warning filters)"
        # A bug of ours: one line, and where in the plugin (never pytest's or pluggy's frames).
        frames = [e for e in excinfo.traceback if _PACKAGE in str(e.path)]
        at = f" (at {os.path.basename(str(frames[-1].path))}:{frames[-1].lineno + 1})" if frames else ""
        return f"{where}: internal error: {type(error).__name__}: {clean(error)}{at}"

    def reportinfo(self) -> tuple[str, int, str]:
        t = self.transcript
        return t.archive or t.files[0], 0, f"transcript {clean(t.path)} [{clean(t.arm)}]"

    @functools.cached_property
    def location(self) -> tuple[str, int | None, str]:
        # pytest's own makes Paths of every item's file and asks bestrelpath: a tenth of a
        # millisecond per item, each item's file being another. For a normalized absolute
        # path its answer is os.path.relpath's, plain string work.
        path, line, domain = self.reportinfo()
        if os.path.isabs(path) and os.path.normpath(path) == path:
            try:
                return os.path.relpath(path, self.config.rootpath), line, domain
            except ValueError:  # Windows: another drive
                pass
        return super().location


_PACKAGE = os.path.dirname(os.path.abspath(__file__))


@functools.lru_cache(maxsize=4096, typed=True)
def _property(name: str, value: Any) -> tuple[str, Any]:
    """A user property: the same few pairs recur on thousands of items, kept to the end."""
    return (name, value)


def _no_source_line(filename: str) -> None:
    """Keep the warnings machinery from reading a transcript to quote its "source line".

    A warning located at a file is shown with that file's line, and linecache
    reads the whole file for it: gigabytes, for a transcript with one huge
    line. An entry with no lines and no mtime is served as is, never read from
    disk nor invalidated (linecache treats it as loaded by a module loader).
    """
    linecache.cache.setdefault(filename, (0, None, [], filename))


@pytest.hookimpl(wrapper=True)
def pytest_runtest_makereport(item: pytest.Item, call: pytest.CallInfo[None]) -> Any:
    report = yield
    if call.when == "call" and isinstance(item, TranscriptItem) and item.record is not None:
        # Plain JSON data on the report: xdist ships report.__dict__ to the controller.
        setattr(report, RECORD_ATTR, item.record)
        item.record = None  # the item lives to the end of the session; its record need not
    return report


def _pair(value: Any) -> bool:
    """A property pair `_property` may share: no float (0.0 and -0.0 are equal, and would be one)."""
    return (
        type(value) is tuple
        and len(value) == 2
        and type(value[0]) is str
        and type(value[1]) in (str, int, bool, type(None))
    )


class Shrinker:
    """Keeps less of what pytest holds to the end of the session: three reports per item.

    pytest builds each of an item's setup, call and teardown reports with a dict
    of every keyword of the item, a list of its user properties and its
    location (under xdist also its own copy of every string and the parsed node
    id), and the terminal reporter keeps all of them. Once every plugin has seen
    a report (`shrink` runs last), values equal to the item's previous report's
    are swapped for that report's objects, and the few strings every report
    repeats for one copy: equal values, about two kilobytes less per item.
    """

    SHARED = ("keywords", "user_properties", "location", "_id")

    def __init__(self) -> None:
        self._latest: dict[str, dict[str, Any]] = {}  # nodeid -> the fields of its latest report

    def shrink(self, report: pytest.TestReport) -> None:
        fields = vars(report)
        nodeid = report.nodeid
        latest = self._latest.get(nodeid)
        if latest is not None:
            for name in self.SHARED:
                if name in fields and name in latest and fields[name] == latest[name]:
                    fields[name] = latest[name]
        else:
            keywords = fields.get("keywords")
            if type(keywords) is dict and not all(sys.intern(key) is key for key in keywords):
                fields["keywords"] = {sys.intern(key): value for key, value in keywords.items()}
        properties = fields.get("user_properties")
        if type(properties) is list and (latest is None or properties is not latest.get("user_properties")):
            fields["user_properties"] = [_property(*p) if _pair(p) else p for p in properties]
        for name in ("when", "outcome", "worker_id", "testrun_uid"):
            if type(fields.get(name)) is str:
                fields[name] = sys.intern(fields[name])
        if report.when == "teardown":
            self._latest.pop(nodeid, None)
        else:
            self._latest[nodeid] = fields


class WorkerShrinker(Shrinker):
    """On an xdist worker: its terminal reporter keeps every report too, after xdist sent it."""

    @pytest.hookimpl(trylast=True)
    def pytest_runtest_logreport(self, report: pytest.TestReport) -> None:
        if hasattr(report, RECORD_ATTR):  # sent to the controller already (xdist's hook ran first)
            delattr(report, RECORD_ATTR)
        self.shrink(report)


class Reporter:
    """Controller-side: gathers records, builds the report, writes it, prints the summary."""

    def __init__(self, config: pytest.Config, settings: Settings) -> None:
        self.config = config
        self.settings = settings
        # Records leave memory as they arrive: spooled to a temporary file (closed at unconfigure).
        self.records = RecordStore()
        self.deselected: set[str] = set()
        self.report: Report | None = None
        self.write_errors: list[str] = []
        self.shrinker = Shrinker()

    @pytest.hookimpl(trylast=True)
    def pytest_runtest_logreport(self, report: pytest.TestReport) -> None:
        rec = getattr(report, RECORD_ATTR, None)
        if rec is not None:
            self.records.add(rec)
            # The terminal reporter keeps every report to the end: without its record,
            # a report weighs what pytest's own do (other plugins saw it: this runs last).
            delattr(report, RECORD_ATTR)
        self.shrinker.shrink(report)

    @pytest.hookimpl(optionalhook=True)
    def pytest_configure_node(self, node: Any) -> None:
        # xdist: hand every worker the one discovery instead of letting each walk the campaign.
        node.workerinput[CAMPAIGN_KEY] = to_wire(self.config.stash[campaign_key])

    @pytest.hookimpl(optionalhook=True)
    def pytest_testnodeready(self, node: Any) -> None:
        # The worker has its campaign list: the controller's copy of it can go.
        node.workerinput.pop(CAMPAIGN_KEY, None)

    @pytest.hookimpl(optionalhook=True)
    def pytest_testnodedown(self, node: Any, error: Any) -> None:
        self.deselected.update(getattr(node, "workeroutput", {}).get(DESELECTED_KEY, ()))

    @pytest.hookimpl(optionalhook=True)
    def pytest_html_results_summary(self, prefix: list[str], summary: Any, postfix: Any) -> None:
        # pytest-html's own report: the per-arm table at its top (after our sessionfinish built it).
        if self.report is not None:
            from .html import arm_summary

            prefix.append(arm_summary(self.report.arms, self.report.pooled))

    def _coverage(self, session: pytest.Session, exitstatus: int) -> Coverage:
        transcripts = self.config.stash[campaign_key].transcripts
        deselected = self.deselected | set(self.config.stash.get(deselected_key, ()))
        not_run = [
            {"path": t.path, "why": "deselected" if t.path in deselected else "not run"}
            for t in transcripts
            if t.path not in self.records
        ]
        stopped = session.shouldfail or session.shouldstop
        return Coverage(
            collected=len(transcripts),
            ran=len(self.records),
            interrupted=exitstatus == pytest.ExitCode.INTERRUPTED,
            stopped=stopped if isinstance(stopped, str) else "",
            not_run=not_run,
        )

    @pytest.hookimpl(tryfirst=True)
    def pytest_sessionfinish(self, session: pytest.Session, exitstatus: int) -> None:
        if self.config.option.collectonly:
            return  # --co runs nothing: no report to write, no gate to decide
        settings = self.settings
        campaign = self.config.stash[campaign_key]
        baseline = None if settings.baseline is None else (settings.baseline_path or "", settings.baseline)
        self.report = build(
            campaign=shown(settings.root or ""),
            options=Options(
                tool=settings.spec.explore,
                family=settings.spec.family,
                marker=settings.spec.marker,
                pattern=settings.pattern.pattern if settings.pattern else None,
                keep_excluded=settings.keep_excluded,
                gate_on=settings.gate_on,
            ),
            coverage=self._coverage(session, exitstatus),
            records=self.records.records(),
            ignored=campaign.ignored,
            gates=settings.gates,
            min_calls=settings.min_calls,
            compare=settings.compare,
            baseline=baseline,
            max_drop=settings.max_drop,
        )
        self._write(self.report)
        # A gate that failed or could not be decided fails the run, also when the
        # campaign was empty (pytest's own "no tests collected" says less).
        if self.report.failed and session.exitstatus in (ExitCode.OK, ExitCode.NO_TESTS_COLLECTED):
            session.exitstatus = pytest.ExitCode.TESTS_FAILED
        if self.write_errors and session.exitstatus == pytest.ExitCode.OK:
            session.exitstatus = pytest.ExitCode.INTERNAL_ERROR
        self._junit_properties()

    def _write(self, report: Report) -> None:
        """The JSON report streamed from the record spool; the whole document is built in
        memory only for a plugin that updates it, or for the HTML page."""
        settings = self.settings
        hook = self.config.hook.pytest_explore_suff_update_json
        document = None
        if settings.html or hook.get_hookimpls():
            document = report.to_json()
            hook(config=self.config, report=document)

        def write_json(path: str) -> None:
            if document is None:
                write_chunks_atomic(path, report.json_chunks())
            else:
                write_atomic(path, document)

        def write_html(path: str) -> None:
            _write_html(path, document if document is not None else report.to_json())

        outputs = ((settings.json, write_json), (settings.html, write_html))
        for path, write in outputs:
            if path:
                try:
                    write(path)
                except OSError as exc:
                    self.write_errors.append(f"could not write {path}: {exc.strerror or exc}")

    def close(self) -> None:
        self.records.close()

    def _junit_properties(self) -> None:
        assert self.report is not None
        # LogXML is registered without a public handle; find it by what it can do.
        for plugin in self.config.pluginmanager.get_plugins():
            add = getattr(plugin, "add_global_property", None)
            if callable(add):
                for o in self.report.outcomes:
                    name = f"explore_suff_gate {o.gate.option} {o.arm or '*'}"
                    add(name, "n/a" if o.passed is None else ("passed" if o.passed else "failed"))

    def pytest_terminal_summary(self, terminalreporter: Any) -> None:
        tr = terminalreporter
        verbosity = self.config.get_verbosity()
        if self.report is None:
            if self.config.option.collectonly and verbosity >= 0:
                tr.write_line("explore-suff: --collect-only: no report written, no gate decided")
            return
        width = _width(tr)
        if verbosity >= -1:
            tr.write_sep("=", "explore sufficiency")
            for line in summary_lines(self.report, width=width, verbose=verbosity > 0):
                tr.write_line(line.text, **line.markup)
        # What made the run fail, or makes its report partial, at every verbosity (-qq included).
        for line in verdict_lines(self.report, width=width, passed=verbosity >= -1):
            tr.write_line(line.text, **line.markup)
        for error in self.write_errors:
            tr.write_line(f"explore-suff: {error}", red=True)
        if not self.write_errors and verbosity >= -1:
            for what, path in (("JSON", self.settings.json), ("HTML", self.settings.html)):
                if path:
                    tr.write_line(f"{what} report: {path}")


def _write_html(path: str, document: dict[str, Any]) -> None:
    from .html import write_html_atomic  # Jinja2 is imported only when a page is asked for

    write_html_atomic(path, document)


def _width(tr: Any) -> int:
    """The terminal's width as pytest measured it (COLUMNS, the tty), 80 when unknown."""
    writer = getattr(tr, "_tw", None)
    return int(getattr(writer, "fullwidth", 80) or 80)
