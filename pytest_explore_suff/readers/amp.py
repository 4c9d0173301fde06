"""Amp threads (``~/.local/share/amp/threads/T-<id>.json``).

One JSON document: ``{id: "T-...", created, v, messages: [...], usageLedger}``.
Each message is ``{role, content: [blocks], state, usage}`` with Anthropic's
blocks: ``text``, ``thinking``, ``tool_use {id, name, input}`` in assistant
messages; results in user messages as ``{type: "tool_result", toolUseID, run:
{status: done|error|cancelled|..., result}}`` (a status other than ``done`` is an
error). An assistant message's ``usage`` is its request: the window is
``inputTokens + cacheCreationInputTokens + cacheReadInputTokens``. The calls of
one assistant message are one message; the last assistant text is the answer.

Tools: ``Read`` (``path``), ``Grep``, ``glob``, ``list_directory`` (searches),
``Bash`` (``cmd``), ``todo_write``/``todo_read`` (bookkeeping), ``Task`` (a
delegation: the thread holds no step of its subagent, so it is judged as one
that ran no tool), MCP tools by their names (``<server>_<tool>`` read as
``mcp__<server>__<tool>``). A thread continued later goes on in the same file.
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from typing import Any

from ..events import Collector
from .tools import Feed, Tools, number, transcript_document, window

TOOLS = Tools(
    read={"Read": ("path", "file_path"), "read_file": ("path", "file_path")},
    grep=frozenset({"Grep", "grep", "codebase_search_agent"}),
    glob=frozenset({"glob", "Glob", "list_directory"}),
    shell={"Bash": ("cmd", "command")},
    bookkeeping=frozenset({"todo_write", "todo_read"}),
)
_THREAD_ID = re.compile(rb'"id"\s*:\s*"T-[0-9A-Za-z-]+"')


def looks_like_thread(head: bytes) -> bool:
    """An Amp thread's first bytes: a JSON object whose ``id`` is ``T-<id>``."""
    return head[:1] == b"{" and _THREAD_ID.search(head) is not None


def _result(run: Any) -> tuple[Any, bool]:
    """(content, is_error) of a tool_result's ``run``."""
    if not isinstance(run, dict):
        return "", True
    error = run.get("status") != "done"
    content = run.get("result")
    if isinstance(content, dict):  # Read: {content}, Bash: {output, exitCode}
        for key in ("output", "content", "text"):
            if isinstance(content.get(key), (str, list)):
                exit_code = content.get("exitCode")
                error = error or (type(exit_code) is int and exit_code != 0)
                content = content[key]
                break
    if content is None and run.get("error") is not None:
        err = run["error"]
        content = err.get("message") if isinstance(err, dict) and isinstance(err.get("message"), str) else err
    return content, error


def read(files: Sequence[str], collector: Collector, *, decode_all: bool = False) -> None:
    """Feed one Amp thread to ``collector``."""
    del decode_all  # a document is decoded whole
    doc = transcript_document(files[0], collector, "messages", "Amp thread messages")
    feed = Feed(collector, TOOLS)
    tokens: int | None = None
    cache: tuple[int, int] | None = None  # (prompt tokens, of them cache reads)
    cache_unknown = False  # a request gave its input without its cache reads
    for i, message in enumerate(doc["messages"]):
        if not isinstance(message, dict) or not isinstance(message.get("content"), list):
            continue
        role = message.get("role")
        if role == "assistant":
            feed.turns += 1
            usage = message.get("usage")
            if isinstance(usage, dict):
                ctx = window(
                    usage.get("inputTokens"), usage.get("cacheCreationInputTokens"),
                    usage.get("cacheReadInputTokens"),
                )  # fmt: skip
                if ctx is not None:
                    collector.timeline.request(ctx)
                    tokens = (tokens or 0) + ctx + (number(usage.get("outputTokens")) or 0)
                    # the cache reads among the request's whole prompt (input, cache writes, reads)
                    hit = number(usage.get("cacheReadInputTokens"))
                    if number(usage.get("inputTokens")) is None or hit is None:
                        cache_unknown = True
                    else:
                        cache = (cache[0] + ctx, cache[1] + hit) if cache else (ctx, hit)
            mid = message.get("messageId")
            msg = f"#amp-{mid if isinstance(mid, (str, int)) else i}"
            texts = []
            for block in message["content"]:
                if not isinstance(block, dict):
                    continue
                kind = block.get("type")
                if kind == "text" and isinstance(block.get("text"), str):
                    texts.append(block["text"])
                elif kind == "thinking":
                    feed.added(block.get("thinking"))
                elif kind == "tool_use":
                    feed.call(block.get("id"), block.get("name"), block.get("input"), message=msg)
            if texts:
                feed.said("".join(texts))
        elif role == "user":
            said: list[Any] = []  # `Collector.asked` keeps the strings
            answered = False
            for block in message["content"]:
                if not isinstance(block, dict):
                    continue
                kind = block.get("type")
                if kind == "tool_result":
                    answered = True
                    content, error = _result(block.get("run"))
                    feed.result(block.get("toolUseID"), content, error=error)
                elif kind == "text":
                    feed.added(block.get("text"))
                    said.append(block.get("text"))
            if not answered:  # a message of tool results is no prompt
                collector.asked(*said)  # the thread's first user text is its prompt
    collector.processed = tokens
    if cache is not None and not cache_unknown:
        collector.cache = cache
    feed.run(tokens)
