"""Allocation efficiency and residual context occupancy, against the rules of ``docs/metrics.md``.

Two levels: the pure functions (``allocation.sections``, ``citations``,
``allocation``; ``occupancy.Timeline`` + ``occupancy``), and whole
transcripts written to ``tmp_path`` and read through ``judge`` +
``metrics.measure``. Every expected number is worked out by hand in a comment
next to the fixture that produces it; none is read back from the code.
"""

from __future__ import annotations

import copy
import json
import tempfile
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest
from agent_shapes import GeminiSession, Rollout, explore_text
from builders import EXPLORE, Run
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from metric_shapes import SYNTHETIC, Log, Stream, section, text

from pytest_explore_suff import ToolSpec, judge
from pytest_explore_suff.allocation import _BASENAME, allocation, basenames, citations, sections
from pytest_explore_suff.compare import compare_metrics
from pytest_explore_suff.events import assistant_chars, metric_text, usage_ctx
from pytest_explore_suff.gates import Gate, evaluate_baseline_metrics, evaluate_metrics
from pytest_explore_suff.metrics import measure
from pytest_explore_suff.occupancy import FAMILIES, Timeline, occupancy
from pytest_explore_suff.report import allocation_summary, occupancy_summary

SETTINGS = settings(max_examples=50, deadline=None, suppress_health_check=list(HealthCheck))


def body(n: int) -> str:
    """``n`` characters of section body, the last a newline (so a marker can follow)."""
    return "x" * (n - 1) + "\n"


def measured(tmp_path: Path, *turns: Stream, spec: ToolSpec | None = None, **kw: Any) -> dict[str, Any]:
    """Write each run as a turn file, judge them as one stream-json transcript, measure."""
    paths = [run.write(tmp_path / f"turn{i}.jsonl") for i, run in enumerate(turns, 1)]
    verdict, collector = judge("stream-json", paths, spec)
    return measure(verdict, collector, **kw)


def collected(tmp_path: Path, *turns: Stream) -> Any:
    paths = [run.write(tmp_path / f"turn{i}.jsonl") for i, run in enumerate(turns, 1)]
    return judge("stream-json", paths)[1]


# --- allocation: sections and headers -----------------------------------------------

GUIDED = (
    "## Flow\n1. step in lib/a.js:3\n"
    "**`lib/a.js`** handle(function) mutateElement(calls)\n"
    "AAAA\n"
    "> a quote inside a section that is not the last\n"
    "**`lib/b.ts`**\n"
    "BB"
    "\n> Tip: ask a narrower question"
)


def test_a_section_runs_to_the_next_marker_and_the_last_to_the_guidance_quote() -> None:
    secs = sections(GUIDED)
    assert [s.path for s in secs] == ["lib/a.js", "lib/b.ts"]
    # lib/a.js: its marker line "**`lib/a.js`**" (14) + " handle(function)" (17)
    #   + " mutateElement(calls)" (21) + "\n" (1) = 53; "AAAA\n" 5; the quote line
    #   "> a quote inside a section that is not the last\n" 2 + 45 + 1 = 48 (a "\n> "
    #   before the last marker ends nothing) -> 53 + 5 + 48 = 106, to the next marker line.
    # lib/b.ts: "**`lib/b.ts`**\n" 15 + "BB" 2 = 17, up to the first "\n> " after it.
    assert [s.chars for s in secs] == [106, 17]
    assert sum(s.chars for s in secs) == len(GUIDED) - GUIDED.index("**`lib/a.js`**") - len(
        "\n> Tip: ask a narrower question"
    )


def test_the_last_section_runs_to_the_end_without_a_guidance_quote() -> None:
    # "**`x.py`**" 10 + "\n" 1 + "print(1)\n" 9 = 20: the whole text, marker at offset 0.
    assert [(s.path, s.chars) for s in sections("**`x.py`**\nprint(1)\n")] == [("x.py", 20)]


def test_a_marker_that_does_not_start_its_line_is_no_section() -> None:
    assert sections("see **`lib/a.js`** for the handler\nmore") == []
    assert sections("## Flow\nno files at all") == []


def test_a_header_lists_only_the_names_the_file_defines() -> None:
    secs = sections(GUIDED)
    # mutateElement(calls): the file calls it, it does not define it.
    assert secs[0].symbols == (("handle", "function"),)
    assert secs[1].symbols == ()


DEFINING = (
    "module", "class", "struct", "interface", "trait", "protocol", "function", "method", "property",
    "field", "variable", "constant", "enum", "enum_member", "type_alias", "namespace", "route", "component",
)  # fmt: skip


def test_every_defining_kind_counts_and_no_other() -> None:
    defined = " ".join(f"n{i}({kind})" for i, kind in enumerate(DEFINING))
    other = "c1(calls) c2(references) c3(imports) c4(Function) c5(uses)"
    secs = sections(section("lib/a.js", "body", f" {defined} {other}"))
    assert secs[0].symbols == tuple((f"n{i}", kind) for i, kind in enumerate(DEFINING))


def test_header_names_take_dollar_and_dots() -> None:
    secs = sections(section("lib/a.js", "", " $el(property) Router.handle(method) _x9(field)"))
    assert secs[0].symbols == (("$el", "property"), ("Router.handle", "method"), ("_x9", "field"))


def test_the_header_is_the_marker_line_only() -> None:
    # An entry on the line after the marker is body text, not a definition.
    secs = sections("**`lib/a.js`** handle(function)\nhelper(function)\n")
    assert secs[0].symbols == (("handle", "function"),)


def test_a_configured_marker() -> None:
    text_ = "intro\n### lib/a.js\nAAA\n### lib/b.js\nB"
    # "### lib/a.js\n" 13 + "AAA\n" 4 = 17; "### lib/b.js\n" 13 + "B" 1 = 14.
    secs = sections(text_, r"^### (\S+)")
    assert [(s.path, s.chars) for s in secs] == [("lib/a.js", 17), ("lib/b.js", 14)]


# --- allocation: citations ----------------------------------------------------------


def test_citation_channels() -> None:
    answer = (
        "The handler in lib/response.js:126-220 calls utils.js:225 through res.send and "
        "mime.contentType; see `compileETag`, `res.set()`, `this` and, in prose, handleRequest."
    )
    c = citations(answer, frozenset({"js"}))
    # path token lib/response.js; bare basenames response.js and utils.js (js is an envelope
    # extension); res.send and mime.contentType are not files (send, contenttype are not).
    assert set(c.paths) == {"lib/response.js", "response.js", "utils.js"}
    # compileETag in a code span; res and set are 3 characters; this is a stopword;
    # handleRequest is prose.
    assert c.symbols == ("compileETag",)


def test_a_bare_basename_needs_an_envelope_extension() -> None:
    assert citations("utils.js:225", frozenset({"ts"})).paths == ()
    assert citations("utils.js:225", frozenset({"js"})).paths == ("utils.js",)
    assert citations("see UTILS.JS", frozenset({"js"})).paths == ("UTILS.JS",)  # lower-cased extension
    # A path token needs no envelope extension.
    assert citations("lib/utils.js", frozenset()).paths == ("lib/utils.js",)


def test_citation_patterns_are_ascii() -> None:
    c = citations("lib/response.jsの126行目 と utils.jsを見る", frozenset({"js"}))
    assert set(c.paths) == {"lib/response.js", "response.js", "utils.js"}


@settings(max_examples=500, deadline=None)
@given(st.text(alphabet="ab.Z-_@+1 /\n:`é", max_size=40))
def test_the_basename_scan_finds_exactly_what_the_regex_finds(text_: str) -> None:
    assert basenames(text_) == _BASENAME.findall(text_)


def test_symbols_need_four_characters_no_stopword_and_a_one_line_span() -> None:
    c = citations("`send` `res` `Function` `NULL` `Value` `$scope` `a.barBaz()`\n`multi\nline`", frozenset())
    assert c.symbols == ("send", "$scope", "barBaz")


# --- allocation: the figures ----------------------------------------------------------

# Four sections of 100, 200, 300 and 400 characters:
#   lib/a.js: marker line 15 + body 85                                 = 100
#   lib/b.js: marker line 15 + " handle(function)" 17 + body 168       = 200
#   lib/c.js: marker line 15 + " handle(calls)" 14 + body 271          = 300
#   lib/d.js: marker line 15 + body 385                                = 400
FOUR = (
    section("lib/a.js", body(85))
    + section("lib/b.js", body(168), " handle(function)")
    + section("lib/c.js", body(271), " handle(calls)")
    + section("lib/d.js", body(385))
)


def test_four_sections_have_the_sizes_the_fixture_says() -> None:
    assert [s.chars for s in sections(FOUR)] == [100, 200, 300, 400]


