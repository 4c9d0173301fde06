"""Archive and line bombs: peak memory of the plugin on members that inflate to gigabytes.

Each bomb is a campaign with one good transcript and one huge one:

- ``zip``, ``tar.gz``, ``tar``: a member of SIZE of short lines, in an archive;
- ``jsonl.gz``: the same lines as a compressed transcript in a folder;
- ``line``: a plain ``.jsonl`` whose second line is one line of SIZE.

The plugin runs once per bomb as a whole ``pytest`` process, and the script
prints its wall time, peak RSS (measured as ``run.py`` does) and the huge item's
outcome. Bombs are built under WORKDIR (several times SIZE of disk) and
removed unless ``--keep``::

    python benchmarks/bombs.py --size-gb 2 --workdir /tmp/bombs

Exit status 1 when a bomb's peak RSS is over ``--max-rss-mb`` (150) or the
run crashed.
"""

from __future__ import annotations

import argparse
import gzip
import json
import os
import shutil
import sys
import tarfile
import tempfile
import time
import zipfile
from collections.abc import Callable, Iterator
from pathlib import Path

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE.parent / "tests"))
from builders import sufficient_run  # noqa: E402
from run import run_timed  # noqa: E402

CHUNK = 1 << 20
SHORT = b'{"type": "user", "message": {"role": "user", "content": "a short line of a long run"}}\n'


def transcript_head() -> bytes:
    return ("\n".join(sufficient_run("bomb").lines()) + "\n").encode()


def short_lines(size: int) -> Iterator[bytes]:
    """The bomb's bytes: a real transcript, then short lines up to ``size``, a chunk at a time."""
    yield transcript_head()
    block = SHORT * (CHUNK // len(SHORT))
    written = 0
    while written < size:
        yield block
        written += len(block)


def one_line(size: int) -> Iterator[bytes]:
    """A transcript whose second line is ``size`` bytes long (an unterminated JSON string)."""
    head = transcript_head().split(b"\n", 1)
    yield head[0] + b"\n" + b'{"type": "user", "pad": "'
    block = b"x" * CHUNK
    written = 0
    while written < size:
        yield block
        written += len(block)
    yield b'"}\n' + head[1]


def write(path: Path, chunks: Iterator[bytes]) -> None:
    with path.open("wb") as fh:
        for chunk in chunks:
            fh.write(chunk)


def good(root: Path) -> None:
    write(root / "run-good-1.jsonl", iter([transcript_head()]))


def build(kind: str, work: Path, size: int) -> Path:
    """The campaign (a folder or an archive) of one bomb."""
    camp = work / f"camp-{kind}"
    camp.mkdir()
    good(camp)
    if kind == "line":
        write(camp / "run-bomb-1.jsonl", one_line(size))
        return camp
    if kind == "jsonl.gz":
        with gzip.open(camp / "run-bomb-1.jsonl.gz", "wb", compresslevel=1) as gz:
            for chunk in short_lines(size):
                gz.write(chunk)
        return camp
    member = work / "run-bomb-1.jsonl"
    write(member, short_lines(size))
    if kind == "zip":
        archive = work / "camp.zip"
        with zipfile.ZipFile(archive, "w", zipfile.ZIP_DEFLATED, compresslevel=1) as z:
            z.write(camp / "run-good-1.jsonl", "run-good-1.jsonl")
            z.write(member, "run-bomb-1.jsonl")
    else:
        archive = work / ("camp.tar.gz" if kind == "tar.gz" else "camp.tar")
        mode = "w:gz" if kind == "tar.gz" else "w"
        opts = {"compresslevel": 1} if kind == "tar.gz" else {}
        with tarfile.open(archive, mode, **opts) as t:  # type: ignore[call-overload]
            t.add(camp / "run-good-1.jsonl", "run-good-1.jsonl")
            t.add(member, "run-bomb-1.jsonl")
    member.unlink()
    shutil.rmtree(camp)
    return archive


def measure(python: str, campaign: Path, work: Path) -> dict[str, object]:
    report = work / "report.json"
    plugin = ["-p", "no:cacheprovider", "-p", "no:hypothesispytest", "-q"]
    cmd = [python, "-m", "pytest", *plugin, f"--explore-suff={campaign}", f"--explore-suff-json={report}"]
    wall, code, rss_kb, _ = run_timed(cmd, work / "pytest.log", work, dict(os.environ))
    doc = json.loads(report.read_text()) if report.exists() else {"transcripts": []}
    bomb = next((r for r in doc["transcripts"] if "bomb" in r["path"]), None)
    return {
        "exit": code,
        "wall_s": wall,
        "rss_mb": rss_kb / 1024,
        "bomb": None if bomb is None else {k: bomb[k] for k in ("status", "lines", "corrupt_lines")},
        "warnings": None if bomb is None else bomb["warnings"],
    }


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--size-gb", type=float, default=2.0)
    parser.add_argument("--kinds", default="zip,tar.gz,tar,jsonl.gz,line")
    parser.add_argument("--workdir", default=None)
    parser.add_argument("--python", default=sys.executable)
    parser.add_argument("--max-rss-mb", type=float, default=150.0)
    parser.add_argument("--keep", action="store_true")
    args = parser.parse_args()
    size = int(args.size_gb * (1 << 30))
    base = Path(args.workdir or tempfile.mkdtemp(prefix="explore-suff-bombs-"))
    base.mkdir(parents=True, exist_ok=True)
    failed = 0
    cleanup: Callable[[Path], None] = (lambda p: None) if args.keep else shutil.rmtree
    for kind in args.kinds.split(","):
        work = base / kind
        if work.exists():
            shutil.rmtree(work)
        work.mkdir()
        t0 = time.perf_counter()
        campaign = build(kind, work, size)
        built = time.perf_counter() - t0
        result = measure(args.python, campaign, work)
        ok = result["exit"] in (0, 1) and float(result["rss_mb"]) <= args.max_rss_mb  # type: ignore[arg-type]
        failed += not ok
        print(f"{kind:9} {args.size_gb:g} GB  built in {built:5.1f} s  plugin {result['wall_s']:6.1f} s  "
              f"peak RSS {result['rss_mb']:6.1f} MB  exit {result['exit']}  {'ok' if ok else 'FAIL'}  "
              f"bomb: {json.dumps(result['bomb'])}", flush=True)  # fmt: skip
        for w in result["warnings"] or ():  # type: ignore[attr-defined]
            print(f"          warning: {w}")
        cleanup(work)
    if not args.keep and not args.workdir:
        os.rmdir(base)
    return 1 if failed else 0


if __name__ == "__main__":
    raise SystemExit(main())
