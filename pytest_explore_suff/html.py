"""The HTML report: one self-contained page rendered from the JSON report document.

``render_html(document)`` takes the dict the plugin writes as JSON (or one read
back from a report file) and returns a page that needs nothing but a browser:
no network, no external fonts, scripts or images. Charts are inline SVG drawn
here; the per-call drill-down is embedded once as JSON and rendered lazily in
the browser, so a 10,000-transcript campaign stays usable.

Everything that comes from transcripts (paths, arm and group names, queries,
next-action labels, reasons) is untrusted. The server-side parts go through
Jinja's autoescaping; the drill-down data is JSON with every ``<``, ``>`` and
``&`` written as a ``\\u`` escape, so no string can close its script element,
and the page's script builds rows with ``textContent`` only. A
Content-Security-Policy pins the one script the page runs by its hash, so even
markup that slipped through could not run code or load anything.

Rerender a saved report with ``python -m pytest_explore_suff.html report.json report.html``.
"""

from __future__ import annotations

import base64
import hashlib
import itertools
import json
import math
import os
import sys
from collections.abc import Iterable, Mapping, Sequence
from functools import cache
from importlib import resources
from typing import Any

from jinja2 import Environment, PackageLoader, StrictUndefined
from markupsafe import Markup

from . import runtable
from .buckets import BUCKETS, KEYS
from .gates import METRIC_WORDS
from .occupancy import FAMILIES
from .report import write_bytes_atomic
from .stats import is_number
from .terminal import (
    ALL_ARMS,
    ESTIMATED,
    ESTIMATED_NOTE,
    POOLED,
    allocation_table,
    arm_label,
    arm_table,
    clean,
    empty_side,
    half_up,
    occupancy_table,
    percent,
)

#: Okabe-Ito colours (safe for the common colour-vision deficiencies), worst bucket
#: vermillion, best bluish green; every chart, chip and legend uses these.
COLOURS: dict[str, str] = {
    "explore_again": "#D55E00",
    "read_returned": "#E69F00",
    "read_missed": "#CC79A7",
    "search": "#56B4E9",
    "sufficient": "#009E73",
}
GOOD, BAD, NEUTRAL = "#009E73", "#D55E00", "#8a8a8a"

BAR_WIDTH = 600  # viewBox units of a stacked bar
BAR_LABEL_MIN = 34  # a segment narrower than this gets no percentage inside (the table has it)
DOT_PLOT = (100.0, 250.0)  # x range of a dot-and-whisker panel's axis
DOT_WIDTH = 356
DIFF_PLOT = 300.0  # width of a difference row's plot
#: Residual families, stacked in this order; tool in the graded tool's colour family (blue),
#: the file-access families (the without-arm's way to the same bytes) in warm tones.
FAMILY_COLOURS: dict[str, str] = {
    "tool": "#0072B2",
    "read": "#E69F00",
    "search": "#56B4E9",
    "bash": "#CC79A7",
    "other": "#999999",
}
FAMILY_LABELS: dict[str, str] = {
    "tool": "tool",
    "read": "Read",
    "search": "Grep/Glob",
    "bash": "Bash",
    "other": "other",
}
OCC_MEDIANS = ("ctx_final", "residual_tool", "residual_file_access", "residual_retrieval", "share")
OCC_WIDTH = 560  # viewBox units of an occupancy bar
RES_PLOT = 320.0  # width of the residual chart's plot
HIGHER, LOWER = "#D55E00", "#0072B2"  # more / less of the window held with arm a
ALLOC_COLOUR = "#0072B2"
ALLOC_PLOT = (150.0, 560.0)  # x range of the allocation panel's axis
ALLOC_WIDTH = 720


#: The trend chart: a small panel per arm and metric, a run a step along x, the share up y.
TREND_STEP = 52.0  # x units per run
TREND_LEFT = 40.0  # room for the share axis' labels
TREND_TOP = 16.0  # room for a change's arrow above the highest point
TREND_PLOT = 110.0  # height of the plot
TREND_LABELS = 62.0  # room below the plot for the runs' labels, slanted
TREND_LABEL_CHARS = 12  # a run's label on the axis is cut to this (its tooltip has it whole)
#: The trend's metrics in the terminal table's order: (key, label, colour, lower is better).
TREND_METRICS: tuple[tuple[str, str, str, bool], ...] = (
    ("sufficient", "sufficient (moved on / answered)", COLOURS["sufficient"], False),
    *((b.key, b.label, COLOURS[b.key], True) for b in BUCKETS if b.key != "sufficient"),
    ("allocation", "allocation efficiency", "#0072B2", False),
    ("residual_share", "retrieval residual share (median)", "#CC79A7", True),
    ("correct", "correct answers (pass / graded)", "#2e7d32", False),  # only with ground truth
)


# -- formatting -------------------------------------------------------------------------------------


def _num(value: Any) -> float | None:
    """A JSON number as a finite float; None for anything else (a bool, a string, inf)."""
    kind = type(value)  # the exact type first: the page asks this of every figure of every transcript
    if kind is float:
        return value if math.isfinite(value) else None
    if kind is not int and not is_number(value):
        return None
    f = float(value)
    return f if math.isfinite(f) else None


def pct(value: Any) -> str:
    """``0.4883`` -> ``49%``, ``0.125`` -> ``13%``: halves up, as the terminal summary and
    the page's script (``Math.round``) round."""
    x = _num(value)
    return "–" if x is None else percent(x)


def pct_bare(value: Any) -> str:
    x = _num(value)
    return "–" if x is None else str(half_up(x * 100))


def points(value: Any) -> str:
    """A difference of shares in signed percentage points, ``+28``; never ``-0``."""
    x = _num(value)
    return "–" if x is None else f"{half_up(x * 100):+d}"


def interval(lo: Any, hi: Any) -> str:
    return f"[{pct_bare(lo)}–{pct_bare(hi)}]"


def _figure(value: Any, kind: str) -> str:
    x = _num(value)
    if x is None:
        return "–"
    if kind == "duration_ms":
        return f"{x / 1000:.1f} s"
    if kind == "cost_usd":
        return f"${x:.3f}"
    return f"{x:g}"


def _shown(value: Any) -> str:
    """Display form of an untrusted string: control and bidi characters made visible."""
    return clean("" if value is None else value)


# -- views: plain dicts of what the template draws ---------------------------------------------------


def _arm_bar(name: str, agg: Mapping[str, Any], pooled: bool = False) -> dict[str, Any]:
    answered = int(agg.get("answered") or 0)
    counts = agg.get("counts") or {}
    shares = agg.get("shares") or {}
    intervals = agg.get("intervals") or {}
    segments = []
    x = 0.0
    for b in BUCKETS:
        share = _num(shares.get(b.key)) or 0.0
        if not answered:
            share = 0.0
        w = share * BAR_WIDTH
        iv = intervals.get(b.key) or {}
        segments.append(
            {
                "key": b.key,
                "label": b.label,
                "colour": COLOURS[b.key],
                "x": round(x, 2),
                "w": round(w, 2),
                "mid": round(x + w / 2, 2),
                "inside": w >= BAR_LABEL_MIN,
                "share": share,
                "pct": pct(share),
                "count": int(counts.get(b.key) or 0),
                "interval": interval(iv.get("lo"), iv.get("hi")) if iv else "",
            }
        )
        x += w
    return {
        "name": _shown(name),
        "label": POOLED if pooled else arm_label(_shown(name)),
        "pooled": pooled,
        "answered": answered,
        "transcripts": int(agg.get("transcripts") or 0),
        "errored": int(agg.get("errored") or 0),
        "concurrent": int(agg.get("concurrent") or 0),
        "segments": segments,
        **_agents(agg, pooled),
    }


