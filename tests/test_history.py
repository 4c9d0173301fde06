"""Campaigns over time (#31): saved runs, digests, trend, merged shards, the Markdown
summary, and the ``explore-suff`` command over saved reports."""

from __future__ import annotations

import argparse
import gzip
import json
import os
import shutil
import subprocess
import sys
import tarfile
from pathlib import Path
from typing import Any

import pytest
import xxhash
from builders import ab_campaign, allocation_run, no_explore_run, sufficient_run
from helpers import EXAMPLES

from pytest_explore_suff import sources

SCHEMA2 = Path(__file__).parent / "data" / "schema2-report.json"  # written by the plugin at 78e6f4c
SHA = "0123456789abcdef0123456789abcdef01234567"


def digest_of(data: bytes) -> str:
    return xxhash.xxh3_128(data).hexdigest()


def saved(pytester: pytest.Pytester) -> list[Path]:
    return sorted((pytester.path / ".explore-suff").glob("*.json"))


def load(path: Path) -> dict[str, Any]:
    return json.loads(path.read_text(encoding="utf-8"))  # type: ignore[no-any-return]


def command(cwd: Path, *args: str) -> subprocess.CompletedProcess[str]:
    """The installed console script, in a fresh process."""
    exe = Path(sys.executable).with_name("explore-suff")
    return subprocess.run([str(exe), *args], cwd=cwd, capture_output=True, text=True, check=False)


def run_in(pytester: pytest.Pytester, camp: Path, *args: str) -> pytest.RunResult:
    return pytester.runpytest(f"--explore-suff={camp}", "-p", "no:randomly", *args)


def with_campaign(pytester: pytest.Pytester, sufficient: int, other: int, name: str = "ab") -> Path:
    root = pytester.path / name
    shutil.rmtree(root, ignore_errors=True)
    return ab_campaign(
        root,
        with_runs=[sufficient_run(f"s{i}") for i in range(sufficient)]
        + [allocation_run(f"a{i}") for i in range(other)],
        without_runs=[no_explore_run()],
    )


# -- saved runs -----------------------------------------------------------------------------------


@pytest.mark.parametrize("xdist", [[], ["-n", "2"]])
def test_saved_runs_are_numbered_in_run_order_with_name_commit_and_time(pytester, campaign, xdist):
    # A git checkout as git writes it: the commit is read from .git, no git process.
    (pytester.path / ".git" / "refs" / "heads").mkdir(parents=True)
    (pytester.path / ".git" / "HEAD").write_text("ref: refs/heads/main\n")
    (pytester.path / ".git" / "refs" / "heads" / "main").write_text(SHA + "\n")
    first = run_in(pytester, campaign, "--explore-suff-save=first try", *xdist)
    first.assert_outcomes(passed=5)
    run_in(pytester, campaign, "--explore-suff-save", *xdist).assert_outcomes(passed=5)
    files = saved(pytester)
    assert [f.name.split("_")[:2] for f in files] == [["0001", "first-try"], ["0002", SHA[:12]]]
    one, two = load(files[0]), load(files[1])
    assert one["run"]["name"] == "first try" and one["run"]["commit"] == SHA and one["run"]["number"] == 1
    assert two["run"]["name"] is None and two["run"]["number"] == 2
    assert two["run"]["time"].endswith("Z")
    # the saved run is the run's JSON report, written once (on the controller only)
    assert files[1].read_bytes() == (pytester.path / "explore-suff.json").read_bytes()
    first.stdout.fnmatch_lines(["saved as run 1 in *.explore-suff"])


def test_comparing_saved_runs_leaves_their_files_as_they_were(pytester, campaign):
    run_in(pytester, campaign, "--explore-suff-save").assert_outcomes(passed=5)
    run_in(pytester, campaign, "--explore-suff-save").assert_outcomes(passed=5)
    before = {f.name: f.read_bytes() for f in saved(pytester)}
    compared = command(pytester.path, "compare", "1", "2", "-o", "compared.json")
    assert compared.returncode == 0, compared.stderr
    assert "saved as run" not in compared.stdout
    assert {f.name: f.read_bytes() for f in saved(pytester)} == before
    doc = load(pytester.path / "compared.json")
    assert doc["run"]["number"] == 2 and doc["baseline"] is not None  # what was compared, named


