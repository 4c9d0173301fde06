"""The report document: built once from the transcript records, rendered three ways.

`build` turns what a run produced (records, ignored files, what ran and what
did not, the options) into a `Report`; the terminal summary, the JSON file and
the HTML page are renderings of that one object. Nothing here imports pytest.
"""

from __future__ import annotations

import functools
import uuid
from collections.abc import Iterator, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

from . import __version__
from .compare import (
    arm_pair,
    compare_arm_columns,
    compare_baseline,
    compare_metric_columns,
    drop_gates,
    judged_with,
    metric_pair,
    options_differ,
)
from .gates import (
    Gate,
    Outcome,
    correct,
    evaluate,
    evaluate_baseline_metrics,
    evaluate_control,
    evaluate_metrics,
    evaluate_run_gates,
    evaluate_truth,
    evaluate_truth_baseline,
    sample_size,
)
from .repeats import repeats
from .report import (
    SCHEMA,
    Summaries,
    aggregate_columns,
    arm_columns,
    dumps,
    encode,
    indented,
    remembered,
    run_counts,
    table_of,
    table_summary,
    transcripts_json,
    truth_brief_of,
)
from .sources import DIGEST, campaign_digest
from .store import Slim


def _full(rec: Mapping[str, Any]) -> Mapping[str, Any]:
    return rec.full() if isinstance(rec, Slim) else rec


def _raw(rec: Mapping[str, Any]) -> bytes:
    return rec.raw() if isinstance(rec, Slim) else indented(rec)


@dataclass
class Coverage:
    """What the report covers: every collected transcript, or only part of the campaign.

    ``not_run`` lists each collected transcript that has no record, with why
    (``deselected`` by ``-k``/``-m``/``--lf``/``--sw`` or a shard plugin, or ``not run`` when the
    session stopped or was interrupted first).
    """

    collected: int
    ran: int
    interrupted: bool = False
    stopped: str = ""  # pytest's reason for stopping early (-x, --maxfail, --sw)
    not_run: list[dict[str, str]] = field(default_factory=list)

    @property
    def complete(self) -> bool:
        return self.ran == self.collected and not self.interrupted and not self.not_run

    def why(self) -> list[str]:
        """One short phrase per reason the run is partial."""
        out = []
        deselected = sum(1 for n in self.not_run if n["why"] == "deselected")
        if deselected:
            out.append(f"{deselected} deselected (-k, -m, --lf, --sw, shards)")
        skipped = len(self.not_run) - deselected
        if skipped:
            cause = "interrupted" if self.interrupted else (self.stopped or "the session ended first")
            out.append(f"{skipped} not run ({cause})")
        elif self.interrupted:
            out.append("interrupted")
        return out

    def to_dict(self) -> dict[str, Any]:
        return {
            "complete": self.complete,
            "collected": self.collected,
            "ran": self.ran,
            "why": self.why(),
            "interrupted": self.interrupted,
            "stopped": self.stopped,
            "not_run": self.not_run,
        }


@dataclass(frozen=True)
class Options:
    """The options that shaped the verdicts and the gates, as the report records them."""

    tool: str
    family: str
    marker: str
    pattern: str | None
    keep_excluded: bool
    gate_on: str
    correction: str = "holm"  # the family correction of the gates decided on intervals

    def to_dict(self) -> dict[str, Any]:
        return {
            "tool": self.tool,
            "family": self.family,
            "marker": self.marker,
            "pattern": self.pattern,
            "keep_excluded": self.keep_excluded,
            "gate_on": self.gate_on,
            "correction": self.correction,
        }