def _agents(agg: Mapping[str, Any], pooled: bool) -> dict[str, Any]:
    """The arm's transcripts per agent, as text, and whether it mixes agents (its shares then
    pool them: the page says so, as the terminal's note does; the pooled column mixes arms
    anyway). A report of schema 1 has none."""
    agents = [(_shown(a), _int(n)) for a, n in _mapping(agg.get("agents")).items()]
    return {
        "agents": ", ".join(f"{a} ({n})" for a, n in agents),
        "mixed": len(agents) > 1 and not pooled,
    }


def _dot_panels(arms: Mapping[str, Mapping[str, Any]]) -> list[dict[str, Any]]:
    x0, x1 = DOT_PLOT
    panels = []
    for b in BUCKETS:
        rows = []
        for name, agg in arms.items():
            answered = int(agg.get("answered") or 0)
            iv = (agg.get("intervals") or {}).get(b.key) or {}
            share = _num((agg.get("shares") or {}).get(b.key))
            lo, hi = _num(iv.get("lo")), _num(iv.get("hi"))
            row: dict[str, Any] = {"name": _shown(name), "short": _short(_shown(name), 14), "n": answered}
            if answered and share is not None:
                lo = share if lo is None else lo
                hi = share if hi is None else hi
                row.update(
                    share=share,
                    lo=lo,
                    hi=hi,
                    x=round(x0 + share * (x1 - x0), 2),
                    xlo=round(x0 + lo * (x1 - x0), 2),
                    xhi=round(x0 + hi * (x1 - x0), 2),
                    text=f"{pct(share)} {interval(lo, hi)}",
                )
            rows.append(row)
        panels.append(
            {
                "key": b.key,
                "label": b.label,
                "meaning": b.meaning,
                "colour": COLOURS[b.key],
                "rows": rows,
                "height": 30 + 24 * max(1, len(rows)),
                "ticks": [{"x": round(x0 + t * (x1 - x0), 2), "text": percent(t)} for t in (0, 0.5, 1)],
            }
        )
    return panels


def tokens(value: Any) -> str:
    """``11356.0`` -> ``11,356``."""
    x = _num(value)
    return "–" if x is None else f"{half_up(x):,}"


def spread(value: Any, fmt: Any = tokens) -> str:
    """``{median, min, max}`` -> ``11,356 [10,726-12,559]`` (with an en dash)."""
    v = _mapping(value)
    if _num(v.get("median")) is None:
        return "–"
    return f"{fmt(v.get('median'))} [{fmt(v.get('min'))}–{fmt(v.get('max'))}]"


#: The verdicts' colours in the ground truth's cross-tab.
VERDICT_COLOURS = {"pass": "#2e7d32", "partial": "#f9a825", "fail": "#c62828", "unjudged": "#9e9e9e"}
TRUTH_PLOT = (150, 560)  # x of the bars' start and end


def _share_text(s: Any, k: str, n: str) -> str:
    if not isinstance(s, Mapping):
        return "–"
    return f"{_int(s.get(k))}/{_int(s.get(n))} {pct(s.get('share'))} {interval(s.get('lo'), s.get('hi'))}"


def _truth_panel(document: Mapping[str, Any], arms: Mapping[str, Mapping[str, Any]]) -> dict[str, Any] | None:
    """The ground truth per arm: calls per bucket by their answer's verdict (a stacked bar
    per bucket, scaled to the arm's largest bucket), and the arm's figures. None without a
    truth file."""
    info = document.get("truth")
    if not isinstance(info, Mapping):
        return None
    x0, x1 = TRUTH_PLOT
    out = []
    for name, agg in arms.items():
        t = agg.get("truth")
        if not isinstance(t, Mapping):
            continue
        crosstab = _mapping(t.get("crosstab"))
        totals = {b.key: sum(_int(v) for v in _mapping(crosstab.get(b.key)).values()) for b in BUCKETS}
        widest = max(totals.values(), default=0) or 1
        rows = []
        for b in BUCKETS:
            cells = _mapping(crosstab.get(b.key))
            x = float(x0)
            segments = []
            for verdict, colour in VERDICT_COLOURS.items():
                n = _int(cells.get(verdict))
                if n:
                    w = round(n / widest * (x1 - x0), 2)
                    segments.append({"key": verdict, "n": n, "x": round(x, 2), "w": w, "colour": colour})
                    x += w
            parts = [f"{_int(cells.get(v))} {v}" for v in VERDICT_COLOURS if _int(cells.get(v))]
            rows.append({"key": b.key, "label": b.label, "total": totals[b.key], "segments": segments,
                         "text": ", ".join(parts) if parts else "no call"})  # fmt: skip
        verdicts = _mapping(t.get("verdicts"))
        gold = _mapping(t.get("gold_share"))
        recall = _mapping(t.get("gold_recall"))
        first = _mapping(t.get("gold_first"))
        figures = [
            ("pass / partial / fail / unjudged",
             " / ".join(str(_int(verdicts.get(v))) for v in VERDICT_COLOURS)),
            ("correct [95%]", _share_text(t.get("correct_share"), "pass", "judged")),
            ("sufficient, then wrong [95%]", _share_text(t.get("false_sufficient"), "fail", "sufficient")),
            ("gold share, pooled (median call)", f"{pct(gold.get('pooled'))} ({pct(gold.get('median'))})"),
            ("gold recall, median (all found)", f"{pct(recall.get('median'))} ({pct(recall.get('full'))})"),
            ("gold file first", pct(first.get("share"))),
        ]  # fmt: skip
        out.append({"name": _shown(name), "units": _int(t.get("questions")),
                    "no_question": _int(t.get("no_question")), "rows": rows, "figures": figures})  # fmt: skip
    return {
        "path": _shown(info.get("path")),
        "digest": _shown(info.get("digest"))[:12],
        "questions": _int(info.get("questions")),
        "verdicts": [{"key": k, "colour": c} for k, c in VERDICT_COLOURS.items()],
        "arms": out,
        "width": x1 + 260,
        "x1": x1,
    }


def _repeat_figures(s: Mapping[str, Any]) -> dict[str, Any]:
    k, top = _int(s.get("k")), _int(s.get("k_max"))
    return {
        "questions": _int(s.get("questions")), "runs": str(k) if k == top else f"{k}–{top}", "k": k,
        "pass_k": pct(s.get("pass_k")), "pass_1": pct(s.get("pass_1")), "disagree": _int(s.get("disagree")),
        "sd": pct_bare(s.get("sd")) if "sd" in s else None,
    }  # fmt: skip


def _repeat_cell(f: Any) -> dict[str, Any] | None:
    f = _mapping(f)
    if not f:
        return None
    return {"passed": _int(f.get("passed")), "runs": _int(f.get("runs")), "share": pct(f.get("share")),
            "pass_k": pct(f.get("pass_k")), "sd": pct_bare(f.get("sd")) if "sd" in f else None,
            "disagree": f.get("disagree") is True}  # fmt: skip


def _repeats_panel(arms: Mapping[str, Mapping[str, Any]]) -> list[dict[str, Any]]:
    """Per arm whose questions ran more than once: pass^k and the spread between runs, its
    figures and every repeated question (`repeats.repeats`); empty when none did."""
    out = []
    for name, agg in arms.items():
        r = _mapping(agg.get("repeats"))
        if not r:
            continue
        summary = {key: _repeat_figures(_mapping(r.get(key))) if _mapping(r.get(key)) else None
                   for key in ("sufficient", "correct")}  # fmt: skip
        questions = [
            {"question": _shown(q.get("question")), "by": _shown(q.get("by")), "runs": _int(q.get("runs")),
             "sufficient": _repeat_cell(q.get("sufficient")), "correct": _repeat_cell(q.get("correct"))}
            for q in map(_mapping, _seq(r.get("questions")))
        ]  # fmt: skip
        out.append({"name": _shown(name), **summary, "questions": questions,
                    "truth": any(q["correct"] for q in questions)})  # fmt: skip
    return out