def test_a_run_not_saved_has_no_run_section_and_stays_byte_identical(pytester, campaign):
    run_in(pytester, campaign, "--explore-suff-json=a.json")
    run_in(pytester, campaign, "--explore-suff-json=b.json", "-n", "2")
    a = (pytester.path / "a.json").read_bytes()
    assert a == (pytester.path / "b.json").read_bytes()
    assert json.loads(a)["run"] is None
    assert not (pytester.path / ".explore-suff").exists()


def test_the_autosave_ini_setting_saves_every_run_to_the_storage_it_names(pytester, campaign):
    pytester.makeini("[pytest]\nexplore_suff_autosave = true\nexplore_suff_storage = runs\n")
    run_in(pytester, campaign)
    run_in(pytester, campaign, "--co")  # nothing ran: nothing saved
    assert len(list((pytester.path / "runs").glob("0001_*.json"))) == 1
    assert len(list((pytester.path / "runs").glob("*.json"))) == 1


def test_a_partial_run_is_saved_marked_partial_and_last_skips_it(pytester, campaign):
    run_in(pytester, campaign, "--explore-suff-save=full")
    run_in(pytester, campaign, "--explore-suff-save=part", "-k", "run1")
    part = load(saved(pytester)[1])
    assert part["coverage"]["complete"] is False
    result = run_in(pytester, campaign, "--explore-suff-baseline=last")
    assert os.path.basename(load(pytester.path / "explore-suff.json")["baseline"]["report"]).startswith(
        "0001_full"
    )
    result = run_in(pytester, campaign, "--explore-suff-baseline=2")
    assert result.ret == pytest.ExitCode.USAGE_ERROR
    result.stderr.fnmatch_lines(["*covers only part of its campaign*"])


@pytest.mark.parametrize("name", ["last", "1", "base line"])
def test_a_saved_run_is_named_as_a_baseline_by_last_number_or_name(pytester, campaign, name):
    run_in(pytester, campaign, "--explore-suff-save=base line")
    result = run_in(pytester, campaign, f"--explore-suff-baseline={name}", "--max-sufficient-drop=0.1")
    assert result.ret == 0
    doc = load(pytester.path / "explore-suff.json")
    assert doc["baseline"]["report"] == str(saved(pytester)[0])


def test_an_unknown_saved_run_is_a_one_line_usage_error(pytester, campaign):
    result = run_in(pytester, campaign, "--explore-suff-baseline=nightly")
    assert result.ret == pytest.ExitCode.USAGE_ERROR
    result.stderr.fnmatch_lines(
        ["*--explore-suff-baseline: nightly: no such file, and no saved run of that name*"]
    )


# -- digests --------------------------------------------------------------------------------------


def test_each_transcript_records_the_digest_of_its_bytes_and_the_campaign_one_of_them(pytester, campaign):
    run_in(pytester, campaign)
    doc = load(pytester.path / "explore-suff.json")
    for rec in doc["transcripts"]:
        assert rec["digest"] == digest_of((campaign / rec["files"][0]).read_bytes())
    lines = sorted(f"{r['path']}\0{r['digest']}\n" for r in doc["transcripts"])
    assert doc["fingerprint"]["campaign"] == digest_of("".join(lines).encode())
    assert doc["fingerprint"]["algorithm"] == "xxh3-128"


