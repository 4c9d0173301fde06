"""Per-transcript records, per-arm aggregates, and the JSON report."""

from __future__ import annotations

import contextlib
import math
import os
import stat
import tempfile
from array import array
from collections.abc import Callable, Iterable, Iterator, Mapping, Sequence
from typing import TYPE_CHECKING, Any, Protocol

import orjson
import xxhash

from . import DEFAULT_WINDOW, TOOL_KINDS, stats
from .buckets import KEYS
from .campaign import Transcript

if TYPE_CHECKING:  # only a transcript being judged needs them (a replayed record does not)
    from .classify import Verdict
    from .events import Collector

SCHEMA = "pytest-explore-suff/3"
#: Reports of these schemas load as baselines (1: before allocation and occupancy; 2: before
#: digests, saved runs, trends and merges).
READABLE_SCHEMAS = ("pytest-explore-suff/1", "pytest-explore-suff/2", SCHEMA)
#: Why a transcript that was not judged has no metric.
NOT_JUDGED = "the transcript was not judged"
#: The arm table's fields of a transcript that was not judged (`runfigures.figures`).
NOT_FIGURED: dict[str, Any] = {
    "run_figures": None, "abandoned": None, "abandon_file_access_after": None,
    "last_call_retrieval": None, "duplicate": None, "duplicate_reason": NOT_JUDGED, "cost": None,
}  # fmt: skip


def record(
    transcript: Transcript,
    *,
    status: str,
    reason: str = "",
    verdict: Verdict | None = None,
    collector: Collector | None = None,
    window: int = DEFAULT_WINDOW,
    digest: str | None = None,
    sections: dict[str, Any] | None = None,
) -> dict[str, Any]:
    """The JSON-ready record of one transcript (also what travels on its test report).
    ``sections``: gets each judged response's returned-file sections (the ground truth's)."""
    from .classify import Verdict
    from .metrics import measure

    v = (verdict or Verdict()).to_dict()
    if verdict is not None and collector is not None:
        metrics = measure(verdict, collector, window, sections)
    else:
        metrics = {"allocation": None, "allocation_reason": NOT_JUDGED, "occupancy": None,
                   "occupancy_reason": NOT_JUDGED, "tokens_processed": None, **NOT_FIGURED}  # fmt: skip
    warnings = [*transcript.notes, *(collector.warnings if collector else ())]
    return {
        "path": transcript.path,
        "files": list(transcript.rel_files),
        "digest": digest,
        "arm": transcript.arm,
        "group": transcript.group,
        "run": transcript.run,
        "kind": transcript.kind,
        "agent": transcript.agent,
        "status": status,
        "reason": reason,
        "flags": v["flags"],
        "counts": v["counts"],
        "answered": v["answered"],
        "errored": v["errored"],
        "concurrent": v["concurrent"],
        "lines": collector.lines if collector else 0,
        "corrupt_lines": collector.corrupt if collector else 0,
        "warnings": warnings,
        # Lines of other sessions this session log holds a copy of (--resume, --fork-session).
        "copies": sorted(collector.copies.values(), key=lambda c: c["first_line"]) if collector else [],
        "runs": collector.runs if collector else [],
        "tools": collector.tools if collector else {},
        "calls": v["calls"],
        **metrics,
    }


#: What the aggregates read of a record's metrics, as one flat tuple (a `store.RecordStore`
#: keeps it in memory): allocation's envelope, used, used by path, calls, has_answer,
#: then occupancy's ctx_final, ctx_base, tool, file-access and retrieval residuals, and
#: whether those are estimated (M10).
Brief = tuple[Any, ...]
BRIEF_SIZE = 11
_NO_BRIEF: Brief = (None,) * BRIEF_SIZE


def pack_brief(brief: Brief) -> list[float]:
    """A record's brief as a `store.RecordStore` keeps it to the end of a run: eleven doubles
    (NaN for None), not a tuple of number objects (tens of thousands of records are held)."""
    return [math.nan if v is None else float(v) for v in brief]


def unpack_brief(values: Iterable[float]) -> Brief:
    """The brief that `pack_brief` packed: counts of characters, calls and tokens are
    whole; has_answer (4) and estimated (10) are bools."""
    # One pass: the aggregates unpack every record's brief several times.
    out: list[Any] = [None if v != v else int(v) for v in values]
    if out[4] is not None:
        out[4] = bool(out[4])
    if out[10] is not None:
        out[10] = bool(out[10])
    return tuple(out)


