"""A campaign is data: pytest never imports a file in it, nor takes its configuration from one.

Light on purpose: the plugin calls `protect` at every pytest start-up, campaign or
not, and imports nothing heavy for it (see `plugin`).
"""

from __future__ import annotations

import os
import types
from pathlib import Path
from typing import Any

import pytest

from .options import campaign_roots, settings_key

# --- A campaign is data: pytest never imports a file in it, nor takes its configuration from one ---
#
# Campaigns come from eval jobs, artifacts and other people's runs, and are gated
# in CI jobs that hold tokens. pytest would treat a campaign folder as a test
# folder in three ways (docs/rules.md, "pytest and the campaign"):
#
# - its ini file: pytest takes its configuration (addopts, pythonpath, ...) from the
#   first ini file above the common folder of the paths named on the command line,
#   or above the current folder. One inside the campaign is refused (`check_ini`),
#   before pytest looks for any conftest.py.
# - conftest.py at collection: pytest imports the conftest.py files of every
#   `pytest.Directory` it collects. `CampaignDir` is none (public API).
# - conftest.py at start-up: before collecting, pytest imports the conftest.py
#   files of the paths named, their test* folders and their parents (the current
#   folder's when none is named). No public way keeps a path out of that: the
#   plugin manager's `_importconftest` is wrapped (`guard_conftests`), from the
#   plugin's tryfirst `pytest_load_initial_conftests`, which runs before pytest's
#   own (trylast) that does those imports.
#
# __init__.py is imported only to import a module of its folder (or by a
# `pytest.Package` node, which the campaign never gets); .pth files are read only
# in site-packages folders, when Python starts.

#: What pytest is given for a conftest.py it is kept from importing: a module with no hooks.
DECLINED = types.ModuleType("explore_suff_declined_conftest", "A campaign's conftest.py, not imported.")

_GUARDED = "_explore_suff_campaigns"  # on the wrapper: the folders it keeps pytest out of


def protect(config: pytest.Config) -> None:
    """Refuse an ini file inside the campaign, then keep pytest from importing a
    conftest.py in it. Idempotent: it runs at start-up and again at configure (a
    plugin loaded late, from a conftest.py, is not called at start-up)."""
    places = _places(campaign_roots(config))
    if not places:
        return
    check_ini(config, places)
    guard_conftests(config.pluginmanager, places)


def check_ini(config: pytest.Config, places: tuple[str, ...]) -> None:
    inipath = config.inipath
    if inipath is not None and inside(str(inipath), places):
        raise pytest.UsageError(
            f"--explore-suff: pytest took its configuration from {inipath}, a file inside the "
            "campaign: a campaign is data, never configuration. Name the campaign only with "
            "--explore-suff (not as a test path), run pytest from outside it, or name your own "
            "ini file with -c"
        )


def guard_conftests(pluginmanager: pytest.PytestPluginManager, places: tuple[str, ...]) -> None:
    importconftest = getattr(pluginmanager, "_importconftest", None)
    if importconftest is None:
        # Fail closed: never run a campaign with a pytest that could import its conftest.py.
        raise pytest.UsageError(
            f"--explore-suff: cannot keep this pytest ({pytest.__version__}) from importing a "
            "conftest.py inside the campaign; use a pytest version this plugin supports"
        )
    guarded = getattr(importconftest, _GUARDED, None)
    if guarded is not None:
        guarded.update(places)
        return
    declined: set[str] = set(places)

    def _importconftest(conftestpath: Any, *args: Any, **kwargs: Any) -> types.ModuleType:
        if inside(str(conftestpath), tuple(declined)):
            return DECLINED
        return importconftest(conftestpath, *args, **kwargs)  # type: ignore[no-any-return]

    setattr(_importconftest, _GUARDED, declined)
    pluginmanager._importconftest = _importconftest  # type: ignore[method-assign]


def _places(roots: list[str]) -> tuple[str, ...]:
    """Each campaign as named and as resolved: a path reached through a symlink is in it too."""
    return tuple(dict.fromkeys(p for root in roots for p in (os.path.abspath(root), os.path.realpath(root))))


def inside(path: str, places: tuple[str, ...]) -> bool:
    """Whether ``path`` (as named, or resolved) is one of ``places`` or under one."""
    for candidate in {os.path.abspath(path), os.path.realpath(path)}:
        for place in places:
            if candidate == place or candidate.startswith(os.path.join(place, "")):
                return True
    return False


def keep_campaign(path: Path, config: pytest.Config) -> bool | None:
    """False (collect it) for the campaign and the folders on the way to it, when a walk of a
    folder it is in comes to them: pytest's `norecursedirs` (``build``, ``.*``, ...) must not
    hide a campaign named so, as it does not hide a path named on the command line."""
    settings = config.stash.get(settings_key, None)
    if settings is not None and settings.root is not None and inside(settings.root, (str(path),)):
        return False
    return None
