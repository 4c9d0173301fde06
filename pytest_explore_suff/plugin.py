"""The pytest hooks: a campaign directory becomes test items, a summary and gates.

Each hook hands its work to the module that does it: `options` (the flags and
their ini twins, `Settings`), `guard` (a campaign is data: nothing in it is
imported), `nodes` (what is collected and run), `session` (the report: records,
gates, JSON, HTML, the summary) and `xdist` (what the controller and its
workers tell each other).

Installed in a project, this module is imported by every pytest run of it and
by every xdist worker, campaign or not: it imports only the options and the
guard. The other modules (the readers, the report, Jinja2, ...) are imported by
the hooks once `options.campaign_asked` says the run grades a campaign, and a
hook that pytest calls on every run (per file, per report) asks that first and
returns.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

from . import guard, hookspecs, options


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
    guard.protect(early_config)


def pytest_configure(config: pytest.Config) -> None:
    guard.protect(config)
    options.configure(config)
    if options.campaign_asked(config):
        from . import session

        session.configure(config)


def pytest_unconfigure(config: pytest.Config) -> None:
    if options.campaign_asked(config):
        from . import session

        session.unconfigure(config)


def pytest_deselected(items: list[pytest.Item]) -> None:
    if items and options.campaign_asked(items[0].config):
        from . import nodes

        nodes.note_deselected(items)


# tryfirst: what was collected before a plugin (pytest-shard) narrows it without deselecting.
@pytest.hookimpl(tryfirst=True)
def pytest_collection_modifyitems(config: pytest.Config, items: list[pytest.Item]) -> None:
    if options.campaign_asked(config):
        from . import nodes

        nodes.note_collected(config, items)


def pytest_collection_finish(session: pytest.Session) -> None:
    if options.campaign_asked(session.config):
        from . import nodes

        nodes.note_left_out(session.config, session.items)
        nodes.share_hooks(session.items)


def pytest_sessionfinish(session: pytest.Session) -> None:
    if options.campaign_asked(session.config):
        from . import xdist

        xdist.send_deselected(session.config)


# tryfirst: the campaign is ours, whatever a conftest.py or pytest's Package would make of it.
@pytest.hookimpl(tryfirst=True)
def pytest_collect_directory(path: Path, parent: pytest.Collector) -> pytest.Collector | None:
    if options.campaign_asked(parent.config):
        from . import nodes

        return nodes.campaign_node(nodes.CampaignDir, path, parent)
    return None


@pytest.hookimpl(tryfirst=True)
def pytest_ignore_collect(collection_path: Path, config: pytest.Config) -> bool | None:
    if options.campaign_asked(config):
        return guard.keep_campaign(collection_path, config)
    return None


def pytest_collect_file(file_path: Path, parent: pytest.Collector) -> pytest.Collector | None:
    if options.campaign_asked(parent.config):
        from . import nodes

        return nodes.campaign_node(nodes.CampaignArchive, file_path, parent)
    return None


@pytest.hookimpl(wrapper=True)
def pytest_runtest_makereport(item: pytest.Item, call: pytest.CallInfo[None]) -> Any:
    report = yield
    if options.campaign_asked(item.config):
        from . import nodes

        nodes.after_report(item, call, report)
    return report
