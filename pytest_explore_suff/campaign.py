"""Finding the transcripts of a campaign directory, and naming their arm, group and run.

A campaign is whatever a harness wrote: transcripts, turn segments of
multi-turn runs, subagent files, diagnostic sidecars, copies of the target
repository with data files of their own. `discover` walks it once, sniffs the
first lines of each candidate, and groups the files of one transcript.
"""

from __future__ import annotations

import dataclasses
import functools
import operator
import os
import re
import sys
from collections import defaultdict
from collections.abc import Callable, Iterator
from dataclasses import dataclass, field
from typing import Any

import orjson

from .jsonl import Undecodable, decode
from .readers import BUILTIN, Reader, Readers, TranscriptError
from .sources import (
    MEMBER_ERRORS,
    SIDECAR_SUFFIXES,
    SKIP_DIRS,
    TRUTH_NAME,
    TURN,
    ArchiveError,
    Opener,
    archive_source,
    is_archive,
    is_sidecar_name,
    is_transcript_name,
    logical_name,
    open_head,
    open_path,
)

# run-<label>[-<i>][.t<k>].jsonl: the arm is the label.
RUN_NAME = re.compile(r"^run-(?P<arm>.+?)(?:-(?P<index>\d+))?(?:\.t(?P<turn>\d+))?\.jsonl$")
RUN_DIR = re.compile(r"^run[-_]?(\d+)$")
_SNIFF_LINES = 8
UNREADABLE = "unreadable"
_SNIFF_LINE_BYTES = 1 << 20
#: A JSON document (Gemini CLI) is told by its first bytes: it may be pretty-printed.
_SNIFF_DOCUMENT_BYTES = 1 << 13
_SESSION_ID_VALUE = re.compile(rb'"sessionId"\s*:\s*"([^"\\]*)"')
#: An interactive session log's own name: ``<session-uuid>.jsonl``.
SESSION_FILE = re.compile(r"^[0-9a-fA-F]{8}(?:-[0-9a-fA-F]{4}){3}-[0-9a-fA-F]{12}\.jsonl$")
#: Where `sniff` puts the session id of a session log's first conversation line.
CONVERSATION = "\x00conversation"
_CONVERSATION_LINES = 64  # bookkeeping lines a session file can start with
_CONVERSATION_HEAD = 4096  # Claude Code writes ``sessionId`` before the message
#: Gemini CLI writes the user's prompts beside its sessions: not a transcript.
PROMPT_LOG = "logs.json"
#: Continue lists its sessions beside them: not a transcript.
CONTINUE_INDEX = "sessions.json"
#: Cursor's agent transcripts (``~/.cursor/projects/<p>/agent-transcripts/``) have no call
#: ids and no results: listed, never read as transcripts with zero calls.
CURSOR_DIR = "agent-transcripts"
CURSOR_REASON = (
    "Cursor agent transcript: no tool call ids and no tool results in it, so no call can be judged"
)


@dataclass(frozen=True, slots=True)
class Transcript:
    """One transcript: its files (main first) and what the campaign layout says of it."""

    path: str  # relative to the campaign root, "/" separators
    kind: str  # "stream-json" | "interactive" | "codex" | "gemini"
    arm: str
    group: str
    run: str
    notes: tuple[str, ...] = ()
    #: the files read (main first), then their sidecars: relative to the campaign root
    rel_files: tuple[str, ...] = ()
    archive: str | None = None  # the archive the files are members of
    agent: str = "claude"  # "claude" | "codex" | "gemini", or what --explore-suff-pattern names
    root: str = ""  # the campaign directory (not an archive's)
    read: int = 1  # how many of ``rel_files`` are read
    #: A session log that holds a copy of other sessions' lines (older ``--resume``,
    #: ``--fork-session``): (copied session id, the transcript path that judges its lines,
    #: or "" when this one does: that session is not in the campaign).
    copies: tuple[tuple[str, str], ...] = ()
    #: the session it is, in a file that holds many (a database; the path is ``<file>/<session>``)
    session: str = ""

    @property
    def files(self) -> tuple[str, ...]:
        """What the opener takes: absolute paths, or archive member names.

        Joined when asked for (by the judge, once per item; by ``reportinfo``), not held:
        tens of thousands of transcripts are kept to the end of the session, each with its
        relative names.
        """
        names = self.rel_files[: self.read]
        if self.archive is not None:
            return names
        return tuple(os.path.join(self.root, name) for name in names)


@dataclass
class Campaign:
    root: str
    transcripts: list[Transcript] = field(default_factory=list)
    ignored: list[dict[str, str]] = field(default_factory=list)
    #: transcripts whose path ``--explore-suff-pattern`` matched (the controller's discovery)
    matched: int = 0