def test_allocation_by_path_and_by_symbol() -> None:
    answer = "The fix is in lib/a.js:3; `handle` does the work. It also calls `mutateElement`."
    alloc, why = allocation([("c1", FOUR)], answer)
    assert why == "" and alloc is not None
    # used: a (path, 100) + b (symbol handle, 200) = 300 of 1000; c only calls handle.
    assert (alloc["envelope"], alloc["used"], alloc["used_path"]) == (1000, 300, 100)
    assert alloc["efficiency"] == pytest.approx(0.3)
    assert alloc["efficiency_path"] == pytest.approx(0.1)
    assert (alloc["files_returned"], alloc["files_used"], alloc["has_answer"]) == (4, 2, True)
    assert [(f["path"], f["chars"], f["calls"], f["via"]) for f in alloc["files"]] == [
        ("lib/d.js", 400, 1, None),
        ("lib/c.js", 300, 1, None),
        ("lib/b.js", 200, 1, "symbol"),
        ("lib/a.js", 100, 1, "path"),
    ]
    assert next(f for f in alloc["files"] if f["path"] == "lib/b.js")["symbol"] == "handle"
    [call] = alloc["calls"]
    assert (call["id"], call["envelope"], call["used"], call["used_path"]) == ("c1", 1000, 300, 100)
    assert call["efficiency"] == pytest.approx(0.3)


def test_prose_mention_of_a_symbol_credits_nothing() -> None:
    alloc, _ = allocation([("c1", FOUR)], "handle does the work")
    assert alloc is not None and alloc["used"] == 0


def test_a_file_returned_by_two_calls_is_charged_twice() -> None:
    # call 1: lib/b.js 15 + 135 = 150, then lib/a.js 15 + 85 = 100 -> 250
    # call 2: lib/a.js 15 + 85 = 100, ending at the guidance quote -> 100
    one = section("lib/b.js", body(135)) + section("lib/a.js", body(85))
    two = section("lib/a.js", "y" * 85) + "\n> ask again"
    alloc, _ = allocation([("c1", one), ("c2", two)], "lib/b.js")
    assert alloc is not None
    assert (alloc["envelope"], alloc["used"]) == (350, 150)
    assert alloc["efficiency"] == pytest.approx(150 / 350)
    # Largest first: a (100 + 100 over two calls) before b (150), though b came first.
    assert [(f["path"], f["chars"], f["calls"]) for f in alloc["files"]] == [
        ("lib/a.js", 200, 2),
        ("lib/b.js", 150, 1),
    ]
    assert [(c["envelope"], c["used"]) for c in alloc["calls"]] == [(250, 150), (100, 0)]
    assert alloc["files_returned"] == 2


def test_a_name_defined_by_three_returned_files_credits_none() -> None:
    resp = (
        section("a.js", body(10), " render(function)")
        + section("b.js", body(10), " render(method)")
        + section("c.js", body(10), " render(component)")
        + section("d.js", body(10), " parse(function)")
        + section("e.js", body(10), " parse(function)")
    )
    alloc, _ = allocation([("c1", resp)], "`render` then `parse`")
    assert alloc is not None
    via = {f["path"]: f["via"] for f in alloc["files"]}
    assert via == {"a.js": None, "b.js": None, "c.js": None, "d.js": "symbol", "e.js": "symbol"}


def test_definers_across_calls_count_toward_the_guard() -> None:
    one = section("a.js", body(10), " render(function)") + section("b.js", body(10), " render(function)")
    two = section("c.js", body(10), " render(function)")
    alloc, _ = allocation([("c1", one)], "`render`")
    assert alloc is not None and alloc["files_used"] == 2
    alloc, _ = allocation([("c1", one), ("c2", two)], "`render`")
    assert alloc is not None and alloc["files_used"] == 0


def test_a_strong_definer_beats_weak_ones() -> None:
    resp = (
        section("lib/response.js", body(10), " compileETag(variable)")
        + section("lib/utils.js", body(10), " compileETag(function)")
        + section("lib/x.js", body(10), " etagCache(constant)")
        + section("lib/y.js", body(10), " etagCache(variable)")
        + section("lib/p.js", body(10), " mime(variable)")
        + section("lib/q.js", body(10), " mime(variable)")
        + section("lib/r.js", body(10), " mime(constant)")
        + section("lib/s.js", body(10), " mime(module)")
    )
    alloc, _ = allocation([("c1", resp)], "`compileETag`, `etagCache` and `mime`")
    assert alloc is not None
    used = {f["path"] for f in alloc["files"] if f["via"]}
    # compileETag: the function owns it; etagCache: only weak definers (2 < 3), both own it;
    # mime: three weak definers, but one strong one, which alone owns it.
    assert used == {"lib/utils.js", "lib/x.js", "lib/y.js", "lib/s.js"}


def test_path_beats_symbol_as_via() -> None:
    resp = section("lib/a.js", body(85), " handle(function)")  # 15 + 17 + 85 = 117
    alloc, _ = allocation([("c1", resp)], "`handle`, in lib/a.js")
    assert alloc is not None
    [f] = alloc["files"]
    assert (f["via"], f["symbol"], f["chars"]) == ("path", None, 117)
    assert alloc["used_path"] == alloc["used"] == alloc["envelope"] == 117
    assert alloc["efficiency_path"] == 1.0


def test_path_equality() -> None:
    resp = (
        section("lib/response.js", body(10))
        + section("./lib/x.js", body(10))
        + section("/repo/lib/y.js", body(10))
        + section("lib/z.js", body(10))
    )
    answer = "/private/tmp/t-base/lib/response.js:10, lib/x.js and lib/y.js; also lib\\z.js"
    alloc, _ = allocation([("c1", resp)], answer)
    assert alloc is not None
    via = {f["path"]: f["via"] for f in alloc["files"]}
    # lib\z.js is no path token (a backslash is no path character), but z.js is a basename.
    assert via == {
        "lib/response.js": "path",
        "./lib/x.js": "path",
        "/repo/lib/y.js": "path",
        "lib/z.js": "path",
    }


def test_a_bare_basename_credits_the_file() -> None:
    resp = section("lib/utils.js", body(50)) + section("lib/response.js", body(50))
    alloc, _ = allocation([("c1", resp)], "utils.js:225 and res.send")
    assert alloc is not None
    assert {f["path"]: f["via"] for f in alloc["files"]} == {"lib/utils.js": "path", "lib/response.js": None}


@pytest.mark.parametrize("answer", [None, "", "  \n"])
def test_no_answer_means_everything_uncited(answer: str | None) -> None:
    alloc, why = allocation([("c1", FOUR)], answer)
    assert why == "" and alloc is not None
    assert (alloc["envelope"], alloc["used"], alloc["used_path"]) == (1000, 0, 0)
    assert alloc["efficiency"] == 0.0 and alloc["efficiency_path"] == 0.0
    assert alloc["has_answer"] is False


def test_no_explore_response_and_no_section_are_null_with_a_reason() -> None:
    none, why_none = allocation([], "lib/a.js")
    bare, why_bare = allocation([("c1", "## Flow\nno returned file")], "lib/a.js")
    assert none is None and why_none
    assert bare is None and why_bare
    assert why_none != why_bare


def test_a_response_without_sections_stays_out_of_the_envelope() -> None:
    alloc, _ = allocation([("c1", "nothing returned"), ("c2", FOUR)], "lib/d.js")
    assert alloc is not None
    assert [c["id"] for c in alloc["calls"]] == ["c2"]
    assert (alloc["envelope"], alloc["used"]) == (1000, 400)


# --- allocation through judge + measure --------------------------------------------------


def test_answers_of_every_result_event_are_joined(tmp_path: Path) -> None:
    one = Stream()
    x = one.explore()
    one.ask(x, ctx=1000)
    one.answer((x, FOUR))
    one.ask(text("first"), ctx=1600)
    one.end("see lib/a.js")
    two = Stream()
    two.ask(text("second"), ctx=1700)
    two.end("and `handle`")
    paths = [one.write(tmp_path / "turn1.jsonl"), two.write(tmp_path / "turn2.jsonl")]
    verdict, collector = judge("stream-json", paths)
    assert collector.answer() == "see lib/a.js\n\nand `handle`"
    alloc = measure(verdict, collector)["allocation"]
    # a by path (100) from the first answer, b by symbol (200) from the second.
    assert (alloc["used"], alloc["used_path"], alloc["envelope"]) == (300, 100, 1000)


def test_the_answer_without_a_result_string_is_the_last_main_thread_text(tmp_path: Path) -> None:
    run = Stream()
    x = run.explore()
    run.ask(x, ctx=1000)
    run.answer((x, FOUR))
    r = run.use("Read", file_path="lib/b.js")
    run.ask(text("let me look at lib/b.js"), r, ctx=1500)  # narration: not the answer
    run.answer((r, "..."))
    task = run.use("Task", prompt="check lib/d.js")
    run.ask(task, ctx=1600)
    run.ask(text("lib/d.js is not it"), ctx=400, parent=task["id"])
    run.answer((task, "lib/d.js is not it"))
    run.ask(text("The answer is in lib/a.js."), ctx=1700)
    todo = run.use("TodoWrite", todos=[])
    run.ask(todo, ctx=1750)  # a later main-thread event with no text changes nothing
    run.answer((todo, "ok"))
    run.ask(text("late subagent text: lib/c.js"), ctx=500, parent=task["id"])  # not the main thread
    run.end(result=None, subtype="error_max_turns")
    m = measured(tmp_path, run)
    alloc = m["allocation"]
    assert alloc["has_answer"] is True
    assert {f["path"] for f in alloc["files"] if f["via"]} == {"lib/a.js"}
    assert (alloc["used"], alloc["envelope"]) == (100, 1000)
    # A headless run without result text still has its occupancy.
    assert m["occupancy"] is not None and m["occupancy"]["turns"] == 5


