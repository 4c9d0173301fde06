"""Ground truth (docs/ground-truth.md): the truth file, what its questions cover, the
figures and verdicts in the records and the arms, and what a run without one keeps."""

from __future__ import annotations

import json
import re
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest
from builders import ab_campaign, no_explore_run
from helpers import GOOD, RunCampaign, answered_run

from pytest_explore_suff import truth as T

# -- the truth file: every bad case is a usage error of one line ------------------------------

BAD_FILES = {
    "not TOML": ("version = 1\n[[question]\n", r"not TOML"),
    "not UTF-8": (b"version = 1\n# \xff\xfe\n", r"not TOML: not UTF-8"),
    "unknown top-level key": ("version = 1\nquestions = []\n", r"key 'questions': unknown key"),
    "unknown question key": (
        'version = 1\n[[question]]\nid = "a"\ngroup = "g"\nanswer = []\nsymbol = ["x"]\n',
        r"question 'a', key 'symbol': unknown key",
    ),
    "unknown defaults key": ("version = 1\n[defaults]\nmin_symbol = 0.5\n", r"key 'defaults.min_symbol'"),
    "bad must regex": (
        'version = 1\n[[question]]\nid = "a"\ngroup = "g"\nanswer = []\nmust = ["(unclosed"]\n',
        r"question 'a', key 'must': not a valid regular expression",
    ),
    "bad must_not regex": (
        'version = 1\n[[question]]\nid = "a"\ngroup = "g"\nanswer = []\nmust_not = ["a**+"]\n',
        r"question 'a', key 'must_not': not a valid regular expression",
    ),
    "bad prompt regex": (
        'version = 1\n[[question]]\nid = "a"\nprompt = "[x"\nanswer = []\n',
        r"question 'a', key 'prompt': not a valid regular expression",
    ),
    "bad answer glob": (
        'version = 1\n[[question]]\nid = "a"\ngroup = "g"\nanswer = ["lib/a**.js"]\n',
        r"question 'a', key 'answer': not a valid glob",
    ),
    "bad incidental glob": (
        'version = 1\n[[question]]\nid = "a"\ngroup = "g"\nanswer = []\nincidental = ["dist//x.js"]\n',
        r"question 'a', key 'incidental': not a valid glob",
    ),
    "duplicate id": (
        'version = 1\n[[question]]\nid = "a"\ngroup = "g"\nanswer = []\n'
        '[[question]]\nid = "a"\ngroup = "h"\nanswer = []\n',
        r"question 'a': duplicate id",
    ),
    "neither group nor prompt": (
        'version = 1\n[[question]]\nid = "a"\nanswer = []\n',
        r"question 'a': needs 'group' or 'prompt'",
    ),
    "min_symbols 0": (
        'version = 1\n[[question]]\nid = "a"\ngroup = "g"\nanswer = []\nmin_symbols = 0\n',
        r"question 'a', key 'min_symbols': must be in \(0, 1\]",
    ),
    "min_symbols above 1": ("version = 1\n[defaults]\nmin_symbols = 1.5\n", r"key 'defaults.min_symbols'"),
    "unknown version": ("version = 2\n", r"key 'version': unknown version 2"),
    "no version": ('[[question]]\nid = "a"\ngroup = "g"\nanswer = []\n', r"key 'version': missing"),
    "no id": ('version = 1\n[[question]]\ngroup = "g"\nanswer = []\n', r"question #1, key 'id'"),
    "no answer": ('version = 1\n[[question]]\nid = "a"\ngroup = "g"\n', r"question 'a', key 'answer'"),
    "bad turn": (
        'version = 1\n[[question]]\nid = "a"\ngroup = "g"\nanswer = []\nturn = 0\n',
        r"question 'a', key 'turn'",
    ),
}


