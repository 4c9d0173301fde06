#!/usr/bin/env python3
"""A/A and power of the gate set: how often it fails when nothing changed, and when something did.

    python benchmarks/generate.py /tmp/aa --size-mb 38 --profile aa --seed 7
    pytest --explore-suff=/tmp/aa --explore-suff-json=/tmp/aa.json -p no:randomly
    python benchmarks/aa.py /tmp/aa.json --splits 200 --shifts 0.05,0.10,0.15,0.20
    python benchmarks/aa.py /tmp/aa.json --splits 200 --by-check   # which check fails, alone

One campaign's report, its transcripts split at random into two halves (by group, the
repository: ``--unit group``; or by run folder, ``--unit run``) many times; one half is
the baseline of the other, and the gates are decided between them exactly as the plugin
decides them: `document.build` with the baseline's records, then the family correction
(no pytest process per split; the records are the report's, as `--explore-suff-baseline`
reads them). A split fails when any gate fails. The A/A table is the share of splits that
fail with nothing changed (the false-alarm rate of the gate set); with ``--shifts`` a
share of one arm's sufficient calls in the new half is turned into "explore again" so
that its sufficient share drops by that many points, and the share of splits that fail
is the power.

``--trend DIR...``: the reports of independent A/A runs (e.g. ten campaigns made with
seeds 1..10), oldest first: every window of two or more consecutive runs is a trend,
and the share of windows whose trend gate fires is its false-alarm rate (against the
earlier runs pooled, as the gate decides; against the best of them, as it used to).

Every figure is seeded: the same report and arguments print the same table.
"""

from __future__ import annotations

import argparse
import json
import os
import random
import sys
import time
from collections.abc import Sequence
from typing import Any

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), ".."))

from pytest_explore_suff.document import Coverage, Options, build
from pytest_explore_suff.gates import ALPHA, Gate, correct
from pytest_explore_suff.trend import trend, trend_gates

#: The gate sets measured: name -> (max sufficient drop, max allocation drop, max residual
#: growth, --explore-suff-min-calls), all decided on the bound.
GATE_SETS: dict[str, tuple[float, float, float, int | None]] = {
    "drops at 0": (0.0, 0.0, 0.0, None),
    "CI recipe": (0.05, 0.05, 0.2, 30),
}


def unit_of(rec: dict[str, Any], unit: str) -> str:
    """What a split keeps together: a group (repository), or a run folder (a question's runs
    of both arms)."""
    if unit == "group":
        return str(rec["group"])
    return str(rec["path"]).rsplit("/", 1)[0]


