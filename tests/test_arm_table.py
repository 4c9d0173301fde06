"""The arm table (issue #42): run figures, duplicate residual, abandonment, cost split.

Checked against `table_oracle`, an independent computation from the logs, on a held-out
seeded campaign, plain and under xdist; and on small hand-made runs for each rule.
"""

from __future__ import annotations

import json
import math
import random
import re
from pathlib import Path
from typing import Any

import pytest
from agent_shapes import (
    AmpThread,
    ClineTask,
    CopilotSession,
    GeminiSession,
    OpenCodeSession,
    QwenChat,
    Rollout,
    explore_text,
)
from builders import EXPLORE, Run
from helpers import RunCampaign
from real_shapes import SID, RealSession
from table_oracle import arm_rows, codex_cache, gemini_cache, held_out_campaign, oracle

from pytest_explore_suff import judge
from pytest_explore_suff.campaign import discover
from pytest_explore_suff.metrics import measure


def _close(a: Any, b: Any, where: str) -> None:
    if isinstance(a, dict) and isinstance(b, dict):
        assert set(a) == set(b), f"{where}: keys {sorted(a)} != {sorted(b)}"
        for k in a:
            _close(a[k], b[k], f"{where}.{k}")
    elif isinstance(a, list) and isinstance(b, list):
        assert len(a) == len(b), f"{where}: {len(a)} != {len(b)} items"
        for i, (x, y) in enumerate(zip(a, b, strict=True)):
            _close(x, y, f"{where}[{i}]")
    elif isinstance(a, float) or isinstance(b, float):
        assert a is not None and b is not None, f"{where}: {a!r} != {b!r}"
        assert math.isclose(a, b, rel_tol=1e-9, abs_tol=1e-12), f"{where}: {a!r} != {b!r}"
    else:
        assert a == b, f"{where}: {a!r} != {b!r}"


@pytest.mark.parametrize("xdist", [[], ["-n", "2"]], ids=["plain", "n2"])
def test_every_figure_of_a_held_out_campaign_equals_an_independent_computation(
    pytester: pytest.Pytester, run_campaign: RunCampaign, xdist: list[str]
) -> None:
    root = held_out_campaign(pytester.path / "held", seed=7)
    _, doc = run_campaign(root, "-p", "no:randomly", "--explore-suff-keep-excluded", *xdist)
    assert doc is not None
    records = {r["path"]: r for r in doc["transcripts"]}
    assert len(records) == 40
    by_arm: dict[str, list[dict[str, Any]]] = {}
    seen = {"abandoned": 0, "duplicate": 0, "split": 0, "non_success": 0}
    for path, rec in records.items():
        want = oracle(root / path)
        for key in ("run_figures", "abandoned", "abandon_file_access_after", "last_call_retrieval",
                    "duplicate", "cost"):  # fmt: skip
            _close(rec[key], want[key], f"{path}: {key}")
        by_arm.setdefault(rec["arm"], []).append(want)
        seen["abandoned"] += want["abandoned"] is True
        seen["duplicate"] += bool(want["duplicate"] and want["duplicate"]["duplicate_chars"])
        seen["split"] += want["cost"]["subagents_usd"] not in (None, 0.0)
        seen["non_success"] += want["run_figures"]["success"] is False
    # The campaign exercises every rule, or the comparison proves little.
    assert all(seen.values()), seen
    for arm, wants in by_arm.items():
        figures = doc["arms"][arm]["run_figures"]
        for name, row in arm_rows(wants).items():
            _close(figures[name], row, f"arms.{arm}.run_figures.{name}")
        assert figures["runs"] == len(wants)
        assert figures["non_success"] == sum(1 for w in wants if w["run_figures"]["success"] is False)
        dup = [w["duplicate"] for w in wants if w["duplicate"]]
        d = doc["arms"][arm]["duplicate"]
        if dup:
            _close(d["duplicate_chars"], sum(x["duplicate_chars"] for x in dup), f"{arm} duplicate_chars")
            _close(d["duplicate_share"]["share"], sum(x["duplicate_chars"] for x in dup)
                   / sum(x["envelope"] for x in dup), f"{arm} duplicate share")  # fmt: skip
        flags = [w["abandoned"] for w in wants if w["abandoned"] is not None]
        assert doc["arms"][arm]["abandon"]["abandoned"] == sum(flags)
        assert doc["arms"][arm]["abandon"]["runs"] == len(flags)