def brief_of(rec: Mapping[str, Any]) -> Brief:
    kept = getattr(rec, "brief", None)  # a `store.Slim`: what its store kept (a property: read once)
    if kept is not None:
        return kept  # type: ignore[no-any-return]
    a: Any = rec.get("allocation")
    o: Any = rec.get("occupancy")
    has_a, has_o = _is_mapping(a), _is_mapping(o)
    if not has_a and not has_o:
        return _NO_BRIEF
    head = (
        (a["envelope"], a["used"], a["used_path"], len(a["calls"]), a["has_answer"])
        if has_a else (None,) * 5
    )  # fmt: skip
    tail = (
        (o["ctx_final"], o["ctx_base"], o["residual"]["tool"], o["residual_file_access"],
         o["residual_retrieval"], o.get("estimated") is True)
        if has_o else (None,) * 6
    )  # fmt: skip
    return head + tail


def _is_mapping(value: Any) -> bool:
    """``isinstance(value, Mapping)``, at once for a dict or None: the ABC's own check costs
    about 300 ns, and `brief_of` asks for each metric of every record."""
    return type(value) is dict or (value is not None and isinstance(value, Mapping))


def _spread(values: Sequence[float]) -> dict[str, float | None]:
    """Median [min-max], with the 25th percentile beside the median."""
    return {"median": stats.median(values), "p25": stats.quantile(values, 0.25),
            "min": min(values) if len(values) else None,
            "max": max(values) if len(values) else None}  # fmt: skip


def allocation_summary(recs: Iterable[Mapping[str, Any]]) -> dict[str, Any] | None:
    """Pooled efficiency with its clustered interval, path-only, per-run spread (None: no figure)."""
    return metric_summaries(recs)[0]


def occupancy_summary(recs: Iterable[Mapping[str, Any]]) -> dict[str, Any] | None:
    """Median [min-max] of the final context and the residuals; the median base prompt."""
    return metric_summaries(recs)[1]


_ZERO = 0.0


def _shares(final: Sequence[Any], retrieval: Sequence[Any]) -> list[float]:
    """Each run's retrieval residual over its final context (a run with a context). Most
    runs have no residual: their share is the one 0.0, not a float object each (these
    lists are as long as the campaign, at the end of the session, where memory peaks)."""
    return [
        _ZERO if r == 0 and type(r) is int else r / f for f, r in zip(final, retrieval, strict=True) if f > 0
    ]


class _Column:
    """One figure over the records, as the end of the session can hold it (it is where a
    run's memory peaks): 8 bytes a value while every value is of the first one's kind, an
    int of 64 bits or a float, no object each; from the first that is not (the other kind,
    None), the values as they are. Summed, sorted and zipped, it gives what the list of
    the same values gives: each value comes back as the same int or float."""

    __slots__ = ("values",)

    def __init__(self) -> None:
        self.values: Any = []

    def add(self, value: Any) -> None:
        values = self.values
        kind = type(value)  # an exact int or float: a bool is not kept as one
        if type(values) is array:
            if kind is (int if values.typecode == "q" else float):
                try:
                    values.append(value)
                    return
                except OverflowError:
                    pass
            self.values = values = list(values)
        elif not values and (kind is int or kind is float):  # the first value: a column of its kind
            try:
                self.values = array("q" if kind is int else "d", (value,))
                return
            except OverflowError:
                pass
        values.append(value)


class AllocationColumns:
    """What the allocation summary reads of the briefs with an allocation figure (their
    first five figures), as columns: `summary` is the summary."""

    __slots__ = ("calls", "envelope", "no_answer", "used", "used_path")

    def __init__(self) -> None:
        self.envelope, self.used, self.used_path, self.calls = _Column(), _Column(), _Column(), _Column()
        self.no_answer = 0

    def add(self, brief: Brief) -> None:
        self.envelope.add(brief[0])
        self.used.add(brief[1])
        self.used_path.add(brief[2])
        self.calls.add(brief[3])
        if not brief[4]:
            self.no_answer += 1

    def summary(self) -> dict[str, Any] | None:
        envelopes, used = self.envelope.values, self.used.values
        if not len(envelopes):
            return None
        envelope = sum(envelopes)
        used_path = sum(self.used_path.values)
        return {
            "transcripts": len(envelopes),
            "calls": sum(self.calls.values),
            "envelope": envelope,
            "used": sum(used),
            "used_path": used_path,
            "efficiency": stats.ratio_of(used, envelopes).to_dict(),
            "efficiency_path": used_path / envelope if envelope else 0.0,
            "per_run": _spread([u / e if e else 0.0 for u, e in zip(used, envelopes, strict=True)]),
            "no_answer": self.no_answer,
        }


