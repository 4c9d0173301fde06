"""Repeats (#38): a question run k >= 2 times in an arm gets its pass^k, pass^1 and the
spread between its runs, per question and per arm, in the JSON, the terminal, the page and
the Markdown summary; the figures here are computed from the campaign's design, not read
back from the plugin."""

from __future__ import annotations

import math
from pathlib import Path

import pytest
from builders import Run, response
from helpers import report

from pytest_explore_suff.repeats import pass_k

XDIST = [(), ("-n", "2")]


def calls_run(pattern: list[bool], answer: str = "done") -> Run:
    """A run of one explore call per entry: True is sufficient (an Edit follows it), False a
    Read of the file it returned."""
    run = Run()
    for ok in pattern:
        run.step(run.explore("q"), response(["lib/a.js"]))
        if ok:
            run.step(run.use("Edit", file_path="lib/a.js"))
        else:
            run.step(run.use("Read", file_path="/t/lib/a.js"))
    run.finish(answer)
    return run


#: arm new: group -> its runs (each a pattern of calls); g4 ran once, so it has no repeats.
NEW = {
    "g1": [[True], [True], [True]],
    "g2": [[True, False], [True], [False]],
    "g3": [[True], [True, True], [False], [True]],
    "g4": [[False]],
}
#: arm old: every group ran once: no repeats in this arm.
OLD = {"g1": [[True]], "g2": [[False]], "g3": [[True]]}


def campaign(root: Path, answers: dict[tuple[str, int], str] | None = None) -> Path:
    for arm, design in (("new", NEW), ("old", OLD)):
        for group, runs in design.items():
            for i, pattern in enumerate(runs, 1):
                answer = (answers or {}).get((group, i), "done") if arm == "new" else "done"
                calls_run(pattern, answer).write(root / group / f"run-{arm}-{i}.jsonl")
    return root


def expected_sufficiency() -> dict[str, dict[str, float | int | bool]]:
    """Per repeated question of arm new, from the design: the figures the report must hold."""
    repeated = {g: runs for g, runs in NEW.items() if len(runs) >= 2}
    k = min(len(runs) for runs in repeated.values())
    out = {}
    for g, runs in repeated.items():
        shares = [sum(p) / len(p) for p in runs]
        passed = sum(all(p) for p in runs)
        mean = sum(shares) / len(shares)
        out[g] = {
            "runs": len(runs),
            "passed": passed,
            "share": sum(sum(p) for p in runs) / sum(len(p) for p in runs),
            "pass_k": math.comb(passed, k) / math.comb(len(runs), k),
            "var": sum((s - mean) ** 2 for s in shares) / (len(shares) - 1),
            "disagree": 0 < passed < len(runs),
        }
    return out


def test_pass_k_is_the_chance_that_k_runs_drawn_from_the_n_all_pass():
    assert pass_k(3, 4, 3) == pytest.approx(1 / 4)  # 1 of the 4 ways to pick 3 runs: the 3 that pass
    assert pass_k(2, 2, 2) == 1.0 and pass_k(1, 2, 2) == 0.0
    assert pass_k(5, 10, 1) == 0.5  # pass^1 is the share of runs that pass
    assert pass_k(2, 5, 3) == 0.0  # fewer passes than k


@pytest.mark.parametrize("dist", XDIST, ids=["plain", "n2"])
def test_questions_run_more_than_once_get_pass_k_and_the_spread_between_runs(pytester, monkeypatch, dist):
    monkeypatch.setenv("COLUMNS", "80")
    root = campaign(pytester.path / "c")
    result = pytester.runpytest(f"--explore-suff={root}", "-p", "no:randomly", *dist)
    assert result.ret == 0
    arms = report(pytester)["arms"]
    assert "repeats" not in arms["old"]  # one run per question: nothing to repeat
    r = arms["new"]["repeats"]
    want = expected_sufficiency()
    rows = {q["question"]: q for q in r["questions"]}
    assert sorted(rows) == ["g1", "g2", "g3"]  # g4 ran once
    for g, w in want.items():
        got = rows[g]
        assert got["by"] == "group" and got["runs"] == w["runs"] and got["correct"] is None
        s = got["sufficient"]
        assert (s["runs"], s["passed"], s["disagree"]) == (w["runs"], w["passed"], w["disagree"])
        assert s["share"] == pytest.approx(w["share"])
        assert s["pass_k"] == pytest.approx(w["pass_k"])
        assert s["sd"] == pytest.approx(math.sqrt(w["var"]))
    summary = r["sufficient"]
    assert (summary["questions"], summary["k"], summary["k_max"]) == (3, 3, 4)
    assert summary["pass_k"] == pytest.approx((1 + 0 + 1 / 4) / 3)
    assert summary["pass_1"] == pytest.approx((3 / 3 + 1 / 3 + 3 / 4) / 3)
    assert summary["disagree"] == 2
    dof = sum(w["runs"] - 1 for w in want.values())
    pooled_var = sum((w["runs"] - 1) * w["var"] for w in want.values()) / dof
    assert summary["sd"] == pytest.approx(math.sqrt(pooled_var))
    assert r["correct"] is None  # no truth file
    # the terminal: a column per arm with repeats (as the other arm tables), within 80 columns
    result.stdout.fnmatch_lines(
        [
            "repeats (a run passes when all its answered calls are sufficient*",
            "* new",
            "questions x runs * 3 x 3-4",
            "pass^k * 42%",
            "pass^1 * 69%",
            "runs disagree (questions) * 2",
            "sd between runs, points * 42",
        ]
    )
    assert math.sqrt(pooled_var) == pytest.approx(0.4226, abs=1e-4)  # the row's 42 points
    lines = result.stdout.lines
    start = next(i for i, line in enumerate(lines) if line.startswith("repeats ("))
    end = next(i for i in range(start, len(lines)) if lines[i].startswith("sd between runs"))
    block = lines[start : end + 1]
    assert "old" not in block[2].split()  # no question of the old arm ran twice: no column
    assert len(block) == 9 and max(len(line) for line in block) <= 80


