"""The verdict cache: a transcript whose bytes, code and options did not change is not read
again, and the reports are byte-identical with and without it, in every mode."""

from __future__ import annotations

import json
import shutil
import sqlite3
import subprocess
import sys
import tarfile
import zipfile
from pathlib import Path

import pytest
from builders import allocation_run, sufficient_run
from helpers import EXAMPLES
from test_modes import hostile_campaign

from pytest_explore_suff import cache as verdicts
from pytest_explore_suff.options import NOT_IN_RECORDS, OPTIONS, RECORD_OPTIONS

CACHE_DIR = Path(".pytest_cache") / "d" / "explore-suff"


def hits(result: pytest.RunResult) -> int | None:
    """How many transcripts the summary says came from the cache (None: no such line)."""
    for line in result.outlines:
        if line.startswith("verdict cache: "):
            return int(line.split()[2])
    return None


def run(
    pytester: pytest.Pytester, root: Path, *args: str, json: str = "r.json"
) -> tuple[pytest.RunResult, bytes]:
    result = pytester.runpytest(
        f"--explore-suff={root}", f"--explore-suff-json={json}", "-p", "no:randomly", *args
    )
    return result, (pytester.path / json).read_bytes()


def databases(pytester: pytest.Pytester) -> list[Path]:
    return sorted((pytester.path / CACHE_DIR).glob("verdicts-*.sqlite3"))


def entries(db: Path) -> list[tuple[bytes, bytes]]:
    with sqlite3.connect(db) as conn:
        return list(conn.execute("SELECT key, entry FROM entries"))


def rewrite(db: Path, change: dict[bytes, bytes]) -> None:
    conn = sqlite3.connect(db)
    with conn:
        for key, entry in change.items():
            conn.execute("UPDATE entries SET entry = ? WHERE key = ?", (entry, key))
    conn.close()


def example(pytester: pytest.Pytester) -> Path:
    root = pytester.path / "camp"
    shutil.copytree(EXAMPLES / "campaign", root)
    hostile_campaign(root / "hostile")
    return root


# --- the key ------------------------------------------------------------------------------


def test_every_option_says_whether_it_changes_records():
    """A new option must be declared: in the key (it changes what a record says), or not."""
    names = [option.ini for option in OPTIONS]
    assert not set(RECORD_OPTIONS) & NOT_IN_RECORDS
    undeclared = set(names) - set(RECORD_OPTIONS) - NOT_IN_RECORDS
    assert not undeclared, f"declare these in options.RECORD_OPTIONS or NOT_IN_RECORDS: {undeclared}"
    assert not (set(RECORD_OPTIONS) | NOT_IN_RECORDS) - set(names), "declared, but no such option"


@pytest.mark.parametrize(
    "option",
    [
        "--explore-suff-tool=codegraph_exp",
        "--explore-suff-family=codegraph_",
        r"--explore-suff-marker=^\*\*`([^`]+)`\*\*$",
        r"--explore-suff-pattern=run-(?P<arm>[^/]+)\.jsonl$",
        "--explore-suff-max-line=1MiB",
        "--explore-suff-keep-excluded",
        "--explore-suff-strict",
        "--explore-suff-window=100000",
    ],
)
def test_an_option_that_changes_records_judges_every_transcript_again(pytester, option):
    assert option.split("=")[0].lstrip("-").replace("-", "_") in RECORD_OPTIONS
    root = example(pytester)
    first, _ = run(pytester, root)
    again, _ = run(pytester, root, option)
    assert hits(first) == 0 and hits(again) == 0
    # ... and back to the first options: those records are still there
    back, _ = run(pytester, root)
    assert hits(back) and hits(back) > 0


def test_an_option_that_changes_no_record_keeps_the_cache(pytester):
    root = example(pytester)
    first, doc = run(pytester, root)
    again, doc2 = run(pytester, root, "--min-sufficient=0.1", "--explore-suff-gate-on=bound")
    assert hits(first) == 0 and hits(again) == first.parseoutcomes()["passed"] + _not_passed(first)
    assert doc2 != doc  # the gates are in the report; the transcripts are the same bytes
    assert _transcripts(doc2) == _transcripts(doc)


def _not_passed(result: pytest.RunResult) -> int:
    outcomes = result.parseoutcomes()
    return sum(outcomes.get(k, 0) for k in ("failed", "skipped", "error", "errors"))


def _transcripts(doc: bytes) -> list[dict[str, object]]:
    return json.loads(doc)["transcripts"]  # type: ignore[no-any-return]


def test_the_code_identity_is_a_digest_of_the_package_sources():
    identity = verdicts.code_identity()
    assert len(identity) == 32 and identity == verdicts.code_identity()


# --- byte-identical, in every mode --------------------------------------------------------


