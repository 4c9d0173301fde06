"""Installed and not asked for, the plugin costs pytest's start-up next to nothing.

Every pytest run of a project that has the plugin in its test dependencies
imports it (and every xdist worker does). These runs are whole processes in a
project without a conftest.py, with Python's import log on
(``PYTHONPROFILEIMPORTTIME``, which xdist's workers inherit): what the package
imports there is what the plugin costs a project that never asks for a campaign.
"""

from __future__ import annotations

import os
import re
import subprocess
import sys

import pytest
from builders import ab_campaign, no_explore_run, sufficient_run

#: What registering the options and the hooks needs: nothing that reads or reports a campaign.
LIGHT = {
    "pytest_explore_suff",
    "pytest_explore_suff.plugin",
    "pytest_explore_suff.hookspecs",
    "pytest_explore_suff.options",
}
#: What a campaign needs, at least: if the import log misses these in a campaign run, it
#: would miss them in a run without one too. (Only modules some ``import`` statement loads:
#: the log leaves out what `importlib.import_module` loads, as the package's lazy names do.)
CAMPAIGN = {
    "pytest_explore_suff.nodes",
    "pytest_explore_suff.session",
    "pytest_explore_suff.readers",
    "pytest_explore_suff.events",
    "pytest_explore_suff.metrics",
    "pytest_explore_suff.report",
}
#: What judging a transcript needs and a re-run whose every transcript is in the verdict
#: cache does not (each loaded by an ``import`` statement, so the log would show it).
JUDGING = {
    "pytest_explore_suff.events",
    "pytest_explore_suff.metrics",
    "pytest_explore_suff.allocation",
    "pytest_explore_suff.occupancy",
    "pytest_explore_suff.runfigures",
}
_IMPORTED = re.compile(r"^import time:\s*\d+\s*\|\s*\d+\s*\|\s*(\S+)\s*$", re.MULTILINE)


def imported(stderr: str) -> set[str]:
    """The modules the import log names, in every process whose stderr it is."""
    return set(_IMPORTED.findall(stderr))


def ours(modules: set[str]) -> set[str]:
    return {m for m in modules if m == "pytest_explore_suff" or m.startswith("pytest_explore_suff.")}


