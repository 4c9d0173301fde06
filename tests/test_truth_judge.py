"""The judge hook (``pytest_explore_suff_judge``): its verdicts in the records and the arms,
pytest's cache, a judge that raises, answers garbage or is slow; and the example judge in
examples/judge, driven with a fake command."""

from __future__ import annotations

import sys
from pathlib import Path

import pytest
from builders import ab_campaign, no_explore_run
from helpers import EXAMPLES, GOOD, RunCampaign, answered_run

JUDGE = (EXAMPLES / "judge" / "conftest.py").read_text(encoding="utf-8")

#: A stand-in for ``claude -p``: counts its calls in calls.txt, then acts as MODE says.
FAKE = """
import json, os, sys, time
prompt = sys.stdin.read()
with open(os.environ["CALLS"], "a") as fh:
    fh.write("call\\n")
mode = os.environ.get("MODE", "ok")
if mode == "slow":
    time.sleep(30)
if mode == "fail":
    print("quota exceeded", file=sys.stderr)
    sys.exit(3)
if mode == "garbage":
    print("I think it is fine.")
    sys.exit(0)
if mode == "bad-verdict":
    print(json.dumps({"verdict": "excellent"}))
    sys.exit(0)
verdict = "fail" if "no idea" in prompt else "pass"
print("Here is my verdict:")
print(json.dumps({"verdict": verdict, "score": 80, "note": "graded by the fake"}))
"""


@pytest.fixture
def judged(pytester: pytest.Pytester, monkeypatch: pytest.MonkeyPatch) -> Path:
    """A campaign with a truth file, the example judge as conftest.py, a fake command."""
    root = pytester.path / "ab"
    ab_campaign(
        root,
        with_runs=[
            answered_run(["lib/response.js"], "res.send sets Content-Type (`lib/response.js`)"),
            answered_run(["lib/x.js"], "res.send, no idea"),
        ],
        without_runs=[no_explore_run()],
    )
    (root / "explore-suff-truth.toml").write_text(GOOD, encoding="utf-8")
    pytester.makeconftest(JUDGE)
    fake = pytester.path / "fake_judge.py"
    fake.write_text(FAKE, encoding="utf-8")
    monkeypatch.setenv("EXPLORE_SUFF_JUDGE_COMMAND", f"{sys.executable} {fake}")
    monkeypatch.setenv("CALLS", str(pytester.path / "calls.txt"))
    return root


def calls(pytester: pytest.Pytester) -> int:
    path = pytester.path / "calls.txt"
    return len(path.read_text().splitlines()) if path.exists() else 0


@pytest.mark.parametrize("xdist", [[], ["-n", "2"]], ids=["plain", "n2"])
def test_the_judges_verdicts_are_kept_beside_the_rules_and_count_in_the_arm(
    xdist: list[str], pytester: pytest.Pytester, judged: Path, run_campaign: RunCampaign
) -> None:
    result, doc = run_campaign(judged, *xdist)
    assert result.ret == 0, result.stdout.str()
    assert doc is not None
    units = {t["path"]: t["truth"][0] for t in doc["transcripts"]}
    with_1 = units["express/run1/run-headless-with.jsonl"]
    assert with_1["verdict"] == "pass"
    assert with_1["judge"] == {"verdict": "pass", "score": 80, "note": "graded by the fake"}
    with_2 = units["express/run2/run-headless-with.jsonl"]
    # The rules say partial (a symbol, no Content-Type); the judge says fail: the arm counts the judge's.
    assert (with_2["verdict"], with_2["judge"]["verdict"]) == ("partial", "fail")
    assert doc["arms"]["headless-with"]["truth"]["verdicts"] == {
        "pass": 1,
        "partial": 0,
        "fail": 1,
        "unjudged": 0,
    }
    assert calls(pytester) == 3


def test_an_unchanged_answer_is_never_judged_twice_and_cache_clear_forgets(
    pytester: pytest.Pytester, judged: Path, run_campaign: RunCampaign
) -> None:
    run_campaign(judged)
    assert calls(pytester) == 3
    _, doc = run_campaign(judged)
    assert calls(pytester) == 3  # every verdict from pytest's cache
    assert doc is not None
    assert doc["arms"]["headless-with"]["truth"]["verdicts"]["fail"] == 1
    # A changed answer is judged again, alone.
    answered_run(["lib/x.js"], "res.send, no idea at all").write(
        judged / "express" / "run2" / "run-headless-with.jsonl"
    )
    run_campaign(judged)
    assert calls(pytester) == 4
    run_campaign(judged, "--cache-clear")
    assert calls(pytester) == 7
    # Without the cache plugin, every run asks again: only slower.
    run_campaign(judged, "-p", "no:cacheprovider")
    assert calls(pytester) == 10


