"""Codex MCP outputs: however the CLI encoded a response, the verdict reads its text.

The formats page: an MCP call's ``function_call_output.output`` is a JSON
string of the MCP result's content list, ``[{"type": "text", "text": ...}]``
(real rollouts also drop ``"type"``); older shapes wrap it in an MCP result
object or the CLI's ``{"Ok": ...}``. Read as plain text, a codegraph
response would show no returned-file section.
"""

from __future__ import annotations

import json
from typing import Any

import pytest
from agent_shapes import Rollout, explore_text
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from pytest_explore_suff import judge
from pytest_explore_suff.readers.codex import output_of

TEXT = explore_text(["lib/a.py", "lib/b.py"], mentioned=["lib/c.py"])


def blocks(text: str, *, typed: bool = True, parts: int = 1) -> list[dict[str, Any]]:
    """``text`` as content blocks, split at line ends into ``parts`` blocks."""
    lines = text.split("\n")
    size = max(1, -(-len(lines) // parts))
    chunks = ["\n".join(lines[i : i + size]) for i in range(0, len(lines), size)]
    return [{"type": "text", "text": c} if typed else {"text": c} for c in chunks]


SHAPES: dict[str, Any] = {
    "plain text": TEXT,
    "content list": json.dumps(blocks(TEXT)),
    "content list without type": json.dumps(blocks(TEXT, typed=False)),
    "content list in three blocks": json.dumps(blocks(TEXT, parts=3)),
    "content list, pretty-printed": json.dumps(blocks(TEXT), indent=2),
    "MCP result": json.dumps({"content": blocks(TEXT), "isError": False}),
    "MCP result with structuredContent": json.dumps(
        {"content": blocks(TEXT, typed=False), "structuredContent": {"x": 1}}
    ),
    "Ok result": json.dumps({"Ok": {"content": blocks(TEXT)}}),
    "shell-style output object": json.dumps({"output": TEXT, "metadata": {"exit_code": 0}}),
    "a decoded list": blocks(TEXT),
    "a decoded MCP result": {"content": blocks(TEXT, typed=False)},
}


@pytest.mark.parametrize("shape", list(SHAPES))
def test_every_encoding_of_a_response_gives_its_text(shape):
    assert output_of({"call_id": "c", "output": SHAPES[shape]}) == (TEXT, False)


@pytest.mark.parametrize("shape", list(SHAPES))
def test_the_returned_files_of_a_response_do_not_depend_on_its_encoding(shape, tmp_path):
    r = Rollout("current", "exec_command")
    e = r.explore("where is f")
    r.step(e, outputs=[{"text": "", "raw": SHAPES[shape]}])
    r.step(r.shell("cat lib/b.py"))
    r.finish()
    verdict, _ = judge("codex", [r.write(tmp_path / "rollout-x.jsonl")])
    [call] = verdict.calls
    assert (call.files, call.bucket, call.next) == (2, "read_returned", "Bash Read b.py")


SHELL_COMMAND = (
    "Exit code: {code}\nWall time: 0.1 seconds\nOutput:\nbash: line 1: codegraph: command not found\n"
)
EXEC_COMMAND = (
    "Chunk ID: 1a2b\nWall time: 0.0010 seconds\nProcess exited with code {code}\n"
    "Original token count: 12\nOutput:\nls: cannot access 'x': No such file or directory\n"
)


@pytest.mark.parametrize(
    ("output", "expected"),
    [
        (json.dumps({"content": [{"type": "text", "text": "boom"}], "isError": True}), ("boom", True)),
        (json.dumps({"Err": "tool call failed: timeout"}), ("tool call failed: timeout", True)),
        ('[{"type": "image", "data": "AAAA", "mimeType": "image/png"}]', ("", False)),
        (json.dumps([{"type": "text", "text": "a"}, {"type": "image", "data": "x"}]), ("a", False)),
        # JSON that is not a content list or result stays the text it is
        ("[1, 2, 3]", ("[1, 2, 3]", False)),
        ('["lib/a.py"]', ('["lib/a.py"]', False)),
        ('[{"text": 1}]', ('[{"text": 1}]', False)),
        ('[{"text": "unclosed"', ('[{"text": "unclosed"', False)),
        ("err: no such server", ("err: no such server", True)),
        # the plain-text header of shell_command (0.63+) and exec_command (0.98+)
        (SHELL_COMMAND.format(code=127), (SHELL_COMMAND.format(code=127), True)),
        (SHELL_COMMAND.format(code=0), (SHELL_COMMAND.format(code=0), False)),
        (EXEC_COMMAND.format(code=2), (EXEC_COMMAND.format(code=2), True)),
        (EXEC_COMMAND.format(code=0), (EXEC_COMMAND.format(code=0), False)),
        # a command's own output that prints such a line says nothing of its exit
        ("Output:\nExit code: 1\n", ("Output:\nExit code: 1\n", False)),
        (
            SHELL_COMMAND.format(code=0) + "Exit code: 1\n",
            (SHELL_COMMAND.format(code=0) + "Exit code: 1\n", False),
        ),
    ],
)
def test_errors_and_look_alikes(output, expected):
    assert output_of({"output": output}) == expected


@st.composite
def responses(draw: st.DrawFn) -> str:
    paths = draw(
        st.lists(st.from_regex(r"[a-z]{1,6}(/[a-z]{1,6}){0,2}\.(py|js)", fullmatch=True), max_size=4)
    )
    noise = draw(st.lists(st.text(st.characters(codec="utf-8", exclude_characters="\r"), max_size=20)))
    lines = ["## Flow", *noise]
    for p in paths:
        body = draw(st.text(st.characters(codec="utf-8", exclude_characters="\r\n"), max_size=30))
        lines += [f"**`{p}`**", "```", body, "```"]
    return "\n".join(lines)


@settings(max_examples=60, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(text=responses(), parts=st.integers(1, 4), typed=st.booleans(), wrap=st.sampled_from(
    ["list", "mcp", "ok", "decoded"]
))  # fmt: skip
def test_a_responses_returned_files_are_the_same_whichever_way_codex_encoded_it(
    text, parts, typed, wrap, tmp_path_factory
):
    content = blocks(text, typed=typed, parts=parts)
    encoded: Any = {
        "list": json.dumps(content),
        "mcp": json.dumps({"content": content, "isError": False}),
        "ok": json.dumps({"Ok": {"content": content}}),
        "decoded": content,
    }[wrap]
    tmp = tmp_path_factory.mktemp("enc")
    verdicts = []
    for raw in (text, encoded):
        r = Rollout("current", "shell_command")
        r.step(r.explore(), outputs=[{"text": "", "raw": raw}])
        r.finish()
        verdict, _ = judge("codex", [r.write(tmp / f"rollout-{len(verdicts)}.jsonl")])
        verdicts.append([(c.files, c.bucket, c.next) for c in verdict.calls])
    assert verdicts[0] == verdicts[1]
    assert output_of({"output": encoded})[0] == text