@pytest.mark.parametrize("case", sorted(BAD_FILES))
def test_a_bad_truth_file_is_a_usage_error_of_one_line_naming_the_file_and_the_key(
    case: str, pytester: pytest.Pytester, truth_campaign: Path
) -> None:
    content, expected = BAD_FILES[case]
    bad = pytester.path / "bad-truth.toml"
    if isinstance(content, bytes):
        bad.write_bytes(content)
    else:
        bad.write_text(content, encoding="utf-8")
    result = pytester.runpytest(f"--explore-suff={truth_campaign}", f"--explore-suff-truth={bad}")
    assert result.ret == pytest.ExitCode.USAGE_ERROR
    errors = [line for line in result.errlines if line.strip()]
    assert len(errors) == 1, result.errlines
    assert errors[0].startswith(f"ERROR: --explore-suff-truth: {bad}: ")
    assert re.search(expected, errors[0]), errors[0]
    assert "Traceback" not in result.stdout.str() + result.stderr.str()
    assert not (pytester.path / "explore-suff.json").exists()


def test_the_campaigns_own_bad_truth_file_is_a_usage_error_too(
    pytester: pytest.Pytester, truth_campaign: Path
) -> None:
    (truth_campaign / "explore-suff-truth.toml").write_text("version = 7\n", encoding="utf-8")
    result = pytester.runpytest(f"--explore-suff={truth_campaign}")
    assert result.ret == pytest.ExitCode.USAGE_ERROR
    result.stderr.fnmatch_lines(["ERROR: --explore-suff-truth: */explore-suff-truth.toml: key 'version': *"])


def test_a_missing_truth_file_is_a_usage_error(pytester: pytest.Pytester, truth_campaign: Path) -> None:
    result = pytester.runpytest(f"--explore-suff={truth_campaign}", "--explore-suff-truth=nope.toml")
    assert result.ret == pytest.ExitCode.USAGE_ERROR
    result.stderr.fnmatch_lines(["ERROR: --explore-suff-truth: nope.toml: cannot read it: *"])


# -- globs and text matching ------------------------------------------------------------------


@pytest.mark.parametrize(
    ("pattern", "path", "matches"),
    [
        ("lib/response.js", "/tmp/t-base/lib/response.js", True),
        ("lib/response.js", "lib/response.js", True),
        ("lib/response.js", "mylib/response.js", False),
        ("response.js", "lib/response.js", True),
        ("lib/*.js", "lib/response.js", True),
        ("lib/*.js", "lib/sub/response.js", False),
        ("lib/?.js", "lib/a.js", True),
        ("lib/?.js", "lib/ab.js", False),
        ("**/*.min.js", "dist/vendor/jquery.min.js", True),
        ("**/*.min.js", "jquery.min.js", True),
        ("lib/**/x.js", "lib/a/b/x.js", True),
        ("lib/**/x.js", "lib/x.js", True),
        ("lib/**", "lib/a/b/x.js", True),
        ("Lib/response.js", "lib/response.js", False),
        ("lib/response.js", "C:\\repo\\lib\\response.js", True),
        ("lib\\response.js", "/repo/lib/response.js", True),
        ("/repo/lib/a.js", "/repo/lib/a.js", True),
        ("/repo/lib/a.js", "/x/repo/lib/a.js", False),
    ],
)
def test_a_pattern_matches_a_path_or_any_of_its_suffixes(pattern: str, path: str, matches: bool) -> None:
    globs = T.Globs((pattern,), (re.compile(T.glob_regex(pattern)),))
    assert globs.any(path) is matches


def _question(**table: Any) -> T.Question:
    doc = {"version": 1, "question": [{"id": "q", "group": "g", "answer": [], **table}]}
    return T.parse(doc, "t.toml").questions[0]


def test_a_symbol_is_found_only_between_ascii_non_word_characters() -> None:
    q = _question(symbols=["res.send", "etag"])
    assert T.verdict_of(q, "calls res.send() and etag")[1] == 1.0
    assert T.verdict_of(q, "calls res.sendFile and etags")[1] == 0.0
    assert T.verdict_of(q, "calls _res.send and etag_x")[1] == 0.0
    # Non-ASCII letters are no word characters: the symbol is found beside them.
    assert T.verdict_of(q, "のres.sendの etagé")[1] == 1.0


