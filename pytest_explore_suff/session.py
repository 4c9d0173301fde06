"""One run of a campaign, from configure to unconfigure: the `Reporter` gathers the records,
builds the report, decides the gates, writes JSON and HTML and prints the summary."""

from __future__ import annotations

import gc
import os
import sys
import time
from contextvars import Token
from typing import Any

import pytest
from pytest import ExitCode

from . import __version__, history, xdist
from .campaign import Campaign, discover, shown
from .compare import BaselineError, read_baseline
from .document import Coverage, Options, Report, build
from .guard import inside
from .nodes import (
    RECORD_ATTR,
    cache_hits_key,
    campaign_key,
    close_cache,
    deselected_key,
    readers_of,
    verdict_cache,
)
from .options import Settings, settings_key
from .plugin import LAST_THAW
from .report import write_atomic, write_chunks_atomic
from .sources import ARCHIVE_SUFFIXES, INDEXING, ArchiveError, Sources, activate, deactivate, is_archive
from .store import RecordStore
from .terminal import summary_lines, verdict_lines

reporter_key = pytest.StashKey["Reporter"]()
sources_key = pytest.StashKey[tuple[Sources, Token[Sources | None]]]()

XDIST_CONTROLLER = "explore-suff-xdist"
THAW = "explore-suff-gc-thaw"


def configure(config: pytest.Config) -> None:
    """A campaign is asked for (`options.campaign_asked`): set up its run."""
    settings = config.stash[settings_key]
    assert settings.root is not None
    _freeze_survivors(config)
    # The archives this session reads: listed once, closed at unconfigure, never shared with another run.
    sources = Sources()
    config.stash[sources_key] = (sources, activate(sources))
    worker = getattr(config, "workerinput", None)
    root = os.path.abspath(settings.root)
    if worker is None:
        _check_root(root, settings.root)
    given, settings.root = settings.root, root
    informing = not (config.option.help or config.option.version)
    announce = None
    if worker is None and informing and is_archive(root) and os.path.isfile(root):
        # Said before the archive is first listed (a truth file is looked for in it, then the
        # campaign is discovered): pytest's header waits for both.
        announce = _Indexing(config, root)
        token = INDEXING.set(announce)
        config.add_cleanup(lambda: INDEXING.reset(token))
    if informing:
        _load_truth(settings, root, given)
    if settings.baseline_path and worker is None:
        try:
            if not os.path.exists(settings.baseline_path) and settings.baseline_spec:
                # Not a file: a saved run's name, number, or 'last'
                settings.baseline_path = history.resolve(settings.baseline_spec, settings.storage)
            settings.baseline, settings.baseline_judged = read_baseline(settings.baseline_path)
            if settings.truth is not None:
                settings.baseline_truth = _baseline_truth(settings.baseline_path)
        except (BaselineError, history.HistoryError) as exc:
            raise pytest.UsageError(f"--explore-suff-baseline: {exc}") from None
    if settings.max_drop is not None and not settings.baseline_path:
        raise pytest.UsageError("--max-sufficient-drop needs --explore-suff-baseline=REPORT")
    truth_gates = [*settings.truth_gates, *settings.truth_baseline_gates]
    if truth_gates and settings.truth is None:
        raise pytest.UsageError(
            f"{truth_gates[0].option} needs a truth file: --explore-suff-truth=FILE, or an "
            "explore-suff-truth.toml at the campaign's root"
        )
    if settings.truth_baseline_gates and not settings.baseline_path:
        raise pytest.UsageError(
            f"{settings.truth_baseline_gates[0].option} needs --explore-suff-baseline=REPORT"
        )
    if settings.metric_baseline_gates and not settings.baseline_path:
        raise pytest.UsageError(
            f"{settings.metric_baseline_gates[0].option} needs --explore-suff-baseline=REPORT"
        )
    if settings.control and not settings.baseline_path:
        raise pytest.UsageError("--explore-suff-control needs --explore-suff-baseline=REPORT")
    # The campaign replaces the usual test paths (run from a project's own root,
    # it collects the campaign, not the project's tests); paths the user named
    # on the command line are collected along with it.
    named = config.args if config.args_source == pytest.Config.ArgsSource.ARGS else []
    others = [a for a in named if os.path.abspath(a) != root]
    # A campaign in a folder named too is collected by that folder's walk (`guard.keep_campaign`):
    # named as well, pytest 8 would collect the folder only as far as the campaign.
    within = any(os.path.isdir(a) and inside(root, (os.path.abspath(a),)) for a in others)
    config.args[:] = others if within else [root, *others]
    if worker is not None:
        xdist.configure_worker(config, worker)
        return
    if config.option.help or config.option.version:
        return
    if settings.save and not config.option.collectonly:
        try:  # before the first item: a run that cannot be saved says so now, not at its end
            history.prepare_storage(settings.storage)
        except history.HistoryError as exc:
            raise pytest.UsageError(str(exc)) from None
    if (settings.trend is not None or settings.trend_fail) and os.path.isfile(settings.storage):
        raise pytest.UsageError(f"--explore-suff-trend: storage {settings.storage}: not a folder")
    try:
        config.stash[campaign_key] = discover(root, settings.pattern, readers_of(config))
    except ArchiveError as exc:
        if announce is not None and announce.tty:
            announce.write("")  # end the progress line before the error
        raise pytest.UsageError(f"--explore-suff: archive {settings.root}: {exc}") from None
    if announce is not None:
        announce.done(len(config.stash[campaign_key].transcripts))
    _check_discovered(settings, config.stash[campaign_key])
    reporter = Reporter(config, settings)
    config.stash[reporter_key] = reporter
    config.pluginmanager.register(reporter, "explore-suff-reporter")
    config.pluginmanager.register(xdist.Controller(config), XDIST_CONTROLLER)
    config.pluginmanager.register(xdist.WireIn(), xdist.WIRE)  # under xdist: the workers' reports