@pytest.fixture
def import_log(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("PYTHONPROFILEIMPORTTIME", "1")


@pytest.fixture
def small_campaign(pytester: pytest.Pytester) -> str:
    root = pytester.path / "camp"
    ab_campaign(
        root, with_runs=[sufficient_run("one"), sufficient_run("two")], without_runs=[no_explore_run()]
    )
    return str(root)


def run(pytester: pytest.Pytester, *args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-m", "pytest", "-p", "no:cacheprovider", *args],
        cwd=pytester.path, capture_output=True, text=True, check=False,
    )  # fmt: skip


@pytest.mark.parametrize(
    "args",
    [["--co"], ["--co", "-q"], ["-q"], ["-n", "2"], ["-k", "nothing"], ["--explore-suff="]],
    ids=["co", "co-q", "run", "n2", "k", "switched-off"],
)
def test_a_run_without_a_campaign_imports_only_the_options(pytester, import_log, args):
    pytester.makepyfile(test_project="def test_one(): pass\ndef test_two(): pass")
    done = run(pytester, *args)
    assert done.returncode in (0, 5), done.stdout + done.stderr
    modules = imported(done.stderr)
    # The plugin was loaded (pytest imports it through importlib, which the log leaves out:
    # its own imports are there).
    assert "pytest_explore_suff.options" in modules
    if "-n" in args:
        assert "xdist.remote" in modules  # the workers' imports are in the log too
    assert ours(modules) <= LIGHT, sorted(ours(modules) - LIGHT)


@pytest.mark.parametrize("dist", [[], ["-n", "2"]], ids=["n0", "n2"])
def test_asked_for_the_plugin_imports_what_the_campaign_needs_and_runs_it(
    pytester, import_log, small_campaign, dist
):
    pytester.makepyfile(test_project="def test_one(): pass")
    done = run(pytester, f"--explore-suff={small_campaign}", "--explore-suff-json=r.json", *dist)
    assert done.returncode == 0, done.stdout + done.stderr
    assert ours(imported(done.stderr)) >= CAMPAIGN
    assert "= explore sufficiency =" in done.stdout
    assert "3 passed" in done.stdout  # the campaign's transcripts; named paths only join it
    assert (pytester.path / "r.json").is_file()


def test_a_campaign_set_in_the_ini_file_is_asked_for(pytester, import_log, small_campaign):
    pytester.makeini(f"[pytest]\nexplore_suff = {small_campaign}\nexplore_suff_json = none\n")
    done = run(pytester, "-q")
    assert done.returncode == 0, done.stdout + done.stderr
    assert ours(imported(done.stderr)) >= CAMPAIGN
    assert "3 passed" in done.stdout


def test_a_re_run_from_the_verdict_cache_imports_no_judging(pytester, import_log, small_campaign):
    pytester.makepyfile(test_project="def test_one(): pass")
    args = [sys.executable, "-m", "pytest", f"--explore-suff={small_campaign}", "--explore-suff-json=r.json"]
    first = subprocess.run(args, cwd=pytester.path, capture_output=True, text=True, check=False)
    assert first.returncode == 0, first.stdout + first.stderr
    assert ours(imported(first.stderr)) >= JUDGING
    report = (pytester.path / "r.json").read_bytes()
    again = subprocess.run(args, cwd=pytester.path, capture_output=True, text=True, check=False)
    assert again.returncode == 0, again.stdout + again.stderr
    assert "verdict cache: 3 of 3 transcript(s) unchanged" in again.stdout
    assert not ours(imported(again.stderr)) & JUDGING, sorted(ours(imported(again.stderr)) & JUDGING)
    assert (pytester.path / "r.json").read_bytes() == report


def test_the_plain_and_xdist_reports_agree_in_fresh_processes(pytester, small_campaign):
    for name, dist in (("plain.json", []), ("dist.json", ["-n", "2"])):
        done = run(pytester, f"--explore-suff={small_campaign}", f"--explore-suff-json={name}", *dist)
        assert done.returncode == 0, done.stdout + done.stderr
    assert (pytester.path / "plain.json").read_bytes() == (pytester.path / "dist.json").read_bytes()


def test_a_bad_ini_value_is_an_error_with_or_without_a_campaign(pytester):
    pytester.makeini("[pytest]\nexplore_suff_window = lots\n")
    done = run(pytester, "--co")
    assert done.returncode == pytest.ExitCode.USAGE_ERROR
    assert "ini explore_suff_window: 'lots': expected a number of tokens" in done.stderr


PUBLIC = """
import sys
import pytest_explore_suff as pkg
light = {m for m in sys.modules if m.startswith("pytest_explore_suff")}
print(sorted(light))
import pytest_explore_suff.report  # imports the submodule classify, after the package
from pytest_explore_suff import *  # noqa
from pytest_explore_suff import classify, judge, __version__
assert callable(classify) and classify.__module__ == "pytest_explore_suff.classify", classify
assert all(getattr(pkg, name) is not None for name in pkg.__all__)
assert isinstance(__version__, str)
verdict, collector = judge("stream-json", [sys.argv[1]])
print(verdict.answered, sorted(verdict.counts.items()))
"""


def test_the_package_imports_its_names_when_asked_and_they_are_the_same(tmp_path):
    path = sufficient_run("q").write(tmp_path / "run-new.jsonl")
    done = subprocess.run(
        [sys.executable, "-c", PUBLIC, str(path)], capture_output=True, text=True, check=False, cwd=tmp_path
    )
    assert done.returncode == 0, done.stderr
    first, last = done.stdout.splitlines()
    assert first == "['pytest_explore_suff']"  # importing the package imports nothing else of it
    assert last.startswith("1 [")
    assert "('sufficient', 1)" in last


REWRITTEN = """
import sys, pytest, _pytest.config as config
# What pytest marks for a wheel install (an editable one marks the plugin module alone).
listed = config._iter_rewritable_modules
config._iter_rewritable_modules = lambda files: [*listed(files), "pytest_explore_suff"]
args = ["-q", "-p", "no:cacheprovider", f"--explore-suff={sys.argv[1]}", "--explore-suff-json=none"]
code = pytest.main(args)
ours = sorted(m for m in sys.modules if m.startswith("pytest_explore_suff."))
print(code, len(ours))
print(sorted({type(sys.modules[m].__loader__).__name__ for m in ours if m != "pytest_explore_suff.plugin"}))
"""


def test_pytest_does_not_rewrite_the_asserts_of_the_modules_a_campaign_imports(small_campaign, tmp_path):
    # pytest rewrites every module of a distribution with a pytest11 entry point; under
    # PYTHONDONTWRITEBYTECODE it cannot cache the result, and parsed and compiled each of
    # them at every start (a quarter of a second). Only the package and the plugin module,
    # imported before the plugin can say so, go through its hook.
    env = {**os.environ, "PYTHONDONTWRITEBYTECODE": "1"}
    done = subprocess.run(
        [sys.executable, "-c", REWRITTEN, small_campaign],
        cwd=tmp_path, capture_output=True, text=True, check=False, env=env,
    )  # fmt: skip
    assert done.returncode == 0, done.stderr
    first, loaders = done.stdout.splitlines()[-2:]
    code, imported_count = first.split()
    assert code == "0" and int(imported_count) > 20, done.stdout
    assert loaders == "['SourceFileLoader']", loaders


HOOKS_SEEN = """
import pytest

seen = []

@pytest.hookimpl(trylast=True)
def pytest_configure(config):
    impls = config.hook.pytest_runtest_makereport.get_hookimpls()
    seen.append(sorted(i.plugin_name for i in impls if "explore" in i.plugin_name))

def pytest_terminal_summary(terminalreporter):
    terminalreporter.write_line(f"our makereport hooks: {seen[0]}")
"""


@pytest.mark.parametrize("asked", [False, True], ids=["not-asked", "asked"])
def test_the_campaign_hooks_are_registered_only_when_a_campaign_is_asked_for(pytester, small_campaign, asked):
    # A project's own test run pays no hook call of ours per item or per report.
    pytester.makeconftest(HOOKS_SEEN)
    pytester.makepyfile(test_project="def test_one(): pass")
    args = [f"--explore-suff={small_campaign}", "--explore-suff-json=none"] if asked else []
    result = pytester.runpytest_subprocess("-p", "no:cacheprovider", *args)
    result.stdout.fnmatch_lines(
        ["our makereport hooks: ['explore-suff-campaign']" if asked else "our makereport hooks: []"]
    )
