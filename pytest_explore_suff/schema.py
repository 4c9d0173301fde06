"""The JSON report's fields, described once: what `document.Report` writes, field by field.

The report is built from plain dicts in several modules (`report`, `compare`,
`gates`, `document`), so no type says what it holds. This table does, and two
things keep it honest: ``docs/gen.py`` writes the reference page
(``docs/reference/json.md``) from it, and ``tests/test_docs.py`` checks it
against the keys and value types of real reports of the bundled examples, so a
field added, renamed or dropped without a row here fails the suite.

A path is dotted keys; ``[]`` is every element of a list; a ``<placeholder>``
stands for the keys of a mapping (``<arm>``: any arm name, ``<bucket>``: the
five bucket keys, ``<family>``: the five occupancy families). Types are JSON
types (``integer`` is also a ``number``); ``|null`` marks a field that can be
null.
"""

from __future__ import annotations

from typing import NamedTuple

from .buckets import KEYS
from .occupancy import FAMILIES
from .report import VERDICTS


class Field(NamedTuple):
    path: str
    type: str
    doc: str


#: What each placeholder may stand for (None: any key).
PLACEHOLDERS: dict[str, tuple[str, ...] | None] = {
    "<arm>": None,
    "<bucket>": KEYS,
    "<family>": FAMILIES,
    "<agent>": None,
    "<model>": None,
}


def _median_range(path: str, what: str, kind: str = "number") -> list[Field]:
    return [
        Field(path, "object", f"{what}: median, 25th percentile, min and max over the arm's transcripts"),
        Field(f"{path}.median", f"{kind}|null", "the median"),
        Field(f"{path}.p25", f"{kind}|null", "the 25th percentile (interpolated between the nearest ranks)"),
        Field(f"{path}.min", f"{kind}|null", "the smallest"),
        Field(f"{path}.max", f"{kind}|null", "the largest"),
    ]


def _truth_share(path: str, what: str, k: str, k_doc: str, n: str, n_doc: str) -> list[Field]:
    return [
        Field(path, "object|null", f"{what}, with its 95% interval clustered by transcript; null when "
              f"there is no {n_doc}"),
        Field(f"{path}.{k}", "integer", k_doc),
        Field(f"{path}.{n}", "integer", n_doc),
        Field(f"{path}.share", "number", f"{k} / {n}"),
        Field(f"{path}.lo", "number", "lower bound of the 95% interval"),
        Field(f"{path}.hi", "number", "upper bound"),
        Field(f"{path}.se", "number", "its cluster-robust standard error"),
        Field(f"{path}.method", "string", "`cluster-wilson` or `wilson`"),
    ]  # fmt: skip


def _truth_aggregate(p: str) -> list[Field]:
    """An arm's (or the pooled) ground-truth figures, only when a truth file is in play."""
    t = f"{p}.truth"
    return [
        Field(t, "object", "the ground truth (only with a truth file: [ground truth](../ground-truth.md))"),
        Field(f"{t}.questions", "integer", "answer units covered by a question"),
        Field(f"{t}.no_question", "integer", "transcripts no question covers"),
        Field(f"{t}.verdicts", "object", "answer units per verdict (the judge's where one gave it)"),
        *(Field(f"{t}.verdicts.{v}", "integer", f"units graded `{v}`") for v in VERDICTS),
        *_truth_share(f"{t}.correct_share", "pass / (pass + partial + fail)", "pass", "units that passed",
                      "judged", "unit graded pass, partial or fail"),
        *_truth_share(f"{t}.false_sufficient", "of the `sufficient` calls in units graded pass, partial or "
                      "fail, the share in failed ones", "fail", "sufficient calls in failed units",
                      "sufficient", "sufficient call in a graded unit"),
        Field(f"{t}.crosstab", "object", "per bucket, the calls in units of each verdict"),
        Field(f"{t}.crosstab.<bucket>", "object", "one bucket's calls by verdict"),
        *(Field(f"{t}.crosstab.<bucket>.{v}", "integer", f"calls in `{v}` units") for v in VERDICTS),
        Field(f"{t}.gold_share", "object", "the share of returned characters on gold files"),
        Field(f"{t}.gold_share.calls", "integer", "covered units' calls with a returned-file section"),
        Field(f"{t}.gold_share.pooled", "number|null", "gold characters over all their characters"),
        Field(f"{t}.gold_share.median", "number|null", "the median call's gold share"),
        Field(f"{t}.gold_recall", "object", "gold recall over the units with a judged explore call"),
        Field(f"{t}.gold_recall.units", "integer", "units with a gold recall"),
        Field(f"{t}.gold_recall.median", "number|null", "the median unit's"),
        Field(f"{t}.gold_recall.full", "number|null", "the share of units with every gold pattern returned"),
        Field(f"{t}.gold_first", "object", "whether the first judged explore returned a gold file"),
        Field(f"{t}.gold_first.units", "integer", "units with a judged explore call"),
        Field(f"{t}.gold_first.share", "number|null", "the share where it did"),
    ]  # fmt: skip