def _figures(tmp_path: Path, run: Run) -> dict[str, Any]:
    path = run.write(tmp_path / "run-headless-with.jsonl")
    verdict, collector = judge("stream-json", [path])
    return measure(verdict, collector)


def _code(*lines: str, path: str = "lib/a.js") -> str:
    return "\n".join([f"**`{path}`**", "```js", *lines, "```"])


def test_a_line_an_earlier_call_returned_of_the_same_file_is_duplicate(tmp_path: Path) -> None:
    run = Run()
    run.step(run.explore(), _code("function send() {", "  return 1;", "}"))
    # the same file by a longer path; one line with trailing blanks, one new, one blank
    second = "\n".join(["**`/r/lib/a.js`**", "```", "function send() {   ", "  return 2;", "", "}", "```"])
    run.step(run.explore(), second)
    run.finish()
    d = _figures(tmp_path, run)["duplicate"]
    first, again = d["calls"]
    assert first["duplicate_chars"] == 0
    # "function send() {   " (20 + 1) and "}" (1 + 1): lengths as they stand, plus a newline
    assert again["duplicate_lines"] == 2
    assert again["duplicate_chars"] == 21 + 2
    assert again["duplicate_share"] == pytest.approx(23 / len(second))


def test_a_line_of_another_file_or_outside_a_fence_is_not_duplicate(tmp_path: Path) -> None:
    run = Run()
    run.step(run.explore(), _code("const x = 1;") + "\nconst y = 2;")
    run.step(
        run.explore(), _code("const x = 1;", path="lib/b.js") + "\nconst y = 2;\n" + _code("const y = 2;")
    )
    run.finish()
    d = _figures(tmp_path, run)["duplicate"]
    assert d["calls"][1]["duplicate_chars"] == 0


def test_a_run_that_stops_exploring_and_searches_by_hand_abandons_the_tool(tmp_path: Path) -> None:
    run = Run()
    run.step(run.explore(), _code("x"))
    run.step(run.use("Grep", pattern="a"))
    run.step(run.use("Read", file_path="lib/a.js"))
    run.step(run.use("Bash", command="sed -n '1,9p' lib/b.js"))
    run.finish()
    f = _figures(tmp_path, run)
    assert f["abandoned"] is True and f["abandon_file_access_after"] == 3
    assert f["last_call_retrieval"] is False


def test_an_explore_call_after_the_searches_means_the_tool_was_not_abandoned(tmp_path: Path) -> None:
    run = Run()
    run.step(run.explore(), _code("x"))
    for _ in range(3):
        run.step(run.use("Glob", pattern="*.js"))
    run.step(run.explore(), "boom", is_error=True)  # errored: not judged, but a call of the tool
    run.finish()
    f = _figures(tmp_path, run)
    assert f["abandoned"] is False
    assert f["last_call_retrieval"] is True
    assert f["run_figures"]["errored_retrieval"] == 1


def test_a_run_without_a_judged_call_has_no_abandonment_and_a_log_without_figures_gives_null(
    tmp_path: Path,
) -> None:
    run = Run()
    run.step(run.use("Read", file_path="a.js"))  # no result event: success, duration, cost unknown
    f = _figures(tmp_path, run)
    assert f["abandoned"] is None
    rf = f["run_figures"]
    assert rf["success"] is None and rf["duration_s"] is None and rf["tokens_processed"] is None
    assert f["cost"]["total_usd"] is None and f["cost"]["tokens_main"] is None
    assert rf["tool_calls"] == 1 and rf["read"] == 1


