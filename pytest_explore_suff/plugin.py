"""pytest hooks and options: a campaign directory becomes test items, a summary and gates."""

from __future__ import annotations

import argparse
import os
import re
import warnings
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from . import hookspecs, judge
from .campaign import Campaign, Transcript, discover, shown
from .compare import BaselineError, arm_pair, compare_arms, compare_baseline, drop_gates, load_baseline
from .events import ToolSpec
from .gates import GATES, Gate, Outcome, evaluate, parse_threshold, sample_size
from .readers import TranscriptError
from .report import SCHEMA, aggregate, record, write_atomic
from .sources import ARCHIVE_SUFFIXES, ArchiveError, archive_source, is_archive
from .terminal import SMALL_ARM_CALLS, arm_table, baseline_table, call_line, clean, comparison_table

DEFAULT_JSON = "explore-suff.json"
RECORD_ATTR = "explore_suff"  # the report attribute a transcript's record travels on
IGNORED_KEY = "explore_suff_ignored"  # workeroutput key: the files a worker's collection ignored

campaign_key = pytest.StashKey[Campaign]()
settings_key = pytest.StashKey["Settings"]()
reporter_key = pytest.StashKey["Reporter"]()


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

        self.root: str | None = path_opt("explore_suff")
        json_path = path_opt("explore_suff_json") or DEFAULT_JSON
        self.json: str | None = None if json_path == "none" else json_path
        self.spec = ToolSpec(
            explore=opt("explore_suff_tool") or ToolSpec.explore,
            family=opt("explore_suff_family") or ToolSpec.family,
            marker=opt("explore_suff_marker") or ToolSpec.marker,
        )
        self.pattern = _regex(opt("explore_suff_pattern"), "--explore-suff-pattern")
        _regex(self.spec.marker, "--explore-suff-marker")
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
    group.addoption(flag, dest=kwargs.pop("dest", ini), help=help, **kwargs)
    if kwargs.get("action") == "store_true":
        parser.addini(ini, help, type="bool", default=False)
    elif kwargs.get("action") == "append":
        parser.addini(ini, help, type="linelist")
    else:
        parser.addini(ini, help)