def split(records: Sequence[dict[str, Any]], unit: str, rng: random.Random) -> tuple[list[Any], list[Any]]:
    units = sorted({unit_of(r, unit) for r in records})
    rng.shuffle(units)
    old = set(units[: len(units) // 2])
    a = [r for r in records if unit_of(r, unit) in old]
    b = [r for r in records if unit_of(r, unit) not in old]
    return a, b


def shifted(
    records: list[dict[str, Any]], arm: str, points: float, rng: random.Random
) -> list[dict[str, Any]]:
    """``arm``'s sufficient share lowered by ``points`` in expectation: each sufficient call
    turned into "explore again" with the chance that does it."""
    mine = [r for r in records if r["arm"] == arm and r["status"] == "classified"]
    answered = sum(r["answered"] for r in mine)
    sufficient = sum(r["counts"]["sufficient"] for r in mine)
    if not points or not sufficient:
        return records
    chance = min(1.0, points * answered / sufficient)
    out = []
    for r in records:
        if r in mine:
            moved = sum(1 for _ in range(r["counts"]["sufficient"]) if rng.random() < chance)
            counts = {**r["counts"], "sufficient": r["counts"]["sufficient"] - moved,
                      "explore_again": r["counts"]["explore_again"] + moved}  # fmt: skip
            # Other bytes: a changed transcript is not the baseline's (no digest shared).
            r = {**r, "counts": counts, "digest": None if moved else r.get("digest")}
        out.append(r)
    return out


def decide(
    old: list[dict[str, Any]],
    new: list[dict[str, Any]],
    gates: tuple[float, float, float, int | None],
    correction: str,
) -> bool:
    """Whether the run fails: the plugin's `build` of ``new`` against the baseline ``old``."""
    return bool(build_report(old, new, gates, correction).failed)


def by_check(records: list[dict[str, Any]], args: argparse.Namespace) -> list[str]:
    """Per check of "drops at 0" (gate and arm), the share of A/A splits where it fails alone
    (its p-value at most 2.5%) and where it would fail Holm's first step (at most 2.5%/m, m
    the checks of the run): a check whose statistic is anti-conservative in its tail shows
    a rate above the level."""
    fails: dict[tuple[str, str], list[int]] = {}
    m = 0
    for i in range(args.splits):
        rng = random.Random(f"{args.seed}:{i}")
        old, new = split(records, args.unit, rng)
        report = build_report(old, new, GATE_SETS["drops at 0"], "none")
        members = [o for o in report.outcomes if o.member]
        m = len(members)
        for o in members:
            row = fails.setdefault((o.gate.option, o.arm or ""), [0, 0])
            row[0] += o.p is not None and o.p <= ALPHA
            row[1] += o.p is not None and o.p <= ALPHA / m
    lines = [f"{args.splits} splits by {args.unit}, seed {args.seed}; drops at 0, each check's p-value:", "",
             f"| check | arm | p <= {ALPHA:.1%} (alone) | p <= {ALPHA:.1%}/{m} (Holm's first step) |",
             "|---|---|---|---|"]  # fmt: skip
    for (option, arm), (alone, first) in sorted(fails.items()):
        n = args.splits
        lines.append(f"| {option} | {arm} | {alone / n:.2%} ({alone}) | {first / n:.2%} ({first}) |")
    return lines


def build_report(
    old: list[dict[str, Any]],
    new: list[dict[str, Any]],
    gates: tuple[float, float, float, int | None],
    correction: str,
) -> Any:
    drop, alloc, growth, min_calls = gates
    return build(
        campaign="aa", options=Options("explore", "codegraph", "", None, False, "bound", correction),
        coverage=Coverage(len(new), len(new)), records=new, ignored=[], min_calls=min_calls,
        baseline=("half", old), max_drop=drop,
        metric_baseline_gates=[Gate("allocation", "max_drop", alloc), Gate("residual", "max_growth", growth)],
    )  # fmt: skip


def aa_table(records: list[dict[str, Any]], args: argparse.Namespace) -> list[str]:
    arm = args.arm or sorted({r["arm"] for r in records if r["status"] == "classified"})[0]
    shifts = [0.0, *args.shifts]
    lines = [f"{args.splits} splits by {args.unit}, seed {args.seed}; shift injected in arm {arm!r} "
             f"of the new half; gates on the bound", ""]  # fmt: skip
    header = (
        "| gate set | correction | "
        + " | ".join("A/A: splits failing" if s == 0 else f"{s * 100:.0f}-point drop" for s in shifts)
        + " |"
    )
    lines += [header, "|" + "---|" * (len(shifts) + 2)]
    for name, gates in GATE_SETS.items():
        for correction in args.corrections:
            cells = []
            for s in shifts:
                if s and name != "drops at 0" and not args.all_power:
                    cells.append("")
                    continue
                failed = 0
                for i in range(args.splits):
                    rng = random.Random(f"{args.seed}:{i}")
                    old, new = split(records, args.unit, rng)
                    new = shifted(new, arm, s, rng)
                    failed += decide(old, new, gates, correction)
                cells.append(f"{failed / args.splits:.1%} ({failed})")
            lines.append(f"| {name} | {correction} | " + " | ".join(cells) + " |")
    return lines


def trend_table(paths: list[str]) -> list[str]:
    docs = []
    for p in paths:
        with open(p, encoding="utf-8") as fh:
            doc = json.load(fh)
        docs.append({k: doc[k] for k in ("run", "arms", "fingerprint", "coverage")})
    pooled = best = windows = 0
    for start in range(len(docs)):
        for end in range(start + 2, len(docs) + 1):
            window = docs[start:end]
            section = trend(window, [f"r{i}" for i in range(start, end)])
            outcomes = trend_gates(section)
            correct(outcomes)
            windows += 1
            pooled += any(not o.passed for o in outcomes)
            best += any(
                vs is not None and vs["hi"] is not None and vs["hi"] < 0
                for data in section["arms"].values()
                for vs in data["latest_vs_best"].values()
            )
    return [f"{len(docs)} saved A/A runs, every window of 2 or more consecutive runs ({windows}):", "",
            "| the trend gate against | windows that fire |", "|---|---|",
            f"| the earlier runs pooled (the gate) | {pooled / windows:.1%} ({pooled}) |",
            f"| the best earlier run (before) | {best / windows:.1%} ({best}) |"]  # fmt: skip


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("report", nargs="?", help="the campaign's JSON report (the plugin's)")
    parser.add_argument("--splits", type=int, default=200)
    parser.add_argument("--seed", type=int, default=1)
    parser.add_argument("--unit", choices=("group", "run"), default="group")
    parser.add_argument("--arm", help="the arm the shift is injected into (default: the first)")
    parser.add_argument("--shifts", type=lambda t: [float(x) for x in t.split(",") if x], default=[])
    parser.add_argument("--corrections", type=lambda t: t.split(","), default=["holm", "none"])
    parser.add_argument("--all-power", action="store_true", help="the power of every gate set")
    parser.add_argument(
        "--by-check", action="store_true", help="each check's A/A rate alone and at Holm's first step"
    )
    parser.add_argument("--trend", nargs="+", metavar="REPORT", help="saved A/A runs' reports, oldest first")
    args = parser.parse_args(argv)
    t0 = time.perf_counter()
    if args.report:
        with open(args.report, encoding="utf-8") as fh:
            doc = json.load(fh)
        records = doc["transcripts"]
        arms = sorted({r["arm"] for r in records if r["status"] == "classified"})
        print(f"{args.report}: {len(records)} transcripts, arms {', '.join(arms)}; "
              f"each check alone at {ALPHA:.1%} one-sided")  # fmt: skip
        print("\n".join(by_check(records, args) if args.by_check else aa_table(records, args)))
    if args.trend:
        print()
        print("\n".join(trend_table(args.trend)))
    print(f"\n({time.perf_counter() - t0:.0f} s)")
    return 0


if __name__ == "__main__":
    sys.exit(main())