def test_the_cost_splits_by_model_when_the_subagents_ran_on_their_own_model(tmp_path: Path) -> None:
    run = Run()
    task = run.use("Task", prompt="look")
    run.message(task)
    sub = run.use(EXPLORE, query="q")
    run.events.append({"type": "assistant", "parent_tool_use_id": task["id"], "message": {
        "id": "m-sub", "model": "haiku", "content": [sub],
        "usage": {"input_tokens": 10, "cache_read_input_tokens": 90, "output_tokens": 5}}})  # fmt: skip
    run.result(sub, _code("x"), parent=task["id"])
    run.result(task, "summary")
    for e in run.events:
        if e["type"] == "assistant" and e.get("parent_tool_use_id") is None:
            e["message"].update(model="opus", usage={"input_tokens": 100, "cache_read_input_tokens": 0})
    run.finish()
    run.events[-1]["modelUsage"] = {"opus": {"costUSD": 0.5}, "haiku": {"costUSD": 0.1}}
    c = _figures(tmp_path, run)["cost"]
    assert (c["main_usd"], c["subagents_usd"]) == (0.5, 0.1)
    assert c["tokens_main"] == 100 and c["tokens_subagents"] == 105
    assert c["cache_read_share"] == pytest.approx(90 / 200)


# -- the gates ------------------------------------------------------------------------------------


def _run(
    reads: int = 0, seconds: float = 1.0, usd: float = 0.01, explores: int = 1, dup: bool = False
) -> Run:
    """A run with ``explores`` explore calls (each returning the same function when ``dup``),
    then ``reads`` Reads; its result says ``seconds`` and ``usd``."""
    run = Run()
    for i in range(explores):
        body = (
            ("function send() {", "  return 1;", "}") if dup else (f"function send{i}() {{", f"  return {i};")
        )
        run.step(run.explore(), _code(*body))
    for i in range(reads):
        run.step(run.use("Read", file_path=f"lib/f{i}.js"))
    run.finish()
    run.events[-1].update(duration_ms=seconds * 1000, total_cost_usd=usd)
    return run


def _campaign(root: Path, runs: dict[str, list[Run]], group: str = "express") -> Path:
    for arm, arm_runs in runs.items():
        for n, r in enumerate(arm_runs, 1):
            r.write(root / group / f"run{n}" / f"run-headless-{arm}.jsonl")
    return root


def _gate_lines(result: pytest.RunResult, option: str) -> list[str]:
    return [line for line in result.outlines if line.startswith(f"explore-suff gate {option}")]


@pytest.mark.parametrize(
    ("option", "with_run", "passes"),
    [
        ("--max-read-increase=1", {"reads": 2}, True),
        ("--max-read-increase=0", {"reads": 2}, False),
        ("--max-duration-increase=0.5", {"seconds": 1.4}, True),
        ("--max-duration-increase=0.2", {"seconds": 1.4}, False),
        ("--max-cost-increase=0.1", {"usd": 0.0105}, True),
        ("--max-cost-increase=0.1", {"usd": 0.02}, False),
    ],
)
def test_a_run_gate_compares_the_arm_with_the_other_arm_of_the_pair(
    pytester: pytest.Pytester, run_campaign: RunCampaign, option: str, with_run: dict[str, Any], passes: bool
) -> None:
    root = _campaign(pytester.path / "c", {"with": [_run(**with_run)] * 3, "without": [_run(reads=1)] * 3})
    result, doc = run_campaign(root, option, "--max-read-increase=headless-without:5")
    flag = option.split("=")[0]
    (line,) = [ln for ln in _gate_lines(result, flag) if ": arm 'headless-with' " in ln]
    assert ("passed" if passes else "FAILED") in line and "against" in line and "'headless-without'" in line
    # ARM: a gate on the other arm, against this one (it read less: passes)
    assert all(
        "passed" in ln
        for ln in _gate_lines(result, "--max-read-increase")
        if ": arm 'headless-without' " in ln
    )
    assert result.ret == (0 if passes else 1)
    assert doc is not None
    gate = next(g for g in doc["gates"] if g["op"].endswith("increase") and g["arm"] == "headless-with")
    assert gate["passed"] is passes and gate["old"] is not None


