"""The arm table's rows (the original harness's ``compare-arms.mjs``), as text cells.

One list of rows serves the terminal summary, the Markdown summary and the HTML page:
each row is a key, a label and one cell per arm, from the report's ``arms.<arm>``
(`report.table_summary`). Plain library code: no pytest import.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from typing import Any, NamedTuple

DASH = "-"


class Row(NamedTuple):
    key: str
    label: str
    cells: list[str]


def _half_up(x: float) -> int:
    return int(x + 0.5) if x >= 0 else -int(-x + 0.5)


def count(x: float | None) -> str:
    return DASH if x is None else f"{_half_up(x):,}"


def tenths(x: float | None) -> str:
    return DASH if x is None else f"{_half_up(x * 10) / 10:.1f}"


def usd(x: float | None) -> str:
    return DASH if x is None else f"${x:.2f}" if abs(x) >= 0.995 else f"${x:.3f}"


def pct(x: float | None) -> str:
    return DASH if x is None else f"{_half_up(x * 100)}%"


def spread(s: Mapping[str, Any] | None, fmt: Callable[[float | None], str], p25: bool) -> str:
    """``median [min-max]``, or with ``p25``: ``median (p25 x) [min-max]``; one value alone."""
    if not s or s.get("median") is None:
        return DASH
    med, lo, hi = fmt(s["median"]), fmt(s["min"]), fmt(s["max"])
    if lo == hi:
        return med
    q = f" (p25 {fmt(s['p25'])})" if p25 and s.get("p25") is not None else ""
    return f"{med}{q} [{lo}-{hi}]"


def _interval(r: Mapping[str, Any]) -> str:
    return f"{pct(r['share'])} [{pct(r['lo'])}-{pct(r['hi'])}]"


def _total(cost: Mapping[str, Any], key: str) -> float | None:
    return (cost.get(key) or {}).get("total")


def _of(k: int | None, n: int | None) -> str:
    return DASH if not n else f"{k} of {n}"


def rows(arms: Mapping[str, Mapping[str, Any]], *, verbose: bool = True, p25: bool = True) -> list[Row]:
    """The table's rows, arms across. Without ``verbose`` only what the default summary
    shows: runs (and the non-success, raced and contaminated ones when any arm has them),
    duration and tool calls."""
    names = list(arms)
    figs = [arms[a].get("run_figures") or {} for a in names]
    if not any(figs):
        return []
    out: list[Row] = [Row("runs", "runs", [str(f.get("runs", 0)) for f in figs])]

    def some(key: str) -> bool:
        return any(f.get(key) for f in figs)

    if some("non_success"):
        out.append(Row("non_success", "  of which non-success", [str(f.get("non_success", 0)) for f in figs]))
    if some("raced"):
        out.append(Row("raced", "  MCP cold-start races", [str(f.get("raced", 0)) for f in figs]))

    def row(key: str, label: str, fmt: Callable[[float | None], str] = count) -> Row:
        return Row(key, label, [spread(f.get(key), fmt, p25) for f in figs])

    # Tenths of a second while every run is short, whole seconds otherwise: one precision a cell.
    out.append(
        Row(
            "duration_s",
            "duration (s)",
            [
                spread(
                    f.get("duration_s"),
                    tenths
                    if (f.get("duration_s") or {}).get("max") is not None and f["duration_s"]["max"] < 10
                    else count,
                    p25,
                )
                for f in figs
            ],
        )
    )
    out.append(row("tool_calls", "tool calls"))
    if verbose:
        out += [
            row("read", "Read"),
            row("search", "Grep/Glob"),
            row("bash", "Bash"),
            row("retrieval", "retrieval-tool calls"),
        ]
        if any((f.get("tokens_processed") or {}).get("runs") for f in figs):
            out.append(row("tokens_processed", "tokens processed"))
        if any((f.get("cost_usd") or {}).get("runs") for f in figs):
            out.append(row("cost_usd", "cost", usd))
    if verbose or some("cli_returned") or some("contaminated"):
        out.append(
            Row(
                "cli_returned",
                "CLI calls that returned output",
                [str(f.get("cli_returned", 0)) for f in figs],
            )
        )
        out.append(Row("cli_blocked", "CLI attempts blocked", [str(f.get("cli_blocked", 0)) for f in figs]))
    if not verbose:
        return out
    dups = [arms[a].get("duplicate") for a in names]
    if any(dups):
        out.append(
            Row(
                "duplicate_share",
                "duplicate share [95%]",
                [DASH if d is None else _interval(d["duplicate_share"]) for d in dups],
            )
        )
        out.append(
            Row(
                "duplicate_per_run",
                "duplicate share per run",
                [DASH if d is None else spread(d["per_run"], pct, p25) for d in dups],
            )
        )
    ab = [arms[a].get("abandon") or {} for a in names]
    out.append(Row("abandoned", "abandoned the tool", [_of(x.get("abandoned"), x.get("runs")) for x in ab]))
    out.append(
        Row(
            "errored_retrieval_runs",
            "runs with an errored response",
            [str(x.get("errored_retrieval_runs", 0)) for x in ab],
        )
    )
    out.append(
        Row(
            "last_call_retrieval",
            "last tool call was the tool",
            [_of(x.get("last_call_retrieval"), x.get("last_call_runs")) for x in ab],
        )
    )
    costs = [arms[a].get("cost") or {} for a in names]
    if any((c.get("main_usd") or {}).get("runs") for c in costs):
        out.append(
            Row(
                "cost_split",
                "cost main / subagents (total)",
                [f"{usd(_total(c, 'main_usd'))} / {usd(_total(c, 'subagents_usd'))}" for c in costs],
            )
        )
    if any((c.get("tokens_main") or {}).get("runs") for c in costs):
        out.append(
            Row(
                "tokens_split",
                "tokens main / subagents (median)",
                [
                    f"{count((c.get('tokens_main') or {}).get('median'))} / "
                    f"{count((c.get('tokens_subagents') or {}).get('median'))}"
                    for c in costs
                ],
            )
        )
    if any((c.get("cache_read_share") or {}).get("runs") for c in costs):
        out.append(
            Row(
                "cache_read_share",
                "cache reads of input tokens",
                [pct((c.get("cache_read_share") or {}).get("pooled")) for c in costs],
            )
        )
    return out