def metric_summaries(
    recs: Iterable[Mapping[str, Any]],
) -> tuple[dict[str, Any] | None, dict[str, Any] | None]:
    """(`allocation_summary`, `occupancy_summary`) of the records, each brief unpacked once,
    its figures kept as columns (`_Column`)."""
    allocation = AllocationColumns()
    final, base, tool, file_access, retrieval = _Column(), _Column(), _Column(), _Column(), _Column()
    estimated = 0
    for b in map(brief_of, recs):
        if b[0] is not None:
            allocation.add(b)
        if b[5] is not None:
            final.add(b[5])
            base.add(b[6])
            tool.add(b[7])
            file_access.add(b[8])
            retrieval.add(b[9])
            if b[10]:
                estimated += 1
    occupancy = None
    if len(final.values):
        occupancy = {
            "transcripts": len(final.values),
            "ctx_final": _spread(final.values),
            "residual_tool": _spread(tool.values),
            "residual_file_access": _spread(file_access.values),
            "residual_retrieval": _spread(retrieval.values),
            "share": _spread(_shares(final.values, retrieval.values)),
            "ctx_base": stats.median(base.values),
            # M10: figures estimated from the window at the end (Copilot) are not measured
            # ones; the arm tables mark an arm whose figures include them.
            "estimated": estimated,
        }
    return allocation.summary(), occupancy


def shares(counts: dict[str, int], answered: int) -> dict[str, float]:
    return {k: (counts[k] / answered if answered else 0.0) for k in KEYS}


class Columns:
    """Some records, with what every summary and comparison reads of each (the answered
    calls and the counts), in the records' order.

    A `store.Slim` answers each ``rec[key]`` through a method: read once here, the arm's
    summary, the pooled one (the arms' columns joined) and the comparisons read lists.
    The briefs and run totals are unpacked where they are summed up, not kept: held for
    every record to the end of `build`, each of their numbers an object, they would
    raise the run's peak memory (the end of the session is where it peaks).
    """

    __slots__ = ("answered", "counts", "recs")

    def __init__(self, recs: Iterable[Mapping[str, Any]] = ()) -> None:
        self.recs: list[Mapping[str, Any]] = list(recs)
        self.answered: list[int] = [rec["answered"] for rec in self.recs]
        self.counts: list[Mapping[str, int]] = [rec["counts"] for rec in self.recs]

    @classmethod
    def joined(cls, parts: Iterable[Columns]) -> Columns:
        """The columns of every part's records, part after part."""
        out = cls()
        for part in parts:
            out.recs += part.recs
            out.answered += part.answered
            out.counts += part.counts
        return out

    def where_answered(self) -> Columns:
        """The columns of the records with answered calls."""
        out = Columns()
        keep = [i for i, n in enumerate(self.answered) if n]
        out.recs = [self.recs[i] for i in keep]
        out.answered = [self.answered[i] for i in keep]
        out.counts = [self.counts[i] for i in keep]
        return out

    def key(self) -> bytes | None:
        """What the records are, in their order, as one digest (a `Summaries` key): None
        unless every record is a `store.Slim` that has its content digest."""
        h = xxhash.xxh3_128(b"summary\0")
        for rec in self.recs:
            content = getattr(rec, "content", None)
            if content is None:
                return None
            h.update(content)
        return h.digest()

    def clusters(self, bucket: str) -> list[tuple[int, int]]:
        """(calls in ``bucket``, answered calls) per record: the clusters of the intervals."""
        return list(zip([c[bucket] for c in self.counts], self.answered, strict=True))


def arm_columns(records: Iterable[Mapping[str, Any]]) -> dict[str, Columns]:
    """The columns of the classified records per arm, sorted by arm, in the records' order.

    Skipped (raced, contaminated) and failed transcripts are not counted.
    """
    members: dict[str, list[Mapping[str, Any]]] = {}
    for rec in records:
        if rec["status"] == "classified":
            members.setdefault(rec["arm"], []).append(rec)
    return {arm: Columns(members[arm]) for arm in sorted(members)}


def aggregate(records: Iterable[Mapping[str, Any]]) -> tuple[dict[str, dict[str, Any]], dict[str, Any]]:
    """(per-arm aggregates sorted by arm, pooled) over the classified records."""
    return aggregate_columns(arm_columns(records))


class Summaries(Protocol):
    """Summaries kept from earlier runs (`cache.VerdictCache`), by `Columns.key`."""

    def summary(self, key: bytes) -> dict[str, Any] | None: ...
    def keep_summary(self, key: bytes, summary: Mapping[str, Any]) -> None: ...


def aggregate_columns(
    arms: dict[str, Columns], kept: Summaries | None = None
) -> tuple[dict[str, dict[str, Any]], dict[str, Any]]:
    """`aggregate` of the columns `arm_columns` made: the pooled figures are over the arms'
    records, arm after arm. ``kept``: the summaries of earlier runs, a summary a pure
    function of its records in their order (an arm whose records did not change is not
    summed again)."""

    def summary(c: Columns) -> dict[str, Any]:
        agg: dict[str, Any] = remembered(kept, "summary", (c,), lambda: _summary(c))
        return agg

    return {arm: summary(c) for arm, c in arms.items()}, summary(Columns.joined(arms.values()))