def _aggregate(p: str) -> list[Field]:
    """The figures of one arm (``arms.<arm>``) or of every arm pooled (``pooled``)."""
    interval = f"{p}.intervals.<bucket>"
    eff = f"{p}.allocation.efficiency"
    occ = f"{p}.occupancy"
    return [
        Field(f"{p}.transcripts", "integer", "classified transcripts (skipped ones only with "
              "`--explore-suff-keep-excluded`)"),
        Field(f"{p}.answered", "integer", "judged explore calls that got an answer"),
        Field(f"{p}.agents", "object", "transcripts per agent (an arm can mix agents)"),
        Field(f"{p}.agents.<agent>", "integer", "this agent's transcripts"),
        Field(f"{p}.counts", "object", "calls per bucket"),
        Field(f"{p}.counts.<bucket>", "integer", "answered calls in this bucket"),
        Field(f"{p}.shares", "object", "each bucket's share of the answered calls"),
        Field(f"{p}.shares.<bucket>", "number", "count / answered (0 when nothing was answered)"),
        Field(f"{p}.intervals", "object", "the 95% interval of each share, transcripts as clusters"),
        Field(interval, "object", "one bucket's interval"),
        Field(f"{interval}.share", "number", "the point estimate"),
        Field(f"{interval}.lo", "number", "lower bound of the 95% interval"),
        Field(f"{interval}.hi", "number", "upper bound of the 95% interval"),
        Field(f"{interval}.se", "number", "standard error, clustered by transcript"),
        Field(f"{interval}.method", "string", "`cluster-wilson`, or `wilson` (plain Wilson over calls) "
              "when there is no spread to measure"),
        Field(f"{p}.sample", "object", "what the calls can detect"),
        Field(f"{p}.sample.design_effect", "number|null", "the sufficient share's cluster-robust variance "
              "over the binomial one (at least 1); null without answered calls"),
        Field(f"{p}.sample.detectable_change", "number|null", "the smallest change of the sufficient "
              "share a comparison with as many calls on the other side detects at 80% power (5%, two-sided)"),
        Field(f"{p}.sample.calls_for_10_points", "integer|null", "answered calls a side needs to detect "
              "a 10-point change so"),
        Field(f"{p}.figures", "object", "run figures: medians over the transcripts' runs"),
        Field(f"{p}.figures.explore_calls", "number|null", "calls of the judged tool"),
        Field(f"{p}.figures.read_calls", "number|null", "file reads (Read and each agent's equivalent)"),
        Field(f"{p}.figures.search_calls", "number|null", "searches (Grep, Glob and equivalents)"),
        Field(f"{p}.figures.bash_calls", "number|null", "shell commands"),
        Field(f"{p}.figures.other_calls", "number|null", "every other tool call"),
        Field(f"{p}.figures.turns", "number|null", "turns, from the runs' `result` events"),
        Field(f"{p}.figures.duration_ms", "number|null", "duration of a run in milliseconds"),
        Field(f"{p}.figures.cost_usd", "number|null", "cost of a run in USD (Claude Code logs only)"),
        Field(f"{p}.figures.tokens", "number|null", "tokens of a run (Codex and Gemini logs); only "
              "present when some transcript of the arm records them"),
        Field(f"{p}.errored", "integer", "explore calls with an error or no answer: counted, not bucketed"),
        Field(f"{p}.concurrent", "integer", "file accesses issued in the same message as an explore"),
        Field(f"{p}.allocation", "object|null", "allocation efficiency; null when no transcript has "
              "an explore response with a returned-file section"),
        Field(f"{p}.allocation.transcripts", "integer", "transcripts with an allocation figure"),
        Field(f"{p}.allocation.calls", "integer", "explore responses with a returned-file section"),
        Field(f"{p}.allocation.envelope", "integer", "characters of returned-file sections, summed"),
        Field(f"{p}.allocation.used", "integer", "of those, characters on files the answer cites"),
        Field(f"{p}.allocation.used_path", "integer", "of those, characters on files cited by path"),
        Field(eff, "object", "pooled efficiency (used / envelope) with its 95% interval"),
        Field(f"{eff}.share", "number", "the pooled efficiency"),
        Field(f"{eff}.lo", "number", "lower bound of the 95% interval"),
        Field(f"{eff}.hi", "number", "upper bound of the 95% interval"),
        Field(f"{eff}.se", "number", "standard error, clustered by transcript"),
        Field(f"{eff}.clusters", "integer", "transcripts in the estimate"),
        Field(f"{eff}.method", "string", "`cluster-normal`, or `none` with fewer than two transcripts "
              "(the interval is then [0, 1])"),
        Field(f"{p}.allocation.efficiency_path", "number", "the path-cited floor: used_path / envelope"),
        *_median_range(f"{p}.allocation.per_run", "per-transcript efficiency"),
        Field(f"{p}.allocation.no_answer", "integer", "transcripts with no final answer (all uncited)"),
        Field(occ, "object|null", "residual context occupancy; null when no transcript has token counts"),
        Field(f"{occ}.transcripts", "integer", "transcripts with an occupancy figure"),
        *_median_range(f"{occ}.ctx_final", "tokens of the last request's prompt"),
        *_median_range(f"{occ}.residual_tool", "tokens the judged tool's results still hold at the end"),
        *_median_range(f"{occ}.residual_file_access", "tokens read, search and shell results still hold"),
        *_median_range(f"{occ}.residual_retrieval", "tool + file access"),
        *_median_range(f"{occ}.share", "retrieval residual / final context"),
        Field(f"{occ}.ctx_base", "number|null", "median tokens of the first request's prompt"),
        Field(f"{occ}.estimated", "integer", "of those, transcripts whose occupancy is estimated (M10): "
              "the arm tables mark the figures with `~`"),
        *_truth_aggregate(p),
        *_table(p),
    ]


def _repeats(p: str) -> list[Field]:
    """An arm's repeats (`repeats.repeats`), only when one of its questions ran twice."""
    out = [
        Field(p, "object", "only when a question (a group, or a truth file's question) has two runs or more "
              "in the arm: how consistently its runs pass (see [comparing](../comparing.md#repeats))"),
    ]  # fmt: skip
    for key, what, rule in (
        ("sufficient", "on sufficiency", "every answered explore call of the run is sufficient"),
        ("correct", "on correctness (with a truth file)", "the answer's verdict is `pass`"),
    ):
        s = f"{p}.{key}"
        out += [
            Field(s, "object|null", f"{what}: a run passes when {rule}; null when no question has two "
                  "such runs"),
            Field(f"{s}.questions", "integer", "questions with two runs or more"),
            Field(f"{s}.k", "integer", "the fewest runs of those questions: the k of pass^k"),
            Field(f"{s}.k_max", "integer", "the most runs of one question"),
            Field(f"{s}.pass_k", "number", "mean over the questions of pass^k: the chance that k fresh runs "
                  "of a question all pass (C(passed, k) / C(runs, k) each)"),
            Field(f"{s}.pass_1", "number", "mean over the questions of the share of runs that pass"),
            Field(f"{s}.disagree", "integer", "questions whose runs do not all pass or all fail"),
        ]  # fmt: skip
    q = f"{p}.questions"
    out += [
        Field(f"{p}.sufficient.sd", "number", "the per-run sufficient share's standard deviation between "
              "runs of one question, pooled over the questions"),
        Field(q, "array", "each question with two runs or more, sorted by `by` and name"),
        Field(f"{q}[].question", "string", "the group, or the truth file's question id"),
        Field(f"{q}[].by", "string", "`group` (transcripts no question covers) or `truth` (answer units)"),
        Field(f"{q}[].runs", "integer", "its runs (transcripts, or answer units)"),
        Field(f"{q}[].sufficient", "object|null", "on sufficiency; null with fewer than two runs that "
              "answered an explore call"),
        Field(f"{q}[].sufficient.runs", "integer", "runs with an answered explore call"),
        Field(f"{q}[].sufficient.passed", "integer", "of those, runs whose every answered call is "
              "sufficient"),
        Field(f"{q}[].sufficient.share", "number", "sufficient calls over answered calls, its runs pooled"),
        Field(f"{q}[].sufficient.pass_k", "number", "C(passed, k) / C(runs, k), k the arm's"),
        Field(f"{q}[].sufficient.sd", "number", "standard deviation of the per-run sufficient share"),
        Field(f"{q}[].sufficient.disagree", "boolean", "some runs pass and some do not"),
        Field(f"{q}[].correct", "object|null", "on correctness; null with fewer than two judged runs "
              "(pass, partial or fail)"),
        Field(f"{q}[].correct.runs", "integer", "judged runs"),
        Field(f"{q}[].correct.passed", "integer", "of those, runs whose verdict is `pass`"),
        Field(f"{q}[].correct.pass_k", "number", "C(passed, k) / C(runs, k), k the arm's"),
        Field(f"{q}[].correct.disagree", "boolean", "some runs pass and some do not"),
    ]  # fmt: skip
    return out


