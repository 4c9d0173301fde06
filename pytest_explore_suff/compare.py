"""Arm against arm, and this campaign against a saved baseline report."""

from __future__ import annotations

import functools
import json
import math
from collections.abc import Callable, Sequence
from typing import TYPE_CHECKING, Any

from . import stats
from .buckets import KEYS
from .gates import Gate, Outcome, decided_alone
from .report import (
    READABLE_SCHEMAS,
    AllocationColumns,
    Columns,
    arm_columns,
    brief_of,
    clusters,
    metric_summaries,
    truth_brief_of,
    truth_clusters,
)
from .sources import DIGEST

if TYPE_CHECKING:
    from statistics import NormalDist


@functools.cache
def _normal() -> NormalDist:
    # statistics (and the fractions and decimal it imports) only when a figure needs it
    from statistics import NormalDist

    return NormalDist()

SUPPORTED_SCHEMAS = READABLE_SCHEMAS
#: Arm names that mean "the thing we compare against".
REFERENCE_ARMS = frozenset({"baseline", "base", "old", "without", "headless-without", "control"})


class BaselineError(Exception):
    """A baseline report that cannot be used; ``str()`` says why in one line."""


def _by_group(groups: list[str], pairs: list[tuple[int, int]]) -> dict[str, Sequence[tuple[int, int]]]:
    out: dict[str, list[tuple[int, int]]] = {}
    for group, pair in zip(groups, pairs, strict=True):
        out.setdefault(group, []).append(pair)
    return dict(out)


def _answering(records: list[dict[str, Any]], arm: str) -> list[dict[str, Any]]:
    return [r for r in records if r["status"] == "classified" and r["arm"] == arm and r["answered"]]


def arm_pair(arms: dict[str, dict[str, Any]], chosen: Sequence[str] | None) -> tuple[str, str] | None:
    """The two arms to compare: the chosen ones, or the campaign's two arms when it has
    exactly two and both answered (an arm without the tool has no shares to compare)."""
    if chosen:
        return chosen[0], chosen[1]
    if len(arms) == 2 and all(agg["answered"] > 0 for agg in arms.values()):
        # The reference arm second, so the difference reads "new minus old".
        a, b = sorted(arms, key=lambda arm: arm.lower() in REFERENCE_ARMS)
        return a, b
    return None


def metric_pair(arms: dict[str, dict[str, Any]], chosen: Sequence[str] | None) -> tuple[str, str] | None:
    """The two arms the metrics compare: the chosen ones, or the campaign's two arms
    (an arm without the tool counts here: its reads are what the tool's responses
    are weighed against), the reference arm second."""
    if chosen:
        return chosen[0], chosen[1]
    if len(arms) == 2:
        a, b = sorted(arms, key=lambda arm: arm.lower() in REFERENCE_ARMS)
        return a, b
    return None


def _direction(x: float) -> str:
    return "higher" if x > 0 else "lower" if x < 0 else "equal"


def compare_metrics(records: list[dict[str, Any]], a: str, b: str) -> dict[str, Any]:
    """Arm a against arm b on the other two metrics: retrieval residual per group and on
    average (percent, with the direction in words), the fixed overhead, allocation."""
    arms = arm_columns(records)
    return compare_metric_columns(arms.get(a, Columns()), arms.get(b, Columns()), a, b)


