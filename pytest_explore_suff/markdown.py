"""The report as a Markdown summary, for a CI job summary ($GITHUB_STEP_SUMMARY) or a
pull-request comment: per arm the buckets, the two other metrics, the gates with their
verdict, the change against the baseline and the trend. Rendered from the JSON
document, so the ``explore-suff markdown`` command and the plugin write the same."""

from __future__ import annotations

import html
import os
from collections.abc import Iterator
from typing import Any

from . import runtable
from .buckets import BUCKETS
from .gates import outcome_of
from .terminal import clean, percent

RELATION_WORDS = {
    "same": "the same campaign re-judged (every transcript byte-identical): any difference is the "
    "judge's, not the tool's",
    "overlapping": "an overlapping campaign (some transcripts byte-identical)",
    "new": "a new campaign (no transcript byte-identical)",
    "unknown": "the baseline has no digests this version compares (an older report): same campaign "
    "or not is not known",
}


_MARKUP = {ord(c): "\\" + c for c in "\\|`*_[]~"}


def _text(value: object) -> str:
    """A cell: no markup from a campaign's names (HTML is rendered in GitHub's Markdown, and
    ``*``, ``_``, ``~`` and brackets would make emphasis, strike-through or links)."""
    return html.escape(clean(value), quote=False).translate(_MARKUP)


def _pct(x: float | None) -> str:
    # halves up, as the terminal and the page round (a share of 1/8 is 13% in all three)
    return "–" if x is None else percent(x)


def _interval(p: dict[str, Any] | None) -> str:
    if not p or p.get("lo") is None or p.get("hi") is None:
        return ""
    return f" [{percent(p['lo'])}–{percent(p['hi'])}]"


def _signed(x: float | None) -> str:
    return "–" if x is None else f"{x * 100:+.1f} pts"


def markdown(doc: dict[str, Any]) -> str:
    """The summary of one report (any readable schema)."""
    return "\n".join(_lines(doc)) + "\n"