def sniff(
    path: str, open_file: Opener = open_path, readers: Readers | None = None, rel: str | None = None
) -> tuple[str | None, dict[str, Any] | None]:
    """(kind, first event) from a file's path and first lines; kind None when no reader
    claims it, `UNREADABLE` when the file cannot be read (reading it as an item will say
    why). Each reader's claims are tried in the readers' order: its path pattern (on
    ``rel``, the path in the campaign), then, for a ``.json`` document, its first bytes,
    for a JSONL file each of its first lines. For a Gemini session document the "event"
    is ``{"sessionId"}`` from its first bytes."""
    readers = BUILTIN if readers is None else readers
    if readers.patterned and (claimed := readers.by_path(logical_name(rel if rel is not None else path))):
        return claimed.name, None
    if logical_name(path).endswith(".json"):
        head: list[bytes] = []
        kind = sniff_document(path, open_file, head, readers)
        m = _SESSION_ID_VALUE.search(head[0]) if kind == "gemini" and head else None
        return kind, ({"sessionId": m.group(1).decode("utf-8", "replace")} if m else None)
    try:
        with (open_head if open_file is open_path else open_file)(path) as fh:
            for _ in range(_SNIFF_LINES):
                line = fh.readline(_SNIFF_LINE_BYTES)
                if not line:
                    break
                line = line.strip()
                if not line:
                    continue
                try:
                    obj = decode(line)
                except Undecodable:
                    continue
                if not isinstance(obj, dict):
                    continue
                if (claimed := readers.by_line(obj)) is not None:
                    session_file = SESSION_FILE.match(logical_name(os.path.basename(path)))
                    if claimed.name == "interactive" and session_file:
                        obj[CONVERSATION] = _conversation(obj, fh)
                    return claimed.name, obj
    except (OSError, ArchiveError, *MEMBER_ERRORS):
        return UNREADABLE, None
    return None, None


def _conversation(first: dict[str, Any], fh: Any) -> str | None:
    """The ``sessionId`` of a session log's first conversation line (one with a
    ``parentUuid``; the bookkeeping lines a file starts with have none, and may name the
    new session): a copied session's file starts with the old session's lines.
    Read as bytes, up to `_CONVERSATION_LINES` lines past the first event."""
    sid = first.get("sessionId")
    if "parentUuid" in first:
        return sid if isinstance(sid, str) else None
    for _ in range(_CONVERSATION_LINES):
        line = fh.readline(_SNIFF_LINE_BYTES)
        if not line:
            break
        if line.find(b'"parentUuid"', 0, _CONVERSATION_HEAD) != -1:
            m = _SESSION_ID_VALUE.search(line, 0, _CONVERSATION_HEAD)
            return m.group(1).decode("utf-8", "replace") if m else None
    return None


def sniff_document(
    path: str, open_file: Opener = open_path, keep: list[bytes] | None = None, readers: Readers | None = None
) -> str | None:
    """The name of the reader that claims a ``.json`` file by its first bytes (``"gemini"``
    for a Gemini CLI session document or checkpoint); None when none does; `UNREADABLE`
    when it cannot be read. The bytes read are appended to ``keep``."""
    try:
        with (open_head if open_file is open_path else open_file)(path) as fh:
            head = fh.read(_SNIFF_DOCUMENT_BYTES)
    except (OSError, ArchiveError, *MEMBER_ERRORS):
        return UNREADABLE
    head = head.lstrip(b"\xef\xbb\xbf \t\r\n")
    if keep is not None:
        keep.append(head)
    claimed = (BUILTIN if readers is None else readers).by_head(head)
    return claimed.name if claimed is not None else None


def shown(rel: str) -> str:
    """A relative path as the report can carry it: a name that is not UTF-8
    (undecodable bytes, kept by the OS as surrogates) gets its bytes escaped."""
    try:
        rel.encode("utf-8")
    except UnicodeEncodeError:
        return os.fsencode(rel).decode("utf-8", "backslashreplace")
    return rel