def compare_metric_columns(ca: Columns, cb: Columns, a: str, b: str) -> dict[str, Any]:
    """`compare_metrics` of the two arms' columns (`report.arm_columns`)."""

    def read(c: Columns) -> tuple[dict[str, list[float]], list[Any], dict[str, Any] | None]:
        # One pass, each brief unpacked once: the retrieval residuals by group, the base
        # prompts (the median skips the transcripts without one), the allocation.
        by_group: dict[str, list[float]] = {}
        bases: list[Any] = []
        allocation = AllocationColumns()
        for rec in c.recs:
            brief = brief_of(rec)
            if brief[9] is not None:
                by_group.setdefault(rec["group"], []).append(brief[9])
            bases.append(brief[6])
            if brief[0] is not None:
                allocation.add(brief)
        return by_group, bases, allocation.summary()

    (by_a, bases_a, sa), (by_b, bases_b, sb) = read(ca), read(cb)
    groups: list[dict[str, Any]] = []
    for g in sorted(set(by_a) & set(by_b)):
        ma, mb = stats.median(by_a[g]), stats.median(by_b[g])
        assert ma is not None and mb is not None
        pct = (ma - mb) / mb * 100 if mb > 0 else None
        groups.append({"group": g, "a": ma, "b": mb, "pct": pct,
                       "direction": None if pct is None else _direction(pct)})  # fmt: skip
    pcts = [x["pct"] for x in groups if x["pct"] is not None]
    mean = sum(pcts) / len(pcts) if pcts else None
    interval = None
    if len(pcts) >= 2 and mean is not None:
        sd = (sum((x - mean) ** 2 for x in pcts) / (len(pcts) - 1)) ** 0.5
        half = stats.Z95 * sd / len(pcts) ** 0.5
        # A residual cannot fall by more than all of it: no group's change is below -100%.
        interval = {"lo": max(-100.0, mean - half), "hi": mean + half}
    agreeing = 0 if mean is None else sum(1 for x in pcts if _direction(x) == _direction(mean))
    base_a, base_b = stats.median(bases_a), stats.median(bases_b)
    residual = {
        "groups": groups,
        "mean_pct": mean,
        "interval": interval,
        "direction": None if mean is None else _direction(mean),
        "agreeing": agreeing,
        "compared": len(pcts),
        "fixed_overhead": None if base_a is None or base_b is None else base_a - base_b,
    }
    allocation = None
    if sa is not None and sb is not None:
        ea, eb = sa["efficiency"], sb["efficiency"]
        d = ea["share"] - eb["share"]
        half = stats.Z95 * (ea["se"] ** 2 + eb["se"] ** 2) ** 0.5
        allocation = {"a": ea["share"], "b": eb["share"], "diff": d,
                      "lo": max(-1.0, d - half), "hi": min(1.0, d + half)}  # fmt: skip
    return {"a": a, "b": b, "residual": residual, "allocation": allocation}


def compare_arms(records: list[dict[str, Any]], a: str, b: str) -> dict[str, Any]:
    """Each bucket's share in a and b and the difference a - b with its 95% interval.

    Paired by group (stratified) when both arms answered in the same groups.
    """
    arms = arm_columns(records)
    return compare_arm_columns(arms.get(a, Columns()), arms.get(b, Columns()), a, b)


def compare_arm_columns(ca: Columns, cb: Columns, a: str, b: str) -> dict[str, Any]:
    """`compare_arms` of the two arms' columns (`report.arm_columns`)."""
    ra, rb = ca.where_answered(), cb.where_answered()
    groups_a, groups_b = [r["group"] for r in ra.recs], [r["group"] for r in rb.recs]
    paired = bool(ra.answered) and set(groups_a) == set(groups_b)
    buckets: dict[str, Any] = {}
    for key in KEYS:
        diff = None
        if paired:
            diff = stats.paired_difference(
                _by_group(groups_a, ra.clusters(key)), _by_group(groups_b, rb.clusters(key))
            )
        if diff is None:
            diff = stats.difference(stats.share(ra.clusters(key)), stats.share(rb.clusters(key)))
        buckets[key] = diff.to_dict()
    # Per group both answered in, a against b (#38): the groups whose sufficient share differs
    # beyond noise between the arms, Holm over the groups, as against a baseline.
    questions = [
        {"group": q["group"], "a": q["new"], "b": q["old"], "diff": q["diff"], "lo": q["lo"], "hi": q["hi"],
         "p": q["p"], "moved": q["moved"]}
        for q in (_question_changes(rb.recs, ra.recs) if ra.answered and rb.answered else [])
    ]  # fmt: skip
    return {"a": a, "b": b, "paired": paired, "n_a": sum(ra.answered), "n_b": sum(rb.answered),
            "buckets": buckets, "questions": questions}  # fmt: skip