def test_a_run_gate_against_the_baseline_compares_each_arm_with_itself(
    pytester: pytest.Pytester, run_campaign: RunCampaign
) -> None:
    old = _campaign(pytester.path / "old", {"with": [_run(reads=1)] * 3, "without": [_run(reads=1)] * 3})
    run_campaign(old, json="old.json")
    new = _campaign(pytester.path / "new", {"with": [_run(reads=3)] * 3, "without": [_run(reads=1)] * 3})
    result, _ = run_campaign(new, "--explore-suff-baseline=old.json", "--max-read-increase=0")
    lines = _gate_lines(result, "--max-read-increase")
    assert len(lines) == 2
    assert any("'headless-with'" in ln and "+2" in ln and "FAILED" in ln for ln in lines), lines
    assert any("'headless-without'" in ln and "passed" in ln for ln in lines), lines
    assert result.ret == 1


@pytest.mark.parametrize(
    ("with_reads", "without_reads", "passes"),
    [
        ([3] * 4, [1] * 4, False),  # every run read more: beyond noise
        ([0, 4, 0, 4, 4], [0, 4, 4, 0, 0], True),  # medians 4 against 0, but runs this mixed are noise
    ],
)
def test_a_run_gate_on_the_bound_fails_only_beyond_noise_and_joins_the_family(
    pytester: pytest.Pytester, run_campaign: RunCampaign, with_reads: list[int], without_reads: list[int],
    passes: bool,
) -> None:
    root = _campaign(pytester.path / "c", {"with": [_run(reads=r) for r in with_reads],
                                           "without": [_run(reads=r) for r in without_reads]})  # fmt: skip
    on_point, _ = run_campaign(root, "--max-read-increase=0")
    assert on_point.ret == 1  # the medians rose in both
    result, doc = run_campaign(root, "--max-read-increase=0", "--explore-suff-gate-on=bound")
    (line,) = _gate_lines(result, "--max-read-increase")
    line = " ".join(line.split())
    verdict = "passed" if passes else "FAILED"
    assert re.search(rf"\(\+\d+, at least [-+][\d.]+ at the 95% bound, n=\d\) <= 0: {verdict}$", line), line
    assert result.ret == (0 if passes else 1)
    assert doc is not None
    (gate,) = [g for g in doc["gates"] if g["op"] == "max_increase"]
    assert gate["on"] == "bound" and gate["level"] == 0.025 and gate["p"] is not None
    assert doc["family"]["checks"] == 1
    result.stdout.fnmatch_lines(["*1 check decided on intervals: the chance that any fails*"])


@pytest.mark.parametrize(("dup", "passes"), [(False, True), (True, False)])
def test_max_duplicate_share_fails_a_tool_that_resends_what_it_sent(
    pytester: pytest.Pytester, run_campaign: RunCampaign, dup: bool, passes: bool
) -> None:
    root = _campaign(pytester.path / "c", {"with": [_run(explores=3, dup=dup)] * 2})
    result, _ = run_campaign(root, "--max-duplicate-share=0.1")
    (line,) = _gate_lines(result, "--max-duplicate-share")
    assert ("passed" if passes else "FAILED") in line
    assert result.ret == (0 if passes else 1)


# -- real shapes: a figure is there where the log has it, null where it lacks it ---------------