def test_the_verdict_rules_apply_in_the_spec_order() -> None:
    q = _question(symbols=["a1", "b2"], must=["C3"], must_not=["wrong"], min_symbols=0.5)
    assert T.verdict_of(q, None) == ("fail", 0.0)
    assert T.verdict_of(q, "a1 b2 C3 but wrong") == ("fail", 1.0)
    assert T.verdict_of(q, "nothing here") == ("fail", 0.0)
    assert T.verdict_of(q, "a1 C3") == ("pass", 0.5)
    assert T.verdict_of(q, "a1 b2") == ("partial", 1.0)  # a must is missing
    assert T.verdict_of(q, "C3") == ("partial", 0.0)  # the symbols fall short of min_symbols
    assert T.verdict_of(_question(), "anything") == ("unjudged", None)
    assert T.verdict_of(_question(), None) == ("unjudged", None)  # decided first
    # must is searched with re.ASCII: \w does not match a non-ASCII letter
    assert T.verdict_of(_question(must=[r"^\w+$"]), "é") == ("fail", None)


# -- coverage ---------------------------------------------------------------------------------


def _two_questions_cover_one_run(campaign: Path) -> None:
    """A second question (any prompt) of express, and a run of it with a prompt: that run,
    express/run1/run-headless-with.jsonl, is covered by 'express-send' and 'other'."""
    (campaign / "explore-suff-truth.toml").write_text(
        GOOD + '[[question]]\nid = "other"\ngroup = "express"\nprompt = "."\nanswer = []\n', encoding="utf-8"
    )
    answered_run(["lib/a.js"], "x", prompt="a prompt").write(
        campaign / "express" / "run1" / "run-headless-with.jsonl"
    )


def test_a_transcript_two_questions_cover_fails_its_own_item_naming_both(
    pytester: pytest.Pytester, truth_campaign: Path, run_campaign: RunCampaign
) -> None:
    _two_questions_cover_one_run(truth_campaign)
    result, doc = run_campaign(truth_campaign)
    result.assert_outcomes(passed=2, failed=1)
    result.stdout.fnmatch_lines(
        ["*express/run1/run-headless-with.jsonl: the transcript is covered by two questions of the "
         "truth file: 'express-send' and 'other'"]
    )  # fmt: skip
    assert doc is not None
    failed = [t for t in doc["transcripts"] if t["status"] == "error"]
    assert [t["path"] for t in failed] == ["express/run1/run-headless-with.jsonl"]
    # It is no unreadable transcript: the summary counts it apart.
    result.stdout.fnmatch_lines(["covered by two questions of the truth file: 1 transcript(s) (failed items)"])  # noqa: E501
    assert "unreadable:" not in result.stdout.str()


def test_the_summary_counts_unreadable_transcripts_apart_from_those_failed_on_the_truth(
    pytester: pytest.Pytester, truth_campaign: Path, run_campaign: RunCampaign
) -> None:
    _two_questions_cover_one_run(truth_campaign)
    broken = truth_campaign / "express" / "run2" / "run-headless-with.jsonl"
    broken.write_text(broken.read_text(encoding="utf-8") + "{not json\n{}\n", encoding="utf-8")
    result, _ = run_campaign(truth_campaign, "--explore-suff-strict")
    result.assert_outcomes(passed=1, failed=2)
    result.stdout.fnmatch_lines([
        "unreadable: 1 transcript(s) (failed items)",
        "covered by two questions of the truth file: 1 transcript(s) (failed items)",
    ])  # fmt: skip
    # Without a truth file the line is as it always was: every failed item is counted there.
    result, _ = run_campaign(truth_campaign, "--explore-suff-strict", "--explore-suff-truth=none")
    result.assert_outcomes(passed=2, failed=1)
    result.stdout.fnmatch_lines(["unreadable: 1 transcript(s) (failed items)"])
    assert "covered by two questions" not in result.stdout.str()