def test_a_streamed_gzipped_or_archived_transcript_has_the_digest_of_its_bytes(
    pytester, campaign, monkeypatch
):
    run_in(pytester, campaign, "--explore-suff-json=plain.json")
    plain = load(pytester.path / "plain.json")
    # streamed: every file above the read-whole size; gzipped: its bytes uncompressed
    monkeypatch.setattr(sources, "SMALL_FILE", 16)
    gz = pytester.path / "gz"
    shutil.copytree(campaign, gz)
    first = gz / plain["transcripts"][0]["files"][0]
    first.with_name(first.name + ".gz").write_bytes(gzip.compress(first.read_bytes()))
    first.unlink()
    run_in(pytester, gz, "--explore-suff-json=streamed.json")
    with tarfile.open(pytester.path / "ab.tar.gz", "w:gz") as tar:
        tar.add(campaign, arcname="ab")
    run_in(pytester, pytester.path / "ab.tar.gz", "--explore-suff-json=archived.json")
    for name in ("streamed.json", "archived.json"):
        doc = load(pytester.path / name)
        assert [r["digest"] for r in doc["transcripts"]] == [r["digest"] for r in plain["transcripts"]]


def test_a_baseline_says_whether_it_is_the_same_campaign_an_overlapping_or_a_new_one(pytester, campaign):
    run_in(pytester, campaign, "--explore-suff-json=base.json")
    same = run_in(pytester, campaign, "--explore-suff-baseline=base.json")
    same.stdout.fnmatch_lines(["*the same campaign re-judged*any difference*judge's*not the tool's*"])
    assert load(pytester.path / "explore-suff.json")["baseline"]["campaign"]["relation"] == "same"
    one = next(campaign.rglob("run-headless-with.jsonl"))
    one.write_text(allocation_run("changed").lines()[0] + "\n" + one.read_text())
    run_in(pytester, campaign, "--explore-suff-baseline=base.json")
    rel = load(pytester.path / "explore-suff.json")["baseline"]["campaign"]
    assert rel == {"relation": "overlapping", "identical": 4, "changed": 1, "only_baseline": 0, "only_now": 0}
    other = with_campaign(pytester, 2, 0, name="other")
    run_in(pytester, other, "--explore-suff-baseline=base.json")
    assert load(pytester.path / "explore-suff.json")["baseline"]["campaign"]["relation"] == "new"


def test_a_baseline_of_the_previous_schema_has_no_digests_and_says_so(pytester, example_campaign):
    result = run_in(pytester, example_campaign, f"--explore-suff-baseline={SCHEMA2}")
    assert result.ret == 0
    result.stdout.fnmatch_lines(["*the baseline has no digests*not known*"])
    assert "the baseline is the baseline" not in result.stdout.str()  # one sentence, not two run together
    assert load(pytester.path / "explore-suff.json")["baseline"]["campaign"]["relation"] == "unknown"


def test_a_baseline_with_digests_of_another_algorithm_is_not_called_a_new_campaign(pytester, campaign):
    # The same bytes under another algorithm (sha256/128 of earlier development builds) give
    # other digests: compared as they are, the same campaign would be called a new one.
    run_in(pytester, campaign, "--explore-suff-json=base.json")
    doc = load(pytester.path / "base.json")
    doc["fingerprint"]["algorithm"] = "sha256/128"
    for rec in doc["transcripts"]:
        rec["digest"] = "0" * 32
    (pytester.path / "base.json").write_text(json.dumps(doc))
    result = run_in(pytester, campaign, "--explore-suff-baseline=base.json")
    result.stdout.fnmatch_lines(["*the baseline has no digests*another digest algorithm*not known*"])
    rel = load(pytester.path / "explore-suff.json")["baseline"]["campaign"]
    assert rel["relation"] == "unknown"


# -- trend ----------------------------------------------------------------------------------------