def test_claude_code_logs_give_duration_cost_and_models_where_they_record_them(tmp_path: Path) -> None:
    run = _run(reads=1)
    run.events[-1]["modelUsage"] = {
        "claude-sonnet-4-5": {
            "inputTokens": 12,
            "outputTokens": 400,
            "cacheReadInputTokens": 9000,
            "cacheCreationInputTokens": 300,
            "webSearchRequests": 0,
            "costUSD": 0.042,
            "contextWindow": 200000,
        }
    }
    f = _figures(tmp_path, run)
    rf, cost = f["run_figures"], f["cost"]
    assert rf["success"] is True and rf["duration_s"] == 1.0 and rf["read"] == 1 and rf["retrieval"] == 1
    assert cost["total_usd"] == 0.01 and cost["by_model"]["claude-sonnet-4-5"]["cost_usd"] == 0.042
    assert cost["tokens_main"] is None  # the builder's messages carry no usage: not 0
    assert cost["cache_read_share"] == pytest.approx(9000 / 9312)  # from modelUsage, as no request says
    # An interactive session log has no result event: success, duration and cost are unknown.
    session = RealSession()
    session.prompt("where is send?")
    session.step(Run.use(EXPLORE, query="send"), _code("x"))
    verdict, collector = judge("interactive", [session.write(tmp_path / "s" / f"{SID}.jsonl")])
    g = measure(verdict, collector)
    assert g["run_figures"]["success"] is None and g["run_figures"]["duration_s"] is None
    assert g["cost"]["total_usd"] is None and g["run_figures"]["retrieval"] == 1


@pytest.mark.parametrize("shape", ["current", "mid-2025"])
def test_codex_logs_give_tokens_where_they_count_them_and_never_a_cost(tmp_path: Path, shape: str) -> None:
    r = Rollout(shape, "shell")
    r.user("where is send?")
    r.step(r.explore("send"), outputs=[explore_text(["lib/a.py"])])
    r.step(r.shell("cat lib/a.py"))
    r.finish()
    verdict, collector = judge("codex", [r.write(tmp_path / "rollout-2026-03-01T10-00-00-0199.jsonl")])
    f = measure(verdict, collector)
    rf = f["run_figures"]
    assert rf["retrieval"] == 1 and rf["bash"] == 1 and rf["success"] is None
    # the current shape writes token_count events; the mid-2025 one none: null, not 0
    assert (rf["tokens_processed"] is not None) is (shape == "current")
    assert f["cost"]["total_usd"] is None and f["cost"]["main_usd"] is None
    # its token counts say no cached part: the cache-read share is unknown, not 0
    assert f["cost"]["cache_read_share"] is None and f["cost"]["input_tokens"] is None


def test_gemini_logs_give_tokens_and_never_a_cost(tmp_path: Path) -> None:
    s = GeminiSession("session")
    s.user("where is send?")
    s.step(s.explore("send"), results=[explore_text(["lib/a.py"])])
    s.finish()
    verdict, collector = judge("gemini", [s.write(tmp_path / f"session-2026-03-01T10-00-5c1d{s.suffix()}")])
    f = measure(verdict, collector)
    assert f["run_figures"]["tokens_processed"] is not None and f["run_figures"]["retrieval"] == 1
    assert f["run_figures"]["success"] is None
    assert f["cost"]["total_usd"] is None and f["cost"]["by_model"] is None
    # each message says 900 input tokens, none cached: a share of 0, known
    assert (f["cost"]["input_tokens"], f["cost"]["cache_read_tokens"], f["cost"]["cache_read_share"]) == (
        1800, 0, 0.0)  # fmt: skip