def _allocation_panel(arms: Mapping[str, Mapping[str, Any]]) -> dict[str, Any]:
    """Pooled allocation efficiency per arm, with its clustered interval and the path-only floor."""
    x0, x1 = ALLOC_PLOT
    rows = []
    for name, agg in arms.items():
        a = agg.get("allocation")
        row: dict[str, Any] = {"name": _shown(name), "short": _short(_shown(name), 22)}
        if isinstance(a, Mapping):
            eff = _mapping(a.get("efficiency"))
            share = _num(eff.get("share"))
            if share is not None:
                lo, hi = _num(eff.get("lo")), _num(eff.get("hi"))
                lo = share if lo is None else lo
                hi = share if hi is None else hi
                path = _num(a.get("efficiency_path"))
                row.update(
                    share=share,
                    lo=lo,
                    hi=hi,
                    path=path,
                    x=round(x0 + share * (x1 - x0), 2),
                    xlo=round(x0 + lo * (x1 - x0), 2),
                    xhi=round(x0 + hi * (x1 - x0), 2),
                    xpath=None if path is None else round(x0 + path * (x1 - x0), 2),
                    text=f"{pct(share)} {interval(lo, hi)}",
                    path_text=pct(path),
                    transcripts=_int(a.get("transcripts")),
                    calls=_int(a.get("calls")),
                    envelope=_int(a.get("envelope")),
                    used=_int(a.get("used")),
                    used_path=_int(a.get("used_path")),
                    per_run=spread(a.get("per_run"), pct),
                    no_answer=_int(a.get("no_answer")),
                    method=_shown(eff.get("method")),
                    clusters=eff.get("clusters"),
                )
        rows.append(row)
    height = 30 + 24 * max(1, len(rows))
    ticks = [{"x": round(x0 + t * (x1 - x0), 2), "text": percent(t)} for t in (0, 0.25, 0.5, 0.75, 1)]
    return {"rows": rows, "height": height, "ticks": ticks, "width": ALLOC_WIDTH, "x0": x0, "x1": x1,
            "any": any("share" in r for r in rows)}  # fmt: skip


def _occupancy_bars(
    arms: Mapping[str, Mapping[str, Any]], transcripts: Sequence[Mapping[str, Any]]
) -> dict[str, Any]:
    """Per arm: the mean residual per family over its transcripts with token counts (means
    stack, medians do not) against the arm's median final context, on one shared scale."""
    sums: dict[str, dict[str, float]] = {}
    counts: dict[str, int] = {}
    for t in transcripts:
        o = t.get("occupancy")
        if t.get("status") != "classified" or not isinstance(o, Mapping):
            continue
        arm = str(t.get("arm"))
        res = _mapping(o.get("residual"))
        acc = sums.setdefault(arm, dict.fromkeys(FAMILIES, 0.0))
        for f in FAMILIES:
            acc[f] += _num(res.get(f)) or 0.0
        counts[arm] = counts.get(arm, 0) + 1
    rows: list[dict[str, Any]] = []
    for name, agg in arms.items():
        o = agg.get("occupancy")
        row: dict[str, Any] = {"name": _shown(name), "short": _short(_shown(name), 16)}
        if isinstance(o, Mapping) and counts.get(name):
            n = counts[name]
            means = {f: sums[name][f] / n for f in FAMILIES}
            ctx = _num(_mapping(o.get("ctx_final")).get("median")) or 0.0
            row.update(
                n=n,
                means=means,
                total=sum(means.values()),
                ctx=ctx,
                ctx_text=tokens(ctx),
                transcripts=_int(o.get("transcripts")),
                ctx_final=spread(o.get("ctx_final")),
                residual_tool=spread(o.get("residual_tool")),
                residual_file_access=spread(o.get("residual_file_access")),
                residual_retrieval=spread(o.get("residual_retrieval")),
                share=spread(o.get("share"), pct),
                ctx_base=tokens(o.get("ctx_base")),
                # M10: figures that include estimates are marked, as the terminal marks them
                estimated=_int(o.get("estimated")),
                mark=ESTIMATED if _int(o.get("estimated")) else "",
                data={
                    **{k.replace("_", "-"): _num(_mapping(o.get(k)).get("median")) for k in OCC_MEDIANS},
                    "ctx-base": _num(o.get("ctx_base")),
                },
            )
        rows.append(row)
    top = max((max(r["ctx"], r["total"]) for r in rows if "ctx" in r), default=0.0)
    scale = OCC_WIDTH / top if top > 0 else 0.0
    for r in rows:
        if "ctx" not in r:
            continue
        x = 0.0
        segs = []
        for f in FAMILIES:
            w = r["means"][f] * scale
            segs.append(
                {
                    "family": f,
                    "label": FAMILY_LABELS[f],
                    "colour": FAMILY_COLOURS[f],
                    "x": round(x, 2),
                    "w": round(w, 2),
                    "mean": r["means"][f],
                    "text": tokens(r["means"][f]),
                    "of_ctx": pct(r["means"][f] / r["ctx"]) if r["ctx"] else "–",
                }
            )
            x += w
        r["segments"] = segs
        r["xctx"] = round(r["ctx"] * scale, 2)
        r["xtotal"] = round(x, 2)
    return {
        "rows": rows,
        "width": OCC_WIDTH,
        "families": [{"key": f, "label": FAMILY_LABELS[f], "colour": FAMILY_COLOURS[f]} for f in FAMILIES],
        "any": any("ctx" in r for r in rows),
        "estimated_note": ESTIMATED_NOTE if any(r.get("mark") for r in rows) else "",
    }


def _nice_extent(values: Iterable[float]) -> float:
    """Half-width of the residual chart's axis in percent: 25, 50, 100, 200, ... above the widest."""
    widest = max((abs(v) for v in values), default=0.0)
    ext = 25.0
    while ext < widest:
        ext *= 2
    return ext


def _residual_chart(cmp: Any) -> dict[str, Any] | None:
    """Arm a against arm b: per group the difference of median retrieval residual in percent
    (a bar from zero), the mean over groups with its interval, the fixed overhead."""
    if not isinstance(cmp, Mapping):
        return None
    r = _mapping(cmp.get("residual"))
    groups = [g for g in _seq(r.get("groups")) if isinstance(g, Mapping)]
    iv = r.get("interval") if isinstance(r.get("interval"), Mapping) else None
    values = [v for g in groups if (v := _num(g.get("pct"))) is not None]
    mean = _num(r.get("mean_pct"))
    if mean is not None:
        values.append(mean)
    if iv:
        values += [v for k in ("lo", "hi") if (v := _num(iv.get(k))) is not None]
    ext = _nice_extent(values)
    scale = RES_PLOT / (2 * ext)

    def at(v: float) -> float:
        return round(RES_PLOT / 2 + max(-ext, min(ext, v)) * scale, 2)

    zero = at(0)
    rows = []
    for g in groups:
        p = _num(g.get("pct"))
        row: dict[str, Any] = {
            "group": _shown(g.get("group")) or "(no group)",
            "raw": _shown(g.get("group")),
            "a": _num(g.get("a")),
            "b": _num(g.get("b")),
            "a_text": tokens(g.get("a")),
            "b_text": tokens(g.get("b")),
            "pct": p,
            "direction": _shown(g.get("direction")) if g.get("direction") else None,
        }
        if p is not None:
            x = at(p)
            row.update(
                x=min(zero, x),
                w=round(abs(x - zero), 2),
                colour=HIGHER if p > 0 else LOWER if p < 0 else NEUTRAL,
                text=f"{half_up(p):+d}%",
            )
        rows.append(row)
    mean_row = None
    if mean is not None:
        lo = _num(iv.get("lo")) if iv else None
        hi = _num(iv.get("hi")) if iv else None
        if lo is None or hi is None:
            lo = hi = None
        mean_row = {
            "pct": mean,
            "x": at(mean),
            "xlo": None if lo is None else at(lo),
            "xhi": None if hi is None else at(hi),
            "lo": lo,
            "hi": hi,
            "text": f"{half_up(mean):+d}%"
            + ("" if lo is None or hi is None else f" [{half_up(lo):+d}%, {half_up(hi):+d}%]"),
            "colour": HIGHER if mean > 0 else LOWER if mean < 0 else NEUTRAL,
        }
    alloc = cmp.get("allocation") if isinstance(cmp.get("allocation"), Mapping) else None
    alloc_view = None
    if alloc:
        alloc_view = {
            "a": pct(alloc.get("a")),
            "b": pct(alloc.get("b")),
            "diff": _num(alloc.get("diff")),
            "lo": _num(alloc.get("lo")),
            "hi": _num(alloc.get("hi")),
            "text": f"{points(alloc.get('diff'))} [{points(alloc.get('lo'))}, {points(alloc.get('hi'))}]",
        }
    overhead = _num(r.get("fixed_overhead"))
    ticks = [{"x": at(t), "text": f"{t:+.0f}%" if t else "0"} for t in (-ext, -ext / 2, 0, ext / 2, ext)]
    return {
        "a": _shown(cmp.get("a")),
        "b": _shown(cmp.get("b")),
        "rows": rows,
        "mean": mean_row,
        "direction": _shown(r.get("direction")) if r.get("direction") else None,
        "agreeing": r.get("agreeing"),
        "compared": r.get("compared"),
        "overhead": overhead,
        "overhead_text": "–" if overhead is None else f"{half_up(overhead):+,} tokens",
        "sentence": _residual_sentence(cmp.get("a"), cmp.get("b"), r) if mean is not None else None,
        "allocation": alloc_view,
        "width": RES_PLOT,
        "zero": zero,
        "ticks": ticks,
    }