def _baseline_truth(path: str) -> dict[str, Any]:
    """The truth file a baseline report was graded against (``{}``: none), to say whether
    it is this run's (read only when a truth file is in play)."""
    import orjson

    try:
        with open(path, "rb") as fh:
            truth = orjson.loads(fh.read()).get("truth")
    except (OSError, ValueError, AttributeError):
        return {}
    return truth if isinstance(truth, dict) else {}


def _load_truth(settings: Settings, root: str, given: str) -> None:
    """The truth file in play (`truth.Truth`, read and validated once per process, before
    any item runs): the one named, else the campaign's own (named after the campaign as
    ``given``); a bad one is a usage error."""
    named = settings.truth_path
    if named == "none":
        return
    if named is None and not _may_hold_truth(root):
        return
    from . import truth

    try:
        if named is not None:
            settings.truth = truth.load(named)
        elif (found := truth.find(root)) is not None:
            where, data = found
            shown_as = (
                f"{given}:{truth.DEFAULT_NAME}"
                if is_archive(root)
                else os.path.join(given, truth.DEFAULT_NAME)
            )
            settings.truth = truth.load(where, shown_as, data=data)
            settings.truth_found = True
    except truth.TruthError as exc:
        raise pytest.UsageError(f"--explore-suff-truth: {exc}") from None


def _may_hold_truth(root: str) -> bool:
    """Whether the campaign may hold a truth file at its root: an archive (its listing
    says), or a folder with the file (one stat: the usual run imports no truth code)."""
    from .sources import TRUTH_NAME

    return is_archive(root) or os.path.isfile(os.path.join(root, TRUTH_NAME))


def _freeze_survivors(config: pytest.Config) -> None:
    """Keeps the garbage collector from walking, again and again, what the session keeps.

    A campaign's session keeps objects to its end: the items, their transcripts,
    three reports an item (pytest's terminal reporter holds them). Each full
    collection walks all of them, and the collector runs one whenever a quarter
    more has piled up since the last: over tens of thousands of transcripts a
    walk costs more per transcript the more transcripts came before. Whatever
    survives a full collection is frozen (`gc.freeze`) right after it, so the
    next one walks only what came since (from the end of collection on). Objects frozen are still freed when
    nothing refers to them; only a reference cycle among them waits for the
    thaw. The thaw comes first thing at the session's finish (or at cleanup, if
    it never ran): the report, the summaries and other plugins' finish see the
    collector as it was (``gc.get_referrers`` does not look at frozen objects,
    and hypothesis, imported for its summary, asks it). A process that froze
    objects of its own before is left alone.
    """
    thaw = _Thaw()
    config.pluginmanager.register(thaw, THAW)
    config.add_cleanup(thaw.thaw)


