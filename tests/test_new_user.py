"""What a new user found (#41): reports written over what they point at, the command
from a subfolder, damaged saved runs, silent patterns, storage checked late, and the
smaller things a first run shows."""

from __future__ import annotations

import json
import os
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
