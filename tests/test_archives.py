"""Compressed transcripts and campaign archives, read in place."""

from __future__ import annotations

import gzip
import io
import json
import random
import shutil
import tarfile
import zipfile
import zlib
from pathlib import Path
from typing import Any

import pytest
from builders import (
    EXPLORE,
    Run,
    Session,
    ab_campaign,
    allocation_run,
    no_explore_run,
    response,
    sufficient_run,
)
from helpers import EXAMPLES, report

from pytest_explore_suff.sources import IndexedGzip


def unplaced(doc: dict) -> dict:
    doc.pop("campaign")  # the fields that name where the campaign is: its path,
    if "truth" in doc:  # and the path of the truth file it holds (inside the archive or not)
        doc["truth"].pop("path")
    return doc


@pytest.fixture
def campaign(example_campaign: Path) -> Path:
    """The example campaign (multi-turn, subagents, an interactive session), one file gzipped."""
    root = example_campaign
    plain = root / "express" / "run2" / "run-headless-with.jsonl"
    (plain.parent / (plain.name + ".gz")).write_bytes(gzip.compress(plain.read_bytes()))
    plain.unlink()
    turn = root / "express" / "run1" / "run-headless-with.t3.jsonl"
    (turn.parent / (turn.name + ".gz")).write_bytes(gzip.compress(turn.read_bytes()))
    turn.unlink()
    return root


def pack(root: Path, kind: str) -> Path:
    """Archive ``root`` as ``tar czf``/``zip -r`` would: one top-level folder."""
    out = root.parent / f"{root.name}.{kind}"
    if kind == "zip":
        with zipfile.ZipFile(out, "w", zipfile.ZIP_DEFLATED) as z:
            for f in sorted(root.rglob("*"), reverse=True):  # not sorted by name: order must not matter
                z.write(f, f.relative_to(root.parent).as_posix())
    else:
        mode = {"tar": "w", "tar.gz": "w:gz", "tgz": "w:gz"}[kind]
        with tarfile.open(out, mode) as t:
            t.add(root, arcname=root.name)
    return out


def test_gzipped_transcripts_are_read_and_keep_their_real_names(pytester, campaign):
    result = pytester.runpytest(f"--explore-suff={campaign}", "--explore-suff-json=dir.json")
    result.assert_outcomes(passed=9)
    recs = {r["path"]: r for r in report(pytester, "dir.json")["transcripts"]}
    assert recs["express/run2/run-headless-with.jsonl.gz"]["status"] == "classified"
    assert recs["express/run1/run-headless-with.jsonl"]["files"] == [
        "express/run1/run-headless-with.jsonl",
        "express/run1/run-headless-with.t2.jsonl",
        "express/run1/run-headless-with.t3.jsonl.gz",
    ]


@pytest.mark.parametrize("kind", ["tar.gz", "tgz", "tar", "zip"])
def test_an_archived_campaign_reports_exactly_what_the_extracted_one_does(pytester, campaign, kind):
    pytester.runpytest(f"--explore-suff={campaign}", "--explore-suff-json=dir.json").assert_outcomes(passed=9)
    archive = pack(campaign, kind)
    result = pytester.runpytest(f"--explore-suff={archive}", "--explore-suff-json=archive.json")
    result.assert_outcomes(passed=9)
    assert unplaced(report(pytester, "archive.json")) == unplaced(report(pytester, "dir.json"))


@pytest.mark.parametrize("kind", ["zip", "tar.gz"])
def test_an_archive_skips_the_folders_a_walk_never_enters_and_a_finder_zips_resource_forks(
    pytester, campaign, kind
):
    for bulk in ("node_modules/pkg/test", ".git/objects", ".venv/lib"):  # a copy of the target repo
        sufficient_run("a fixture").write(campaign / "express" / "repo" / bulk / "run-fixture.jsonl")
    pytester.runpytest(f"--explore-suff={campaign}", "--explore-suff-json=dir.json").assert_outcomes(passed=9)
    archive = pack(campaign, kind)
    if kind == "zip":  # what the macOS Finder adds: a second top folder of AppleDouble files
        with zipfile.ZipFile(archive, "a") as z:
            for f in sorted(campaign.rglob("*.jsonl")):
                rel = f.relative_to(campaign.parent)
                z.writestr(f"__MACOSX/{rel.parent.as_posix()}/._{f.name}", b"\x00\x05\x16\x07 Mac OS X")
    result = pytester.runpytest(f"--explore-suff={archive}", "--explore-suff-json=archive.json")
    result.assert_outcomes(passed=9)
    from_archive = unplaced(report(pytester, "archive.json"))
    from_dir = unplaced(report(pytester, "dir.json"))
    skipped = {i["path"] for i in from_dir["ignored"] if "does not enter" in i["reason"]}
    assert skipped == {f"express/repo/{bulk}" for bulk in (".git", ".venv", "node_modules")}
    if kind == "zip":  # and the Finder's folder, listed as a folder no walk enters
        forks = from_archive["ignored"].pop(0)
        assert forks["path"] == "__MACOSX" and "does not enter" in forks["reason"]
    assert from_archive == from_dir