def remembered(
    kept: Summaries | None,
    name: str,
    columns: Sequence[Columns],
    figure: Callable[[], dict[str, Any] | None],
    *args: str,
) -> Any:
    """``figure()``, or what it gave an earlier run: ``figure`` must be a pure function of
    the records of ``columns`` (in their order) and of ``args`` (arm names, say), which
    key what is kept with ``name``. A figure that is not a dict is worked out every time."""
    keys = [c.key() for c in columns] if kept is not None else [None]
    if kept is None or None in keys:
        return figure()
    h = xxhash.xxh3_128(f"{name}\0{len(args)}\0".encode())
    for arg in args:
        h.update(arg.encode("utf-8", "surrogateescape") + b"\0")
    for k in keys:
        h.update(k)  # type: ignore[arg-type]  # None is ruled out above
    key = h.digest()
    if (found := kept.summary(key)) is not None:
        return found
    value = figure()
    if isinstance(value, dict):
        kept.keep_summary(key, value)
    return value


def summarize(recs: Iterable[Mapping[str, Any]]) -> dict[str, Any]:
    """Counts, shares, clustered 95% intervals and run figures over some transcripts."""
    return _summary(Columns(recs))


def _summary(c: Columns) -> dict[str, Any]:
    # Summed in the records' order, as the intervals' floats are: the same bytes each run.
    counts = {k: sum([n[k] for n in c.counts]) for k in KEYS}
    agg: dict[str, Any] = {
        "transcripts": len(c.recs),
        "answered": sum(c.answered),
        "counts": counts,
        "errored": sum([rec["errored"] for rec in c.recs]),
        "concurrent": sum([rec["concurrent"] for rec in c.recs]),
    }
    agents: dict[str, int] = {}
    for rec in c.recs:
        agent = rec.get("agent") or ""
        if agent:
            agents[agent] = agents.get(agent, 0) + 1
    agg["agents"] = dict(sorted(agents.items()))  # transcripts per agent: an arm can mix them
    agg["shares"] = shares(counts, agg["answered"])
    agg["intervals"] = {k: stats.share(c.clusters(k)).to_dict() for k in KEYS}
    # What the calls can detect (#38: not a fixed "fewer than 30"); null figures without calls.
    agg["sample"] = stats.sample_size(agg["shares"]["sufficient"], agg["answered"],
                                      agg["intervals"]["sufficient"]["se"])  # fmt: skip
    agg["figures"] = figures(c.recs)
    agg["allocation"], agg["occupancy"] = metric_summaries(c.recs)
    truth = truth_summary(c.recs)
    if truth is not None:  # only when a truth file is in play: the report is otherwise unchanged
        agg["truth"] = truth
    agg.update(table_summary(c.recs))
    return agg


#: The verdicts of an answer unit, in the order reports list them.
VERDICTS = ("pass", "partial", "fail", "unjudged")


def truth_brief_of(rec: Mapping[str, Any]) -> dict[str, Any] | None:
    """What the arm's truth figures read of a record (None: no truth file in play): per
    answer unit [verdict (the judge's, when one gave it), calls per bucket, gold recall,
    gold first, question id], and per judged call of a covered unit [gold characters, envelope]."""
    if hasattr(rec, "truth_brief"):  # a `store.Slim`: what its store kept
        return rec.truth_brief  # type: ignore[no-any-return]
    entries = rec.get("truth")
    if not isinstance(entries, list):
        return None
    calls = {c.get("id"): c for c in rec.get("calls") or () if isinstance(c, Mapping)}
    alloc = rec.get("allocation")
    envelopes = {c["id"]: c["envelope"] for c in alloc["calls"]} if isinstance(alloc, Mapping) else {}
    units = []
    gold = []
    for e in entries:
        judge = e.get("judge")
        verdict = judge["verdict"] if isinstance(judge, Mapping) and judge.get("verdict") else e["verdict"]
        counts: dict[str, int] = {}
        for cid in e.get("calls") or ():
            c = calls.get(cid)
            if c is not None:
                counts[c["bucket"]] = counts.get(c["bucket"], 0) + 1
                share, envelope = c.get("gold_share"), envelopes.get(cid)
                if share is not None and envelope is not None:
                    gold.append([round(share * envelope), envelope])
        units.append([verdict, counts, e.get("gold_recall"), e.get("gold_first"), e.get("question")])
    return {"u": units, "g": gold}


def truth_clusters(recs: Iterable[Mapping[str, Any]]) -> tuple[list[tuple[int, int]], list[tuple[int, int]]]:
    """Per transcript with judged units: (passes, judged units), the correct share's clusters;
    and (sufficient calls in failed units, sufficient calls in judged units), false
    sufficient's (the verdict is the judge's where one gave it)."""
    correct: list[tuple[int, int]] = []
    wrong: list[tuple[int, int]] = []
    for b in map(truth_brief_of, recs):
        if b is not None and b["u"]:
            c, w = _unit_clusters(b["u"])
            correct.append(c)
            wrong.append(w)
    return correct, wrong