def test_a_transcript_no_question_covers_counts_under_no_question(
    pytester: pytest.Pytester, truth_campaign: Path, run_campaign: RunCampaign
) -> None:
    ab_campaign(truth_campaign, with_runs=[], without_runs=[no_explore_run()], repo="koa")
    result, doc = run_campaign(truth_campaign)
    assert doc is not None
    koa = [t for t in doc["transcripts"] if t["group"] == "koa"]
    assert [t["truth"] for t in koa] == [[]]
    assert doc["arms"]["headless-without"]["truth"]["no_question"] == 1
    assert doc["arms"]["headless-without"]["truth"]["questions"] == 1
    result.stdout.fnmatch_lines(["answer units (no question)*2 (0)*1 (1)*"])


def test_a_question_that_covers_nothing_is_a_warning_naming_it(
    pytester: pytest.Pytester, truth_campaign: Path, run_campaign: RunCampaign
) -> None:
    (truth_campaign / "explore-suff-truth.toml").write_text(
        GOOD + '[[question]]\nid = "lonely"\ngroup = "koa"\nanswer = []\n', encoding="utf-8"
    )
    result, _ = run_campaign(truth_campaign)
    assert result.ret == 0
    result.stdout.fnmatch_lines(["warning: truth file: question 'lonely' covers no transcript of this run"])


def test_a_prompt_question_covers_only_runs_whose_first_prompt_it_finds(
    pytester: pytest.Pytester, run_campaign: RunCampaign
) -> None:
    root = pytester.path / "ab"
    ab_campaign(
        root,
        with_runs=[
            answered_run(["lib/a.js"], "a", prompt="How does res.send set the Content-Type?"),
            answered_run(["lib/a.js"], "b", prompt="Something else"),
            answered_run(["lib/a.js"], "c"),  # no prompt in its log
        ],
        without_runs=[],
    )
    (root / "explore-suff-truth.toml").write_text(
        'version = 1\n[[question]]\nid = "p"\nprompt = \'res\\.send.*Content-Type\'\nanswer = ["lib/a.js"]\n',
        encoding="utf-8",
    )
    _, doc = run_campaign(root)
    assert doc is not None
    covered = {t["path"].split("/")[1]: [u["question"] for u in t["truth"]] for t in doc["transcripts"]}
    assert covered == {"run1": ["p"], "run2": [], "run3": []}


# -- a run without a truth file ----------------------------------------------------------------


def test_without_a_truth_file_the_report_and_summary_have_no_trace_of_it(
    pytester: pytest.Pytester, truth_campaign: Path, run_campaign: RunCampaign
) -> None:
    (truth_campaign / "explore-suff-truth.toml").unlink()
    result, doc = run_campaign(truth_campaign)
    assert doc is not None
    assert_no_truth(doc)
    assert "ground truth" not in result.stdout.str()
    assert "truth file" not in result.stdout.str()


def assert_no_truth(doc: dict[str, Any]) -> None:
    assert "truth" not in doc
    assert all("truth" not in agg for agg in [*doc["arms"].values(), doc["pooled"]])
    assert all("truth" not in t for t in doc["transcripts"])
    assert all(
        set(c) & {"gold_share", "incidental_share"} == set() for t in doc["transcripts"] for c in t["calls"]
    )


def test_none_switches_off_the_campaigns_own_truth_file(
    pytester: pytest.Pytester, truth_campaign: Path, run_campaign: RunCampaign
) -> None:
    _, doc = run_campaign(truth_campaign, "--explore-suff-truth=none")
    assert doc is not None
    assert_no_truth(doc)


def test_the_summary_says_the_campaigns_own_truth_file_is_used(
    pytester: pytest.Pytester, truth_campaign: Path, run_campaign: RunCampaign
) -> None:
    result, doc = run_campaign(truth_campaign)
    assert doc is not None and doc["truth"]["found"] is True
    assert doc["truth"]["digest"] == T.digest_of((truth_campaign / "explore-suff-truth.toml").read_bytes())
    out = " ".join(result.stdout.str().split())  # the line folds at the terminal's width
    assert re.search(r"truth file: \S*/explore-suff-truth.toml \(the campaign's own[^)]*\), 1 question", out)


# -- gates ------------------------------------------------------------------------------------