def _walk(
    root: str,
    ignored: list[dict[str, str]],
    keep: Callable[[str], bool] | None = None,
    others: list[str] | None = None,
) -> list[str]:
    """Every ``*.jsonl`` and ``*.json`` (not ``*.meta.json``) regular file under root, and
    every file ``keep`` says yes to (a reader's database), relative, sorted. Symlinks are
    followed only while they stay inside the campaign, and only to a file not collected
    already (no transcript counted twice); directory symlinks never (no loops).
    ``others``: gets every other file, and every folder the walk does not enter
    (`SKIP_DIRS`), for `_list_unread`."""
    real_root = os.path.realpath(root)
    found: list[str] = []
    links: list[tuple[str, str]] = []  # (rel, resolved target) of symlinked files
    stack = [""]
    while stack:
        rel_dir = stack.pop()
        try:
            entries = list(os.scandir(os.path.join(root, rel_dir)))
        except OSError as exc:
            reason = f"unreadable directory: {exc.strerror}"
            ignored.append({"path": shown(rel_dir or "."), "reason": reason})
            continue
        for entry in entries:
            rel = f"{rel_dir}/{entry.name}" if rel_dir else entry.name
            try:
                if entry.is_dir(follow_symlinks=False):
                    if entry.name not in SKIP_DIRS:
                        stack.append(rel)
                    elif others is not None:
                        others.append(rel + "/")
                    continue
                if entry.is_symlink() and entry.is_dir():  # whatever its name: never walked, so say so
                    inside = os.path.commonpath([real_root, os.path.realpath(entry.path)]) == real_root
                    where = "to a directory" if inside else "out of the campaign directory"
                    ignored.append({"path": shown(rel), "reason": f"symlink {where}, not followed"})
                    continue
                if not is_transcript_name(entry.name) and not (keep is not None and keep(rel)):
                    if entry.name.endswith(".txt") and rel_dir.rpartition("/")[2] == CURSOR_DIR:
                        ignored.append({"path": shown(rel), "reason": CURSOR_REASON})
                    elif others is not None:
                        others.append(rel)
                    continue
                if (printable := shown(rel)) != rel:
                    ignored.append({"path": printable, "reason": "file name is not valid UTF-8, not read"})
                    continue
                target = None
                if entry.is_symlink():
                    target = os.path.realpath(entry.path)
                    if os.path.commonpath([real_root, target]) != real_root:
                        ignored.append(
                            {"path": rel, "reason": "symlink out of the campaign directory, not followed"}
                        )
                        continue
                if entry.is_file():
                    if target is None:
                        found.append(rel)
                    else:
                        links.append((rel, target))
                else:
                    ignored.append({"path": rel, "reason": "not a regular file"})
            except OSError as exc:
                ignored.append({"path": rel, "reason": f"unreadable: {exc.strerror}"})
    if links:
        # Directory symlinks are never followed, so a walked file's real path is root + rel.
        owner = {os.path.join(real_root, *rel.split("/")): rel for rel in found}
        for rel, target in sorted(links):
            if target in owner:
                ignored.append({"path": rel, "reason": f"symlink to {owner[target]}, already collected"})
            else:
                owner[target] = rel
                found.append(rel)
    found.sort()
    return found


#: The files SQLite keeps beside a database it reads, by suffix.
_SQLITE_SIDECARS = {"-wal": "write-ahead log", "-shm": "shared-memory index", "-journal": "rollback journal"}
_SIDECAR_ENDS = tuple(_SQLITE_SIDECARS)


def _list_unread(campaign: Campaign, others: list[str]) -> None:
    """List under ``ignored`` what discovery did not read because no reader reads its kind
    of file (``others``: `_walk`'s, or an archive's), so that the report accounts for
    every file of the campaign: a ``conftest.py`` (never imported), notes, a stray
    subagent sidecar, a database's SQLite files, a folder the walk does not enter.

    A folder with no transcript anywhere under it is one entry, its files counted: a
    repository copied into the campaign is thousands of files. A sidecar read with its
    transcript (a subagent's ``.meta.json``) is in that transcript's files already.
    """
    ignored = campaign.ignored
    used: set[str] = set()
    holding: set[str] = set()  # the folders with a transcript somewhere under them
    databases: set[str] = set()
    # A pass over the transcripts only when an unread file needs it (a stray file or two at
    # the campaign's root, the usual case, does not).
    if any("/" in rel.rstrip("/") or is_sidecar_name(rel) or rel.endswith(_SIDECAR_ENDS) for rel in others):
        for t in campaign.transcripts:
            used.update(t.rel_files)
            if t.session:
                databases.add(t.rel_files[0])
            for rel in t.rel_files:
                folder = rel.rpartition("/")[0]
                while folder and folder not in holding:
                    holding.add(folder)
                    folder = folder.rpartition("/")[0]
    folders: dict[str, list[str]] = {}
    for rel in sorted(others):
        if rel in used or rel == TRUTH_NAME:  # the campaign's truth file: read as such, not unread
            continue
        if rel.endswith("/"):
            # a folder's reason begins "a folder " (`terminal.FOLDER_REASON`: the summary counts them)
            reason = "a folder the walk does not enter (version control, dependencies, caches), not read"
            ignored.append({"path": shown(rel.rstrip("/")), "reason": reason})
            continue
        base, dash, suffix = rel.rpartition("-")
        if dash and base in databases and (part := _SQLITE_SIDECARS.get(dash + suffix)):
            reason = f"the {part} of the SQLite database {shown(base)}, read with it; not a transcript"
            ignored.append({"path": shown(rel), "reason": reason})
            continue
        parts = rel.split("/")
        # the outermost folder above it with no transcript under it, if any
        top = next((f for i in range(1, len(parts)) if (f := "/".join(parts[:i])) not in holding), None)
        if top is not None:
            folders.setdefault(top, []).append(rel)
            continue
        ignored.append({"path": shown(rel), "reason": _unread_reason(parts[-1])})
    for top, files in folders.items():
        if len(files) == 1:  # a folder for one file: the file itself says more
            ignored.append({"path": shown(files[0]), "reason": _unread_reason(files[0].rpartition("/")[2])})
        else:
            reason = f"a folder with no transcript in it ({len(files)} files no reader reads), not read"
            ignored.append({"path": shown(top), "reason": reason})