def _unit_clusters(units: Iterable[Sequence[Any]]) -> tuple[tuple[int, int], tuple[int, int]]:
    """One transcript's answer units (`truth_brief_of`'s ``u``): (passes, judged units) and
    (sufficient calls in failed units, sufficient calls in judged units)."""
    passed = judged = failed_suff = suff = 0
    for verdict, counts, *_ in units:
        if verdict != "unjudged":
            judged += 1
            passed += verdict == "pass"
            s = counts.get("sufficient", 0)
            suff += s
            if verdict == "fail":
                failed_suff += s
    return (passed, judged), (failed_suff, suff)


def truth_summary(recs: Iterable[Mapping[str, Any]]) -> dict[str, Any] | None:
    """An arm's ground-truth figures over its records' answer units (None: no truth file).

    ``correct_share`` (pass over pass, partial and fail) and ``false_sufficient`` (of the
    ``sufficient`` calls in units with such a verdict, the share in units that failed)
    have 95% intervals clustered by transcript (`stats.share`)."""
    briefs = [b for b in map(truth_brief_of, recs) if b is not None]
    if not briefs:
        return None
    verdicts = dict.fromkeys(VERDICTS, 0)
    crosstab = {k: dict.fromkeys(VERDICTS, 0) for k in KEYS}
    units = no_question = 0
    correct: list[tuple[int, int]] = []
    wrong: list[tuple[int, int]] = []
    recalls: list[float] = []
    firsts: list[bool] = []
    for b in briefs:
        if not b["u"]:
            no_question += 1
            continue
        for verdict, counts, recall, first, _ in b["u"]:
            units += 1
            verdicts[verdict] += 1
            for bucket, n in counts.items():
                crosstab[bucket][verdict] += n
            if recall is not None:
                recalls.append(recall)
            if first is not None:
                firsts.append(first)
        c, w = _unit_clusters(b["u"])
        correct.append(c)
        wrong.append(w)
    gold = [g for b in briefs for g in b["g"]]
    envelope = sum(e for _, e in gold)
    correct_share = stats.share(correct)
    false_sufficient = stats.share(wrong)
    return {
        "questions": units,
        "no_question": no_question,
        "verdicts": verdicts,
        "correct_share": {"pass": correct_share.k, "judged": correct_share.n, **correct_share.to_dict()}
        if correct_share.n else None,
        "false_sufficient": {"fail": false_sufficient.k, "sufficient": false_sufficient.n,
                             **false_sufficient.to_dict()} if false_sufficient.n else None,
        "crosstab": crosstab,
        "gold_share": {
            "calls": len(gold),
            "pooled": sum(g for g, _ in gold) / envelope if envelope else None,
            "median": stats.median([g / e if e else 0.0 for g, e in gold]),
        },
        "gold_recall": {
            "units": len(recalls),
            "median": stats.median(recalls),
            "full": sum(1 for r in recalls if r >= 1) / len(recalls) if recalls else None,
        },
        "gold_first": {"units": len(firsts), "share": sum(firsts) / len(firsts) if firsts else None},
    }  # fmt: skip


def clusters(recs: Iterable[Mapping[str, Any]], bucket: str) -> list[tuple[int, int]]:
    """(calls in ``bucket``, answered calls) per transcript: the clusters of the intervals."""
    return [(rec["counts"][bucket], rec["answered"]) for rec in recs]


#: The run fields `figures` reads: turns, duration, cost, and tokens (Codex and Gemini logs).
RUN_FIGURES = ("num_turns", "duration_ms", "total_cost_usd", "tokens")
Totals = tuple[Any, ...]


def run_totals(rec: Mapping[str, Any]) -> Totals:
    """Per field of `RUN_FIGURES`, its sum over the record's runs that have a number for it
    (None: none has)."""
    kept = getattr(rec, "totals", None)  # a `store.Slim`: what its store kept
    if kept is not None:
        return kept  # type: ignore[no-any-return]
    runs = rec.get("runs", ())
    if len(runs) == 1:  # most records: the sum of one number, ``0 + v`` (a -0.0 sums to 0.0)
        return tuple([0 + v if stats.is_number(v) else None for v in map(runs[0].get, RUN_FIGURES)])
    return tuple(_total([r.get(key) for r in runs]) for key in RUN_FIGURES)


def _total(values: list[Any]) -> Any:
    nums = [v for v in values if stats.is_number(v)]
    return sum(nums) if nums else None


def pack_totals(totals: Totals) -> list[float] | None:
    """A record's run totals as a `store.RecordStore` keeps them: four doubles (NaN for
    None). `figures` takes medians of floats, so a sum is the same figure as a double;
    None (kept as they are) for a NaN sum (runs with both infinities) or an integer past
    a double's range."""
    out = []
    for v in totals:
        if v is None:
            out.append(math.nan)
        elif v != v:
            return None
        else:
            try:
                out.append(float(v))
            except OverflowError:
                return None
    return out