def test_the_truth_gates_decide_on_each_arm_that_has_the_figure(
    pytester: pytest.Pytester, truth_campaign: Path, run_campaign: RunCampaign
) -> None:
    # headless-with: 1 pass of 2 (50%), 1 of 2 sufficient calls in a failed answer, gold recall
    # median 25%; headless-without: 0 of 1 correct, no sufficient call, no gold recall.
    result, doc = run_campaign(
        truth_campaign,
        "--min-correct=headless-with:0.5",
        "--max-false-sufficient=0.4",
        "--min-gold-recall=0.2",
    )
    assert result.ret == pytest.ExitCode.TESTS_FAILED
    assert doc is not None
    got = {(g["metric"], g["arm"]): g["passed"] for g in doc["gates"]}
    assert got == {
        ("correct", "headless-with"): True,
        ("false_sufficient", "headless-with"): False,
        ("gold_recall", "headless-with"): True,
    }
    result.stdout.fnmatch_lines(
        ["*--max-false-sufficient: arm 'headless-with' false sufficient share (sufficient calls in failed "
         "answers) 0.500 (n=2) <= 0.4: FAILED*"]
    )  # fmt: skip


def test_min_correct_covers_the_arm_without_the_tool_too(
    pytester: pytest.Pytester, truth_campaign: Path, run_campaign: RunCampaign
) -> None:
    result, doc = run_campaign(truth_campaign, "--min-correct=0.4")
    assert doc is not None
    assert {g["arm"]: g["passed"] for g in doc["gates"]} == {"headless-with": True, "headless-without": False}
    assert result.ret == pytest.ExitCode.TESTS_FAILED


def test_on_the_bound_the_correct_share_is_compared_at_its_lower_bound(
    pytester: pytest.Pytester, truth_campaign: Path, run_campaign: RunCampaign
) -> None:
    _result, doc = run_campaign(
        truth_campaign, "--min-correct=headless-with:0.5", "--explore-suff-gate-on=bound"
    )
    assert doc is not None
    (gate,) = doc["gates"]
    assert gate["bound"] == doc["arms"]["headless-with"]["truth"]["correct_share"]["lo"]
    assert gate["passed"] is False


def test_a_truth_gate_on_an_arm_without_the_figure_is_not_a_pass(
    pytester: pytest.Pytester, truth_campaign: Path, run_campaign: RunCampaign
) -> None:
    result, _doc = run_campaign(truth_campaign, "--min-gold-recall=headless-without:0.1")
    assert result.ret == pytest.ExitCode.TESTS_FAILED
    result.stdout.fnmatch_lines(
        ["*--min-gold-recall: arm 'headless-without' has no answer unit with a judged explore call and gold "
         "files: not applicable, not a pass*"]
    )  # fmt: skip


@pytest.mark.parametrize("gate", ["--min-correct=0.5", "--max-false-sufficient=0.1", "--min-gold-recall=0.5"])
def test_a_truth_gate_without_a_truth_file_is_a_usage_error(
    gate: str, pytester: pytest.Pytester, truth_campaign: Path
) -> None:
    result = pytester.runpytest(f"--explore-suff={truth_campaign}", "--explore-suff-truth=none", gate)
    assert result.ret == pytest.ExitCode.USAGE_ERROR
    result.stderr.fnmatch_lines([f"ERROR: {gate.split('=')[0]} needs a truth file: *"])


def test_max_correct_drop_against_a_baseline_graded_against_another_truth_file(
    pytester: pytest.Pytester, truth_campaign: Path, run_campaign: RunCampaign
) -> None:
    result, _ = run_campaign(truth_campaign, json="base.json")
    assert result.ret == 0
    # Now the second transcript's answer fails a must_not too: still 1 pass of 2, no drop.
    (truth_campaign / "explore-suff-truth.toml").write_text(
        GOOD + "must_not = ['no idea']\n", encoding="utf-8"
    )
    result, doc = run_campaign(truth_campaign, "--explore-suff-baseline=base.json", "--max-correct-drop=0.1")
    assert doc is not None
    assert doc["baseline"]["truth"]["same"] is False
    result.stdout.fnmatch_lines(["*the baseline was graded against another truth file (digest *)*"])
    drops = {g["arm"]: (g["value"], g["passed"]) for g in doc["gates"]}
    assert drops == {"headless-with": (0.0, True), "headless-without": (0.0, True)}
    # The same truth file: said so by its absence.
    result, doc = run_campaign(truth_campaign, json="base2.json")
    result, doc = run_campaign(truth_campaign, "--explore-suff-baseline=base2.json", "--max-correct-drop=0.1")
    assert doc is not None and doc["baseline"]["truth"]["same"] is True
    assert "another truth file" not in result.stdout.str()