def _row(path: str, what: str) -> list[Field]:
    return [*_median_range(path, what), Field(f"{path}.runs", "integer", "transcripts that have the figure")]


#: The per-run rows of the arm table (`report.TABLE_ROWS`) and what they count.
_ROWS = {
    "duration_s": "duration of a run in seconds (the runs' `result` events, or the log's first and "
    "last time)",
    "tool_calls": "tool calls of every thread (ToolSearch left out)",
    "read": "file reads (Read, NotebookRead and each agent's equivalent)",
    "search": "searches (Grep, Glob and equivalents)",
    "bash": "shell commands",
    "retrieval": "calls of the judged tool",
    "tokens_processed": "tokens processed (every request's prompt and output; where cost is absent)",
    "cost_usd": "cost of a run in USD (Claude Code logs)",
}


def _table(p: str) -> list[Field]:
    """The arm table of one arm, or pooled (`report.table_summary`, see docs/rules.md)."""
    rf, d, ab, c = f"{p}.run_figures", f"{p}.duplicate", f"{p}.abandon", f"{p}.cost"
    return [
        Field(rf, "object", "the harness's arm table: runs and their behaviour"),
        Field(f"{rf}.runs", "integer", "judged runs, the excluded (raced, contaminated) ones too"),
        Field(f"{rf}.non_success", "integer", "of them, runs whose log says they did not end in success"),
        Field(f"{rf}.success_unknown", "integer", "of them, runs whose log does not say (no `result` event)"),
        Field(f"{rf}.raced", "integer", "of them, MCP cold-start races"),
        Field(f"{rf}.contaminated", "integer", "of them, runs that reached the tool through its CLI"),
        Field(f"{rf}.cli_returned", "integer", "CLI calls of the tool family that returned output"),
        Field(f"{rf}.cli_blocked", "integer", "CLI attempts that returned an error or nothing"),
        *(f for name, what in _ROWS.items() for f in _row(f"{rf}.{name}", what)),
        Field(d, "object|null", "duplicate residual: what a judged call returned that an earlier one "
              "had returned of the same file; null when no transcript has a section"),
        Field(f"{d}.transcripts", "integer", "transcripts with a section"),
        Field(f"{d}.envelope", "integer", "characters of every section"),
        Field(f"{d}.duplicate_chars", "integer", "of those, characters of duplicate source lines"),
        Field(f"{d}.duplicate_share", "object", "pooled duplicate_chars / envelope with its 95% interval "
              "(transcripts as clusters)"),
        Field(f"{d}.duplicate_share.share", "number", "the pooled share"),
        Field(f"{d}.duplicate_share.lo", "number", "lower bound of the 95% interval"),
        Field(f"{d}.duplicate_share.hi", "number", "upper bound of the 95% interval"),
        Field(f"{d}.duplicate_share.se", "number", "standard error, clustered by transcript"),
        Field(f"{d}.duplicate_share.clusters", "integer", "transcripts in the estimate"),
        Field(f"{d}.duplicate_share.method", "string", "`cluster-normal`, or `none` with fewer than two"),
        *_median_range(f"{d}.per_run", "per-transcript duplicate share"),
        Field(ab, "object", "abandonment and the tool's errors"),
        Field(f"{ab}.abandoned", "integer", "transcripts that abandoned the tool"),
        Field(f"{ab}.runs", "integer", "transcripts with a judged call (where abandonment is defined)"),
        Field(f"{ab}.abandon_share", "number|null", "abandoned / runs"),
        Field(f"{ab}.errored_retrieval_runs", "integer", "transcripts with an errored response of the tool"),
        Field(f"{ab}.last_call_retrieval", "integer", "transcripts whose main thread's last tool call "
              "was the judged tool"),
        Field(f"{ab}.last_call_runs", "integer", "transcripts with a tool call on the main thread"),
        Field(f"{ab}.last_call_retrieval_share", "number|null", "last_call_retrieval / last_call_runs"),
        Field(c, "object", "cost and tokens, split between the main thread and subagents"),
        *(
            f
            for name, what in (
                ("cost_usd", "cost of a run in USD"),
                ("main_usd", "of it, the main thread's (null where a model served both sides)"),
                ("subagents_usd", "of it, the subagents'"),
                ("tokens_main", "tokens the main thread's requests processed"),
                ("tokens_subagents", "tokens the subagents' requests processed"),
            )
            for f in (*_row(f"{c}.{name}", what), Field(f"{c}.{name}.total", "number|null", "the sum"))
        ),
        Field(f"{c}.by_model", "object", "cost per model, where the log says (Claude Code's "
              "`result.modelUsage`)"),
        Field(f"{c}.by_model.<model>", "object", "one model"),
        Field(f"{c}.by_model.<model>.runs", "integer", "runs that name it"),
        Field(f"{c}.by_model.<model>.cost_usd", "number", "its cost, summed"),
        *_row(f"{c}.cache_read_share", "per-run share of input tokens that were cache reads"),
        Field(f"{c}.cache_read_share.pooled", "number|null", "cache reads over input tokens, pooled"),
    ]


_T = "transcripts[]"
_A = f"{_T}.allocation"
_O = f"{_T}.occupancy"