def test_three_saved_runs_trend_and_the_third_fails_when_worse_beyond_noise(pytester, monkeypatch):
    monkeypatch.setenv("COLUMNS", "80")
    for n in (1, 2):
        camp = with_campaign(pytester, 30, 0)
        assert run_in(pytester, camp, f"--explore-suff-save=r{n}").ret == 0
    camp = with_campaign(pytester, 2, 28)
    result = run_in(pytester, camp, "--explore-suff-save=r3", "--explore-suff-trend=all",
                    "--explore-suff-trend-fail")  # fmt: skip
    assert result.ret == pytest.ExitCode.TESTS_FAILED
    result.stdout.fnmatch_lines([
        "trend over 3 runs*",
        "arm headless-with",
        "r1 *100*", "r2 *100*", "r3 *7*v*",
    ])  # fmt: skip
    words = " ".join(result.stdout.str().split())
    # against the earlier runs pooled (not the best of them), Holm over the run's two trend checks
    assert ("--explore-suff-trend-fail: arm 'headless-with' sufficient share -0.933 against the 2 earlier "
            "runs pooled (r1, r2: 1.000), at most -0.820 at the 97.5% bound: worse beyond noise: "
            "FAILED") in words  # fmt: skip
    assert "2 checks decided on intervals, corrected together (Holm)" in words
    table = result.stdout.str().split("trend over 3 runs", 1)[1].split("explore-suff gate", 1)[0]
    assert max(map(len, table.splitlines())) <= 80
    doc = load(pytester.path / "explore-suff.json")
    points = doc["trend"]["arms"]["headless-with"]["points"]["sufficient"]
    assert [p["share"] for p in points] == [1.0, 1.0, pytest.approx(2 / 30)]
    assert points[2]["change"]["beyond_noise"] is True and points[1]["change"]["beyond_noise"] is False
    assert [r["label"] for r in doc["trend"]["runs"]] == ["r1", "r2", "r3"]
    # the same runs, judged by the command: the same verdict
    listing = command(pytester.path, "list")
    assert listing.returncode == 0
    assert [line.split()[0] for line in listing.stdout.splitlines()] == ["1", "2", "3"]
    assert "r3" in listing.stdout.splitlines()[2]
    trend = command(pytester.path, "trend", "--explore-suff-trend-fail")
    assert trend.returncode == 1, trend.stderr
    assert "worse beyond noise: FAILED" in trend.stdout
    assert command(pytester.path, "trend", "--explore-suff-trend=2").returncode == 0


def test_a_run_no_worse_than_the_best_beyond_noise_passes_the_trend_gate(pytester):
    for n in (1, 2):
        assert run_in(pytester, with_campaign(pytester, 10, 10), f"--explore-suff-save=r{n}").ret == 0
    result = run_in(pytester, with_campaign(pytester, 9, 11), "--explore-suff-trend-fail")
    assert result.ret == 0
    words = " ".join(result.stdout.str().split())
    assert "sufficient share -0.050 against the 2 earlier runs pooled (r1, r2: 0.500)" in words
    assert "not worse beyond noise: passed" in words
    assert [r["label"] for r in load(pytester.path / "explore-suff.json")["trend"]["runs"]][-1] == "this run"


def test_a_partial_run_is_marked_in_the_trend_and_never_the_run_to_beat(pytester, monkeypatch):
    monkeypatch.setenv("COLUMNS", "120")
    assert run_in(pytester, with_campaign(pytester, 10, 10), "--explore-suff-save=whole").ret == 0
    # only sufficient runs selected (run3-run9 of the 10): 100%, but a part of the campaign
    part = "run3 or run4 or run5 or run6 or run7 or run8 or run9"
    assert run_in(pytester, with_campaign(pytester, 10, 10), "--explore-suff-save=part", "-k", part).ret == 0
    result = run_in(pytester, with_campaign(pytester, 9, 11), "--explore-suff-trend-fail")
    assert result.ret == 0
    words = " ".join(result.stdout.str().split())
    assert "against the earlier run whole (0.500)" in words and "not worse beyond noise: passed" in words
    result.stdout.fnmatch_lines(["part partial *"])


# -- merged shards --------------------------------------------------------------------------------


