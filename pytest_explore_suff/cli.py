"""``explore-suff``: saved reports without a pytest run (list, compare, trend, html, merge, markdown).

Options and gates are the plugin's (the `options.OPTIONS` table), read from the
command line and from the ini file pytest would read when started in the current
directory (found by pytest's own discovery, `find_setup`), and resolved by the
plugin's own `options.Settings`. Exit status as in pytest: 0 all
gates passed, 1 a gate failed, 4 a usage error (a bad option, a bad or foreign file).
"""

from __future__ import annotations

import argparse
import os
import shutil
import sys
from collections.abc import Sequence
from pathlib import Path
from typing import Any, NoReturn

from . import history
from .compare import BaselineError, read_baseline
from .document import Coverage, Options, Report, build
from .history import HistoryError
from .merge import MergeError, merge_parts, merged_truth
from .options import OPTIONS, Option
from .report import write_chunks_atomic
from .store import RecordStore

OK, FAILED, USAGE = 0, 1, 4


class UsageError(Exception):
    """A usage error of the command: printed as one line, exit status 4."""

    def __init__(self, message: str, prog: str = "explore-suff") -> None:
        super().__init__(message)
        self.prog = prog  # who says it: the command, or its subcommand ("explore-suff merge")


class _Parser(argparse.ArgumentParser):
    def error(self, message: str) -> NoReturn:
        raise UsageError(message, self.prog)


#: The plugin's options a command reads (the gates, and what decides them).
_SHARED = {"--explore-suff-storage", "--explore-suff-baseline", "--max-sufficient-drop",
           "--explore-suff-gate-on", "--explore-suff-correction",
           "--explore-suff-min-calls", "--explore-suff-compare", "--explore-suff-trend",
           "--explore-suff-trend-fail", "--explore-suff-save", "--explore-suff-md",
           "--explore-suff-control"}  # fmt: skip


#: Shared options a command with gates does not read: compare takes its baseline as BASELINE.
_NOT_READ = {"compare": ("--explore-suff-baseline",)}


def _gate_like(option: Option) -> bool:
    return option.flag in _SHARED or option.flag.startswith(("--min-", "--max-"))


def _add(parser: argparse.ArgumentParser, option: Option) -> None:
    kwargs: dict[str, Any] = {
        k: v
        for k, v in (("metavar", option.metavar), ("action", option.action), ("type", option.type),
                     ("choices", option.choices), ("nargs", option.nargs), ("const", option.const))
        if v is not None
    }  # fmt: skip
    if option.action == "store_true":
        kwargs["default"] = None
    parser.add_argument(
        option.flag, dest=option.dest or option.ini, help=option.help, **kwargs  # argparse reads %% as %
    )


def _ini_kind(option: Option) -> str:
    if option.action == "store_true" or option.ini_type == "bool":
        return "bool"
    if option.action == "append" and option.ini_type is None:
        return "linelist"
    return "string"


def find_setup(
    invocation_dir: str, inifile: str | None = None, rootdir: str | None = None
) -> tuple[dict[str, Any], str | None, str]:
    """The ini values, the ini file and the rootdir pytest would find when started in
    ``invocation_dir`` with no test path: its own discovery (the first of ``pytest.toml``,
    ``pytest.ini``, ``pyproject.toml``, ``tox.ini``, ``setup.cfg`` there or in a folder
    above, else the folder of a ``setup.py``), with its ``-c`` and ``--rootdir``.

    pytest has no public call for it; its function is called with the arguments it takes
    in the installed version (they grew from pytest 8.0 to 9), and its values are unwrapped
    (pytest 9 keeps each with its origin)."""
    import inspect

    import pytest
    from _pytest.config.findpaths import determine_setup

    given: dict[str, Any] = {"inifile": inifile, "args": [], "rootdir_cmd_arg": rootdir,
             "invocation_dir": Path(invocation_dir), "override_ini": None}  # fmt: skip
    accepted = inspect.signature(determine_setup).parameters
    try:
        found = determine_setup(**{k: v for k, v in given.items() if k in accepted})
    except pytest.UsageError as exc:
        raise UsageError(str(exc)) from None
    root, inipath, inicfg = found[0], found[1], found[2]
    values = {k: getattr(v, "value", v) for k, v in inicfg.items()}
    return values, (str(inipath) if inipath else None), str(root)