def test_qwen_and_opencode_logs_give_their_cache_reads_and_null_where_a_request_lacks_them(
    tmp_path: Path,
) -> None:
    chat = QwenChat()
    chat.user("where is f?")
    chat.step(chat.explore("f"), results=[explore_text(["lib/a.py"])])
    chat.step(chat.call("read_file", absolute_path="/work/t/lib/a.py"))
    chat.finish()
    path = chat.write(tmp_path / "q" / "proj" / "chats" / "7e1f.jsonl")
    usage = [u for line in path.read_text().splitlines() if (u := json.loads(line).get("usageMetadata"))]
    prompt, cached = (sum(u[k] for u in usage) for k in ("promptTokenCount", "cachedContentTokenCount"))
    c = measure(*judge("qwen", [str(path)]))["cost"]
    assert len(usage) == 3 and 0 < cached < prompt
    assert (c["input_tokens"], c["cache_read_tokens"]) == (prompt, cached)
    assert c["cache_read_share"] == pytest.approx(cached / prompt)
    # one request without its cached part: the share is not known
    lines = path.read_text().splitlines()
    first = next(i for i, line in enumerate(lines) if "usageMetadata" in line)
    rec = json.loads(lines[first])
    del rec["usageMetadata"]["cachedContentTokenCount"]
    lines[first] = json.dumps(rec)
    path.write_text("\n".join(lines) + "\n")
    assert measure(*judge("qwen", [str(path)]))["cost"]["cache_read_share"] is None

    s = OpenCodeSession("ses_cache")
    s.step(s.explore(), results=[explore_text(["lib/a.py"])])
    s.step(text="f is in lib/a.py")
    export = s.export()
    steps = [p["tokens"] for m in export["messages"] for p in m["parts"] if p["type"] == "step-finish"]
    whole = sum(t["input"] + t["cache"]["read"] + t["cache"]["write"] for t in steps)
    read = sum(t["cache"]["read"] for t in steps)
    (tmp_path / "oc").mkdir()
    (tmp_path / "oc" / "export.json").write_text(json.dumps(export))
    [t] = discover(str(tmp_path / "oc")).transcripts
    c = measure(*judge(t.kind, t.files))["cost"]
    assert len(steps) == 2 and (c["input_tokens"], c["cache_read_tokens"]) == (whole, read)
    assert c["cache_read_share"] == pytest.approx(read / whole)


def _cache_campaign(root: Path, seed: int) -> dict[str, Any]:
    """Codex rollouts and Gemini sessions (both forms) with random cache reads per request;
    in each agent one log writes a request without its cached part (the share unknown) and
    one none at all (Codex's mid-2025 shape, a Gemini session without token counts)."""
    rng = random.Random(seed)
    oracles: dict[str, Any] = {}
    for i in range(6):
        r = Rollout("mid-2025" if i == 5 else "current", "shell", session_id=f"0199-cache-{i}")
        r.user("where is send?")
        for k in range(rng.randint(1, 3)):
            r.cached = None if i == 4 and k == 0 else rng.randint(0, 900)
            r.step(r.explore("send"), outputs=[explore_text(["lib/a.py"])])
        r.finish()
        path = r.write(root / "codex" / "sessions" / f"rollout-2026-03-01T10-0{i}-00-0199c{i}.jsonl")
        oracles[path.relative_to(root).as_posix()] = codex_cache(path)
    for i in range(6):
        g = GeminiSession("jsonl" if i % 2 else "session")
        g.user("where is send?")
        for k in range(rng.randint(1, 3)):
            g.cached = None if i == 4 and k == 0 else rng.randint(0, 900)
            g.step(g.explore("send"), results=[explore_text(["lib/a.py"])])
        g.cached = rng.randint(0, 900)
        g.finish()
        if i == 5:  # no token counts at all
            for m in g.messages:
                m.pop("tokens", None)
            for m in g.records:
                m.pop("tokens", None)
        name = f"session-2026-03-01T10-0{i}-5c1d00c{i}{g.suffix()}"
        path = g.write(root / "gemini" / "tmp" / "ab12" / "chats" / name)
        oracles[path.relative_to(root).as_posix()] = gemini_cache(path)
    return oracles


