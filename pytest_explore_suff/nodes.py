"""What pytest collects: the campaign (a folder or an archive) and one item per transcript."""

from __future__ import annotations

import contextlib
import functools
import linecache
import os
import re
from collections.abc import Iterator, Mapping, Sequence
from pathlib import Path
from typing import Any

import pluggy
import pytest

from . import cache as verdicts
from . import judge
from . import protocol as lean
from .cache import CLASSIFIED, EXCLUDED, FAILING, NOT_TRANSCRIPT, Entry, Lookup, VerdictCache
from .campaign import Campaign, Transcript, shown
from .jsonl import decode
from .options import record_key, settings_key
from .readers import TranscriptError, Unreadable
from .registry import Readers, collect
from .report import record
from .sources import Digests
from .store import Shipment, over_the_wire, shipped
from .terminal import clean

RECORD_ATTR = "explore_suff"  # the report attribute a transcript's record travels on

campaign_key = pytest.StashKey[Campaign]()
# The transcripts deselected: here, or (on the xdist controller) on the workers.
deselected_key = pytest.StashKey[list[str]]()
#: The transcripts collected as items, before any plugin narrowed the collection.
collected_key = pytest.StashKey[list[str]]()
# On a campaign's node once collection is done: the hook proxy all of its items share.
hooks_key = pytest.StashKey[pluggy.HookRelay]()
readers_key = pytest.StashKey[Readers]()


def readers_of(config: pytest.Config) -> Readers:
    """The run's transcript readers, from the ``pytest_explore_suff_readers`` hook (asked
    once per process: xdist workers ask their own, and resolve a transcript's kind by name)."""
    readers = config.stash.get(readers_key, None)
    if readers is None:
        try:
            readers = collect(config.hook.pytest_explore_suff_readers(config=config))
        except (TypeError, ValueError) as exc:
            raise pytest.UsageError(f"pytest_explore_suff_readers: {exc}") from None
        config.stash[readers_key] = readers
    return readers


#: Transcript flags that keep a run out of the aggregates, and why (as the reference harness does).
EXCLUSIONS = {
    "raced": "raced (a tool result says 'No such tool available': a start-up race)",
    "contaminated": "contaminated (the arm ran the codegraph CLI through Bash)",
}


#: The run's verdict cache in this process (None: off), opened at the first item.
verdict_cache_key = pytest.StashKey["VerdictCache | None"]()
#: How many transcripts came from the verdict cache (on the xdist controller: its workers').
cache_hits_key = pytest.StashKey[int]()


def verdict_cache(config: pytest.Config) -> VerdictCache | None:
    """The verdict cache of this process, made at its first use: None when
    ``--explore-suff-no-cache`` (or its ini twin) says so, or pytest's cacheprovider is
    off (``-p no:cacheprovider``), or its folder cannot be made."""
    try:
        return config.stash[verdict_cache_key]
    except KeyError:
        pass
    cache = None
    settings = config.stash[settings_key]
    provider = getattr(config, "cache", None)
    if settings.cache and provider is not None:
        key: tuple[Any, ...] = record_key(settings)
        if settings.truth is not None:  # a judge plug-in's verdicts are in the records
            from .hookspecs import judge_name

            key += (("judge", judge_name(config)),)
        try:
            cache = VerdictCache(str(provider.mkdir("explore-suff")), key)
        except OSError:
            cache = None
    config.stash[verdict_cache_key] = cache
    return cache


def close_cache(config: pytest.Config) -> int | None:
    """Write what the cache has still to write, and close it; how many transcripts it gave
    (None: no cache was opened)."""
    cache = config.stash.get(verdict_cache_key, None)
    if cache is None:
        return None
    config.stash[verdict_cache_key] = None
    with contextlib.suppress(OSError):
        cache.close()
    config.stash[cache_hits_key] = config.stash.get(cache_hits_key, 0) + cache.hits
    return cache.hits