@dataclass
class Report:
    campaign: str
    options: Options
    coverage: Coverage
    arms: dict[str, dict[str, Any]]
    pooled: dict[str, Any]
    comparison: dict[str, Any] | None
    baseline: dict[str, Any] | None
    outcomes: list[Outcome]
    transcripts: Sequence[Mapping[str, Any]]  # `store.Slim` views when the records were spooled
    ignored: list[dict[str, str]]
    notes: list[str] = field(default_factory=list)  # warnings for the summary, not in the JSON
    #: allocation and occupancy, arm against arm (the retrieval residual per group)
    metrics_comparison: dict[str, Any] | None = None
    fingerprint: dict[str, Any] | None = None
    #: a saved run: its number, name, commit and time (`history.run_info`); None otherwise
    run: dict[str, Any] | None = None
    #: the saved runs before this one and this run, per arm and metric (`history.trend`)
    trend: dict[str, Any] | None = None
    #: a merge of partial reports: the transcripts more than one part judged (`merge`)
    merge: dict[str, Any] | None = None
    #: the truth file in play: its path, digest, questions (`truth.Truth.to_dict`); None: none
    truth: dict[str, Any] | None = None
    #: the gates decided on intervals, corrected together (`gates.correct`)
    family: dict[str, Any] | None = None

    def decide(self) -> None:
        """Decide the family of checks among the outcomes again (once every gate is in)."""
        self.family = correct(self.outcomes, self.options.correction)

    @property
    def failed(self) -> list[Outcome]:
        """Gates that failed or could not be decided: either fails the run."""
        return [o for o in self.outcomes if not o.passed]

    def to_json(self) -> dict[str, Any]:
        """The report as one document (records spooled to disk are read back)."""
        return self._document([_full(r) for r in self.transcripts])

    def json_chunks(self) -> Iterator[bytes]:
        """The bytes of ``dumps(self.to_json())``, in pieces: each transcript record is
        copied from the spool as it is written, never held whole in memory."""
        token = f"\0explore-suff-transcripts-{uuid.uuid4().hex}"
        head = dumps(self._document(token))
        before, after = head.split(encode(token), 1)
        yield before
        yield from transcripts_json(_raw(r) for r in self.transcripts)
        yield after

    def _document(self, transcripts: Any) -> dict[str, Any]:
        # A report without a truth file has no "truth" key at all (the same bytes as before it).
        truth = {} if self.truth is None else {"truth": self.truth}
        return {
            "schema": SCHEMA,
            "plugin_version": __version__,
            "run": self.run,
            "campaign": self.campaign,
            "fingerprint": self.fingerprint,
            **truth,
            "options": self.options.to_dict(),
            "coverage": self.coverage.to_dict(),
            "merge": self.merge,
            "arms": self.arms,
            "pooled": self.pooled,
            "comparison": self.comparison,
            "metrics_comparison": self.metrics_comparison,
            "baseline": self.baseline,
            "trend": self.trend,
            "gates": [o.to_dict() for o in self.outcomes],
            "family": self.family,
            "transcripts": transcripts,
            "ignored": self.ignored,
        }


