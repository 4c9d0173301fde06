"""What the terminal summary prints: the tables, the per-call lines, the gates."""

from __future__ import annotations

import math
import re
import textwrap
from collections.abc import Iterable, Iterator, Mapping
from types import MappingProxyType
from typing import TYPE_CHECKING, Any, NamedTuple

from tabulate import tabulate

from . import runtable
from .buckets import BUCKETS, Bucket
from .gates import family_line
from .stats import Z95

#: How the reason of an ``ignored`` entry begins when it is a folder, not a file (`campaign`).
FOLDER_REASON = "a folder "

if TYPE_CHECKING:
    from .document import Report

#: An arm whose calls cannot detect a change of this many points (80% power) is warned about.
SMALL_ARM_POINTS = 20

# C0 and C1 controls (ANSI escapes start with one), line separators, and the
# bidirectional marks and overrides that can reorder what a terminal shows.
_CONTROL = re.compile(r"[\x00-\x1f\x7f-\x9f\u200e\u200f\u2028-\u202e\u2066-\u2069]")


def clean(text: object) -> str:
    """Escape control characters (ANSI escapes included) so a transcript can't drive the terminal."""
    s = str(text)
    # Every character `_CONTROL` matches is a control, format or line/paragraph separator,
    # which isprintable() refuses: a printable string (most are) has none, and is not searched.
    if s.isprintable():
        return s
    return _CONTROL.sub(lambda m: m.group().encode("unicode_escape").decode("ascii"), s)


def half_up(x: float) -> int:
    """``x`` to a whole number, halves up: ``Math.round``'s rounding, exactly (12.5 -> 13,
    -12.5 -> -12). The page's script rounds so; Python's round and format round halves to
    even, which showed a share of 1/8 as 12% beside the script's 13%."""
    whole = math.floor(x)
    return whole + (x - whole >= 0.5)  # x - floor(x) is exact for a double


def percent(x: float) -> str:
    """A share as a whole percentage, halves up: ``0.125`` -> ``13%``."""
    return f"{half_up(x * 100)}%"


def plural(n: int, one: str, many: str | None = None) -> str:
    """``1 answered call``, ``2 answered calls``."""
    return f"{n} {one if n == 1 else many or one + 's'}"


#: the name of the column of every arm's calls pooled (the page's heat map says "all arms")
POOLED = "(pooled)"
ALL_ARMS = "all arms"


def arm_label(name: str) -> str:
    """An arm's name as a column shows it: an arm named like the pooled column is marked."""
    return f"{name} [arm]" if name.strip() in (POOLED, ALL_ARMS) else name


def _pct(x: float) -> str:
    return str(half_up(x * 100))


def _cell(count: int, answered: int, interval: dict[str, Any] | None = None) -> str:
    if not answered:
        return str(count)
    cell = f"{count} ({percent(count / answered)})"
    if interval is not None:
        cell += f" [{_pct(interval['lo'])}-{_pct(interval['hi'])}]"
    return cell


def _width_of(table: str) -> int:
    return max((len(line) for line in table.splitlines()), default=0)


def _fit(variants: list[str], width: int) -> str:
    """The first rendering that fits the terminal, else the narrowest."""
    for table in variants:
        if _width_of(table) <= width:
            return table
    return min(variants, key=_width_of)


def _label(b: Bucket, short: bool) -> str:
    return b.key if short else b.label


def arm_table(arms: dict[str, dict[str, Any]], pooled: dict[str, Any], width: int = 10_000) -> str:
    """Buckets down (worst to best, as the harness prints them), arms across.

    Narrowed to fit ``width``, one step at a time: without the meaning column,
    without the pooled column, without intervals, with the bucket keys for
    labels; then a table per few arms.
    """
    arm_columns = [(arm_label(name), agg) for name, agg in arms.items()]
    columns = [*arm_columns, (POOLED, pooled)] if len(arms) > 1 else arm_columns
    variants = [
        _arm_table(columns, True, False, True),
        _arm_table(columns, False, False, True),
        _arm_table(arm_columns, False, False, True),
        _arm_table(arm_columns, False, False, False),
        _arm_table(arm_columns, False, True, False),
    ]
    table = _fit(variants, width)
    columns = arm_columns
    if _width_of(table) <= width or len(columns) == 1:
        return table
    for per in range(len(columns) - 1, 0, -1):
        chunks = [columns[i : i + per] for i in range(0, len(columns), per)]
        tables = [_arm_table(chunk, False, True, False) for chunk in chunks]
        if all(_width_of(t) <= width for t in tables) or per == 1:
            return "\n\n".join(tables)
    return table  # pragma: no cover - per == 1 always returns


