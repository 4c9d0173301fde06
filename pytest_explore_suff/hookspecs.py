"""Hooks other plugins can implement to extend the JSON report."""

from __future__ import annotations

from typing import Any

import pytest


@pytest.hookspec
def pytest_explore_suff_update_json(config: pytest.Config, report: dict[str, Any]) -> None:
    """Change the JSON report in place before it is written (add fields, drop calls, ...).

    Called once, on the controller, after gates are decided.
    """