def unpack_totals(values: Iterable[float]) -> Totals:
    """The run totals that `pack_totals` packed."""
    return tuple(None if v != v else v for v in values)


def figures(recs: list[Mapping[str, Any]]) -> dict[str, float | None]:
    """Medians over runs, as the reference harness's arm-comparison table shows them."""
    tools = [rec.get("tools", {}) for rec in recs]
    out: dict[str, float | None] = {
        f"{kind}_calls": stats.median([calls.get(kind, 0) for calls in tools]) for kind in TOOL_KINDS
    }
    # A column per figure, filled record by record: zip(*map(run_totals, recs)) would hold
    # every record's totals as a tuple at once (the end of the session is where memory peaks).
    turns, duration, cost, tokens = _Column(), _Column(), _Column(), _Column()
    for t in map(run_totals, recs):
        turns.add(t[0])
        duration.add(t[1])
        cost.add(t[2])
        tokens.add(t[3])
    out["turns"] = stats.median(turns.values)
    out["duration_ms"] = stats.median(duration.values)
    out["cost_usd"] = stats.median(cost.values)
    # Only Codex and Gemini logs record a session's tokens (a run's "tokens"):
    # the figure is there when some transcript of the arm has them.
    if any(t is not None for t in tokens.values):
        out["tokens"] = stats.median(tokens.values)
    return out


# -- the arm table (`runfigures`): what the aggregates read of a record, and its summaries --

#: A record's arm-table figures as a `store.RecordStore` keeps them (doubles, NaN for None):
#: `table_of` reads them, `table_summary` sums them up.
TABLE = (
    "success", "raced", "contaminated", "duration_s", "tool_calls", "read", "search", "bash",
    "retrieval", "cli_calls", "cli_returned", "errored_retrieval", "last_call_retrieval",
    "abandoned", "duplicate_chars", "duplicate_envelope", "cost_usd", "main_usd", "subagents_usd",
    "tokens_main", "tokens_subagents", "input_tokens", "cache_read_tokens", "tokens_processed",
)  # fmt: skip
TABLE_SIZE = len(TABLE)
_T = {name: i for i, name in enumerate(TABLE)}
_NO_TABLE: tuple[Any, ...] = (None,) * TABLE_SIZE
#: The per-run rows of the arm table, each as median [min-max] with its 25th percentile.
TABLE_ROWS = (
    "duration_s", "tool_calls", "read", "search", "bash", "retrieval", "tokens_processed", "cost_usd",
)  # fmt: skip


def _num(value: Any) -> float | int | None:
    return value if stats.is_number(value) else None


def _flag(value: Any) -> int | None:
    return int(value) if isinstance(value, bool) else None


def table_of(rec: Mapping[str, Any]) -> tuple[Any, ...]:
    """What the arm table reads of one record (`TABLE`), None where the log lacks it."""
    kept = getattr(rec, "table", None)  # a `store.Slim`: what its store kept
    if kept is not None:
        return kept  # type: ignore[no-any-return]
    f: Any = rec.get("run_figures")
    if not _is_mapping(f):
        return _NO_TABLE
    flags: Any = rec.get("flags") or {}
    d: Any = rec.get("duplicate")
    c: Any = rec.get("cost") or {}
    has_d = _is_mapping(d)
    return (
        _flag(f.get("success")), _flag(flags.get("raced")), _flag(flags.get("contaminated")),
        *[_num(f.get(k)) for k in ("duration_s", "tool_calls", "read", "search", "bash", "retrieval",
                                    "cli_calls", "cli_returned", "errored_retrieval")],
        _flag(rec.get("last_call_retrieval")), _flag(rec.get("abandoned")),
        _num(d.get("duplicate_chars")) if has_d else None, _num(d.get("envelope")) if has_d else None,
        *[_num(c.get(k)) for k in ("total_usd", "main_usd", "subagents_usd", "tokens_main",
                                    "tokens_subagents", "input_tokens", "cache_read_tokens")],
        _num(f.get("tokens_processed")),
    )  # fmt: skip


def models_of(rec: Mapping[str, Any]) -> dict[str, float]:
    """The record's cost per model (``cost.by_model``), where the log says it."""
    kept = getattr(rec, "models", None)  # a `store.Slim`
    if kept is not None:
        return kept  # type: ignore[no-any-return]
    c: Any = rec.get("cost")
    by_model: Any = c.get("by_model") if _is_mapping(c) else None
    if not _is_mapping(by_model):
        return {}
    return {
        str(m): v["cost_usd"]
        for m, v in by_model.items()
        if _is_mapping(v) and stats.is_number(v.get("cost_usd"))
    }


