"""What the built-in readers claim a file by, apart from their modules.

A campaign imports only the readers its files need (`readers.builtin_readers`),
but discovery matches every file against every reader's path pattern, and
tries the line tests of Qwen Code and Copilot CLI on every JSONL file before
Claude Code's: those live here, and the readers' modules take theirs from here.
"""

from __future__ import annotations

from typing import Any

#: A Cline or Roo Code task folder's files.
CLINE = r"(?:^|/)(?:api_conversation_history|ui_messages|claude_messages|task_metadata)\.json$"
#: Crush's database.
CRUSH = r"(?:^|/)crush\.db$"
#: OpenCode's database.
OPENCODE = r"(?:^|/)opencode\.db$"
#: OpenCode's legacy JSON storage: a document per session, message and part.
OPENCODE_STORAGE = r"(?:^|/)storage/(?:session|message|part)/[^/]+/[^/]+\.json$"
#: An OpenHands V0 session folder's files.
OPENHANDS = r"(?:^|/)(?:events/\d+|metadata)\.json$"
#: An OpenHands SDK conversation folder's files.
OPENHANDS_SDK = r"(?:^|/)(?:events/event-\d+-[^/]+|base_state)\.json$"

#: A Qwen Code chat record's ``type``.
QWEN_RECORD_TYPES = frozenset({"user", "assistant", "tool_result", "system"})
#: ``system`` subtypes only Qwen Code writes.
QWEN_SYSTEM_SUBTYPES = frozenset({"ui_telemetry", "chat_compression", "slash_command", "at_command"})
#: The first part of a Copilot CLI event's ``type``.
COPILOT_EVENT_FAMILIES = frozenset(
    {"session", "user", "assistant", "tool", "subagent", "hook", "permission", "skill", "abort", "system"}
)


def looks_like_qwen(obj: dict[str, Any]) -> bool:
    """A Qwen Code chat record, not a Claude Code session line (both carry ``uuid`` and
    ``sessionId``): Gemini ``parts`` in its message, a ``tool_result`` record, or a
    ``system`` record of a Qwen subtype."""
    kind = obj.get("type")
    if not isinstance(kind, str) or kind not in QWEN_RECORD_TYPES:
        return False
    if "uuid" not in obj or "sessionId" not in obj:
        return False
    message = obj.get("message")
    if isinstance(message, dict):
        return isinstance(message.get("parts"), list) or message.get("role") == "model"
    if kind == "tool_result":
        return True
    subtype = obj.get("subtype")
    return kind == "system" and isinstance(subtype, str) and subtype in QWEN_SYSTEM_SUBTYPES


def looks_like_copilot_event(obj: dict[str, Any]) -> bool:
    """A line of a Copilot CLI session: ``{"type": "<family>.<event>", "data": {...}}`` with
    an ``id`` or a ``timestamp`` (a look-alike record in some data file has neither)."""
    kind = obj.get("type")
    if not isinstance(kind, str) or "." not in kind or not isinstance(obj.get("data"), dict):
        return False
    return kind.partition(".")[0] in COPILOT_EVENT_FAMILIES and ("id" in obj or "timestamp" in obj)