def test_a_partial_run_lists_what_did_not_run_in_path_order_from_an_archive_too(pytester, campaign):
    args = ("-k", "interactive or run1", "-p", "no:randomly")
    pytester.runpytest(f"--explore-suff={campaign}", "--explore-suff-json=dir.json", *args)
    for kind in ("zip", "tar"):
        pytester.runpytest(
            f"--explore-suff={pack(campaign, kind)}", f"--explore-suff-json={kind}.json", *args
        )
        not_run = report(pytester, f"{kind}.json")["coverage"]["not_run"]
        assert not_run == report(pytester, "dir.json")["coverage"]["not_run"]
        assert [n["path"] for n in not_run] == sorted(n["path"] for n in not_run) and not_run


def test_an_archive_under_xdist_gives_the_same_report(pytester, campaign):
    archive = pack(campaign, "tar.gz")
    pytester.runpytest(f"--explore-suff={archive}", "--explore-suff-json=plain.json")
    pytester.runpytest(f"--explore-suff={archive}", "-n", "2", "--explore-suff-json=dist.json")
    assert (pytester.path / "plain.json").read_bytes() == (pytester.path / "dist.json").read_bytes()


def add_member(t: tarfile.TarFile, name: str, data: bytes, **kw: object) -> None:
    info = tarfile.TarInfo(name)
    info.size = len(data)
    for key, value in kw.items():
        setattr(info, key, value)
    t.addfile(info, io.BytesIO(data))


def test_members_that_escape_the_root_and_links_are_ignored_and_reported(pytester):
    good = "\n".join(sufficient_run().lines()).encode() + b"\n"
    archive = pytester.path / "c.tar.gz"
    with tarfile.open(archive, "w:gz") as t:
        add_member(t, "c/run-good-1.jsonl", good)
        add_member(t, "../run-evil-1.jsonl", good)
        add_member(t, "/etc/run-abs-1.jsonl", good)
        add_member(t, "c/run-link-1.jsonl", b"", type=tarfile.SYMTYPE, linkname="/etc/passwd")
        add_member(t, "c/run-hard-1.jsonl", b"", type=tarfile.LNKTYPE, linkname="c/run-good-1.jsonl")
    result = pytester.runpytest(f"--explore-suff={archive}", "--explore-suff-json=r.json")
    result.assert_outcomes(passed=1)
    ignored = {i["path"]: i["reason"] for i in report(pytester, "r.json")["ignored"]}
    assert ignored == {
        "../run-evil-1.jsonl": "escapes the archive root, not read",
        "/etc/run-abs-1.jsonl": "escapes the archive root, not read",
        # relative to the campaign root (the top folder c/), like every other path of the report
        "run-link-1.jsonl": "a link inside the archive, not followed",
        "run-hard-1.jsonl": "a link inside the archive, not followed",
    }