class ExploreSuffWarning(UserWarning):
    """A transcript that was classified, but with something worth knowing (corrupt lines, ...)."""


def campaign_node(cls: Any, path: Path, parent: pytest.Collector) -> pytest.Collector | None:
    """The campaign's node when ``path`` is the campaign (``cls``: its folder or its archive kind)."""
    settings = parent.config.stash.get(settings_key, None)
    if settings is not None and settings.root is not None and str(path) == settings.root:
        return _campaign_node(cls, path, parent)
    return None


def _campaign_node(cls: Any, path: Path, parent: pytest.Collector) -> pytest.Collector:
    """The campaign's node. Inside the rootdir pytest names it by its relative
    path; outside, pytest would give it an empty node id (items would read
    ``::run1/x.jsonl``), so it is named by its own name, escaped: pytest writes
    node ids to its cache as UTF-8, and a name may not be."""
    try:
        rel = path.relative_to(parent.config.rootpath)
        inside = shown(str(path)) == str(path)
    except ValueError:
        inside = False
    if inside and issubclass(cls, pytest.File):
        return cls.from_parent(parent, path=path)  # type: ignore[no-any-return]
    if inside:
        # Named as pytest names a folder's node (CampaignDir is no `pytest.Directory`).
        try:
            name = path.relative_to(parent.path).as_posix() if parent.path != path else path.name
        except ValueError:
            name = path.name
        return cls.from_parent(parent, path=path, name=name, nodeid=rel.as_posix())  # type: ignore[no-any-return]
    name = shown(path.name)
    return cls.from_parent(parent, path=path, name=name, nodeid=name)  # type: ignore[no-any-return]


def _collect_campaign(node: pytest.Collector) -> Iterator[pytest.Item]:
    campaign = node.config.stash[campaign_key]
    labels = _Labels(node.config)
    # Sorted by path (a directory) or archive order: the same order on every worker.
    for t in campaign.transcripts:
        # Escaped: pytest prints node ids raw, and a file name can carry ANSI codes.
        item = TranscriptItem.from_parent(node, name=clean(t.path), transcript=t)
        for kind, value in (("agent", t.agent), ("arm", t.arm), ("group", t.group)):
            if value:
                labels.add(item, kind, value)
        yield item


#: A label a marker can carry: what ``-m`` and ``-k`` can name, and what pytest's ``markers``
#: setting keeps whole (it cuts a line at ':' and '(').
_MARKABLE = re.compile(r"[\w+\-.\[\]\\/]+")


class _Labels:
    """What a transcript is, as ``-k`` keywords and ``-m`` markers: ``agent_codex``,
    ``arm_<arm>``, ``group_<group>``. A folder's name alone says nothing (``-k codex``
    also selects Claude transcripts under a folder named ``codex-runs``).

    Each marker is registered as it is first met, so ``--strict-markers`` accepts it
    and no unknown-marker warning is raised; a label no marker can carry (a group
    named with spaces, say) is a ``-k`` keyword only. One string and one marker per
    label, shared by all the items that carry it.
    """

    def __init__(self, config: pytest.Config) -> None:
        self.config = config
        self.labels: dict[tuple[str, str], tuple[str, pytest.MarkDecorator | None]] = {}

    def add(self, item: pytest.Item, kind: str, value: str) -> None:
        label = self.labels.get((kind, value))
        if label is None:
            label = self.labels[kind, value] = self._new(kind, value)
        name, marker = label
        if marker is None:
            item.extra_keyword_matches.add(name)
        else:  # -k matches an item's marker names too: its keyword set need not grow (memory)
            item.add_marker(marker)

    def _new(self, kind: str, value: str) -> tuple[str, pytest.MarkDecorator | None]:
        name = f"{kind}_{value}"
        if not _MARKABLE.fullmatch(name):
            return name, None
        self.config.addinivalue_line("markers", f"{name}: the transcripts whose {kind} is {value}")
        return name, getattr(pytest.mark, name)