def _unread_reason(name: str) -> str:
    if is_sidecar_name(name):
        return "a subagent's sidecar with no subagent transcript beside it, not read"
    if name.endswith(".py"):
        return "not a transcript (a Python file: never imported nor read)"
    suffix = name.rpartition(".")[2] if "." in name.lstrip(".") else ""
    kind = f"*.{suffix} files" if suffix else "files named like this"
    return f"not a transcript (no reader reads {kind}), not read"


@functools.lru_cache(maxsize=1 << 12)
def _named(name: str) -> tuple[str, str]:
    """(arm, run index) of a file name: ``run-<label>[-<i>]...`` names both; others neither.

    Cached: `RUN_NAME` takes microseconds a name (its lazy label is tried at every
    length), and a campaign repeats a few names across thousands of folders."""
    if m := RUN_NAME.match(name):
        return m["arm"], m["index"] or ""
    return "default", ""


def _layout(rel: str) -> tuple[str, str, str]:
    """(arm, group, run) inferred from the layouts harnesses write."""
    parts = rel.split("/")
    name, dirs = parts[-1], parts[:-1]
    arm, run = _named(name)
    group = ""
    for i, d in enumerate(dirs):
        if m := RUN_DIR.match(d):
            run = run or m.group(1)
            group = dirs[i - 1] if i else ""
            break
    else:
        group = dirs[0] if dirs else ""
    return arm, group, run


