"""A campaign is data: pytest never imports a file in it, nor takes its configuration from one.

Canaries at three depths of a campaign (its root, a group folder, a run folder):
``conftest.py``, ``__init__.py``, a test module, and every ini file pytest reads
(``pytest.ini``, ``.pytest.ini``, ``tox.ini``, ``setup.cfg``, ``pyproject.toml``,
and on pytest 9 ``pytest.toml``), each ini naming a canary plugin with ``-p``
on a ``pythonpath`` of its own folder. Every canary that Python runs writes a
marker file outside the campaign; no marker may appear, in any mode, and the
report must be the one the same campaign gives without canaries, but that it
lists each canary under ``ignored`` (a file no reader reads).

The group folder is named ``testbed``: pytest imports the conftest.py files of a
named path's ``test*`` folders at start-up. Also run against pytest 8 (``.ci/run``).
"""

from __future__ import annotations

import json
import os
import tarfile
import zipfile
from pathlib import Path
from typing import Any

import pytest
from builders import allocation_run, no_explore_run, sufficient_run
from helpers import DEFAULT_JSON

PYTEST_9 = int(pytest.__version__.split(".")[0]) >= 9
DEPTHS = ("", "testbed", "testbed/run1")  # the campaign's root, a group folder, a run folder
PYTHON_CANARIES = ("conftest.py", "__init__.py", "test_canary.py")


def ini_files(plugin: str) -> dict[str, str]:
    """Each ini file pytest would read, loading ``plugin`` from the file's own folder."""
    ini = f"addopts = -p {plugin}\npythonpath = .\n"
    files = {
        "pytest.ini": f"[pytest]\n{ini}",
        ".pytest.ini": f"[pytest]\n{ini}",
        "tox.ini": f"[pytest]\n{ini}",
        "setup.cfg": f"[tool:pytest]\n{ini}",
        "pyproject.toml": f'[tool.pytest.ini_options]\naddopts = "-p {plugin}"\npythonpath = ["."]\n',
    }
    if PYTEST_9:
        files["pytest.toml"] = f'[pytest]\naddopts = ["-p", "{plugin}"]\npythonpath = ["."]\n'
    return files


def canary(markers: Path, name: str) -> str:
    return f"import pathlib\npathlib.Path({str(markers / name)!r}).write_text('imported')\n"


def campaign(root: Path) -> Path:
    """Two groups, two arms; one transcript fails (so that --lf has something to rerun)."""
    sufficient_run("a").write(root / "testbed" / "run1" / "run-headless-with.jsonl")
    no_explore_run().write(root / "testbed" / "run1" / "run-headless-without.jsonl")
    allocation_run("b").write(root / "testbed" / "run2" / "run-headless-with.jsonl")
    sufficient_run("c").write(root / "express" / "run1" / "run-headless-with.jsonl")
    bad = root / "express" / "run2" / "run-headless-with.jsonl"
    bad.parent.mkdir(parents=True)
    bad.write_text("not a transcript\n")
    return root


def plant(root: Path, markers: Path, *, ini: bool = True, depths: tuple[str, ...] = DEPTHS) -> None:
    """The canaries at each depth; ``ini=False`` leaves out the ini files."""
    markers.mkdir(exist_ok=True)
    for depth in depths:
        folder = root / depth
        tag = depth.replace("/", "_") or "root"
        for name in PYTHON_CANARIES:
            (folder / name).write_text(canary(markers, f"{tag}-{name}"))
        if ini:
            plugin = f"explore_suff_canary_{tag}"
            (folder / f"{plugin}.py").write_text(canary(markers, f"{tag}-{plugin}"))
            for name, text in ini_files(plugin).items():
                (folder / name).write_text(text)


def imported(markers: Path) -> list[str]:
    return sorted(p.name for p in markers.iterdir()) if markers.exists() else []


def outcome(result: pytest.RunResult) -> tuple[int, dict[str, int], list[str]]:
    """What a run says: its exit status, its counts, the items it lists (--co)."""
    items = sorted(line for line in result.stdout.lines if "::" in line and " " not in line)
    return result.ret, result.parseoutcomes(), items


def json_report(pytester: pytest.Pytester) -> bytes | None:
    path = pytester.path / DEFAULT_JSON
    if not path.exists():
        return None
    data = path.read_bytes()
    path.unlink()
    return data


def unplaced(report: bytes | None) -> dict[str, Any]:
    """A report without the one field that names where the campaign is."""
    assert report is not None
    doc: dict[str, Any] = json.loads(report)
    doc.pop("campaign")
    return doc