#: The options that shape a transcript's verdicts, as a report's ``options`` records them,
#: and the plugin's version: what a baseline (or a run of a trend) was judged with.
JUDGING = ("tool", "family", "marker", "pattern", "keep_excluded")
#: How the terminal names each: the option (the plugin's version is no option).
JUDGING_NAMES = {"tool": "--explore-suff-tool", "family": "--explore-suff-family",
                 "marker": "--explore-suff-marker", "pattern": "--explore-suff-pattern",
                 "keep_excluded": "--explore-suff-keep-excluded",
                 "plugin_version": "the plugin's version"}  # fmt: skip


def judged_with(doc: dict[str, Any]) -> dict[str, Any] | None:
    """What a report was judged with (`JUDGING` and ``plugin_version``); None when it does not
    record its options (schema 1)."""
    options = doc.get("options")
    if not isinstance(options, dict):
        return None
    return {**{k: options.get(k) for k in JUDGING}, "plugin_version": doc.get("plugin_version")}


def options_differ(old: dict[str, Any] | None, new: dict[str, Any]) -> list[dict[str, Any]] | None:
    """Each of `JUDGING` (and the plugin's version) that ``old`` was judged with otherwise
    than ``new``: ``{"option", "baseline", "now"}``; None when ``old`` is not known."""
    if old is None:
        return None
    return [{"option": k, "baseline": old.get(k), "now": new.get(k)} for k in new if old.get(k) != new.get(k)]


def differences_text(diffs: Sequence[dict[str, Any]]) -> str:
    """``--explore-suff-tool 'a' in the baseline, 'b' now; ...``."""
    return "; ".join(f"{JUDGING_NAMES.get(d['option'], d['option'])} {d['baseline']!r} in the baseline, "
                     f"{d['now']!r} now" for d in diffs)  # fmt: skip


def load_baseline(path: str) -> list[dict[str, Any]]:
    """The transcript records of a saved report; raises BaselineError."""
    return read_baseline(path)[0]


def read_baseline(path: str) -> tuple[list[dict[str, Any]], dict[str, Any] | None]:
    """The transcript records of a saved report and what it was judged with (`judged_with`);
    raises BaselineError."""
    try:
        with open(path, encoding="utf-8") as fh:
            doc = json.load(fh)
    except FileNotFoundError:
        raise BaselineError(f"baseline report {path} does not exist") from None
    except (OSError, ValueError, RecursionError) as exc:
        raise BaselineError(f"baseline report {path} is not readable JSON: {exc}") from None
    schema = doc.get("schema") if isinstance(doc, dict) else None
    if schema not in SUPPORTED_SCHEMAS:
        raise BaselineError(
            f"baseline report {path} has schema {schema!r}; this version reads {', '.join(SUPPORTED_SCHEMAS)}"
        )
    coverage = doc.get("coverage")
    if not isinstance(coverage, dict) or "complete" not in coverage:
        raise BaselineError(
            f"baseline report {path} does not say whether it covers its whole campaign "
            "(written by an older version): run that campaign again to make a baseline"
        )
    if coverage["complete"] is not True:
        why = coverage.get("why")
        because = f" ({'; '.join(map(str, why))})" if isinstance(why, list) and why else ""
        raise BaselineError(
            f"baseline report {path} covers only part of its campaign{because}: "
            "a baseline must come from a complete run"
        )
    records = doc.get("transcripts")
    if not isinstance(records, list):
        raise BaselineError(f"baseline report {path}: 'transcripts' must be a list")
    for i, rec in enumerate(records):
        where = f"baseline report {path}: transcripts[{i}]"
        if not isinstance(rec, dict):
            raise BaselineError(f"{where} must be an object")
        for key in ("arm", "group", "status"):
            if not isinstance(rec.get(key), str):
                raise BaselineError(f"{where}.{key}: expected a string, got {_shown(rec.get(key))}")
        _count(rec.get("answered"), f"{where}.answered")
        counts = rec.get("counts")
        if not isinstance(counts, dict):
            raise BaselineError(f"{where}.counts: expected an object, got {_shown(counts)}")
        for key in KEYS:
            _count(counts.get(key), f"{where}.counts.{key}")
        _metrics_shape(rec, where)
    fingerprint = doc.get("fingerprint")
    algorithm = fingerprint.get("algorithm") if isinstance(fingerprint, dict) else None
    if algorithm != DIGEST:
        # Digests of another algorithm, or none (schema 2), say nothing of these bytes.
        records = [{**rec, "digest": None} for rec in records]
    return records, judged_with(doc)