def discover(root: str, pattern: re.Pattern[str] | None = None, readers: Readers | None = None) -> Campaign:
    """Find and group the transcripts of a campaign: a directory, or an archive.

    ``readers``: the run's readers (`registry.Readers`; the built-in ones when None).

    Raises `ArchiveError` for an archive that cannot be read.
    """
    campaign = Campaign(root)
    ignored = campaign.ignored
    known = BUILTIN if readers is None else readers
    archive: str | None = None
    if is_archive(root):
        archive = root
        source = archive_source(root)
        ignored.extend(source.ignored)
        others: list[str] = source.others
        listed = list(source.files)  # archive order: reading in it never seeks back
        open_file: Opener = source.head
        has_sidecar: Callable[[str], bool] = source.sidecars.__contains__
    else:
        keep = (lambda rel: known.container(rel) is not None) if known.containers else None
        others = []
        listed = _walk(root, ignored, keep, others)
        open_file = open_path

        def has_sidecar(rel: str) -> bool:
            return os.path.isfile(os.path.join(root, rel))

    # Group by logical names (no .gz), so run-x.t2.jsonl.gz is a turn of run-x.jsonl.
    actual: dict[str, str] = {}
    for rel in listed:
        logical = logical_name(rel)
        if logical in actual:
            ignored.append({"path": rel, "reason": f"same transcript as {actual[logical]}, not read twice"})
        else:
            actual[logical] = rel
    order = {logical_name(rel): i for i, rel in enumerate(listed)}
    units: list[Transcript] = []
    if known.units:
        units = _units(campaign, actual, known, archive, open_file, pattern)
    if archive is not None and known.containers:
        for rel in source.databases:
            if (reader := known.container(rel)) is not None:
                ignored.append({"path": rel, "reason": ARCHIVED_DATABASE.format(agent=reader.agent)})
    sniffed: dict[str, tuple[str | None, dict[str, Any] | None]] = {}

    def sniff_rel(logical: str) -> tuple[str | None, dict[str, Any] | None]:
        if logical not in sniffed:
            rel = actual[logical]
            kind, event = sniff(
                rel if archive is not None else os.path.join(root, rel), open_file, known, rel
            )
            # Later steps read the first event of a Codex or Gemini file (session ids, parents)
            # and of a flat agent-*.jsonl (its session); a Claude transcript's (its init line,
            # kilobytes of tool lists) is not held through discovery, for every file.
            if kind in ("stream-json", "interactive") and not logical.rpartition("/")[2].startswith("agent-"):
                # A session log keeps only where its conversation starts: in another session
                # when it is a copy (`_copies`).
                conversation = event.get(CONVERSATION) if event is not None else None
                event = {CONVERSATION: conversation} if conversation is not None else None
            sniffed[logical] = (kind, event)
        return sniffed[logical]

    turns: dict[str, list[tuple[int, str]]] = defaultdict(list)
    subagents: dict[str, list[str]] = defaultdict(list)  # session main -> subagent files
    flat_agents: list[str] = []
    mains: list[str] = []
    for rel in actual:
        parts = rel.split("/")
        name = parts[-1]
        if name.startswith("agent-") and name.endswith(".jsonl"):
            if name.startswith("agent-acompact"):
                ignored.append({"path": actual[rel], "reason": "compaction artifact (agent-acompact*)"})
            elif "subagents" in parts[:-1]:
                at = len(parts) - 2 - parts[-2::-1].index("subagents")
                session = "/".join(parts[:at]) + ".jsonl"
                subagents[session].append(rel)
            else:
                flat_agents.append(rel)
            continue
        # A turn's name ends ".t<k>.jsonl": a name without ".t" is not tried (the regex
        # backtracks through the whole name, and discovery asks it of every file).
        if ".t" in name and (m := TURN.match(name)):
            base = "/".join([*parts[:-1], m["base"] + ".jsonl"])
            turns[base].append((int(m["turn"]), rel))
            continue
        mains.append(rel)

    present = set(mains)
    notes: dict[str, list[str]] = defaultdict(list)
    for base in [b for b in turns if b not in present]:
        # Turn files without their first turn: the earliest one leads.
        segs = sorted(turns.pop(base))
        lead = segs.pop(0)[1]
        turns[lead] = segs
        mains.append(lead)
        notes[lead].append(f"first turn {base.rsplit('/', 1)[-1]} is missing")

    # Sniff in listing order (for an archive, its order): first lines only.
    for rel in sorted([*mains, *flat_agents], key=order.__getitem__):
        sniff_rel(rel)
    # Sessions copied into a new file (older --resume, --fork-session), and who holds the
    # subagents of a copied session whose own file is not in the campaign.
    copies, holders = _copies(mains, sniff_rel)
    for rel in flat_agents:
        _, event = sniff_rel(rel)
        sid = event.get("sessionId") if event else None
        owner = "/".join([*rel.split("/")[:-1], f"{sid}.jsonl"]) if isinstance(sid, str) else None
        if owner in present:
            subagents[owner].append(rel)
        elif owner in holders:
            subagents[holders[owner]].append(rel)
        else:
            mains.append(rel)
    for session in [s for s in subagents if s not in present]:
        if session in holders:
            subagents[holders[session]].extend(subagents.pop(session))
        else:
            mains.extend(subagents.pop(session))
    for child, parent in _agent_children(mains, sniff_rel, order, notes).items():
        subagents[parent].append(child)
    if subagents:
        grouped = {f for files in subagents.values() for f in files}
        mains = [rel for rel in mains if rel not in grouped]

    for rel in sorted(mains):
        kind, _ = sniff_rel(rel)
        name = rel.rsplit("/", 1)[-1]
        if kind is None:
            if not RUN_NAME.match(name) and not (name.startswith("agent-") and name.endswith(".jsonl")):
                if name == PROMPT_LOG:
                    reason = "Gemini CLI prompt log (logs.json: the user's prompts only), not a transcript"
                elif name == CONTINUE_INDEX:
                    reason = "Continue's session index (sessions.json: titles only), not a transcript"
                elif CURSOR_DIR in rel.split("/")[:-1]:
                    reason = CURSOR_REASON
                elif name.endswith(".json"):
                    reason = (
                        "not a transcript (a JSON document no reader claims: not a Gemini CLI session, "
                        "nor a Copilot CLI history)"
                    )
                else:
                    reason = "not a transcript (no agent events in its first lines)"
                ignored.append({"path": actual[rel], "reason": reason})
                for extra in [r for _, r in turns.get(rel, [])] + subagents.get(rel, []):
                    reason = "belongs to a file that is not a transcript"
                    ignored.append({"path": actual[extra], "reason": reason})
                continue
            kind = "stream-json"  # named like one: reading it will say what is wrong
        elif kind == UNREADABLE:
            # a damaged file or member: its item fails with the reason
            kind = "gemini" if name.endswith(".json") else "stream-json"
        if name.startswith("agent-") and name.endswith(".jsonl") and kind in ("stream-json", "interactive"):
            notes[rel].append("subagent file with no parent session in the campaign; judged alone")
            kind = "interactive"
        turn_files = [r for _, r in sorted(turns.get(rel, []))]
        subs = sorted(subagents.get(rel, []))
        arm, group, run = _layout(rel)
        if kind == "interactive" and arm == "default":
            arm = "interactive"  # a session log names no arm; keep it apart from A/B arms
        agent = known.agent(kind)
        shown_path = actual[rel]
        found: dict[str, str | None] = {}
        # A compressed file's path is searched without its .gz first (``\.jsonl$`` still
        # names it), then as it is.
        if pattern is not None and (m := pattern.search(rel) or pattern.search(shown_path)):
            found = m.groupdict()
            agent = found.get("agent") or agent
            campaign.matched += 1
        if kind not in ("stream-json", "interactive") and not RUN_NAME.match(name):
            arm = agent  # other agents' sessions name no arm: the agent is one
        if found:
            arm = found.get("arm") or arm
            group = found.get("group") or group
            run = found.get("run") or run
        rels = tuple(actual[f] for f in (rel, *turn_files, *subs))
        # The report names every file a transcript was read from, sidecars included.
        # (A test first, not in the generator: most transcripts have no subagent at all.)
        metas = tuple(_sidecars(subs, has_sidecar)) if subs and kind == "interactive" else ()
        # Arms, groups and runs repeat across thousands of transcripts: one string each.
        arm, group, run = sys.intern(arm), sys.intern(group), sys.intern(run)
        campaign.transcripts.append(
            Transcript(shown_path, kind, arm, group, run, tuple(notes.get(rel, ())), rels + metas, archive,
                       agent, "" if archive is not None else root, len(rels),
                       tuple((sid, actual[by] if by else "") for sid, by in copies.get(rel, ()))
                       if kind == "interactive" else ())
        )  # fmt: skip
    if units:
        campaign.transcripts.extend(units)
    if others:
        _list_unread(campaign, others)
        if archive is None:  # path order, the order the files' transcripts were made in
            campaign.transcripts.sort(key=lambda t: logical_name(t.path))
    if archive is not None:  # items in archive order: a .tar.gz is then read front to back
        campaign.transcripts.sort(key=lambda t: order[logical_name(t.rel_files[0])])
    campaign.ignored.sort(key=lambda d: d["path"])
    return campaign