def _arm_table(columns: list[tuple[str, dict[str, Any]]], meaning: bool, short: bool, intervals: bool) -> str:
    tail = [""] if meaning else []
    headers = ["", *(clean(name) for name, _ in columns), *tail]
    rows: list[list[object]] = [
        ["transcripts", *(agg["transcripts"] for _, agg in columns), *tail],
        ["answered calls", *(agg["answered"] for _, agg in columns), *tail],
    ]
    for b in BUCKETS:
        cells = [
            _cell(agg["counts"][b.key], agg["answered"], agg["intervals"][b.key] if intervals else None)
            for _, agg in columns
        ]
        rows.append([_label(b, short), *cells, *([b.meaning] if meaning else [])])
    rows.append(["errored (not bucketed)", *(agg["errored"] for _, agg in columns), *tail])
    rows.append(["concurrent (same message)", *(agg["concurrent"] for _, agg in columns), *tail])
    return str(tabulate(rows, headers=headers, tablefmt="simple", disable_numparse=True))


def call_line(index: int, call: dict[str, Any]) -> str:
    """The harness's per-call line: ``1. "query" [3 files] → Read x.js``."""
    query = call["query"]
    if len(query) > 46:
        query = query[:45] + "…"
    where = " [subagent]" if call["thread"] != "main" else ""
    files = call["files"]
    plural = "" if files == 1 else "s"
    return clean(f'{index}.{where} "{query}" [{files} file{plural}] → {call["next"]}')


def _signed(x: float) -> str:
    return f"{half_up(x * 100):+d}"  # an int first: no "-0"


def comparison_table(cmp: dict[str, Any], width: int = 10_000) -> str:
    """Each bucket's share in two arms and the difference with its 95% interval."""
    kind = "paired by group" if cmp["paired"] else "unpaired"
    title = f"{clean(cmp['a'])} against {clean(cmp['b'])} ({kind}):"
    variants = []
    for short in (False, True):
        headers = ["", clean(cmp["a"]), clean(cmp["b"]), "difference, points [95%]"]
        rows = []
        for b in BUCKETS:
            d = cmp["buckets"][b.key]
            rows.append([_label(b, short), percent(d['a']), percent(d['b']),
                         f"{_signed(d['diff'])} [{_signed(d['lo'])}, {_signed(d['hi'])}]"])  # fmt: skip
        variants.append(str(tabulate(rows, headers=headers, tablefmt="simple", disable_numparse=True)))
    return f"{title}\n{_fit(variants, width)}"


def empty_side(cmp: Mapping[str, Any]) -> str | None:
    """The side of an arm's baseline comparison with no answered call, in words ("in the
    baseline", "now"; an arm added or renamed): it has no share, so no change; None: both have."""
    if cmp.get("n_old") and cmp.get("n_new"):
        return None
    return "in the baseline" if not cmp.get("n_old") else "now"


#: How a baseline comparison paired an arm's transcripts (`compare.compare_baseline`), in words.
PAIRINGS = {
    "transcript": "paired by transcript (the transcripts both campaigns hold, byte for byte)",
    "group": "paired by group (the same groups on both sides, stratified)",
    None: "unpaired (no transcript or group in common)",
}


def baseline_table(arms: dict[str, Any], width: int = 10_000) -> str:
    """Per arm, a table of buckets: baseline share, this campaign's share, and the change."""
    out = []
    for arm, cmp in arms.items():
        if not (cmp["n_old"] or cmp["n_new"]):
            continue
        out.append(f"arm {clean(arm)} (answered calls: {cmp['n_old']} in the baseline, {cmp['n_new']} now)")
        if (side := empty_side(cmp)) is not None:
            out.append(f"  no answered explore calls {side}: no share to compare")
            out.extend(_metric_changes(cmp))
            continue
        out.append(f"  {PAIRINGS.get(cmp.get('paired'), PAIRINGS[None])}")
        variants = []
        for short in (False, True):
            rows = []
            for b in BUCKETS:
                d = cmp["buckets"][b.key]
                change = f"{_signed(d['diff'])} [{_signed(d['lo'])}, {_signed(d['hi'])}]"
                rows.append([_label(b, short), percent(d["old"]), percent(d["new"]), change])
            headers = ["", "baseline", "now", "change, points [95%]"]
            variants.append(str(tabulate(rows, headers=headers, tablefmt="simple", disable_numparse=True)))
        out.append(_fit(variants, width))
        out.extend(_metric_changes(cmp))
        out.extend(_question_lines(cmp.get("questions") or []))
    return "\n".join(out)


