"""The ground truth's figures against an independent reading of the spec (`truth_oracle`), on
a generated campaign that holds many of its cases, in plain and ``-n 2`` runs; and the arm
figures as they follow from the transcripts'."""

from __future__ import annotations

import random
import statistics
from pathlib import Path
from typing import Any

import pytest
import truth_oracle as oracle
from builders import Run

TRUTH = r"""version = 1
[defaults]
min_symbols = 0.6

[[question]]
id = "express-send"
group = "express"
answer = ["lib/response.js", "lib/utils.js", "/abs/only.js"]
incidental = ["**/*.min.js", "test/*"]
symbols = ["res.send", "setHeader", "etag"]
must = ['Content-Type']
must_not = ['res\.json calls res\.send']

[[question]]
id = "koa-t1"
prompt = 'koa.*ctx'
turn = 1
answer = ["lib/context.js", "lib/*.ts"]
symbols = ["ctx.body"]

[[question]]
id = "koa-t2"
prompt = 'koa.*ctx'
turn = 2
answer = ["lib/sub/**"]
must = ['\bdelegate\w*']
min_symbols = 1.0

[[question]]
id = "vue-gold"
group = "vue"
answer = ["src/a.ts", "lib/response.js"]
incidental = ["dist/**"]
"""

FILES = [
    "lib/response.js", "/tmp/t-base/lib/response.js", "lib\\utils.js", "dist/jquery.min.js",
    "Lib/Response.js", "test/response.js", "test/deep/response.js", "lib/sub/deep/x.js",
    "lib/sub/y.js", "src/a.ts", "lib/context.js", "lib/b.ts", "lib/x/b.ts", "mylib/response.js",
    "/abs/only.js", "x/abs/only.js", "lib/response.jsx",
]  # fmt: skip
ANSWERS = [
    "res.send sets the Content-Type via setHeader and an etag.",
    "res.sendFile and etags and setHeaders: Content-Type",
    "It uses res.send; res.json calls res.send internally.",
    "`lib/response.js` does it with setHeader.",
    "content-type is set by res.send (see lib/utils.js:12)",
    "ctx.body delegates to the response; delegate(proto)",
    "ctx.bodyguard, no delegation",
    "_ctx.body and ctx.body_ and the etag_ and (res.send)",
    "のres.sendの setHeaderé Content-Type",
    "   ",
    "nothing relevant at all",
]


def response(rng: random.Random) -> str:
    out = ["## Flow", "1. a step in lib/response.js:12"]
    for path in rng.sample(FILES, rng.randint(0, 4)):
        out += [f"**`{path}`** send(function) etag(method)", "```js", "x" * rng.randint(0, 300), "```"]
    if rng.random() < 0.4:
        out += ["", "> Guidance: read nothing else.", "more after the quote"]
    return "\n".join(out)


def segment(run: Run, rng: random.Random, explore: bool, answer: str | None, result: bool) -> None:
    for _ in range(rng.randint(0, 4) if explore else 0):
        kind = rng.random()
        if kind < 0.2:  # through a subagent
            task = run.use("Task", prompt="look", description="d")
            run.message(task)
            inner = run.explore("sub")
            run.step(inner, response(rng), parent=task["id"])
            run.step(run.use("Read", file_path="/t/lib/response.js"), "code", parent=task["id"])
            run.result(task, "the subagent's summary")
        elif kind < 0.3:  # an explore that errored: not judged
            run.step(run.explore("bad"), "boom", is_error=True)
        else:
            run.step(run.explore("q"), response(rng))
            nxt = rng.choice(["Edit", "Read", "Grep", "Bash", None])
            if nxt == "Read":
                run.step(run.use("Read", file_path="/t/lib/response.js"), "code")
            elif nxt == "Grep":
                run.step(run.use("Grep", pattern="send"), "hits")
            elif nxt == "Edit":
                run.step(run.use("Edit", file_path="lib/a.js"), "ok")
            elif nxt == "Bash":
                run.step(run.use("Bash", command="ls"), "a b")
    if answer is not None:
        run.message({"type": "text", "text": "let me look"})
        run.message({"type": "text", "text": answer})
    if result:
        run.finish(answer if answer is not None else rng.choice(ANSWERS))


def build(root: Path, seed: int = 39) -> None:
    rng = random.Random(seed)
    for group in ("express", "koa", "vue", "react"):
        for arm in ("with", "without"):
            for n in range(1, 13):
                run = Run(session=f"{group}-{arm}-{n}")
                if group == "koa":
                    prompt = rng.choice(["koa: how does ctx.body work?", "unrelated question", None])
                else:
                    prompt = rng.choice(["How does res.send work?", None])
                if prompt is not None:
                    run.events.append({"type": "user", "message": {"role": "user", "content": prompt}})
                answer = rng.choice([*ANSWERS, None])
                segment(run, rng, arm == "with", answer, rng.random() < 0.7)
                base = root / group / f"run{n}" / f"run-headless-{arm}.jsonl"
                run.write(base)
                if group == "koa" and rng.random() < 0.7:
                    turn2 = Run(session=f"{group}-{arm}-{n}")
                    turn2.events.append({"type": "user", "message": {"role": "user", "content": "and then?"}})
                    segment(turn2, rng, arm == "with", rng.choice([*ANSWERS, None]), rng.random() < 0.6)
                    turn2.write(base.with_name(f"run-headless-{arm}.t2.jsonl"))
    (root / "explore-suff-truth.toml").write_text(TRUTH, encoding="utf-8")