#: Every field of the report, in the order it is written.
FIELDS: tuple[Field, ...] = (
    Field("schema", "string", "`pytest-explore-suff/3`; bumped on incompatible changes"),
    Field("plugin_version", "string", "the plugin's version"),
    Field("run", "object|null", "a saved run (`--explore-suff-save`): `number`, `name`, `commit`, `time`; "
          "null when the run is not saved (see [saved runs](../history.md))"),
    Field("campaign", "string", "the campaign folder or archive, as given"),
    Field("fingerprint", "object", "what the report's figures were derived from, byte for byte"),
    Field("fingerprint.algorithm", "string", "the digest's algorithm"),
    Field("fingerprint.campaign", "string|null", "one digest of every transcript's path and digest"),
    Field("fingerprint.transcripts", "integer", "transcripts in the report"),
    Field("fingerprint.without_digest", "integer", "transcripts with no digest (not read to their end)"),
    Field("truth", "object", "the truth file the answers were graded against (only with one: "
          "`--explore-suff-truth`, or the campaign's `explore-suff-truth.toml`)"),
    Field("truth.path", "string", "the file, as given (or the campaign's own)"),
    Field("truth.digest", "string", "a digest of its bytes: a saved run graded against another says so"),
    Field("truth.algorithm", "string", "the digest's algorithm"),
    Field("truth.questions", "integer", "its questions"),
    Field("truth.found", "boolean", "it is the campaign's own, not named by the option"),
    Field("options", "object", "the options that shaped the verdicts and the gates"),
    Field("options.tool", "string", "`--explore-suff-tool`"),
    Field("options.family", "string", "`--explore-suff-family`"),
    Field("options.marker", "string", "`--explore-suff-marker`"),
    Field("options.pattern", "string|null", "`--explore-suff-pattern`"),
    Field("options.keep_excluded", "boolean", "`--explore-suff-keep-excluded`"),
    Field("options.gate_on", "string", "`point` or `bound` (`--explore-suff-gate-on`)"),
    Field("options.correction", "string", "`holm` or `none` (`--explore-suff-correction`): how the gates "
          "decided on intervals are decided together"),
    Field("coverage", "object", "what the report covers: the whole campaign, or part of it"),
    Field("coverage.complete", "boolean", "every collected transcript ran"),
    Field("coverage.collected", "integer", "transcripts collected"),
    Field("coverage.ran", "integer", "transcripts that ran"),
    Field("coverage.interrupted", "boolean", "the run was interrupted (Ctrl-C)"),
    Field("coverage.stopped", "string", "why the run stopped early (`-x`, `--maxfail`), else empty"),
    Field("coverage.why", "array", "one phrase per reason the run is partial"),
    Field("coverage.why[]", "string", "e.g. `2 deselected (-k, -m, --lf, --sw, shards)`"),
    Field("coverage.not_run", "array", "each collected transcript that did not run, in path order"),
    Field("coverage.not_run[].path", "string", "its path"),
    Field("coverage.not_run[].why", "string", "`deselected` or `not run`"),
    Field("merge", "object|null", "a merge of partial reports: the transcripts more than one part judged "
          "(`overlap`); null for a run, and for a clean merge (see [shards](../history.md))"),
    Field("arms", "object", "per arm, sorted by name: classified transcripts only"),
    Field("arms.<arm>", "object", "one arm's figures"),
    *_aggregate("arms.<arm>"),
    *_repeats("arms.<arm>.repeats"),
    Field("pooled", "object", "the same figures over every arm together"),
    *_aggregate("pooled"),
    Field("comparison", "object|null", "arm against arm on the buckets; null without a pair of arms "
          "that both answered"),
    Field("comparison.a", "string", "the first arm"),
    Field("comparison.b", "string", "the second arm (the reference)"),
    Field("comparison.paired", "boolean", "the difference is stratified by group"),
    Field("comparison.n_a", "integer", "answered calls of a"),
    Field("comparison.n_b", "integer", "answered calls of b"),
    Field("comparison.buckets", "object", "per bucket"),
    Field("comparison.buckets.<bucket>", "object", "one bucket, a against b"),
    Field("comparison.buckets.<bucket>.a", "number", "a's share"),
    Field("comparison.buckets.<bucket>.b", "number", "b's share"),
    Field("comparison.buckets.<bucket>.diff", "number", "a - b"),
    Field("comparison.buckets.<bucket>.lo", "number", "lower bound of the difference's 95% interval"),
    Field("comparison.buckets.<bucket>.hi", "number", "upper bound of the difference's 95% interval"),
    Field("comparison.buckets.<bucket>.paired", "boolean", "paired by group"),
    Field("comparison.buckets.<bucket>.groups", "integer", "groups both arms ran"),
    Field("comparison.questions", "array", "per group both arms answered in: the sufficient share, a "
          "against b, moved first (worse first), then by group"),
    Field("comparison.questions[].group", "string", "the group (question, repository)"),
    Field("comparison.questions[].a", "number", "its share in a"),
    Field("comparison.questions[].b", "number", "its share in b"),
    Field("comparison.questions[].diff", "number", "a - b (the two arms' transcripts are independent)"),
    Field("comparison.questions[].lo", "number", "lower bound of its 95% interval"),
    Field("comparison.questions[].hi", "number", "upper bound"),
    Field("comparison.questions[].p", "number", "two-sided p-value of no difference"),
    Field("comparison.questions[].moved", "boolean", "beyond noise after Holm's step-down over the "
          "groups (5%, two-sided)"),
    Field("metrics_comparison", "object|null", "arm against arm on the other two metrics; null "
          "without a pair of arms"),
    Field("metrics_comparison.a", "string", "the first arm"),
    Field("metrics_comparison.b", "string", "the second arm (the reference)"),
    Field("metrics_comparison.residual", "object", "the retrieval residual, a against b"),
    Field("metrics_comparison.residual.groups", "array", "per group both arms have occupancy in"),
    Field("metrics_comparison.residual.groups[].group", "string", "the group"),
    Field("metrics_comparison.residual.groups[].a", "number", "a's median retrieval residual"),
    Field("metrics_comparison.residual.groups[].b", "number", "b's median retrieval residual"),
    Field("metrics_comparison.residual.groups[].pct", "number|null", "(a - b) / b in percent; null when "
          "b is 0"),
    Field("metrics_comparison.residual.groups[].direction", "string|null", "`higher`, `lower` or `equal`"),
    Field("metrics_comparison.residual.mean_pct", "number|null", "the mean of the groups' pct"),
    Field("metrics_comparison.residual.interval", "object|null", "its 95% interval (two groups or more)"),
    Field("metrics_comparison.residual.interval.lo", "number", "lower bound"),
    Field("metrics_comparison.residual.interval.hi", "number", "upper bound"),
    Field("metrics_comparison.residual.direction", "string|null", "the mean's direction in words"),
    Field("metrics_comparison.residual.agreeing", "integer", "groups whose direction is the mean's"),
    Field("metrics_comparison.residual.compared", "integer", "groups with a pct"),
    Field("metrics_comparison.residual.fixed_overhead", "number|null", "a's median base prompt minus b's"),
    Field("metrics_comparison.allocation", "object|null", "pooled efficiency, when both arms have one"),
    Field("metrics_comparison.allocation.a", "number", "a's pooled efficiency"),
    Field("metrics_comparison.allocation.b", "number", "b's pooled efficiency"),
    Field("metrics_comparison.allocation.diff", "number", "a - b"),
    Field("metrics_comparison.allocation.lo", "number", "lower bound of the difference's 95% interval"),
    Field("metrics_comparison.allocation.hi", "number", "upper bound of the difference's 95% interval"),
    Field("baseline", "object|null", "against `--explore-suff-baseline`; null without one"),
    Field("baseline.report", "string", "the baseline report's path, as given"),
    Field("baseline.campaign", "object", "whether the baseline judged the same bytes"),
    Field("baseline.campaign.relation", "string", "`same`, `overlapping`, `new` or `unknown` (a baseline "
          "without digests)"),
    Field("baseline.campaign.identical", "integer", "transcripts byte-identical in both"),
    Field("baseline.campaign.changed", "integer", "transcripts in both whose bytes differ"),
    Field("baseline.campaign.only_baseline", "integer", "transcripts only the baseline has"),
    Field("baseline.campaign.only_now", "integer", "transcripts only this run has"),
    Field("baseline.truth", "object", "with a truth file: whether the baseline was graded by the same one"),
    Field("baseline.truth.digest", "string|null", "the baseline's truth file's digest (null: it had none)"),
    Field("baseline.truth.same", "boolean", "the same digest as this run's"),
    Field("baseline.options_differ", "array|null", "what the baseline was judged with otherwise than "
          "this run: one `{option, baseline, now}` per option (`tool`, `family`, `marker`, `pattern`, "
          "`keep_excluded`) or `plugin_version` that differs; empty when none does; null when the "
          "baseline does not record its options"),
    Field("baseline.arms", "object", "per arm of either report"),
    Field("baseline.arms.<arm>", "object", "one arm, old against new"),
    Field("baseline.arms.<arm>.n_old", "integer", "answered calls in the baseline"),
    Field("baseline.arms.<arm>.n_new", "integer", "answered calls now"),
    Field("baseline.arms.<arm>.paired", "string|null", "how the changes pair: `transcript` (the "
          "transcripts both hold, by path and digest), `group` (stratified by group), null (unpaired)"),
    Field("baseline.arms.<arm>.questions", "array", "per group both sides answered in: the sufficient "
          "share's change, moved first and worse first"),
    Field("baseline.arms.<arm>.questions[].group", "string", "the group (question, repository)"),
    Field("baseline.arms.<arm>.questions[].old", "number", "its share in the baseline"),
    Field("baseline.arms.<arm>.questions[].new", "number", "its share now"),
    Field("baseline.arms.<arm>.questions[].diff", "number", "new - old (paired by transcript where shared)"),
    Field("baseline.arms.<arm>.questions[].lo", "number", "lower bound of its 95% interval"),
    Field("baseline.arms.<arm>.questions[].hi", "number", "upper bound"),
    Field("baseline.arms.<arm>.questions[].p", "number", "two-sided p-value of no change"),
    Field("baseline.arms.<arm>.questions[].moved", "boolean", "beyond noise after Holm's step-down over "
          "the groups (5%)"),
    Field("baseline.arms.<arm>.buckets", "object", "per bucket"),
    Field("baseline.arms.<arm>.buckets.<bucket>", "object", "one bucket's change"),
    Field("baseline.arms.<arm>.buckets.<bucket>.old", "number|null", "the baseline's share (null: no "
          "answered call on that side)"),
    Field("baseline.arms.<arm>.buckets.<bucket>.new", "number|null", "the share now (null likewise)"),
    Field("baseline.arms.<arm>.buckets.<bucket>.diff", "number|null", "new - old; null when a side has "
          "no share"),
    Field("baseline.arms.<arm>.buckets.<bucket>.lo", "number|null", "lower bound of the change's 95% "
          "interval"),
    Field("baseline.arms.<arm>.buckets.<bucket>.hi", "number|null", "upper bound"),
    Field("baseline.arms.<arm>.buckets.<bucket>.se", "number|null", "the change's standard error (0: the "
          "same transcripts judged alike)"),
    Field("baseline.arms.<arm>.buckets.<bucket>.df", "number|null", "Student's t degrees of freedom of the "
          "interval when its standard error rests on few groups (campaigns of other groups); null: normal"),
    Field("baseline.arms.<arm>.allocation", "object", "pooled allocation efficiency, old and new"),
    Field("baseline.arms.<arm>.allocation.old", "number|null", "in the baseline"),
    Field("baseline.arms.<arm>.allocation.new", "number|null", "now"),
    Field("baseline.arms.<arm>.allocation.diff", "number|null", "new - old (a drop is negative)"),
    Field("baseline.arms.<arm>.allocation.se", "number|null", "its standard error, clustered by "
          "transcript (paired by transcript where both hold one)"),
    Field("baseline.arms.<arm>.allocation.df", "number|null", "as the buckets' `df`"),
    Field("baseline.arms.<arm>.allocation.lo", "number|null", "lower bound of the change's 95% interval"),
    Field("baseline.arms.<arm>.allocation.hi", "number|null", "upper bound"),
    Field("baseline.arms.<arm>.allocation.paired", "string|null", "`transcript` or null (unpaired)"),
    Field("baseline.arms.<arm>.residual", "object", "median retrieval residual, old and new"),
    Field("baseline.arms.<arm>.residual.old", "number|null", "in the baseline"),
    Field("baseline.arms.<arm>.residual.new", "number|null", "now"),
    Field("baseline.arms.<arm>.residual.growth", "number|null", "(new - old) / old; null when old is 0 "
          "or a side has no figure"),
    Field("baseline.arms.<arm>.residual.se", "number|null", "the growth's standard error, by a bootstrap "
          "over transcripts seeded from the figures (null: too few transcripts, or no growth)"),
    Field("baseline.arms.<arm>.residual.paired", "string|null", "`transcript` (resampled together) or null"),
    Field("baseline.arms.<arm>.correct", "object", "the correct share, old and new (only when either "
          "report was graded against a truth file)"),
    Field("baseline.arms.<arm>.correct.old", "number|null", "in the baseline"),
    Field("baseline.arms.<arm>.correct.new", "number|null", "now"),
    Field("baseline.arms.<arm>.correct.diff", "number|null", "new - old"),
    Field("baseline.arms.<arm>.correct.lo", "number|null", "lower bound of the change's 95% interval"),
    Field("baseline.arms.<arm>.correct.hi", "number|null", "upper bound"),
    Field("baseline.arms.<arm>.correct.se", "number|null", "the change's standard error (what the "
          "family correction of `--max-correct-drop` on the bound reads)"),
    Field("trend", "object|null", "the saved runs before this one and this run, per arm and metric "
          "(`--explore-suff-trend`); null without it (see [trends](../history.md)); each of its `runs` "
          "names in `options_differ` the options (and `plugin_version`) it was judged with otherwise "
          "than the latest run (null: not recorded); when some run was graded against a truth file, each "
          "run names its digest in `truth` and each arm has a `correct` metric (its correct share)"),
    Field("gates", "array", "one entry per gate and arm"),
    Field("gates[].arm", "string|null", "the arm (null: a gate that applies to no arm)"),
    Field("gates[].metric", "string", "a bucket key, `allocation`, `residual_share`, `residual`, "
          "`duplicate_share`, a truth figure, a run figure (`read`, `duration`, `cost`), or "
          "`control.<metric>` (a control group's line)"),
    Field("gates[].op", "string", "`min`, `max`, `min_calls`, `max_drop`, `max_growth`, `max_increase`, "
          "`max_rel_increase`, `control` or `trend`"),
    Field("gates[].threshold", "number", "the threshold given"),
    Field("gates[].value", "number|null", "the figure compared (null: none)"),
    Field("gates[].n", "integer", "the sample it rests on (answered calls, or transcripts)"),
    Field("gates[].on", "string", "`point` or `bound`"),
    Field("gates[].bound", "number|null", "the interval's bound compared, with `bound`"),
    Field("gates[].passed", "boolean|null", "true, false, or null: not applicable (fails the run)"),
    Field("gates[].against", "string", "the trend gate: what it compared with (the earlier runs pooled); "
          "a run gate: the arm whose median it compared with (the baseline's, or the other arm)"),
    Field("gates[].figure", "string", "a run gate: the per-run figure compared (`read`, `duration_s`, "
          "`cost_usd`, or `tokens_processed` where a side has no cost)"),
    Field("gates[].words", "string", "a run gate: the figure in words, as its line says it"),
    Field("gates[].old", "number|null", "a run gate: the reference's median; a control line: the "
          "baseline's figure"),
    Field("gates[].new", "number|null", "a run gate: the arm's median; a control line: this run's figure"),
    Field("gates[].groups", "array", "a control line: the control groups (`--explore-suff-control`)"),
    Field("gates[].groups[]", "string", "a group"),
    Field("gates[].control_metric", "string", "a control line: its metric (a bucket key, `allocation`, "
          "`duplicate`, `residual`, or a per-run figure's mean)"),
    Field("gates[].lo", "number", "a two-sided member (a control line): the change's interval at the "
          "level it was tested at, its low end"),
    Field("gates[].hi", "number", "a two-sided member: the interval's high end"),
    Field("gates[].se", "number", "a member of the family of checks (decided on an interval, failing "
          "on evidence): the value's standard error"),
    Field("gates[].df", "number|null", "a member: Student's t degrees of freedom (null: the normal)"),
    Field("gates[].worse", "integer", "a member: 1 when a higher value is worse, -1 when a lower one is"),
    Field("gates[].sides", "integer", "a member: 1, or 2 for a two-sided check"),
    Field("gates[].p", "number", "a member: the p-value of \"no worse than the threshold\""),
    Field("gates[].level", "number", "a member: the level p was tested at (0.025 alone, less under Holm)"),
    Field("family", "object", "the gates decided on intervals, decided together (see "
          "[comparing](../comparing.md#the-false-alarm-rate-of-the-gate-set))"),
    Field("family.method", "string", "`holm` or `none`"),
    Field("family.checks", "integer", "how many checks were made"),
    Field("family.alpha", "number", "each check's one-sided level alone (0.025: a 95% interval's bound)"),
    Field("family.error_rate", "number", "the chance, at most, that any check fails when nothing is worse"),
    Field("family.failed", "integer", "the checks that failed"),
    Field("transcripts", "array", "one record per transcript that ran, in path order"),
    Field(f"{_T}.path", "string", "relative to the campaign, `/` separators"),
    Field(f"{_T}.files", "array", "every file read for it: turn files, subagent files, child rollouts"),
    Field(f"{_T}.files[]", "string", "a file, relative to the campaign"),
    Field(f"{_T}.arm", "string", "its arm"),
    Field(f"{_T}.group", "string", "its group (the repository, usually)"),
    Field(f"{_T}.run", "string", "its run label (may be empty)"),
    Field(f"{_T}.kind", "string", "the reader's name: `stream-json`, `interactive`, `codex`, `gemini`, "
          "`qwen`, `copilot`, or a reader plug-in's"),
    Field(f"{_T}.agent", "string", "the agent that wrote it: `claude`, `codex`, `gemini`, `qwen`, "
          "`copilot`, or a reader plug-in's"),
    Field(f"{_T}.status", "string", "`classified`, `skipped` (raced or contaminated) or `error`"),
    Field(f"{_T}.reason", "string", "why skipped or failed; empty otherwise"),
    Field(f"{_T}.flags", "object", "exclusion flags"),
    Field(f"{_T}.flags.raced", "boolean", "a family call was answered `No such tool available`"),
    Field(f"{_T}.flags.contaminated", "boolean", "the run used the family's CLI through the shell"),
    Field(f"{_T}.counts", "object", "calls per bucket"),
    Field(f"{_T}.counts.<bucket>", "integer", "answered calls in this bucket"),
    Field(f"{_T}.answered", "integer", "judged calls that got an answer"),
    Field(f"{_T}.errored", "integer", "judged calls with an error or no answer"),
    Field(f"{_T}.concurrent", "integer", "file accesses in an explore's own message"),
    Field(f"{_T}.lines", "integer", "lines read"),
    Field(f"{_T}.corrupt_lines", "integer", "lines that were not JSON objects (skipped)"),
    Field(f"{_T}.digest", "string|null", "a digest of the transcript's bytes as read (null when it was "
          "not read to its end)"),
    Field(f"{_T}.copies", "array", "copied sessions in a Claude Code session log (resumed or forked "
          "into a new file), and where their lines are judged"),
    Field(f"{_T}.copies[].session", "string", "the copied session's id"),
    Field(f"{_T}.copies[].judged_in", "string|null", "the transcript that judges those lines; "
          "null: this one"),
    Field(f"{_T}.copies[].lines", "integer", "copied lines"),
    Field(f"{_T}.copies[].first_line", "integer", "the first copied line's number"),
    Field(f"{_T}.copies[].last_line", "integer", "the last copied line's number"),
    Field(f"{_T}.copies[].calls", "integer", "tool calls among them, judged elsewhere"),
    Field(f"{_T}.warnings", "array", "what went wrong while reading, one line each"),
    Field(f"{_T}.warnings[]", "string", "a warning"),
    Field(f"{_T}.runs", "array", "one entry per run (a `result` event; one for a Codex or Gemini log)"),
    Field(f"{_T}.runs[].subtype", "string|null", "`success`, `error_max_turns`, ..."),
    Field(f"{_T}.runs[].num_turns", "integer|null", "turns"),
    Field(f"{_T}.runs[].duration_ms", "number|null", "duration in milliseconds"),
    Field(f"{_T}.runs[].total_cost_usd", "number|null", "cost in USD"),
    Field(f"{_T}.runs[].is_error", "boolean|null", "the run ended in an error"),
    Field(f"{_T}.runs[].tokens", "integer|null", "tokens (Codex and Gemini logs only)"),
    Field(f"{_T}.tools", "object", "tool calls by notion"),
    Field(f"{_T}.tools.explore", "integer", "calls of the judged tool"),
    Field(f"{_T}.tools.read", "integer", "file reads"),
    Field(f"{_T}.tools.search", "integer", "searches"),
    Field(f"{_T}.tools.bash", "integer", "shell commands"),
    Field(f"{_T}.tools.other", "integer", "everything else"),
    Field(f"{_T}.calls", "array", "every judged call, thread by thread (main first)"),
    Field(f"{_T}.calls[].id", "string", "the call's id in the log"),
    Field(f"{_T}.calls[].thread", "string", "`main`, or the id of the call that spawned the subagent"),
    Field(f"{_T}.calls[].query", "string", "what the tool was asked, exactly as logged"),
    Field(f"{_T}.calls[].files", "integer", "distinct files the response returned"),
    Field(f"{_T}.calls[].bucket", "string", "a bucket key (errored calls are counted, not listed)"),
    Field(f"{_T}.calls[].next", "string", "the label of the action that decided the bucket"),
    Field(f"{_T}.calls[].named", "boolean", "a `read_missed` file that the response mentioned"),
    Field(f"{_T}.calls[].truncated", "boolean", "the response was a `<persisted-output>` stub"),
    Field(f"{_T}.calls[].gold_share", "number|null", "with a truth file, on a call of a covered unit: the "
          "share of its sections' characters on the question's gold files (null: no section)"),
    Field(f"{_T}.calls[].incidental_share", "number|null", "the same for its `incidental` files"),
    Field(_A, "object|null", "allocation efficiency; null with `allocation_reason`"),
    Field(f"{_A}.envelope", "integer", "characters of returned-file sections (a file returned twice "
          "counts twice)"),
    Field(f"{_A}.used", "integer", "of those, on files the answer cites"),
    Field(f"{_A}.used_path", "integer", "of those, on files cited by path"),
    Field(f"{_A}.efficiency", "number", "used / envelope"),
    Field(f"{_A}.efficiency_path", "number", "used_path / envelope"),
    Field(f"{_A}.files_returned", "integer", "distinct files returned"),
    Field(f"{_A}.files_used", "integer", "of those, cited"),
    Field(f"{_A}.has_answer", "boolean", "a final answer was found"),
    Field(f"{_A}.calls", "array", "per explore response with a section"),
    Field(f"{_A}.calls[].id", "string", "the call's id"),
    Field(f"{_A}.calls[].envelope", "integer", "characters of its sections"),
    Field(f"{_A}.calls[].used", "integer", "on cited files"),
    Field(f"{_A}.calls[].used_path", "integer", "on files cited by path"),
    Field(f"{_A}.calls[].efficiency", "number", "used / envelope"),
    Field(f"{_A}.calls[].files", "integer", "files in its sections"),
    Field(f"{_A}.calls[].files_used", "integer", "of those, cited"),
    Field(f"{_A}.files", "array", "per returned file, largest first"),
    Field(f"{_A}.files[].path", "string", "the path as returned"),
    Field(f"{_A}.files[].chars", "integer", "characters of its sections, over every call"),
    Field(f"{_A}.files[].calls", "integer", "responses that returned it"),
    Field(f"{_A}.files[].via", "string|null", "`path`, `symbol`, or null: not cited"),
    Field(f"{_A}.files[].symbol", "string|null", "the symbol that credited it (with `via: symbol`)"),
    Field(f"{_T}.allocation_reason", "string", "why `allocation` is null; empty otherwise"),
    Field(_O, "object|null", "residual context occupancy; null with `occupancy_reason`"),
    Field(f"{_O}.ctx_final", "integer", "tokens of the last request's prompt"),
    Field(f"{_O}.ctx_base", "integer", "tokens of the first request's prompt"),
    Field(f"{_O}.chars_per_token", "number", "the ratio calibrated on this transcript"),
    Field(f"{_O}.calibrated", "boolean", "false: no gap to calibrate on, 3.0 assumed"),
    Field(f"{_O}.dispersion", "number|null", "how well the ratio fits the gaps (lower median of the "
          "relative error)"),
    Field(f"{_O}.turns", "integer", "requests"),
    Field(f"{_O}.compactions", "integer", "compaction boundaries"),
    Field(f"{_O}.evicted", "integer", "tokens evicted when the window shed content"),
    Field(f"{_O}.window", "integer", "the nominal window"),
    Field(f"{_O}.residual", "object", "per family: tokens still in the window at the end"),
    Field(f"{_O}.residual.<family>", "integer", "tokens"),
    Field(f"{_O}.contributed", "object", "per family: tokens its results brought in"),
    Field(f"{_O}.contributed.<family>", "integer", "tokens"),
    Field(f"{_O}.chars", "object", "per family: characters of its results"),
    Field(f"{_O}.chars.<family>", "integer", "characters"),
    Field(f"{_O}.results", "object", "per family: how many results"),
    Field(f"{_O}.results.<family>", "integer", "results"),
    Field(f"{_O}.residual_file_access", "integer", "read + search + bash residual"),
    Field(f"{_O}.residual_retrieval", "integer", "tool + file access residual"),
    Field(f"{_O}.share", "number|null", "residual_retrieval / ctx_final; null when ctx_final is 0"),
    Field(f"{_O}.estimated", "boolean", "only in an estimated figure (M10: a log that gives the window "
          "only at the end), always true; `ctx_base` is then the fixed overhead"),
    Field(f"{_T}.occupancy_reason", "string", "why `occupancy` is null; empty otherwise"),
    Field(f"{_T}.tokens_processed", "integer|null", "the `result` events' usage summed; null when none "
          "says"),
    Field(f"{_T}.run_figures", "object|null", "the arm table's figures of this run (null: not judged); "
          "a figure the log lacks is null"),
    Field(f"{_T}.run_figures.success", "boolean|null", "every run ended in success; null: the log does "
          "not say"),
    Field(f"{_T}.run_figures.duration_s", "number|null", "seconds"),
    Field(f"{_T}.run_figures.tool_calls", "integer", "tool calls of every thread, ToolSearch left out"),
    Field(f"{_T}.run_figures.read", "integer", "file reads"),
    Field(f"{_T}.run_figures.search", "integer", "Grep/Glob and equivalents"),
    Field(f"{_T}.run_figures.bash", "integer", "shell commands"),
    Field(f"{_T}.run_figures.retrieval", "integer", "calls of the judged tool"),
    Field(f"{_T}.run_figures.cli_calls", "integer", "shell commands that invoked the family's CLI"),
    Field(f"{_T}.run_figures.cli_returned", "integer", "of those, the ones that returned output"),
    Field(f"{_T}.run_figures.errored_retrieval", "integer", "calls of the judged tool answered with an "
          "error"),
    Field(f"{_T}.run_figures.tokens_processed", "integer|null", "tokens processed (the runs' usage or "
          "token totals)"),
    Field(f"{_T}.abandoned", "boolean|null", "after its last judged call the main thread made 3 or more "
          "read or search calls and no call of the tool; null: no judged call"),
    Field(f"{_T}.abandon_file_access_after", "integer|null", "the read or search calls it counted"),
    Field(f"{_T}.last_call_retrieval", "boolean|null", "the main thread's last tool call was the judged "
          "tool; null: no tool call"),
    Field(f"{_T}.duplicate", "object|null", "duplicate residual; null with `duplicate_reason`"),
    Field(f"{_T}.duplicate.envelope", "integer", "characters of every section of the judged calls"),
    Field(f"{_T}.duplicate.duplicate_chars", "integer", "characters of duplicate source lines, each + 1"),
    Field(f"{_T}.duplicate.duplicate_lines", "integer", "duplicate source lines"),
    Field(f"{_T}.duplicate.duplicate_share", "number", "duplicate_chars / envelope"),
    Field(f"{_T}.duplicate.calls", "array", "per judged call with a section, in stream order"),
    Field(f"{_T}.duplicate.calls[].id", "string", "the call's id"),
    Field(f"{_T}.duplicate.calls[].envelope", "integer", "characters of its sections"),
    Field(f"{_T}.duplicate.calls[].duplicate_chars", "integer", "of those, of duplicate lines"),
    Field(f"{_T}.duplicate.calls[].duplicate_lines", "integer", "its duplicate source lines"),
    Field(f"{_T}.duplicate.calls[].duplicate_share", "number", "duplicate_chars / envelope"),
    Field(f"{_T}.duplicate_reason", "string", "why `duplicate` is null; empty otherwise"),
    Field(f"{_T}.cost", "object|null", "cost and tokens, main thread against subagents (null: not judged)"),
    Field(f"{_T}.cost.total_usd", "number|null", "the runs' cost"),
    Field(f"{_T}.cost.main_usd", "number|null", "the main thread's: the whole cost when no subagent made "
          "a request, else the models only main used; null when a model served both"),
    Field(f"{_T}.cost.subagents_usd", "number|null", "the subagents' (likewise)"),
    Field(f"{_T}.cost.by_model", "object|null", "per model, as `result.modelUsage` says (summed over runs)"),
    Field(f"{_T}.cost.by_model.<model>", "object", "one model"),
    Field(f"{_T}.cost.by_model.<model>.input_tokens", "number|null", "`inputTokens`"),
    Field(f"{_T}.cost.by_model.<model>.output_tokens", "number|null", "`outputTokens`"),
    Field(f"{_T}.cost.by_model.<model>.cache_read_tokens", "number|null", "`cacheReadInputTokens`"),
    Field(f"{_T}.cost.by_model.<model>.cache_creation_tokens", "number|null", "`cacheCreationInputTokens`"),
    Field(f"{_T}.cost.by_model.<model>.cost_usd", "number|null", "`costUSD`"),
    Field(f"{_T}.cost.tokens_main", "integer|null", "tokens the main thread's requests processed (input, "
          "cache read, cache creation, output)"),
    Field(f"{_T}.cost.tokens_subagents", "integer|null", "the subagents' requests' likewise"),
    Field(f"{_T}.cost.input_tokens", "integer|null", "input tokens of every request (cache reads included)"),
    Field(f"{_T}.cost.cache_read_tokens", "integer|null", "of them, cache reads"),
    Field(f"{_T}.cost.cache_read_share", "number|null", "cache_read_tokens / input_tokens"),
    Field(f"{_T}.truth", "array", "with a truth file: one entry per answer unit a question covers (empty: "
          "none does)"),
    Field(f"{_T}.truth[].question", "string", "the question's id"),
    Field(f"{_T}.truth[].turn", "integer|null", "the turn it grades (null: the whole transcript)"),
    Field(f"{_T}.truth[].verdict", "string", "`pass`, `partial`, `fail` or `unjudged`, by the rules"),
    Field(f"{_T}.truth[].symbols_hit", "number|null", "symbols found / given (null: none given)"),
    Field(f"{_T}.truth[].gold_recall", "number|null", "the share of gold patterns a judged explore "
          "returned (null: no judged explore, or no gold pattern)"),
    Field(f"{_T}.truth[].gold_first", "boolean|null", "the first judged explore returned a gold file"),
    Field(f"{_T}.truth[].gold_cited", "number|null", "the share of gold patterns the answer cites"),
    Field(f"{_T}.truth[].judge", "object|null", "the judge's verdict (`pytest_explore_suff_judge`); "
          "null: no judge, or no opinion"),
    Field(f"{_T}.truth[].judge.verdict", "string", "`pass`, `partial` or `fail`"),
    Field(f"{_T}.truth[].judge.score", "number|null", "0-100"),
    Field(f"{_T}.truth[].judge.note", "string|null", "the judge's note"),
    Field(f"{_T}.truth[].calls", "array", "the ids of the unit's judged explore calls, in call order"),
    Field(f"{_T}.truth[].calls[]", "string", "a call's id"),
    Field("ignored", "array", "every file of the campaign that is not a transcript's, or was not followed"),
    Field("ignored[].path", "string", "the file (or a folder of such files), relative to the campaign"),
    Field("ignored[].reason", "string", "why"),
)