class _Config:
    """What `options.Settings` asks of a pytest config, from argparse and the ini file."""

    def __init__(
        self, ns: argparse.Namespace, ini: dict[str, Any], inipath: str | None, rootdir: str
    ) -> None:
        self._ns = ns
        self._ini = ini
        self.inipath = Path(inipath) if inipath else None
        self.rootpath = Path(rootdir)
        self._kinds = {o.ini: _ini_kind(o) for o in OPTIONS}

    def getoption(self, name: str) -> Any:
        return getattr(self._ns, name, None)

    def getini(self, name: str) -> Any:
        kind = self._kinds.get(name, "string")
        value = self._ini.get(name)
        if kind == "bool":
            return str(value).strip().lower() in ("1", "true", "yes", "on") if value is not None else False
        if kind == "linelist":
            if value is None:
                return []
            lines = value if isinstance(value, list) else str(value).splitlines()
            return [str(v).strip() for v in lines if str(v).strip()]
        return "" if value is None else str(value)


def _settings(ns: argparse.Namespace) -> Any:
    import pytest  # Settings reports a bad option as pytest's UsageError

    from .options import Settings

    ini, inipath, rootdir = find_setup(os.getcwd(), ns.config_file, ns.rootdir)
    try:
        return Settings(_Config(ns, ini, inipath, rootdir))  # type: ignore[arg-type]
    except pytest.UsageError as exc:
        raise UsageError(str(exc)) from None


def _report(path_or_name: str, storage: str) -> tuple[str, dict[str, Any]]:
    path = history.resolve(path_or_name, storage)
    return path, history.read(path)


def _coverage(doc: dict[str, Any]) -> Coverage:
    cov = doc["coverage"]
    why = [str(w) for w in cov.get("why") or []]
    return Coverage(
        collected=int(cov.get("collected") or 0),
        ran=int(cov.get("ran") or 0),
        interrupted=bool(cov.get("interrupted", any("interrupted" in w for w in why))),
        stopped=str(cov.get("stopped") or ""),
        not_run=list(cov.get("not_run") or []),
    )


def _options(doc: dict[str, Any], settings: Any) -> Options:
    o = doc.get("options") or {}
    return Options(
        tool=str(o.get("tool", "")), family=str(o.get("family", "")), marker=str(o.get("marker", "")),
        pattern=o.get("pattern"), keep_excluded=bool(o.get("keep_excluded")),
        gate_on=str(settings.gate_on if settings.gate_on != "point" else o.get("gate_on") or "point"),
        correction=str(settings.correction if settings.correction != "holm"
                       else o.get("correction") or "holm"),
    )  # fmt: skip


def _judge(settings: Any, campaign: str, options: Options, coverage: Coverage,
           records: Sequence[dict[str, Any]], ignored: list[dict[str, str]],
           baseline: tuple[str, list[dict[str, Any]]] | None, store: RecordStore,
           truth: Any = None, baseline_truth: Any = None,
           judged: dict[str, Any] | None = None) -> Report:  # fmt: skip
    """`document.build` over records, as the plugin does: through a record store. ``truth``:
    the report's truth file entry (the records were graded against it), and the baseline's;
    ``judged``: what the baseline was judged with."""
    if settings.compare and records:
        from .session import compare_error

        arms = sorted({str(rec.get("arm")) for rec in records})
        if missing := [a for a in settings.compare if a not in arms]:
            raise UsageError(compare_error(missing, arms))
    for rec in records:
        store.add(rec)
    graded = isinstance(truth, dict)
    return build(
        campaign=campaign, options=options, coverage=coverage, records=store.records(), ignored=ignored,
        gates=settings.gates, min_calls=settings.min_calls, compare=settings.compare, baseline=baseline,
        max_drop=settings.max_drop, metric_gates=settings.metric_gates,
        metric_baseline_gates=settings.metric_baseline_gates, run_gates=settings.run_gates,
        control=settings.control, baseline_judged=judged,
        truth=truth if graded else None,
        baseline_truth=(baseline_truth if isinstance(baseline_truth, dict) else {}) if graded else None,
    )  # fmt: skip


def _baseline_truth(settings: Any) -> Any:
    """The baseline report's truth file entry (None: no baseline or none there)."""
    if not settings.baseline_spec:
        return None
    return history.read(history.resolve(settings.baseline_spec, settings.storage)).get("truth")


def _baseline(settings: Any) -> tuple[tuple[str, list[dict[str, Any]]] | None, dict[str, Any] | None]:
    """((path, records), what it was judged with) of the baseline the options name."""
    if not settings.baseline_spec:
        if settings.max_drop is not None or settings.metric_baseline_gates or settings.control:
            raise UsageError("a baseline gate needs --explore-suff-baseline=REPORT")
        return None, None
    path = history.resolve(settings.baseline_spec, settings.storage)
    records, judged = read_baseline(path)
    return (path, records), judged


def _print_report(report: Report, settings: Any) -> int:
    from .terminal import summary_lines, verdict_lines

    width = shutil.get_terminal_size((80, 24)).columns
    for line in summary_lines(report, width=width):
        print(line.text)
    for line in verdict_lines(report, width=width):
        print(line.text)
    return FAILED if report.failed else OK


