"""What a new user found (#41): reports written over what they point at, the command
from a subfolder, damaged saved runs, silent patterns, storage checked late, and the
smaller things a first run shows."""

from __future__ import annotations

import json
import os
import re
import select
import stat
import subprocess
import sys
import threading
import time
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any

import pytest

# -- helpers ------------------------------------------------------------------------------------


def command(cwd: Path, *args: str) -> subprocess.CompletedProcess[str]:
    """The installed console script, in a fresh process, as a user runs it."""
    exe = Path(sys.executable).with_name("explore-suff")
    return subprocess.run([str(exe), *args], cwd=cwd, capture_output=True, text=True, check=False)


def run_in(pytester: pytest.Pytester, camp: Path, *args: str) -> pytest.RunResult:
    return pytester.runpytest(f"--explore-suff={camp}", "-p", "no:randomly", *args)


def load(path: Path) -> Any:
    return json.loads(path.read_text(encoding="utf-8"))


class _Drain:
    data: bytes = b""


@contextmanager
def fifo(path: Path) -> Iterator[_Drain]:
    """A FIFO at ``path``, read by a thread until its writer closes it: what a writer sends
    to a device-like target. Opened without blocking, so that a writer that replaces the
    FIFO instead of writing to it leaves the thread nothing to wait for but the end."""
    os.mkfifo(path)
    got = _Drain()
    done = threading.Event()
    fd = os.open(path, os.O_RDONLY | os.O_NONBLOCK)

    def drain() -> None:
        chunks: list[bytes] = []
        while True:
            ready, _, _ = select.select([fd], [], [], 0.05)
            data = os.read(fd, 1 << 16) if ready else b""
            if data:
                chunks.append(data)
                continue
            if (ready and chunks) or done.is_set():  # the writer closed it, or the command ended
                break
            if ready:  # no writer yet
                time.sleep(0.05)
        got.data = b"".join(chunks)

    thread = threading.Thread(target=drain, daemon=True)
    thread.start()
    try:
        yield got
    finally:
        done.set()
        thread.join(10)
        os.close(fd)


def assert_fifo(path: Path) -> None:
    assert stat.S_ISFIFO(os.lstat(path).st_mode), f"{path} is no longer a FIFO"


# -- 1. reports written through what they point at ------------------------------------------------


def test_json_and_html_reports_write_through_a_fifo_and_keep_a_symlink(pytester, campaign):
    real = pytester.path / "real"
    real.mkdir()
    (pytester.path / "page.html").symlink_to(real / "page.html")  # the page not written yet
    (real / "report.json").write_text("old")
    (pytester.path / "report.json").symlink_to(real / "report.json")
    with fifo(pytester.path / "pipe.md") as md:
        result = run_in(
            pytester, campaign, "--explore-suff-json=report.json", "--explore-suff-html=page.html",
            "--explore-suff-md=pipe.md",
        )  # fmt: skip
    result.assert_outcomes(passed=5)
    assert (pytester.path / "report.json").is_symlink() and (pytester.path / "page.html").is_symlink()
    assert load(real / "report.json")["coverage"]["complete"] is True
    assert "<html" in (real / "page.html").read_text(encoding="utf-8")
    assert_fifo(pytester.path / "pipe.md")
    assert b"explore sufficiency" in md.data.lower() or md.data.startswith(b"#")
    result.stdout.fnmatch_lines(["JSON report: report.json", "HTML report: page.html"])
    with fifo(pytester.path / "pipe.json") as sent:
        run_in(pytester, campaign, "--explore-suff-json=pipe.json").assert_outcomes(passed=5)
    assert_fifo(pytester.path / "pipe.json")
    assert json.loads(sent.data)["coverage"]["ran"] == 5


def test_saved_runs_go_through_a_symlinked_storage_folder(pytester, campaign):
    (pytester.path / "elsewhere").mkdir()
    (pytester.path / ".explore-suff").symlink_to(pytester.path / "elsewhere")
    run_in(pytester, campaign, "--explore-suff-save").assert_outcomes(passed=5)
    assert (pytester.path / ".explore-suff").is_symlink()
    assert len(list((pytester.path / "elsewhere").glob("0001_*.json"))) == 1