@pytest.mark.parametrize(
    ("mode", "line"),
    [
        ("fail", "raised RuntimeError on question 'express-send': * exited with status 3: quota exceeded"),
        ("garbage", "raised ValueError on question 'express-send': no JSON verdict in the judge's output*"),
        ("bad-verdict", "on question 'express-send' returned verdict 'excellent': expected one of pass, *"),
        ("slow", "raised TimeoutError on question 'express-send': * gave no verdict within 1 s"),
    ],
)  # fmt: skip
def test_a_judge_that_fails_fails_its_items_with_one_line_and_the_rest_reports(
    mode: str, line: str, pytester: pytest.Pytester, judged: Path, run_campaign: RunCampaign,
    monkeypatch: pytest.MonkeyPatch,
) -> None:  # fmt: skip
    monkeypatch.setenv("MODE", mode)
    monkeypatch.setenv("EXPLORE_SUFF_JUDGE_TIMEOUT", "1")
    result, doc = run_campaign(judged)
    result.assert_outcomes(failed=3)
    result.stdout.fnmatch_lines([f"*the judge (*) {line}"])
    assert "Traceback" not in result.stdout.str()
    # The summary counts them as the judge's failures, not as unreadable transcripts.
    result.stdout.fnmatch_lines(["judge failed (raised, or answered no verdict): 3 transcript(s) (failed items)"])  # noqa: E501
    assert "unreadable:" not in result.stdout.str()
    assert doc is not None  # the report is written, the failed transcripts in it
    assert {t["status"] for t in doc["transcripts"]} == {"error"}
    # Nothing was cached: a run with a working judge asks again.
    monkeypatch.setenv("MODE", "ok")
    before = calls(pytester)
    result, _ = run_campaign(judged)
    assert result.ret == 0
    assert calls(pytester) == before + 3


def test_a_judge_with_no_opinion_leaves_the_rules_verdict(
    pytester: pytest.Pytester, truth_campaign: Path, run_campaign: RunCampaign
) -> None:
    pytester.makeconftest("def pytest_explore_suff_judge(question, answer, transcript):\n    return None\n")
    result, doc = run_campaign(truth_campaign)
    assert result.ret == 0
    assert doc is not None
    assert {u["judge"] for t in doc["transcripts"] for u in t["truth"]} == {None}


@pytest.mark.parametrize(
    ("returned", "message"),
    [
        ("'pass'", "returned str 'pass', not a mapping with a 'verdict'"),
        ("{'verdict': 'pass', 'score': 101}", "returned score 101: expected a number from 0 to 100"),
        ("{'verdict': 'pass', 'note': 3}", "returned note 3: expected a string"),
    ],
)
def test_a_judge_that_returns_garbage_fails_its_item(
    returned: str, message: str, pytester: pytest.Pytester, truth_campaign: Path, run_campaign: RunCampaign
) -> None:
    pytester.makeconftest(
        f"def pytest_explore_suff_judge(question, answer, transcript):\n    return {returned}\n"
    )
    result, _ = run_campaign(truth_campaign)
    result.assert_outcomes(failed=3)
    result.stdout.fnmatch_lines([f"*: the judge (*conftest.py) on question 'express-send' {message}"])


def test_the_judge_is_handed_the_question_the_answer_and_the_transcript(
    pytester: pytest.Pytester, truth_campaign: Path, run_campaign: RunCampaign
) -> None:
    pytester.makeconftest(
        "import json\n"
        "def pytest_explore_suff_judge(question, answer, transcript):\n"
        "    with open('seen.jsonl', 'a') as fh:\n"
        "        fh.write(json.dumps([question, answer, transcript]) + '\\n')\n"
    )
    run_campaign(truth_campaign)
    import json

    seen = [json.loads(line) for line in (pytester.path / "seen.jsonl").read_text().splitlines()]
    by_path = {t: (q, a) for q, a, t in seen}
    q, a = by_path["express/run1/run-headless-with.jsonl"]
    assert q["id"] == "express-send" and q["symbols"] == ["res.send", "setHeader"]
    assert a == "res.send sets Content-Type (`lib/response.js`)"
