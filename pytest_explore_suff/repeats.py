"""Repeats: several runs of one question in an arm, and how consistently they pass (#38).

A **question** is what the runs were asked: the group a transcript's path names
(a repository, a task folder), or, when a truth file is in play, each of its
questions that covers a run (an answer unit: the transcript, or one turn of it).
A transcript no question covers counts under its group.

A **run passes on sufficiency** when every one of its answered explore calls is
sufficient (the agent moved on or answered after each): the tool never left it
reading, grepping or exploring again. A run with no answered call says nothing
about the tool and is not counted. A **run passes on correctness** when its
answer's verdict is ``pass`` (``partial`` and ``fail`` do not; ``unjudged`` is
not counted).

Per question with ``n`` runs of which ``c`` pass, and the arm's ``k`` (the
fewest runs any of its repeated questions has), ``pass^k = C(c, k) / C(n, k)``:
the unbiased estimate of the chance that ``k`` fresh runs of the question all
pass (the estimator of tau-bench's pass^k; with n = k it is 1 when every run
passed, else 0). ``pass^1`` is ``c / n``. The arm's figures are the means over
its questions with two runs or more: descriptive, with no interval (a handful
of questions is a handful of draws).

The spread between runs: per question the standard deviation of the per-run
sufficient share (each run's sufficient calls over its answered calls), and per
arm that deviation pooled over the questions (``sqrt(sum((n_i - 1) s_i^2) /
sum(n_i - 1))``: how much two runs of the same question differ, the questions'
own differences taken out), with how many questions' runs disagree (some pass
and some do not).
"""

from __future__ import annotations

import math
from collections.abc import Iterable, Mapping, Sequence
from typing import Any

from .report import truth_brief_of

#: A run of a question: (sufficient calls, answered calls, verdict or None).
Run = tuple[int, int, str | None]


def runs_by_question(recs: Iterable[Mapping[str, Any]]) -> dict[tuple[str, str], list[Run]]:
    """The runs of each question, keyed by (how it is named, its name): ("truth", the
    truth file's question id) per answer unit, or ("group", the group) per transcript
    that no question covers. Records in the order given."""
    out: dict[tuple[str, str], list[Run]] = {}
    for rec in recs:
        brief = truth_brief_of(rec)
        units = brief["u"] if brief is not None else ()
        if units:
            for verdict, counts, _recall, _first, question in units:
                answered = sum(counts.values())
                out.setdefault(("truth", str(question)), []).append(
                    (counts.get("sufficient", 0), answered, verdict)
                )
        else:
            counts = rec["counts"]
            out.setdefault(("group", str(rec["group"])), []).append(
                (counts["sufficient"], rec["answered"], None)
            )
    return out


def pass_k(c: int, n: int, k: int) -> float:
    """The chance that ``k`` runs drawn without replacement from ``n``, ``c`` of which
    pass, all pass: ``C(c, k) / C(n, k)`` (unbiased for the question's pass^k)."""
    return math.comb(c, k) / math.comb(n, k)


def _sd(values: Sequence[float]) -> float | None:
    if len(values) < 2:
        return None
    mean = sum(values) / len(values)
    return math.sqrt(sum((v - mean) ** 2 for v in values) / (len(values) - 1))


def _summary(rows: list[dict[str, Any]], key: str, k: int) -> dict[str, Any]:
    """The arm's mean pass^k and pass^1 over the questions' ``key`` figures."""
    figs = [r[key] for r in rows]
    return {
        "questions": len(figs),
        "k": k,
        "k_max": max(f["runs"] for f in figs),
        "pass_k": sum(f["pass_k"] for f in figs) / len(figs),
        "pass_1": sum(f["passed"] / f["runs"] for f in figs) / len(figs),
        "disagree": sum(1 for f in figs if f["disagree"]),
    }


def repeats(recs: Iterable[Mapping[str, Any]]) -> dict[str, Any] | None:
    """An arm's repeats (None: no question has two runs): per question its runs, the
    sufficient share of their calls, pass^k and the spread between runs, and with a truth
    file the same on correctness; per arm the means (see the module's docstring)."""
    by_question = runs_by_question(recs)
    rows: list[dict[str, Any]] = []
    for (by, name), runs in sorted(by_question.items()):
        answered = [(s, n) for s, n, _ in runs if n]
        judged = [v for _, _, v in runs if v is not None and v != "unjudged"]
        if len(answered) < 2 and len(judged) < 2:
            continue
        row: dict[str, Any] = {"question": name, "by": by, "runs": len(runs),
                               "sufficient": None, "correct": None}  # fmt: skip
        if len(answered) >= 2:
            shares = [s / n for s, n in answered]
            passed = sum(1 for s, n in answered if s == n)
            row["sufficient"] = {
                "runs": len(answered),
                "passed": passed,
                "share": sum(s for s, _ in answered) / sum(n for _, n in answered),
                "pass_k": None,
                "sd": _sd(shares),
                "disagree": 0 < passed < len(answered),
            }
        if len(judged) >= 2:
            passed = sum(1 for v in judged if v == "pass")
            row["correct"] = {"runs": len(judged), "passed": passed, "pass_k": None,
                              "disagree": 0 < passed < len(judged)}  # fmt: skip
        rows.append(row)
    if not rows:
        return None
    out: dict[str, Any] = {"sufficient": None, "correct": None, "questions": rows}
    for key in ("sufficient", "correct"):
        have = [r for r in rows if r[key] is not None]
        if not have:
            continue
        k = min(r[key]["runs"] for r in have)
        for r in have:
            r[key]["pass_k"] = pass_k(r[key]["passed"], r[key]["runs"], k)
        out[key] = _summary(have, key, k)
    suff = [r["sufficient"] for r in rows if r["sufficient"] is not None]
    if out["sufficient"] is not None:
        dof = sum(f["runs"] - 1 for f in suff)
        out["sufficient"]["sd"] = math.sqrt(sum((f["runs"] - 1) * f["sd"] ** 2 for f in suff) / dof)
    return out