def _metrics_shape(rec: dict[str, Any], where: str) -> None:
    """A baseline's metric figures, where it has them, are numbers (schema 1 has none)."""
    for key, fields in (("allocation", ("envelope", "used", "used_path")),
                        ("occupancy", ("ctx_final", "ctx_base", "residual_file_access",
                                       "residual_retrieval"))):  # fmt: skip
        value = rec.get(key)
        if value is None:
            continue
        if not isinstance(value, dict):
            raise BaselineError(f"{where}.{key}: expected an object or null, got {_shown(value)}")
        for name in fields:
            number = value.get(name)
            if not isinstance(number, (int, float)) or isinstance(number, bool):
                raise BaselineError(f"{where}.{key}.{name}: expected a number, got {_shown(number)}")
        if key == "allocation" and not isinstance(value.get("calls"), list):
            calls = _shown(value.get("calls"))
            raise BaselineError(f"{where}.allocation.calls: expected a list, got {calls}")
        if key == "occupancy":
            tool = value.get("residual", {}).get("tool") if isinstance(value.get("residual"), dict) else None
            if not isinstance(tool, (int, float)) or isinstance(tool, bool):
                raise BaselineError(f"{where}.occupancy.residual.tool: expected a number, got {_shown(tool)}")


def _shown(value: Any) -> str:
    return "nothing" if value is None else f"{type(value).__name__} {json.dumps(value)[:40]}"


def _count(value: Any, where: str) -> None:
    if not isinstance(value, int) or isinstance(value, bool) or value < 0:
        raise BaselineError(f"{where}: expected a whole number of calls, got {_shown(value)}")


def compare_baseline(
    old: list[dict[str, Any]], new: list[dict[str, Any]], resample: bool = False
) -> dict[str, Any]:
    """Per arm in either campaign, per bucket: old and new shares and new - old with its interval.

    Paired where the two campaigns allow it (``paired`` says how): by transcript when
    they share transcripts (the same digests: a re-judged campaign, or one that kept
    some runs), so a transcript judged alike adds no noise and a byte-identical baseline
    shows every change as 0 with an interval of width 0; else by group (stratified, as
    arm against arm) when the arm answered in the same groups on both sides; else as
    independent samples. ``resample``: bootstrap the residual's growth (for a
    ``--max-residual-growth`` gate on the bound; a few seconds on a large campaign).
    """
    arms = {r["arm"] for r in (*old, *new) if r["status"] == "classified"}
    out: dict[str, Any] = {}
    for arm in sorted(arms):
        ro, rn = _answering(old, arm), _answering(new, arm)
        n_old, n_new = sum(r["answered"] for r in ro), sum(r["answered"] for r in rn)
        paired = _pairing(ro, rn) if n_old and n_new else None
        buckets: dict[str, dict[str, float | None]] = {}
        for key in KEYS:
            if n_old and n_new:
                d = _bucket_difference(ro, rn, key, paired)
                buckets[key] = {"old": d.b, "new": d.a, "diff": d.diff, "lo": d.lo, "hi": d.hi, "se": d.se,
                                "df": d.df}  # fmt: skip
            else:  # an arm added or renamed: the side with no answered call has no share
                s_new, s_old = stats.share(clusters(rn, key)), stats.share(clusters(ro, key))
                buckets[key] = {"old": s_old.p if n_old else None, "new": s_new.p if n_new else None,
                                "diff": None, "lo": None, "hi": None, "se": None, "df": None}  # fmt: skip
        out[arm] = {"n_old": n_old, "n_new": n_new, "paired": paired, "buckets": buckets,
                    "questions": _question_changes(ro, rn) if n_old and n_new else [],
                    **_metric_changes(old, new, arm, resample)}  # fmt: skip
        correct = _correct_change(old, new, arm)
        if correct is not None:  # only when either side was graded against a truth file
            out[arm]["correct"] = correct
    return out