def test_with_a_truth_file_a_question_is_the_truth_file_s_and_correctness_has_pass_k(pytester):
    good = "compileETag in lib/a.js"
    answers = {("g1", 1): good, ("g1", 2): good, ("g1", 3): good, ("g2", 1): good, ("g2", 2): "no idea"}
    root = campaign(pytester.path / "c", answers)
    (root / "explore-suff-truth.toml").write_text(
        "version = 1\n"
        + "".join(
            f'[[question]]\nid = "q-{g}"\ngroup = "{g}"\nanswer = ["lib/a.js"]\nsymbols = ["compileETag"]\n'
            for g in ("g1", "g2")
        ),
        encoding="utf-8",
    )
    pytester.runpytest(f"--explore-suff={root}", "-p", "no:randomly")
    r = report(pytester)["arms"]["new"]["repeats"]
    rows = {(q["by"], q["question"]): q for q in r["questions"]}
    # g1 and g2 are the truth file's questions; g3, which no question covers, counts by its group
    assert sorted(rows) == [("group", "g3"), ("truth", "q-g1"), ("truth", "q-g2")]
    # correctness: g1 3 of 3 runs pass, g2 1 of 3 (run 3 answers "done": fail); k = 3
    assert rows["truth", "q-g1"]["correct"] == {"runs": 3, "passed": 3, "pass_k": 1.0, "disagree": False}
    assert rows["truth", "q-g2"]["correct"] == {"runs": 3, "passed": 1, "pass_k": 0.0, "disagree": True}
    assert rows["group", "g3"]["correct"] is None
    c = r["correct"]
    assert (c["questions"], c["k"], c["k_max"], c["disagree"]) == (2, 3, 3, 1)
    assert c["pass_k"] == pytest.approx(0.5) and c["pass_1"] == pytest.approx((1 + 1 / 3) / 2)
    # sufficiency is the same whether a question is named by its group or by the truth file
    assert rows["truth", "q-g2"]["sufficient"]["passed"] == 1
    assert r["sufficient"]["pass_k"] == pytest.approx((1 + 0 + 1 / 4) / 3)
    pytester.runpytest(f"--explore-suff={root}", "-p", "no:randomly").stdout.fnmatch_lines(
        [
            "questions x runs, correct * 2 x 3",
            "pass^k, correct * 50%",
            "pass^1, correct * 67%",
            "runs disagree (questions), correct * 1",
        ]
    )


def test_a_campaign_without_repeats_has_no_repeats_anywhere(pytester):
    root = pytester.path / "c"
    for arm, design in (("old", OLD),):
        for group, runs in design.items():
            calls_run(runs[0]).write(root / group / f"run-{arm}-1.jsonl")
    result = pytester.runpytest(f"--explore-suff={root}", "--explore-suff-html=page.html")
    assert not any(line.startswith("repeats (") for line in result.stdout.lines)
    doc = report(pytester)
    assert all("repeats" not in agg for agg in doc["arms"].values())
    assert 'id="repeats"' not in (pytester.path / "page.html").read_text(encoding="utf-8")


def test_the_page_and_the_markdown_summary_show_the_repeats(pytester):
    root = campaign(pytester.path / "c")
    pytester.runpytest(f"--explore-suff={root}", "--explore-suff-html=page.html", "--explore-suff-md=sum.md")
    page = (pytester.path / "page.html").read_text(encoding="utf-8")
    assert '<section id="repeats">' in page
    for g, w in expected_sufficiency().items():
        assert f'data-question="{g}" data-by="group" data-passed="{w["passed"]}"' in page
    assert 'data-question="g4"' not in page
    md = (pytester.path / "sum.md").read_text(encoding="utf-8")
    assert "| new | 3 × 3–4 | 42% | 69% | 2 | 42 pts |" in md