def same_but_listed(after: bytes | None, before: bytes | None, root: Path) -> None:
    """The report of the campaign with canaries is the one without them, but that its
    ``ignored`` lists every canary too: a file no reader reads (a Python one never imported)."""
    if before is None:  # --co: no report
        assert after is None
        return
    a, b = unplaced(after), unplaced(before)
    extra = [i for i in a.pop("ignored") if i not in b["ignored"]]
    b.pop("ignored")
    assert a == b
    planted = [p.relative_to(root).as_posix() for p in root.rglob("*") if p.is_file() and p.suffix != ".jsonl"]  # noqa: E501
    assert sorted(i["path"] for i in extra) == sorted(planted)
    for i in extra:
        assert i["reason"].startswith("not a transcript")
        assert i["path"].endswith(".py") == ("never imported" in i["reason"])


MODES = {
    "plain": [],
    "n2": ["-n", "2"],
    "k": ["-k", "testbed"],
    "co": ["--co", "-q"],
    "lf": ["--lf"],
    "doctest": ["--doctest-modules"],
}


@pytest.mark.parametrize("mode", list(MODES))
def test_nothing_in_the_campaign_runs_and_the_report_is_the_same(pytester, mode):
    root, markers = campaign(pytester.path / "camp"), pytester.path / "markers"
    args = [f"--explore-suff={root}", "-p", "no:randomly", *MODES[mode]]
    if mode == "lf":
        pytester.runpytest(f"--explore-suff={root}")  # the failure --lf reruns
    before = pytester.runpytest(*args)
    expected = (outcome(before), json_report(pytester))
    plant(root, markers)
    after = pytester.runpytest(*args)
    assert imported(markers) == []
    assert outcome(after) == expected[0]
    same_but_listed(json_report(pytester), expected[1], root)
    ran = {"lf": {"failed": 1, "deselected": 4}, "k": {"passed": 3, "deselected": 2}, "co": {}}
    if mode != "co":  # the campaign ran
        after.assert_outcomes(**ran.get(mode, {"passed": 4, "failed": 1}))


@pytest.mark.parametrize(
    ("name", "dist"),
    [("testlogs", []), ("testlogs", ["-n", "2"]), (".cache/logs", [])],
    ids=["plain", "n2", "hidden"],
)
def test_a_campaign_inside_the_projects_tests_folder(pytester, name, dist):
    """The project's tests/ is a package with its own conftest.py, which applies to the campaign's
    items as to its own tests; the campaign (tests/testlogs: a test* folder of a named path,
    whose conftest.py pytest would import at start-up) runs nothing. Both are collected, on
    pytest 8 too (overlapping paths), also when `norecursedirs` skips a folder on its way."""
    tests, markers = pytester.mkpydir("tests"), pytester.path / "markers"
    (tests / "conftest.py").write_text(
        "import pathlib\n"
        "def pytest_runtest_setup(item):\n"
        f"    with open({str(pytester.path / 'seen.txt')!r}, 'a') as f:\n"
        "        f.write(item.name + '\\n')\n"
    )
    (tests / "test_own.py").write_text("def test_own():\n    pass\n")
    root = campaign(tests / name)
    pytester.makeini("[pytest]\n")
    args = ["tests", f"--explore-suff={root}", "-p", "no:randomly", *dist]
    before = pytester.runpytest(*args)
    expected = (outcome(before), json_report(pytester))
    before.assert_outcomes(passed=5, failed=1)
    plant(root, markers)
    after = pytester.runpytest(*args)
    assert imported(markers) == []
    assert outcome(after) == expected[0]
    same_but_listed(json_report(pytester), expected[1], root)
    seen = (pytester.path / "seen.txt").read_text().splitlines()
    assert sorted(seen).count("test_own") == 2 and len(seen) == 12  # the project's conftest saw all


def pack(root: Path, kind: str, out: Path) -> Path:
    if kind == "zip":
        with zipfile.ZipFile(out, "w", zipfile.ZIP_DEFLATED) as z:
            for f in sorted(root.rglob("*")):
                z.write(f, f.relative_to(root.parent).as_posix())
    else:
        with tarfile.open(out, "w:gz") as t:
            t.add(root, arcname=root.name)
    return out


def members(archive: Path) -> set[str]:
    if archive.suffix == ".zip":
        with zipfile.ZipFile(archive) as z:
            return set(z.namelist())
    with tarfile.open(archive) as t:
        return set(t.getnames())


def on_disk(top: Path) -> set[str]:
    return {
        p.relative_to(top).as_posix()
        for p in top.rglob("*")
        if ".pytest_cache" not in p.parts and p.name != DEFAULT_JSON
    }


@pytest.mark.parametrize("kind", ["tar.gz", "zip"])
def test_an_archive_with_canary_members_is_read_in_place(pytester, kind):
    markers = pytester.path / "markers"
    clean = pack(campaign(pytester.path / "build" / "camp"), kind, pytester.path / f"clean.{kind}")
    plant(pytester.path / "build" / "camp", markers)
    assert imported(markers) == []
    planted = pack(pytester.path / "build" / "camp", kind, pytester.mkdir("dl") / f"camp.{kind}")
    assert {"camp/testbed/run1/conftest.py", "camp/pyproject.toml"} <= members(planted)
    expected = pytester.runpytest(f"--explore-suff={clean}", "-p", "no:randomly")
    expected_report = json_report(pytester)
    files = on_disk(pytester.path)
    for dist in ([], ["-n", "2"]):
        result = pytester.runpytest(f"--explore-suff={planted}", "-p", "no:randomly", *dist)
        assert imported(markers) == []
        assert result.parseoutcomes() == expected.parseoutcomes()
        same_but_listed(json_report(pytester), expected_report, pytester.path / "build" / "camp")
        assert on_disk(pytester.path) == files  # nothing unpacked, nothing written beside it