def _residual_sentence(a: Any, b: Any, r: Mapping[str, Any]) -> str:
    """The terminal's residual line, with the sign in words: "... 59% higher with A than with B"."""
    a, b = _shown(a), _shown(b)
    mean = _num(r.get("mean_pct")) or 0.0
    direction = _shown(r.get("direction"))
    if direction == "equal" or not mean:
        text = f"retrieval residual equal with {a} and {b}"
    else:
        text = f"retrieval residual {abs(mean):.0f}% {direction} with {a} than with {b}"
    compared = _int(r.get("compared"))
    text += f", {_int(r.get('agreeing'))} of {compared} group{'s' if compared != 1 else ''}"
    iv = _mapping(r.get("interval"))
    lo, hi = _num(iv.get("lo")), _num(iv.get("hi"))
    if lo is not None and hi is not None:
        text += f" (mean over groups, 95% {lo:+.0f}% to {hi:+.0f}%)"
    overhead = _num(r.get("fixed_overhead"))
    if overhead is not None:
        text += f"; fixed overhead {half_up(overhead):+,} tokens"
    return text


def _short(text: str, n: int) -> str:
    return text if len(text) <= n else text[: n - 1] + "…"


def _extent(rows: Iterable[Mapping[str, Any]]) -> float:
    """Half-width of a difference axis: the widest interval, rounded up to 10 points."""
    widest = max((abs(_num(r.get(k)) or 0.0) for r in rows for k in ("lo", "hi", "diff")), default=0.0)
    return max(0.1, math.ceil(widest * 10 - 1e-9) / 10)


def _diff_rows(buckets: Mapping[str, Mapping[str, Any]], left: str, right: str) -> dict[str, Any]:
    """Rows of a difference chart: one per bucket, a point and its interval around zero."""
    present = [buckets[k] for k in KEYS if isinstance(buckets.get(k), Mapping)]
    ext = _extent(present)
    scale = DIFF_PLOT / (2 * ext)

    def at(v: float) -> float:
        return round(DIFF_PLOT / 2 + v * scale, 2)

    rows = []
    for b in BUCKETS:
        d = buckets.get(b.key)
        if not isinstance(d, Mapping):
            continue
        diff = _num(d.get("diff")) or 0.0
        lo, hi = _num(d.get("lo")), _num(d.get("hi"))
        lo = diff if lo is None else lo
        hi = diff if hi is None else hi
        # Better is more sufficient, fewer of every miss bucket.
        sign = 1 if b.key == "sufficient" else -1
        if lo > 0 or hi < 0:
            better = (diff * sign) > 0
            verdict, colour = ("better", GOOD) if better else ("worse", BAD)
        else:
            verdict, colour = "within noise", NEUTRAL
        rows.append(
            {
                "key": b.key,
                "label": b.label,
                "colour": COLOURS[b.key],
                "left": d.get(left),
                "right": d.get(right),
                "left_pct": pct(d.get(left)),
                "right_pct": pct(d.get(right)),
                "diff": diff,
                "lo": lo,
                "hi": hi,
                "x": at(diff),
                "xlo": at(max(-ext, lo)),
                "xhi": at(min(ext, hi)),
                "text": f"{points(diff)} [{points(lo)}, {points(hi)}]",
                "verdict": verdict,
                "vcolour": colour,
            }
        )
    ticks = [
        {"x": at(t), "text": f"{round(t * 100):+d}" if t else "0"} for t in (-ext, -ext / 2, 0, ext / 2, ext)
    ]
    return {"rows": rows, "zero": at(0), "width": DIFF_PLOT, "ticks": ticks}


def _moved(rows: Any, left: str, right: str) -> dict[str, Any] | None:
    """The groups whose sufficient share moved (or differs between the arms) beyond noise,
    Holm over the groups, worse first (`compare._question_changes`); None: none compared."""
    rows = [r for r in map(_mapping, _seq(rows)) if r]
    if not rows:
        return None
    moved = [
        {"group": _shown(r.get("group")), "left": pct(r.get(left)), "right": pct(r.get(right)),
         "diff": points(r.get("diff")), "interval": f"[{points(r.get('lo'))}, {points(r.get('hi'))}]",
         "worse": (_num(r.get("diff")) or 0) < 0}
        for r in rows if r.get("moved") is True
    ]  # fmt: skip
    return {"compared": len(rows), "rows": moved}


def _comparison(cmp: Any) -> dict[str, Any] | None:
    if not isinstance(cmp, Mapping) or not isinstance(cmp.get("buckets"), Mapping):
        return None
    chart = _diff_rows(cmp["buckets"], "a", "b")
    return {
        "a": _shown(cmp.get("a")),
        "b": _shown(cmp.get("b")),
        "paired": bool(cmp.get("paired")),
        "n_a": cmp.get("n_a"),
        "n_b": cmp.get("n_b"),
        "questions": _moved(cmp.get("questions"), "a", "b"),
        **chart,
    }


def _baseline_metrics(cmp: Mapping[str, Any]) -> list[str]:
    """The arm's allocation efficiency and median retrieval residual, baseline -> now."""
    out = []
    a = _mapping(cmp.get("allocation"))
    if _num(a.get("old")) is not None or _num(a.get("new")) is not None:
        change = "" if _num(a.get("diff")) is None else f" ({points(a.get('diff'))} points)"
        out.append(f"allocation efficiency {pct(a.get('old'))} → {pct(a.get('new'))}{change}")
    r = _mapping(cmp.get("residual"))
    if _num(r.get("old")) is not None or _num(r.get("new")) is not None:
        growth = _num(r.get("growth"))
        change = "" if growth is None else f" ({growth:+.0%})"
        old, new = tokens(r.get("old")), tokens(r.get("new"))
        out.append(f"median retrieval residual {old} → {new} tokens{change}")
    return out


def _baseline(base: Any) -> dict[str, Any] | None:
    if not isinstance(base, Mapping):
        return None
    arms = []
    for name, cmp in (base.get("arms") or {}).items():
        if not isinstance(cmp, Mapping) or not (cmp.get("n_old") or cmp.get("n_new")):
            continue
        empty = empty_side(cmp)  # no share on that side: no change to chart, as the terminal says
        arms.append(
            {
                "name": _shown(name),
                "n_old": cmp.get("n_old"),
                "n_new": cmp.get("n_new"),
                "metrics": _baseline_metrics(cmp),
                "questions": _moved(cmp.get("questions"), "old", "new"),
                "empty": empty,
                **({} if empty else _diff_rows(cmp.get("buckets") or {}, "old", "new")),
            }
        )
    return {"report": _shown(base.get("report")), "arms": arms}