@pytest.mark.parametrize("damage", ["garbage", "truncated"])
def test_a_corrupt_archive_is_a_clear_usage_error(pytester, campaign, damage):
    archive = pack(campaign, "tar.gz")
    data = archive.read_bytes()
    archive.write_bytes(b"\x1f\x8bnot really gzip" if damage == "garbage" else data[: len(data) // 2])
    result = pytester.runpytest(f"--explore-suff={archive}")
    assert result.ret == pytest.ExitCode.USAGE_ERROR
    result.stderr.fnmatch_lines([f"ERROR: --explore-suff: archive {archive}: *"])


def test_a_corrupt_member_fails_its_item_and_the_rest_report(pytester):
    root = ab_campaign(pytester.path / "c", with_runs=[sufficient_run(), allocation_run()],
                       without_runs=[no_explore_run()])  # fmt: skip
    archive = pack(root, "zip")
    with zipfile.ZipFile(archive) as z:
        info = z.getinfo("c/express/run2/run-headless-with.jsonl")
    data = bytearray(archive.read_bytes())
    start = info.header_offset + 30 + len(info.filename) + len(info.extra)
    for i in range(start + 10, start + 40):  # flip compressed bytes: the CRC check fails
        data[i] ^= 0xFF
    archive.write_bytes(bytes(data))
    result = pytester.runpytest(f"--explore-suff={archive}", "--explore-suff-json=r.json")
    result.assert_outcomes(passed=2, failed=1)
    recs = {r["path"]: r["status"] for r in report(pytester, "r.json")["transcripts"]}
    assert recs == {"express/run1/run-headless-with.jsonl": "classified",
                    "express/run1/run-headless-without.jsonl": "classified",
                    "express/run2/run-headless-with.jsonl": "error"}  # fmt: skip


def test_a_file_that_is_neither_a_directory_nor_an_archive_is_a_usage_error(pytester):
    path = pytester.path / "notes.txt"
    path.write_text("x")
    result = pytester.runpytest(f"--explore-suff={path}")
    assert result.ret == pytest.ExitCode.USAGE_ERROR
    result.stderr.fnmatch_lines(["*is neither a directory nor an archive (.tar.gz, .tgz, .tar, .zip)"])


def test_the_gzip_index_serves_any_offset_of_a_multi_member_stream(tmp_path):
    rng = random.Random(5)
    data = b"".join(rng.randbytes(rng.randint(1, 2000)) + b"text " * rng.randint(0, 400) for _ in range(4000))
    path = tmp_path / "x.gz"
    path.write_bytes(gzip.compress(data[:1000]) + gzip.compress(data[1000:]))
    IndexedGzip.SPAN, old = 1 << 18, IndexedGzip.SPAN  # many checkpoints on a small file
    try:
        stream = io.BufferedReader(IndexedGzip(str(path)), 1 << 14)
    finally:
        IndexedGzip.SPAN = old
    for _ in range(500):
        pos, n = rng.randrange(len(data)), rng.randint(0, 50_000)
        stream.seek(pos)
        assert stream.read(n) == data[pos : pos + n]
    stream.seek(0)
    assert stream.read() == data


def test_gzipped_gemini_sessions_are_read_as_the_plain_ones(pytester, tmp_path):
    # `gzip -r` on a campaign: a Gemini session document becomes session-*.json.gz.
    root = tmp_path / "mixed"
    shutil.copytree(EXAMPLES / "mixed-agents", root)
    pytester.runpytest(f"--explore-suff={root}", "--explore-suff-json=plain.json").assert_outcomes(passed=22)
    documents = sorted(root.rglob("session-*.json"))
    assert documents
    for doc in documents:
        (doc.parent / (doc.name + ".gz")).write_bytes(gzip.compress(doc.read_bytes()))
        doc.unlink()
    pytester.runpytest(f"--explore-suff={root}", "--explore-suff-json=gz.json").assert_outcomes(passed=22)

    def by_name(name: str) -> dict[str, Any]:
        out = {}
        for r in report(pytester, name)["transcripts"]:
            r = json.loads(json.dumps(r).replace(".json.gz", ".json"))
            out[r["path"]] = r
        return out

    assert by_name("gz.json") == by_name("plain.json")
    assert report(pytester, "gz.json")["ignored"] == report(pytester, "plain.json")["ignored"]


def test_a_gzipped_subagent_file_is_linked_through_its_meta_file(pytester):
    sid = "11111111-2222-4333-8444-555555555555"
    session = Session(sid)
    session.step(Run.use(EXPLORE, query="q"), response(["lib/a.js"]))
    agent = Run.use("Agent", prompt="p", description="d")
    session.message(agent)
    session.result(agent, "done")
    root = pytester.path / "c"
    session.write(root / f"{sid}.jsonl")
    sub = Session(sid, sidechain=True, agent_id="abc")
    sub.prompt("p")
    sub.step(Run.use("Read", file_path="lib/a.js"))
    folder = root / sid / "subagents"
    plain = sub.write(folder / "agent-abc.jsonl")
    (folder / "agent-abc.jsonl.gz").write_bytes(gzip.compress(plain.read_bytes()))
    plain.unlink()
    (folder / "agent-abc.meta.json").write_text(json.dumps({"toolUseId": agent["id"]}))
    result = pytester.runpytest(f"--explore-suff={root}", "--explore-suff-json=r.json")
    result.assert_outcomes(passed=1)
    [rec] = report(pytester, "r.json")["transcripts"]
    assert (rec["calls"][0]["next"], rec["warnings"]) == ("Agent → Read a.js", [])


def long_run() -> Run:
    """Two explore calls, each answered by a read, then a long tail of shell calls whose
    outputs barely compress: a cut anywhere in the tail leaves both verdicts whole."""
    rng = random.Random(29)
    run = Run()
    run.step(run.explore("a"), response(["lib/a.js"]))
    run.step(run.use("Read", file_path="/t/lib/a.js"))
    run.step(run.explore("b"), response(["lib/b.js"]))
    run.step(run.use("Grep", pattern="send"))
    for _ in range(40):
        run.step(run.use("Bash", command="make test"), rng.randbytes(1500).hex())
    run.finish()
    return run


def cut_layouts(root: Path, data: bytes, layout: str) -> Path:
    """``data`` (a cut .jsonl.gz) as ``c/r/run-with.jsonl.gz`` of a folder, a .tar.gz or a .zip."""
    folder = root / "c"
    shutil.rmtree(folder, ignore_errors=True)
    (folder / "r").mkdir(parents=True)
    (folder / "r" / "run-with.jsonl.gz").write_bytes(data)
    return folder if layout == "folder" else pack(folder, layout)


#: where a killed `| gzip` leaves its file: mid-stream, in the last block, in the trailer
CUTS = [0.5, 0.8, -40, -8, -1]


@pytest.mark.parametrize("layout", ["folder", "tar.gz", "zip"])
def test_a_cut_gzipped_transcript_keeps_the_verdicts_of_its_complete_lines(tmp_path, layout):
    from pytest_explore_suff import discover, judge

    plain = long_run().write(tmp_path / "plain.jsonl")
    whole, _ = judge("stream-json", [str(plain)])
    data = gzip.compress(plain.read_bytes())
    said = set()
    for cut in CUTS:
        at = int(len(data) * cut) if isinstance(cut, float) else len(data) + cut
        [t] = discover(str(cut_layouts(tmp_path, data[:at], layout))).transcripts
        verdict, collector = judge(t.kind, list(t.files), archive=t.archive)
        assert [(c.id, c.bucket, c.next) for c in verdict.calls] == [
            (c.id, c.bucket, c.next) for c in whole.calls
        ]
        complete = zlib.decompressobj(31).decompress(data[:at]).count(b"\n")
        assert collector.lines == complete and collector.corrupt == 0
        [warning] = collector.warnings
        assert warning == (
            f"run-with.jsonl.gz: the compressed file is cut short after line {complete} "
            "(a killed `| gzip`?); the lines before the cut are read"
        )
        said.add(warning.split(" after line")[0])
    assert len(said) == 1


@pytest.mark.parametrize("layout", ["folder", "tar.gz", "zip"])
def test_a_cut_gzipped_transcript_passes_with_a_warning_in_every_layout(pytester, layout):
    plain = long_run().write(pytester.path / "plain.jsonl")
    data = gzip.compress(plain.read_bytes())
    where = cut_layouts(pytester.path, data[: len(data) * 2 // 3], layout)
    (pytester.path / "plain.jsonl").unlink()
    dist = ["-n", "2"] if layout == "zip" else []
    result = pytester.runpytest(f"--explore-suff={where}", "-W", "default::UserWarning", *dist)
    result.assert_outcomes(passed=1, warnings=1)
    result.stdout.fnmatch_lines(["*run-with.jsonl.gz: the compressed file is cut short after line *"])
    assert "corrupt archive member" not in result.stdout.str()
    [rec] = report(pytester)["transcripts"]
    assert rec["status"] == "classified"
    assert [(c["bucket"], c["next"]) for c in rec["calls"]] == [
        ("read_returned", "Read a.js"),
        ("search", "Grep"),
    ]


@pytest.mark.parametrize("layout", ["folder", "zip"])
def test_a_gzipped_transcript_cut_before_its_first_line_fails_its_item_saying_so(pytester, layout):
    first_bytes = long_run().write(pytester.path / "plain.jsonl").read_bytes()[:60]
    (pytester.path / "plain.jsonl").unlink()
    z = zlib.compressobj(9, zlib.DEFLATED, 31)  # a gzip stream, flushed, never ended
    where = cut_layouts(pytester.path, z.compress(first_bytes) + z.flush(zlib.Z_SYNC_FLUSH), layout)
    result = pytester.runpytest(f"--explore-suff={where}")
    result.assert_outcomes(failed=1)
    why = "the compressed file is cut short after line 0, before any agent event"
    result.stdout.fnmatch_lines([f"*run-with.jsonl.gz: cannot read run-with.jsonl.gz: {why}*"])
