"""Saved runs: a storage folder of JSON reports, one per run, numbered in run order.

A run saved with ``--explore-suff-save[=NAME]`` (or the ``explore_suff_autosave``
ini setting) is written to ``<storage>/NNNN_<name-or-commit>_<UTC time>.json``;
its report's ``run`` section records the number, the name, the commit and the
time. A saved run can be named wherever a baseline can: ``last``, its number, its
name, or a path. Nothing here imports pytest (the ``explore-suff`` command reads
saved runs without a test session).
"""

from __future__ import annotations

import contextlib
import datetime
import os
import re
import subprocess
import tempfile
from collections.abc import Iterable
from dataclasses import dataclass
from typing import Any

import orjson

from . import DEFAULT_STORAGE as DEFAULT_STORAGE
from .report import READABLE_SCHEMAS

_SAVED = re.compile(r"^(?P<number>\d{4,})_(?P<label>.*)_(?P<time>\d{8}T\d{6}Z)\.json$")


class HistoryError(Exception):
    """A saved run that cannot be found or read; ``str()`` says why in one line."""


@dataclass(frozen=True)
class Saved:
    """A saved run's file, as its name tells it (its report is read by `read`)."""

    path: str
    number: int
    label: str
    time: str


def saved_runs(storage: str) -> list[Saved]:
    """The saved runs of ``storage``, in run order (none when it does not exist)."""
    try:
        names = os.listdir(storage)
    except FileNotFoundError:
        return []
    except NotADirectoryError:
        raise HistoryError(f"storage {storage}: not a folder") from None
    except OSError as exc:
        raise HistoryError(f"storage {storage}: {exc.strerror or exc}") from None
    out = []
    for name in names:
        m = _SAVED.match(name)
        if m:
            out.append(Saved(os.path.join(storage, name), int(m["number"]), m["label"], m["time"]))
    return sorted(out, key=lambda s: (s.number, s.time, s.path))


#: What the storage folder holds when this plugin made it: git leaves the saved runs alone,
#: as it does pytest's ``.pytest_cache`` (delete the file to keep the runs in git).
GITIGNORE = "# Created by pytest-explore-suff automatically.\n*\n"


def prepare_storage(storage: str) -> None:
    """Make sure a run can be saved to ``storage`` before any work is done: a folder (made,
    with a ``.gitignore``, when it is not there) where a file can be written; raises
    `HistoryError`, one line, saying it was about saving runs."""
    if os.path.exists(storage) and not os.path.isdir(storage):
        raise HistoryError(f"cannot save the run to {storage}: not a folder")
    try:
        if not os.path.isdir(storage):
            os.makedirs(storage)
            with open(os.path.join(storage, ".gitignore"), "w", encoding="utf-8") as fh:
                fh.write(GITIGNORE)
        with tempfile.TemporaryFile(dir=storage, prefix=".explore-suff-"):
            pass  # a file can be made there: the run can be saved
    except OSError as exc:
        raise HistoryError(f"cannot save the run to {storage}: {exc.strerror or exc}") from None


def read(path: str) -> dict[str, Any]:
    """A report of this plugin (of any readable schema); raises `HistoryError`, one line."""
    try:
        with open(path, "rb") as fh:
            doc = orjson.loads(fh.read())
    except FileNotFoundError:
        raise HistoryError(f"{path}: no such file") from None
    except IsADirectoryError:
        raise HistoryError(f"{path}: a directory, not a report") from None
    except OSError as exc:
        raise HistoryError(f"{path}: cannot read: {exc.strerror or exc}") from None
    except orjson.JSONDecodeError as exc:
        raise HistoryError(f"{path}: not a JSON report ({exc})") from None
    schema = doc.get("schema") if isinstance(doc, dict) else None
    if schema not in READABLE_SCHEMAS:
        what = f"schema {schema!r}" if isinstance(schema, str) else "no 'schema' of this plugin"
        raise HistoryError(
            f"{path}: not a report of pytest-explore-suff ({what}; "
            f"this version reads {', '.join(READABLE_SCHEMAS)})"
        )
    for key, kind in (("arms", dict), ("transcripts", list), ("coverage", dict)):
        if not isinstance(doc.get(key), kind):
            raise HistoryError(f"{path}: '{key}' must be {'an object' if kind is dict else 'a list'}")
    return doc  # type: ignore[no-any-return]


def resolve(spec: str, storage: str) -> str:
    """The report a baseline names: a path, or a saved run (``last``, its number, its name)."""
    if os.path.exists(spec):
        return spec
    runs = saved_runs(storage)
    if spec == "last":
        complete = [s for s in runs if _complete(s.path)]
        if not complete:
            why = "no complete saved run" if runs else "no saved run"
            raise HistoryError(f"'last': {why} in {storage}")
        return complete[-1].path
    if spec.isdigit():
        found = [s for s in runs if s.number == int(spec)]
        if not found:
            raise HistoryError(f"no saved run number {int(spec)} in {storage} (and no file {spec})")
        return found[-1].path
    named = [s for s in runs if s.label == _slug(spec)]
    if not named:
        raise HistoryError(f"{spec}: no such file, and no saved run of that name in {storage}")
    return named[-1].path