class _Thaw:
    """Freezes from the end of collection (what the session keeps is there by then) to the
    session's finish. Not from configure: the session's start belongs to other plugins too,
    and hypothesis runs its entry points there, one of which (trio's) asks
    ``gc.get_referrers``, which would warn of frozen objects (an error under
    ``filterwarnings = error``)."""

    def __init__(self) -> None:
        self.started = False
        self.done = False
        self.watching = False
        self.fulls = 0

    @pytest.hookimpl(trylast=True)
    def pytest_collection_finish(self) -> None:
        if self.done or self.started or gc.get_freeze_count() or _freeze_after_full in gc.callbacks:
            return  # a process that froze objects of its own is left alone
        self.started = True
        gc.callbacks.append(_freeze_after_full)

    @pytest.hookimpl(tryfirst=True)
    def pytest_sessionfinish(self) -> None:
        self.thaw()

    def thaw(self) -> None:
        if not self.done:
            self.done = True
            if self.started:
                gc.callbacks.remove(_freeze_after_full)
                gc.unfreeze()

    # pytest's unraisable-exception plugin collects garbage twice at the end: at its
    # unconfigure and at its cleanup (each a full walk of every object the process holds;
    # 4-9 ms each on 400 transcripts). On CPython the second finds nothing the first did not
    # leave: what survived the first is frozen after it, so the second walks only what came
    # since, and thawed by the config's last cleanup (`plugin._unfreeze_last`). Only when a
    # full collection did run in between (pytest 8 collects at its cleanup alone).

    @pytest.hookimpl(tryfirst=True, specname="pytest_unconfigure")
    def pytest_unconfigure_watch(self, config: pytest.Config) -> None:
        self.thaw()
        self.fulls = 0
        if config.stash.get(LAST_THAW, None) is False and not gc.get_freeze_count():
            gc.callbacks.append(self._count_full)
            self.watching = True

    @pytest.hookimpl(trylast=True, specname="pytest_unconfigure")
    def pytest_unconfigure_freeze(self, config: pytest.Config) -> None:
        if not self.watching:
            return
        self.watching = False
        gc.callbacks.remove(self._count_full)
        if self.fulls and not gc.get_freeze_count():
            gc.freeze()
            config.stash[LAST_THAW] = True

    def _count_full(self, phase: str, info: dict[str, int]) -> None:
        if phase == "stop" and info["generation"] == 2:
            self.fulls += 1


def _freeze_after_full(phase: str, info: dict[str, int]) -> None:
    # A full collection leaves none of the younger generations: all that is tracked now survived it.
    if phase == "stop" and info["generation"] == 2:
        gc.freeze()


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


class _Indexing:
    """What a run says while it lists an archive, before pytest's header (which waits for it):
    a line naming the archive and its size, on a terminal how much of it was read, and a
    line when it is done. A 1.3 GB .tar.gz takes half a minute; it said nothing."""

    def __init__(self, config: pytest.Config, path: str) -> None:
        self.out = sys.stdout
        self.width = 0  # of the progress line shown, to overwrite it whole
        self.quiet = config.get_verbosity() < -1  # -qq: only what fails
        self.tty = self.out.isatty() and not self.quiet
        self.size = os.path.getsize(path)
        self.name = os.path.basename(path)
        self.start = time.monotonic()
        self.shown = self.start
        self.write(f"explore-suff: reading the archive {self.name} ({_bytes(self.size)}) to list its "
                   "transcripts...", end="" if self.tty else "\n")  # fmt: skip

    def write(self, text: str, end: str = "\n") -> None:
        if not self.quiet:
            if self.tty and text.startswith("\r"):
                text = text.ljust(self.width)
            self.width = len(text)
            self.out.write(text + end)
            self.out.flush()

    def __call__(self, read: int) -> None:
        now = time.monotonic()
        if self.tty and now - self.shown >= 0.5 and self.size:
            self.shown = now
            self.write(f"\rexplore-suff: reading the archive {self.name} ({_bytes(self.size)}): "
                       f"{min(read / self.size, 1):.0%}", end="")  # fmt: skip

    def done(self, transcripts: int) -> None:
        took = time.monotonic() - self.start
        self.write(f"{chr(13) if self.tty else ''}explore-suff: listed {self.name} ({_bytes(self.size)}) in "
                   f"{took:.1f} s: {transcripts} transcript{'' if transcripts == 1 else 's'}")  # fmt: skip


def _bytes(n: int) -> str:
    return f"{n / 1e9:.1f} GB" if n >= 1e9 else f"{n / 1e6:.0f} MB" if n >= 1e6 else f"{n / 1e3:.0f} kB"