def test_an_assistant_message_written_as_a_string_can_be_the_answer(tmp_path: Path) -> None:
    run = Stream()
    x = run.explore()
    run.ask(x, ctx=1000)
    run.answer((x, FOUR))
    run.ask(text("placeholder"), ctx=1500)
    run.events[-1]["message"]["content"] = "The answer is in lib/a.js."  # a string, not blocks
    run.end(result=None, subtype="error_max_turns")
    alloc = measured(tmp_path, run)["allocation"]
    assert alloc["has_answer"] is True
    assert {f["path"] for f in alloc["files"] if f["via"]} == {"lib/a.js"}


def test_no_answer_at_all(tmp_path: Path) -> None:
    run = Stream()
    x = run.explore()
    run.ask(x, ctx=1000)
    run.answer((x, FOUR))
    run.end(result=None, subtype="error_max_turns")
    alloc = measured(tmp_path, run)["allocation"]
    assert alloc["has_answer"] is False
    assert (alloc["envelope"], alloc["used"], alloc["efficiency"]) == (1000, 0, 0.0)


def test_no_explore_call_and_explore_without_a_section(tmp_path: Path) -> None:
    run = Stream()
    g = run.use("Grep", pattern="send")
    run.ask(g, ctx=1000)
    run.answer((g, "lib/a.js:3: send"))
    run.end("lib/a.js")
    m = measured(tmp_path / "none", run)
    assert m["allocation"] is None and m["allocation_reason"]

    run = Stream()
    x = run.explore()
    run.ask(x, ctx=1000)
    run.answer((x, "## Flow\n1. step in lib/a.js:3\nno source sections"))
    run.end("lib/a.js")
    m = measured(tmp_path / "bare", run)
    assert m["allocation"] is None and m["allocation_reason"]


def test_an_errored_explore_call_is_no_response(tmp_path: Path) -> None:
    run = Stream()
    x = run.explore()
    run.ask(x, ctx=1000)
    run.events.append(
        {
            "type": "user",
            "message": {
                "role": "user",
                "content": [
                    {"type": "tool_result", "tool_use_id": x["id"], "content": FOUR, "is_error": True}
                ],
            },
            "parent_tool_use_id": None,
            "session_id": run.session,
            "uuid": "uuid-errored",
        }
    )
    run.end("lib/a.js")
    m = measured(tmp_path, run)
    assert m["allocation"] is None and m["allocation_reason"]


IMAGE = {"type": "image", "source": {"type": "base64", "media_type": "image/png", "data": "iVBOR" * 20000}}
MULTI = [
    text("**`lib/a.js`**\nAAAA\n"),
    text("**`lib/b.js`**\nBB"),
    IMAGE,
    {"type": "custom", "n": 1},
]


def test_a_multi_block_result_is_its_blocks_with_nothing_between(tmp_path: Path) -> None:
    run = Stream()
    x = run.explore()
    run.ask(x, ctx=1000)
    run.answer((x, MULTI))
    run.end("lib/b.js")
    alloc = measured(tmp_path, run)["allocation"]
    # "**`lib/a.js`**\nAAAA\n**`lib/b.js`**\nBB" + "" (image) + '{"type":"custom","n":1}':
    #   a: 15 + 5 = 20; b: 15 + 2 + 23 = 40 (the block without text as its compact JSON).
    assert [(f["path"], f["chars"]) for f in alloc["files"]] == [("lib/b.js", 40), ("lib/a.js", 20)]
    assert (alloc["envelope"], alloc["used"]) == (60, 40)


def test_blocks_glued_without_a_newline_make_one_section(tmp_path: Path) -> None:
    run = Stream()
    x = run.explore()
    run.ask(x, ctx=1000)
    run.answer((x, [text("**`lib/a.js`**\nAAAA"), text("**`lib/b.js`**\nBB")]))
    run.end("lib/b.js")
    alloc = measured(tmp_path, run)["allocation"]
    # "**`lib/a.js`**\nAAAA**`lib/b.js`**\nBB": the second marker does not start a line;
    # one section of 15 + 4 + 14 + 1 + 2 = 36.
    assert [(f["path"], f["chars"]) for f in alloc["files"]] == [("lib/a.js", 36)]


def test_a_multi_block_result_written_before_its_call(tmp_path: Path) -> None:
    """File order is not causal order: the re-read keeps the metric text too."""
    run = Stream()
    x = run.explore()
    run.answer((x, MULTI))
    run.ask(x, ctx=1000)
    run.end("lib/b.js")
    alloc = measured(tmp_path, run)["allocation"]
    assert alloc is not None
    assert [(f["path"], f["chars"]) for f in alloc["files"]] == [("lib/b.js", 40), ("lib/a.js", 20)]


def test_lengths_are_in_characters(tmp_path: Path) -> None:
    run = Stream()
    x = run.explore()
    run.ask(x, ctx=1000)
    run.answer((x, "**`lib/é.js`**\n日本語😀\n**`lib/b.js`**\nü"))
    run.end("`日本語` is in lib/b.js")
    alloc = measured(tmp_path, run)["allocation"]
    # a: "**`lib/é.js`**\n" 15 characters + "日本語😀\n" 5 = 20 (35 bytes in UTF-8);
    # b: 15 + 1 = 16. No ASCII identifier in the span; lib/b.js is cited.
    assert [(f["path"], f["chars"]) for f in alloc["files"]] == [("lib/é.js", 20), ("lib/b.js", 16)]
    assert (alloc["envelope"], alloc["used"]) == (36, 16)


def test_explore_responses_of_every_thread_in_stream_order(tmp_path: Path) -> None:
    run = Stream()
    task = run.use("Task", prompt="find it")
    run.ask(task, ctx=1000)
    inner = run.explore("inner")
    run.ask(inner, ctx=300, parent=task["id"])
    run.answer((inner, section("lib/a.js", body(85))), parent=task["id"])  # 100
    run.answer((task, "it is lib/a.js"))
    outer = run.explore("outer")
    run.ask(outer, ctx=1500)
    run.answer((outer, section("lib/b.js", body(185))))  # 200
    run.ask(text("lib/a.js"), ctx=1800)
    run.end("lib/a.js")
    alloc = measured(tmp_path, run)["allocation"]
    assert [c["id"] for c in alloc["calls"]] == [inner["id"], outer["id"]]
    assert (alloc["envelope"], alloc["used"]) == (300, 100)


def test_a_configured_marker_through_judge(tmp_path: Path) -> None:
    spec = ToolSpec(marker=r"^### (\S+)")
    run = Stream()
    x = run.explore()
    run.ask(x, ctx=1000)
    run.answer((x, "### lib/a.js\nAAA\n### lib/b.js\nB"))
    run.end("lib/b.js")
    alloc = measured(tmp_path, run, spec=spec)["allocation"]
    assert (alloc["envelope"], alloc["used"]) == (31, 14)  # 17 + 14; b is cited


# --- occupancy: the pure timeline ------------------------------------------------------


def families(**by_id: str) -> Callable[[str], str]:
    return lambda tid: by_id.get(tid, "other")


def timeline(*ops: tuple[Any, ...]) -> Timeline:
    """("req", ctx) / ("res", id, chars) / ("add", chars) / ("compact",), in order."""
    t = Timeline()
    for op in ops:
        if op[0] == "req":
            t.request(op[1])
        elif op[0] == "res":
            t.result(op[1], op[2])
        elif op[0] == "add":
            t.add(op[1])
        else:
            t.compact()
    return t


def occ(t: Timeline, fam: Callable[[str], str] | None = None, window: int = 200_000) -> dict[str, Any]:
    out, why = occupancy(t, fam or families(), window)
    assert out is not None, why
    return out


def test_calibration_drops_gaps_far_above_the_lower_median() -> None:
    t = timeline(
        ("req", 1000),
        ("res", "t1", 1000), ("req", 1500),  # delta 500, ratio 2.0
        ("res", "t2", 1100), ("req", 2000),  # delta 500, ratio 2.2
        ("res", "t3", 2000), ("req", 2250),  # delta 250, ratio 8.0
    )  # fmt: skip
    o = occ(t, families(t1="tool", t2="tool", t3="tool"))
    # Lower median of [2.0, 2.2, 8.0] is 2.2; 8.0 > 1.5 * 2.2 = 3.3 is dropped;
    # pooled: (1000 + 1100) / (500 + 500) = 2.1.
    assert o["chars_per_token"] == pytest.approx(2.1)
    assert o["calibrated"] is True
    # Dispersion: |1000/2.1 - 500|/500 = |1100/2.1 - 500|/500 = 1/21, and
    # |2000/2.1 - 250|/250 = 2.81: lower median 1/21.
    assert o["dispersion"] == pytest.approx(1 / 21)
    # Residency: tokens 476.19, 523.81, 952.38. Gap 3 falls short by 952.38 - 250 =
    # 702.38 > max(200, 47.6): evict it oldest first (t1 whole, 226.19 of t2).
    # Residual 4100/2.1 - 702.38 = 1250; contributed 4100/2.1 = 1952.38.
    assert o["residual"]["tool"] == 1250
    assert o["contributed"]["tool"] == 1952
    assert o["evicted"] == 702
    assert (o["ctx_base"], o["ctx_final"], o["turns"]) == (1000, 2250, 4)
    assert o["residual_retrieval"] == 1250
    assert o["share"] == pytest.approx(1250 / 2250)


