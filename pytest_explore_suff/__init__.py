"""Explore sufficiency for coding-agent eval campaigns, as a pytest plugin.

The library layer (everything but ``plugin``) imports nothing from pytest::

    from pytest_explore_suff import judge
    verdict = judge("stream-json", ["run-headless-with.jsonl"])
"""

from __future__ import annotations

from collections.abc import Sequence
from importlib.metadata import PackageNotFoundError, version

from .buckets import BUCKETS, KEYS
from .campaign import Campaign, Transcript, discover
from .classify import Call, Verdict, classify
from .events import Collector, ToolSpec
from .readers import NotATranscript, TranscriptError, Unreadable, load
from .sources import opener

try:
    __version__ = version("pytest-explore-suff")
except PackageNotFoundError:  # pragma: no cover - run from a source tree that was never installed
    __version__ = "unknown"

__all__ = [
    "BUCKETS", "KEYS", "Call", "Campaign", "Collector", "NotATranscript", "ToolSpec",
    "Transcript", "TranscriptError", "Unreadable", "Verdict", "classify", "discover",
    "judge", "load",
]  # fmt: skip


def judge(
    kind: str, files: Sequence[str], spec: ToolSpec | None = None, archive: str | None = None
) -> tuple[Verdict, Collector]:
    """Read one transcript and judge its explore calls (``files`` are members of ``archive`` if given)."""
    collector = load(kind, [str(f) for f in files], spec or ToolSpec(), opener(archive))
    return classify(collector), collector
