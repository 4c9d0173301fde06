"""Explore sufficiency for coding-agent eval campaigns, as a pytest plugin.

The library layer imports nothing from pytest (only the pytest side does: ``plugin``,
``options``, ``nodes``, ``session``, ``xdist`` and ``hookspecs``)::

    from pytest_explore_suff import judge
    verdict = judge("stream-json", ["run-headless-with.jsonl"])
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from importlib.metadata import PackageNotFoundError, version

from .buckets import BUCKETS, KEYS
from .campaign import Campaign, Transcript, discover
from .classify import Call, Verdict, classify
from .events import Collector, ToolSpec
from .readers import NotATranscript, TranscriptError, Unreadable, base, load
from .registry import Reader, Readers
from .sources import ArchiveSource, Digests, active_sources, opener

try:
    __version__ = version("pytest-explore-suff")
except PackageNotFoundError:  # pragma: no cover - run from a source tree that was never installed
    __version__ = "unknown"

__all__ = [
    "BUCKETS", "KEYS", "Call", "Campaign", "Collector", "NotATranscript", "Reader", "Readers",
    "ToolSpec", "Transcript", "TranscriptError", "Unreadable", "Verdict", "classify", "discover",
    "judge", "load",
]  # fmt: skip


def judge(
    kind: str,
    files: Sequence[str],
    spec: ToolSpec | None = None,
    archive: str | None = None,
    *,
    max_line: int | None = None,
    readers: Readers | None = None,
    copies: Mapping[str, str] | None = None,
    digests: Digests | None = None,
    session: str = "",
) -> tuple[Verdict, Collector]:
    """Read one transcript and judge its explore calls (``files`` are members of ``archive`` if given).

    An archive is read through the running session's sources, or opened and
    closed here. ``max_line``: lines longer than this many bytes are corrupt
    (default `readers.base.MAX_LINE`). ``readers``: the readers ``kind`` is looked up in
    (the built-in ones when None). ``copies``: a session log's copied sessions and the
    transcript that judges each ("" for this one), as discovery found them
    (`Transcript.copies`). ``digests``: hash the files' bytes as they are read
    (`sources.Digests`). ``session``: the session of a database ``files[0]`` is.
    """
    own = ArchiveSource(archive) if archive is not None and active_sources() is None else None
    token = base.max_line.set(max_line) if max_line is not None else None
    try:
        open_file = own.open if own is not None else opener(archive)
        if digests is not None:
            open_file = digests.opener(open_file)
        collector = load(
            kind, [str(f) for f in files], spec or ToolSpec(), open_file, readers, copies, session
        )
    finally:
        if token is not None:
            base.max_line.reset(token)
        if own is not None:
            own.close()
    return classify(collector), collector