def _check_discovered(settings: Settings, campaign: Campaign) -> None:
    """What the options name must be in the campaign: a pattern that matches no transcript's
    path, or an arm to compare that no transcript is in, is a typo, not a finding."""
    transcripts = campaign.transcripts
    if settings.pattern is not None and transcripts and not campaign.matched:
        raise pytest.UsageError(
            f"--explore-suff-pattern: {settings.pattern.pattern!r} matches none of the "
            f"{len(transcripts)} transcripts' paths (searched in the path in the campaign, e.g. "
            f"{transcripts[0].path!r})"
        )
    if settings.compare and transcripts:
        arms = sorted({t.arm for t in transcripts})
        if missing := [a for a in settings.compare if a not in arms]:
            raise pytest.UsageError(compare_error(missing, arms))


def compare_error(missing: list[str], arms: list[str]) -> str:
    return (f"--explore-suff-compare: no arm {', '.join(map(repr, missing))} in the campaign "
            f"(its arms: {', '.join(arms)})")  # fmt: skip


def unconfigure(config: pytest.Config) -> None:
    close_cache(config)  # a session that ended before its finish
    reporter = config.stash.get(reporter_key, None)
    if reporter is not None:
        del config.stash[reporter_key]
        config.pluginmanager.unregister(reporter)
        config.pluginmanager.unregister(name=XDIST_CONTROLLER)
        config.pluginmanager.unregister(name=xdist.WIRE)
        reporter.close()
    owned = config.stash.get(sources_key, None)
    if owned is not None:
        del config.stash[sources_key]
        sources, token = owned
        deactivate(token)
        sources.close()


class Reporter:
    """Controller-side: gathers records, builds the report, writes it, prints the summary."""

    def __init__(self, config: pytest.Config, settings: Settings) -> None:
        self.config = config
        self.settings = settings
        # Records leave memory as they arrive: spooled to a temporary file (closed at unconfigure).
        self.records = RecordStore()
        self.report: Report | None = None
        self.write_errors: list[str] = []
        self.notes: list[str] = []  # what the run left out and says (a damaged saved run)
        self.written: list[str] = []  # the outputs written ("JSON report", "saved run", ...)
        self.shrinker = xdist.Shrinker()

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
    def pytest_html_results_summary(self, prefix: list[str], summary: Any, postfix: Any) -> None:
        # pytest-html's own report: the per-arm table at its top (after our sessionfinish built it).
        if self.report is not None:
            from .html import arm_summary

            prefix.append(arm_summary(self.report.arms, self.report.pooled))

    def _coverage(self, session: pytest.Session, exitstatus: int) -> Coverage:
        transcripts = self.config.stash[campaign_key].transcripts
        deselected = set(self.config.stash.get(deselected_key, ()))  # here, or on the xdist workers
        # In path order: an archive's transcripts come in its own order, a folder's sorted.
        not_run = [
            {"path": t.path, "why": "deselected" if t.path in deselected else "not run"}
            for t in sorted(transcripts, key=lambda t: t.path)
            if t.path not in self.records
        ]
        stopped = session.shouldfail or session.shouldstop
        return Coverage(
            collected=len(transcripts),
            ran=len(self.records),
            interrupted=exitstatus == pytest.ExitCode.INTERRUPTED and not xdist.stopped_at_maxfail(session),
            stopped=stopped if isinstance(stopped, str) else "",
            not_run=not_run,
        )

    @pytest.hookimpl(tryfirst=True)
    def pytest_sessionfinish(self, session: pytest.Session, exitstatus: int) -> None:
        if self.config.option.collectonly:
            return  # --co runs nothing: no report to write, no gate to decide
        if exitstatus == ExitCode.INTERRUPTED and xdist.stopped_at_maxfail(session):
            # -x / --maxfail under -n: xdist stops its workers by raising an interrupt (exit 2
            # for any suite); the run stopped at a failure, as it does without -n (exit 1).
            session.exitstatus = exitstatus = ExitCode.TESTS_FAILED
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
                correction=settings.correction,
            ),
            coverage=self._coverage(session, exitstatus),
            records=self.records.records(),
            ignored=campaign.ignored,
            gates=settings.gates,
            min_calls=settings.min_calls,
            compare=settings.compare,
            baseline=baseline,
            baseline_judged=settings.baseline_judged,
            max_drop=settings.max_drop,
            metric_gates=settings.metric_gates,
            metric_baseline_gates=settings.metric_baseline_gates,
            **self._truth(),
            run_gates=settings.run_gates,
            control=settings.control,
            summaries=verdict_cache(self.config),
        )
        self._history(self.report)
        self._write(self.report)
        # A gate that failed or could not be decided fails the run, also when the
        # campaign was empty (pytest's own "no tests collected" says less).
        if self.report.failed and session.exitstatus in (ExitCode.OK, ExitCode.NO_TESTS_COLLECTED):
            session.exitstatus = pytest.ExitCode.TESTS_FAILED
        if self.write_errors and session.exitstatus == pytest.ExitCode.OK:
            session.exitstatus = pytest.ExitCode.INTERNAL_ERROR
        self._junit_properties()

    def _truth(self) -> dict[str, Any]:
        """What the report takes of the truth file in play (nothing when there is none)."""
        truth = self.settings.truth
        if truth is None:
            return {}
        info = {**truth.to_dict(), "path": shown(truth.path), "found": self.settings.truth_found}
        return {"truth": info, "questions": [q.id for q in truth.questions],
                "baseline_truth": self.settings.baseline_truth,
                "truth_gates": self.settings.truth_gates,
                "truth_baseline_gates": self.settings.truth_baseline_gates}  # fmt: skip

    def _history(self, report: Report) -> None:
        """The run's number, name and commit when it is saved; the trend over the saved runs."""
        settings = self.settings
        if settings.save:
            try:
                number = history.next_number(settings.storage)
            except history.HistoryError as exc:  # checked at the start; gone since
                self.write_errors.append(f"could not save the run: {exc}")
            else:
                report.run = history.run_info(settings.save_name, str(self.config.rootpath), number)
        if settings.trend is not None or settings.trend_fail:
            try:
                self.notes += apply_trend(report, settings.storage, settings.trend, settings.trend_fail)
            except history.HistoryError as exc:
                self.write_errors.append(f"trend: {exc}")

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

        def save(path: str) -> None:
            assert report.run is not None
            write_json(os.path.join(path, history.file_name(report.run)))

        def write_markdown(path: str) -> None:
            from .markdown import append_markdown

            append_markdown(path, document if document is not None else report.to_json())

        outputs = (
            ("JSON report", settings.json, write_json),
            ("HTML report", settings.html, write_html),
            ("saved run", settings.storage if report.run is not None else None, save),
            ("Markdown summary", settings.markdown, write_markdown),
        )
        for what, path, write in outputs:
            if path:
                try:
                    write(path)
                except OSError as exc:
                    doing = f"save the run to {path}" if what == "saved run" else f"write the {what} {path}"
                    self.write_errors.append(f"could not {doing}: {exc.strerror or exc}")
                else:
                    self.written.append(what)

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
        for note in self.notes:
            tr.write_line(f"explore-suff: {note}", yellow=True)
        for error in self.write_errors:
            tr.write_line(f"explore-suff: {error}", red=True)
        if verbosity >= -1:  # what was written, also when another file could not be
            for what, path in (("JSON report", self.settings.json), ("HTML report", self.settings.html)):
                if what in self.written:
                    tr.write_line(f"{what}: {path}")
            if self.report.run is not None and "saved run" in self.written:
                tr.write_line(f"saved as run {self.report.run['number']} in {self.settings.storage}")
            if self.settings.cache and getattr(self.config, "cache", None) is not None:
                hits = self.config.stash.get(cache_hits_key, 0)
                ran = self.report.coverage.ran
                tr.write_line(f"verdict cache: {hits} of {ran} transcript(s) unchanged, not read again")