def test_merge_and_html_commands_write_through_a_fifo_and_keep_a_symlink(pytester, campaign):
    run_in(pytester, campaign, "--explore-suff-json=part.json").assert_outcomes(passed=5)
    with fifo(pytester.path / "merged") as merged:
        done = command(pytester.path, "merge", "part.json", "part.json", "-o", "merged")
    assert done.returncode == 0, done.stderr
    assert_fifo(pytester.path / "merged")
    assert json.loads(merged.data)["coverage"]["ran"] == 5
    (pytester.path / "real.html").write_text("old")
    (pytester.path / "link.html").symlink_to("real.html")
    done = command(pytester.path, "html", "part.json", "-o", "link.html")
    assert done.returncode == 0, done.stderr
    assert (pytester.path / "link.html").is_symlink()
    assert "<html" in (pytester.path / "real.html").read_text(encoding="utf-8")
    with fifo(pytester.path / "page") as page:
        done = command(pytester.path, "html", "part.json", "-o", "page")
    assert done.returncode == 0, done.stderr
    assert_fifo(pytester.path / "page")
    assert b"<html" in page.data


# -- 3. a damaged saved run ------------------------------------------------------------------------


def test_a_damaged_saved_run_is_left_out_of_every_trend_with_a_warning(pytester, campaign):
    for n in (1, 2, 3):
        run_in(pytester, campaign, f"--explore-suff-save=r{n}").assert_outcomes(passed=5)
    damaged = sorted((pytester.path / ".explore-suff").glob("0002_*.json"))[0]
    damaged.write_text('{"schema": "explore-suff/3", "arms"', encoding="utf-8")  # cut short
    result = run_in(pytester, campaign, "--explore-suff-trend=3", "--explore-suff-trend-fail")
    assert result.ret == 0, result.stdout.str()
    result.stdout.fnmatch_lines(["*saved run 2 left out of the trend*0002_r2*not a JSON report*",
                                 "JSON report: explore-suff.json"])  # fmt: skip
    runs = load(pytester.path / "explore-suff.json")["trend"]["runs"]
    assert [r["label"] for r in runs] == ["r3", "this run"]
    trend = command(pytester.path, "trend", "--explore-suff-trend-fail")
    assert trend.returncode == 0, trend.stderr
    assert "saved run 2 left out of the trend" in trend.stderr
    assert "trend over 2 runs" in trend.stdout
    listing = command(pytester.path, "list")
    assert "unreadable" in listing.stdout and listing.returncode == 0


def test_a_trend_over_one_readable_run_says_run_not_runs(pytester, campaign):
    run_in(pytester, campaign, "--explore-suff-save").assert_outcomes(passed=5)
    trend = command(pytester.path, "trend")
    assert trend.returncode == 0, trend.stderr
    assert "trend over 1 run (" in trend.stdout


# -- 7. storage checked before the first item ------------------------------------------------------


def test_a_storage_that_is_a_file_is_a_usage_error_before_any_item(pytester, campaign):
    (pytester.path / "runs").write_text("not a folder")
    result = run_in(pytester, campaign, "--explore-suff-save", "--explore-suff-storage=runs")
    assert result.ret == pytest.ExitCode.USAGE_ERROR
    result.stderr.fnmatch_lines(["*cannot save the run to *runs: not a folder*"])
    assert "passed" not in result.stdout.str()
    listing = command(pytester.path, "list", "--explore-suff-storage=runs")
    assert listing.returncode == 4
    assert listing.stderr.strip() == "explore-suff: error: storage runs: not a folder"
    trend = run_in(pytester, campaign, "--explore-suff-trend=2", "--explore-suff-storage=runs")
    assert trend.ret == pytest.ExitCode.USAGE_ERROR


def test_a_storage_under_a_file_is_a_usage_error_before_any_item(pytester, campaign):
    (pytester.path / "afile").write_text("")
    result = run_in(pytester, campaign, "--explore-suff-save", "--explore-suff-storage=afile/runs")
    assert result.ret == pytest.ExitCode.USAGE_ERROR
    result.stderr.fnmatch_lines(["*cannot save the run to *afile/runs: Not a directory*"])


