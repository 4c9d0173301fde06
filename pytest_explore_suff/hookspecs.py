"""Hooks other plugins can implement to extend the JSON report."""

from __future__ import annotations

from typing import Any

import pytest


@pytest.hookspec
def pytest_explore_suff_update_json(config: pytest.Config, report: dict[str, Any]) -> None:
    """Change the JSON report in place before it is written (add fields, drop calls, ...).

    Called once, on the controller, after gates are decided.
    """


@pytest.hookspec
def pytest_explore_suff_readers(config: pytest.Config) -> Any:
    """Register transcript readers: return a ``pytest_explore_suff.Reader`` or a list of them.

    Each reader names its format and agent, what files it claims (a path pattern, the
    first bytes of a ``.json`` document, or a line of a ``.jsonl`` file) and a read
    function that feeds a ``pytest_explore_suff.Collector``. Called once per process
    (on the controller to find the transcripts, on each xdist worker to read them):
    implement it in a plug-in or the project's ``conftest.py``, never in a campaign.
    A plug-in's readers are tried before the built-in ones, which register through
    this hook too; a reader named like a built-in one replaces it.
    """