@pytest.mark.parametrize("xdist", [[], ["-n", "2"]])
def test_shards_merge_into_the_report_of_one_run_with_the_same_gate_verdicts(
    pytester, example_campaign, xdist
):
    gates = ["--min-sufficient=0.5", "--max-read-missed=0.9"]
    full = run_in(pytester, example_campaign, "--explore-suff-json=full.json", *gates, *xdist)
    parts = []
    for i, k in enumerate(("express", "excalidraw", "not express and not excalidraw")):
        run_in(pytester, example_campaign, f"--explore-suff-json=part{i}.json", "-k", k, *xdist)
        parts.append(f"part{i}.json")
        assert load(pytester.path / parts[-1])["coverage"]["complete"] is False
    merged = command(pytester.path, "merge", *parts, "-o", "merged.json", *gates)
    assert merged.returncode == full.ret == 1, merged.stderr
    assert (pytester.path / "merged.json").read_bytes() == (pytester.path / "full.json").read_bytes()
    # a missing shard: the merge is a partial run that names what did not run
    short = command(pytester.path, "merge", *parts[:2], "-o", "short.json")
    doc = load(pytester.path / "short.json")
    assert short.returncode == 0 and doc["coverage"]["complete"] is False
    assert {n["path"] for n in doc["coverage"]["not_run"]} == {
        r["path"] for r in load(pytester.path / parts[2])["transcripts"]
    }
    # an overlapping shard: counted once, named
    twice = command(pytester.path, "merge", *parts, "part0.json", "full.json", "-o", "twice.json", *gates)
    doc = load(pytester.path / "twice.json")
    assert twice.returncode == 1
    assert doc["coverage"]["ran"] == load(pytester.path / "full.json")["coverage"]["ran"]
    overlap = {o["path"]: o["parts"] for o in doc["merge"]["overlap"]}
    assert len(overlap) == doc["coverage"]["ran"]  # every transcript: full.json judged them all
    for rec in load(pytester.path / "part0.json")["transcripts"]:
        assert overlap[rec["path"]] == ["part0.json", "part0.json", "full.json"]
    assert doc["arms"] == load(pytester.path / "full.json")["arms"]


#: How each sharding plugin names shard ``i`` (0-based) of 3.
SHARDS = {
    "pytest-shard": lambda i: [f"--shard-id={i}", "--num-shards=3"],
    # No durations file: pytest-split says so and splits evenly (a CI job that has stored
    # durations gets duration-balanced groups; the merge does not care which).
    "pytest-split": lambda i: ["--splits=3", f"--group={i + 1}", "--durations-path=no-durations.json"],
}


@pytest.mark.parametrize("plugin", sorted(SHARDS))
def test_a_campaign_judged_as_three_shards_by_a_sharding_plugin_merges_into_one_runs_report(
    pytester, example_campaign, plugin
):
    gates = ["--min-sufficient=0.5", "--max-read-missed=0.9"]
    full = run_in(pytester, example_campaign, "--explore-suff-json=full.json", *gates)
    whole = load(pytester.path / "full.json")
    parts, judged = [], []
    for i in range(3):
        part = f"part{i}.json"
        run_in(pytester, example_campaign, f"--explore-suff-json={part}", *SHARDS[plugin](i))
        doc = load(pytester.path / part)
        parts.append(part)
        judged += [r["path"] for r in doc["transcripts"]]
        cov = doc["coverage"]
        assert cov["complete"] is False and cov["collected"] == whole["coverage"]["collected"]
        # What the shard left to the others is deselected (pytest-shard drops items without
        # telling pytest): not "not run", which would say the session stopped early.
        assert {n["why"] for n in cov["not_run"]} <= {"deselected"}
        assert cov["ran"] + len(cov["not_run"]) == cov["collected"]
    # The plugin did shard: each transcript judged by exactly one part, and not all by one.
    assert sorted(judged) == sorted(r["path"] for r in whole["transcripts"])
    assert max(judged.count(p) for p in judged) == 1
    assert all(load(pytester.path / p)["coverage"]["ran"] < len(judged) for p in parts)
    merged = command(pytester.path, "merge", *parts, "-o", "merged.json", *gates)
    assert merged.returncode == full.ret == 1, merged.stderr
    assert (pytester.path / "merged.json").read_bytes() == (pytester.path / "full.json").read_bytes()
    assert [g["passed"] for g in load(pytester.path / "merged.json")["gates"]] == [
        g["passed"] for g in whole["gates"]
    ]