@pytest.mark.skipif(os.geteuid() == 0, reason="root writes to a read-only folder")
def test_a_read_only_storage_is_a_usage_error_before_any_item_and_the_command_says_so(pytester, campaign):
    runs = pytester.path / "runs"
    runs.mkdir()
    runs.chmod(0o555)
    try:
        result = run_in(pytester, campaign, "--explore-suff-save", "--explore-suff-storage=runs", "-n", "2")
        assert result.ret == pytest.ExitCode.USAGE_ERROR
        result.stderr.fnmatch_lines(["*cannot save the run to *runs: Permission denied*"])
        assert "passed" not in result.stdout.str()
        run_in(pytester, campaign, "--explore-suff-json=part.json").assert_outcomes(passed=5)
        merged = command(pytester.path, "merge", "part.json", "-o", "full.json", "--explore-suff-save",
                         "--explore-suff-storage=runs")  # fmt: skip
        assert merged.returncode == 4
        assert "cannot save the run to runs: Permission denied" in merged.stderr
    finally:
        runs.chmod(0o755)


def test_a_run_that_cannot_be_saved_at_its_end_says_so_and_keeps_the_report_line(pytester, campaign):
    # The storage was fine at the start and is gone when the run ends: the JSON line stays.
    pytester.makeconftest(
        """
        import os, shutil
        def pytest_collection_finish(session):
            shutil.rmtree("runs")
            open("runs", "w").close()
        """
    )
    result = run_in(pytester, campaign, "--explore-suff-save", "--explore-suff-storage=runs")
    assert result.ret == pytest.ExitCode.INTERNAL_ERROR
    result.stdout.fnmatch_lines(["*could not save the run*runs: not a folder*",
                                 "JSON report: explore-suff.json"])  # fmt: skip


# -- 13. the smaller things ------------------------------------------------------------------------


def test_the_storage_folder_the_plugin_makes_holds_a_gitignore_as_pytest_cache_does(pytester, campaign):
    run_in(pytester, campaign, "--explore-suff-save").assert_outcomes(passed=5)
    ignore = pytester.path / ".explore-suff" / ".gitignore"
    assert ignore.read_text(encoding="utf-8").splitlines()[-1] == "*"
    assert next((pytester.path / ".explore-suff").glob("*.json")).name.startswith("0001_")
    # a folder the user made is left as it is
    (pytester.path / "mine").mkdir()
    run_in(pytester, campaign, "--explore-suff-save", "--explore-suff-storage=mine").assert_outcomes(passed=5)
    assert not (pytester.path / "mine" / ".gitignore").exists()
    assert command(pytester.path, "list").stdout.startswith("   1  ")


def test_command_errors_name_the_command_once(tmp_path):
    unknown = command(tmp_path, "list", "--bogus")
    assert unknown.returncode == 4
    assert unknown.stderr == "explore-suff: error: unrecognized arguments: --bogus\n"
    missing = command(tmp_path, "merge")
    assert missing.stderr == (
        "explore-suff merge: error: the following arguments are required: PART, -o/--output\n"
    )


@pytest.mark.parametrize("xdist", [[], ["-n", "2"]])
def test_x_stops_at_a_broken_transcript_with_exit_1_with_or_without_xdist(pytester, campaign, xdist):
    (campaign / "express" / "run1" / "run-headless-broken.jsonl").write_text('{"type": "assistant", x\n')
    result = run_in(pytester, campaign, "-x", "--explore-suff-pattern=run-(?P<arm>[^/]+)\\.jsonl", *xdist)
    assert result.ret == pytest.ExitCode.TESTS_FAILED
    cov = load(pytester.path / "explore-suff.json")["coverage"]
    assert cov["interrupted"] is False and cov["stopped"] == "stopping after 1 failures"


# -- 4 and 10. the trend gate on the page; a hidden column's change -------------------------------