def _question_lines(rows: list[dict[str, Any]], top: int = 3, arms: tuple[str, str] | None = None,
                    indent: str = "  ") -> list[str]:  # fmt: skip
    """The groups whose sufficient share moved beyond noise (Holm over the groups), worse
    first: against the baseline (old -> new), or with ``arms`` (a, b) between two arms."""
    moved = [r for r in rows if r["moved"]]
    what = "differs between the arms" if arms else "moved"
    if not moved:
        none = f"{indent}no group's sufficient share {what} beyond noise ({len(rows)} compared, Holm)"
        return [none] * bool(rows)
    out = [f"{indent}groups whose sufficient share {what} beyond noise ({len(moved)} of {len(rows)}, Holm):"]
    for r in moved[:top]:
        shares = (f"{percent(r['old'])} -> {percent(r['new'])}" if arms is None else
                  f"{clean(arms[0])} {percent(r['a'])}, {clean(arms[1])} {percent(r['b'])}")  # fmt: skip
        out.append(f"{indent}  {clean(r['group'])}: {shares} "
                   f"({_signed(r['diff'])} [{_signed(r['lo'])}, {_signed(r['hi'])}])")  # fmt: skip
    if len(moved) > top:
        out.append(f"{indent}  ... and {len(moved) - top} more (the JSON report lists every group)")
    return out


def _metric_changes(cmp: dict[str, Any]) -> list[str]:
    """The arm's allocation and retrieval residual, baseline against now."""
    out = []
    a = cmp.get("allocation") or {}
    if a.get("new") is not None or a.get("old") is not None:
        old = "not in the baseline" if a.get("old") is None else percent(a["old"])
        new = "none" if a.get("new") is None else percent(a["new"])
        change = "" if a.get("diff") is None else f" ({_signed(a['diff'])} points"
        if change and a.get("lo") is not None:
            change += f" [{_signed(a['lo'])}, {_signed(a['hi'])}]"
        out.append(f"  allocation efficiency: {old} -> {new}{change}{')' if change else ''}")
    r = cmp.get("residual") or {}
    if r.get("new") is not None or r.get("old") is not None:
        old = "not in the baseline" if r.get("old") is None else f"{half_up(r['old']):,}"
        new = "none" if r.get("new") is None else f"{half_up(r['new']):,}"
        change = "" if r.get("growth") is None else f" ({half_up(r['growth'] * 100):+d}%"
        if change and r.get("se") is not None:
            half = Z95 * r["se"] * 100
            change += f" [{half_up(r['growth'] * 100 - half):+d}%, {half_up(r['growth'] * 100 + half):+d}%]"
        change += ")" if change else ""
        out.append(f"  median retrieval residual, tokens: {old} -> {new}{change}")
    return out


def _num(x: float | None) -> str:
    return "-" if x is None else f"{half_up(x):,}"


def _spread_cell(spread: dict[str, Any], fmt: Any = _num) -> str:
    if spread["median"] is None:
        return "-"
    return f"{fmt(spread['median'])} [{fmt(spread['min'])}-{fmt(spread['max'])}]"


def _share_pct(x: float | None) -> str:
    return "-" if x is None else percent(x)


def _metric_table(rows: list[list[object]], names: list[str], width: int) -> str:
    """A metric's block, arms across; a table per few arms when it would not fit."""
    for per in range(len(names), 0, -1):
        tables = []
        for i in range(0, len(names), per):
            chunk = slice(i + 1, i + 1 + per)
            headers = ["", *names[i : i + per]]
            body = [[row[0], *row[chunk]] for row in rows]
            tables.append(str(tabulate(body, headers=headers, tablefmt="simple", disable_numparse=True)))
        if all(_width_of(t) <= width for t in tables) or per == 1:
            return "\n\n".join(tables)
    return ""  # pragma: no cover - per == 1 always returns


