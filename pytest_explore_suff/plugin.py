"""The pytest hooks: a campaign directory becomes test items, a summary and gates.

Installed in a project, this module is imported by every pytest run of it and
by every xdist worker, campaign or not. It registers the options (`options`)
and, before pytest imports any conftest.py, keeps a campaign from being one
(`guard`, imported only when a campaign is named). Everything else is in
`CampaignHooks`, registered at configure only when `options.campaign_asked`
says the run grades a campaign: a project's own test runs pay no hook call of
ours per file, per item or per report. The hooks hand their work to the module
that does it: `nodes` (what is collected and run), `session` (the report:
records, gates, JSON, HTML, the summary) and `xdist` (what the controller and
its workers tell each other).
"""

from __future__ import annotations

import sys
from pathlib import Path
from typing import Any

import pytest

#: The name `CampaignHooks` is registered under.
CAMPAIGN_HOOKS = "explore-suff-campaign"


def _not_rewritten() -> None:
    """Take this package off the list of modules whose asserts pytest rewrites.

    pytest rewrites the asserts of every module of a distribution that has a
    ``pytest11`` entry point, so that a plugin's helpers report assertion
    failures in tests. This package has no assert meant for a test; rewritten,
    each of its modules is parsed and compiled again at every pytest start
    where the rewritten copy cannot be cached (``PYTHONDONTWRITEBYTECODE``, as
    many CI images set, or a read-only site-packages): 0.28 s for a campaign's
    modules on this project's benchmark machine. pytest has no public way to
    opt out; its rewriting hook keeps the names in a set (``_must_rewrite``):
    when that is not there, nothing changes but the cost.
    """
    package = __name__.rpartition(".")[0]
    for finder in sys.meta_path:
        marked = getattr(finder, "_must_rewrite", None)
        if isinstance(marked, set) and package in marked:
            marked.discard(package)
            cache = getattr(finder, "_marked_for_rewrite_cache", None)
            if isinstance(cache, dict):
                for name in [n for n in cache if n == package or n.startswith(package + ".")]:
                    del cache[name]


_not_rewritten()  # before this module imports any other of the package

from . import options  # noqa: E402


def pytest_addhooks(pluginmanager: pytest.PytestPluginManager) -> None:
    from . import hookspecs

    pluginmanager.add_hookspecs(hookspecs)


def pytest_addoption(parser: pytest.Parser) -> None:
    options.add_options(parser)


@pytest.hookimpl(tryfirst=True)
def pytest_load_initial_conftests(early_config: pytest.Config) -> None:
    # Before pytest's own (trylast), which imports the conftest.py files of the paths named.
    if options.campaign_roots(early_config):
        from . import guard

        guard.protect(early_config)
        # The first cleanup registered is the last to run: after pytest's own (`session._Thaw`).
        early_config.add_cleanup(lambda: _unfreeze_last(early_config))
        early_config.stash[LAST_THAW] = False


#: In a campaign's config: True once `session._Thaw` froze the survivors of pytest's last
#: full collection (then `_unfreeze_last`, the config's last cleanup, thaws them).
LAST_THAW = pytest.StashKey[bool]()


def _unfreeze_last(config: pytest.Config) -> None:
    if config.stash.get(LAST_THAW, False):
        import gc

        config.stash[LAST_THAW] = False
        gc.unfreeze()


def pytest_configure(config: pytest.Config) -> None:
    if options.campaign_roots(config):
        from . import guard

        guard.protect(config)
    options.configure(config)
    if options.campaign_asked(config):
        hooks = CampaignHooks()
        # Before the session's own plugins: hooks registered later are called first.
        config.pluginmanager.register(hooks, CAMPAIGN_HOOKS)
        hooks.session.configure(config)


class CampaignHooks:
    """The hooks of a run that grades a campaign (registered by `pytest_configure`)."""

    def __init__(self) -> None:
        # Imported once here, not in each hook: some run three times per transcript.
        from . import guard, nodes, session, xdist

        self.guard, self.nodes, self.session, self.xdist = guard, nodes, session, xdist

    @pytest.hookimpl(trylast=True)
    def pytest_explore_suff_readers(self) -> Any:
        # The built-in readers, through the hook a third party uses.
        from .readers import builtin_readers

        return builtin_readers()

    @pytest.hookimpl(trylast=True)
    def pytest_explore_suff_judge(self) -> Any:
        # The built-in judge: no opinion (the truth file's rules decide). A plug-in's comes first.
        return None

    def pytest_unconfigure(self, config: pytest.Config) -> None:
        self.session.unconfigure(config)

    def pytest_deselected(self, items: list[pytest.Item]) -> None:
        if items:
            self.nodes.note_deselected(items)

    # tryfirst: what was collected before a plugin (pytest-shard) narrows it without deselecting.
    @pytest.hookimpl(tryfirst=True)
    def pytest_collection_modifyitems(self, config: pytest.Config, items: list[pytest.Item]) -> None:
        self.nodes.note_collected(config, items)

    def pytest_collection_finish(self, session: pytest.Session) -> None:
        self.nodes.note_left_out(session.config, session.items)
        self.nodes.share_hooks(session.items)

    def pytest_sessionfinish(self, session: pytest.Session) -> None:
        self.xdist.send_deselected(session.config)

    # tryfirst: the campaign is ours, whatever a conftest.py or pytest's Package would make of it.
    @pytest.hookimpl(tryfirst=True)
    def pytest_collect_directory(self, path: Path, parent: pytest.Collector) -> pytest.Collector | None:
        return self.nodes.campaign_node(self.nodes.CampaignDir, path, parent)

    @pytest.hookimpl(tryfirst=True)
    def pytest_ignore_collect(self, collection_path: Path, config: pytest.Config) -> bool | None:
        return self.guard.keep_campaign(collection_path, config)

    def pytest_collect_file(self, file_path: Path, parent: pytest.Collector) -> pytest.Collector | None:
        return self.nodes.campaign_node(self.nodes.CampaignArchive, file_path, parent)

    # tryfirst: a transcript's item runs through `protocol.run` (pytest's protocol without the
    # phases' hooks) when nothing needs those; None hands it, or any other item, to pytest.
    @pytest.hookimpl(tryfirst=True)
    def pytest_runtest_protocol(self, item: pytest.Item, nextitem: pytest.Item | None) -> bool | None:
        if type(item) is self.nodes.TranscriptItem:
            return item.protocol(nextitem)
        return None

    @pytest.hookimpl(wrapper=True)
    def pytest_runtest_makereport(self, item: pytest.Item, call: pytest.CallInfo[None]) -> Any:
        report = yield
        self.nodes.after_report(item, call, report)
        return report