@pytest.fixture(scope="module")
def campaign(tmp_path_factory: pytest.TempPathFactory) -> Path:
    root = tmp_path_factory.mktemp("oracle") / "ab"
    build(root)
    return root


def _close(a: float | None, b: float | None) -> bool:
    return (a is None and b is None) or (a is not None and b is not None and abs(a - b) < 1e-12)


@pytest.mark.parametrize("xdist", [[], ["-n", "2"]], ids=["plain", "n2"])
def test_every_transcripts_truth_figures_equal_the_oracles(
    xdist: list[str], campaign: Path, pytester: pytest.Pytester, run_campaign: Any
) -> None:
    result, doc = run_campaign(campaign, *xdist, "-p", "no:randomly")
    assert doc is not None
    assert result.ret == 0, result.stdout.str()
    questions = oracle.load_questions(campaign / "explore-suff-truth.toml")
    verdicts_seen: set[str] = set()
    checked_calls = 0
    per_arm: dict[str, list[tuple[dict[str, Any], dict[str, Any]]]] = {}
    for rec in doc["transcripts"]:
        files = [campaign / f for f in rec["files"]]
        want = oracle.figures(questions, rec["group"], files)
        got = rec["truth"]
        units = [(u["question"], u["turn"]) for u in want["units"]]
        assert [(u["question"], u["turn"]) for u in got] == units, rec["path"]
        for g, w in zip(got, want["units"], strict=True):
            where = f"{rec['path']} {w['question']}"
            assert g["verdict"] == w["verdict"], where
            assert _close(g["symbols_hit"], w["symbols_hit"]), where
            assert _close(g["gold_recall"], w["gold_recall"]), where
            assert g["gold_first"] == w["gold_first"], where
            assert sorted(g["calls"]) == sorted(w["calls"]), where
            verdicts_seen.add(g["verdict"])
        for call in rec["calls"]:
            if call["id"] in want["calls"]:
                gs, inc, _, _ = want["calls"][call["id"]]
                assert _close(call["gold_share"], gs), (rec["path"], call["id"])
                assert _close(call["incidental_share"], inc), (rec["path"], call["id"])
                checked_calls += 1
            else:
                assert "gold_share" not in call and "incidental_share" not in call
        assert len(want["calls"]) == sum(1 for c in rec["calls"] if "gold_share" in c)
        per_arm.setdefault(rec["arm"], []).append((rec, want))
    # the campaign holds every verdict, and calls with and without gold
    assert verdicts_seen == {"pass", "partial", "fail", "unjudged"}
    assert checked_calls > 30
    for arm, pairs in per_arm.items():
        _check_arm(doc["arms"][arm]["truth"], pairs)
    _check_arm(doc["pooled"]["truth"], [p for pairs in per_arm.values() for p in pairs])


def _check_arm(got: dict[str, Any], pairs: list[tuple[dict[str, Any], dict[str, Any]]]) -> None:
    """The arm's figures, from the oracle's units and the records' buckets."""
    units = [u for _, want in pairs for u in want["units"]]
    assert got["questions"] == len(units)
    assert got["no_question"] == sum(1 for _, want in pairs if not want["units"])
    counts = {v: sum(1 for u in units if u["verdict"] == v) for v in ("pass", "partial", "fail", "unjudged")}
    assert got["verdicts"] == counts
    judged = counts["pass"] + counts["partial"] + counts["fail"]
    if judged:
        assert (got["correct_share"]["pass"], got["correct_share"]["judged"]) == (counts["pass"], judged)
        assert _close(got["correct_share"]["share"], counts["pass"] / judged)
    crosstab = {b: dict.fromkeys(counts, 0) for b in got["crosstab"]}
    suff = failed = 0
    for rec, want in pairs:
        bucket = {c["id"]: c["bucket"] for c in rec["calls"]}
        for u in want["units"]:
            for cid in u["calls"]:
                crosstab[bucket[cid]][u["verdict"]] += 1
                if bucket[cid] == "sufficient" and u["verdict"] != "unjudged":
                    suff += 1
                    failed += u["verdict"] == "fail"
    assert got["crosstab"] == crosstab
    if suff:
        assert (got["false_sufficient"]["fail"], got["false_sufficient"]["sufficient"]) == (failed, suff)
    else:
        assert got["false_sufficient"] is None
    shares = [w for _, want in pairs for w in want["calls"].values() if w[0] is not None]
    total = sum(w[3] for w in shares)
    assert got["gold_share"]["calls"] == len(shares)
    assert _close(got["gold_share"]["pooled"], sum(w[2] for w in shares) / total if total else None)
    assert _close(got["gold_share"]["median"], statistics.median([w[0] for w in shares]) if shares else None)
    recalls = [u["gold_recall"] for u in units if u["gold_recall"] is not None]
    assert _close(got["gold_recall"]["median"], statistics.median(recalls) if recalls else None)
    firsts = [u["gold_first"] for u in units if u["gold_first"] is not None]
    assert _close(got["gold_first"]["share"], sum(firsts) / len(firsts) if firsts else None)


@pytest.mark.parametrize(
    ("pattern", "path"),
    [(p, f) for p in ("lib/response.js", "**/*.min.js", "lib/*.ts", "lib/sub/**", "/abs/only.js", "test/*")
     for f in FILES],
)  # fmt: skip
def test_the_plugins_globs_agree_with_the_oracles(pattern: str, path: str) -> None:
    import re

    from pytest_explore_suff.truth import Globs, glob_regex

    globs = Globs((pattern,), (re.compile(glob_regex(pattern)),))
    assert globs.any(path) is oracle.glob_matches(pattern, path)