def _correct_change(old: list[dict[str, Any]], new: list[dict[str, Any]], arm: str) -> dict[str, Any] | None:
    """The arm's correct share, old and new, and new - old with its standard error and 95%
    interval, each side clustered by transcript (None when neither report was graded
    against a truth file)."""
    ro = [r for r in old if r["status"] == "classified" and r["arm"] == arm]
    rn = [r for r in new if r["status"] == "classified" and r["arm"] == arm]
    if all(truth_brief_of(r) is None for r in (*ro, *rn)):
        return None
    so, sn = stats.share(truth_clusters(ro)[0]), stats.share(truth_clusters(rn)[0])
    if so.n and sn.n:
        d = stats.difference(sn, so)
        return {"old": d.b, "new": d.a, "diff": d.diff, "lo": d.lo, "hi": d.hi, "se": d.se}
    return {"old": so.p if so.n else None, "new": sn.p if sn.n else None,
            "diff": None, "lo": None, "hi": None, "se": None}  # fmt: skip


def _question_changes(ro: Sequence[Any], rn: Sequence[Any]) -> list[dict[str, Any]]:
    """Per group (question) both sides answered in: the sufficient share's change, paired by
    transcript where they share transcripts, with its two-sided p-value; ``moved`` when beyond
    noise after Holm's step-down over the groups (5%, two-sided), so that with many groups an
    unchanged one is listed no more often than one campaign in twenty. Moved first, worse first."""
    groups = sorted({r["group"] for r in ro} & {r["group"] for r in rn})
    rows = []
    for g in groups:
        go, gn = [r for r in ro if r["group"] == g], [r for r in rn if r["group"] == g]
        how = _pairing(go, gn)
        d = _bucket_difference(go, gn, "sufficient", how if how == "transcript" else None)
        p = 2 * (1 - _normal().cdf(abs(d.diff) / d.se)) if d.se > 0 else 1.0 if d.diff == 0 else 0.0
        rows.append({"group": g, "old": d.b, "new": d.a, "diff": d.diff, "lo": d.lo, "hi": d.hi, "p": p,
                     "moved": False})  # fmt: skip
    ranked = sorted(range(len(rows)), key=lambda i: rows[i]["p"])
    for rank, i in enumerate(ranked):
        if rows[i]["p"] > 0.05 / (len(rows) - rank):
            break
        rows[i]["moved"] = True
    return sorted(rows, key=lambda r: (not r["moved"], r["diff"], r["group"]))


def _pairing(ro: list[dict[str, Any]], rn: list[dict[str, Any]]) -> str | None:
    """How an arm's old and new transcripts pair: "transcript" (they share digests), "group"
    (the same groups on both sides), or None (independent samples)."""
    if {_transcript(r, -1) for r in ro} & {_transcript(r, -2) for r in rn}:
        return "transcript"
    if {r["group"] for r in ro} == {r["group"] for r in rn}:
        return "group"
    return None


def _transcript(rec: dict[str, Any], i: int) -> tuple[Any, ...]:
    """What pairs a transcript with the baseline's: its path and the digest of its bytes (the
    same transcript, byte for byte; ``i`` keeps one without a digest apart from any other)."""
    digest = rec.get("digest")
    return (rec["path"], digest) if digest is not None else ("no digest", rec["path"], i)


def _by_digest(recs: list[dict[str, Any]], key: str) -> dict[Any, tuple[int, int]]:
    """(calls in ``key``, answered calls) per transcript (`_transcript`)."""
    out: dict[Any, tuple[int, int]] = {}
    for i, r in enumerate(recs):
        d = _transcript(r, i)
        k, n = out.get(d, (0, 0))
        out[d] = (k + r["counts"][key], n + r["answered"])
    return out