def test_calibration_takes_the_lower_median() -> None:
    t = timeline(
        ("req", 1000),
        ("res", "t", 1000), ("req", 1500),  # 2.0
        ("res", "t", 1000), ("req", 2000),  # 2.0
        ("res", "t", 3100), ("req", 3000),  # 3.1
        ("res", "t", 3200), ("req", 4000),  # 3.2
    )  # fmt: skip
    # Lower median of [2.0, 2.0, 3.1, 3.2] is index (4-1)//2 = 1: 2.0; 3.1 and 3.2 exceed
    # 3.0 and are dropped: 2000 / 1000 = 2.0. (The upper median 3.1 would keep all: 8300/3000.)
    assert occ(t, families(t="tool"))["chars_per_token"] == pytest.approx(2.0)


def test_which_gaps_are_clean() -> None:
    t = timeline(
        ("req", 1000),
        ("res", "t", 800), ("add", 200), ("req", 1400),  # A: 1000 chars, share 0.8: clean, 2.0
        ("res", "t", 500), ("req", 1600),  # B: 500 chars, not more than 500: 2.5
        ("res", "t", 700), ("add", 300), ("req", 1900),  # C: share 0.7: 2.33
        ("compact",), ("res", "t", 1000), ("req", 2300),  # D: compacted: 2.5
        ("res", "t", 1000), ("req", 2300),  # E: delta 0
    )  # fmt: skip
    # Only A is clean: 800 / 400 = 2.0. (With B: 1300/600; with C: 1500/700.)
    o = occ(t, families(t="tool"))
    assert o["chars_per_token"] == pytest.approx(2.0)
    assert o["calibrated"] is True
    # Dispersion needs 95% tool output: A (80%) is not in it, so none qualifies but B? B has
    # 500 chars (not more than 500); C 70%; D compacted; E delta 0: none.
    assert o["dispersion"] is None


def test_without_a_clean_gap_every_growing_gap_is_pooled_over_all_its_chars() -> None:
    t = timeline(
        ("req", 1000),
        ("add", 300), ("req", 1100),  # delta 100, 300 chars
        ("add", 300), ("res", "t", 100), ("req", 1300),  # delta 200, 400 chars
        ("add", 100), ("req", 1250),  # delta -50: out
        ("compact",), ("add", 1000), ("req", 1350),  # compacted: out
        ("req", 1450),  # no chars: out
    )  # fmt: skip
    o = occ(t, families(t="tool"))
    # (300 + 400) / (100 + 200)
    assert o["chars_per_token"] == pytest.approx(700 / 300)
    assert o["calibrated"] is True
    assert o["dispersion"] is None


@pytest.mark.parametrize(
    "ops",
    [
        [("req", 1000)],
        [("req", 1000), ("add", 100), ("req", 900), ("req", 900)],
        [("req", 1000), ("compact",), ("res", "t", 4000), ("req", 3000)],
    ],
)
def test_with_no_usable_gap_three_characters_per_token(ops: list[tuple[Any, ...]]) -> None:
    o = occ(timeline(*ops), families(t="tool"))
    assert o["chars_per_token"] == 3.0
    assert o["calibrated"] is False
    assert o["dispersion"] is None


def test_oldest_results_are_evicted_first() -> None:
    t = timeline(
        ("req", 1000),
        ("res", "r", 2000), ("req", 2000),  # read 1000 tokens, delta 1000 (ratio 2.0)
        ("res", "t", 2000), ("req", 3000),  # tool 1000, delta 1000 (2.0)
        ("res", "b", 2000), ("req", 3300),  # bash 1000, delta 300 (6.7: not calibration)
        ("res", "s", 2000), ("req", 3500),  # search 1000, delta 200 (10: not calibration)
    )  # fmt: skip
    o = occ(t, families(r="read", t="tool", b="bash", s="search"))
    assert o["chars_per_token"] == pytest.approx(2.0)  # 4000 / 2000
    # Gap 3: 1000 - 300 = 700 short (> 200): 700 of read's 1000 go. Gap 4: 800 short:
    # read's last 300, then 500 of tool's 1000.
    assert o["residual"] == {"tool": 500, "read": 0, "search": 1000, "bash": 1000, "other": 0}
    assert o["contributed"] == {"tool": 1000, "read": 1000, "search": 1000, "bash": 1000, "other": 0}
    assert o["evicted"] == 1500
    assert o["residual_file_access"] == 2000
    assert o["residual_retrieval"] == 2500
    assert o["share"] == pytest.approx(2500 / 3500)
    # Dispersion: errors 0, 0, 700/300, 800/200: lower median 0.
    assert o["dispersion"] == 0.0