def test_max_correct_drop_fails_when_the_correct_share_fell(
    pytester: pytest.Pytester, truth_campaign: Path, run_campaign: RunCampaign
) -> None:
    run_campaign(truth_campaign, json="base.json")
    answered_run(["lib/x.js"], "no idea").write(
        truth_campaign / "express" / "run1" / "run-headless-with.jsonl"
    )
    result, doc = run_campaign(truth_campaign, "--explore-suff-baseline=base.json", "--max-correct-drop=0.1")
    assert doc is not None
    gate = next(g for g in doc["gates"] if g["arm"] == "headless-with")
    assert (gate["value"], gate["passed"]) == (0.5, False)
    assert result.ret == pytest.ExitCode.TESTS_FAILED
    result.stdout.fnmatch_lines(
        ["*--max-correct-drop: arm 'headless-with' correct share fell by 0.500 from the baseline*"]
    )


# -- reports --------------------------------------------------------------------------------------


def page_data(page: str) -> dict[str, Any]:
    found = re.search(r'<script type="application/json" id="explore-suff-data">(.*?)</script>', page, re.S)
    assert found is not None
    return json.loads(found.group(1))  # type: ignore[no-any-return]


def test_the_page_shows_the_crosstab_and_each_calls_gold_share(
    pytester: pytest.Pytester, truth_campaign: Path, run_campaign: RunCampaign
) -> None:
    from pytest_explore_suff.html import C_FIELDS, T_FIELDS

    _, doc = run_campaign(truth_campaign, "--explore-suff-html=r.html")
    assert doc is not None
    page = (pytester.path / "r.html").read_text(encoding="utf-8")
    assert '<section id="truth">' in page
    cells = re.findall(r'<g class="crosstab-row" data-bucket="(\w+)".*?</g>', page, re.S)
    assert len(cells) == 2 * 5  # a row per bucket, per arm
    section = page[page.index('<section id="truth">') :]
    with_arm = section[section.index('class="panel wide truth-arm" data-arm="headless-with"') :]
    sufficient = re.search(r'class="crosstab-row" data-bucket="sufficient".*?</g>', with_arm, re.S)
    assert sufficient is not None
    drawn = dict(re.findall(r'data-verdict="(\w+)" data-calls="(\d+)"', sufficient.group()))
    assert drawn == {"pass": "1", "fail": "1"}
    assert doc["arms"]["headless-with"]["truth"]["crosstab"]["sufficient"] == {
        "pass": 1, "partial": 0, "fail": 1, "unjudged": 0
    }  # fmt: skip
    data = page_data(page)
    shares = {
        t[0]: [c[len(C_FIELDS)] for c in t[T_FIELDS.index("calls")]]
        for t in data["transcripts"] if t[1] == "headless-with"
    }  # fmt: skip
    want = {
        t["path"]: [[c["gold_share"], c["incidental_share"]] for c in t["calls"]]
        for t in doc["transcripts"] if t["arm"] == "headless-with"
    }  # fmt: skip
    assert shares == want
    assert {len(t) for t in data["transcripts"]} == {len(T_FIELDS) + 1}


def test_the_page_without_a_truth_file_has_no_truth_section(
    pytester: pytest.Pytester, truth_campaign: Path, run_campaign: RunCampaign
) -> None:
    from pytest_explore_suff.html import T_FIELDS

    run_campaign(truth_campaign, "--explore-suff-html=r.html", "--explore-suff-truth=none")
    page = (pytester.path / "r.html").read_text(encoding="utf-8")
    assert 'id="truth"' not in page
    data = page_data(page)
    assert {len(t) for t in data["transcripts"]} == {len(T_FIELDS)}