def note_deselected(items: list[pytest.Item]) -> None:
    paths = [item.transcript.path for item in items if isinstance(item, TranscriptItem)]
    if paths:
        config = items[0].config
        config.stash.setdefault(deselected_key, []).extend(paths)


def note_collected(config: pytest.Config, items: list[pytest.Item]) -> None:
    config.stash[collected_key] = [item.transcript.path for item in items if isinstance(item, TranscriptItem)]


def note_left_out(config: pytest.Config, items: list[pytest.Item]) -> None:
    """Transcripts a plugin dropped from the collection without telling pytest (pytest-shard
    keeps its shard's items and drops the rest, where pytest-split deselects them): deselected
    too, so a shard's report says so rather than that the session ended first."""
    collected = config.stash.get(collected_key, [])
    if not collected:
        return
    kept = {item.transcript.path for item in items if isinstance(item, TranscriptItem)}
    deselected: list[str] = config.stash.get(deselected_key, [])
    known = kept.union(deselected)
    left_out = [p for p in collected if p not in known]
    if left_out:
        config.stash.setdefault(deselected_key, []).extend(left_out)


def share_hooks(items: list[pytest.Item]) -> None:
    """Once collection is done, one hook proxy for all the items of a campaign node.

    pytest makes an item's ``ihook`` anew at every use, and when a conftest.py
    that does not cover the item's path is loaded (the project's tests/, the
    campaign being elsewhere), that proxy builds a hook caller for each hook it
    is asked for: about eleven per item, a tenth of a millisecond. All of a
    campaign's items have its node's path, and once collected no conftest.py
    comes or goes: the node's proxy is theirs, for the run.
    """
    for parent in {item.parent for item in items if isinstance(item, TranscriptItem)}:
        if parent is not None:
            parent.stash[hooks_key] = parent.ihook


class CampaignDir(pytest.Collector):
    """The campaign directory: one item per transcript, nothing else collected.

    Not a `pytest.Directory`: pytest imports the conftest.py files of every
    Directory it collects (`protect` says how the campaign stays data).
    """

    @property
    def ihook(self) -> pluggy.HookRelay:
        # The hooks of the folder the campaign is in: the conftest.py files around the campaign
        # apply to its items as to any test's, and no conftest.py of the campaign is loaded.
        return self.session.gethookproxy(self.path.parent)

    def collect(self) -> Iterator[pytest.Item]:
        return _collect_campaign(self)


class CampaignArchive(pytest.File):
    """A campaign read in place from a .tar.gz, .tgz, .tar or .zip archive."""

    def collect(self) -> Iterator[pytest.Item]:
        return _collect_campaign(self)