def test_the_ci_workflow_that_shards_merges_and_gates_runs_as_written(pytester, example_campaign):
    yaml = pytest.importorskip("yaml")  # with the docs extra (mkdocs)
    workflow = yaml.safe_load((EXAMPLES / "ci" / "explore-suff-shards.yml").read_text(encoding="utf-8"))
    jobs = workflow["jobs"]
    (shard,) = [s["run"] for s in jobs["shard"]["steps"] if s.get("run", "").startswith("pytest")]
    (merge,) = [s["run"] for s in jobs["merge"]["steps"] if s.get("run", "").startswith("explore-suff")]
    (pytester.path / "artifacts").mkdir()
    with tarfile.open(pytester.path / "artifacts" / "ab-readme.tar.gz", "w:gz") as tar:
        tar.add(example_campaign, arcname="ab-readme")
    # An earlier workflow run's saved run, as the cache restores it: the baseline is `last`.
    run_in(pytester, pytester.path / "artifacts" / "ab-readme.tar.gz", "--explore-suff-save=earlier")
    env = {**os.environ, "PATH": f"{Path(sys.executable).parent}{os.pathsep}{os.environ['PATH']}",
           "GITHUB_STEP_SUMMARY": "summary.md"}  # fmt: skip
    for i in jobs["shard"]["strategy"]["matrix"]["shard"]:
        line = shard.replace("${{ matrix.shard }}", str(i))
        done = subprocess.run(line, shell=True, cwd=pytester.path, env=env, capture_output=True, text=True)
        assert done.returncode == 0, done.stdout + done.stderr
    line = merge.replace("${{ github.event.workflow_run.head_sha }}", SHA)
    merged = subprocess.run(line, shell=True, cwd=pytester.path, env=env, capture_output=True, text=True)
    assert merged.returncode == 1, merged.stderr  # headless-with's 25% is under the 0.5 asked
    doc = load(pytester.path / "explore-suff.json")
    assert doc["coverage"]["complete"] is True and doc["run"]["name"] == SHA and doc["run"]["number"] == 2
    # every option of the folded command reached it: the baseline's and the trend's gates too
    assert {g["op"] for g in doc["gates"]} == {"min", "max", "min_calls", "max_drop", "max_growth", "trend"}
    assert doc["baseline"]["campaign"]["relation"] == "same"
    assert "### Explore sufficiency" in (pytester.path / "summary.md").read_text(encoding="utf-8")


def test_parts_of_different_campaigns_or_judged_differently_do_not_merge(
    pytester, campaign, example_campaign
):
    run_in(pytester, campaign, "--explore-suff-json=a.json")
    run_in(pytester, example_campaign, "--explore-suff-json=b.json")
    run_in(pytester, campaign, "--explore-suff-json=c.json", "--explore-suff-tool=other")
    for other in ("b.json", "c.json"):
        result = command(pytester.path, "merge", "a.json", other, "-o", "m.json")
        assert result.returncode == 4
        assert result.stderr.count("\n") == 1 and "not parts of one run" in result.stderr
    assert not (pytester.path / "m.json").exists()


# -- the command ----------------------------------------------------------------------------------