def _bucket_difference(
    ro: list[dict[str, Any]], rn: list[dict[str, Any]], key: str, paired: str | None
) -> stats.Difference:
    """new - old of one bucket's share, paired as `_pairing` says."""
    if paired == "transcript":
        dn, do = _by_digest(rn, key), _by_digest(ro, key)
        m = stats.matched_difference(dn, do)
        # A standard error of 0 is exact only when every transcript is on both sides, judged
        # alike; other transcripts at a share of 0 or 1 show no spread that could be measured.
        if m is not None and (m[3] > 0 or dn == do):
            p_new, p_old, d, se = m
            half = stats.Z95 * se
            return stats.Difference(p_new, p_old, d, max(-1.0, d - half), min(1.0, d + half), True, 0, se)
    if paired in ("transcript", "group"):
        diff = stats.paired_difference(
            _by_group([r["group"] for r in rn], clusters(rn, key)),
            _by_group([r["group"] for r in ro], clusters(ro, key)),
        )
        if diff is not None and paired == "group":
            return diff
    return _widened(stats.difference(stats.share(clusters(rn, key)), stats.share(clusters(ro, key))),
                    _by_group_sums(rn, lambda r: (r["counts"][key], r["answered"])),
                    _by_group_sums(ro, lambda r: (r["counts"][key], r["answered"])))  # fmt: skip


def _by_group_sums(recs: list[dict[str, Any]], pair: Any) -> dict[str, tuple[float, float]]:
    out: dict[str, tuple[float, float]] = {}
    for r in recs:
        k, n = pair(r)
        if n:
            a, b = out.get(r["group"], (0.0, 0.0))
            out[r["group"]] = (a + k, b + n)
    return out


def _widened(
    d: stats.Difference, new: dict[str, tuple[float, float]], old: dict[str, tuple[float, float]]
) -> stats.Difference:
    """An unpaired change, its standard error the larger of the transcripts' and the groups'.

    Two campaigns of other questions (groups) differ by their questions too: transcripts of
    one repository are alike, so a standard error clustered by transcript alone is too
    small when the groups differ (the A/A benchmark split by repository shows it). Clustered
    by group where both sides have two groups or more, and never below the transcripts'."""
    if len(new) < 2 or len(old) < 2:
        return d
    m = stats.matched_difference(new, old)
    if m is None or m[3] <= d.se:
        return d
    se, df = m[3], float(min(len(new), len(old)) - 1)  # few groups: Student's t, not the normal
    half = stats.t_isf(0.025, df) * se
    return stats.Difference(d.a, d.b, d.diff, max(-1.0, d.diff - half), min(1.0, d.diff + half), False, 0, se,
                            df)  # fmt: skip


def _allocation_pairs(recs: list[dict[str, Any]]) -> dict[Any, tuple[float, float]]:
    """(characters used, characters returned) per transcript digest, of the transcripts with
    an allocation figure."""
    out: dict[Any, tuple[float, float]] = {}
    for i, r in enumerate(recs):
        b = brief_of(r)
        if b[0] is None or not b[0]:
            continue
        d = _transcript(r, i)
        u, e = out.get(d, (0.0, 0.0))
        out[d] = (u + b[1], e + b[0])
    return out


def _used_envelope(rec: dict[str, Any]) -> tuple[float, float]:
    b = brief_of(rec)
    return (0.0, 0.0) if not b[0] else (float(b[1]), float(b[0]))


