"""A transcript item's run: pytest's protocol without the per-phase hooks it does not need.

pytest runs every item through ``pytest_runtest_protocol``: a report before and after,
and three phases (setup, call, teardown), each a call of its own hook wrapped by the
capture, logging, unraisable-exception, thread-exception and skipping plugins. For a
do-nothing item that machinery is most of what pytest spends on it (about a third of
a millisecond on this project's benchmark machine), and a transcript's item is mostly
that: its record replayed from the verdict cache, or read by this package's own code,
which prints nothing, logs nothing and starts no thread.

`run` takes over the protocol for such an item and keeps everything a user or another
plugin sees of it: the item's place in pytest's setup state (fixtures of the tests
before and after it are torn down when they would be), ``PYTEST_CURRENT_TEST``, the
three reports made by ``pytest_runtest_makereport`` and logged by
``pytest_runtest_logreport`` (terminal, JUnit XML, ``--lf``, xdist, pytest-html, ``-x``),
``pytest_runtest_logstart``/``logfinish``, ``pytest_exception_interact`` on a failure,
and the wrappers of ``pytest_runtest_protocol`` itself (warnings filters, faulthandler).
What it leaves out is only the phases' own hooks, so it steps aside (pytest's protocol
runs) whenever one of those could matter: a ``conftest.py`` or a plug-in other than
pytest's own implements one of them, the item carries a skip or xfail mark, setup is
shown or planned (``--setup-show``, ``--setup-plan``, ``--setup-only``), ``--pdb`` or
``--trace``, a plug-in's reader reads the transcript, or a plug-in's judge answers.
"""

from __future__ import annotations

import os
from typing import Any

import pytest

#: Plug-ins whose ``pytest_runtest_setup``/``call``/``teardown`` do nothing for an item
#: that is not a Python test function: pytest's own (the phases `run` does itself, or
#: capture and logging, which catch nothing from code that prints and logs nothing),
#: hypothesis's (its tests only) and pytest-randomly's (it reseeds ``random``, which no
#: record depends on).
_HARMLESS = ("_pytest.", "_hypothesis_pytestplugin", "pytest_randomly")
#: Marks the skipping plug-in evaluates at setup.
_SKIP_MARKS = frozenset({"skip", "skipif", "xfail"})
_PHASES = ("pytest_runtest_setup", "pytest_runtest_call", "pytest_runtest_teardown")
_CURRENT = "PYTEST_CURRENT_TEST"

_session_key = pytest.StashKey[bool]()
_phases_key = pytest.StashKey[bool]()


def _module(plugin: Any) -> str:
    name = getattr(plugin, "__name__", None)  # a module registered as a plug-in
    return name if isinstance(name, str) else type(plugin).__module__


def _session_allows(config: pytest.Config) -> bool:
    """What holds for every item of the session: no option shows or debugs the phases,
    and no plug-in judges answers (a judge may print)."""
    allowed = config.stash.get(_session_key, None)
    if allowed is None:
        from .hookspecs import judge_name

        option = config.option
        shown = ("setupshow", "setuponly", "setupplan", "usepdb", "trace")
        allowed = not any(getattr(option, name, False) for name in shown) and judge_name(config) is None
        config.stash[_session_key] = allowed
    return allowed


def _phases_harmless(item: Any, hooks: Any) -> bool:
    """No implementation of a phase's hook for ``item`` but those of `_HARMLESS` plug-ins:
    the same for every item of a campaign node (``hooks``, its relay), asked once."""
    parent = item.parent
    known = parent.stash.get(_phases_key, None) if parent is not None else None
    if known is None:
        known = all(
            _module(impl.plugin).startswith(_HARMLESS)
            for phase in _PHASES
            for impl in getattr(hooks, phase).get_hookimpls()
        )
        if parent is not None:
            parent.stash[_phases_key] = known
    return known


def eligible(item: Any, hooks: Any, builtin_reader: bool) -> bool:
    """Whether `run` may run ``item`` (a `nodes.TranscriptItem`; ``hooks``: its hook relay)."""
    if not builtin_reader or not _session_allows(item.config):
        return False
    # pytest's setup state (private, and the one thing `run` needs of pytest's internals:
    # pytest-rerunfailures reaches for it too); without it, pytest's protocol runs.
    state = getattr(item.session, "_setupstate", None)
    if not (callable(getattr(state, "setup", None)) and callable(getattr(state, "teardown_exact", None))):
        return False
    if any(mark.name in _SKIP_MARKS for mark in item.iter_markers()):  # the item's and its parents'
        return False
    return _phases_harmless(item, hooks)


def run(item: Any, nextitem: Any, hooks: Any) -> None:
    """pytest's ``runtestprotocol`` for ``item``, with the phases run here, not by their hooks."""
    hooks.pytest_runtest_logstart(nodeid=item.nodeid, location=item.location)
    session = item.session
    state = session._setupstate
    # What pytest lets through a phase rather than report it (its `get_reraise_exceptions`
    # without --pdb, which `eligible` leaves to pytest).
    reraise = (pytest.exit.Exception, KeyboardInterrupt)
    current = f"{item.nodeid} ({{}})".replace("\x00", "(null)")

    def setup() -> None:
        os.environ[_CURRENT] = current.format("setup")
        state.setup(item)

    def call() -> None:
        os.environ[_CURRENT] = current.format("call")
        item.runtest()

    def teardown() -> None:
        os.environ[_CURRENT] = current.format("teardown")
        state.teardown_exact(None if session.shouldfail or session.shouldstop else nextitem)
        os.environ.pop(_CURRENT, None)

    if _phase(item, hooks, "setup", setup, reraise).passed:
        _phase(item, hooks, "call", call, reraise)
    _phase(item, hooks, "teardown", teardown, reraise)
    hooks.pytest_runtest_logfinish(nodeid=item.nodeid, location=item.location)


def _phase(item: Any, hooks: Any, when: Any, func: Any, reraise: Any) -> pytest.TestReport:
    info = pytest.CallInfo.from_call(func, when=when, reraise=reraise)
    report: pytest.TestReport = hooks.pytest_runtest_makereport(item=item, call=info)
    hooks.pytest_runtest_logreport(report=report)
    if (
        info.excinfo is not None
        and not hasattr(report, "wasxfail")
        and not isinstance(info.excinfo.value, pytest.skip.Exception)
    ):
        hooks.pytest_exception_interact(node=item, call=info, report=report)
    return report