def _sidecars(subs: list[str], has_sidecar: Callable[[str], bool]) -> Iterator[str]:
    """The ``.meta.json`` sidecar of each subagent file that has one (or its ``.gz``)."""
    for f in subs:
        stem = f[: -len(".jsonl")]
        meta = next((m for suffix in SIDECAR_SUFFIXES if has_sidecar(m := stem + suffix)), None)
        if meta is not None:
            yield meta


def _units(
    campaign: Campaign, actual: dict[str, str], known: Readers, archive: str | None, open_file: Opener,
    pattern: re.Pattern[str] | None,
) -> list[Transcript]:  # fmt: skip
    """The transcripts of readers that claim files by a pattern and read them as a unit:
    a folder of files (``Reader.group``) or the sessions of a database (``Reader.sessions``).
    Their files are taken out of ``actual`` (nothing else sniffs them)."""
    out: list[Transcript] = []
    groups: dict[tuple[str, str], list[str]] = defaultdict(list)
    for rel in list(actual):
        reader = known.by_unit(rel)
        if reader is None:
            continue
        if reader.sessions is not None:
            del actual[rel]
            out.extend(_sessions(campaign, reader, rel, archive, pattern))
        elif reader.group is not None and (key := reader.group(rel)) is not None:
            groups[(reader.name, key)].append(rel)
    for (name, key), rels in groups.items():
        reader = known[name]
        if reader.head is not None and not any(
            _head_of(actual[r], reader, open_file, archive, campaign.root) for r in sorted(rels)[:8]
        ):
            continue  # not this agent's folder after all: its files are sniffed as any other
        layout = _layout(f"{key}/-" if key else "-")
        if reader.split is not None:
            out.extend(
                _split(campaign, reader, key, sorted(rels), actual, layout, archive, open_file, pattern)
            )
            continue
        files = tuple(actual.pop(r) for r in sorted(rels))
        out.append(_unit(campaign, reader, key or ".", files, layout, archive, pattern))
    return out


def _split(
    campaign: Campaign, reader: Reader, key: str, rels: list[str], actual: dict[str, str],
    layout: tuple[str, str, str], archive: str | None, open_file: Opener, pattern: re.Pattern[str] | None,
) -> list[Transcript]:  # fmt: skip
    """The transcripts of a group that holds many (`Reader.split`), each named
    ``<group>/<session id>``; its files in no transcript are listed as ignored."""
    assert reader.split is not None

    def head(rel: str) -> bytes:
        kept: list[bytes] = []
        path = actual[rel] if archive is not None else os.path.join(campaign.root, actual[rel])
        sniff_document(path, open_file, kept, Readers([]))
        return kept[0] if kept else b""

    out: list[Transcript] = []
    taken: set[str] = set()
    for sid, members in reader.split(rels, head):
        if not isinstance(sid, str) or not sid:
            continue
        files = tuple(actual[m] for m in members if m in actual and m not in taken)
        taken.update(members)
        if files:
            name = f"{key}/{sid}" if key else sid
            out.append(_unit(campaign, reader, name, files, layout, archive, pattern, sid))
    for rel in rels:
        real = actual.pop(rel)
        if rel not in taken:
            campaign.ignored.append(
                {"path": real, "reason": f"belongs to no {reader.agent} session of its folder"}
            )
    return out