def _finish(report: Report, settings: Any, out: str | None) -> int:
    """Trend, save, write, print: what the plugin does at the end of a session."""
    from .session import apply_trend

    # Saved only when asked: a saved run read back (``compare last 3``) keeps its number in
    # what is printed and written with -o, and its file is left as it was.
    saving = bool(settings.save)
    if saving:
        history.prepare_storage(settings.storage)
        number = history.next_number(settings.storage)
        report.run = history.run_info(settings.save_name, os.getcwd(), number)
    if settings.trend is not None or settings.trend_fail:
        for note in apply_trend(report, settings.storage, settings.trend, settings.trend_fail):
            print(f"explore-suff: {note}", file=sys.stderr)
    if out:
        write_chunks_atomic(out, report.json_chunks())
    if saving and report.run is not None:
        write_chunks_atomic(
            os.path.join(settings.storage, history.file_name(report.run)), report.json_chunks()
        )
    if settings.markdown:
        from .markdown import append_markdown

        append_markdown(settings.markdown, report.to_json())
    status = _print_report(report, settings)
    if out:
        print(f"JSON report: {out}")
    if saving and report.run is not None:
        print(f"saved as run {report.run['number']} in {settings.storage}")
    return status


def cmd_list(ns: argparse.Namespace) -> int:
    settings = _settings(ns)
    runs = history.saved_runs(settings.storage)
    if not runs:
        print(f"no saved runs in {settings.storage}")
        return OK
    for s in runs:
        try:
            doc = history.read(s.path)
        except HistoryError as exc:
            print(f"{s.number:4d}  unreadable: {exc}")
            continue
        run = doc.get("run") or {}
        cov = doc["coverage"]
        shares = " ".join(
            f"{a}={agg['shares']['sufficient']:.0%}" for a, agg in doc["arms"].items() if agg.get("answered")
        )
        commit = (run.get("commit") or "-")[:10]
        state = "complete" if cov.get("complete") else "PARTIAL"
        print(f"{s.number:4d}  {run.get('time') or s.time}  {run.get('name') or '-'}  {commit}  {state}  "
              f"{cov.get('ran')}/{cov.get('collected')} transcripts  "
              f"sufficient: {shares or '-'}")  # fmt: skip
    return OK


def cmd_compare(ns: argparse.Namespace) -> int:
    settings = _settings(ns)
    base_path, base_doc = _report(ns.baseline, settings.storage)
    old, judged = read_baseline(base_path)
    _, doc = _report(ns.report, settings.storage)
    with RecordStore() as store:
        report = _judge(settings, doc.get("campaign", ""), _options(doc, settings), _coverage(doc),
                        doc["transcripts"], doc.get("ignored") or [], (base_path, old), store,
                        doc.get("truth"), base_doc.get("truth"), judged)  # fmt: skip
        report.run = doc.get("run")
        return _finish(report, settings, ns.output)


def cmd_merge(ns: argparse.Namespace) -> int:
    settings = _settings(ns)
    parts = [(p, history.read(p)) for p in ns.parts]
    campaign, options, coverage, records, ignored, section = merge_parts(parts)
    truth = merged_truth(parts)
    if settings.gate_on != "point":
        options = Options(**{**options.to_dict(), "gate_on": settings.gate_on})
    if settings.correction != "holm":
        options = Options(**{**options.to_dict(), "correction": settings.correction})
    with RecordStore() as store:
        baseline, judged = _baseline(settings)
        report = _judge(settings, campaign, options, coverage, records, ignored, baseline, store,
                        truth, _baseline_truth(settings), judged)  # fmt: skip
        report.merge = section
        if section:
            print(f"explore-suff merge: {len(section['overlap'])} transcript(s) judged by more than one "
                  "part, counted once (named under 'merge' in the report)")  # fmt: skip
        return _finish(report, settings, ns.output)


def cmd_trend(ns: argparse.Namespace) -> int:
    from .terminal import trend_lines
    from .trend import trend, trend_gates

    settings = _settings(ns)
    runs = history.saved_runs(settings.storage)
    if settings.trend:
        runs = runs[-settings.trend :]
    if len(runs) < 1:
        raise UsageError(f"no saved runs in {settings.storage}")
    docs, skipped = history.readable(runs)
    for note in skipped:  # left out, as 'last' leaves it out: one damaged run stops no trend
        print(f"explore-suff: {note}", file=sys.stderr)
    if not docs:
        raise UsageError(f"no readable saved run in {settings.storage}")
    section = trend(docs)
    width = shutil.get_terminal_size((80, 24)).columns
    for line in trend_lines(section, width):
        print(line.text)
    status = OK
    if settings.trend_fail:
        from .gates import correct, family_line

        outcomes = trend_gates(section)
        family = correct(outcomes, settings.correction)
        for o in outcomes:
            print(f"explore-suff gate {o.describe()}")
            status = FAILED if not o.passed else status
        if (said := family_line(family)) is not None:
            print(said)
    return status