class TranscriptItem(pytest.Item):
    def __init__(self, *, transcript: Transcript, **kwargs: Any) -> None:
        super().__init__(**kwargs)
        self.transcript = transcript
        #: its record, as its report will carry it (`_keep`)
        self.record: Mapping[str, Any] | Shipment | None = None
        for keyword in (transcript.arm, transcript.group, transcript.kind, transcript.agent):
            if keyword:
                self.extra_keyword_matches.add(keyword)
        # A list of its exact size (`+=` over-allocates): every item keeps its own to the end.
        self.user_properties = [_property("arm", transcript.arm), _property("group", transcript.group)]

    @property
    def ihook(self) -> pluggy.HookRelay:
        # The campaign node's (the hooks of the folder around the campaign: CampaignDir.ihook),
        # kept once collected (`share_hooks`).
        if self.parent is None:
            return super().ihook
        hooks = self.parent.stash.get(hooks_key, None)
        return self.parent.ihook if hooks is None else hooks

    def protocol(self, nextitem: pytest.Item | None) -> bool | None:
        """``pytest_runtest_protocol`` for this item: `protocol.run` when it may (True), else
        None (pytest's own runs)."""
        reader = readers_of(self.config).get(self.transcript.kind)
        builtin = reader is not None and getattr(reader.read, "__module__", None) == verdicts.READERS
        hooks = self.ihook
        if not lean.eligible(self, hooks, builtin):
            return None
        lean.run(self, nextitem, hooks)
        return True

    def runtest(self) -> None:
        settings = self.config.stash[settings_key]
        t = self.transcript
        cache = verdict_cache(self.config)
        found = verdicts.lookup(cache, t, readers_of(self.config)) if cache is not None else None
        if found is not None:
            assert cache is not None
            entry = cache.get(found.key)
            if entry is not None and self._replay(entry):
                return
        digests = Digests(found.whole if found is not None else None)
        try:
            verdict, collector = judge(
                t.kind,
                t.files,
                settings.spec,
                t.archive,
                max_line=settings.max_line,
                readers=readers_of(self.config),
                copies=dict(t.copies),
                digests=digests,
                session=t.session,
            )
        except TranscriptError as exc:
            self._keep(record(t, status="error", reason=str(exc), digest=digests.hexdigest()))
            if not isinstance(exc, Unreadable):  # an I/O error may pass: read it again next time
                self._cache(cache, found, NOT_TRANSCRIPT, (), digests)
            raise
        except Exception as exc:  # a bug of ours: fail this item, keep the transcript in the report
            bug = f"internal error: {type(exc).__name__}: {exc}"
            self._keep(record(t, status="error", reason=bug, digest=digests.hexdigest()))
            raise  # not cached: the next run judges it again
        why = [EXCLUSIONS[flag] for flag in EXCLUSIONS if getattr(verdict, flag)]
        excluded = bool(why) and not settings.keep_excluded
        failing = settings.strict and collector.corrupt
        reason = (
            f"{collector.corrupt} corrupt line(s) (--explore-suff-strict)" if failing
            else "; ".join(why) if excluded else ""
        )  # fmt: skip
        status = "error" if failing else "skipped" if excluded else "classified"
        outcome = FAILING if failing else EXCLUDED if excluded else CLASSIFIED
        truth = settings.truth
        sections: dict[str, Any] | None = {} if truth is not None else None
        rec = record(
            t,
            status=status,
            reason=reason,
            verdict=verdict,
            collector=collector,
            window=settings.window,
            digest=digests.hexdigest(),
            sections=sections,
        )
        if truth is not None and not failing:
            from .ground import apply

            try:
                apply(self.config, truth, rec, t, verdict, collector, sections or {})
            except TranscriptError as exc:
                self._keep(record(t, status="error", reason=str(exc), digest=rec["digest"]))
                raise  # not cached: judged again next time
        # The record first: whatever a warning filter turns the notes below into,
        # the transcript is in the report.
        self._keep(rec)
        self._cache(cache, found, outcome, collector.warnings, digests)
        self._ending(outcome, collector.warnings, verdict.answered, verdict.counts["sufficient"])

    def _cache(
        self, cache: VerdictCache | None, found: Lookup | None, outcome: int, warnings: Sequence[str],
        digests: Digests,
    ) -> None:  # fmt: skip
        if cache is not None and found is not None:
            verdicts.store(cache, found, self.transcript, self.record, outcome, warnings,
                           digests.opened, digests.missing)  # fmt: skip

    def _ending(self, outcome: int, warnings: Sequence[str], answered: int, sufficient: int) -> None:
        """What the item does once its record is kept: its warnings, then it fails, is
        skipped or passes with its user properties (the same whether judged or replayed)."""
        notes = (*self.transcript.notes, *warnings)
        if notes:
            _no_source_line(self.location[0])
        for note in notes:
            # Located at the transcript (reportinfo), not at this line of the plugin.
            self.warn(ExploreSuffWarning(clean(note)))
        if outcome == FAILING:
            raise TranscriptError(self._reason())
        self.user_properties = [
            *self.user_properties,
            _property("answered", answered),
            _property("sufficient", sufficient),
        ]
        if outcome == EXCLUDED:
            raise pytest.skip.Exception(f"excluded: {self._reason()}", _use_item_location=True)

    def _reason(self) -> str:
        shipment = self.record
        if isinstance(shipment, tuple):
            row = shipment[1]
            return str((decode(row) if isinstance(row, bytes) else row)[4])
        return str(shipment["reason"]) if shipment is not None else ""

    def _replay(self, entry: Entry) -> bool:
        """The item as it ended when ``entry`` was kept, without reading the transcript:
        False (judge it) when a file its reader found missing then is there now."""
        t = self.transcript
        if entry.absent and any(os.path.lexists(os.path.join(t.root, rel)) for rel in entry.absent):
            return False
        row = entry.row
        assert row is not None
        if hasattr(self.config, "workerinput"):
            self.record = (entry.record, entry.kept)  # shipped as it came (`over_the_wire`)
        else:
            # The transcript's own strings, not copies: the store keeps them to the end.
            if row[:3] == [t.path, t.arm, t.group]:
                row[:3] = t.path, t.arm, t.group
            self.record = (entry.record, tuple(row))
        if entry.outcome == NOT_TRANSCRIPT:
            raise TranscriptError(str(row[4]))
        counts = row[5]
        self._ending(entry.outcome, entry.warnings, row[8], counts.get("sufficient", 0))
        return True

    def _keep(self, rec: dict[str, Any]) -> None:
        """Keep the record as its report will carry it: encoded once, here, in whichever
        process runs the item (`store.shipped`). A record JSON cannot hold (a string no
        UTF-8 can, a bug of ours) fails this item alone, never the whole run."""
        try:
            self.record = shipped(rec)
        except (TypeError, ValueError) as exc:  # orjson's JSONEncodeError is a TypeError
            reason = f"internal error: its record cannot be written as JSON: {exc}"
            self.record = shipped(
                record(self.transcript, status="error", reason=reason, digest=rec.get("digest"))
            )
            raise TranscriptError(reason) from None

    def repr_failure(self, excinfo: pytest.ExceptionInfo[BaseException], style: Any = None) -> str:
        where = clean(self.transcript.path)
        error = excinfo.value
        if isinstance(error, TranscriptError):
            return f"{where}: {clean(error)}"
        if isinstance(error, ExploreSuffWarning):
            # Its text names the file already.
            return f"{clean(error)} (a warning, made an error by the warning filters)"
        # A bug of ours: one line, and where in the plugin (never pytest's or pluggy's frames).
        frames = [e for e in excinfo.traceback if _PACKAGE in str(e.path)]
        at = f" (at {os.path.basename(str(frames[-1].path))}:{frames[-1].lineno + 1})" if frames else ""
        return f"{where}: internal error: {type(error).__name__}: {clean(error)}{at}"

    def reportinfo(self) -> tuple[str, int, str]:
        t = self.transcript
        return t.archive or t.files[0], 0, self._domain()

    def _domain(self) -> str:
        # The item's name is its transcript's path, cleaned (`_collect_campaign`); arms repeat.
        return f"transcript {self.name} [{_clean_arm(self.transcript.arm)}]"

    @functools.cached_property
    def location(self) -> tuple[str, int | None, str]:
        # pytest's own makes Paths of every item's file and asks bestrelpath: a tenth of a
        # millisecond per item, each item's file being another. For a normalized absolute
        # path its answer is os.path.relpath's, plain string work.
        t = self.transcript
        if t.archive is None and (base := _root_relpath(t.root, str(self.config.rootpath))) is not None:
            # relpath's answer too, the campaign root's part worked out once (a walked name is
            # normalized), and no need of reportinfo's absolute path
            return (t.rel_files[0] if base == "." else f"{base}/{t.rel_files[0]}"), 0, self._domain()
        path, line, domain = self.reportinfo()
        if os.path.isabs(path) and os.path.normpath(path) == path:
            try:
                return os.path.relpath(path, self.config.rootpath), line, domain
            except ValueError:  # Windows: another drive
                pass
        return super().location