def _trend_label(run: Mapping[str, Any]) -> str:
    """A run's tooltip: its label, number, name, commit and time, as the report has them."""
    parts = [f"run {_shown(run.get('label'))}"]
    for key in ("number", "name", "commit", "time"):
        if run.get(key) not in (None, ""):
            parts.append(f"{key} {_shown(run.get(key))}")
    if run.get("complete") is False:
        parts.append("partial")
    return ", ".join(parts)


def _trend_panel(
    series: Sequence[Any], labels: Sequence[str], metric: tuple[str, str, str, bool]
) -> dict[str, Any]:
    """One metric of one arm over the runs: a point per run that has the figure, its 95%
    interval as a bar, and the change from the run before when it is beyond noise."""
    key, label, colour, lower_is_better = metric
    present = [p for p in series if isinstance(p, Mapping) and _num(p.get("share")) is not None]
    widest = max((v for p in present for k in ("share", "hi") if (v := _num(p.get(k))) is not None),
                 default=0.0)  # fmt: skip
    # The axis' top: 20%, 50% or 100%, the least that holds every point and interval (small
    # shares, such as the residual's or a miss bucket's, stay readable), ticks at 0, half, top.
    top = next(t for t in (0.2, 0.5, 1.0) if widest <= t + 1e-9) if widest <= 1.0 else widest

    def at(v: float) -> float:
        return round(TREND_TOP + (1 - max(0.0, min(top, v)) / top) * TREND_PLOT, 2)

    out = []
    previous: str | None = None
    for i, p in enumerate(series):
        x = round(TREND_LEFT + TREND_STEP * (i + 0.5), 2)
        if not isinstance(p, Mapping) or (share := _num(p.get("share"))) is None:
            continue
        lo, hi = _num(p.get("lo")), _num(p.get("hi"))
        row: dict[str, Any] = {
            "i": i, "label": labels[i], "x": x, "y": at(share), "share": share, "lo": lo, "hi": hi,
            "text": pct(share) + ("" if lo is None or hi is None else f" {interval(lo, hi)}"),
            "ylo": None if lo is None or hi is None else at(lo),
            "yhi": None if lo is None or hi is None else at(hi),
            "beyond": False, "direction": "", "worse": None, "change": "",
        }  # fmt: skip
        c = _mapping(p.get("change"))
        diff = _num(c.get("diff"))
        if diff is not None and previous is not None:
            row["change"] = (f"{points(diff)} points [{points(c.get('lo'))}, "
                             f"{points(c.get('hi'))}] from {previous}")  # fmt: skip
            if c.get("beyond_noise") is True and diff:
                worse = (diff < 0) != lower_is_better
                row.update(beyond=True, direction="up" if diff > 0 else "down", worse=worse,
                           mark_colour=BAD if worse else GOOD)  # fmt: skip
                row["change"] += ", beyond noise: " + ("worse" if worse else "better")
            else:
                row["change"] += ", within noise"
        previous = labels[i]
        out.append(row)
    for a, b in itertools.pairwise(out):
        b["from_x"], b["from_y"] = a["x"], a["y"]
    ticks = [{"y": at(t * top), "text": percent(t * top)} for t in (0, 0.5, 1)]
    return {"key": key, "label": label, "colour": colour, "points": out, "ticks": ticks,
            "lower_is_better": lower_is_better}  # fmt: skip


def _trend_options(differ: Any) -> str:
    """What a run of the trend was judged with, against the latest run: the options that differ."""
    if not isinstance(differ, list):
        return "–"  # not recorded
    return f"other: {', '.join(_shown(d) for d in differ)}" if differ else "as the latest"


def _trend(section: Any) -> dict[str, Any] | None:
    """The report's ``trend`` section as charts: per arm, a panel per metric."""
    if not isinstance(section, Mapping) or not _seq(section.get("runs")):
        return None
    runs = [r if isinstance(r, Mapping) else {} for r in _seq(section.get("runs"))]
    labels = [_shown(r.get("label")) for r in runs]
    n = len(runs)
    width = round(TREND_LEFT + TREND_STEP * n + 8, 2)
    axis = [
        {"x": round(TREND_LEFT + TREND_STEP * (i + 0.5), 2), "text": _short(label, TREND_LABEL_CHARS),
         "title": _trend_label(run)}
        for i, (label, run) in enumerate(zip(labels, runs, strict=True))
    ]  # fmt: skip
    arms = []
    for name, data in _mapping(section.get("arms")).items():
        series = _mapping(_mapping(data).get("points"))
        # A point per run, whatever the section holds: a short list is padded, a long one cut.
        panels = [_trend_panel([*_seq(series.get(m[0])), *[None] * n][:n], labels, m) for m in TREND_METRICS
                  if m[0] != "correct" or m[0] in series]  # the correct share: only with ground truth
        versus = []
        for metric, vs in _mapping(_mapping(data).get("latest_vs_best")).items():
            if not isinstance(vs, Mapping) or _num(vs.get("diff")) is None:
                continue
            best = vs.get("best")
            best_label = labels[best] if isinstance(best, int) and 0 <= best < n else "–"
            beyond = vs.get("beyond_noise")
            worse = beyond is True and (_num(vs.get("diff")) or 0.0) < 0
            noise = "no interval" if beyond is None else ("worse beyond noise" if worse else (
                "better beyond noise" if beyond else "within noise"))  # fmt: skip
            ci = "" if _num(vs.get("lo")) is None else f" [{points(vs.get('lo'))}, {points(vs.get('hi'))}]"
            versus.append({
                "metric": _shown(metric), "worse": worse, "diff": _num(vs.get("diff")),
                "text": (f"{'sufficient share' if metric == 'sufficient' else 'allocation efficiency'}: "
                         f"latest {pct(vs.get('latest'))} against the best earlier run, {best_label}, "
                         f"{pct(vs.get('best_share'))}: {points(vs.get('diff'))} points{ci}, {noise}"),
            })  # fmt: skip
        arms.append({
            "name": _shown(name), "label": arm_label(_shown(name)), "versus": versus,
            "panels": [p for p in panels if p["points"]],
            "missing": [p["label"] for p in panels if not p["points"]],
        })  # fmt: skip
    table = [
        {"label": labels[i], "number": r.get("number"), "name": _shown(r.get("name")) or "–",
         "commit": _shown(r.get("commit")) or "–", "time": _shown(r.get("time")) or "–",
         "complete": r.get("complete") is not False, "options": _trend_options(r.get("options_differ"))}
        for i, r in enumerate(runs)
    ]  # fmt: skip
    return {
        "runs": table,
        "axis": axis,
        "arms": arms,
        "width": width,
        "height": round(TREND_TOP + TREND_PLOT + TREND_LABELS, 2),
        "plot_bottom": round(TREND_TOP + TREND_PLOT, 2),
        "left": TREND_LEFT,
        "good": GOOD,
        "bad": BAD,
    }


_OPS = {"min": "≥", "max": "≤", "min_calls": "≥", "max_drop": "≤", "max_growth": "≤"}


