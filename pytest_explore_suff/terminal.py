"""What the terminal summary prints: the per-arm table and the per-call lines."""

from __future__ import annotations

import re
from typing import Any

from tabulate import tabulate

from .buckets import BUCKETS

#: Below this many answered calls an arm's shares are too coarse to compare:
#: at n=30 a 95% interval on a share near 0.5 is still about +/-0.18 wide, and
#: calls inside one run are correlated, so the real interval is wider.
SMALL_ARM_CALLS = 30

# C0 and C1 controls (ANSI escapes start with one), line separators, and the
# bidirectional marks and overrides that can reorder what a terminal shows.
_CONTROL = re.compile(r"[\x00-\x1f\x7f-\x9f\u200e\u200f\u2028-\u202e\u2066-\u2069]")


def clean(text: object) -> str:
    """Escape control characters (ANSI escapes included) so a transcript can't drive the terminal."""
    s = str(text)
    return _CONTROL.sub(lambda m: m.group().encode("unicode_escape").decode("ascii"), s)


def _pct(x: float) -> str:
    return f"{x * 100:.0f}"


def _cell(count: int, answered: int, interval: dict[str, Any] | None = None) -> str:
    if not answered:
        return str(count)
    cell = f"{count} ({count / answered:.0%})"
    if interval is not None:
        cell += f" [{_pct(interval['lo'])}-{_pct(interval['hi'])}]"
    return cell


def arm_table(arms: dict[str, dict[str, Any]], pooled: dict[str, Any]) -> str:
    """Buckets down (worst to best, as the harness prints them), arms across."""
    columns = [*arms.items(), ("(pooled)", pooled)] if len(arms) > 1 else list(arms.items())
    headers = ["", *(clean(name) for name, _ in columns), ""]
    rows: list[list[object]] = [
        ["transcripts", *(agg["transcripts"] for _, agg in columns), ""],
        ["answered calls", *(agg["answered"] for _, agg in columns), ""],
    ]
    for b in BUCKETS:
        rows.append(
            [
                b.label,
                *(
                    _cell(agg["counts"][b.key], agg["answered"], agg["intervals"][b.key])
                    for _, agg in columns
                ),
                b.meaning,
            ]
        )
    rows.append(["errored (not bucketed)", *(agg["errored"] for _, agg in columns), ""])
    rows.append(["concurrent (same message)", *(agg["concurrent"] for _, agg in columns), ""])
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
    return f"{round(x * 100):+d}"  # round() first: no "-0"


def comparison_table(cmp: dict[str, Any]) -> str:
    """Each bucket's share in two arms and the difference with its 95% interval."""
    kind = "paired by group" if cmp["paired"] else "unpaired"
    headers = ["", clean(cmp["a"]), clean(cmp["b"]), f"difference, points [95%] ({kind})"]
    rows = []
    for b in BUCKETS:
        d = cmp["buckets"][b.key]
        rows.append([b.label, f"{d['a']:.0%}", f"{d['b']:.0%}",
                     f"{_signed(d['diff'])} [{_signed(d['lo'])}, {_signed(d['hi'])}]"])  # fmt: skip
    return str(tabulate(rows, headers=headers, tablefmt="simple", disable_numparse=True))


def baseline_table(arms: dict[str, Any]) -> str:
    """Per arm and bucket: baseline share, this campaign's share, and the change."""
    headers = ["arm", "bucket", "baseline", "now", "change, points [95%]"]
    rows = []
    for arm, cmp in arms.items():
        if not (cmp["n_old"] or cmp["n_new"]):
            continue
        for b in BUCKETS:
            d = cmp["buckets"][b.key]
            old, new = f"{d['old']:.0%} (n={cmp['n_old']})", f"{d['new']:.0%} (n={cmp['n_new']})"
            change = f"{_signed(d['diff'])} [{_signed(d['lo'])}, {_signed(d['hi'])}]"
            rows.append([clean(arm), b.label, old, new, change])
    return str(tabulate(rows, headers=headers, tablefmt="simple", disable_numparse=True))