def allocation_table(arms: dict[str, dict[str, Any]], width: int = 10_000) -> str | None:
    """Allocation efficiency per arm: pooled with its 95% interval, path-cited alone, per run."""
    columns = [(name, agg["allocation"]) for name, agg in arms.items() if agg.get("allocation")]
    if not columns:
        return None
    rows: list[list[object]] = [
        ["transcripts (calls with source)", *(f"{a['transcripts']} ({a['calls']})" for _, a in columns)],
        ["efficiency [95%]", *(_efficiency(a["efficiency"]) for _, a in columns)],
        ["path-cited alone", *(percent(a["efficiency_path"]) for _, a in columns)],
        ["per run, median [min-max]", *(_spread_cell(a["per_run"], _share_pct) for _, a in columns)],
        ["chars used / returned", *(f"{a['used']:,} / {a['envelope']:,}" for _, a in columns)],
    ]
    if any(a["no_answer"] for _, a in columns):
        rows.append(["transcripts with no answer", *(a["no_answer"] for _, a in columns)])
    title = "allocation efficiency (share of returned characters on files the answer cites):"
    return f"{title}\n{_metric_table(rows, [clean(n) for n, _ in columns], width)}"


def _efficiency(e: dict[str, Any]) -> str:
    return f"{percent(e['share'])} [{_pct(e['lo'])}-{_pct(e['hi'])}]"


def occupancy_table(arms: dict[str, dict[str, Any]], width: int = 10_000) -> str | None:
    """Residual context occupancy per arm, tokens, median [min-max] over transcripts."""
    columns = [(name, agg["occupancy"]) for name, agg in arms.items() if agg.get("occupancy")]
    if not columns:
        return None
    # M10: an arm whose figures include estimates (a log that gives the window only at the
    # end) has every figure marked, and says how many of its transcripts are estimated.
    marks = [ESTIMATED if o.get("estimated") else "" for _, o in columns]
    occ = list(zip(marks, (o for _, o in columns), strict=True))
    rows: list[list[object]] = [
        ["transcripts", *(_transcripts_cell(o) for _, o in columns)],
        ["final context", *(m + _spread_cell(o["ctx_final"]) for m, o in occ)],
        ["tool residual", *(m + _spread_cell(o["residual_tool"]) for m, o in occ)],
        ["file-access residual", *(m + _spread_cell(o["residual_file_access"]) for m, o in occ)],
        ["retrieval residual", *(m + _spread_cell(o["residual_retrieval"]) for m, o in occ)],
        ["share of final context", *(m + _spread_cell(o["share"], _share_pct) for m, o in occ)],
        ["base prompt (median)", *(m + _num(o["ctx_base"]) for m, o in occ)],
    ]
    title = "residual context occupancy at the end (tokens, median [min-max]):"
    table = _metric_table(rows, [clean(n) for n, _ in columns], width)
    if any(marks):
        table += f"\n{ESTIMATED_NOTE}"
    return f"{title}\n{table}"


def truth_line(truth: Mapping[str, Any]) -> str:
    """Which truth file graded the answers (and that it is the campaign's own, when found)."""
    own = " (the campaign's own)" if truth.get("found") else ""
    return (f"truth file: {clean(truth['path'])}{own}, {plural(truth['questions'], 'question')}, "
            f"digest {truth['digest'][:12]}")  # fmt: skip


def truth_table(arms: dict[str, dict[str, Any]], width: int = 10_000) -> str | None:
    """The ground truth per arm (only when a truth file is in play): verdicts, the correct
    share and false sufficient with their 95% intervals, the gold files' share and recall."""
    columns = [(name, agg["truth"]) for name, agg in arms.items() if agg.get("truth")]
    if not columns:
        return None

    def share_cell(s: Mapping[str, Any] | None, k: str, n: str) -> str:
        if not s:
            return "-"
        return f"{s[k]}/{s[n]} {percent(s['share'])} [{_pct(s['lo'])}-{_pct(s['hi'])}]"

    def maybe(x: float | None) -> str:
        return "-" if x is None else percent(x)

    rows: list[list[object]] = [
        ["answer units (no question)", *(f"{t['questions']} ({t['no_question']})" for _, t in columns)],
        ["pass / partial / fail",
         *("{pass} / {partial} / {fail}".format(**t["verdicts"]) for _, t in columns)],
        ["unjudged (gold files only)", *(t["verdicts"]["unjudged"] for _, t in columns)],
        ["correct [95%]", *(share_cell(t["correct_share"], "pass", "judged") for _, t in columns)],
        ["sufficient, then wrong [95%]",
         *(share_cell(t["false_sufficient"], "fail", "sufficient") for _, t in columns)],
        ["gold share, pooled (median call)",
         *(f"{maybe(t['gold_share']['pooled'])} ({maybe(t['gold_share']['median'])})" for _, t in columns)],
        ["gold recall, median (all found)",
         *(f"{maybe(t['gold_recall']['median'])} ({maybe(t['gold_recall']['full'])})" for _, t in columns)],
        ["gold file first", *(maybe(t["gold_first"]["share"]) for _, t in columns)],
    ]  # fmt: skip
    title = (
        "ground truth (answers graded per question; 'sufficient, then wrong': of the sufficient "
        "calls, those in failed answers):"
    )
    return f"{title}\n{_metric_table(rows, [clean(n) for n, _ in columns], width)}"