def apply_trend(report: Report, storage: str, last: int | None, fail: bool) -> list[str]:
    """The trend of the saved runs of ``storage`` and this one (the last ``last``, 0 or None:
    all) into the report, and its gate when ``fail``. A saved run that cannot be read is left
    out: a line for each says so."""
    from .trend import trend, trend_gates

    runs = history.saved_runs(storage)
    if last:
        runs = runs[-(last - 1) :]
    documents, skipped = history.readable(runs)
    # What a trend reads of a report: not its transcripts (read back from the spool, they are most of it)
    this = {"run": report.run, "arms": report.arms, "fingerprint": report.fingerprint,
            "coverage": report.coverage.to_dict(), "options": report.options.to_dict(),
            "plugin_version": __version__}  # fmt: skip
    if report.truth is not None:
        this["truth"] = report.truth
    names = history.labels([*documents, this])
    if report.run is None:
        names[-1] = "this run"
    report.trend = trend([*documents, this], names)
    if fail:
        report.outcomes += trend_gates(report.trend)
        report.decide()
    return skipped


def _write_html(path: str, document: dict[str, Any]) -> None:
    from .html import write_html_atomic  # Jinja2 is imported only when a page is asked for

    write_html_atomic(path, document)


def _width(tr: Any) -> int:
    """The terminal's width as pytest measured it (COLUMNS, the tty), 80 when unknown."""
    writer = getattr(tr, "_tw", None)
    return int(getattr(writer, "fullwidth", 80) or 80)