def _metric_gate(g: Mapping[str, Any], op: str, metric: str) -> tuple[str, str]:
    """(option, what) of an allocation / residual gate, worded as the terminal words it."""
    words, missing = METRIC_WORDS[metric]
    stem = metric.replace("_", "-")
    option = f"--max-{stem}-{op[4:]}" if op in ("max_drop", "max_growth") else f"--{op}-{stem}"
    threshold = _num(g.get("threshold"))
    th = "–" if threshold is None else f"{threshold:g}"
    value, bound = _num(g.get("value")), _num(g.get("bound"))
    if g.get("passed") is None:
        side = " (here or in the baseline)" if op in ("max_drop", "max_growth") else ""
        return option, f"{missing}{side}, so not a pass"
    if op == "max_drop":
        what = f"{words} fell by {'–' if value is None else f'{value:.3f}'} from the baseline"
    elif op == "max_growth":
        what = f"{words} grew by {'–' if value is None else f'{value:+.1%}'} from the baseline"
        th += "" if threshold is None else f" ({threshold:.0%})"
    else:
        what = f"{words} {'–' if value is None else f'{value:.3f}'}"
        if bound is not None:
            what += f" ({'lower' if op == 'min' else 'upper'} 95% bound {bound:.3f})"
    return option, f"{what} {_OPS.get(op, op)} {th}"


def _gate(g: Mapping[str, Any]) -> dict[str, Any]:
    passed = g.get("passed")
    op, metric = str(g.get("op", "")), str(g.get("metric", ""))
    arm = g.get("arm")
    where = f"arm {_shown(arm)}" if arm is not None else "every arm"
    threshold = _num(g.get("threshold"))
    th = "–" if threshold is None else f"{threshold:g}"
    value, bound = _num(g.get("value")), _num(g.get("bound"))
    n = g.get("n")
    if op == "trend":
        # as the terminal and the Markdown summary word it (their own words, less the arm and
        # the verdict, which the page shows apart): a difference, against earlier runs
        from .gates import outcome_of

        option = "--explore-suff-trend-fail"
        words = METRIC_WORDS[metric][0] if metric in METRIC_WORDS else f"{metric} share"
        said = outcome_of(dict(g)).describe() if value is not None and bound is not None else ""
        what = said[said.find(words):].rsplit(": ", 1)[0] if words in said else f"{words}: –"
        n = None  # the trend compares runs, not a count of calls
    elif op in ("max_increase", "max_rel_increase", "control"):
        # the run-figure and control gates: the terminal's own words, less the arm and the
        # verdict, which the page shows apart
        from .gates import outcome_of

        o = outcome_of(dict(g))
        option = o.gate.option
        said = o.describe()[len(option) + 2 :]
        said_where = f"arm {arm!r}" if arm is not None else "every arm"
        if op == "control":
            said = said.replace(f", {said_where},", ",", 1)
        else:
            said = said.removeprefix(f"{said_where} ")
        what = said.rsplit(": ", 1)[0]
        n = n if op == "control" else None  # a run gate's words say its runs
    elif metric in METRIC_WORDS:
        option, what = _metric_gate(g, op, metric)
    elif op == "min_calls":
        option = "--explore-suff-min-calls"
        what = f"answered calls {n} {_OPS[op]} {th}"
    elif op == "max_drop":
        option = f"--max-{metric.replace('_', '-')}-drop"
        what = f"{metric} share drop from the baseline {'–' if value is None else f'{value:.3f}'}"
        if bound is not None:
            what += f" (at least {bound:.3f} at the 95% bound)"
        what += f" {_OPS[op]} {th}"
    else:
        option = f"--{op}-{metric.replace('_', '-')}"
        what = f"{metric} share {'–' if value is None else f'{value:.3f}'}"
        if bound is not None:
            side = "lower" if op == "min" else "upper"
            what += f" ({side} 95% bound {bound:.3f})"
        what += f" {_OPS.get(op, op)} {th}"
    if passed is None:
        state, text = "na", "not applicable"
        if metric not in METRIC_WORDS and op not in ("max_increase", "max_rel_increase", "control"):
            where_calls = " in the baseline" if op == "max_drop" and n else ""
            what = f"{metric} share: no answered explore calls{where_calls}, so not a pass"
    elif passed:
        state, text = "passed", "passed"
    else:
        state, text = "failed", "FAILED"
    return {
        "option": _shown(option),
        "where": where,
        "what": _shown(what),
        "metric": _shown(metric),
        "state": state,
        "text": text,
        "n": n,
        "passed": passed,
    }


def _heat_colour(share: float) -> str:
    """Diverging scale, vermillion (0) through near-white (0.5) to bluish green (1)."""

    def mix(c: str, t: float) -> str:
        r, g, b = (int(c[i : i + 2], 16) for i in (1, 3, 5))
        w = 247
        return "#{:02x}{:02x}{:02x}".format(*(round(w + (v - w) * t) for v in (r, g, b)))

    if share < 0.5:
        return mix("#D55E00", (0.5 - share) * 2 * 0.85)
    return mix("#009E73", (share - 0.5) * 2 * 0.85)


def _heatmap(transcripts: Sequence[Mapping[str, Any]], arms: Sequence[str]) -> dict[str, Any]:
    """Sufficient share per group x arm over classified transcripts, worst group first."""
    cells: dict[tuple[str, str], list[int]] = {}
    groups: dict[str, list[int]] = {}
    for t in transcripts:
        if t.get("status") != "classified":
            continue
        answered = int(t.get("answered") or 0)
        k = int((t.get("counts") or {}).get("sufficient") or 0)
        key = (str(t.get("group") or ""), str(t.get("arm") or ""))
        c = cells.setdefault(key, [0, 0, 0])
        c[0] += k
        c[1] += answered
        c[2] += 1
        g = groups.setdefault(key[0], [0, 0])
        g[0] += k
        g[1] += answered
    columns = [a for a in arms if any(cells.get((g, a), [0, 0])[1] for g in groups)]
    silent = [_shown(a) for a in arms if a not in columns]

    def cell(k: int, n: int, group: str, arm: str | None, tcount: int | None = None) -> dict[str, Any]:
        share = k / n if n else None
        return {
            "group": _shown(group),
            "arm": None if arm is None else _shown(arm),
            "k": k,
            "n": n,
            "transcripts": tcount,
            "share": share,
            "pct": pct(share),
            "colour": _heat_colour(share) if share is not None else "#eeeeee",
        }

    def cell_of(group: str, arm: str) -> dict[str, Any]:
        k, n, tcount = cells.get((group, arm), [0, 0, 0])
        return cell(k, n, group, arm, tcount)

    def order(group: str) -> tuple[int, float, str]:
        k, n = groups[group]
        return (0 if n else 1, k / n if n else 0.0, group)

    rows = []
    for group in sorted(groups, key=order):
        k, n = groups[group]
        rows.append(
            {
                "group": _shown(group) or "(no group)",
                "raw": _shown(group),
                "all": cell(k, n, group, None),
                "cells": [cell_of(group, a) for a in columns],
            }
        )
    return {"columns": [arm_label(_shown(a)) for a in columns], "rows": rows, "silent": silent}


def _worst(heatmap: Mapping[str, Any]) -> dict[str, Any] | None:
    """The group to look at first: the lowest sufficient share over all arms (rows come sorted)."""
    rows = [r for r in heatmap["rows"] if r["all"]["n"]]
    if len(rows) < 1:
        return None
    row = rows[0]
    return {
        "group": row["group"],
        "raw": row["raw"],
        "all": row["all"],
        "misses": row["all"]["n"] - row["all"]["k"],
        "cells": [c for c in row["cells"] if c["n"]],
        "of": len(rows),
    }


FIGURES = (
    ("explore_calls", "explore"),
    ("read_calls", "Read"),
    ("search_calls", "Grep/Glob"),
    ("bash_calls", "Bash"),
    ("other_calls", "other"),
    ("turns", "turns"),
    ("duration_ms", "duration"),
    ("cost_usd", "cost"),
)


def _figures(name: str, agg: Mapping[str, Any], pooled: bool = False) -> dict[str, Any]:
    figs = agg.get("figures") or {}
    return {
        "name": _shown(name),
        "label": POOLED if pooled else arm_label(_shown(name)),
        "pooled": pooled,
        "transcripts": int(agg.get("transcripts") or 0),
        "cells": [{"key": k, "raw": figs.get(k), "text": _figure(figs.get(k), k)} for k, _ in FIGURES],
    }