def three_runs_then_worse(pytester: pytest.Pytester, *args: str) -> pytest.RunResult:
    """r1 and r2 answer 30 of 30 calls sufficiently, r3 (this run) 2 of 30 and reads a
    returned file after 28: beyond noise in the sufficient and the "returned" columns."""
    import shutil

    from builders import ab_campaign, allocation_run, no_explore_run, sufficient_run

    def camp(sufficient: int) -> Path:
        root = pytester.path / "ab"
        shutil.rmtree(root, ignore_errors=True)
        runs = [sufficient_run(f"s{i}") for i in range(sufficient)]
        runs += [allocation_run(f"a{i}") for i in range(30 - sufficient)]
        return ab_campaign(root, with_runs=runs, without_runs=[no_explore_run()])

    for n in (1, 2):
        assert run_in(pytester, camp(30), f"--explore-suff-save=r{n}").ret == 0
    return run_in(pytester, camp(2), "--explore-suff-save=r3", "--explore-suff-trend=all", *args)


def test_the_page_words_the_trend_gate_as_the_terminal_does(pytester):
    result = three_runs_then_worse(pytester, "--explore-suff-trend-fail", "--explore-suff-html=page.html")
    assert result.ret == pytest.ExitCode.TESTS_FAILED
    page = (pytester.path / "page.html").read_text(encoding="utf-8")
    gates = page.split('<section id="gates">', 1)[1].split("</section>", 1)[0]
    assert "--trend-sufficient" not in gates and "(n=0)" not in gates and "trend 0" not in gates
    text = " ".join(gates.replace("<code>", "").replace("</code>", "").split())
    said = next(line for line in result.stdout.lines if "gate --explore-suff-trend-fail: arm 'headless-with'"
                in line and "sufficient share" in line)  # fmt: skip
    words = said.split("arm 'headless-with' ", 1)[1].rsplit(": ", 1)[0]  # less arm and verdict
    assert words.startswith("sufficient share -0.933 against ")
    assert f"--explore-suff-trend-fail arm headless-with: {words}" in text


def test_at_80_columns_the_trend_names_a_change_in_a_column_it_left_out(pytester, monkeypatch):
    monkeypatch.setenv("COLUMNS", "80")
    result = three_runs_then_worse(pytester)
    out = result.stdout.str()
    table = out.split("trend over 3 runs", 1)[1].split("JSON report", 1)[0]
    header = next(line for line in table.splitlines() if line.startswith("run "))
    assert "sufficient" in header and "returned" not in header  # the buckets' columns left out at 80
    result.stdout.fnmatch_lines(["not shown at this width, changed beyond noise: returned ^ in r3*"])
    monkeypatch.setenv("COLUMNS", "200")
    wide = three_runs_then_worse(pytester)
    assert "not shown at this width" not in wide.stdout.str()


# -- 2. the command from a subfolder --------------------------------------------------------------


@pytest.mark.parametrize(
    "ini",
    [
        ("pytest.ini", "[pytest]\nexplore_suff_storage = runs\nexplore_suff_min_sufficient = 0.99\n"),
        ("pyproject.toml", '[tool.pytest.ini_options]\nexplore_suff_storage = "runs"\n'
                           'explore_suff_min_sufficient = ["0.99"]\n'),
    ],
)  # fmt: skip
def test_the_command_reads_the_projects_ini_file_from_a_subfolder_as_pytest_does(
    pytester, campaign, monkeypatch, ini
):
    name, text = ini
    (pytester.path / name).write_text(text, encoding="utf-8")
    sub = pytester.path / "docs" / "deeper"
    sub.mkdir(parents=True)
    monkeypatch.chdir(sub)  # pytest, run from the subfolder, saves to the project's storage
    saved = run_in(pytester, campaign, "--explore-suff-save", "--explore-suff-json=part.json")
    assert saved.ret == pytest.ExitCode.TESTS_FAILED  # the ini's gate
    assert len(list((pytester.path / "runs").glob("0001_*.json"))) == 1
    listing = command(sub, "list")
    assert listing.returncode == 0 and listing.stdout.startswith("   1  "), listing.stdout + listing.stderr
    for where in (pytester.path, sub):
        merged = command(where, "merge", str(sub / "part.json"), str(sub / "part.json"), "-o", "full.json")
        assert merged.returncode == 1, (where, merged.stdout, merged.stderr)  # the same gate decides
        assert "gate --min-sufficient: arm 'headless-with' sufficient share 0.667" in merged.stdout
    # pytest's own -c and --rootdir, as pytest takes them
    other = pytester.path / "other.ini"
    other.write_text("[pytest]\nexplore_suff_storage = elsewhere\n", encoding="utf-8")
    assert "elsewhere" in command(sub, "list", "-c", str(other)).stdout
    assert command(sub, "list", "-c", "missing.ini").returncode == 4