def _head_of(rel: str, reader: Reader, open_file: Opener, archive: str | None, root: str) -> bool:
    head: list[bytes] = []
    path = rel if archive is not None else os.path.join(root, rel)
    sniff_document(path, open_file, head, Readers([]))
    return bool(head) and reader.head is not None and reader.head(head[0])


def _unit(
    campaign: Campaign, reader: Reader, path: str, files: tuple[str, ...], layout: tuple[str, str, str],
    archive: str | None, pattern: re.Pattern[str] | None, session: str = "",
) -> Transcript:  # fmt: skip
    arm, group, run = layout
    agent = reader.agent
    arm = agent if arm == "default" else arm  # its files name no arm: the agent is one
    if pattern is not None and (m := pattern.search(path)):  # as for a file: its path is its name
        found = m.groupdict()
        campaign.matched += 1
        agent = found.get("agent") or agent
        arm, group, run = found.get("arm") or arm, found.get("group") or group, found.get("run") or run
    root = "" if archive is not None else campaign.root
    return Transcript(path, reader.name, sys.intern(arm), sys.intern(group), sys.intern(run), (), files,
                      archive, agent, root, len(files), session=session)  # fmt: skip


#: A database SQLite opens in place only: inside an archive it is listed, not read.
ARCHIVED_DATABASE = (
    "a {agent} database inside an archive: SQLite reads a database only in place "
    "(extract the archive and point --explore-suff at the folder)"
)


def _sessions(
    campaign: Campaign, reader: Reader, rel: str, archive: str | None, pattern: re.Pattern[str] | None
) -> list[Transcript]:
    """One transcript per session of a database (none when it has none: listed as ignored)."""
    assert reader.sessions is not None
    layout = _layout(rel)
    try:
        ids = [
            sid for sid in reader.sessions(os.path.join(campaign.root, rel)) if isinstance(sid, str) and sid
        ]
    except TranscriptError:
        # Its item reads it again and fails with the reason, on its own line.
        return [_unit(campaign, reader, rel, (rel,), layout, archive, pattern)]
    if not ids:
        campaign.ignored.append({"path": rel, "reason": f"a {reader.agent} database with no session in it"})
    return [_unit(campaign, reader, f"{rel}/{sid}", (rel,), layout, archive, pattern, sid) for sid in ids]


def _agent_children(
    mains: list[str],
    sniff_rel: Callable[[str], tuple[str | None, dict[str, Any] | None]],
    order: dict[str, int],
    notes: dict[str, list[str]],
) -> dict[str, str]:
    """Codex and Gemini subagent files, each with the transcript it belongs to (D9).

    Only first lines are read (discovery sniffs): a Codex rollout's ``session_meta``
    names its parent (``source.subagent.thread_spawn.parent_thread_id``); a Gemini
    child (v0.37+) sits in a folder named after its parent's ``sessionId``, beside the
    parent's file. A child of a child belongs to the same transcript. A Codex child
    whose parent is not in the campaign is a transcript of its own, with a note;
    review and guardian sessions name no parent; ``skill-extraction-*`` folders hold
    sessions with no parent.
    """
    by_id: dict[tuple[str, str], str] = {}  # (agent, session id) -> the first file that has it
    gemini_by_id: dict[tuple[str, str], str] = {}  # (folder, session id) -> file (JSONL form first)
    parent_of: dict[str, str] = {}
    wanted: dict[str, tuple[str, str]] = {}  # child -> (where its parent is looked up, parent id)
    for rel in sorted(mains, key=order.__getitem__):
        kind, event = sniff_rel(rel)
        if kind == "codex" and event is not None and event.get("type") == "session_meta":
            from .readers.codex import session_identity  # a campaign without Codex logs never needs it

            sid, parent, _ = session_identity(event.get("payload"))
            if sid is not None:
                by_id.setdefault(("codex", sid), rel)
            if parent is not None:
                wanted[rel] = ("codex", parent)
        elif kind == "gemini" and event is not None and isinstance(event.get("sessionId"), str):
            parts = rel.split("/")
            slot = ("/".join(parts[:-1]), event["sessionId"])
            # A session resumed from the older .json form goes on in a .jsonl of the same
            # id beside it (the .json is left behind): the children of its new turns are
            # the .jsonl's, and it holds the old ones' calls too.
            held = gemini_by_id.get(slot)
            if held is None or (_jsonl(rel) and not _jsonl(held)):
                gemini_by_id[slot] = rel
            from .readers.gemini import SKILL_EXTRACTION  # likewise

            if len(parts) >= 2 and not parts[-2].startswith(SKILL_EXTRACTION):
                wanted[rel] = ("gemini", "/".join(parts[:-2]) + "\0" + parts[-2])
    for rel, (agent, key) in wanted.items():
        if agent == "codex":
            parent = by_id.get(("codex", key))
        else:
            folder, _, sid = key.partition("\0")
            parent = gemini_by_id.get((folder, sid))
        if parent is not None and parent != rel:
            parent_of[rel] = parent
        elif agent == "codex":
            notes[rel].append(
                f"subagent rollout whose parent session {key} is not in the campaign; judged alone"
            )
    roots: dict[str, str] = {}
    for rel in parent_of:
        root, seen = rel, {rel}
        while root in parent_of and parent_of[root] not in seen:
            root = parent_of[root]
            seen.add(root)
        if root in parent_of:  # a cycle: no file of it is anyone's parent
            continue
        if root != rel:
            roots[rel] = root
    return roots