@pytest.mark.parametrize(
    "mode", [[], ["-n", "2"], ["-k", "with"], ["-W", "error"]], ids=["plain", "n2", "k", "W"]
)
def test_reports_are_byte_identical_with_and_without_the_cache(pytester, mode):
    root = example(pytester)
    off, doc_off = run(pytester, root, "--explore-suff-no-cache", *mode)
    first, doc_first = run(pytester, root, *mode)
    again, doc_again = run(pytester, root, *mode)
    assert hits(off) is None  # switched off: no line
    assert hits(first) == 0
    ran = sum(off.parseoutcomes().get(k, 0) for k in ("passed", "failed", "skipped"))
    assert hits(again) == ran > 0
    assert doc_off == doc_first == doc_again
    # the same outcomes, warnings and failure lines
    assert off.parseoutcomes() == again.parseoutcomes()
    failures = [line for line in off.outlines if line.startswith(("FAILED", "SKIPPED"))]
    assert failures == [line for line in again.outlines if line.startswith(("FAILED", "SKIPPED"))]
    assert off.ret == again.ret


def test_the_same_under_strict_and_keep_excluded(pytester):
    root = example(pytester)
    for args in (["--explore-suff-strict"], ["--explore-suff-keep-excluded"]):
        off, doc_off = run(pytester, root, "--explore-suff-no-cache", "-rA", *args)
        run(pytester, root, "-rA", *args)
        again, doc_again = run(pytester, root, "-rA", *args)
        assert hits(again) and doc_off == doc_again
        assert off.parseoutcomes() == again.parseoutcomes()
        assert [x for x in off.outlines if "Warning" in x] == [x for x in again.outlines if "Warning" in x]


@pytest.mark.parametrize("kind", ["zip", "tar.gz"])
def test_archives_are_keyed_by_their_bytes(pytester, kind):
    root = example(pytester)
    archive = pytester.path / f"camp.{kind}"
    if kind == "zip":
        with zipfile.ZipFile(archive, "w") as z:
            for path in sorted(root.rglob("*")):
                if path.is_file():
                    z.write(path, path.relative_to(root).as_posix())
    else:
        with tarfile.open(archive, "w:gz") as t:
            t.add(root, arcname=".")
    _, doc_off = run(pytester, archive, "--explore-suff-no-cache")
    run(pytester, archive)
    again, doc_again = run(pytester, archive, "-n", "2")
    assert hits(again) and doc_off == doc_again
    # one byte more in the archive: every member judged again
    with open(archive, "ab") as fh:
        fh.write(b"\0" * 1024 if kind == "tar.gz" else b"")
    if kind == "zip":
        with zipfile.ZipFile(archive, "a") as z:
            z.writestr("notes.txt", "x")
    changed, _ = run(pytester, archive)
    assert hits(changed) == 0


def test_a_changed_transcript_alone_is_judged_again(pytester):
    root = pytester.path / "camp"
    for i in range(4):
        sufficient_run(f"q{i}").write(root / f"run{i}" / "run-headless-with.jsonl")
    run(pytester, root)
    allocation_run("new").write(root / "run2" / "run-headless-with.jsonl")
    again, doc = run(pytester, root)
    assert hits(again) == 3
    _, doc_off = run(pytester, root, "--explore-suff-no-cache")
    assert doc == doc_off


def test_a_sidecar_that_appears_is_read(pytester):
    """A subagent's .meta.json sidecar its reader looked for and did not find: once there,
    the transcript is judged again (discovery lists it, and the entry knew it missing)."""
    root = example(pytester)
    sidecars = sorted(root.rglob("agent-*.meta.json"))
    assert sidecars
    moved = {p: p.read_bytes() for p in sidecars}
    for p in sidecars:
        p.unlink()
    run(pytester, root)
    for p, data in moved.items():
        p.write_bytes(data)
    again, doc = run(pytester, root)
    _, doc_off = run(pytester, root, "--explore-suff-no-cache")
    assert doc == doc_off
    assert hits(again) is not None and hits(again) < _ran(again)


def _ran(result: pytest.RunResult) -> int:
    return sum(result.parseoutcomes().get(k, 0) for k in ("passed", "failed", "skipped"))


# --- switching it off -------------------------------------------------------------------


def test_cache_clear_and_no_cacheprovider(pytester):
    root = example(pytester)
    run(pytester, root)
    cleared, _ = run(pytester, root, "--cache-clear")
    assert hits(cleared) == 0
    shutil.rmtree(pytester.path / ".pytest_cache")
    none, _ = run(pytester, root, "-p", "no:cacheprovider")
    assert hits(none) is None
    assert not (pytester.path / ".pytest_cache").exists()


def test_the_ini_twin_switches_it_off(pytester):
    root = example(pytester)
    pytester.makeini("[pytest]\nexplore_suff_no_cache = true\n")
    run(pytester, root)
    again, _ = run(pytester, root)
    assert hits(again) is None
    assert not databases(pytester)