# -- 5. a pattern or an arm that names nothing -----------------------------------------------------


@pytest.mark.parametrize("xdist", [[], ["-n", "2"]])
def test_a_pattern_that_matches_no_transcript_is_a_usage_error(pytester, campaign, xdist):
    result = run_in(pytester, campaign, r"--explore-suff-pattern=trial-(?P<run>\d+)", *xdist)
    assert result.ret == pytest.ExitCode.USAGE_ERROR
    result.stderr.fnmatch_lines([
        "ERROR: --explore-suff-pattern: 'trial-(?P<run>\\\\d+)' matches none of the 5 transcripts' paths "
        "(searched in the path in the campaign, e.g. 'express/run1/run-headless-with.jsonl')"
    ])  # fmt: skip
    assert len([line for line in result.stderr.lines if line.strip()]) == 1


@pytest.mark.parametrize(
    ("pattern", "says"),
    [(r"run-(?P<Arm>[^.]+)\.jsonl", "names the group(s) Arm;"), (r"run-[^.]+\.jsonl", "names no group;")],
)
def test_a_pattern_naming_a_group_it_does_not_read_is_a_usage_error(pytester, campaign, pattern, says):
    result = run_in(pytester, campaign, f"--explore-suff-pattern={pattern}")
    assert result.ret == pytest.ExitCode.USAGE_ERROR
    result.stderr.fnmatch_lines([f"ERROR: --explore-suff-pattern: {says} it sets a transcript's arm, group, "
                                 "run, agent with named groups such as (?P<arm>[^/]+)"])  # fmt: skip


def test_a_pattern_that_matches_some_transcripts_is_no_error(pytester, campaign):
    result = run_in(pytester, campaign, r"--explore-suff-pattern=run1/run-(?P<arm>[^.]+)\.jsonl")
    assert result.ret == 0


def test_the_command_refuses_an_arm_to_compare_that_no_record_has(pytester, campaign):
    run_in(pytester, campaign, "--explore-suff-json=part.json").assert_outcomes(passed=5)
    merged = command(pytester.path, "merge", "part.json", "-o", "full.json",
                     "--explore-suff-compare=headless-with,headless-wihtout")  # fmt: skip
    assert merged.returncode == 4
    assert merged.stderr == ("explore-suff: error: --explore-suff-compare: no arm 'headless-wihtout' in the "
                             "campaign (its arms: headless-with, headless-without)\n")  # fmt: skip


# -- 11. a cancelled last request ------------------------------------------------------------------


@pytest.mark.parametrize("files", [("api", "ui"), ("ui",)])
def test_a_cline_task_whose_last_request_was_cancelled_keeps_the_last_reported_context(pytester, files):
    from agent_shapes import ClineTask
    from builders import response

    t = ClineTask()
    t.user("where is f?")
    t.step(t.explore("a"), results=[response(["lib/a.py"])], prompt_tokens=11_145)
    t.step(t.call("read_file", path="lib/a.py"), results=["def f(): ..."], prompt_tokens=12_400)
    # The user cancels the next request before the model answers: Cline logs it with every count 0.
    zeros = {"request": "...", "tokensIn": 0, "tokensOut": 0, "cacheWrites": 0, "cacheReads": 0, "cost": 0,
             "cancelReason": "user_cancelled"}  # fmt: skip
    t.ui.append({"ts": t.ts + 1, "type": "say", "say": "api_req_started", "text": json.dumps(zeros)})
    interrupted = {"type": "text", "text": "[Response interrupted by user]"}
    t.api.append({"role": "assistant", "content": [interrupted]})
    t.write(pytester.path / "camp" / "tasks" / t.task_id, files)
    run_in(pytester, pytester.path / "camp", "--explore-suff-json=r.json").assert_outcomes(passed=1)
    occ = load(pytester.path / "r.json")["transcripts"][0]["occupancy"]
    assert (occ["ctx_base"], occ["ctx_final"], occ["turns"]) == (11_145, 12_400, 2)