def _allocation_change(ro: list[dict[str, Any]], rn: list[dict[str, Any]]) -> dict[str, Any]:
    """new - old of the pooled allocation efficiency with its standard error, paired by
    transcript when the sides share digests (the standard error is then 0 for the same
    transcripts judged alike), else as independent samples, each clustered by transcript,
    by group where the groups differ (`_widened`), and there never below each side's
    delete-one-group jackknife (`stats.jackknife_ratio_var`), with Student's t on the
    fewer groups less one."""
    pn, po = _allocation_pairs(rn), _allocation_pairs(ro)
    if not pn or not po:
        return {"diff": None, "se": None, "df": None, "lo": None, "hi": None, "paired": None}
    shared = {k for k in pn.keys() & po.keys() if k[0] != "no digest"}
    m = stats.matched_difference(pn, po) if shared else None
    df = None
    if m is not None and (m[3] > 0 or pn == po):
        _, _, d, se = m
        paired: str | None = "transcript"
    else:
        rn_, ro_ = stats.ratio(pn.values()), stats.ratio(po.values())
        d, se, paired = rn_.p - ro_.p, math.sqrt(rn_.var + ro_.var), None
        gn, go = _by_group_sums(rn, _used_envelope), _by_group_sums(ro, _used_envelope)
        groups = _widened(stats.Difference(rn_.p, ro_.p, d, 0.0, 0.0, False, 0, se), gn, go)
        se, df = groups.se, groups.df
        if len(gn) >= 2 and len(go) >= 2 and set(gn) != set(go):
            # Campaigns of other groups: each side's ratio by the delete-one-group jackknife,
            # never below the above (the linearized variance over ten groups a side failed the
            # A/A benchmark's checks 3.6 times as often as their level said; #38).
            # Student's t on the fewer groups less one whichever is larger: the spread is measured
            # over that many groups (the normal, where the transcripts' was larger, failed 0.9%
            # of the benchmark's checks at Holm's 0.42%).
            jack = math.sqrt(stats.jackknife_ratio_var(gn) + stats.jackknife_ratio_var(go))
            se, df = max(se, jack), float(min(len(gn), len(go)) - 1)
    half = (stats.Z95 if df is None else stats.t_isf(0.025, df)) * se
    return {"diff": d, "se": se, "df": df, "lo": max(-1.0, d - half), "hi": min(1.0, d + half),
            "paired": paired}  # fmt: skip


def _metric_changes(
    old: list[dict[str, Any]], new: list[dict[str, Any]], arm: str, resample: bool = False
) -> dict[str, Any]:
    """The arm's pooled allocation efficiency and median retrieval residual, old and new
    (None where a side has no figure: a baseline of schema 1 has neither), and their
    changes with standard errors: allocation clustered by transcript, the residual's growth
    by a bootstrap over transcripts (`stats.bootstrap_growth`)."""
    ro = [r for r in old if r["status"] == "classified" and r["arm"] == arm]
    rn = [r for r in new if r["status"] == "classified" and r["arm"] == arm]
    (ao, oo), (an, on) = metric_summaries(ro), metric_summaries(rn)  # each brief unpacked once
    eff_old = ao["efficiency"]["share"] if ao else None
    eff_new = an["efficiency"]["share"] if an else None
    res_old = oo["residual_retrieval"]["median"] if oo else None
    res_new = on["residual_retrieval"]["median"] if on else None
    growth = growth_se = draws = None
    paired = None
    if res_old is not None and res_new is not None:
        # A median of 0 (most runs end holding no residual) is taken as one token: a growth from
        # nothing is then measured in the tokens it grew by, and on the bound it fails only when
        # the bootstrap says so (it was "not applicable", failing the run: in the A/A benchmark of
        # a campaign where most runs end with no residual, 12% of splits failed so; #38).
        growth = (res_new - res_old) / max(res_old, RESIDUAL_FLOOR)
    if growth is not None and resample:
        draws, paired = median_draws(rn, ro, _residual_of, relative=True, floor=RESIDUAL_FLOOR)
        if draws is not None:
            growth_se = spread(draws)
    allocation: dict[str, Any] = {"old": eff_old, "new": eff_new, "diff": None, "se": None, "df": None,
                                  "lo": None, "hi": None, "paired": None}  # fmt: skip
    if eff_old is not None and eff_new is not None:
        allocation.update(_allocation_change(ro, rn))
        allocation["diff"] = eff_new - eff_old
    return {
        "allocation": allocation,
        "residual": {"old": res_old, "new": res_new, "growth": growth, "se": growth_se, "paired": paired,
                     "draws": draws},
    }