# --- damaged and foreign entries ----------------------------------------------------------


def test_a_damaged_entry_is_a_miss_never_a_verdict(pytester):
    root = example(pytester)
    _, doc = run(pytester, root)
    (db,) = databases(pytester)
    rows = entries(db)
    assert len(rows) >= 3
    (k0, e0), (k1, _), (k2, e2) = rows[:3]
    flipped = bytearray(e0)
    flipped[-5] ^= 0x20  # a byte of the record
    rewrite(db, {k0: bytes(flipped), k1: e2, k2: e2[:40]})  # damaged, foreign, cut short
    again, doc_again = run(pytester, root)
    assert doc_again == doc
    assert hits(again) == len(rows) - 3
    third, _ = run(pytester, root)  # the three were stored again
    assert hits(third) == len(rows)


def test_a_damaged_database_is_started_afresh(pytester):
    root = example(pytester)
    _, doc = run(pytester, root)
    (db,) = databases(pytester)
    db.write_bytes(b"this is not a database" * 1000)
    for suffix in ("-wal", "-shm"):
        Path(f"{db}{suffix}").unlink(missing_ok=True)
    again, doc_again = run(pytester, root)
    assert doc_again == doc and hits(again) == 0
    third, _ = run(pytester, root)
    assert hits(third) == _ran(third)


def test_entries_unpack_only_for_their_key():
    entry = verdicts.Entry(verdicts.CLASSIFIED, b"{}", b"[1]", ["w"], [])
    key, other = b"k" * 16, b"o" * 16
    data = verdicts.pack(key, entry)
    back = verdicts.unpack(key, data)
    assert back is not None and back.record == b"{}" and back.warnings == ["w"] and back.row == [1]
    assert verdicts.unpack(other, data) is None
    for cut in range(len(data)):
        assert verdicts.unpack(key, data[:cut]) is None
    for at in range(len(data)):
        damaged = bytearray(data)
        damaged[at] ^= 1
        assert verdicts.unpack(key, bytes(damaged)) is None


# --- at the same time -------------------------------------------------------------------


def test_two_runs_at_once(pytester):
    root = example(pytester)
    cmd = [sys.executable, "-m", "pytest", "-q", "-p", "no:randomly", f"--explore-suff={root}"]
    procs = [
        subprocess.Popen(
            [*cmd, f"--explore-suff-json=c{i}.json", *extra],
            cwd=pytester.path,
            stdout=subprocess.PIPE,
            stderr=subprocess.STDOUT,
        )
        for i, extra in enumerate(([], ["-n", "2"]))
    ]
    outs = [p.communicate(timeout=300)[0].decode() for p in procs]
    assert [p.returncode for p in procs] == [0, 0], outs  # the hostile part warns
    assert (pytester.path / "c0.json").read_bytes() == (pytester.path / "c1.json").read_bytes()
    again, doc = run(pytester, root, "-n", "2")
    assert hits(again) == _ran(again)
    assert doc == (pytester.path / "c0.json").read_bytes()


# --- a truth file ------------------------------------------------------------------------


def test_a_changed_truth_file_judges_every_transcript_again(pytester, truth_campaign):
    root = truth_campaign
    truth = root / "explore-suff-truth.toml"
    _, doc_off = run(pytester, root, "--explore-suff-no-cache")
    first, doc_first = run(pytester, root)
    again, doc_again = run(pytester, root)
    assert hits(first) == 0 and hits(again) == _ran(again) > 0
    assert doc_off == doc_first == doc_again
    assert b'"truth"' in doc_again
    truth.write_text(truth.read_text().replace("min_symbols = 0.5", "min_symbols = 1.0"))
    changed, doc_changed = run(pytester, root)
    assert hits(changed) == 0
    _, doc_changed_off = run(pytester, root, "--explore-suff-no-cache")
    assert doc_changed == doc_changed_off
    none, _ = run(pytester, root, "--explore-suff-truth=none")
    assert hits(none) == 0  # without the truth file: other records


# --- summaries kept between runs -------------------------------------------------------------


@pytest.fixture
def summed(monkeypatch: pytest.MonkeyPatch) -> list[int]:
    """How many records each summary of the runs in this process summed up (pytester's
    runs are in-process: the report's `_summary` counts them)."""
    from pytest_explore_suff import report

    sizes: list[int] = []
    real = report._summary

    def counting(c: report.Columns) -> dict[str, object]:
        sizes.append(len(c.recs))
        return real(c)

    monkeypatch.setattr(report, "_summary", counting)
    from pytest_explore_suff import document

    for name in ("compare_arm_columns", "compare_metric_columns"):  # and what compares two arms
        real_compare = getattr(document, name)

        def compared(*args, _real=real_compare, _name=name):
            sizes.append(_name)
            return _real(*args)

        monkeypatch.setattr(document, name, compared)
    return sizes