@pytest.mark.parametrize("xdist", [[], ["-n", "2"]], ids=["plain", "n2"])
def test_codex_and_gemini_cache_reads_equal_an_independent_computation(
    pytester: pytest.Pytester, run_campaign: RunCampaign, xdist: list[str]
) -> None:
    root = pytester.path / "agents"
    want = _cache_campaign(root, seed=11)
    _, doc = run_campaign(root, "-p", "no:randomly", *xdist)
    assert doc is not None
    got = {r["path"]: r["cost"] for r in doc["transcripts"]}
    assert set(got) == set(want)
    for path, w in want.items():
        _close({k: got[path][k] for k in w}, w, path)
    # the campaign has known, partly known and absent cache reads in both agents
    for agent in ("codex", "gemini"):
        shares = [w["cache_read_share"] for p, w in want.items() if p.startswith(agent)]
        assert sum(s is None for s in shares) == 2 and all(0 <= s <= 1 for s in shares if s is not None)
    # per arm: the pooled share of the runs that say it
    for arm, agg in doc["arms"].items():
        mine = [r["path"] for r in doc["transcripts"] if r["arm"] == arm and r["status"] == "classified"]
        runs = [want[p] for p in mine]
        known = [w for w in runs if w["input_tokens"]]
        pooled = sum(w["cache_read_tokens"] for w in known) / sum(w["input_tokens"] for w in known)
        _close(agg["cost"]["cache_read_share"]["pooled"], pooled, f"{arm} pooled cache-read share")


def test_amp_and_copilot_logs_give_their_cache_reads(tmp_path: Path) -> None:
    t = AmpThread()
    t.user("where is f?")
    t.step(t.explore(), results=[explore_text(["lib/a.py"])])
    t.finish()
    t.write(tmp_path / "amp" / "threads" / f"{t.id}.json")
    usage = [m["usage"] for m in t.document()["messages"] if m.get("usage")]
    whole = sum(u["inputTokens"] + u["cacheCreationInputTokens"] + u["cacheReadInputTokens"] for u in usage)
    read = sum(u["cacheReadInputTokens"] for u in usage)
    s = CopilotSession()
    s.step(s.explore(), results=[explore_text(["lib/a.py"])])
    s.finish()
    s.shutdown()
    s.write(tmp_path / "copilot" / "session-state" / s.session_id / "events.jsonl")
    metrics = [e["data"]["modelMetrics"] for e in s.events if e["type"] == "session.shutdown"]
    inputs = sum(m["usage"]["inputTokens"] for mm in metrics for m in mm.values())
    cached = sum(m["usage"]["cacheReadTokens"] for mm in metrics for m in mm.values())
    got = {}
    for found in discover(str(tmp_path)).transcripts:
        c = measure(*judge(found.kind, found.files))["cost"]
        got[found.agent] = (c["input_tokens"], c["cache_read_tokens"], c["cache_read_share"])
    assert len(usage) == 2 and len(metrics) == 1
    assert got == {"amp": (whole, read, pytest.approx(read / whole)),
                   "copilot": (inputs, cached, pytest.approx(cached / inputs))}  # fmt: skip


@pytest.mark.parametrize("files", [("api", "ui"), ("ui",)], ids=["history", "ui-only"])
def test_cline_logs_give_their_cache_reads_from_the_ui_log(tmp_path: Path, files: tuple[str, ...]) -> None:
    t = ClineTask()
    t.user("where is f?")
    t.step(t.explore("a"), results=[explore_text(["lib/a.py"])])
    t.step(text="f is in lib/a.py")
    folder = t.write(tmp_path / "tasks" / t.task_id, files)
    started = [json.loads(m["text"]) for m in t.ui if m.get("say") == "api_req_started"]
    whole = sum(d["tokensIn"] + d["cacheWrites"] + d["cacheReads"] for d in started)
    read = sum(d["cacheReads"] for d in started)
    [found] = discover(str(tmp_path)).transcripts
    c = measure(*judge(found.kind, found.files))["cost"]
    assert len(started) == 2 and (c["input_tokens"], c["cache_read_tokens"]) == (whole, read)
    assert c["cache_read_share"] == pytest.approx(read / whole)
    # a request that gives its input without its cache reads: not known
    ui = json.loads((folder / "ui_messages.json").read_text())
    first = next(m for m in ui if m.get("say") == "api_req_started")
    first["text"] = json.dumps({k: v for k, v in json.loads(first["text"]).items() if k != "cacheReads"})
    (folder / "ui_messages.json").write_text(json.dumps(ui))
    assert measure(*judge(found.kind, found.files))["cost"]["cache_read_share"] is None