def cmd_html(ns: argparse.Namespace) -> int:
    from .html import write_html_atomic

    settings = _settings(ns)
    _, doc = _report(ns.report, settings.storage)
    write_html_atomic(ns.output, doc)
    print(f"HTML report: {ns.output}")
    return OK


def cmd_markdown(ns: argparse.Namespace) -> int:
    from .markdown import append_markdown, markdown

    settings = _settings(ns)
    _, doc = _report(ns.report, settings.storage)
    if ns.output:
        append_markdown(ns.output, doc)
    else:
        sys.stdout.write(markdown(doc))
    return OK


def parser() -> argparse.ArgumentParser:
    top = _Parser(
        prog="explore-suff", description="Saved reports of pytest-explore-suff, without a pytest run."
    )
    sub = top.add_subparsers(dest="command", required=True, parser_class=_Parser)
    shared = [o for o in OPTIONS if _gate_like(o)]

    def command(
        name: str, help: str, *, gates: bool = False, only: Sequence[str] = ()
    ) -> argparse.ArgumentParser:
        """A subcommand with the options it reads: the storage; the gates and what they read
        (``gates``), but for the options it does not (a gate it would not decide must be a
        usage error, not a silent pass); or the storage and ``only``."""
        p = sub.add_parser(name, help=help, description=help)
        # pytest's own: where the ini file and the rootdir (the default storage's parent) are
        p.add_argument("-c", "--config-file", metavar="FILE", help="the ini file, as pytest's -c")
        p.add_argument("--rootdir", metavar="DIR", help="the rootdir, as pytest's --rootdir")
        keep = {"--explore-suff-storage", *only}
        for o in shared:
            if (gates and o.flag not in _NOT_READ.get(name, ())) or o.flag in keep:
                _add(p, o)
        return p

    command("list", "the saved runs, one line each").set_defaults(run=cmd_list)
    p = command("compare", "REPORT against BASELINE: the baseline comparison and the gates", gates=True)
    p.add_argument(
        "baseline", metavar="BASELINE", help="a report: a path, 'last', a saved run's number or name"
    )
    p.add_argument("report", metavar="REPORT", help="the report judged against it (same forms)")
    p.add_argument("-o", "--output", metavar="PATH", help="also write the compared report as JSON")
    p.set_defaults(run=cmd_compare)
    p = command(
        "trend", "each arm's metrics over the saved runs, with the trend gate",
        only=("--explore-suff-trend", "--explore-suff-trend-fail"),
    )  # fmt: skip
    p.set_defaults(run=cmd_trend)
    report_help = "a report: a path, 'last', a saved run's number or name"
    p = command("html", "a report as one self-contained HTML page")
    p.add_argument("report", metavar="REPORT", help=report_help)
    p.add_argument("-o", "--output", metavar="PATH", required=True, help="the HTML file to write")
    p.set_defaults(run=cmd_html)
    p = command("merge", "partial reports (shards) merged into the report of the whole campaign", gates=True)
    p.add_argument("parts", metavar="PART", nargs="+",
                   help="the partial reports (JSON files): the shards, or one report to judge again with "
                   "the gates given")  # fmt: skip
    p.add_argument("-o", "--output", metavar="FULL", required=True, help="the merged report to write (JSON)")
    p.set_defaults(run=cmd_merge)
    p = command("markdown", "a report's Markdown summary (printed, or appended to -o PATH)")
    p.add_argument("report", metavar="REPORT", help=report_help)
    p.add_argument("-o", "--output", metavar="PATH", help="append the summary to this file instead")
    p.set_defaults(run=cmd_markdown)
    return top


def main(argv: Sequence[str] | None = None) -> int:
    try:
        ns = parser().parse_args(argv)
        status: int = ns.run(ns)
        return status
    except (UsageError, HistoryError, BaselineError, MergeError) as exc:
        print(f"{getattr(exc, 'prog', 'explore-suff')}: error: {exc}", file=sys.stderr)
        return USAGE
    except BrokenPipeError:  # `explore-suff compare 1 2 | head -1`: the reader had enough
        # Python's recipe: point stdout at devnull, so that the flush at exit finds no pipe.
        os.dup2(os.open(os.devnull, os.O_WRONLY), sys.stdout.fileno())
        return OK
    except OSError as exc:
        print(f"explore-suff: error: {exc.filename or ''}: {exc.strerror or exc}", file=sys.stderr)
        return USAGE
    except KeyboardInterrupt:
        return 2