def pack_table(table: Sequence[Any]) -> list[float]:
    """A record's `table_of` as doubles (NaN for None), as a `store.RecordStore` keeps it."""
    out = []
    for v in table:
        try:
            out.append(math.nan if v is None else float(v))
        except OverflowError:
            out.append(math.inf)
    return out


def unpack_table(values: Iterable[float]) -> tuple[Any, ...]:
    return tuple(None if v != v else v for v in values)


def _count(rows: Sequence[tuple[Any, ...]], name: str) -> int:
    at = _T[name]
    return sum(1 for t in rows if t[at])


def _known(rows: Sequence[tuple[Any, ...]], name: str) -> list[float]:
    at = _T[name]
    return [t[at] for t in rows if t[at] is not None]


def _whole(x: float) -> float | int:
    """A sum of counts kept as doubles, as the count it is."""
    return int(x) if float(x).is_integer() and abs(x) < 2**53 else x


def _row(values: list[float]) -> dict[str, Any]:
    return {"runs": len(values), **_spread(values)}


def run_counts(rows: Sequence[tuple[Any, ...]]) -> dict[str, Any]:
    """The head of the arm table over every judged run of an arm (the excluded ones too):
    runs, of which non-success, raced, contaminated; the CLI calls."""
    calls = sum(_known(rows, "cli_calls"))
    returned = sum(_known(rows, "cli_returned"))
    return {
        "runs": len(rows),
        "non_success": sum(1 for t in rows if t[_T["success"]] == 0),
        "success_unknown": sum(1 for t in rows if t[_T["success"]] is None),
        "raced": _count(rows, "raced"),
        "contaminated": _count(rows, "contaminated"),
        "cli_returned": _whole(returned),
        "cli_blocked": _whole(calls - returned),
    }


def table_summary(recs: Sequence[Mapping[str, Any]]) -> dict[str, Any]:
    """``run_figures``, ``duplicate``, ``abandon`` and ``cost`` of an arm's classified records."""
    rows = [table_of(rec) for rec in recs]
    figures = {
        **run_counts(rows),
        **{name: _row(_known(rows, name)) for name in TABLE_ROWS},
    }
    said = _known(rows, "abandoned")
    abandoned = sum(1 for v in said if v)
    last = _known(rows, "last_call_retrieval")
    last_k = sum(1 for v in last if v)
    abandon = {
        "abandoned": abandoned,
        "runs": len(said),
        "abandon_share": abandoned / len(said) if said else None,
        "errored_retrieval_runs": sum(1 for t in rows if t[_T["errored_retrieval"]]),
        "last_call_retrieval": last_k,
        "last_call_runs": len(last),
        "last_call_retrieval_share": last_k / len(last) if last else None,
    }
    dup_rows = [t for t in rows if t[_T["duplicate_envelope"]] is not None]
    duplicate = None
    if dup_rows:
        chars = [t[_T["duplicate_chars"]] for t in dup_rows]
        envelope = [t[_T["duplicate_envelope"]] for t in dup_rows]
        duplicate = {
            "transcripts": len(dup_rows),
            "envelope": _whole(sum(envelope)),
            "duplicate_chars": _whole(sum(chars)),
            "duplicate_share": stats.ratio_of(chars, envelope).to_dict(),
            "per_run": _spread([c / e if e else 0.0 for c, e in zip(chars, envelope, strict=True)]),
        }
    models: dict[str, list[float]] = {}
    for rec in recs:
        for model, usd in models_of(rec).items():
            models.setdefault(model, []).append(usd)
    cache_in = [t for t in rows if t[_T["input_tokens"]] and t[_T["cache_read_tokens"]] is not None]
    total_in = sum(t[_T["input_tokens"]] for t in cache_in)
    cost = {
        **{
            name: {"total": sum(v) if (v := _known(rows, name)) else None, **_row(v)}
            for name in ("cost_usd", "main_usd", "subagents_usd", "tokens_main", "tokens_subagents")
        },
        "by_model": {m: {"runs": len(v), "cost_usd": sum(v)} for m, v in sorted(models.items())},
        "cache_read_share": {
            "pooled": sum(t[_T["cache_read_tokens"]] for t in cache_in) / total_in if total_in else None,
            **_row([t[_T["cache_read_tokens"]] / t[_T["input_tokens"]] for t in cache_in]),
        },
    }
    return {"run_figures": figures, "duplicate": duplicate, "abandon": abandon, "cost": cost}


def dumps(document: Mapping[str, Any]) -> bytes:
    """The report's bytes: indented, UTF-8, deterministic for the same document."""
    return encode(document) + b"\n"


def encode(value: Any) -> bytes:
    """``value`` as the report writes it at the top level: indented by two, no final newline."""
    # Ten times faster than json.dump on a 10,000-transcript report.
    return orjson.dumps(value, option=orjson.OPT_INDENT_2)