#: The mark of an occupancy figure that includes estimates (M10), and what it means.
ESTIMATED = "~"
ESTIMATED_NOTE = "~ includes estimated figures (the log gives the window only at the end)"


def _transcripts_cell(o: Mapping[str, Any]) -> str:
    n, estimated = o["transcripts"], o.get("estimated") or 0
    return f"{n} ({estimated} estimated)" if estimated else str(n)


def run_table(arms: dict[str, dict[str, Any]], width: int = 10_000, verbose: bool = False) -> str | None:
    """The harness's arm table (`runtable.rows`): runs, duration and tool calls per arm by
    default, every row with ``-v``; each median [min-max] with its p25 where the width allows."""
    names = [clean(n) for n in arms]
    for p25 in (True, False):
        rows = runtable.rows(arms, verbose=verbose, p25=p25)
        if not rows:
            return None
        body: list[list[object]] = [[r.label, *r.cells] for r in rows]
        table = _metric_table(body, names, width)
        if not p25 or ("\n\n" not in table and _width_of(table) <= width):
            break  # the p25 only when every arm fits in one table
    title = f"run figures (per run: median{' (p25)' if p25 else ''} [min-max]):"
    return f"{title}\n{table}"


def residual_line(cmp: dict[str, Any]) -> str | None:
    """``retrieval residual 82% higher with A, 7 of 7 groups; fixed overhead +546 tokens``."""
    r = cmp["residual"]
    if r["mean_pct"] is None:
        return None
    a, b = clean(cmp["a"]), clean(cmp["b"])
    if r["direction"] == "equal":
        text = f"retrieval residual equal with {a} and {b}"
    else:
        text = f"retrieval residual {half_up(abs(r['mean_pct']))}% {r['direction']} with {a} than with {b}"
    text += f", {r['agreeing']} of {r['compared']} group{'s' if r['compared'] != 1 else ''}"
    if r["interval"] is not None:
        lo, hi = half_up(r["interval"]["lo"]), half_up(r["interval"]["hi"])
        text += f" (mean over groups, 95% {lo:+d}% to {hi:+d}%)"
    if r["fixed_overhead"] is not None:
        text += f"; fixed overhead {half_up(r['fixed_overhead']):+,} tokens"
    return text


#: What pass^k means, as the summary says it above the arms' repeats (`repeats`).
REPEATS_TITLE = ("repeats (a run passes when all its answered calls are sufficient, or its answer is "
                 "correct; pass^k: k runs all pass):")  # fmt: skip


def repeat_table(arms: Mapping[str, Mapping[str, Any]], width: int = 10_000) -> str | None:
    """The repeats of each arm whose questions ran more than once, as the other arm tables:
    a column per arm (fitted to the width), rows of questions x runs, pass^k, pass^1, the
    questions whose runs disagree and the spread between runs, on sufficiency and (with a
    truth file) on correctness; None when no question of any arm ran twice."""
    columns = [(name, agg["repeats"]) for name, agg in arms.items() if agg.get("repeats")]
    if not columns:
        return None

    rows: list[list[object]] = []
    for key, on in (("sufficient", ""), ("correct", ", correct")):
        got = [r[key] for _, r in columns]
        if all(s is None for s in got):
            continue

        def each(f: Any, got: list[Any] = got) -> list[object]:
            return [f(s) if s is not None else "-" for s in got]

        rows += [
            [f"questions x runs{on}", *each(_repeat_runs)],
            [f"pass^k{on}", *each(lambda s: percent(s["pass_k"]))],
            [f"pass^1{on}", *each(lambda s: percent(s["pass_1"]))],
            [f"runs disagree (questions){on}", *each(lambda s: s["disagree"])],
        ]
        if any(s is not None and s.get("sd") is not None for s in got):  # the per-run share's spread
            sd = each(lambda s: "-" if s.get("sd") is None else _pct(s["sd"]))
            rows.append([f"sd between runs, points{on}", *sd])
    if not rows:
        return None
    return f"{REPEATS_TITLE}\n{_metric_table(rows, [clean(n) for n, _ in columns], width)}"


