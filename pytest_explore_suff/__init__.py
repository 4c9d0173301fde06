"""Explore sufficiency for coding-agent eval campaigns, as a pytest plugin.

The library layer imports nothing from pytest (only the pytest side does: ``plugin``,
``options``, ``nodes``, ``session``, ``xdist`` and ``hookspecs``)::

    from pytest_explore_suff import judge
    verdict = judge("stream-json", ["run-headless-with.jsonl"])

Every pytest run of a project that has the plugin installed imports this
package (the plugin is its submodule), campaign or not: the public names are
imported from their modules when first asked for (PEP 562), not here; only
`__version__`, `ToolSpec` and the limits the options default to are defined here.
"""

from __future__ import annotations

import importlib
import sys
import types
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from .buckets import BUCKETS, KEYS
    from .campaign import Campaign, Transcript, discover
    from .classify import Call, Verdict, classify
    from .events import Collector
    from .readers import NotATranscript, TranscriptError, Unreadable, base, load
    from .registry import Reader, Readers
    from .sources import ArchiveSource, Digests, active_sources, opener
    from .truth import Question

__all__ = [
    "BUCKETS", "KEYS", "Call", "Campaign", "Collector", "NotATranscript", "Reader", "Readers",
    "ToolSpec", "Transcript", "TranscriptError", "Unreadable", "Verdict", "classify", "discover",
    "judge", "load",
]  # fmt: skip

#: name -> the module it comes from (relative to this package)
_LAZY = {
    **dict.fromkeys(("BUCKETS", "KEYS"), ".buckets"),
    **dict.fromkeys(("Campaign", "Transcript", "discover"), ".campaign"),
    **dict.fromkeys(("Call", "Verdict", "classify"), ".classify"),
    "Collector": ".events",
    **dict.fromkeys(("NotATranscript", "TranscriptError", "Unreadable", "base", "load"), ".readers"),
    **dict.fromkeys(("Reader", "Readers"), ".registry"),
    **dict.fromkeys(("ArchiveSource", "Digests", "active_sources", "opener"), ".sources"),
}

# What the options default to, here so that the options (imported at every pytest start) need
# no reader: the modules that use them (`events`, `readers.base`, `occupancy`) take them from here.


@dataclass(frozen=True)
class ToolSpec:
    """Which tool is judged, and how its responses name the files they ship.

    ``explore`` is a substring of the judged tool's name; ``family`` a substring
    shared by every tool of the same server (a call to any of them is "explore
    again") and the name of its CLI (a Bash run of it contaminates an arm);
    ``marker`` a regular expression whose first group is a returned file's path.
    """

    explore: str = "codegraph_explore"
    family: str = "codegraph"
    marker: str = r"^\*\*`([^`]+)`\*\*"


#: This package's version: the one place it is written (pyproject.toml reads it from here,
#: statically). Not looked up in the installed metadata: that scan of every folder on
#: sys.path cost each campaign run 4-10 ms.
__version__ = "0.1.0"

#: Lines longer than this are corrupt: skipped without being held (``--explore-suff-max-line``).
MAX_LINE = 64 << 20
#: The nominal context window of the occupancy figures (``--explore-suff-window``).
DEFAULT_WINDOW = 200_000
#: Where saved runs go, in the rootdir (``--explore-suff-storage``).
DEFAULT_STORAGE = ".explore-suff"
#: What a tool result says when the agent called a tool before its server was up (a start-up
#: race, D-flags). Here, not in `events`, so that discovery's readers need no collector.
RACE_MARKER = "No such tool available"
#: The kinds a tool call is counted as (`events.tool_kind`); the report's figures name them.
TOOL_KINDS = ("explore", "read", "search", "bash", "other")


def __getattr__(name: str) -> Any:
    if name not in _LAZY:
        raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
    value = getattr(importlib.import_module(_LAZY[name], __name__), name)
    globals()[name] = value  # asked for once: a plain attribute from now on
    return value


def __dir__() -> list[str]:
    return sorted({*globals(), *_LAZY})


class _Package(types.ModuleType):
    """Keeps ``classify`` the function once the submodule of the same name is imported.

    Importing a submodule sets it as an attribute of its package, over the
    function this package exports under that name; eagerly imported, the
    function came second and won. Imported lazily, the submodule may come
    later (the report imports it): its function is kept instead.
    """

    def __setattr__(self, name: str, value: Any) -> None:
        if name in _LAZY and isinstance(value, types.ModuleType):
            value = getattr(value, name)
        super().__setattr__(name, value)


sys.modules[__name__].__class__ = _Package


def _bind_all() -> None:
    """Every lazy name bound here: `judge` looks them up as this module's globals (a test
    may replace ``classify`` or ``load`` on the package, and `judge` calls the replacement)."""
    namespace = globals()
    for name in _LAZY:
        if name not in namespace:
            __getattr__(name)


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
    question: Question | None = None,
) -> tuple[Verdict, Collector]:
    """Read one transcript and judge its explore calls (``files`` are members of ``archive`` if given).

    An archive is read through the running session's sources, or opened and
    closed here. ``max_line``: lines longer than this many bytes are corrupt
    (default `readers.base.MAX_LINE`). ``readers``: the readers ``kind`` is looked up in
    (the built-in ones when None). ``copies``: a session log's copied sessions and the
    transcript that judges each ("" for this one), as discovery found them
    (`Transcript.copies`). ``digests``: hash the files' bytes as they are read
    (`sources.Digests`). ``session``: the session of a database ``files[0]`` is.
    ``question``: a truth file's question (`truth.Question`, e.g. ``truth.load(path).questions[0]``)
    to grade the answer against, whatever its ``group`` and ``prompt``: ``verdict.truth`` then
    holds the entry of each answer unit (one; none when its ``turn`` is not in the transcript),
    as a record's ``truth`` (`docs/ground-truth.md`).
    """
    if "opener" not in globals():
        _bind_all()
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
    verdict = classify(collector)
    if question is not None:
        from .truth import grade

        verdict.truth = grade(question, collector, verdict, str(files[0]))
    return verdict, collector