# --- the campaign named as a test path, or the current folder inside it ------------------------


def refusal_ini(name: str) -> str:
    """An ini file that, if pytest ran with it, would move the report (a `-p` canary would
    show nothing here: pytest 9 loads an ini's plugins before any plugin, see docs/rules.md)."""
    addopts = "--explore-suff-json=hijacked.json"
    return {
        "setup.cfg": f"[tool:pytest]\naddopts = {addopts}\n",
        "pyproject.toml": f'[tool.pytest.ini_options]\naddopts = "{addopts}"\n',
        "bare pyproject.toml": '[project]\nname = "x"\n',
        "pytest.toml": f'[pytest]\naddopts = ["{addopts}"]\n',
        ".pytest.toml": f'[pytest]\naddopts = ["{addopts}"]\n',
    }.get(name, f"[pytest]\naddopts = {addopts}\n")


INI_NAMES = [
    "pytest.ini", ".pytest.ini", "tox.ini", "setup.cfg", "pyproject.toml", "bare pyproject.toml",
    pytest.param("pytest.toml", marks=pytest.mark.skipif(not PYTEST_9, reason="pytest 9 reads it")),
    pytest.param(".pytest.toml", marks=pytest.mark.skipif(not PYTEST_9, reason="pytest 9 reads it")),
]  # fmt: skip


@pytest.mark.parametrize("how", ["campaign named", "path in it named", "cwd in it"])
@pytest.mark.parametrize("ini", INI_NAMES)
def test_an_ini_file_pytest_would_take_from_the_campaign_is_refused(pytester, ini, how):
    root, markers = campaign(pytester.path / "camp"), pytester.path / "markers"
    plant(root, markers, ini=False)
    where = root if how == "campaign named" else root / "testbed"
    ini_file = where / ini.removeprefix("bare ")
    ini_file.write_text(refusal_ini(ini))
    if how == "cwd in it":
        with pytest.MonkeyPatch.context() as mp:
            mp.chdir(where)
            result = pytester.runpytest(f"--explore-suff={root}")
    else:
        result = pytester.runpytest(str(where), f"--explore-suff={root}")
    assert result.ret == pytest.ExitCode.USAGE_ERROR
    result.stderr.fnmatch_lines(
        [f"ERROR: --explore-suff: pytest took its configuration from {ini_file}, a file inside the campaign*"]
    )
    assert imported(markers) == []
    assert not list(pytester.path.rglob("*.json"))  # neither report was written


def test_a_campaign_named_as_a_test_path_runs_nothing_in_it(pytester):
    """No ini file at its root (ini files deeper in are not pytest's): pytest imports the
    conftest.py files of a named path, its test* folders and their parents at start-up."""
    root, markers = campaign(pytester.path / "camp"), pytester.path / "markers"
    pytester.makeini("[pytest]\n")
    expected = pytester.runpytest(f"--explore-suff={root}", "-p", "no:randomly")
    expected_report = json_report(pytester)
    plant(root, markers, depths=DEPTHS)
    for name in ini_files("x"):
        (root / name).unlink()
    for args in ([str(root)], [str(root), "-n", "2"], [str(root / "testbed" / "run1"), str(root)]):
        result = pytester.runpytest(*args, f"--explore-suff={root}", "-p", "no:randomly")
        assert imported(markers) == []
        if args[0] == str(root):
            assert outcome(result) == outcome(expected)
            same_but_listed(json_report(pytester), expected_report, root)


def test_the_current_folder_inside_the_campaign_runs_nothing_in_it(pytester):
    """With the project's ini named (-c), pytest anchors its start-up conftest.py files at the
    current folder, inside the campaign: they are not imported."""
    root, markers = campaign(pytester.path / "camp"), pytester.path / "markers"
    ini = pytester.makeini("[pytest]\n")
    args = [f"--explore-suff={root}", f"-c={ini}", f"--rootdir={pytester.path}", "-p", "no:randomly",
            f"--explore-suff-json={pytester.path / DEFAULT_JSON}"]  # fmt: skip
    expected = pytester.runpytest(*args)
    expected_report = json_report(pytester)
    plant(root, markers)
    with pytest.MonkeyPatch.context() as mp:
        mp.chdir(root / "testbed")
        result = pytester.runpytest(*args)
    assert imported(markers) == []
    assert outcome(result) == outcome(expected)
    same_but_listed(json_report(pytester), expected_report, root)
    assert os.listdir(root / "testbed" / "run1")  # the canaries are still there, unread