def summaries(db: Path) -> list[tuple[bytes, bytes]]:
    with sqlite3.connect(db) as conn:
        return list(conn.execute("SELECT key, summary FROM summaries"))


def test_an_arm_whose_records_did_not_change_is_not_summed_again(pytester, summed):
    root = pytester.path / "camp"
    for i in range(4):
        sufficient_run(f"q{i}").write(root / f"run{i}" / "run-headless-with.jsonl")
        sufficient_run(f"q{i}").write(root / f"run{i}" / "run-headless-without.jsonl")
    _, doc_off = run(pytester, root, "--explore-suff-no-cache")
    both = ["compare_arm_columns", "compare_metric_columns"]
    assert summed == [4, 4, 8, *both]  # two arms, then the pooled records; the arms compared
    summed.clear()
    _, doc_first = run(pytester, root)
    assert summed == [4, 4, 8, *both]
    summed.clear()
    again, doc_again = run(pytester, root)
    assert summed == [] and hits(again) == 8
    assert doc_off == doc_first == doc_again
    # one transcript of one arm changed: that arm and the pooled records are summed again
    allocation_run("new").write(root / "run2" / "run-headless-with.jsonl")
    summed.clear()
    changed, doc_changed = run(pytester, root)
    assert summed == [4, 8, *both] and hits(changed) == 7
    _, doc_changed_off = run(pytester, root, "--explore-suff-no-cache")
    assert doc_changed == doc_changed_off


def test_summaries_kept_under_n2_are_the_same_bytes(pytester, summed):
    root = example(pytester)
    _, doc_off = run(pytester, root, "--explore-suff-no-cache")
    run(pytester, root, "-n", "2")
    summed.clear()
    _, doc_again = run(pytester, root, "-n", "2")
    _, doc_plain = run(pytester, root)
    assert summed == []  # the controller's summaries, and the same for a run without -n
    assert doc_off == doc_again == doc_plain


def test_a_damaged_summary_is_summed_again(pytester, summed):
    root = example(pytester)
    _, doc = run(pytester, root)
    (db,) = databases(pytester)
    rows = summaries(db)
    assert len(rows) >= 2
    (k0, s0), (k1, _), *_ = rows
    flipped = bytearray(s0)
    flipped[-3] ^= 0x01  # a byte of the summary: its checksum no longer holds
    conn = sqlite3.connect(db)
    with conn:
        conn.execute("UPDATE summaries SET summary = ? WHERE key = ?", (bytes(flipped), k0))
        conn.execute("UPDATE summaries SET summary = ? WHERE key = ?", (s0, k1))  # another key's
    conn.close()
    summed.clear()
    _, doc_again = run(pytester, root)
    assert len(summed) == 2 and doc_again == doc


def test_a_summary_is_kept_only_if_json_gives_it_back(tmp_path):
    cache = verdicts.VerdictCache(str(tmp_path), ())
    key = b"s" * 16
    for odd in ({"a": (1, 2)}, {"a": float("nan")}, {"a": float("inf")}, {1: 2}, {"a": {1, 2}}):
        cache.keep_summary(key, odd)
    cache.flush()
    assert cache.summary(key) is None
    kept = {"b": 1, "a": [1.5, None, "x"], "c": {"z": 0.1, "y": True}}
    cache.keep_summary(key, kept)
    cache.flush()
    back = cache.summary(key)
    assert back == kept and list(back) == ["b", "a", "c"] and list(back["c"]) == ["z", "y"]
    assert cache.summary(b"o" * 16) is None
    cache.close()


def test_records_have_a_content_digest_unless_json_loses_a_figure(tmp_path):
    from pytest_explore_suff import report
    from pytest_explore_suff.campaign import Transcript
    from pytest_explore_suff.store import RecordStore

    def rec(path: str, tokens: float) -> dict[str, object]:
        t = Transcript(path=path, kind="stream-json", arm="a", group="", run="", rel_files=(path,))
        r = report.record(t, status="classified")
        r["runs"] = [{"tokens": tokens}]
        return r

    with RecordStore() as store, RecordStore() as again:
        for path, tokens in (("x", 1.0), ("y", 1.0), ("z", 2.0)):
            store.add(rec(path, tokens))
        x, y, z = (s.content for s in store.records())
        assert None not in (x, y, z) and len({x, y, z}) == 3  # the path, the figure
        again.add(rec("x", 1.0))
        assert again.records()[0].content == x  # the same record, the same digest
        again.add(rec("w", 1e308 + 1e308))  # JSON writes null for it: no digest
        assert again.records()[1].content is None
        assert report.Columns(again.records()).key() is None  # nor for the records with it
        assert report.Columns(store.records()).key() != report.Columns(store.records()[::-1]).key()