def _repeat_runs(s: Mapping[str, Any]) -> str:
    runs = s["k"] if s["k"] == s["k_max"] else f"{s['k']}-{s['k_max']}"
    return f"{s['questions']} x {runs}"


def allocation_lines(rec: Mapping[str, Any]) -> list[str]:
    """``-v``: a transcript's per-call allocation and the files no answer cited."""
    a = rec.get("allocation")
    if not a:
        return []
    out = [
        f"call {i}: {percent(c['efficiency'])} of {c['envelope']:,} chars, "
        f"{c['files_used']}/{plural(c['files'], 'file')}"
        for i, c in enumerate(a["calls"], 1)
    ]
    uncited = [f["path"] for f in a["files"] if f["via"] is None]
    if uncited:
        out.append("not cited: " + ", ".join(clean(p) for p in uncited))
    if not a["has_answer"]:
        out.append("no final answer text: every file counts as uncited")
    return [clean(line) for line in out]


class Line(NamedTuple):
    """A line of the terminal summary, with its TerminalWriter markup (``red=True``, ...)."""

    text: str
    markup: Mapping[str, bool] = MappingProxyType({})
    table: bool = False  # a line of a table: already fitted to the width, never folded


def wrapped(lines: Iterable[Line], width: int) -> Iterator[Line]:
    """Prose lines folded to the terminal's width (tables are fitted, not folded)."""
    for line in lines:
        if len(line.text) <= width or line.table:
            yield line
            continue
        indent = " " * (len(line.text) - len(line.text.lstrip()) + 4)
        folded = textwrap.wrap(line.text, width, subsequent_indent=indent, break_long_words=False,
                               break_on_hyphens=False)  # fmt: skip
        yield from (Line(text, line.markup) for text in folded)


def summary_lines(report: Report, *, width: int = 80, verbose: bool = False) -> Iterator[Line]:
    """The summary section: tables, warnings, what was excluded, failed or ignored."""
    return wrapped(_summary_lines(report, width, verbose), width)


def _table(text: str) -> Iterator[Line]:
    return (Line(line, table=True) for line in text.splitlines())