def _lines(doc: dict[str, Any]) -> Iterator[str]:
    run = doc.get("run") or {}
    title = f"Explore sufficiency: {_text(doc.get('campaign', ''))}"
    if run:
        title += f" (run {run.get('number')}" + (f", {_text(run['name'])}" if run.get("name") else "")
        title += f", {_text(run['commit'][:10])})" if run.get("commit") else ")"
    yield f"### {title}"
    yield ""
    failed = [g for g in doc.get("gates", []) if not g.get("passed")]
    verdict = "**gates: FAILED**" if failed else ("**gates: passed**" if doc.get("gates") else "no gates")
    cov = doc.get("coverage") or {}
    yield f"{verdict} · {cov.get('ran', '?')} of {cov.get('collected', '?')} transcripts judged"
    if cov.get("complete") is False:
        yield ""
        why = "; ".join(map(str, cov.get("why") or [])) or "not every transcript ran"
        yield f"> **Partial run**: {_text(why)}."
    arms = doc.get("arms") or {}
    yield ""
    if not arms:
        yield "No classified transcripts."
    else:
        names = list(arms)
        yield "| | " + " | ".join(_text(a) for a in names) + " |"
        yield "|---|" + "---:|" * len(names)
        yield "| answered calls | " + " | ".join(str(arms[a]["answered"]) for a in names) + " |"
        for b in BUCKETS:
            cells = []
            for a in names:
                agg = arms[a]
                if not agg["answered"]:
                    cells.append("–")
                    continue
                cells.append(
                    f"{_pct(agg['shares'][b.key])}{_interval((agg.get('intervals') or {}).get(b.key))}"
                )
            yield f"| {b.label} | " + " | ".join(cells) + " |"
        alloc = [(arms[a].get("allocation") or {}).get("efficiency") for a in names]
        yield "| allocation efficiency | " + " | ".join(
            "–" if e is None else f"{_pct(e['share'])}{_interval(e)}" for e in alloc) + " |"  # fmt: skip
        occ = [arms[a].get("occupancy") or {} for a in names]
        # M10: "\~" (a bare ~ can start a strikethrough) marks a figure that includes estimates.
        yield (
            "| retrieval residual share (median) | "
            + " | ".join(
                ("\\~" if o.get("estimated") else "") + _pct((o.get("share") or {}).get("median"))
                for o in occ
            )
            + " |"
        )
        if any(o.get("estimated") for o in occ):
            yield ""
            yield "\\~ includes estimated figures (the log gives the window only at the end)"
    table = runtable.rows(arms) if arms else []
    if table:
        yield ""
        yield "**Run figures** (per run: median (p25) [min-max])"
        yield ""
        yield "| | " + " | ".join(_text(a) for a in arms) + " |"
        yield "|---|" + "---:|" * len(arms)
        for r in table:
            # "\\$": two dollars in one line are math on GitHub
            row = " | ".join(_text(c).replace("$", "\\$") for c in r.cells)
            yield f"| {_text(r.label.strip())} | {row} |"
    if arms:
        yield from _truth_lines(doc, list(arms))
        yield from _repeat_lines(arms)
    gates = doc.get("gates") or []
    if gates:
        yield ""
        yield "**Gates**"
        yield ""
        for g in gates:
            mark = "✅" if g.get("passed") else ("❌" if g.get("passed") is False else "⚠️")
            yield f"- {mark} {_text(outcome_of(g).describe())}"
    base = doc.get("baseline")
    if base:
        yield ""
        rel = (base.get("campaign") or {}).get("relation")
        yield f"**Against the baseline** `{_text(os.path.basename(str(base.get('report', ''))))}`" + (
            f": {RELATION_WORDS.get(rel, rel)}" if rel else "")  # fmt: skip
        yield ""
        yield "| arm | sufficient, baseline | now | change [95%] |"
        yield "|---|---:|---:|---:|"
        for arm, cmp in (base.get("arms") or {}).items():
            s = cmp["buckets"]["sufficient"]
            ci = "" if s.get("lo") is None else f" [{s['lo'] * 100:+.1f}, {s['hi'] * 100:+.1f}]"
            old, new = _pct(s.get("old")), _pct(s.get("new"))
            yield f"| {_text(arm)} | {old} | {new} | {_signed(s.get('diff'))}{ci} |"
        for arm, cmp in (base.get("arms") or {}).items():
            yield from _moved_lines(cmp.get("questions"), f"arm {_text(arm)}", "moved", ("old", "new"))
    cmp = doc.get("comparison")
    if isinstance(cmp, dict) and cmp.get("questions"):
        yield ""
        first, second = _text(cmp.get("a")), _text(cmp.get("b"))
        yield f"**Between the arms** {first} and {second}, per group"
        who = f"{first} against {second}"
        yield from _moved_lines(cmp["questions"], who, "differs between the arms", ("b", "a"))
    trend = doc.get("trend")
    if trend and trend.get("runs"):
        yield ""
        labels = [r["label"] for r in trend["runs"]]
        runs = f"{len(labels)} run{'' if len(labels) == 1 else 's'}"
        yield f"**Trend** over {runs} ({_text(', '.join(labels))})"
        yield ""
        yield "| arm | metric | latest | best earlier | change [95%] |"
        yield "|---|---|---:|---:|---:|"
        for arm, data in trend["arms"].items():
            for metric, vs in data["latest_vs_best"].items():
                if vs is None:
                    continue
                ci = "" if vs.get("lo") is None else f" [{vs['lo'] * 100:+.1f}, {vs['hi'] * 100:+.1f}]"
                mark = " (worse beyond noise)" if vs.get("beyond_noise") and vs["diff"] < 0 else ""
                best = f"{_pct(vs['best_share'])} ({_text(labels[vs['best']])})"
                yield (f"| {_text(arm)} | {metric} | {_pct(vs['latest'])} | {best} | "
                       f"{_signed(vs['diff'])}{ci}{mark} |")  # fmt: skip