def readable(runs: Iterable[Saved]) -> tuple[list[dict[str, Any]], list[str]]:
    """The reports of ``runs`` that can be read, and a line for each that cannot (a damaged
    saved run is left out of a trend, as `resolve` leaves it out of ``last``)."""
    docs, skipped = [], []
    for s in runs:
        try:
            docs.append(read(s.path))
        except HistoryError as exc:
            skipped.append(f"saved run {s.number} left out of the trend: {exc}")
    return docs, skipped


def _complete(path: str) -> bool:
    try:
        doc = read(path)
    except HistoryError:
        return False
    return doc["coverage"].get("complete") is True


def _slug(text: str) -> str:
    """A name as a file name holds it: letters, digits, '.', '-', '+'; anything else '-'."""
    return re.sub(r"[^A-Za-z0-9.+-]+", "-", text).strip("-")[:60]


def next_number(storage: str) -> int:
    runs = saved_runs(storage)
    return runs[-1].number + 1 if runs else 1


def run_info(
    name: str | None, rootdir: str, number: int, now: datetime.datetime | None = None
) -> dict[str, Any]:
    """The ``run`` section of a saved run's report."""
    when = (now or datetime.datetime.now(datetime.UTC)).replace(microsecond=0)
    return {"number": number, "name": name or None, "commit": git_commit(rootdir),
            "time": when.strftime("%Y-%m-%dT%H:%M:%SZ")}  # fmt: skip


def file_name(run: dict[str, Any]) -> str:
    label = _slug(run["name"] or "") or (run["commit"] or "")[:12] or "run"
    stamp = run["time"].replace("-", "").replace(":", "")
    return f"{run['number']:04d}_{label}_{stamp}.json"


def git_commit(start: str) -> str | None:
    """The commit checked out at ``start`` or above it: read from .git, else asked of git
    (two seconds at most); None outside a checkout or when neither can tell."""
    found = _git_dir(start)
    if found is None:
        return None
    commit = _read_head(*found)
    if commit is not None:
        return commit
    with contextlib.suppress(OSError, subprocess.SubprocessError):
        out = subprocess.run(
            ["git", "rev-parse", "HEAD"], cwd=start, capture_output=True, timeout=2, check=False
        )
        text = out.stdout.decode("ascii", "replace").strip()
        if out.returncode == 0 and _SHA.match(text):
            return text
    return None


_SHA = re.compile(r"^[0-9a-f]{40}([0-9a-f]{24})?$")


def _git_dir(start: str) -> tuple[str, str] | None:
    """(the git directory, the common one: a worktree's refs live in its main repository's)."""
    here = os.path.abspath(start)
    while True:
        dot = os.path.join(here, ".git")
        if os.path.isdir(dot):
            return dot, dot
        if os.path.isfile(dot):
            try:
                with open(dot, encoding="utf-8") as fh:
                    line = fh.read(4096).strip()
            except (OSError, ValueError):
                return None
            if not line.startswith("gitdir:"):
                return None
            gitdir = os.path.normpath(os.path.join(here, line[len("gitdir:") :].strip()))
            common = gitdir
            with (
                contextlib.suppress(OSError, ValueError),
                open(os.path.join(gitdir, "commondir"), encoding="utf-8") as fh,
            ):
                common = os.path.normpath(os.path.join(gitdir, fh.read(4096).strip()))
            return gitdir, common
        parent = os.path.dirname(here)
        if parent == here:
            return None
        here = parent


def _read_head(gitdir: str, common: str) -> str | None:
    try:
        with open(os.path.join(gitdir, "HEAD"), encoding="utf-8") as fh:
            head = fh.read(4096).strip()
    except (OSError, ValueError):
        return None
    if _SHA.match(head):
        return head
    if not head.startswith("ref:"):
        return None
    ref = head[4:].strip()
    for base in (gitdir, common):
        with contextlib.suppress(OSError, ValueError), open(os.path.join(base, ref), encoding="utf-8") as fh:
            sha = fh.read(4096).strip()
            if _SHA.match(sha):
                return sha
    with (
        contextlib.suppress(OSError, ValueError),
        open(os.path.join(common, "packed-refs"), encoding="utf-8") as fh,
    ):
        for line in fh:
            sha, _, name = line.strip().partition(" ")
            if name == ref and _SHA.match(sha):
                return sha
    return None  # e.g. a ref in a format this does not read (reftable): git is asked


def labels(runs: Iterable[dict[str, Any]]) -> list[str]:
    """A short label per saved report: its name, else its commit, else its number."""
    out = []
    for i, doc in enumerate(runs, 1):
        run = doc.get("run") or {}
        name = run.get("name")
        commit = run.get("commit")
        number = run.get("number")
        label = (
            name
            or (commit[:8] if isinstance(commit, str) else None)
            or (f"#{number}" if number is not None else f"run {i}")
        )
        out.append(str(label))
    return out