def build(
    *,
    campaign: str,
    options: Options,
    coverage: Coverage,
    records: Sequence[Mapping[str, Any]],
    ignored: list[dict[str, str]],
    gates: Sequence[Gate] = (),
    min_calls: int | None = None,
    compare: tuple[str, str] | None = None,
    baseline: tuple[str, list[dict[str, Any]]] | None = None,
    max_drop: float | None = None,
    metric_gates: Sequence[Gate] = (),
    metric_baseline_gates: Sequence[Gate] = (),
    truth: Mapping[str, Any] | None = None,
    questions: Sequence[str] = (),
    run_gates: Sequence[Gate] = (),
    control: tuple[str, ...] | None = None,
    truth_gates: Sequence[Gate] = (),
    truth_baseline_gates: Sequence[Gate] = (),
    baseline_truth: Mapping[str, Any] | None = None,
    baseline_judged: Mapping[str, Any] | None = None,
    summaries: Summaries | None = None,
) -> Report:
    """Aggregate the records, compare arms (and the baseline), decide every gate.

    ``truth``: the truth file in play (`truth.Truth.to_dict`, with ``found``) and
    ``questions`` its question ids, each of which the report warns of when it covers
    no transcript of this run. ``baseline_judged``: what the baseline was judged with
    (`compare.judged_with`; None: not recorded). ``summaries``: kept from earlier runs
    (the verdict cache's), an arm's taken as it is when its records did not change."""
    # Dicts, or `store.Slim` views that read like them.
    recs: list[Any] = sorted(records, key=lambda r: r["path"])
    # Each record read once, for every figure below: its arm's columns.
    columns = arm_columns(recs)
    arms, pooled = aggregate_columns(columns, summaries)
    # The head of the arm table counts every judged run, the excluded (raced, contaminated) too.
    judged: dict[str, list[tuple[Any, ...]]] = {}
    for rec in recs:
        if rec["status"] != "error" and rec["arm"] in arms:
            judged.setdefault(rec["arm"], []).append(table_of(rec))
    for arm, agg in arms.items():
        agg["run_figures"].update(run_counts(judged.get(arm, [])))
    pooled["run_figures"].update(run_counts([t for rows in judged.values() for t in rows]))
    for arm, c in columns.items():  # only when a question ran twice: the report is otherwise unchanged
        if (again := remembered(summaries, "repeats", (c,), functools.partial(repeats, c.recs))) is not None:
            arms[arm]["repeats"] = again
    outcomes = evaluate(list(gates), arms, options.gate_on)
    outcomes += evaluate_metrics(list(metric_gates), arms, options.gate_on)
    outcomes += evaluate_truth(list(truth_gates), arms, options.gate_on)
    if min_calls:
        outcomes += sample_size(min_calls, arms)
    notes: list[str] = []
    pair = arm_pair(arms, compare)
    comparison = None
    if pair and all(arms.get(a, {}).get("answered") for a in pair):
        ca, cb = columns[pair[0]], columns[pair[1]]
        comparison = remembered(summaries, "compare", (ca, cb),
                                lambda: compare_arm_columns(ca, cb, *pair), *pair)  # fmt: skip
    elif compare:
        missing = [a for a in compare if not arms.get(a, {}).get("answered")]
        notes.append(
            f"--explore-suff-compare: no answered calls in arm(s) {', '.join(missing)}; nothing to compare"
        )
    base = None
    if baseline is not None:
        path, old = baseline
        resample = options.gate_on == "bound" and any(g.metric == "residual" for g in metric_baseline_gates)
        changes = compare_baseline(old, recs, resample)
        now = judged_with({"options": options.to_dict(), "plugin_version": __version__})
        assert now is not None
        base = {"report": path, "campaign": relation(old, recs),
                "options_differ": options_differ(dict(baseline_judged) if baseline_judged else None, now),
                "arms": changes}  # fmt: skip
        if truth is not None and baseline_truth is not None:
            # Whether the baseline's answers were graded against the same truth file, by digest.
            old_digest = baseline_truth.get("digest")
            base["truth"] = {
                "digest": old_digest if isinstance(old_digest, str) else None,
                "same": old_digest == truth.get("digest"),
            }
        outcomes += drop_gates(changes, max_drop, options.gate_on)
        outcomes += evaluate_baseline_metrics(list(metric_baseline_gates), changes, arms, options.gate_on)
        outcomes += evaluate_truth_baseline(list(truth_baseline_gates), changes, arms, options.gate_on)
        for change in changes.values():  # the bootstrap's replicates decided the gate; not for the JSON
            (change.get("residual") or {}).pop("draws", None)
    if run_gates:
        base_arms = None
        by_arm: dict[str, list[Any]] | None = None
        if baseline is not None:
            by_arm = {}
            for rec in baseline[1]:
                if rec.get("status") == "classified":
                    by_arm.setdefault(str(rec.get("arm")), []).append(rec)
            base_arms = {arm: table_summary(rs) for arm, rs in by_arm.items()}
        now_recs = {arm: c.recs for arm, c in columns.items()}
        outcomes += evaluate_run_gates(list(run_gates), arms, arm_pair(arms, compare), base_arms,
                                       options.gate_on, now_recs, by_arm)  # fmt: skip
    if control:
        outcomes += evaluate_control(control, recs, None if baseline is None else baseline[1])
    pair_m = metric_pair(arms, compare)
    metrics_cmp = None
    if pair_m and all(a in arms for a in pair_m):
        ma, mb = columns[pair_m[0]], columns[pair_m[1]]
        metrics_cmp = remembered(summaries, "compare metrics", (ma, mb),
                                 lambda: compare_metric_columns(ma, mb, *pair_m), *pair_m)  # fmt: skip
    pairs = [(r["path"], r.get("digest")) for r in recs]
    fingerprint = {
        "algorithm": DIGEST,
        "campaign": campaign_digest(pairs),
        "transcripts": len(pairs),
        "without_digest": sum(1 for _, d in pairs if d is None),
    }
    report = Report(campaign, options, coverage, arms, pooled, comparison, base, outcomes,
                    recs, ignored, notes, metrics_cmp, fingerprint)  # fmt: skip
    if truth is not None:
        report.truth = dict(truth)
        used = {u[4] for r in recs if (b := truth_brief_of(r)) is not None for u in b["u"]}
        for qid in questions:
            if qid not in used:
                notes.append(f"truth file: question {qid!r} covers no transcript of this run")
    report.decide()
    return report


#: What a baseline's campaign is to this one, by the digests of their transcripts' bytes.
RELATIONS = {
    "same": "the same campaign re-judged (every transcript byte-identical): any difference "
    "is the judge's (its version or options), not the tool's",
    "overlapping": "an overlapping campaign: some transcripts are byte-identical, others changed, "
    "added or removed",
    "new": "a new campaign: no transcript is byte-identical to one of the baseline's",
    "unknown": "the baseline has no digests of its transcripts that this version compares "
    "(written before schema 3, or with another digest algorithm): whether it is the same "
    "campaign is not known",
}


def relation(old: Sequence[Mapping[str, Any]], new: Sequence[Mapping[str, Any]]) -> dict[str, Any]:
    """Whether the baseline's transcripts are this campaign's, byte for byte (by path and digest)."""
    before = {r.get("path"): r.get("digest") for r in old}
    now = {r["path"]: r.get("digest") for r in new}
    both = before.keys() & now.keys()
    same = sum(1 for p in both if now[p] is not None and before[p] == now[p])
    counts = {
        "identical": same,
        "changed": len(both) - same,
        "only_baseline": len(before.keys() - now.keys()),
        "only_now": len(now.keys() - before.keys()),
    }
    if before and all(d is None for d in before.values()):
        kind = "unknown"
    elif same and same == len(before) == len(now):
        kind = "same"
    else:
        kind = "overlapping" if same else "new"
    return {"relation": kind, **counts}