def _arm_table(arms: Mapping[str, Mapping[str, Any]]) -> dict[str, Any] | None:
    """The harness's arm table (`runtable.rows`), every row, each median with its p25."""
    try:
        rows = runtable.rows(arms)
    except (KeyError, TypeError, AttributeError):  # a report of an older schema: no table
        return None
    if not rows:
        return None
    return {
        "names": [_shown(a) for a in arms],
        "rows": [{"key": r.key, "label": r.label.strip(), "sub": r.label.startswith(" "),
                  "cells": [_shown(c) for c in r.cells]} for r in rows],
    }  # fmt: skip


def _coverage(cov: Any) -> dict[str, Any] | None:
    """``{collected, ran, partial|complete, why (text or list), not_run?}`` -> what the banner says."""
    if not isinstance(cov, Mapping):
        return None
    partial = bool(cov.get("partial")) if "partial" in cov else cov.get("complete") is False
    why = cov.get("why")
    if isinstance(why, (list, tuple)):
        why_text = "; ".join(_shown(w) for w in why)
    else:
        why_text = _shown(why) if why else ""
    return {"collected": cov.get("collected"), "ran": cov.get("ran"), "partial": partial, "why": why_text}


def _option_value(value: Any) -> str:
    if value is None:
        return "–"
    if isinstance(value, bool):
        return "yes" if value else "no"
    if isinstance(value, (dict, list)):
        return _shown(json.dumps(value, ensure_ascii=False))
    return _shown(value)


# -- the drill-down's data ---------------------------------------------------------------------------

#: Layout of the embedded drill-down data (arrays keep 10,000 transcripts compact):
#: transcript = [path, arm, group, run, kind, status, reason, flags, answered, errored,
#:               concurrent, warnings, files, lines, corrupt_lines, calls, allocation, occupancy,
#:               agent]
#: call = [thread, query, files, bucket index (-1: unknown), next, named, truncated, allocation]
#: transcript allocation = the reason it has none (a string), or
#:     [envelope, used, used_path, efficiency, efficiency_path, files_returned, files_used,
#:      has_answer, [[path, chars, calls, via (0 uncited, 1 path, 2 symbol), symbol], ...]]
#: call allocation = null (no returned-file section) or [efficiency, envelope, used, used_path,
#:     files, files_used]
#: occupancy = the reason it has none (a string), or
#:     [ctx_final, ctx_base, chars_per_token, calibrated, dispersion (null: none), turns,
#:      compactions, evicted, window, residual per family (FAMILIES order), contributed per
#:      family, residual_file_access, residual_retrieval, share]
T_FIELDS = (
    "path",
    "arm",
    "group",
    "run",
    "kind",
    "status",
    "reason",
    "flags",
    "answered",
    "errored",
    "concurrent",
    "warnings",
    "files",
    "lines",
    "corrupt_lines",
    "calls",
    "allocation",
    "occupancy",
    "agent",
)
#: With a truth file only, after `T_FIELDS`: [[question, turn, verdict, judge's verdict], ...].
T_TRUTH = "truth"
C_FIELDS = ("thread", "query", "files", "bucket", "next", "named", "truncated", "allocation")
#: With a truth file only, after `C_FIELDS` on a call of a covered answer: [gold share, incidental share].
C_TRUTH = "gold"
_VIA = {"path": 1, "symbol": 2}


def _mapping(value: Any) -> Mapping[str, Any]:
    return value if type(value) is dict or isinstance(value, Mapping) else {}


def _seq(value: Any) -> Sequence[Any]:
    """A JSON array, or nothing: a malformed field draws as empty rather than failing the page."""
    return value if isinstance(value, (list, tuple)) else ()


#: Every int up to this size is a float exactly: ``int(float(v)) == v``.
_EXACT_INT = 2**53


def _int(value: Any) -> int:
    """A JSON number as an int (through a float, as the page has always shown it); 0 otherwise."""
    if type(value) is int and -_EXACT_INT <= value <= _EXACT_INT:
        return value  # what the float would give back: most figures are such counts
    x = _num(value)
    return int(x) if x is not None else 0


def _reason(value: Any, default: str) -> str:
    return _shown(value) if value else default


def _allocation_data(t: Mapping[str, Any]) -> tuple[Any, dict[str, list[Any]]]:
    """(the transcript's allocation entry, per-call entries by call id)."""
    a = t.get("allocation")
    if not isinstance(a, Mapping):
        return _reason(t.get("allocation_reason"), "no allocation figure"), {}
    by_id: dict[str, list[Any]] = {}
    for c in _seq(a.get("calls")):
        if isinstance(c, Mapping):
            by_id[str(c.get("id"))] = [
                _num(c.get("efficiency")),
                _int(c.get("envelope")),
                _int(c.get("used")),
                _int(c.get("used_path")),
                _int(c.get("files")),
                _int(c.get("files_used")),
            ]
    files = [
        [
            _shown(f.get("path")),
            _int(f.get("chars")),
            _int(f.get("calls")),
            _VIA.get(str(f.get("via")), 0),
            _shown(f.get("symbol")) if f.get("symbol") else "",
        ]
        for f in _seq(a.get("files"))
        if isinstance(f, Mapping)
    ]
    entry = [
        _int(a.get("envelope")),
        _int(a.get("used")),
        _int(a.get("used_path")),
        _num(a.get("efficiency")),
        _num(a.get("efficiency_path")),
        _int(a.get("files_returned")),
        _int(a.get("files_used")),
        1 if a.get("has_answer") else 0,
        files,
    ]
    return entry, by_id


def _occupancy_data(t: Mapping[str, Any]) -> Any:
    o = t.get("occupancy")
    if not isinstance(o, Mapping):
        return _reason(t.get("occupancy_reason"), "no occupancy figure")
    res, con = _mapping(o.get("residual")), _mapping(o.get("contributed"))
    return [
        _int(o.get("ctx_final")),
        _int(o.get("ctx_base")),
        _num(o.get("chars_per_token")),
        1 if o.get("calibrated") else 0,
        _num(o.get("dispersion")),
        _int(o.get("turns")),
        _int(o.get("compactions")),
        _int(o.get("evicted")),
        _int(o.get("window")),
        [_int(res.get(f)) for f in FAMILIES],
        [_int(con.get(f)) for f in FAMILIES],
        _int(o.get("residual_file_access")),
        _int(o.get("residual_retrieval")),
        _num(o.get("share")),
    ]


def _truth_units(units: Any) -> list[list[Any]]:
    out = []
    for u in _seq(units):
        if isinstance(u, Mapping):
            judge = u.get("judge")
            out.append([
                _shown(u.get("question")), u.get("turn") if isinstance(u.get("turn"), int) else None,
                _shown(u.get("verdict")),
                _shown(judge.get("verdict")) if isinstance(judge, Mapping) else None,
            ])  # fmt: skip
    return out


