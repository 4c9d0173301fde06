from __future__ import annotations

from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest
from builders import Run

from pytest_explore_suff import Verdict, judge

pytest_plugins = ["pytester"]


@pytest.fixture
def run() -> Run:
    return Run()


@pytest.fixture
def verdict_of(tmp_path: Path) -> Callable[..., Verdict]:
    """Write a run to disk and judge it, as the plugin would."""

    def _verdict(run: Run, **kw: Any) -> Verdict:
        path = run.write(tmp_path / "run-headless-with.jsonl")
        return judge("stream-json", [path], **kw)[0]

    return _verdict


@pytest.fixture(autouse=True)
def _wide_terminal(monkeypatch: pytest.MonkeyPatch) -> None:
    """pytester runs measure the terminal from COLUMNS: wide by default, so the
    summary keeps every column; the width tests set their own."""
    monkeypatch.setenv("COLUMNS", "200")
