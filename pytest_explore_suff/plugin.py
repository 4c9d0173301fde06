"""The pytest hooks: a campaign directory becomes test items, a summary and gates.

Each hook hands its work to the module that does it: `options` (the flags and
their ini twins, `Settings`), `nodes` (what is collected and run), `session`
(the report: records, gates, JSON, HTML, the summary) and `xdist` (what the
controller and its workers tell each other).

Installed in a project, this module is imported by every pytest run of it and
by every xdist worker, campaign or not: it imports only the options. The
other modules (the readers, the report, Jinja2, ...) are imported by the hooks
once `options.campaign_asked` says the run grades a campaign, and a hook that
pytest calls on every run (per file, per report) asks that first and returns.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

from . import hookspecs, options


def pytest_addhooks(pluginmanager: pytest.PytestPluginManager) -> None:
    pluginmanager.add_hookspecs(hookspecs)


def pytest_addoption(parser: pytest.Parser) -> None:
    options.add_options(parser)


def pytest_configure(config: pytest.Config) -> None:
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


def pytest_collection_finish(session: pytest.Session) -> None:
    if options.campaign_asked(session.config):
        from . import nodes

        nodes.share_hooks(session.items)


def pytest_sessionfinish(session: pytest.Session) -> None:
    if options.campaign_asked(session.config):
        from . import xdist

        xdist.send_deselected(session.config)


def pytest_collect_directory(path: Path, parent: pytest.Collector) -> pytest.Collector | None:
    if options.campaign_asked(parent.config):
        from . import nodes

        return nodes.campaign_node(nodes.CampaignDir, path, parent)
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