def drilldown_data(document: Mapping[str, Any]) -> dict[str, Any]:
    index = {k: i for i, k in enumerate(KEYS)}
    ts = []
    for t in document.get("transcripts") or ():
        if not isinstance(t, Mapping):
            continue
        alloc, by_id = _allocation_data(t)
        calls = []
        for c in t.get("calls") or ():
            if not isinstance(c, Mapping):
                continue
            thread = c.get("thread")
            row = [
                "main" if thread in (None, "main") else _shown(thread),
                _shown(c.get("query")),
                _int(c.get("files")),
                index.get(str(c.get("bucket")), -1),
                _shown(c.get("next")),
                1 if c.get("named") else 0,
                1 if c.get("truncated") else 0,
                by_id.get(str(c.get("id"))),
            ]
            if "gold_share" in c:  # a call of an answer a truth file's question covers
                row.append([_num(c.get("gold_share")), _num(c.get("incidental_share"))])
            calls.append(row)
        flags = [str(k) for k, v in sorted((t.get("flags") or {}).items()) if v]
        files = [_shown(f) for f in t.get("files") or ()]
        ts.append(
            [
                _shown(t.get("path")),
                _shown(t.get("arm")),
                _shown(t.get("group")),
                _shown(t.get("run")),
                _shown(t.get("kind")),
                _shown(t.get("status")),
                _shown(t.get("reason")),
                flags,
                _int(t.get("answered")),
                _int(t.get("errored")),
                _int(t.get("concurrent")),
                [_shown(w) for w in t.get("warnings") or ()],
                files if len(files) > 1 else [],
                _int(t.get("lines")),
                _int(t.get("corrupt_lines")),
                calls,
                alloc,
                _occupancy_data(t),
                _shown(t.get("agent")),
                # only with a truth file: [question, turn, verdict, judge's verdict or null] per unit
                *([_truth_units(t.get("truth"))] if "truth" in t else []),
            ]
        )
    ignored = [
        [_shown(i.get("path")), _shown(i.get("reason"))]
        for i in document.get("ignored") or ()
        if isinstance(i, Mapping)
    ]
    cov = document.get("coverage")
    not_run = []
    if isinstance(cov, Mapping):
        not_run = [
            [_shown(n.get("path") or n.get("nodeid")), _shown(n.get("why"))]
            for n in cov.get("not_run") or ()
            if isinstance(n, Mapping)
        ]
    return {
        "buckets": [{"key": b.key, "label": b.label} for b in BUCKETS],
        "families": [{"key": f, "label": FAMILY_LABELS[f], "colour": FAMILY_COLOURS[f]} for f in FAMILIES],
        "transcripts": ts,
        "ignored": ignored,
        "not_run": not_run,
    }


def script_json(data: Any) -> str:
    """JSON safe inside ``<script type="application/json">``: no ``<``, ``>`` or ``&`` at all."""
    text = json.dumps(data, ensure_ascii=False, separators=(",", ":"), allow_nan=False)
    return (
        text.replace("&", "\\u0026")
        .replace("<", "\\u003c")
        .replace(">", "\\u003e")
        .replace("\u2028", "\\u2028")
        .replace("\u2029", "\\u2029")
    )


# -- rendering ---------------------------------------------------------------------------------------


@cache
def _environment() -> Environment:
    env = Environment(
        loader=PackageLoader("pytest_explore_suff", "templates"),
        autoescape=True,
        undefined=StrictUndefined,
        trim_blocks=True,
        lstrip_blocks=True,
    )
    env.filters["pct"] = pct
    env.filters["points"] = points
    return env


@cache
def _asset(name: str) -> str:
    return resources.files("pytest_explore_suff").joinpath("templates").joinpath(name).read_text("utf-8")


def _sha256(text: str) -> str:
    return base64.b64encode(hashlib.sha256(text.encode("utf-8")).digest()).decode("ascii")


def _gates_summary(gates: Sequence[Mapping[str, Any]]) -> dict[str, int]:
    return {
        "failed": sum(1 for g in gates if g["state"] == "failed"),
        "na": sum(1 for g in gates if g["state"] == "na"),
        "passed": sum(1 for g in gates if g["state"] == "passed"),
    }


def context(document: Mapping[str, Any]) -> dict[str, Any]:
    """Everything the template shows, computed from the report document."""
    arms: dict[str, Mapping[str, Any]] = {
        str(k): v for k, v in _mapping(document.get("arms")).items() if isinstance(v, Mapping)
    }
    pooled = document.get("pooled") if isinstance(document.get("pooled"), Mapping) else None
    bars = [_arm_bar(name, agg) for name, agg in arms.items()]
    if pooled is not None and len(arms) > 1:
        bars.append(_arm_bar(POOLED, pooled, pooled=True))
    figures = [_figures(name, agg) for name, agg in arms.items()]
    if pooled is not None and len(arms) > 1:
        figures.append(_figures(POOLED, pooled, pooled=True))
    transcripts = [t for t in document.get("transcripts") or () if isinstance(t, Mapping)]
    gates = [_gate(g) for g in _seq(document.get("gates")) if isinstance(g, Mapping)]
    statuses: dict[str, int] = {}
    for t in transcripts:
        statuses[str(t.get("status"))] = statuses.get(str(t.get("status")), 0) + 1
    script = _asset("report.js")
    heatmap = _heatmap(transcripts, list(arms))
    campaign = _shown(document.get("campaign"))
    return {
        "campaign": campaign,
        "title": os.path.basename(campaign.rstrip("/\\")) or campaign or "campaign",
        "schema": _shown(document.get("schema")),
        "plugin_version": _shown(document["plugin_version"]) if document.get("plugin_version") else None,
        "coverage": _coverage(document.get("coverage")),
        "options": [(_shown(k), _option_value(v)) for k, v in _mapping(document.get("options")).items()],
        "buckets": [
            {"key": b.key, "label": b.label, "meaning": b.meaning, "colour": COLOURS[b.key]} for b in BUCKETS
        ],
        "bars": bars,
        "bar_width": BAR_WIDTH,
        "panels": _dot_panels(arms),
        "dot_plot": DOT_PLOT,
        "dot_width": DOT_WIDTH,
        "worst": _worst(heatmap),
        "comparison": _comparison(document.get("comparison")),
        "allocation": _allocation_panel(arms),
        "truth": _truth_panel(document, arms),
        "repeats": _repeats_panel(arms),
        "occupancy": _occupancy_bars(arms, transcripts),
        "residual": _residual_chart(document.get("metrics_comparison")),
        "alloc_colour": ALLOC_COLOUR,
        "higher": HIGHER,
        "lower": LOWER,
        "baseline": _baseline(document.get("baseline")),
        "trend": _trend(document.get("trend")),
        "gates": gates,
        "gates_summary": _gates_summary(gates),
        "heatmap": heatmap,
        "figure_names": [label for _, label in FIGURES],
        "arm_table": _arm_table(arms),
        "figures": figures,
        "statuses": statuses,
        "n_transcripts": len(transcripts),
        # What the figures count: the calls of the classified transcripts (a skipped one's are out).
        "n_calls": sum(len(t.get("calls") or ()) for t in transcripts if t.get("status") == "classified"),
        "n_ignored": len(document.get("ignored") or ()),
        "all_arms": ALL_ARMS,
        "data_json": Markup(script_json(drilldown_data(document))),
        "script": Markup(script),
        "script_hash": _sha256(script),
        "style": Markup(_asset("report.css")),
    }


def arm_summary(arms: Mapping[str, Any], pooled: Mapping[str, Any]) -> str:
    """The per-arm tables as pytest-html's summary shows them: the terminal's, escaped
    (the buckets, then allocation and occupancy where the arms have them)."""
    table = arm_table(dict(arms), dict(pooled)) if arms else "no classified transcripts"
    blocks = [b for b in (allocation_table(dict(arms)), occupancy_table(dict(arms))) if b is not None]
    return str(Markup("<h2>Explore sufficiency</h2><pre>{}</pre>").format("\n\n".join([table, *blocks])))


def render_html(document: Mapping[str, Any]) -> str:
    """The report as one self-contained HTML page."""
    return _environment().get_template("report.html.j2").render(**context(document))


def write_html_atomic(path: str, document: Mapping[str, Any]) -> None:
    """Write the page so that readers see the old complete file or the new one, never half."""
    write_bytes_atomic(
        path, render_html(document).encode("utf-8")
    )  # rendered first: a failure leaves the old file


def main(argv: Sequence[str] | None = None) -> int:
    """``python -m pytest_explore_suff.html REPORT.json OUT.html``."""
    args = list(sys.argv[1:] if argv is None else argv)
    if len(args) != 2:
        print("usage: python -m pytest_explore_suff.html REPORT.json OUT.html", file=sys.stderr)
        return 2
    with open(args[0], encoding="utf-8") as fh:
        document = json.load(fh)
    write_html_atomic(args[1], document)
    return 0


if __name__ == "__main__":  # pragma: no cover
    raise SystemExit(main())