def _residual_of(rec: Any) -> float | None:
    """A transcript's retrieval residual (None: no occupancy, or no answered call)."""
    b = brief_of(rec)
    return float(b[9]) if b[5] is not None and b[9] is not None else None


def spread(draws: Sequence[float]) -> float:
    """The standard deviation of bootstrap replicates: the standard error they estimate."""
    mean = sum(draws) / len(draws)
    return float((sum((g - mean) ** 2 for g in draws) / (len(draws) - 1)) ** 0.5)


#: The least baseline median (tokens) the retrieval residual's growth is relative to.
RESIDUAL_FLOOR = 1.0


def median_draws(
    new: Sequence[Any], old: Sequence[Any], value: Callable[[Any], float | None], *, relative: bool,
    floor: float = 0.0,
) -> tuple[list[float] | None, str | None]:
    """Bootstrap replicates of the change of a per-run figure's median from ``old`` to ``new``
    records (`stats.bootstrap_growth`: relative to the old median, or in the figure's units),
    and how they were paired: by transcript when the sides share transcripts (digests), else
    unpaired over transcripts, or over groups when both sides have several groups and not
    the same ones (transcripts of one repository are alike; two campaigns of other questions
    differ by them). None: a side has under two keys (or, relative, an old median of 0)."""
    vn, vo = _values_by(new, value, _transcript), _values_by(old, value, _transcript)
    paired = "transcript" if any(k[0] != "no digest" for k in vn.keys() & vo.keys()) else None
    if paired is None:
        gn, go = _values_by(new, value, _group), _values_by(old, value, _group)
        if len(gn) >= 2 and len(go) >= 2 and set(gn) != set(go):
            vn, vo = gn, go
    return stats.bootstrap_growth(vn, vo, paired=paired is not None, relative=relative, floor=floor), paired


def _group(rec: Any, i: int) -> tuple[Any, ...]:
    return ("group", rec["group"])


def _values_by(
    recs: Sequence[Any], value: Callable[[Any], float | None], key: Callable[[Any, int], tuple[Any, ...]]
) -> dict[Any, list[float]]:
    """The records' figures (None left out) under each key: a transcript, or a group."""
    out: dict[Any, list[float]] = {}
    for i, r in enumerate(recs):
        v = value(r)
        if v is not None:
            out.setdefault(key(r, i), []).append(v)
    return out


def drop_gates(comparison: dict[str, Any], max_drop: float | None, on: str) -> list[Outcome]:
    """``--max-sufficient-drop``: fail when the sufficient share fell by more than max_drop.

    On the bound, the drop must exceed max_drop even at the interval's
    optimistic end (the drop is beyond noise).
    """
    if max_drop is None:
        return []
    gate = Gate("sufficient", "max_drop", max_drop)
    outcomes = []
    for arm, cmp in comparison.items():
        if not (cmp["n_old"] or cmp["n_new"]):
            continue  # an arm without the tool in both campaigns: no share to compare
        if not (cmp["n_old"] and cmp["n_new"]):
            # One side has no answered calls (an arm renamed, a baseline of another
            # campaign): the drop cannot be decided, and that is not a pass.
            outcomes.append(Outcome(gate, arm, None, cmp["n_new"], None, on))
            continue
        s = cmp["buckets"]["sufficient"]
        drop = 0.0 - s["diff"]  # not -0.0
        if on == "bound":  # a member of the run's family of checks (`gates.correct`)
            o = Outcome(gate, arm, drop, cmp["n_new"], True, on, se=s["se"], df=s.get("df"))
            outcomes.append(decided_alone(o))
        else:
            outcomes.append(Outcome(gate, arm, drop, cmp["n_new"], drop <= max_drop, on))
    if not outcomes:  # neither campaign has an answered call: nothing was compared
        outcomes.append(Outcome(gate, None, None, 0, None, on))
    return outcomes