def test_compare_judges_a_report_against_a_baseline_with_the_plugins_gates(pytester, campaign):
    run_in(pytester, with_campaign(pytester, 30, 0, name="old"), "--explore-suff-json=old.json")
    run_in(pytester, with_campaign(pytester, 2, 28, name="new"), "--explore-suff-json=new.json")
    ok = command(pytester.path, "compare", "old.json", "old.json", "--max-sufficient-drop=0.1")
    assert ok.returncode == 0, ok.stderr
    assert "the same campaign re-judged" in ok.stdout
    bad = command(pytester.path, "compare", "old.json", "new.json", "--max-sufficient-drop=0.1")
    assert bad.returncode == 1
    assert "--max-sufficient-drop: arm 'headless-with' sufficient share fell by 0.933" in bad.stdout
    assert "against the baseline old.json" in bad.stdout
    # the gate read from the ini file, as the plugin reads it
    pytester.makepyprojecttoml("[tool.pytest.ini_options]\nexplore_suff_max_sufficient_drop = '0.1'\n")
    assert command(pytester.path, "compare", "old.json", "new.json").returncode == 1
    usage = command(pytester.path, "compare", "old.json", "new.json", "--min-sufficient=2")
    assert usage.returncode == 4 and "Traceback" not in usage.stderr


@pytest.mark.parametrize("sub", ["compare", "html", "markdown", "merge"])
def test_a_bad_or_foreign_file_is_a_one_line_error(pytester, sub):
    pytester.path.joinpath("foreign.json").write_text('{"schema": "pytest-benchmark/4", "arms": {}}')
    pytester.path.joinpath("broken.json").write_text('{"schema": ')
    for bad in ("foreign.json", "broken.json", "missing.json"):
        args = {"compare": [bad, bad], "html": [bad, "-o", "p.html"], "markdown": [bad],
                "merge": [bad, "-o", "m.json"]}[sub]  # fmt: skip
        result = command(pytester.path, sub, *args)
        assert result.returncode == 4, result.stdout
        assert result.stderr.startswith("explore-suff: error: ") and result.stderr.count("\n") == 1, (
            result.stderr
        )


def test_reports_of_the_previous_schema_are_read_by_every_command(pytester):
    shutil.copy(SCHEMA2, pytester.path / "old.json")
    compared = command(pytester.path, "compare", "old.json", "old.json", "--min-sufficient=headless-with:0.2")
    assert compared.returncode == 0, compared.stderr
    assert "the baseline has no digests" in compared.stdout
    assert command(pytester.path, "html", "old.json", "-o", "page.html").returncode == 0
    assert "<html" in (pytester.path / "page.html").read_text()
    md = command(pytester.path, "markdown", "old.json")
    assert md.returncode == 0 and "| moved on / answered |" in md.stdout
    merged = command(pytester.path, "merge", "old.json", "-o", "m.json")
    assert merged.returncode == 0, merged.stderr
    # The merge aggregates again, so its arms gain what schema 3 added (`agents`, occupancy's
    # `estimated`, the arm table, each spread's p25, what the calls can detect, the repeats), and keep the
    # rest.
    remerged = load(pytester.path / "m.json")["arms"]
    for figures in remerged.values():
        del figures["agents"]
        del figures["sample"]
        figures.pop("repeats", None)  # schema 2 had no repeats (#38): a group that ran twice has them now
        for key in ("run_figures", "duplicate", "abandon", "cost"):
            del figures[key]
        if figures.get("occupancy"):
            assert figures["occupancy"].pop("estimated") == 0
        for spread in (figures.get("allocation") or {}, *(figures.get("occupancy") or {}).values()):
            if isinstance(spread, dict):
                spread.pop("p25", None)
        if figures.get("allocation"):
            figures["allocation"]["per_run"].pop("p25")
    assert remerged == load(SCHEMA2)["arms"]


def test_the_command_runs_as_a_module_and_without_importing_pytest_for_its_list(pytester):
    result = subprocess.run([sys.executable, "-m", "pytest_explore_suff", "list"], cwd=pytester.path,
                            capture_output=True, text=True, check=False)  # fmt: skip
    assert result.returncode == 0 and "no saved runs" in result.stdout
    usage = subprocess.run([sys.executable, "-m", "pytest_explore_suff", "frobnicate"], cwd=pytester.path,
                           capture_output=True, text=True, check=False)  # fmt: skip
    assert usage.returncode == 4 and usage.stderr.count("\n") == 1