def _summary_lines(report: Report, width: int, verbose: bool) -> Iterator[Line]:
    if report.arms:
        yield from _table(arm_table(report.arms, report.pooled, width))
    else:
        yield Line("no classified transcripts")
    if report.comparison:
        yield Line("")
        yield from _table(comparison_table(report.comparison, width))
        cmp = report.comparison
        moved = _question_lines(cmp.get("questions") or [], arms=(cmp["a"], cmp["b"]), indent="")
        yield from map(Line, moved)
    blocks = [run_table(report.arms, width, verbose), allocation_table(report.arms, width),
              occupancy_table(report.arms, width)]  # fmt: skip
    if report.truth is not None:
        blocks.append(truth_table(report.arms, width))
    for block in blocks:
        if block is not None:
            title, table = block.split("\n", 1)
            yield Line("")
            yield Line(title)  # prose: folded to the width, as the table is fitted
            yield from _table(table)
    if report.truth is not None:
        yield Line(truth_line(report.truth))
    pair = report.metrics_comparison
    if pair and (line := residual_line(pair)) is not None:
        yield Line(line)
    if (block := repeat_table(report.arms, width)) is not None:
        title, table = block.split("\n", 1)
        yield Line("")
        yield Line(title)
        yield from _table(table)
    if report.baseline:
        yield Line("")
        yield Line(f"against the baseline {clean(report.baseline['report'])}:")
        if (relation := relation_line(report.baseline)) is not None:
            yield relation
        if (same := report.baseline.get("truth")) is not None and not same["same"]:
            yield Line(
                "the baseline was graded against another truth file (digest "
                f"{clean(same['digest'])[:12]})" if same["digest"] else
                "the baseline was graded without a truth file: its correct share is not comparable",
                {"yellow": True},
            )  # fmt: skip
        if diffs := report.baseline.get("options_differ"):
            from .compare import differences_text

            yield Line(f"the baseline was judged with other options: {clean(differences_text(diffs))}: "
                       "a difference below may be the judge's, not the tool's", {"yellow": True})  # fmt: skip
        yield from _table(baseline_table(report.baseline["arms"], width))
    if report.trend:
        yield Line("")
        yield from trend_lines(report.trend, width)
    warn = {"yellow": True}
    for name, agg in report.arms.items():
        if len(agg.get("agents") or ()) > 1:
            mix = ", ".join(f"{clean(a)} ({n})" for a, n in agg["agents"].items())
            yield Line(f"note: arm {clean(name)} mixes agents: {mix}; its shares pool them", warn)
        if (s := agg.get("sample")) and s.get("detectable_change") is not None:
            # What the arm's calls can detect, at their design effect (#38), instead of a fixed 30.
            detect = half_up(s["detectable_change"] * 100)
            if detect > SMALL_ARM_POINTS:
                calls = plural(agg["answered"], "answered call")
                yield Line(f"warning: arm {clean(name)}: {calls} (design effect {s['design_effect']:.1f}) "
                           f"detect only a change of {detect} points (80% power)", warn)  # fmt: skip
    for note in report.notes:
        yield Line(f"warning: {clean(note)}", warn)
    excluded = [r for r in report.transcripts if r["status"] == "skipped"]
    if excluded:
        yield Line(f"excluded from the aggregates: {len(excluded)} transcript(s)")
        for r in excluded:
            yield Line(f"  {clean(r['path'])}: {clean(r['reason'])}")
    failed = [r for r in report.transcripts if r["status"] == "error"]
    if failed:
        yield from _failed_lines(failed, report.truth is not None)
    if report.ignored:
        folders = sum(1 for r in report.ignored if str(r.get("reason", "")).startswith(FOLDER_REASON))
        what = f"{len(report.ignored) - folders} file(s)" + (f" and {folders} folder(s)" if folders else "")
        yield Line(f"ignored: {what} that are not transcripts or were not followed "
                   "(listed with reasons in the JSON report)")  # fmt: skip
    if verbose:
        for r in report.transcripts:
            lines = [call_line(i, c) for i, c in enumerate(r["calls"], 1) if c["bucket"] != "sufficient"]
            lines += allocation_lines(r)
            if lines:
                yield Line(f"{clean(r['path'])} [{clean(r['arm'])}]")
                yield from (Line(f"  {line}") for line in lines)


def verdict_lines(report: Report, *, width: int = 80, passed: bool = True) -> Iterator[Line]:
    """The gates (``passed=False``: only those that fail the run) and a partial run's notice:
    what a reader must see at any verbosity."""
    return wrapped(_verdict_lines(report, passed), width)


def _verdict_lines(report: Report, passed: bool) -> Iterator[Line]:
    for o in report.outcomes:
        if passed or not o.passed:
            yield Line(f"explore-suff gate {o.describe()}", {"red": not o.passed, "green": bool(o.passed)})
    family = report.family
    if (line := family_line(family)) is not None and (passed or (family or {}).get("failed")):
        yield Line(line)
    cov = report.coverage
    if not cov.complete:
        yield Line(f"explore-suff: partial run: {cov.ran} of {plural(cov.collected, 'transcript')} ran "
                   f"({'; '.join(cov.why())}); the report says so", {"yellow": True})  # fmt: skip


def _failed_lines(failed: list[Mapping[str, Any]], graded: bool) -> Iterator[Line]:
    """The failed items: the unreadable transcripts; with a truth file, those that failed on
    it (two questions covered them, or their judge raised or answered garbage) apart."""
    why: dict[str | None, int] = {None: len(failed)}
    if graded:
        from .ground import failed_on

        why = {}
        for r in failed:
            cause = failed_on(str(r.get("reason") or ""))
            why[cause] = why.get(cause, 0) + 1
    if why.get(None):
        yield Line(f"unreadable: {why[None]} transcript(s) (failed items)")
    if conflicts := why.get("conflict", 0):
        yield Line(f"covered by two questions of the truth file: {conflicts} transcript(s) (failed items)")
    if judged := why.get("judge", 0):
        yield Line(f"judge failed (raised, or answered no verdict): {judged} transcript(s) (failed items)")


#: The trend table's columns: (metric, header, with its interval).
_TREND_COLUMNS = (
    ("sufficient", "sufficient [95%]", True),
    ("explore_again", "again", False),
    ("read_returned", "returned", False),
    ("read_missed", "missed", False),
    ("search", "search", False),
    ("allocation", "allocation [95%]", True),
    ("residual_share", "residual", False),
    ("correct", "correct [95%]", True),  # only when some run of the trend had a truth file
)