def pytest_addoption(parser: pytest.Parser) -> None:
    _option(
        parser,
        "--explore-suff",
        "explore_suff",
        metavar="DIR",
        help="classify every transcript of the campaign DIR, a folder or a .tar.gz/.tgz/.tar/.zip "
        "archive (collects only the campaign)",
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
    root = os.path.abspath(settings.root)
    if is_archive(root):
        if not hasattr(config, "workerinput"):  # list it once here: a broken archive is a usage error
            try:
                archive_source(root)
            except ArchiveError as exc:
                raise pytest.UsageError(f"--explore-suff: archive {settings.root}: {exc}") from None
    elif not os.path.isdir(root):
        what = (
            "does not exist" if not os.path.exists(root)
            else f"is neither a directory nor an archive ({', '.join(ARCHIVE_SUFFIXES)})"
        )  # fmt: skip
        raise pytest.UsageError(f"--explore-suff: campaign directory {settings.root} {what}")
    elif not os.access(root, os.R_OK | os.X_OK):
        raise pytest.UsageError(f"--explore-suff: campaign directory {settings.root} is not readable")
    settings.root = root
    if settings.baseline_path and not hasattr(config, "workerinput"):
        try:
            settings.baseline = load_baseline(settings.baseline_path)
        except BaselineError as exc:
            raise pytest.UsageError(f"--explore-suff-baseline: {exc}") from None
    if settings.max_drop is not None and not settings.baseline_path:
        raise pytest.UsageError("--max-sufficient-drop needs --explore-suff-baseline=REPORT")
    # The campaign replaces the usual test paths: run from anywhere, including
    # a project's own root, it collects the campaign only.
    config.args[:] = [root]
    if not hasattr(config, "workerinput"):
        reporter = Reporter(config, settings)
        config.stash[reporter_key] = reporter
        config.pluginmanager.register(reporter, "explore-suff-reporter")


def pytest_unconfigure(config: pytest.Config) -> None:
    reporter = config.stash.get(reporter_key, None)
    if reporter is not None:
        del config.stash[reporter_key]
        config.pluginmanager.unregister(reporter)


def pytest_sessionfinish(session: pytest.Session) -> None:
    workeroutput = getattr(session.config, "workeroutput", None)
    campaign = session.config.stash.get(campaign_key, None)
    if workeroutput is not None and campaign is not None:
        workeroutput[IGNORED_KEY] = campaign.ignored


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
    settings = node.config.stash[settings_key]
    try:
        campaign = discover(str(node.path), settings.pattern)
    except ArchiveError as exc:
        raise pytest.UsageError(f"--explore-suff: archive {node.path}: {exc}") from None
    node.config.stash[campaign_key] = campaign
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
        for keyword in (transcript.arm, transcript.group, transcript.kind):
            if keyword:
                self.extra_keyword_matches.add(keyword)
        self.user_properties += [("arm", transcript.arm), ("group", transcript.group)]

    def runtest(self) -> None:
        settings = self.config.stash[settings_key]
        t = self.transcript
        try:
            verdict, collector = judge(t.kind, t.files, settings.spec, t.archive)
        except TranscriptError as exc:
            self.record = record(t, status="error", reason=str(exc))
            raise
        except Exception as exc:  # a bug of ours: fail this item, keep the transcript in the report
            self.record = record(t, status="error", reason=f"internal error: {type(exc).__name__}: {exc}")
            raise
        for note in (*t.notes, *collector.warnings):  # pytest names the item; notes name the file
            warnings.warn(ExploreSuffWarning(clean(note)), stacklevel=1)
        if settings.strict and collector.corrupt:
            reason = f"{collector.corrupt} corrupt line(s) (--explore-suff-strict)"
            self.record = record(t, status="error", verdict=verdict, collector=collector, reason=reason)
            raise TranscriptError(reason)
        why = [EXCLUSIONS[flag] for flag in EXCLUSIONS if getattr(verdict, flag)]
        excluded = bool(why) and not settings.keep_excluded
        reason = "; ".join(why) if excluded else ""
        status = "skipped" if excluded else "classified"
        self.record = record(t, status=status, reason=reason, verdict=verdict, collector=collector)
        self.user_properties += [("answered", verdict.answered), ("sufficient", verdict.counts["sufficient"])]
        if excluded:
            # Reported at the transcript, not at this line of the plugin.
            raise pytest.skip.Exception(f"excluded: {reason}", _use_item_location=True)

    def repr_failure(self, excinfo: pytest.ExceptionInfo[BaseException], style: Any = None) -> str:
        if isinstance(excinfo.value, TranscriptError):
            return f"{clean(self.transcript.path)}: {clean(excinfo.value)}"
        return str(super().repr_failure(excinfo, style))

    def reportinfo(self) -> tuple[str, int, str]:
        t = self.transcript
        return t.archive or t.files[0], 0, f"transcript {clean(t.path)} [{clean(t.arm)}]"


@pytest.hookimpl(wrapper=True)
def pytest_runtest_makereport(item: pytest.Item, call: pytest.CallInfo[None]) -> Any:
    report = yield
    if call.when == "call" and isinstance(item, TranscriptItem) and item.record is not None:
        # Plain JSON data on the report: xdist ships report.__dict__ to the controller.
        setattr(report, RECORD_ATTR, item.record)
    return report


class Reporter:
    """Controller-side: gathers records, decides gates, writes the JSON, prints the summary."""

    def __init__(self, config: pytest.Config, settings: Settings) -> None:
        self.config = config
        self.settings = settings
        self.records: dict[str, dict[str, Any]] = {}
        self.outcomes: list[Outcome] = []
        self.document: dict[str, Any] | None = None
        self.notes: list[str] = []
        self.json_error: str | None = None
        self.ignored: list[dict[str, str]] | None = None

    def pytest_runtest_logreport(self, report: pytest.TestReport) -> None:
        rec = getattr(report, RECORD_ATTR, None)
        if rec is not None:
            self.records[rec["path"]] = rec

    @pytest.hookimpl(optionalhook=True)
    def pytest_testnodedown(self, node: Any, error: Any) -> None:
        # xdist: the workers collected, so the ignored files come from one of them.
        ignored = getattr(node, "workeroutput", {}).get(IGNORED_KEY)
        if ignored is not None and self.ignored is None:
            self.ignored = ignored

    @pytest.hookimpl(tryfirst=True)
    def pytest_sessionfinish(self, session: pytest.Session, exitstatus: int) -> None:
        campaign = self.config.stash.get(campaign_key, None)
        if campaign is not None:
            self.ignored = campaign.ignored
        elif self.ignored is None:  # xdist workers that died before reporting: look again
            self.ignored = discover(self.settings.root or ".", self.settings.pattern).ignored
        records = [self.records[k] for k in sorted(self.records)]
        arms, pooled = aggregate(records)
        settings = self.settings
        self.outcomes = evaluate(settings.gates, arms, settings.gate_on)
        if settings.min_calls:
            self.outcomes += sample_size(settings.min_calls, arms)
        pair = arm_pair(arms, settings.compare)
        comparison = None
        self.notes = []
        if pair and all(arms.get(a, {}).get("answered") for a in pair):
            comparison = compare_arms(records, *pair)
        elif settings.compare:
            missing = [a for a in pair or () if not arms.get(a, {}).get("answered")]
            self.notes.append(f"--explore-suff-compare: no answered calls in arm(s) {', '.join(missing)}; "
                              "nothing to compare")  # fmt: skip
        baseline = None
        if settings.baseline is not None:
            changes = compare_baseline(settings.baseline, records)
            baseline = {"report": settings.baseline_path, "arms": changes}
            self.outcomes += drop_gates(changes, settings.max_drop, settings.gate_on)
        self.document = {
            "schema": SCHEMA,
            "campaign": shown(self.settings.root or ""),
            "options": {
                "tool": self.settings.spec.explore,
                "family": self.settings.spec.family,
                "marker": self.settings.spec.marker,
                "pattern": self.settings.pattern.pattern if self.settings.pattern else None,
                "keep_excluded": self.settings.keep_excluded,
                "gate_on": settings.gate_on,
            },
            "arms": arms,
            "pooled": pooled,
            "comparison": comparison,
            "baseline": baseline,
            "gates": [o.to_dict() for o in self.outcomes],
            "transcripts": records,
            "ignored": self.ignored,
        }
        self.config.hook.pytest_explore_suff_update_json(config=self.config, report=self.document)
        if self.settings.json:
            try:
                write_atomic(self.settings.json, self.document)
            except OSError as exc:
                self.json_error = f"could not write {self.settings.json}: {exc.strerror or exc}"
        failed = [o for o in self.outcomes if not o.passed]
        if failed and session.exitstatus == pytest.ExitCode.OK:
            session.exitstatus = pytest.ExitCode.TESTS_FAILED
        if self.json_error and session.exitstatus == pytest.ExitCode.OK:
            session.exitstatus = pytest.ExitCode.INTERNAL_ERROR
        self._junit_properties()

    def _junit_properties(self) -> None:
        # LogXML is registered without a public handle; find it by what it can do.
        for plugin in self.config.pluginmanager.get_plugins():
            add = getattr(plugin, "add_global_property", None)
            if callable(add):
                for o in self.outcomes:
                    name = f"explore_suff_gate {o.gate.option} {o.arm or '*'}"
                    add(name, "n/a" if o.passed is None else ("passed" if o.passed else "failed"))

    def pytest_terminal_summary(self, terminalreporter: Any) -> None:
        if self.document is None or self.config.get_verbosity() < -1:
            return
        tr = terminalreporter
        doc = self.document
        tr.write_sep("=", "explore sufficiency")
        arms, pooled = doc["arms"], doc["pooled"]
        if arms:
            for line in arm_table(arms, pooled).splitlines():
                tr.write_line(line)
        else:
            tr.write_line("no classified transcripts")
        if doc["comparison"]:
            tr.write_line("")
            for line in comparison_table(doc["comparison"]).splitlines():
                tr.write_line(line)
        if doc["baseline"]:
            tr.write_line("")
            tr.write_line(f"against the baseline {clean(doc['baseline']['report'])}:")
            for line in baseline_table(doc["baseline"]["arms"]).splitlines():
                tr.write_line(line)
        for name, agg in arms.items():
            if 0 < agg["answered"] < SMALL_ARM_CALLS:
                tr.write_line(
                    f"warning: arm {clean(name)!s} has only {agg['answered']} answered calls "
                    f"(< {SMALL_ARM_CALLS}): too few to compare arms on",
                    yellow=True,
                )
        for note in self.notes:
            tr.write_line(f"warning: {clean(note)}", yellow=True)
        excluded = [r for r in doc["transcripts"] if r["status"] == "skipped"]
        if excluded:
            tr.write_line(f"excluded from the aggregates: {len(excluded)} transcript(s)")
            for r in excluded:
                tr.write_line(f"  {clean(r['path'])}: {clean(r['reason'])}")
        errors = [r for r in doc["transcripts"] if r["status"] == "error"]
        if errors:
            tr.write_line(f"unreadable: {len(errors)} transcript(s) (failed items)")
        if doc["ignored"]:
            tr.write_line(
                f"ignored: {len(doc['ignored'])} file(s) that are not transcripts or were not followed "
                "(listed with reasons in the JSON report)"
            )
        if self.config.get_verbosity() > 0:
            for r in doc["transcripts"]:
                lines = [call_line(i, c) for i, c in enumerate(r["calls"], 1) if c["bucket"] != "sufficient"]
                if lines:
                    tr.write_line(f"{clean(r['path'])} [{clean(r['arm'])}]")
                    for line in lines:
                        tr.write_line(f"  {line}")
        for o in self.outcomes:
            tr.write_line(f"explore-suff gate {o.describe()}", red=not o.passed, green=bool(o.passed))
        if self.settings.json:
            if self.json_error:
                tr.write_line(f"explore-suff: {self.json_error}", red=True)
            else:
                tr.write_line(f"JSON report: {self.settings.json}")