#: What `encode` writes of two lists around a record, before and after the record's lines.
_LISTS_HEAD = len(b"[\n  [\n")
_LISTS_TAIL = len(b"\n  ]\n]")


def indented(rec: Mapping[str, Any]) -> bytes:
    """A transcript record as the report holds it: an element of the ``transcripts`` list,
    two levels deep: what ``b"    " + encode(rec).replace(b"\\n", b"\\n    ")`` gives (a JSON
    string has no raw newline), encoded inside two lists and cut out of them, in one call
    that does not shift every line afterwards."""
    return orjson.dumps([[rec]], option=orjson.OPT_INDENT_2)[_LISTS_HEAD:-_LISTS_TAIL]


def transcripts_json(raw: Iterable[bytes]) -> Iterator[bytes]:
    """The ``transcripts`` list of the report from its `indented` elements, in pieces."""
    first = True
    for data in raw:
        yield (b"[\n" if first else b",\n") + data
        first = False
    yield b"[]" if first else b"\n  ]"


def _umask() -> int:
    mask = os.umask(0)  # the only way to read it is to set it
    os.umask(mask)
    return mask


def write_atomic(path: str, document: dict[str, Any]) -> None:
    """Write JSON so that readers see the old complete file or the new one, never half."""
    write_bytes_atomic(path, dumps(document))  # serialize first: a failure leaves the old file alone


def write_bytes_atomic(path: str, data: bytes) -> None:
    """Replace ``path`` with ``data`` in one step: the old complete file or the new one, never half."""
    write_chunks_atomic(path, (data,))


def write_chunks_atomic(path: str, chunks: Iterable[bytes]) -> None:
    """Write the concatenated ``chunks`` to ``path``, as every report writer does.

    A regular file (or a new one) is replaced in one step: a failure while the chunks are
    produced or written leaves the old complete file. A symbolic link keeps being one: the
    file it resolves to is replaced, not the link. What exists and is not a regular file
    (``/dev/null``, a FIFO, ``/dev/stdout``) is written through, as ``open(path, "w")``
    would: renaming over it would replace a device node with a file."""
    try:
        regular = stat.S_ISREG(os.stat(path).st_mode)
    except FileNotFoundError:  # a new file, or a link to one not yet there
        regular = True
    if not regular:
        with open(path, "wb") as fh:
            for chunk in chunks:
                fh.write(chunk)
        return
    target = os.path.realpath(path)  # a link's file, so that the link stays
    directory = os.path.dirname(target)
    os.makedirs(directory, exist_ok=True)
    chunks = iter(chunks)
    old = _open_regular(target)
    try:
        # A report the same to the byte as the file there (a re-run of an unchanged
        # campaign) is not written again: the file is touched, as a write would have.
        same, differing = _same_start(old, chunks) if old is not None else (0, b"")
        if differing is None:
            os.utime(target)
            return
        fd, tmp = tempfile.mkstemp(prefix=".explore-suff-", suffix=".tmp", dir=directory)
        try:
            # mkstemp makes the file 0600 and os.replace keeps that: give the report
            # the mode a plain open() would, so artifact uploaders can read it.
            os.fchmod(fd, 0o666 & ~_umask())
            with os.fdopen(fd, "wb", buffering=1 << 20) as fh:
                if same:  # the chunks compared so far: the old file's bytes, as they were read
                    assert old is not None
                    old.seek(0)
                    while same and (piece := old.read(min(same, 1 << 20))):
                        fh.write(piece)
                        same -= len(piece)
                    if same:
                        raise OSError(f"{target} changed while the report was compared with it")
                fh.write(differing)
                for chunk in chunks:
                    fh.write(chunk)
                fh.flush()
                os.fsync(fh.fileno())
            os.replace(tmp, target)
        except BaseException:
            with contextlib.suppress(OSError):
                os.unlink(tmp)
            raise
    finally:
        if old is not None:
            old.close()


def _open_regular(path: str) -> Any:
    """The regular file at ``path``, open for reading; None if there is none to open."""
    try:
        fh = open(path, "rb")  # noqa: SIM115  # closed by the caller
    except OSError:
        return None
    try:
        if stat.S_ISREG(os.fstat(fh.fileno()).st_mode):
            return fh
    except OSError:
        pass
    fh.close()
    return None


def _same_start(old: Any, chunks: Iterator[bytes]) -> tuple[int, bytes | None]:
    """Reads ``chunks`` while they are what ``old`` holds: (how many bytes agreed, the first
    chunk that did not, or b"" when the old file is longer); (all, None) when the old file is
    the same bytes. The old file is read through the same descriptor later (it is replaced,
    never written in place, so those bytes stay what they were)."""
    same = 0
    for chunk in chunks:
        if old.read(len(chunk)) != chunk:
            return same, chunk
        same += len(chunk)
    return (same, None) if old.read(1) == b"" else (same, b"")
