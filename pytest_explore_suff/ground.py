"""The ground truth where an item runs: a transcript's answer units into its record, and
the judge hook (``pytest_explore_suff_judge``) asked through pytest's cache.

`truth` (plain library code) finds the units and their figures; this module adds
what needs pytest: the judge plug-ins, ``config.cache`` (so ``--cache-clear``
forgets the verdicts and ``-p no:cacheprovider`` only makes a run slower), and
the one-line failure of an item whose judge raised or answered garbage.
"""

from __future__ import annotations

import math
from collections.abc import Mapping, Sequence
from typing import Any

import orjson
import pytest
import xxhash

from .hookspecs import BUILTIN_JUDGE as BUILTIN_JUDGE
from .hookspecs import judge_name as judge_name  # their home: every run asks, truth file or not
from .readers import TranscriptError
from .truth import CONFLICT, JUDGED, Conflict, Truth, Unit, assess

#: Where the judges' verdicts are kept in pytest's cache directory.
CACHE_PREFIX = "explore-suff/judge/"
#: The plug-in name of the built-in judge (no opinion), which no verdict is cached under.


class JudgeError(TranscriptError):
    """A judge that raised or answered something that is no verdict: fails its item."""


#: How the reason of an item a `JudgeError` failed starts.
JUDGE = "the judge ("


def failed_on(reason: str) -> str | None:
    """Why an item failed on the ground truth, from its record's reason: ``conflict`` (two
    questions cover it), ``judge`` (the judge raised or answered garbage); None: not so."""
    if reason.startswith(("the transcript ", "turn ")) and CONFLICT in reason:
        return "conflict"
    return "judge" if reason.startswith(JUDGE) else None


def apply(
    config: pytest.Config,
    truth: Truth,
    rec: dict[str, Any],
    transcript: Any,
    verdict: Any,
    collector: Any,
    sections: Mapping[str, Sequence[Any]],
) -> None:
    """Add the ground truth to a transcript's record: ``truth`` (one entry per answer unit
    covered) and each covered call's ``gold_share`` / ``incidental_share``. Raises
    `TranscriptError` (a `truth.Conflict`, a judge's failure) with one line."""
    try:
        units, shares = assess(
            truth, transcript.group, collector, verdict.calls, sections, transcript.files[0]
        )
    except Conflict as exc:
        raise TranscriptError(str(exc)) from None
    if units:
        judge_units(config, units, transcript.path)
    rec["truth"] = [u.entry for u in units]
    if shares:
        for call in rec["calls"]:
            got = shares.get(call["id"])
            if got is not None:
                call["gold_share"], call["incidental_share"] = got


def judge_units(config: pytest.Config, units: Sequence[Unit], path: str) -> None:
    """Ask the judge about each unit (through the cache), and put its verdict in the entry."""
    name = judge_name(config)
    if name is None:
        return
    cache = getattr(config, "cache", None)
    for unit in units:
        question = dict(unit.question.table)
        answer = unit.answer or ""
        key = CACHE_PREFIX + _key(name, question, answer)
        got = cache.get(key, None) if cache is not None else None
        if not _valid(got):
            try:
                got = config.hook.pytest_explore_suff_judge(question=question, answer=answer, transcript=path)
            except Exception as exc:
                raise JudgeError(
                    f"{JUDGE}{name}) raised {type(exc).__name__} on question "
                    f"{unit.question.id!r}: {_one_line(exc)}"
                ) from None
            if got is None:
                continue  # no opinion: the rules' verdict stands
            got = _checked(got, name, unit.question.id)
            if cache is not None:
                cache.set(key, got)
        unit.entry["judge"] = got


def _one_line(exc: BaseException) -> str:
    text = " ".join(str(exc).split())
    return text[:300] + ("..." if len(text) > 300 else "")


def _key(name: str, question: Mapping[str, Any], answer: str) -> str:
    h = xxhash.xxh3_128()
    h.update(name.encode("utf-8", "surrogatepass"))
    h.update(b"\0")
    h.update(orjson.dumps(question, option=orjson.OPT_SORT_KEYS))
    h.update(b"\0")
    h.update(answer.encode("utf-8", "surrogatepass"))
    return h.hexdigest()


def _valid(got: Any) -> bool:
    """A cached verdict as `_checked` leaves it (anything else in the cache is ignored)."""
    return isinstance(got, dict) and got.get("verdict") in JUDGED and set(got) == {"verdict", "score", "note"}


def _checked(got: Any, name: str, qid: str) -> dict[str, Any]:
    """A judge's answer as the record keeps it; raises `JudgeError` for garbage."""
    where = f"{JUDGE}{name}) on question {qid!r}"
    if not isinstance(got, Mapping):
        raise JudgeError(
            f"{where} returned {type(got).__name__} {_short(got)}, not a mapping with a 'verdict'"
        )
    verdict = got.get("verdict")
    if verdict not in JUDGED:
        raise JudgeError(f"{where} returned verdict {_short(verdict)}: expected one of {', '.join(JUDGED)}")
    score = got.get("score")
    if score is not None and (
        isinstance(score, bool) or not isinstance(score, int | float) or not math.isfinite(score)
        or not 0 <= score <= 100
    ):  # fmt: skip
        raise JudgeError(f"{where} returned score {_short(score)}: expected a number from 0 to 100")
    note = got.get("note")
    if note is not None and not isinstance(note, str):
        raise JudgeError(f"{where} returned note {_short(note)}: expected a string")
    return {"verdict": verdict, "score": score, "note": note}


def _short(value: Any) -> str:
    text = repr(value)
    return text if len(text) <= 80 else text[:77] + "..."
