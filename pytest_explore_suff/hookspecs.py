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


#: The plug-in name the built-in judge (no opinion) is registered under (`plugin.CAMPAIGN_HOOKS`).
BUILTIN_JUDGE = "explore-suff-campaign"


def judge_name(config: pytest.Config) -> str | None:
    """The name verdicts are cached under: the plug-ins implementing the judge hook (their
    registered names, sorted), the built-in one aside; None when there is no judge. Here,
    beside its hook, and not with the truth file's code: every run asks it."""
    impls = config.pluginmanager.hook.pytest_explore_suff_judge.get_hookimpls()
    names = sorted({impl.plugin_name for impl in impls if impl.plugin_name != BUILTIN_JUDGE})
    return " ".join(names) or None


@pytest.hookspec(firstresult=True)
def pytest_explore_suff_judge(question: dict[str, Any], answer: str, transcript: str) -> Any:
    """Judge one answer against one question of the truth file (``docs/ground-truth.md``).

    ``question``: the question's table as the truth file gives it; ``answer``: the
    answer text (the allocation metric's answer, restricted to the question's turn);
    ``transcript``: the transcript's path in the campaign. Return None (no opinion) or
    a mapping ``{"verdict": "pass" | "partial" | "fail", "score": 0-100, "note": str}``
    (score and note optional). Called where the item runs (xdist workers too), once per
    judge, question and answer text: the verdicts are kept in pytest's cache directory.
    A judge that raises, or returns anything else, fails that transcript's item.
    """
