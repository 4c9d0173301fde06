"""The pytest hooks: a campaign directory becomes test items, a summary and gates.

Each hook hands its work to the module that does it: `options` (the flags and
their ini twins, `Settings`), `nodes` (what is collected and run), `session`
(the report: records, gates, JSON, HTML, the summary) and `xdist` (what the
controller and its workers tell each other).
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

from . import hookspecs, nodes, options, session, xdist


def pytest_addhooks(pluginmanager: pytest.PytestPluginManager) -> None:
    pluginmanager.add_hookspecs(hookspecs)


@pytest.hookimpl(trylast=True)
def pytest_explore_suff_readers() -> Any:
    # The built-in readers, through the hook a third party uses (imported only when asked).
    from .readers import builtin_readers

    return builtin_readers()


def pytest_addoption(parser: pytest.Parser) -> None:
    options.add_options(parser)


@pytest.hookimpl(tryfirst=True)
def pytest_load_initial_conftests(early_config: pytest.Config) -> None:
    # Before pytest's own (trylast), which imports the conftest.py files of the paths named.
    nodes.protect(early_config)


def pytest_configure(config: pytest.Config) -> None:
    nodes.protect(config)
    session.configure(config)


def pytest_unconfigure(config: pytest.Config) -> None:
    session.unconfigure(config)


def pytest_deselected(items: list[pytest.Item]) -> None:
    nodes.note_deselected(items)


# tryfirst: what was collected before a plugin (pytest-shard) narrows it without deselecting.
@pytest.hookimpl(tryfirst=True)
def pytest_collection_modifyitems(config: pytest.Config, items: list[pytest.Item]) -> None:
    nodes.note_collected(config, items)


def pytest_collection_finish(session: pytest.Session) -> None:
    nodes.note_left_out(session.config, session.items)
    nodes.share_hooks(session.items)


def pytest_sessionfinish(session: pytest.Session) -> None:
    xdist.send_deselected(session.config)


# tryfirst: the campaign is ours, whatever a conftest.py or pytest's Package would make of it.
@pytest.hookimpl(tryfirst=True)
def pytest_collect_directory(path: Path, parent: pytest.Collector) -> pytest.Collector | None:
    return nodes.campaign_node(nodes.CampaignDir, path, parent)


@pytest.hookimpl(tryfirst=True)
def pytest_ignore_collect(collection_path: Path, config: pytest.Config) -> bool | None:
    return nodes.keep_campaign(collection_path, config)


def pytest_collect_file(file_path: Path, parent: pytest.Collector) -> pytest.Collector | None:
    return nodes.campaign_node(nodes.CampaignArchive, file_path, parent)


@pytest.hookimpl(wrapper=True)
def pytest_runtest_makereport(item: pytest.Item, call: pytest.CallInfo[None]) -> Any:
    report = yield
    nodes.after_report(item, call, report)
    return report