def test_the_markdown_summary_has_the_ground_truth_only_with_a_truth_file(
    pytester: pytest.Pytester, truth_campaign: Path, run_campaign: RunCampaign
) -> None:
    run_campaign(truth_campaign, "--explore-suff-md=s.md")
    text = (pytester.path / "s.md").read_text(encoding="utf-8")
    assert "**Ground truth** `explore-suff-truth.toml` (1 question," in text
    assert "| correct | 1/2 50% [5%–95%] | 0/1 0% [0%–79%] |" in text
    assert "| sufficient, then wrong | 1/2 50% [5%–95%] | – |" in text
    run_campaign(truth_campaign, "--explore-suff-md=t.md", "--explore-suff-truth=none")
    assert "Ground truth" not in (pytester.path / "t.md").read_text(encoding="utf-8")


def test_the_trend_names_the_runs_graded_against_another_truth_file(
    pytester: pytest.Pytester, truth_campaign: Path, run_campaign: RunCampaign
) -> None:
    run_campaign(truth_campaign, "--explore-suff-save=first")
    run_campaign(truth_campaign, "--explore-suff-save=second")
    (truth_campaign / "explore-suff-truth.toml").write_text(
        GOOD + "must_not = ['no idea']\n", encoding="utf-8"
    )
    result, doc = run_campaign(truth_campaign, "--explore-suff-trend=all")
    assert doc is not None
    digests = [r["truth"] for r in doc["trend"]["runs"]]
    assert digests[0] == digests[1] != digests[2] == doc["truth"]["digest"]
    result.stdout.fnmatch_lines(
        ["graded against another truth file than the latest run, or none: *first*, *second*"]
    )


def test_the_library_judge_grades_against_a_question_whatever_its_group(tmp_path: Path) -> None:
    from pytest_explore_suff import judge

    path = answered_run(["lib/response.js"], "res.send sets Content-Type").write(tmp_path / "run-x.jsonl")
    question = T.parse({"version": 1, "question": [{"id": "q", "group": "elsewhere", "answer": ["lib/*.js"],
                                                    "symbols": ["res.send"], "must": ["Content-Type"]}]},
                       "t.toml").questions[0]  # fmt: skip
    verdict, _ = judge("stream-json", [str(path)], question=question)
    assert verdict.truth is not None
    (unit,) = verdict.truth
    assert (unit["question"], unit["verdict"], unit["gold_recall"], unit["gold_first"]) == (
        "q",
        "pass",
        1.0,
        True,
    )
    assert judge("stream-json", [str(path)])[0].truth is None


def test_max_correct_drop_on_the_bound_joins_the_family_of_checks(
    pytester: pytest.Pytester, truth_campaign: Path, run_campaign: RunCampaign
) -> None:
    run_campaign(truth_campaign, json="base.json")
    result, doc = run_campaign(
        truth_campaign, "--explore-suff-baseline=base.json", "--max-correct-drop=0.1",
        "--explore-suff-gate-on=bound", "--max-sufficient-drop=0.1",
    )  # fmt: skip
    assert doc is not None
    drops = [g for g in doc["gates"] if g["metric"] == "correct"]
    assert drops and all(g["passed"] is True and g["bound"] is not None for g in drops)
    assert doc["family"]["checks"] >= len(drops) + 1  # with the sufficient drop's
    assert result.ret == 0