def _trend_cell(p: dict[str, Any] | None, interval: bool) -> str:
    if p is None:
        return "-"
    cell = _pct(p["share"])
    if interval and p.get("lo") is not None:
        cell += f" [{p['lo'] * 100:.0f}-{p['hi'] * 100:.0f}]"
    c = p.get("change")
    if c and c.get("beyond_noise"):
        cell += "^" if c["diff"] > 0 else "v"
    return cell


def trend_table(section: dict[str, Any], width: int = 10_000) -> str:
    """Per arm, a run a row (oldest first), a metric a column; ``^``/``v``: a change from the
    run before beyond noise. Narrowed to fit: the buckets' columns go first, then the intervals."""
    # a partial run (-k, a shard) marked, as on the page: it is no run to beat
    labels = [
        clean(r["label"])[:14] + ("" if r.get("complete", True) else " partial")
        + (" *" if r.get("options_differ") else "")
        for r in section["runs"]
    ]
    blocks = []
    for arm, data in section["arms"].items():
        points = data["points"]
        variants, shown = [], []
        for keep_buckets, intervals in ((True, True), (False, True), (False, False)):
            cols = [
                c
                for c in _TREND_COLUMNS
                if c[0] in points and (keep_buckets or c[0] in ("sufficient", "allocation", "residual_share",
                                                                "correct"))
            ]  # fmt: skip
            rows = [[label, *(_trend_cell(points[m][i], iv and intervals) for m, _, iv in cols)]
                    for i, label in enumerate(labels)]  # fmt: skip
            headers = ["run", *(h if intervals or not iv else h.split(" ")[0] for _, h, iv in cols)]
            variants.append(str(tabulate(rows, headers=headers, tablefmt="simple", disable_numparse=True)))
            shown.append({m for m, _, _ in cols})
        table = _fit(variants, width)
        hidden = _hidden_marks(points, labels, shown[variants.index(table)])
        blocks.append(f"arm {clean(arm)}\n{table}{hidden}")
    return "\n\n".join(blocks)


def _hidden_marks(points: dict[str, list[Any]], labels: list[str], shown: set[str]) -> str:
    """A line naming the changes beyond noise in the columns the width left out (none: "")."""
    hidden = []
    for metric, header, _ in _TREND_COLUMNS:
        if metric in shown:
            continue
        for label, p in zip(labels, points.get(metric) or (), strict=False):
            c = (p or {}).get("change")
            if c and c.get("beyond_noise"):
                hidden.append(f"{header.split(' ')[0]} {'^' if c['diff'] > 0 else 'v'} in {label}")
    if not hidden:
        return ""
    return f"\nnot shown at this width, changed beyond noise: {'; '.join(hidden)}"


def trend_lines(section: dict[str, Any], width: int) -> Iterator[Line]:
    graded = any("correct" in data["points"] for data in section["arms"].values())
    yield Line(f"trend over {plural(len(section['runs']), 'run')} (oldest first; ^ v: changed beyond noise "
               "from the run before; residual: median retrieval residual share"
               + ("; correct: passed / graded answers, '-' for a run without a truth file, compared only "
                  "between runs graded against the same one" if graded else "") + "):")  # fmt: skip
    yield from (Line(line, table=True) for line in trend_table(section, width).splitlines())
    runs = section["runs"]
    if runs and "truth" in runs[-1]:
        other = [clean(r["label"]) for r in runs[:-1] if r.get("truth") != runs[-1]["truth"]]
        if other:
            yield Line(f"graded against another truth file than the latest run, or none: {', '.join(other)}",
                       {"yellow": True})  # fmt: skip
    other = [f"{clean(r['label'])} ({', '.join(r['options_differ'])})"
             for r in section["runs"] if r.get("options_differ")]  # fmt: skip
    if other:
        yield Line(f"*: judged with other options than the latest run: {'; '.join(other)}; a change "
                   "there may be the judge's, not the tool's", {"yellow": True})  # fmt: skip


def relation_line(baseline: dict[str, Any]) -> Line | None:
    rel = baseline.get("campaign")
    if not rel:
        return None
    from .document import RELATIONS

    counts = (f" ({rel['identical']} identical, {rel['changed']} changed, {rel['only_baseline']} only "
              f"in the baseline, {rel['only_now']} new)")  # fmt: skip
    if rel["relation"] == "unknown":  # a sentence of its own
        return Line(RELATIONS["unknown"])
    return Line(f"the baseline is {RELATIONS[rel['relation']]}{counts}")