def test_every_command_prints_its_help(capsys):
    # argparse %-formats help texts: "20%%" must reach it as it is ("%" alone crashed --help).
    from pytest_explore_suff.cli import parser

    top = parser()
    commands = next(a for a in top._actions if isinstance(a, argparse._SubParsersAction)).choices
    assert set(commands) >= {"list", "compare", "trend", "merge", "html", "markdown"}
    for name, sub in commands.items():
        text = sub.format_help()
        assert text.startswith("usage: explore-suff " + name)
    assert "95% interval" in commands["compare"].format_help()


# -- Markdown -------------------------------------------------------------------------------------


def test_the_markdown_summary_is_appended_with_buckets_metrics_and_gates(pytester, campaign):
    summary = pytester.path / "summary.md"
    summary.write_text("earlier step\n")
    run_in(pytester, campaign, f"--explore-suff-md={summary}", "--min-sufficient=0.9")
    run_in(pytester, campaign, f"--explore-suff-md={summary}")
    text = summary.read_text()
    assert text.startswith("earlier step\n") and text.count("### Explore sufficiency") == 2
    assert "| moved on / answered | 67% [" in text
    assert "| allocation efficiency |" in text and "| retrieval residual share (median) |" in text
    assert "❌ --min-sufficient: arm 'headless-with' sufficient share 0.667 (n=3) &gt;= 0.9: FAILED" in text
    printed = command(pytester.path, "markdown", "explore-suff.json")
    assert printed.returncode == 0 and printed.stdout in text


@pytest.mark.parametrize(
    ("args", "option"),
    [(["trend", "--min-sufficient=0.9"], "--min-sufficient"),
     (["trend", "--explore-suff-md=t.md"], "--explore-suff-md"),
     (["compare", "1", "2", "--explore-suff-baseline=3"], "--explore-suff-baseline")],
)  # fmt: skip
def test_a_command_refuses_an_option_it_would_ignore(pytester, args, option):
    # `explore-suff trend --min-sufficient=0.9` passed with no gate: a CI job gating so never failed.
    result = command(pytester.path, *args)
    assert result.returncode == 4
    assert "unrecognized arguments" in result.stderr and option in result.stderr


def test_a_closed_pipe_ends_the_command_quietly(pytester):
    # `explore-suff list | head -1`: the reader had enough; no error, no traceback.
    read, write = os.pipe()
    os.close(read)
    exe = Path(sys.executable).with_name("explore-suff")
    done = subprocess.run([str(exe), "list"], cwd=pytester.path, stdout=write, stderr=subprocess.PIPE,
                          text=True, check=False)  # fmt: skip
    os.close(write)
    assert (done.returncode, done.stderr) == (0, "")


def test_markdown_rounds_shares_as_the_terminal_and_the_page_do():
    # halves up (Math.round's rounding): a share of 1/8 read 12% in Markdown beside 13% elsewhere
    from pytest_explore_suff.markdown import _interval, _pct
    from pytest_explore_suff.terminal import percent

    assert _pct(0.125) == percent(0.125) == "13%"
    assert _interval({"lo": 0.125, "hi": 0.625}) == " [13%–63%]"


def test_markdown_escapes_a_campaigns_names(pytester):
    root = pytester.path / "c"
    sufficient_run().write(root / "x" / "run1" / "run-headless-a|<b>*_x_*.jsonl")
    run_in(pytester, root, "--explore-suff-pattern=run-headless-(?P<arm>.+)\\.jsonl")
    text = command(pytester.path, "markdown", "explore-suff.json").stdout
    assert "a\\|&lt;b&gt;\\*\\_x\\_\\*" in text and "<b>" not in text