@pytest.mark.parametrize(
    ("tool_chars", "delta", "evicted"),
    [
        (2000, 800, 0),  # 1000 tokens, 200 short: not more than max(200, 50)
        (2000, 799, 201),  # 201 short
        (20000, 9500, 0),  # 10000 tokens, 500 short: not more than max(200, 500)
        (20000, 9499, 501),  # 501 short
    ],
)
def test_the_eviction_threshold(tool_chars: int, delta: int, evicted: int) -> None:
    t = timeline(
        ("req", 1000),
        ("res", "t0", 1000), ("req", 1500),  # the only clean gap: 2.0
        # 30% more chars that are no tool output: share 0.77, not clean
        ("res", "t1", tool_chars), ("add", tool_chars * 3 // 10), ("req", 1500 + delta),
    )  # fmt: skip
    o = occ(t, families(t0="tool", t1="tool"))
    assert o["chars_per_token"] == pytest.approx(2.0)
    assert o["evicted"] == evicted
    assert o["residual"]["tool"] == 500 + tool_chars // 2 - evicted


def test_a_compaction_evicts_everything_resident() -> None:
    t = timeline(
        ("req", 1000),
        ("res", "r", 2000), ("req", 2000),  # read 1000 tokens (2.0)
        ("res", "t", 2000), ("req", 3000),  # tool 1000 (2.0)
        ("compact",), ("res", "b", 400), ("req", 1500),  # compacted: all out, then bash 200
    )  # fmt: skip
    o = occ(t, families(r="read", t="tool", b="bash"))
    assert o["chars_per_token"] == pytest.approx(2.0)
    assert o["residual"] == {"tool": 0, "read": 0, "search": 0, "bash": 200, "other": 0}
    assert o["contributed"] == {"tool": 1000, "read": 1000, "search": 0, "bash": 200, "other": 0}
    assert o["evicted"] == 2000
    assert o["compactions"] == 1
    assert o["residual_retrieval"] == 200


def test_rounding_is_half_up() -> None:
    t = timeline(
        ("req", 1000),
        ("res", "t", 1000), ("req", 1500),  # 2.0
        ("res", "r", 5), ("res", "s", 1), ("req", 1510),  # read 2.5 tokens, search 0.5
    )  # fmt: skip
    o = occ(t, families(t="tool", r="read", s="search"))
    # Half up: 2.5 -> 3 and 0.5 -> 1 (Python's round would give 2 and 0).
    assert o["residual"]["read"] == 3
    assert o["residual"]["search"] == 1
    assert o["residual_file_access"] == 3
    assert o["residual_retrieval"] == 503


def test_tool_output_after_the_last_request_is_in_no_residual() -> None:
    t = timeline(("req", 1000), ("res", "t", 1000), ("req", 1500), ("res", "r", 4000))
    o = occ(t, families(t="tool", r="read"))
    assert o["residual"]["read"] == 0 and o["contributed"]["read"] == 0
    assert o["residual"]["tool"] == 500
    assert o["residual_retrieval"] == 500


def test_no_request_is_no_occupancy() -> None:
    t = timeline(("res", "t", 1000), ("add", 20))
    out, why = occupancy(t, families())
    assert out is None and why


def test_usage_ctx_sums_the_three_input_fields() -> None:
    assert usage_ctx({"input_tokens": 1, "cache_read_input_tokens": 20, "cache_creation_input_tokens": 300,
                      "output_tokens": 4000}) == 321  # fmt: skip
    assert usage_ctx({"cache_read_input_tokens": 7}) == 7
    assert usage_ctx({}) == 0
    # What a decoder gives that is not a count counts nothing: a bool (an int subclass), a float.
    assert usage_ctx({"input_tokens": True, "cache_read_input_tokens": 2.0,
                      "cache_creation_input_tokens": "3"}) == 0  # fmt: skip


# --- occupancy through judge + measure ---------------------------------------------------


def basic(extra: Callable[[Stream], None] | None = None) -> Stream:
    """explore (2000 chars), Read (1000 chars), an answer.

    request 1: usage 100 + 800 + 100 (output 50 excluded) = 1000; adds the explore
        tool_use, 46 characters. Its result: 2000.
    request 2: 2 + 1500 + 498 = 2000; gap 1: delta 1000, 2046 chars, 2000 tool output
        (97.8%): clean, ratio 2.0. Adds the Read tool_use, 6. Its result: 1000.
    request 3: input 2500 alone (the missing fields are 0); gap 2: delta 500, 1006
        chars, 1000 tool output: clean, 2.0.
    Characters per token 3000 / 1500 = 2.0; residual tool 1000, read 500.
    """
    run = Stream()
    x = run.explore()
    run.ask(x, use={"input_tokens": 100, "cache_read_input_tokens": 800, "cache_creation_input_tokens": 100,
                    "output_tokens": 50})  # fmt: skip
    run.answer((x, section("lib/a.js", "x" * 1985)))  # 15 + 1985 = 2000
    r = run.use("Read")
    run.ask(r, use={"input_tokens": 2, "cache_read_input_tokens": 1500, "cache_creation_input_tokens": 498})
    run.answer((r, "R" * 1000))
    if extra is not None:
        extra(run)
    run.ask(text("done: lib/a.js"), use={"input_tokens": 2500})
    run.end("lib/a.js")
    return run


BASIC = {
    "ctx_final": 2500,
    "ctx_base": 1000,
    "chars_per_token": 2.0,
    "calibrated": True,
    "dispersion": 0.0,
    "turns": 3,
    "compactions": 0,
    "evicted": 0,
    "window": 200_000,
    "residual": {"tool": 1000, "read": 500, "search": 0, "bash": 0, "other": 0},
    "contributed": {"tool": 1000, "read": 500, "search": 0, "bash": 0, "other": 0},
    "chars": {"tool": 2000, "read": 1000, "search": 0, "bash": 0, "other": 0},
    "results": {"tool": 1, "read": 1, "search": 0, "bash": 0, "other": 0},
    "residual_file_access": 500,
    "residual_retrieval": 1500,
    "share": 0.6,
}


def test_occupancy_of_a_small_run(tmp_path: Path) -> None:
    m = measured(tmp_path, basic())
    assert m["occupancy"] == BASIC
    assert m["occupancy_reason"] == ""
    # The allocation of the same pass: one section, cited.
    assert (m["allocation"]["envelope"], m["allocation"]["used"]) == (2000, 2000)


def test_the_window_is_configurable(tmp_path: Path) -> None:
    assert measured(tmp_path, basic(), window=100_000)["occupancy"]["window"] == 100_000


def test_a_request_is_the_first_line_of_a_message_id(tmp_path: Path) -> None:
    # Request 2 as two lines (a text block, then the Read), one id, one usage: one request.
    run = Stream()
    x = run.explore()
    run.ask(x, use={"input_tokens": 1000})
    run.answer((x, section("lib/a.js", "x" * 1985)))
    r = run.use("Read")
    run.ask(text("Let me read."), r, use={"input_tokens": 2000})  # 12 + 6 characters
    run.answer((r, "R" * 1000))
    run.ask(text("done: lib/a.js"), use={"input_tokens": 2500})
    run.end("lib/a.js")
    assert [e["message"]["id"] for e in run.events[3:5]] == [run.events[3]["message"]["id"]] * 2
    o = measured(tmp_path, run)["occupancy"]
    # Gap 2: 1018 chars, 1000 tool output: still clean, ratio 2.0.
    assert o == BASIC


def test_a_replayed_line_counts_once(tmp_path: Path) -> None:
    def replay(run: Stream) -> None:
        run.replay(len(run.events) - 2)  # the Read request's line
        run.replay(len(run.events) - 2)  # the Read result's line

    run = basic(replay)
    assert len(run.events) == len(basic().events) + 2
    assert measured(tmp_path, run)["occupancy"] == BASIC


def test_an_image_counts_no_characters(tmp_path: Path) -> None:
    image = IMAGE
    run = Stream()
    x = run.explore()
    run.ask(x, use={"input_tokens": 1000})
    run.answer((x, section("lib/a.js", "x" * 1985)))
    r = run.use("Read")
    run.ask(r, use={"input_tokens": 2000})
    run.answer((r, [text("R" * 600), image, text("R" * 400)]))  # 1000 characters
    run.ask(text("done: lib/a.js"), use={"input_tokens": 2500})
    run.end("lib/a.js")
    assert measured(tmp_path, run)["occupancy"] == BASIC


def test_an_image_the_user_sends_counts_no_characters(tmp_path: Path) -> None:
    image = IMAGE
    run = Stream()
    run.ask(text("a" * 300), ctx=1000)
    run.user([text("b" * 300), image])
    run.ask(text("c"), ctx=1240)
    run.end("c")
    # No tool output: no clean gap; the one growing gap: 600 chars over 240 tokens.
    assert measured(tmp_path, run)["occupancy"]["chars_per_token"] == pytest.approx(2.5)


def test_a_synthetic_message_is_no_request_but_adds_its_text(tmp_path: Path) -> None:
    zero = {
        "input_tokens": 0,
        "output_tokens": 0,
        "cache_read_input_tokens": 0,
        "cache_creation_input_tokens": 0,
    }
    run = Stream()
    run.ask(text("a" * 300), ctx=1000)
    run.ask(text("b" * 300), use=zero, model=SYNTHETIC)
    run.ask(text("c"), ctx=1240)
    run.end("c")
    o = measured(tmp_path, run)["occupancy"]
    # One gap, 1000 -> 1240, holding both texts: 600 / 240 = 2.5. (Without the
    # synthetic text 300/240; as a request, a gap down to 0 and one up from it.)
    assert o["turns"] == 2
    assert (o["ctx_base"], o["ctx_final"]) == (1000, 1240)
    assert o["chars_per_token"] == pytest.approx(2.5)


def test_a_subagent_is_out_of_the_main_window(tmp_path: Path) -> None:
    run = Stream()
    task = run.use("Task", prompt="p")  # 4 + len('{"prompt":"p"}') 14 = 18 characters
    run.ask(task, ctx=1000)
    r = run.use("Read")
    run.ask(r, ctx=300, parent=task["id"])
    run.answer((r, "S" * 5000), parent=task["id"])
    run.ask(text("summary"), ctx=2900, parent=task["id"])
    run.answer((task, "T" * 1000))  # the summary that returns to the parent
    run.ask(text("done"), ctx=1500)
    run.end("done")
    o = measured(tmp_path, run)["occupancy"]
    # The main thread: 1000 -> 1500, 1018 chars of which 1000 the Task's result: 2.0.
    assert (o["turns"], o["ctx_base"], o["ctx_final"]) == (2, 1000, 1500)
    assert o["chars_per_token"] == pytest.approx(2.0)
    assert o["evicted"] == 0
    assert o["residual"] == {"tool": 0, "read": 0, "search": 0, "bash": 0, "other": 500}
    assert o["chars"] == {"tool": 0, "read": 0, "search": 0, "bash": 0, "other": 1000}
    assert o["results"] == {"tool": 0, "read": 0, "search": 0, "bash": 0, "other": 1}
    assert (o["residual_retrieval"], o["share"]) == (0, 0.0)


def test_families_of_the_agent_tools(tmp_path: Path) -> None:
    run = Stream()
    x = run.explore()
    run.ask(x, ctx=1000)
    run.answer((x, section("lib/a.js", "x" * 1985)))  # gap 1: 2046 chars, delta 1000: 2.0
    blocks = [run.use(n) for n in ("Grep", "Glob", "Bash", "BashOutput", "NotebookRead", "Edit")]
    run.ask(*blocks, ctx=2000)  # 6 + 6 + 6 + 12 + 14 + 6 = 50 characters, one request
    run.answer(*((b, "z" * 200) for b in blocks))
    run.ask(text("done"), ctx=2600)  # gap 2: 1250 chars, 1200 tool output, delta 600: 2.0
    run.end("lib/a.js")
    o = measured(tmp_path, run)["occupancy"]
    assert o["chars_per_token"] == pytest.approx(2.0)
    assert o["residual"] == {"tool": 1000, "read": 100, "search": 200, "bash": 200, "other": 100}
    assert o["results"] == {"tool": 1, "read": 1, "search": 2, "bash": 2, "other": 1}
    assert o["residual_file_access"] == 500
    assert o["residual_retrieval"] == 1500
    assert o["share"] == pytest.approx(1500 / 2600)


def docs_run() -> Stream:
    """A docs tool (2000 chars) and codegraph's explore (1000 chars).

    request 1: 1000, adds mcp__mydocs__docs_search (24) + '{"query":"q"}' (13) = 37;
    result 2000: gap 1, delta 1000, ratio 2.0. request 2: 2000, adds the codegraph
    explore (46); result 1000: gap 2, delta 500, 2.0. request 3: 2500.
    """
    run = Stream()
    d = run.use("mcp__mydocs__docs_search", query="q")
    run.ask(d, ctx=1000)
    run.answer((d, "D" * 2000))
    c = run.explore()
    run.ask(c, ctx=2000)
    run.answer((c, "C" * 1000))
    run.ask(text("done"), ctx=2500)
    run.end("done")
    return run


def test_families_follow_the_configured_tool_family(tmp_path: Path) -> None:
    spec = ToolSpec(explore="docs_search", family="mydocs")
    o = measured(tmp_path / "docs", docs_run(), spec=spec)["occupancy"]
    assert o["residual"] == {"tool": 1000, "read": 0, "search": 0, "bash": 0, "other": 500}
    assert o["chars"]["tool"] == 2000 and o["chars"]["other"] == 1000
    o = measured(tmp_path / "default", docs_run())["occupancy"]
    assert o["residual"] == {"tool": 500, "read": 0, "search": 0, "bash": 0, "other": 1000}


@pytest.mark.parametrize("subtype", ["compact_boundary", "compaction"])
def test_a_compaction_boundary_in_the_log(tmp_path: Path, subtype: str) -> None:
    run = Stream()
    x = run.explore()
    run.ask(x, ctx=1000)
    run.answer((x, section("lib/a.js", "x" * 1985)))
    r = run.use("Read")
    run.ask(r, ctx=2000)
    run.answer((r, "R" * 1000))
    run.compact(subtype)
    run.ask(text("done"), ctx=600)
    run.end("lib/a.js")
    o = measured(tmp_path, run)["occupancy"]
    # Gap 1 calibrates (2.0); gap 2 is compacted: the explore's 1000 tokens go, then the
    # Read's 500 enter.
    assert o["chars_per_token"] == pytest.approx(2.0)
    assert o["compactions"] == 1
    assert o["evicted"] == 1000
    assert o["residual"]["tool"] == 0 and o["residual"]["read"] == 500
    assert o["share"] == pytest.approx(500 / 600)


def test_tool_output_after_the_last_request_through_judge(tmp_path: Path) -> None:
    run = Stream()
    x = run.explore()
    run.ask(x, use={"input_tokens": 1000})
    run.answer((x, section("lib/a.js", "x" * 1985)))
    r = run.use("Read")
    run.ask(r, use={"input_tokens": 2000})
    run.answer((r, "R" * 1000))
    late = run.use("Read")
    run.ask(text("done: lib/a.js"), late, use={"input_tokens": 2500})  # the last request
    run.answer((late, "L" * 4000))  # reached no prompt
    run.end("lib/a.js")
    o = measured(tmp_path, run)["occupancy"]
    assert o["turns"] == 3
    assert o["residual"] == BASIC["residual"]
    assert o["contributed"] == BASIC["contributed"]
    assert o["residual_retrieval"] == 1500


def test_a_log_without_usage_has_no_occupancy(tmp_path: Path) -> None:
    run = Stream()
    x = run.explore()
    run.ask(x)
    run.answer((x, FOUR))
    run.ask(text("lib/a.js"))
    run.end("lib/a.js")
    m = measured(tmp_path, run)
    assert m["occupancy"] is None and m["occupancy_reason"]
    assert m["allocation"] is not None and m["allocation"]["used"] == 100


# --- properties ------------------------------------------------------------------------

FAMILY_IDS = {f"id-{f}": f for f in FAMILIES}

ops = st.lists(
    st.one_of(
        st.tuples(st.just("req"), st.integers(0, 60_000)),
        st.tuples(st.just("res"), st.sampled_from(sorted(FAMILY_IDS)), st.integers(0, 30_000)),
        st.tuples(st.just("add"), st.integers(0, 3_000)),
        st.tuples(st.just("compact")),
    ),
    max_size=40,
)


@SETTINGS
@given(ops)
def test_residual_never_exceeds_contributed(sequence: list[tuple[Any, ...]]) -> None:
    t = timeline(("req", 1000), *sequence)
    o = occ(t, families(**FAMILY_IDS))
    assert o["chars_per_token"] > 0
    assert o["evicted"] >= 0
    for f in FAMILIES:
        assert 0 <= o["residual"][f] <= o["contributed"][f]
    # a request of 0 tokens reported no context: none (#41)
    assert o["turns"] == 1 + sum(1 for op in sequence if op[0] == "req" and op[1] > 0)


PATHS = ["lib/a.js", "lib/b.js", "src/c.ts", "./lib/d.js", "/abs/lib/e.py"]
ENTRIES = ["handle(function)", "handle(variable)", "render(calls)", "parse(method)", "etag(constant)"]
WORDS = ["lib/a.js", "b.js", "c.ts:3", "`handle`", "`render`", "`parse`", "`etag`", "and", "\n", "res.send"]


@st.composite
def responses(draw: st.DrawFn) -> list[tuple[str, str]]:
    out = []
    for i in range(draw(st.integers(0, 3))):
        parts = [draw(st.sampled_from(["", "## Flow\n1. step\n"]))]
        for _ in range(draw(st.integers(0, 4))):
            header = " ".join(draw(st.lists(st.sampled_from(ENTRIES), max_size=3)))
            parts.append(section(draw(st.sampled_from(PATHS)), body(draw(st.integers(1, 300))), " " + header))
        if draw(st.booleans()):
            parts.append("\n> guidance")
        out.append((f"c{i}", "".join(parts)))
    return out


@SETTINGS
@given(responses(), st.one_of(st.none(), st.lists(st.sampled_from(WORDS), max_size=8).map(" ".join)))
def test_allocation_bounds(resps: list[tuple[str, str]], answer: str | None) -> None:
    alloc, why = allocation(resps, answer)
    if alloc is None:
        assert why
        return
    assert 0 <= alloc["used_path"] <= alloc["used"] <= alloc["envelope"]
    assert 0.0 <= alloc["efficiency_path"] <= alloc["efficiency"] <= 1.0
    assert sum(f["chars"] for f in alloc["files"]) == alloc["envelope"]
    assert alloc["files_used"] <= alloc["files_returned"] == len(alloc["files"])
    chars = [f["chars"] for f in alloc["files"]]
    assert chars == sorted(chars, reverse=True)
    for c in alloc["calls"]:
        assert 0 <= c["used_path"] <= c["used"] <= c["envelope"]
        assert 0.0 <= c["efficiency"] <= 1.0


# --- other agents -----------------------------------------------------------------------
# Each agent has its own answer source and ctx_k (metrics.md, "The answer" and the ctx_k
# table). The Codex and Gemini readers do not feed the occupancy timeline: those tests pin
# what the contract asks and fail until they do (strict xfail).


def _token_count(r: Rollout, last: int, total: int) -> None:
    r.event(
        {
            "type": "token_count",
            "info": {
                "total_token_usage": {"input_tokens": total, "output_tokens": 10, "total_tokens": total + 10},
                "last_token_usage": {
                    "input_tokens": last,
                    "cached_input_tokens": last // 2,
                    "output_tokens": 10,
                },
                "model_context_window": 272_000,
            },
        }
    )


def codex_run() -> Rollout:
    r = Rollout("current")
    r.user("where is the handler?")
    x = r.explore()
    r.item({"type": "reasoning", "summary": [], "encrypted_content": "gAAAA"})
    r.item(x)
    _token_count(r, 1000, 1000)
    _token_count(r, 1000, 1000)  # the same request's figures, written twice
    r.output(x, explore_text(["lib/a.py", "lib/b.py"]))
    r.say("Let me check lib/b.py first.")  # narration: not the answer
    r.say("The handler is in lib/a.py.")
    _token_count(r, 1600, 2600)
    r.event({"type": "task_complete", "last_agent_message": "The handler is in lib/a.py."})
    return r


def codex_measure(tmp_path: Path) -> dict[str, Any]:
    verdict, collector = judge(
        "codex", [codex_run().write(tmp_path / "rollout-2026-03-01T10-00-00-0199.jsonl")]
    )
    return measure(verdict, collector)


def gemini_measure(tmp_path: Path, form: str = "session") -> dict[str, Any]:
    s = GeminiSession(form)
    s.user("where is the handler?")
    s.step(s.explore(), results=[explore_text(["lib/a.py", "lib/b.py"])], text="Let me check lib/b.py.")
    s.finish("The handler is in lib/a.py.")
    verdict, collector = judge("gemini", [s.write(tmp_path / f"session-2026-03-01T10-00-5c1d{s.suffix()}")])
    return measure(verdict, collector)


def test_codex_answer_is_the_last_assistant_message(tmp_path: Path) -> None:
    alloc = codex_measure(tmp_path)["allocation"]
    assert alloc["has_answer"] is True
    assert {f["path"] for f in alloc["files"] if f["via"]} == {"lib/a.py"}


@pytest.mark.parametrize("form", ["session", "checkpoint", "jsonl"])
def test_gemini_answer_is_the_last_gemini_message(tmp_path: Path, form: str) -> None:
    alloc = gemini_measure(tmp_path, form)["allocation"]
    assert alloc["has_answer"] is True
    assert {f["path"] for f in alloc["files"] if f["via"]} == {"lib/a.py"}


def test_codex_occupancy(tmp_path: Path) -> None:
    m = codex_measure(tmp_path)
    assert m["occupancy"] is not None, m["occupancy_reason"]
    o = m["occupancy"]
    # Two requests (the second token_count repeats the first's totals); the log's window.
    assert (o["turns"], o["ctx_base"], o["ctx_final"], o["window"]) == (2, 1000, 1600, 272_000)


def test_gemini_occupancy(tmp_path: Path) -> None:
    m = gemini_measure(tmp_path)
    assert m["occupancy"] is not None, m["occupancy_reason"]
    assert (m["occupancy"]["turns"], m["occupancy"]["ctx_final"]) == (2, 900)  # tokens.input


#: An MCP result of two text blocks and a resource: the second block's marker is no line start
#: once the blocks are concatenated with nothing between them (metrics.md, "Text of a result").
MCP_BLOCKS = [
    {"type": "text", "text": explore_text(["lib/a.py"])},
    {"type": "text", "text": explore_text(["lib/b.py"]).removeprefix("## Flow\n")},
    {"type": "resource", "resource": {"uri": "file:///t/lib/c.py", "mimeType": "text/x-python"}},
]


@pytest.mark.parametrize("agent", ["codex", "gemini"])
def test_an_mcp_content_list_counts_for_the_metrics_as_a_tool_results_blocks(
    tmp_path: Path, agent: str
) -> None:
    # The verdicts join the blocks' texts with a newline (lib/b.py is returned, so reading it
    # is an allocation miss); the metrics concatenate them, a block without text as its JSON.
    if agent == "codex":
        r = Rollout("current")
        r.user("where is the handler?")
        x = r.explore()
        r.step(x, outputs=[{"text": "", "raw": json.dumps(MCP_BLOCKS)}])
        _token_count(r, 1000, 1000)
        r.step(r.shell("sed -n '1,80p' lib/b.py"), outputs=["def g(): pass"])
        _token_count(r, 1600, 2600)
        r.finish("The handler is in lib/b.py.")
        path = r.write(tmp_path / "rollout-2026-03-01T10-00-00-0199.jsonl")
    else:
        s = GeminiSession("session")
        s.user("where is the handler?")
        s.step(s.explore(), results=[{"content": MCP_BLOCKS}])
        s.step(s.call("read_file", absolute_path="/t/lib/b.py"))
        s.finish("The handler is in lib/b.py.")
        path = s.write(tmp_path / f"session-2026-03-01T10-00-5c1d{s.suffix()}")
    verdict, collector = judge(agent, [path])
    [call] = verdict.calls
    assert (call.bucket, call.next) == ("read_returned", ("Bash " if agent == "codex" else "") + "Read b.py")
    whole = metric_text(MCP_BLOCKS)
    assert "```**`lib/b.py`**" in whole and '"type":"resource"' in whole
    m = measure(verdict, collector)
    alloc = m["allocation"]
    section = len(whole) - len("## Flow\n")  # one section, from the first marker to the end
    assert [(f["path"], f["chars"], f["via"]) for f in alloc["files"]] == [("lib/a.py", section, None)]
    assert (alloc["envelope"], alloc["used"]) == (section, 0)
    assert m["occupancy"] is not None, m["occupancy_reason"]
    assert m["occupancy"]["chars"]["tool"] == len(whole)


# --- per arm and arm against arm -----------------------------------------------------------


def rec(arm: str, group: str, *, alloc: tuple[int, int, int, int, bool] | None = None,
        occ: tuple[int, int, int, int, int] | None = None) -> dict[str, Any]:  # fmt: skip
    """A classified record with the metric fields the aggregates read.

    ``alloc``: envelope, used, used_path, calls, has_answer; ``occ``: ctx_final, ctx_base,
    tool residual, file-access residual, retrieval residual.
    """
    a = None
    if alloc is not None:
        env, used, used_path, calls, has = alloc
        a = {"envelope": env, "used": used, "used_path": used_path, "calls": [{}] * calls, "has_answer": has}
    o = None
    if occ is not None:
        final, base, tool, fa, ret = occ
        residual = dict.fromkeys(FAMILIES, 0) | {"tool": tool}
        o = {"ctx_final": final, "ctx_base": base, "residual": residual, "residual_file_access": fa,
             "residual_retrieval": ret}  # fmt: skip
    return {"status": "classified", "arm": arm, "group": group, "answered": 1, "counts": {},
            "allocation": a, "occupancy": o}  # fmt: skip


def test_allocation_per_arm_is_pooled_with_a_clustered_interval() -> None:
    recs = [
        rec("with", "g", alloc=(1000, 300, 100, 1, True)),
        rec("with", "g", alloc=(3000, 300, 300, 2, False)),
        rec("with", "g"),
    ]
    s = allocation_summary(recs)
    assert s is not None
    # Pooled: 600 / 4000 = 0.15 (not the mean of 0.3 and 0.1); path only: 400 / 4000.
    eff = s["efficiency"]
    assert eff["share"] == pytest.approx(0.15)
    assert s["efficiency_path"] == pytest.approx(0.1)
    # Cluster variance: n/(n-1) * sum((u - p e)^2) / E^2 = 2 * (150^2 + 150^2) / 4000^2
    # = 0.005625, se 0.075; interval 0.15 -+ 1.96 * 0.075.
    assert eff["se"] == pytest.approx(0.075)
    assert (eff["lo"], eff["hi"]) == (
        pytest.approx(0.15 - 1.959964 * 0.075),
        pytest.approx(0.15 + 1.959964 * 0.075),
    )
    assert (s["transcripts"], s["calls"], s["no_answer"]) == (2, 3, 1)
    assert (s["per_run"]["median"], s["per_run"]["min"], s["per_run"]["max"]) == (
        pytest.approx(0.2),
        pytest.approx(0.1),
        pytest.approx(0.3),
    )
    assert allocation_summary([rec("with", "g")]) is None


def test_occupancy_per_arm() -> None:
    recs = [
        rec("with", "g", occ=(2000, 1000, 800, 200, 1000)),
        rec("with", "g", occ=(4000, 1200, 1000, 1000, 2000)),
        rec("with", "g", occ=(3000, 1100, 0, 600, 600)),
    ]
    s = occupancy_summary(recs)
    assert s is not None
    assert s["transcripts"] == 3
    assert (s["ctx_final"]["median"], s["ctx_final"]["min"], s["ctx_final"]["max"]) == (3000, 2000, 4000)
    assert s["residual_tool"]["median"] == 800
    assert s["residual_file_access"]["median"] == 600
    assert s["residual_retrieval"]["median"] == 1000
    # Shares of the final context: 0.5, 0.5, 0.2.
    assert (s["share"]["median"], s["share"]["min"]) == (pytest.approx(0.5), pytest.approx(0.2))
    assert s["ctx_base"] == 1100


def metric_campaign() -> list[dict[str, Any]]:
    """Arm with: g1 retrieval residuals 1800, 2000, 2200 (median 2000), g2 3000; ctx_base
    5000, 5200, 5400, 5600 (median 5300). Arm without: g1 1000, 1000; g2 2000; g3 (only
    here) 9000; ctx_base 4000, 4100, 4200, 4300 (median 4150)."""
    w = [("g1", 1800, 5000), ("g1", 2000, 5200), ("g1", 2200, 5400), ("g2", 3000, 5600)]
    wo = [("g1", 1000, 4000), ("g1", 1000, 4100), ("g2", 2000, 4200), ("g3", 9000, 4300)]
    return [rec("with", g, occ=(20000, base, ret, 0, ret)) for g, ret, base in w] + [
        rec("without", g, occ=(20000, base, 0, ret, ret)) for g, ret, base in wo
    ]


def test_retrieval_residual_arm_against_arm() -> None:
    r = compare_metrics(metric_campaign(), "with", "without")["residual"]
    # g1: (2000 - 1000) / 1000 = +100%; g2: (3000 - 2000) / 2000 = +50%; g3 is in one arm only.
    assert [(g["group"], g["a"], g["b"], g["pct"], g["direction"]) for g in r["groups"]] == [
        ("g1", 2000, 1000, pytest.approx(100.0), "higher"),
        ("g2", 3000, 2000, pytest.approx(50.0), "higher"),
    ]
    assert r["mean_pct"] == pytest.approx(75.0)
    assert r["direction"] == "higher"
    assert (r["agreeing"], r["compared"]) == (2, 2)
    # sd of [100, 50] = 35.36; half = 1.96 * 35.36 / sqrt(2) = 1.96 * 25.
    assert (r["interval"]["lo"], r["interval"]["hi"]) == (
        pytest.approx(75 - 1.959964 * 25),
        pytest.approx(75 + 1.959964 * 25),
    )
    # The tool's fixed overhead: median ctx_base 5300 - 4150.
    assert r["fixed_overhead"] == 1150


def test_the_sign_is_said_in_words_both_ways() -> None:
    r = compare_metrics(metric_campaign(), "without", "with")["residual"]
    # g1: (1000 - 2000) / 2000 = -50%; g2: (2000 - 3000) / 3000 = -33.3%.
    assert r["mean_pct"] == pytest.approx((-50 - 100 / 3) / 2)
    assert r["direction"] == "lower"
    assert [g["direction"] for g in r["groups"]] == ["lower", "lower"]
    assert r["fixed_overhead"] == -1150


# --- what a block adds --------------------------------------------------------------------


def test_characters_an_assistant_block_adds() -> None:
    assert assistant_chars(text("hello")) == 5
    assert assistant_chars({"type": "thinking", "thinking": "hmm…", "signature": "sig" * 100}) == 4
    # tool_use: len(name) + compact JSON of the input, non-ASCII kept: 4 + len('{"q":"é","n":[1,2]}') 19.
    assert (
        assistant_chars({"type": "tool_use", "id": "t", "name": "Grep", "input": {"q": "é", "n": [1, 2]}})
        == 23
    )
    # Any other block: its compact JSON: {"type":"redacted_thinking","data":"xyz"} is 41.
    assert assistant_chars({"type": "redacted_thinking", "data": "xyz"}) == 41


def test_the_text_of_a_result_for_the_metrics() -> None:
    assert metric_text("plain") == "plain"
    blocks = [text("ab"), IMAGE, {"type": "custom", "n": 1}, text("cd")]
    assert metric_text(blocks) == 'ab{"type":"custom","n":1}cd'  # nothing between, image as nothing


def test_a_plain_string_content_counts_its_length(tmp_path: Path) -> None:
    run = Stream()
    run.ask(text("a" * 100), ctx=1000)
    run.user("b" * 400)  # the user's own message, a plain string
    run.ask(text("c"), ctx=1200)
    run.end("c")
    # No tool output: the one growing gap, (100 + 400) / 200.
    assert measured(tmp_path, run)["occupancy"]["chars_per_token"] == pytest.approx(2.5)


# --- gates on the metrics -------------------------------------------------------------------


def metric_arms() -> dict[str, dict[str, Any]]:
    """Arm with: the allocation of the per-arm test (0.15, lower bound 0.003) and residual
    shares 0.5, 0.5, 0.2 (median 0.5). Arm without: no explore call, no allocation."""
    alloc = [
        rec("with", "g", alloc=(1000, 300, 100, 1, True)),
        rec("with", "g", alloc=(3000, 300, 300, 2, True)),
    ]
    occ = [
        rec("with", "g", occ=(2000, 1000, 800, 200, 1000)),
        rec("with", "g", occ=(4000, 1200, 1000, 1000, 2000)),
        rec("with", "g", occ=(3000, 1100, 0, 600, 600)),
    ]
    return {
        "with": {"answered": 3, "allocation": allocation_summary(alloc), "occupancy": occupancy_summary(occ)},
        "without": {"answered": 0, "allocation": None, "occupancy": None},
    }


@pytest.mark.parametrize(
    ("gate", "on", "passed"),
    [
        (Gate("allocation", "min", 0.1), "point", True),  # 0.15 >= 0.1
        (Gate("allocation", "min", 0.1), "bound", False),  # 0.003 < 0.1
        (Gate("allocation", "min", 0.2), "point", False),
        (Gate("residual_share", "max", 0.5), "point", True),  # 0.5 <= 0.5
        (Gate("residual_share", "max", 0.4), "point", False),
    ],
)
def test_metric_gates(gate: Gate, on: str, passed: bool) -> None:
    [outcome] = evaluate_metrics([gate], metric_arms(), on)
    assert (outcome.arm, outcome.passed) == ("with", passed)


def test_a_metric_gate_without_a_figure_is_not_a_pass() -> None:
    [outcome] = evaluate_metrics([Gate("allocation", "min", 0.1, arm="without")], metric_arms())
    assert outcome.passed is None and outcome.value is None


def test_baseline_metric_gates() -> None:
    changes = {"with": {"allocation": {"diff": -0.1}, "residual": {"growth": 0.3}}}
    drop, growth, tight = evaluate_baseline_metrics(
        [
            Gate("allocation", "max_drop", 0.05),
            Gate("residual", "max_growth", 0.5),
            Gate("residual", "max_growth", 0.2),
        ],
        changes,
        metric_arms(),
    )
    assert (drop.value, drop.passed) == (pytest.approx(0.1), False)  # fell by 0.1 > 0.05
    assert (growth.value, growth.passed) == (pytest.approx(0.3), True)
    assert tight.passed is False
    [none] = evaluate_baseline_metrics([Gate("residual", "max_growth", 0.5)], {"with": {}}, metric_arms())
    assert none.passed is None


# --- interactive session logs -----------------------------------------------------------------


def test_an_interactive_log_inline_sidechain_is_another_window(tmp_path: Path) -> None:
    log = Log()
    log.prompt("hi")  # before the first request: part of ctx_base
    x = Run.use(EXPLORE, query="q")
    log.ask(x, ctx=1000)  # adds 46
    log.result(x, section("lib/a.js", "x" * 1985))  # 2000: gap 1, delta 1000, 2.0
    agent = Run.use("Agent", prompt="p")  # adds 5 + 14 = 19
    log.ask(agent, ctx=2000)
    log.prompt("p", sidechain=True)
    r = Run.use("Read")
    log.ask(r, ctx=300, sidechain=True)
    log.result(r, "S" * 5000, sidechain=True)
    log.ask(text("summary"), ctx=5000, sidechain=True)
    log.result(agent, "T" * 1000, sidechain=False)  # the parent's, family other
    log.ask(text("done: lib/a.js"), ctx=2500)  # gap 2: 1019 chars, delta 500, 2.0
    path = log.write(tmp_path / "11111111-2222-4333-8444-555555555555.jsonl")
    m = measure(*judge("interactive", [path]))
    o = m["occupancy"]
    assert (o["turns"], o["ctx_base"], o["ctx_final"]) == (3, 1000, 2500)
    assert o["chars_per_token"] == pytest.approx(2.0)
    assert o["residual"] == {"tool": 1000, "read": 0, "search": 0, "bash": 0, "other": 500}
    # No result event: the answer is the last main-thread text.
    assert m["allocation"]["has_answer"] is True and m["allocation"]["used"] == 2000


def test_an_interactive_subagent_file_is_another_window(tmp_path: Path) -> None:
    sid = "11111111-2222-4333-8444-555555555555"
    log = Log(sid)
    x = Run.use(EXPLORE, query="q")
    log.ask(x, ctx=1000)
    log.result(x, section("lib/a.js", "x" * 1985))
    agent = Run.use("Agent", prompt="p")
    agent["id"] = "toolu_spawn"
    log.ask(agent, ctx=2000)
    log.result(agent, "T" * 1000, toolUseResult={"agentId": "def456"})
    log.ask(text("done: lib/a.js"), ctx=2500)
    main = log.write(tmp_path / f"{sid}.jsonl")
    sub = Log(sid, sidechain=True, agent_id="def456")
    sub.prompt("p")
    r = Run.use("Read")
    sub.ask(r, ctx=300)
    sub.result(r, "S" * 5000)
    sub.ask(text("summary"), ctx=5000)
    subfile = sub.write(tmp_path / sid / "subagents" / "agent-def456.jsonl")
    o = measure(*judge("interactive", [main, subfile]))["occupancy"]
    assert (o["turns"], o["ctx_final"]) == (3, 2500)
    assert o["residual"] == {"tool": 1000, "read": 0, "search": 0, "bash": 0, "other": 500}
    assert o["results"]["read"] == 0


# --- metamorphic: a resumed session's replays change nothing (M9) -------------------------------

TOOLS = ["Read", "Grep", "Bash", "Edit", EXPLORE]


@st.composite
def runs(draw: st.DrawFn) -> Stream:
    run = Stream()
    ctx = draw(st.integers(500, 5000))
    for _ in range(draw(st.integers(1, 6))):
        name = draw(st.sampled_from(TOOLS))
        block = run.use(name, query="q") if name == EXPLORE else run.use(name)
        run.ask(*([text("x" * draw(st.integers(0, 50)))] if draw(st.booleans()) else []), block, ctx=ctx)
        size = draw(st.integers(0, 4000))
        content = section("lib/a.js", "y" * size) if name == EXPLORE else "z" * size
        run.answer((block, content))
        ctx += draw(st.integers(-2000, 3000))
        if draw(st.integers(0, 9)) == 0:
            run.compact()
    run.ask(text("lib/a.js"), ctx=max(ctx, 0))
    run.end(None, "error_max_turns")
    return run


def _measure_once(run: Stream) -> dict[str, Any]:
    with tempfile.TemporaryDirectory(prefix="explore-suff-metrics-") as tmp:
        path = run.write(Path(tmp) / "run.jsonl")
        return measure(*judge("stream-json", [path]))


@SETTINGS
@given(runs(), st.data())
def test_replayed_lines_change_no_metric(run: Stream, data: st.DataObject) -> None:
    before = _measure_once(run)
    replayed = copy.deepcopy(run)
    end = replayed.events.pop()
    for _ in range(data.draw(st.integers(1, 5))):
        replayed.replay(data.draw(st.integers(1, len(replayed.events) - 1)))
    replayed.events.append(end)
    after = _measure_once(replayed)
    assert after["occupancy"] == before["occupancy"]
    assert after["allocation"] == before["allocation"]


def test_a_request_placed_before_its_token_count_takes_the_additions_after_it():
    # Codex: a response's token count comes after the response's own items.
    t = Timeline()
    t.begin()
    t.measured(1000)  # request 1 (the base)
    t.add(50)  # response 1's items: after request 1
    t.result("call_1", 900)
    t.begin()  # request 2 starts here...
    t.add(30)  # ...its own items
    t.measured(1400)  # ...its size arrives after them
    t.begin()  # request 3 is never measured: request 2's gap runs on to the end
    t.add(20)
    t.settle()
    assert (t.requests, t.base) == (2, 1000)
    (gap,) = t.gaps
    assert (gap.ctx, gap.chars, gap.results) == (1400, 950, [("call_1", 900)])
    assert t._open.chars == 50  # 30 after request 2, and 20 after the unmeasured request 3