def test_a_claude_run_whose_last_request_reports_no_tokens_keeps_the_last_reported_context(pytester):
    from builders import sufficient_run, with_usage

    run = with_usage(sufficient_run("q"), 18_000)
    last = next(e for e in reversed(run.events) if e["type"] == "assistant")
    final = max(e["message"]["usage"]["cache_read_input_tokens"] + 3 for e in run.events
                if e["type"] == "assistant" and e is not last)  # fmt: skip
    last["message"]["usage"] = {"input_tokens": 0, "cache_read_input_tokens": 0, "output_tokens": 0}
    run.write(pytester.path / "camp" / "g" / "run1" / "run-headless-with.jsonl")
    run_in(pytester, pytester.path / "camp", "--explore-suff-json=r.json").assert_outcomes(passed=1)
    occ = load(pytester.path / "r.json")["transcripts"][0]["occupancy"]
    assert occ["ctx_final"] == final > 0


# -- 12. docs that say what the code does ---------------------------------------------------------

ROOT = Path(__file__).resolve().parent.parent


def test_the_readmes_first_examples_name_a_campaign_that_is_there_or_say_it_is_yours():
    for page in (ROOT / "README.md", ROOT / "docs" / "index.md"):
        text = page.read_text(encoding="utf-8")
        for campaign in re.findall(r"^\$ pytest --explore-suff=(\S+)", text, re.M):
            assert (ROOT / campaign).exists() or campaign.startswith("path/to/"), (page.name, campaign)


def test_merge_takes_one_part_and_its_help_says_so(pytester, campaign):
    run_in(pytester, campaign, "--explore-suff-json=part.json").assert_outcomes(passed=5)
    one = command(pytester.path, "merge", "part.json", "-o", "full.json", "--min-sufficient=0.99")
    assert one.returncode == 1 and "FAILED" in one.stdout  # judged again, with the gate given
    helped = command(pytester.path, "merge", "--help")
    words = " ".join(helped.stdout.split())
    assert "two or more" not in words and "or one report to judge again with the gates given" in words


def test_the_arm_of_a_transcript_whose_path_names_none_is_as_the_agents_page_says(pytester):
    from shutil import copy, copytree

    camp = pytester.path / "camp"
    (camp / "a").mkdir(parents=True)
    (camp / "b").mkdir()
    copy(ROOT / "examples" / "campaign" / "express" / "run1" / "run-headless-with.jsonl",
         camp / "a" / "claude_output.jsonl")  # fmt: skip
    copy(next((ROOT / "examples" / "campaign" / "sessions").glob("*/*.jsonl")), camp / "b")
    copytree(ROOT / "examples" / "mixed-agents" / "codex", camp / "codex")
    run_in(pytester, camp, "--explore-suff-json=r.json")
    arms = {(t["kind"], t["arm"]) for t in load(pytester.path / "r.json")["transcripts"]}
    assert arms == {("stream-json", "default"), ("interactive", "interactive"), ("codex", "codex")}
    page = " ".join((ROOT / "docs" / "agents.md").read_text(encoding="utf-8").split())
    assert "a Claude Code session log goes to the arm `interactive`; a headless Claude Code" in page
    assert "to the arm `default`; every other agent's session to its agent's name" in page