def test_the_trend_has_a_correct_column_when_some_run_was_graded(
    pytester: pytest.Pytester, truth_campaign: Path, run_campaign: RunCampaign
) -> None:
    run_campaign(truth_campaign, "--explore-suff-save=bare", "--explore-suff-truth=none")
    run_campaign(truth_campaign, "--explore-suff-save=graded")
    run_campaign(truth_campaign, "--explore-suff-save=again")
    other = GOOD + "must_not = ['no idea']\n"
    (truth_campaign / "explore-suff-truth.toml").write_text(other, encoding="utf-8")
    result, doc = run_campaign(truth_campaign, "--explore-suff-trend=all", "--explore-suff-html=r.html")
    assert doc is not None
    points = doc["trend"]["arms"]["headless-with"]["points"]["correct"]
    assert points[0] is None  # graded against no truth file
    shares = [p["share"] for p in points[1:]]
    assert shares == [doc["arms"]["headless-with"]["truth"]["correct_share"]["share"]] * 3 == [0.5] * 3
    assert [p["n"] for p in points[1:]] == [2, 2, 2]
    assert points[2]["change"] is not None and points[2]["change"]["diff"] == 0.0  # the same truth file
    assert points[3]["change"] is None  # another truth file: no change of the tool's to test
    assert "correct" not in doc["trend"]["arms"]["headless-with"]["latest_vs_pooled"]  # not gated
    table = result.stdout.str().split("trend over 4 runs", 1)[1]
    assert "correct: passed / graded answers" in table.splitlines()[0]
    block = table.split("arm headless-with\n", 1)[1].split("\n\n", 1)[0].splitlines()
    assert block[0].split()[-2:] == ["correct", "[95%]"]
    rows = {line.split()[0]: line.rstrip() for line in block[2:]}
    assert rows["bare"].endswith(" -") and rows["graded"].endswith("50 [5-95]")
    assert rows["again"].endswith("50 [5-95]") and rows["this"].endswith("50 [5-95]")  # no mark
    assert "correct answers (pass / graded)" in (pytester.path / "r.html").read_text(encoding="utf-8")
    exe = Path(sys.executable).with_name("explore-suff")  # the saved runs' trend, without pytest
    cli = subprocess.run([str(exe), "trend"], cwd=pytester.path, capture_output=True, text=True, check=False)
    assert cli.returncode == 0, cli.stderr
    assert "correct [95%]" in cli.stdout and "50 [5-95]" in cli.stdout


def test_the_trend_without_ground_truth_has_no_correct_column(
    pytester: pytest.Pytester, truth_campaign: Path, run_campaign: RunCampaign
) -> None:
    for name in ("one", "two"):
        run_campaign(truth_campaign, f"--explore-suff-save={name}", "--explore-suff-truth=none")
    result, doc = run_campaign(truth_campaign, "--explore-suff-trend=all", "--explore-suff-truth=none",
                               "--explore-suff-html=r.html")  # fmt: skip
    assert doc is not None
    assert all("correct" not in arm["points"] for arm in doc["trend"]["arms"].values())
    assert "truth" not in doc["trend"]["runs"][0]
    out = result.stdout.str()
    assert "correct" not in out.split("trend over 3 runs", 1)[1]
    assert "correct answers" not in (pytester.path / "r.html").read_text(encoding="utf-8")


def test_the_benchmarks_generated_truth_file_covers_every_generated_transcript(
    pytester: pytest.Pytester, run_campaign: RunCampaign
) -> None:
    # What benchmarks/generate.py --truth-toml writes is what the benchmark of a truth file's
    # cost grades with: valid, and every check it has runs on every transcript (6 MB: a run
    # of each arm in each of the 8 repositories).
    generate = Path(__file__).parent.parent / "benchmarks" / "generate.py"
    camp, toml = pytester.path / "camp", pytester.path / "camp-truth.toml"
    subprocess.run([sys.executable, str(generate), str(camp), "--size-mb", "6", "--profile", "explore-heavy",
                    "--seed", "3", "--truth-toml", str(toml)], check=True, capture_output=True)  # fmt: skip
    questions = T.load(str(toml)).questions
    assert len(questions) == 8 and all(q.symbols and q.must and q.must_not for q in questions)
    result, doc = run_campaign(camp, f"--explore-suff-truth={toml}")
    assert doc is not None and doc["transcripts"]
    assert all(len(t["truth"]) == 1 for t in doc["transcripts"] if t["status"] != "error")
    assert "covers no transcript" not in result.stdout.str()