_PACKAGE = os.path.dirname(os.path.abspath(__file__))


@functools.lru_cache(maxsize=8)
def _root_relpath(root: str, start: str) -> str | None:
    """``os.path.relpath(root, start)``, when a file's relative path is that joined with the
    file's name relative to root: on POSIX, for a normalized absolute root that is not
    ``start`` or above it (then the parts the two paths share could run into the name's)."""
    if os.sep != "/" or not os.path.isabs(root) or os.path.normpath(root) != root:
        return None
    base = os.path.relpath(root, start)
    return None if all(part == ".." for part in base.split("/")) else base


_clean_arm = functools.lru_cache(maxsize=256)(clean)  # every item's domain names its arm


@functools.lru_cache(maxsize=4096, typed=True)
def _property(name: str, value: Any) -> tuple[str, Any]:
    """A user property: the same few pairs recur on thousands of items, kept to the end."""
    return (name, value)


#: At most this many distinct property lists are shared (as `_property` caches pairs).
_LISTS = 4096
_lists: dict[tuple[int, ...], list[tuple[str, Any]]] = {}


def _pair(value: Any) -> bool:
    """A property pair `_property` may share: no float (0.0 and -0.0 are equal, and would be one)."""
    return (
        type(value) is tuple
        and len(value) == 2
        and type(value[0]) is str
        and type(value[1]) in (str, int, bool, type(None))
    )