def _truth_lines(doc: dict[str, Any], names: list[str]) -> Iterator[str]:
    """The ground truth per arm, when the report was graded against a truth file."""
    info = doc.get("truth")
    if not isinstance(info, dict):
        return
    arms = doc.get("arms") or {}
    truth = [arms[a].get("truth") or {} for a in names]
    yield ""
    name = _text(os.path.basename(str(info.get("path", ""))))
    digest = _text(str(info.get("digest", ""))[:12])
    n = info.get("questions")
    yield f"**Ground truth** `{name}` ({n} question{'' if n == 1 else 's'}, digest `{digest}`)"
    yield ""
    yield "| | " + " | ".join(_text(a) for a in names) + " |"
    yield "|---|" + "---:|" * len(names)

    def share(s: Any, k: str, n: str) -> str:
        return "–" if not s else f"{s[k]}/{s[n]} {_pct(s['share'])}{_interval(s)}"

    def row(label: str, cells: Iterator[str]) -> str:
        return f"| {label} | " + " | ".join(cells) + " |"

    yield row(
        "answer units (no question)", (f"{t.get('questions', 0)} ({t.get('no_question', 0)})" for t in truth)
    )
    yield row("pass / partial / fail", (
        "{pass} / {partial} / {fail}".format(**t["verdicts"]) if t else "–" for t in truth))  # fmt: skip
    yield row("correct", (share(t.get("correct_share"), "pass", "judged") for t in truth))
    yield row(
        "sufficient, then wrong", (share(t.get("false_sufficient"), "fail", "sufficient") for t in truth)
    )
    yield row("gold share (pooled)", (_pct((t.get("gold_share") or {}).get("pooled")) for t in truth))
    yield row("gold recall (median)", (_pct((t.get("gold_recall") or {}).get("median")) for t in truth))


def _moved_lines(rows: Any, who: str, verb: str, sides: tuple[str, str]) -> Iterator[str]:
    """The groups whose sufficient share moved beyond noise (Holm over the groups), worse
    first, each ``before -> after (change [95%])``; a line saying none did otherwise."""
    rows = [r for r in rows or () if isinstance(r, dict)]
    if not rows:
        return
    moved = [r for r in rows if r.get("moved") is True]
    yield ""
    if not moved:
        yield f"{who}: no group's sufficient share {verb} beyond noise ({len(rows)} compared, Holm)."
        return
    yield f"{who}: groups whose sufficient share {verb} beyond noise ({len(moved)} of {len(rows)}, Holm):"
    yield ""
    for r in moved:
        ci = "" if r.get("lo") is None else f" [{r['lo'] * 100:+.1f}, {r['hi'] * 100:+.1f}]"
        yield (f"- {_text(r.get('group'))}: {_pct(r.get(sides[0]))} → {_pct(r.get(sides[1]))} "
               f"({_signed(r.get('diff'))}{ci})")  # fmt: skip


def _repeat_lines(arms: dict[str, Any]) -> Iterator[str]:
    """A row per arm whose questions ran more than once (and on correctness, with a truth
    file): pass^k, pass^1, the questions whose runs disagree, the spread between runs."""
    rows = []
    for name, agg in arms.items():
        r = agg.get("repeats") or {}
        for key, label in (("sufficient", _text(name)), ("correct", f"{_text(name)}, correct")):
            s = r.get(key)
            if not s:
                continue
            runs = s["k"] if s["k"] == s["k_max"] else f"{s['k']}–{s['k_max']}"
            sd = "–" if s.get("sd") is None else f"{s['sd'] * 100:.0f} pts"
            rows.append(f"| {label} | {s['questions']} × {runs} | {_pct(s['pass_k'])} | {_pct(s['pass_1'])} "
                        f"| {s['disagree']} | {sd} |")  # fmt: skip
    if not rows:
        return
    yield ""
    yield ("**Repeats** (pass^k: all k runs of a question pass, k its fewest runs; a run passes when every "
           "answered call is sufficient, or its answer is correct)")  # fmt: skip
    yield ""
    yield "| arm | questions × runs | pass^k | pass^1 | runs disagree | sd between runs |"
    yield "|---|---:|---:|---:|---:|---:|"
    yield from rows


def append_markdown(path: str, doc: dict[str, Any]) -> None:
    """Append the summary to ``path`` (a job summary collects every step's)."""
    with open(path, "a", encoding="utf-8") as fh:
        fh.write(markdown(doc) + "\n")