def test_at_qq_only_failed_gates_print_as_the_options_page_says(pytester, campaign):
    result = run_in(pytester, campaign, "-qq", "--min-sufficient=headless-with:0.5",
                    "--min-sufficient=headless-with:0.99")  # fmt: skip
    gates = [line for line in result.stdout.lines if line.startswith("explore-suff gate")]
    assert len(gates) == 1 and "0.99: FAILED" in gates[0]
    page = (ROOT / "docs" / "options.md").read_text(encoding="utf-8")
    assert "at every\nverbosity (`-qq` included)" not in page
    assert "At `-qq` only the gates that failed" in page



# -- 6. a large archive says what is being read ----------------------------------------------------


def _tarred(pytester: pytest.Pytester, camp: Path) -> Path:
    import tarfile

    archive = pytester.path / "camp.tar.gz"
    with tarfile.open(archive, "w:gz") as tar:
        tar.add(camp, arcname="ab")
    return archive


@pytest.mark.parametrize("xdist", [[], ["-n", "2"]])
def test_an_archive_campaign_says_what_it_reads_before_the_wait(pytester, campaign, xdist):
    archive = _tarred(pytester, campaign)
    result = run_in(pytester, archive, *xdist)
    result.assert_outcomes(passed=5)
    lines = result.stdout.lines
    reading = [i for i, line in enumerate(lines) if line.startswith("explore-suff: reading the archive")]
    listed = [i for i, line in enumerate(lines) if line.startswith("explore-suff: listed camp.tar.gz")]
    assert len(reading) == len(listed) == 1, lines  # the controller's, not each worker's
    header = next(i for i, line in enumerate(lines) if "test session starts" in line)
    assert reading[0] < listed[0] < header  # said before pytest's header, which waits for the listing
    said = r"explore-suff: reading the archive camp\.tar\.gz \(\d+ kB\) to list its transcripts\.\.\."
    assert re.fullmatch(said, lines[reading[0]])
    done = r"explore-suff: listed camp\.tar\.gz \(\d+ kB\) in \d+\.\d s: 5 transcripts"
    assert re.fullmatch(done, lines[listed[0]])
    quiet = run_in(pytester, archive, "-qq")
    assert "explore-suff: reading" not in quiet.stdout.str()


def test_listing_an_archive_reports_how_much_of_it_was_read(tmp_path):
    import tarfile

    from pytest_explore_suff.sources import INDEXING, ArchiveSource

    root = tmp_path / "camp"
    for i in range(100):
        (root / "g" / f"run{i}").mkdir(parents=True)
        (root / "g" / f"run{i}" / "run-a.jsonl").write_bytes(os.urandom(20_000).hex().encode())
    archive = tmp_path / "camp.tar.gz"
    with tarfile.open(archive, "w:gz") as tar:
        tar.add(root, arcname="camp")
    seen: list[int] = []
    token = INDEXING.set(seen.append)
    try:
        ArchiveSource(str(archive)).close()
    finally:
        INDEXING.reset(token)
    size = archive.stat().st_size
    assert len(seen) >= 5 and seen == sorted(seen) and 0 <= seen[0] < seen[-1] <= size


def test_the_readme_says_how_long_the_suite_takes_as_measured():
    for page in (ROOT / "README.md", ROOT / "docs" / "contributing.md"):
        lines = page.read_text(encoding="utf-8").splitlines()
        line = next(x for x in lines if "pytest -n 2" in x and "#" in x)
        assert "a few minutes" not in line, (page.name, line)
        assert re.search(r"\d+ min \d+ s on 2 idle cores", line), (page.name, line)
# -- 8. a baseline judged with other options -------------------------------------------------------