def shared_properties(properties: list[Any]) -> list[Any]:
    """The same user properties as one list for every holder of the same pairs (items
    and their reports, kept to the end of the session): only read once shared.

    Thousands of items carry the same few (arm and group on the setup report,
    also answered and sufficient later). The key is the identity of each pair
    `_property` returned, not its value: equal values of different types (1 and
    True) stay apart, and the cached list keeps its pairs, so no id is reused.
    """
    shared = _lists.get(tuple(map(id, properties)))
    if shared is not None:  # the very pairs of a list kept here (pytest copies the item's list)
        return shared
    if not all(map(_pair, properties)):  # a value `_property` does not share: a list of its own
        return [_property(*p) if _pair(p) else p for p in properties]
    pairs = [_property(*p) for p in properties]
    key = tuple(map(id, pairs))
    shared = _lists.get(key)
    if shared is None:
        if len(_lists) >= _LISTS:
            return pairs
        shared = _lists[key] = pairs
    return shared


def _no_source_line(filename: str) -> None:
    """Keep the warnings machinery from reading a transcript to quote its "source line".

    A warning located at a file is shown with that file's line, and linecache
    reads the whole file for it: gigabytes, for a transcript with one huge
    line. An entry with no lines and no mtime is served as is, never read from
    disk nor invalidated (linecache treats it as loaded by a module loader).
    """
    linecache.cache.setdefault(filename, (0, None, [], filename))


def after_report(item: pytest.Item, call: pytest.CallInfo[None], report: pytest.TestReport) -> None:
    """What an item's report takes from it (the record, on the call's), and what the item
    keeps once its last report is made."""
    if not isinstance(item, TranscriptItem):
        return
    if call.when == "call" and item.record is not None:
        # xdist ships report.__dict__ to the controller: there, bytes only (`over_the_wire`).
        on_worker = hasattr(item.config, "workerinput")
        setattr(report, RECORD_ATTR, over_the_wire(item.record) if on_worker else item.record)
        item.record = None  # the item lives to the end of the session; its record need not
    elif call.when == "teardown":
        # The item lives to the end of the session, and its reports have their own copies
        # of its properties: it keeps the list that items with the same pairs share.
        item.user_properties = shared_properties(item.user_properties)