def _copies(
    mains: list[str], sniff_rel: Callable[[str], tuple[str | None, dict[str, Any] | None]]
) -> tuple[dict[str, tuple[tuple[str, str], ...]], dict[str, str]]:
    """Session logs that start with a copy of another session, and who judges its lines.

    A session resumed or forked into a new file (older ``--resume``, ``--fork-session``)
    starts with the old session's lines, which keep their ``sessionId``: its first
    conversation line names the session it copies (in a chain of resumes, the first).
    The files of one folder that start in one session are one family. Each call is
    judged once, in the session that made it: a line whose ``sessionId`` is another
    session file of the family is a copy, judged there. When the first session's own
    file is not in the campaign, the family's first file (by path) judges its lines, and
    holds its subagent files (``<session>/subagents/``, flat ``agent-*.jsonl``).

    Returns (copies per session file, the holder of each absent session's
    ``<dir>/<session>.jsonl``). Only the family's members are named: a folder of
    thousands of sessions does not give each the names of all the others.
    """
    families: dict[tuple[str, str], list[str]] = defaultdict(list)
    for rel in mains:
        folder, _, name = rel.rpartition("/")
        if not SESSION_FILE.match(name):
            continue
        kind, event = sniff_rel(rel)
        started = event.get(CONVERSATION) if kind == "interactive" and event is not None else None
        own = name[: -len(".jsonl")]
        families[(folder, started if isinstance(started, str) and started else own)].append(rel)
    copies: dict[str, tuple[tuple[str, str], ...]] = {}
    holders: dict[str, str] = {}
    for (folder, first), members in families.items():
        first_file = f"{folder}/{first}.jsonl" if folder else f"{first}.jsonl"
        if len(members) == 1 and members[0] == first_file:
            continue  # a session of its own: the common case
        members.sort()
        holder = first_file if first_file in members else members[0]
        if holder != first_file:
            holders[first_file] = holder
        for rel in members:
            if rel == first_file:
                continue  # the first session holds no copy
            own = rel.rpartition("/")[2][: -len(".jsonl")]
            pairs = [(o.rpartition("/")[2][: -len(".jsonl")], o) for o in members if o != rel]
            if first_file not in members:
                pairs.append((first, "" if rel == holder else holder))
            copies[rel] = tuple(sorted((sid, by) for sid, by in pairs if sid != own))
    return copies, holders


def _jsonl(rel: str) -> bool:
    return logical_name(rel).endswith(".jsonl")


#: A transcript's fields in their order, as one tuple (`to_wire`).
_FIELDS = tuple(f.name for f in dataclasses.fields(Transcript))
_fields_of = operator.attrgetter(*_FIELDS)
#: Where a wire's lists are tuples again (`from_wire`): flat ones, and ``copies``' pairs.
_FLAT = frozenset(_FIELDS.index(name) for name in ("notes", "rel_files"))
_PAIRS = _FIELDS.index("copies")
_SHARED = frozenset(_FIELDS.index(name) for name in ("kind", "arm", "group", "run", "agent", "root"))


def to_wire(campaign: Campaign) -> bytes | dict[str, Any]:
    """The campaign for xdist workers, as JSON bytes: execnet's serializer is plain Python
    (for 10,000 transcripts, 0.2 s on the controller for each worker, as much again on the
    worker); the same as plain data when a path holds what UTF-8 cannot (a surrogate)."""
    data = {
        "root": campaign.root,
        "transcripts": [_fields_of(t) for t in campaign.transcripts],
        "ignored": campaign.ignored,
    }
    try:
        return orjson.dumps(data)
    except orjson.JSONEncodeError:
        return data


def from_wire(data: bytes | dict[str, Any]) -> Campaign:
    """The campaign `to_wire` shipped: the controller's one discovery, on a worker."""
    wire: dict[str, Any] = decode(data) if isinstance(data, bytes) else data
    transcripts = []
    intern = sys.intern
    for fields in wire["transcripts"]:
        values = list(fields)
        for at in _FLAT:
            values[at] = tuple(values[at])
        values[_PAIRS] = tuple(map(tuple, values[_PAIRS]))
        for at in _SHARED:  # repeated across thousands of transcripts: one string each
            values[at] = intern(values[at])
        transcripts.append(Transcript(*values))
    return Campaign(wire["root"], transcripts, list(wire["ignored"]))