def test_a_baseline_judged_with_other_options_says_which_and_records_them(pytester, campaign):
    run_in(pytester, campaign, "--explore-suff-tool=search_code", "--explore-suff-json=base.json")
    run_in(pytester, campaign, "--explore-suff-json=same.json")
    result = run_in(pytester, campaign, "--explore-suff-baseline=base.json", "--explore-suff-json=now.json")
    words = " ".join(result.stdout.str().split())
    assert ("the baseline was judged with other options: --explore-suff-tool 'search_code' in the baseline, "
            "'codegraph_explore' now: a difference below may be the judge's, not the tool's") in words
    base = load(pytester.path / "now.json")["baseline"]
    tool = {"option": "tool", "baseline": "search_code", "now": "codegraph_explore"}
    assert base["options_differ"] == [tool]
    same = run_in(pytester, campaign, "--explore-suff-baseline=same.json", "--explore-suff-json=now.json")
    assert "judged with other options" not in same.stdout.str()
    assert load(pytester.path / "now.json")["baseline"]["options_differ"] == []
    compared = command(pytester.path, "compare", "base.json", "same.json", "-o", "c.json")
    assert "judged with other options: --explore-suff-tool 'search_code'" in " ".join(compared.stdout.split())
    assert load(pytester.path / "c.json")["baseline"]["options_differ"][0]["option"] == "tool"


def test_a_trend_marks_the_runs_judged_with_other_options(pytester, campaign):
    run_in(pytester, campaign, "--explore-suff-save=old", "--explore-suff-marker=^FILE: (\\S+)")
    run_in(pytester, campaign, "--explore-suff-save=same")
    result = run_in(pytester, campaign, "--explore-suff-trend=all", "--explore-suff-html=page.html")
    result.stdout.fnmatch_lines(["old *", "same  *", "*: judged with other options than the latest run: old "
                                 "(marker); a change there may be the judge's, not the tool's"])  # fmt: skip
    runs = load(pytester.path / "explore-suff.json")["trend"]["runs"]
    assert [r["options_differ"] for r in runs] == [["marker"], [], []]
    page = (pytester.path / "page.html").read_text(encoding="utf-8")
    assert '<td class="trend-options">other: marker</td>' in page
    trend = command(pytester.path, "trend")
    assert "judged with other options than the latest run: old (marker)" in " ".join(trend.stdout.split())


# --- a report the same as the file there -------------------------------------------------


def _write(path: Path, chunks: list[bytes]) -> None:
    from pytest_explore_suff.report import write_chunks_atomic

    write_chunks_atomic(str(path), chunks)


def test_a_report_unchanged_to_the_byte_is_not_written_again_only_touched(tmp_path):
    target = tmp_path / "r.json"
    _write(target, [b"{", b'"a": 1', b"}"])
    before = target.stat()
    os.utime(target, ns=(before.st_atime_ns, before.st_mtime_ns - 10**9))
    _write(target, [b'{"a"', b": 1}"])  # the same bytes in other chunks
    after = target.stat()
    assert target.read_bytes() == b'{"a": 1}'
    assert after.st_ino == before.st_ino  # not replaced
    assert after.st_mtime_ns > before.st_mtime_ns - 10**9  # touched, as a write would have


@pytest.mark.parametrize(
    "old, new",
    [
        (b"abcdef", b"abcxyz"),  # differs in the middle of a chunk
        (b"abcdef", b"abc"),  # the new one is shorter
        (b"abc", b"abcdef"),  # longer
        (b"abcdef", b"xbcdef"),  # from the first byte
        (b"", b"abc"),
        (b"abc" * 500_000, b"abc" * 500_000 + b"!"),  # the agreeing part copied in pieces
    ],
)
def test_a_report_that_differs_anywhere_replaces_the_file_whole(tmp_path, old, new):
    target = tmp_path / "r.json"
    target.write_bytes(old)
    inode = target.stat().st_ino
    chunks = [new[i : i + 2] for i in range(0, len(new), 2)] or [b""]
    _write(target, chunks)
    assert target.read_bytes() == new
    assert target.stat().st_ino != inode  # replaced in one step
    assert [p.name for p in tmp_path.iterdir()] == ["r.json"]  # no temporary file left


def test_a_report_that_fails_after_agreeing_leaves_the_old_file_whole(tmp_path):
    target = tmp_path / "r.json"
    target.write_bytes(b"abcdef")

    def chunks():
        yield b"abc"
        yield b"dXf"
        raise RuntimeError("the report could not be finished")

    with pytest.raises(RuntimeError):
        _write(target, chunks())  # type: ignore[arg-type]
    assert target.read_bytes() == b"abcdef"
    assert [p.name for p in tmp_path.iterdir()] == ["r.json"]
