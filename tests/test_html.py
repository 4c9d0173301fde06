"""The HTML report: rendered from documents that real plugin runs wrote."""

from __future__ import annotations

import base64
import copy
import hashlib
import json
import re
import subprocess
import sys
from html.parser import HTMLParser
from pathlib import Path
from typing import Any

import pytest
from agent_shapes import mixed_estimated_campaign
from helpers import (
    COMMENT_Q,
    EXAMPLES,
    HOSTILE_ARM,
    HOSTILE_FILE,
    HOSTILE_GROUP,
    HOSTILE_RUN,
    IMG_Q,
    SCRIPT_Q,
    RunCampaign,
    hostile_campaign,
    metrics_campaign,
    run_plugin,
    trend_runs,
)

from pytest_explore_suff.buckets import KEYS
from pytest_explore_suff.gates import Gate, evaluate_baseline_metrics, evaluate_metrics
from pytest_explore_suff.html import T_FIELDS, main, render_html, script_json, write_html_atomic
from pytest_explore_suff.occupancy import FAMILIES
from pytest_explore_suff.terminal import half_up

EXAMPLE = EXAMPLES / "new-vs-baseline"


@pytest.fixture(scope="module")
def _hostile(tmp_path_factory: pytest.TempPathFactory) -> dict[str, Any]:
    work = tmp_path_factory.mktemp("hostile")
    campaign = hostile_campaign(work / "camp")
    return run_plugin(work, campaign, "--min-sufficient=0.5", "--min-sufficient=headless-without:0.5")


@pytest.fixture(scope="module")
def _example(tmp_path_factory: pytest.TempPathFactory) -> dict[str, Any]:
    return run_plugin(tmp_path_factory.mktemp("example"), EXAMPLE, "--min-sufficient=0.4")


@pytest.fixture(scope="module")
def _metrics(tmp_path_factory: pytest.TempPathFactory) -> dict[str, Any]:
    work = tmp_path_factory.mktemp("metrics")
    return run_plugin(work, metrics_campaign(work / "camp"))


@pytest.fixture(scope="module")
def _trend(tmp_path_factory: pytest.TempPathFactory) -> tuple[Path, dict[str, Any]]:
    work = tmp_path_factory.mktemp("trend")
    return work, trend_runs(work)


@pytest.fixture
def trend_doc(_trend: tuple[Path, dict[str, Any]]) -> dict[str, Any]:
    return copy.deepcopy(_trend[1])


@pytest.fixture
def metrics_doc(_metrics: dict[str, Any]) -> dict[str, Any]:
    return copy.deepcopy(_metrics)


@pytest.fixture
def hostile_doc(_hostile: dict[str, Any]) -> dict[str, Any]:
    return copy.deepcopy(_hostile)


@pytest.fixture
def example_doc(_example: dict[str, Any]) -> dict[str, Any]:
    return copy.deepcopy(_example)


class Page(HTMLParser):
    """Every start tag with its attributes, and the text of each script element."""

    def __init__(self, text: str) -> None:
        super().__init__(convert_charrefs=True)
        self.tags: list[tuple[str, dict[str, str | None]]] = []
        self.scripts: list[tuple[dict[str, str | None], str]] = []
        self._in_script: dict[str, str | None] | None = None
        self.feed(text)
        self.close()

    def handle_starttag(self, tag: str, attrs: list[tuple[str, str | None]]) -> None:
        self.tags.append((tag, dict(attrs)))
        if tag == "script":
            self._in_script = dict(attrs)
            self.scripts.append((self._in_script, ""))

    def handle_endtag(self, tag: str) -> None:
        if tag == "script":
            self._in_script = None

    def handle_data(self, data: str) -> None:
        if self._in_script is not None:
            attrs, text = self.scripts[-1]
            self.scripts[-1] = (attrs, text + data)

    def data(self) -> dict[str, Any]:
        (text,) = [t for a, t in self.scripts if a.get("type") == "application/json"]
        return json.loads(text)  # type: ignore[no-any-return]


def strip_tags(fragment: str) -> str:
    return re.sub(r"<[^>]+>", "", fragment).strip()


def test_the_page_is_self_contained(hostile_doc: dict[str, Any]) -> None:
    page = render_html(hostile_doc)
    assert not re.search(r"""(src|href|action|xlink:href)\s*=\s*["']?\s*(https?:)?//""", page, re.I)
    assert "http://" not in page and "https://" not in page
    assert "<link" not in page.lower()
    assert "@import" not in page and "url(" not in page
    parsed = Page(page)
    assert all("src" not in attrs for tag, attrs in parsed.tags if tag == "script")
    assert not [tag for tag, _ in parsed.tags if tag in ("img", "iframe", "object", "embed", "link")]


def test_the_csp_pins_the_one_script_by_its_hash(hostile_doc: dict[str, Any]) -> None:
    parsed = Page(render_html(hostile_doc))
    (csp,) = [
        a["content"]
        for t, a in parsed.tags
        if t == "meta" and a.get("http-equiv") == "Content-Security-Policy"
    ]
    assert csp is not None and "default-src 'none'" in csp
    code = [text for attrs, text in parsed.scripts if "type" not in attrs]
    assert len(code) == 1
    digest = base64.b64encode(hashlib.sha256(code[0].encode()).digest()).decode()
    assert f"'sha256-{digest}'" in csp


def test_hostile_queries_and_names_appear_only_escaped(hostile_doc: dict[str, Any]) -> None:
    page = render_html(hostile_doc)
    for raw in (SCRIPT_Q, IMG_Q, COMMENT_Q, HOSTILE_GROUP, "notes-<b>"):
        assert raw not in page
    assert "&lt;svg onload=alert(4)&gt;" in page  # the group, rendered server side, as text
    parsed = Page(page)
    assert [t for t, _ in parsed.tags].count("script") == 2
    assert "img" not in [t for t, _ in parsed.tags]
    assert not [a for _, a in parsed.tags if any(k.startswith("on") for k in a)]
    # The embedded data still holds the exact strings, for the page to show as text.
    data = parsed.data()
    queries = {c[1] for t in data["transcripts"] for c in t[T_FIELDS.index("calls")]}
    assert {SCRIPT_Q, IMG_Q, COMMENT_Q} <= queries
    assert HOSTILE_GROUP in {t[2] for t in data["transcripts"]}


def test_script_json_never_holds_markup_and_round_trips() -> None:
    nasty = ["</script>", "<!--", "-->", "]]>", "&amp;", "\u2028\u2029", "</SCRIPT >", "\x00\x1b[2J"]
    text = script_json({"s": nasty})
    assert "<" not in text and ">" not in text and "&" not in text
    assert json.loads(text) == {"s": nasty}


def test_the_numbers_shown_equal_the_json(example_doc: dict[str, Any]) -> None:
    page = render_html(example_doc)
    cells = re.findall(
        r'<td class="num share-cell" (?:data-arm="([^"]*)"|data-pooled="true") data-bucket="(\w+)" '
        r'data-count="(\d+)" data-share="([^"]*)">(.*?)</td>',
        page,
    )
    arms = example_doc["arms"]
    assert len(cells) == len(KEYS) * (len(arms) + 1)  # + the pooled column
    assert sum(1 for c in cells if not c[0]) == len(KEYS)
    for arm, bucket, count, share, text in cells:
        agg = arms[arm] if arm else example_doc["pooled"]
        assert int(count) == agg["counts"][bucket]
        assert float(share) == agg["shares"][bucket]
        iv = agg["intervals"][bucket]
        assert strip_tags(text) == (
            f"{count} ({half_up(agg['shares'][bucket] * 100)}%) "
            f"[{half_up(iv['lo'] * 100)}–{half_up(iv['hi'] * 100)}]"
        )
    # The dot-and-whisker panels carry the same shares and intervals.
    for arm, share, lo, hi in re.findall(
        r'<g class="dot" data-arm="([^"]*)" data-share="([^"]*)" data-lo="([^"]*)" data-hi="([^"]*)"', page
    ):
        assert float(share) in arms[arm]["shares"].values()
        assert (float(lo), float(hi)) in {(i["lo"], i["hi"]) for i in arms[arm]["intervals"].values()}
    # The comparison: every bucket's difference and interval, as points.
    cmp = example_doc["comparison"]
    rows = re.findall(r'data-kind="comparison".*?</table>', page, re.S)[0]
    for key in KEYS:
        d = cmp["buckets"][key]
        m = re.search(rf'data-bucket="{key}" data-diff="([^"]*)" data-lo="([^"]*)" data-hi="([^"]*)"', rows)
        assert m and (float(m[1]), float(m[2]), float(m[3])) == (d["diff"], d["lo"], d["hi"])
        text = f"{round(d['diff'] * 100):+d} [{round(d['lo'] * 100):+d}, {round(d['hi'] * 100):+d}]"
        assert f'<td class="num mono diff-text">{text}</td>' in rows


def test_the_heat_map_is_summed_from_transcripts_worst_group_first(example_doc: dict[str, Any]) -> None:
    page = render_html(example_doc)
    expected: dict[tuple[str, str], list[int]] = {}
    for t in example_doc["transcripts"]:
        if t["status"] == "classified":
            e = expected.setdefault((t["group"], t["arm"]), [0, 0])
            e[0] += t["counts"]["sufficient"]
            e[1] += t["answered"]
    found = re.findall(
        r'<td class="cell[^"]*"[^>]*data-group="([^"]*)" data-arm="([^"]+)" data-k="(\d+)" '
        r'data-n="(\d+)"',
        page,
    )
    assert {(g, a): [int(k), int(n)] for g, a, k, n in found} == expected
    groups = re.findall(r'<tr class="heat-row[^"]*" data-group="([^"]*)"', page)
    totals = {
        g: [
            sum(v[0] for (gg, _), v in expected.items() if gg == g),
            sum(v[1] for (gg, _), v in expected.items() if gg == g),
        ]
        for g in groups
    }
    shares = [totals[g][0] / totals[g][1] for g in groups]
    assert shares == sorted(shares)
    assert re.search(r'<tr class="heat-row worst" data-group="' + re.escape(groups[0]) + '"', page)
    assert f'id="worst" data-group="{groups[0]}"' in page


def test_gates_show_passed_failed_and_not_applicable(hostile_doc: dict[str, Any]) -> None:
    page = render_html(hostile_doc)
    states = re.findall(r'<li class="gate" data-state="(\w+)">', page)
    expected = [
        "na" if g["passed"] is None else ("passed" if g["passed"] else "failed") for g in hostile_doc["gates"]
    ]
    assert states == expected and "na" in states and "failed" in states
    assert "not applicable" in page and "FAILED" in page


def test_skipped_failing_and_ignored_files_are_in_the_data(hostile_doc: dict[str, Any]) -> None:
    data = Page(render_html(hostile_doc)).data()
    statuses = {t[0]: (t[5], t[6]) for t in data["transcripts"]}
    assert statuses["express/run9/run-headless-with.jsonl"][0] == "skipped"
    assert statuses["express/run3/run-headless-with.jsonl"][0] == "error"
    assert statuses["express/run3/run-headless-with.jsonl"][1]  # the reason
    assert [i[0] for i in data["ignored"]] == [i["path"] for i in hostile_doc["ignored"]]


def test_an_empty_campaign_renders(pytester: pytest.Pytester, run_campaign: RunCampaign) -> None:
    (pytester.path / "empty").mkdir()
    _, doc = run_campaign(pytester.path / "empty", "-p", "no:cacheprovider", json="report.json")
    page = render_html(doc)
    assert "No classified transcripts" in page
    assert Page(page).data()["transcripts"] == []
    assert "Explore sufficiency" in render_html({})  # even a bare document


def test_plugin_version_and_coverage_are_shown_when_present(example_doc: dict[str, Any]) -> None:
    doc = dict(
        example_doc,
        plugin_version="9.9.9",
        coverage={"collected": 48, "ran": 40, "partial": True, "why": "8 deselected (-k)"},
    )
    page = render_html(doc)
    assert '<code id="plugin-version">9.9.9</code>' in page
    assert 'data-partial="true"' in page and "40 of 48" in page and "8 deselected (-k)" in page
    doc["coverage"] = {
        "complete": False,
        "collected": 48,
        "ran": 47,
        "why": ["1 not run (interrupted)"],
        "not_run": [{"path": "x/run-a.jsonl", "why": "not run"}],
    }
    page = render_html(doc)
    assert 'data-partial="true"' in page and "1 not run (interrupted)" in page
    assert Page(page).data()["not_run"] == [["x/run-a.jsonl", "not run"]]
    bare = {k: v for k, v in example_doc.items() if k not in ("plugin_version", "coverage")}
    page = render_html(bare)
    assert 'id="plugin-version"' not in page and 'id="coverage"' not in page


def test_baseline_changes_are_charted(
    pytester: pytest.Pytester, run_campaign: RunCampaign, example_doc: dict[str, Any]
) -> None:
    old = pytester.path / "old.json"
    old.write_text(json.dumps(example_doc))
    args = (f"--explore-suff-baseline={old}", "--max-sufficient-drop=0.05", "-p", "no:cacheprovider")
    _, doc = run_campaign(EXAMPLE, *args, json="report.json")
    page = render_html(doc)
    assert 'id="baseline"' in page
    assert len(re.findall(r'data-kind="baseline"', page)) == len(doc["baseline"]["arms"])
    for cmp in doc["baseline"]["arms"].values():  # the other two metrics, baseline -> now
        a = cmp["allocation"]
        assert (
            f"allocation efficiency {a['old']:.0%} → {a['new']:.0%} ({round(a['diff'] * 100):+d} points)"
            in page
        )
    assert re.findall(r'<li class="gate" data-state="(\w+)">', page) == ["passed", "passed"]


def test_control_characters_are_shown_escaped() -> None:
    doc = {
        "transcripts": [
            {
                "path": "a/run-x.jsonl",
                "arm": "x\x1b[2J",
                "group": "g\u202e",
                "status": "classified",
                "answered": 1,
                "counts": dict.fromkeys(KEYS, 0) | {"sufficient": 1},
                "calls": [
                    {
                        "thread": "main",
                        "query": "q\x07",
                        "files": 1,
                        "bucket": "sufficient",
                        "next": "Edit",
                        "named": False,
                        "truncated": False,
                    }
                ],
            }
        ]
    }
    page = render_html(doc)
    assert "\x1b" not in page and "\u202e" not in page and "\x07" not in page
    assert Page(page).data()["transcripts"][0][T_FIELDS.index("calls")][0][1] == "q\\x07"


def test_write_html_atomic_and_the_command_line(tmp_path: Path, example_doc: dict[str, Any]) -> None:
    out = tmp_path / "sub" / "report.html"
    write_html_atomic(str(out), example_doc)
    assert out.read_text(encoding="utf-8") == render_html(example_doc)
    assert [p.name for p in out.parent.iterdir()] == ["report.html"]
    src = tmp_path / "r.json"
    src.write_text(json.dumps(example_doc), encoding="utf-8")
    assert main([str(src), str(tmp_path / "cli.html")]) == 0
    assert (tmp_path / "cli.html").read_text(encoding="utf-8") == render_html(example_doc)
    assert main([]) == 2


def test_a_large_campaign_stays_compact() -> None:
    call = {
        "thread": "main",
        "query": "some query about a thing",
        "files": 2,
        "bucket": "explore_again",
        "next": "codegraph_explore",
        "named": False,
        "truncated": False,
    }
    counts = dict.fromkeys(KEYS, 0) | {"explore_again": 3}
    doc = {
        "transcripts": [
            {
                "path": f"repo{i % 40}/run{i}/run-new.jsonl",
                "arm": "new",
                "group": f"repo{i % 40}",
                "status": "classified",
                "answered": 3,
                "counts": counts,
                "calls": [call] * 3,
            }
            for i in range(10_000)
        ]
    }
    page = render_html(doc)
    assert len(page) < 4_000_000
    assert page.count("<tr") < 400  # no per-call markup: the rows are built in the browser


@pytest.mark.parametrize("dist", [[], ["-n", "2"]], ids=["plain", "n2"])
def test_the_plugin_writes_the_page_beside_the_json(pytester: pytest.Pytester, dist: list[str]) -> None:
    campaign = hostile_campaign(pytester.path / "camp")
    result = pytester.runpytest(
        f"--explore-suff={campaign}", "--explore-suff-json=r.json", "--explore-suff-html=out/r.html", *dist
    )
    result.stdout.fnmatch_lines(["JSON report: r.json", "HTML report: out/r.html"])
    page = (pytester.path / "out" / "r.html").read_text(encoding="utf-8")
    document = json.loads((pytester.path / "r.json").read_text(encoding="utf-8"))
    assert page == render_html(document)  # the page is the JSON's document, rendered
    assert SCRIPT_Q not in page


def test_the_html_path_comes_from_the_ini_relative_to_it(pytester: pytest.Pytester) -> None:
    campaign = hostile_campaign(pytester.path / "camp")
    (pytester.path / "ci").mkdir()
    (pytester.path / "ci" / "pytest.ini").write_text("[pytest]\nexplore_suff_html = pages/report.html\n")
    pytester.runpytest("-c", "ci/pytest.ini", f"--explore-suff={campaign}")
    assert (pytester.path / "ci" / "pages" / "report.html").is_file()


def test_an_unwritable_html_path_fails_the_run_with_exit_3(pytester: pytest.Pytester) -> None:
    campaign = hostile_campaign(pytester.path / "camp")
    (pytester.path / "taken").write_text("a file, not a folder")
    result = pytester.runpytest(
        f"--explore-suff={campaign}", "-k", "not run3", "--explore-suff-html=taken/r.html"
    )
    assert result.ret == pytest.ExitCode.INTERNAL_ERROR
    result.stdout.fnmatch_lines(["explore-suff: could not write the HTML report taken/r.html: *"])


def test_pytest_html_gets_the_per_arm_summary(pytester: pytest.Pytester) -> None:
    pytest.importorskip("pytest_html")
    campaign = hostile_campaign(pytester.path / "camp")
    pytester.runpytest(f"--explore-suff={campaign}", "--html=ph.html", "--self-contained-html")
    page = (pytester.path / "ph.html").read_text(encoding="utf-8")
    assert "Explore sufficiency" in page
    assert "headless-with" in page and "moved on / answered" in page


def test_pytest_html_gets_the_metric_tables_too(pytester: pytest.Pytester) -> None:
    pytest.importorskip("pytest_html")
    campaign = metrics_campaign(pytester.path / "camp")
    pytester.runpytest(f"--explore-suff={campaign}", "--html=ph.html", "--self-contained-html")
    page = (pytester.path / "ph.html").read_text(encoding="utf-8")
    assert "allocation efficiency (share of returned characters" in page
    assert "residual context occupancy at the end" in page and "retrieval residual" in page


# -- allocation efficiency and residual context occupancy (#19) ---------------------------------------


def attrs(page: str, tag: str, cls: str) -> list[dict[str, str | None]]:
    """The attributes of every ``tag`` element whose class list holds ``cls``."""
    return [a for t, a in Page(page).tags if t == tag and cls in (a.get("class") or "").split()]


def test_metrics_campaign_has_both_metrics(metrics_doc: dict[str, Any]) -> None:
    """The fixture is what the metric tests need: both metrics, every credit kind, a null of each."""
    arms = metrics_doc["arms"]
    assert arms["headless-with"]["allocation"] and arms["headless-with"]["occupancy"]
    assert arms["headless-without"]["allocation"] is None and arms["headless-without"]["occupancy"]
    vias = {f["via"] for t in metrics_doc["transcripts"] if t["allocation"] for f in t["allocation"]["files"]}
    assert vias == {"path", "symbol", None}
    assert any(t["occupancy"] is None and t["allocation"] for t in metrics_doc["transcripts"])
    assert metrics_doc["metrics_comparison"]["residual"]["compared"] == 3


def test_allocation_numbers_in_the_page_equal_the_json(metrics_doc: dict[str, Any]) -> None:
    page = render_html(metrics_doc)
    rows = {a["data-arm"]: a for a in attrs(page, "tr", "alloc-row")}
    assert set(rows) == set(metrics_doc["arms"])
    a = metrics_doc["arms"]["headless-with"]["allocation"]
    row = rows["headless-with"]
    assert float(row["data-share"] or "") == a["efficiency"]["share"]
    assert float(row["data-path"] or "") == a["efficiency_path"]
    assert (row["data-envelope"], row["data-used"], row["data-used-path"], row["data-calls"]) == (
        str(a["envelope"]), str(a["used"]), str(a["used_path"]), str(a["calls"]))  # fmt: skip
    eff = a["efficiency"]
    text = f"{eff['share']:.0%} [{eff['lo'] * 100:.0f}–{eff['hi'] * 100:.0f}]"
    m = re.search(r'<tr class="alloc-row" data-arm="headless-with".*?</tr>', page, re.S)
    assert m
    assert f'<td class="num eff">{text}</td>' in m[0]
    assert f'<td class="num eff-path">{a["efficiency_path"]:.0%}</td>' in m[0]
    assert f"{a['used']:,} / {a['envelope']:,}" in m[0]
    per_run = a["per_run"]
    assert f"{per_run['median']:.0%} [{per_run['min']:.0%}–{per_run['max']:.0%}]" in m[0]
    (dot,) = [d for d in attrs(page, "g", "alloc-dot") if d["data-arm"] == "headless-with"]
    assert (float(dot["data-lo"] or ""), float(dot["data-hi"] or "")) == (eff["lo"], eff["hi"])
    # The arm without explore calls says why it has no figure.
    assert rows["headless-without"]["class"] == "alloc-row none"
    assert "no allocation figure: no explore response with a returned-file section" in page


def test_occupancy_numbers_in_the_page_equal_the_json(metrics_doc: dict[str, Any]) -> None:
    page = render_html(metrics_doc)
    rows = {a["data-arm"]: a for a in attrs(page, "tr", "occ-row")}
    for arm, agg in metrics_doc["arms"].items():
        o, row = agg["occupancy"], rows[arm]
        for key in ("ctx_final", "residual_tool", "residual_file_access", "residual_retrieval", "share"):
            assert float(row[f"data-{key.replace('_', '-')}"] or "") == o[key]["median"]
        assert float(row["data-ctx-base"] or "") == o["ctx_base"]
        m = re.search(rf'<tr class="occ-row" data-arm="{arm}".*?</tr>', page, re.S)
        assert m
        rt = o["residual_retrieval"]
        assert f"{rt['median']:,.0f} [{rt['min']:,.0f}–{rt['max']:,.0f}]" in m[0]
        # The stacked bar: each family's mean residual over the arm's records with token counts.
        recs = [t["occupancy"] for t in metrics_doc["transcripts"] if t["arm"] == arm and t["occupancy"]]
        (bar,) = [b for b in attrs(page, "g", "occ-bar") if b["data-arm"] == arm]
        assert int(bar["data-n"] or "") == len(recs) == o["transcripts"]
        assert float(bar["data-ctx"] or "") == o["ctx_final"]["median"]
        segs = re.search(rf'<g class="occ-bar" data-arm="{arm}".*?</g>', page, re.S)
        assert segs
        found = dict(re.findall(r'data-family="(\w+)" data-mean="([^"]*)"', segs[0]))
        expected = {f: sum(r["residual"][f] for r in recs) / len(recs) for f in FAMILIES}
        assert {f: float(v) for f, v in found.items()} == {f: v for f, v in expected.items() if v > 0}
    assert "means add up, medians do not" in page  # the page says which aggregate the bars draw


def test_the_residual_chart_equals_the_metrics_comparison(metrics_doc: dict[str, Any]) -> None:
    page = render_html(metrics_doc)
    r = metrics_doc["metrics_comparison"]["residual"]
    rows = attrs(page, "tr", "res-row")
    assert [(x["data-group"], float(x["data-a"] or ""), float(x["data-b"] or ""), float(x["data-pct"] or ""))
            for x in rows] == [(g["group"], g["a"], g["b"], g["pct"]) for g in r["groups"]]  # fmt: skip
    for g in r["groups"]:
        assert f'<td class="num mono">{g["pct"]:+.0f}%</td>' in page
    (mean,) = attrs(page, "tr", "res-mean")
    assert float(mean["data-pct"] or "") == r["mean_pct"]
    assert (float(mean["data-lo"] or ""), float(mean["data-hi"] or "")) == (
        r["interval"]["lo"],
        r["interval"]["hi"],
    )
    sentence = re.search(
        r'<p class="finding" id="residual-sentence" data-direction="(\w+)">(.*?)</p>', page, re.S
    )
    assert sentence and sentence[1] == r["direction"] == "higher"
    assert (
        f"retrieval residual {abs(r['mean_pct']):.0f}% higher with headless-with than with headless-without"
        in sentence[2]
    )
    (overhead,) = [a for t, a in Page(page).tags if a.get("id") == "fixed-overhead"]
    assert float(overhead["data-tokens"] or "") == r["fixed_overhead"]
    assert f"{r['fixed_overhead']:+,.0f} tokens" in page


def test_a_lower_residual_reads_lower(metrics_doc: dict[str, Any]) -> None:
    """The sign in words, never a bare number: a tool arm that holds less says lower."""
    r = metrics_doc["metrics_comparison"]["residual"]
    for g in r["groups"]:
        g["a"], g["b"], g["pct"], g["direction"] = g["b"], g["a"], -g["pct"] / 2, "lower"
    r["mean_pct"], r["direction"] = -r["mean_pct"] / 2, "lower"
    r["interval"] = {"lo": r["mean_pct"] - 5, "hi": r["mean_pct"] + 5}
    r["fixed_overhead"] = -r["fixed_overhead"]
    page = render_html(metrics_doc)
    sentence = re.search(r'id="residual-sentence" data-direction="lower">(.*?)</p>', page, re.S)
    assert sentence and "higher" not in sentence[1]
    assert f"retrieval residual {abs(r['mean_pct']):.0f}% lower with headless-with" in sentence[1]
    assert f"{r['fixed_overhead']:+,.0f} tokens" in page and "-3,075" in page
    assert re.findall(r'<td class="verdict">\s*lower\s*</td>', page)


def test_the_drill_down_carries_each_call_and_file_and_the_occupancy(metrics_doc: dict[str, Any]) -> None:
    page = render_html(metrics_doc)
    data = Page(page).data()
    ci, ai, oi = T_FIELDS.index("calls"), T_FIELDS.index("allocation"), T_FIELDS.index("occupancy")
    by_path = {t[0]: t for t in data["transcripts"]}
    assert [f["key"] for f in data["families"]] == list(FAMILIES)
    for rec in metrics_doc["transcripts"]:
        t = by_path[rec["path"]]
        a = rec["allocation"]
        if a is None:
            assert t[ai] == rec["allocation_reason"]
            assert all(c[7] is None for c in t[ci])
        else:
            assert t[ai][:8] == [a["envelope"], a["used"], a["used_path"], a["efficiency"],
                                 a["efficiency_path"], a["files_returned"], a["files_used"],
                                 1 if a["has_answer"] else 0]  # fmt: skip
            via = {None: 0, "path": 1, "symbol": 2}
            assert t[ai][8] == [[f["path"], f["chars"], f["calls"], via[f["via"]], f["symbol"] or ""]
                                for f in a["files"]]  # fmt: skip
            per_call = {c["id"]: c for c in a["calls"]}
            for call, row in zip(rec["calls"], t[ci], strict=True):
                c = per_call[call["id"]]
                assert row[7] == [c["efficiency"], c["envelope"], c["used"], c["used_path"], c["files"],
                                  c["files_used"]]  # fmt: skip
        o = rec["occupancy"]
        if o is None:
            assert t[oi] == rec["occupancy_reason"] != ""
        else:
            head = ["ctx_final", "ctx_base", "chars_per_token", "calibrated", "dispersion", "turns",
                    "compactions", "evicted", "window"]  # fmt: skip
            assert t[oi][:9] == [int(o[k]) if k == "calibrated" else o[k] for k in head]
            assert t[oi][9] == [o["residual"][f] for f in FAMILIES]
            assert t[oi][10] == [o["contributed"][f] for f in FAMILIES]
            assert t[oi][11:] == [o["residual_file_access"], o["residual_retrieval"], o["share"]]
    # A returned path with markup in it is data for textContent, never markup in the page.
    assert HOSTILE_FILE not in page
    assert not [a for _, a in Page(page).tags if any(k.startswith("on") for k in a)]
    assert HOSTILE_FILE in {f[0] for t in data["transcripts"] if isinstance(t[ai], list) for f in t[ai][8]}


def without_token_counts(doc: dict[str, Any]) -> dict[str, Any]:
    """The report of the same campaign, had its logs recorded no token counts."""
    doc = copy.deepcopy(doc)
    for t in doc["transcripts"]:
        t["occupancy"], t["occupancy_reason"] = (
            None,
            "no token counts in the log (no model request records its usage)",
        )
    for agg in (*doc["arms"].values(), doc["pooled"]):
        agg["occupancy"] = None
    doc["metrics_comparison"]["residual"] = {
        "groups": [], "mean_pct": None, "interval": None, "direction": None, "agreeing": 0, "compared": 0,
        "fixed_overhead": None,
    }  # fmt: skip
    return doc


def test_null_metrics_render_their_reason(example_doc: dict[str, Any]) -> None:
    """No token counts: every arm and transcript says so, nothing reads as zero."""
    example_doc = without_token_counts(example_doc)
    page = render_html(example_doc)
    assert all(a["class"] == "occ-row none" for a in attrs(page, "tr", "occ-row"))
    assert "no occupancy figure: no transcript of this arm records token counts" in page
    assert 'id="residual-none"' in page and "no figure (an arm without token counts)" in page
    data = Page(page).data()
    oi = T_FIELDS.index("occupancy")
    reasons = {t[oi] for t in data["transcripts"]}
    assert reasons == {t["occupancy_reason"] for t in example_doc["transcripts"]}
    assert all(isinstance(r, str) and r for r in reasons)
    # The allocation difference of the arm pair is there all the same.
    alloc = example_doc["metrics_comparison"]["allocation"]
    (line,) = [a for t, a in Page(page).tags if a.get("id") == "allocation-diff"]
    assert float(line["data-diff"] or "") == alloc["diff"]
    # A document from before #19 (no metrics at all) still renders, without the arm-pair chart.
    old = copy.deepcopy(example_doc)
    old.pop("metrics_comparison")
    for agg in old["arms"].values():
        agg.pop("allocation"), agg.pop("occupancy")
    for t in old["transcripts"]:
        for k in ("allocation", "allocation_reason", "occupancy", "occupancy_reason"):
            t.pop(k)
    page = render_html(old)
    assert 'id="residual"' not in page and "no allocation figure" in page
    assert {t[oi] for t in Page(page).data()["transcripts"]} == {"no occupancy figure"}


def test_metric_gates_are_worded(metrics_doc: dict[str, Any]) -> None:
    arms = metrics_doc["arms"]
    outcomes = evaluate_metrics(
        [Gate("allocation", "min", 0.9), Gate("residual_share", "max", 0.5),
         Gate("allocation", "min", 0.5, arm="headless-without")],
        arms, on="bound",
    )  # fmt: skip
    changes = {"headless-with": {"allocation": {"diff": -0.05}, "residual": {"growth": 0.25}}}
    outcomes += evaluate_baseline_metrics(
        [Gate("allocation", "max_drop", 0.1), Gate("residual", "max_growth", 0.2)], changes, arms
    )
    metrics_doc["gates"] = [o.to_dict() for o in outcomes]
    page = render_html(metrics_doc)
    states = re.findall(r'<li class="gate" data-state="(\w+)">', page)
    assert states == ["na" if o.passed is None else ("passed" if o.passed else "failed") for o in outcomes]
    items = [strip_tags(li) for li in re.findall(r'<li class="gate".*?</li>', page, re.S)]
    eff = arms["headless-with"]["allocation"]["efficiency"]
    assert any(
        i.startswith("✗ FAILED") and "--min-allocation" in i
        and f"allocation efficiency {eff['share']:.3f} (lower 95% bound {eff['lo']:.3f}) ≥ 0.9" in i
        for i in items
    )  # fmt: skip
    assert any("--max-residual-share" in i and "median retrieval residual share of the final context" in i
               and "≤ 0.5" in i for i in items)  # fmt: skip
    assert any("arm headless-without" in i and "not applicable" in i and "no allocation figure" in i
               for i in items)  # fmt: skip
    assert any("--max-allocation-drop" in i and "fell by 0.050 from the baseline ≤ 0.1" in i for i in items)
    assert any("--max-residual-growth" in i and "grew by +25.0% from the baseline ≤ 0.2 (20%)" in i
               and "FAILED" in i for i in items)  # fmt: skip
    assert "residual_share share" not in page and "allocation share" not in page


@pytest.mark.parametrize(
    "path, junk",
    [
        (("metrics_comparison", "residual", "groups"), 3),
        (("metrics_comparison", "residual", "interval"), {"lo": 1.0, "hi": "x"}),
        (("metrics_comparison", "residual", "mean_pct"), float("nan")),
        (("arms", "headless-with", "occupancy", "ctx_final"), 7),
        (("arms", "headless-with", "allocation", "efficiency"), None),
        (("transcripts", 0, "allocation", "calls"), 1.5),
        (("transcripts", 0, "allocation", "files"), {"path": "x"}),
        (("transcripts", 0, "occupancy", "residual"), "x"),
        (("gates",), 1),
    ],
)
def test_a_malformed_metric_field_draws_empty_not_a_crash(
    metrics_doc: dict[str, Any], path: tuple[Any, ...], junk: Any
) -> None:
    cur: Any = metrics_doc
    for k in path[:-1]:
        cur = cur[k]
    cur[path[-1]] = junk
    page = render_html(metrics_doc)
    assert 'id="metrics"' in page and Page(page).data()["transcripts"]


# -- #29: the page's points ---------------------------------------------------------------------


def test_a_share_of_k_eighths_rounds_half_up_where_the_server_renders_it(
    example_doc: dict[str, Any],
) -> None:
    # 1/8 and 5/8 are ties in whole percents: the script's Math.round shows 13% and 63%, and
    # the server-rendered parts must say the same (Python's format said 12% and 62%).
    arm = sorted(example_doc["arms"])[0]
    agg = example_doc["arms"][arm]
    agg["answered"], agg["counts"] = (
        8,
        dict.fromkeys(KEYS, 0) | {"sufficient": 1, "search": 5, "read_missed": 2},
    )
    agg["shares"] = {k: agg["counts"][k] / 8 for k in KEYS}
    page = render_html(example_doc)
    shown = dict(re.findall(
        rf'<td class="num share-cell" data-arm="{re.escape(arm)}" data-bucket="(\w+)" [^>]*>'
        r'\d+ \(<span class="pct">([^<]*)</span>', page,
    ))  # fmt: skip
    assert (shown["sufficient"], shown["search"], shown["read_missed"]) == ("13%", "63%", "25%")
    seg = re.search(r'<g class="seg" data-bucket="sufficient" data-share="0.125">.*?</g>', page, re.S)
    assert seg is not None and "(13%)" in seg.group()


def test_an_arm_named_pooled_is_told_apart_from_the_pooled_column(metrics_doc: dict[str, Any]) -> None:
    doc = json.loads(json.dumps(metrics_doc).replace('"headless-without"', '"(pooled)"'))
    page = render_html(doc)
    # The pooled column carries no arm name; the arm keeps its own, marked where it is shown.
    for table in ("bars", "arm-table", "figures"):
        body = re.search(rf'<table class="{table}">.*?</table>', page, re.S)
        assert body is not None
        text = body.group()
        assert text.count('data-pooled="true"') >= 1
        assert "(pooled) [arm]" in text
    names = re.findall(r'<tr class="arm-bar[^"]*" [^>]*>\s*<td class="name"[^>]*>([^<]*)<', page)
    assert names == ["headless-with", "(pooled) [arm]", "(pooled)"]
    assert 'data-arm="(pooled)"' in page  # the arm's rows, for the script and the tests
    assert len(set(names)) == len(names)


def test_the_judged_calls_pill_counts_what_the_figures_count(example_doc: dict[str, Any]) -> None:
    # A raced or contaminated run is skipped: its record keeps its calls, the figures do not.
    doc = example_doc
    skipped = next(t for t in doc["transcripts"] if t["status"] == "classified" and t["calls"])
    skipped.update(status="skipped", reason="raced (a tool result says 'No such tool available')")
    n = sum(len(t["calls"]) for t in doc["transcripts"] if t["status"] == "classified")
    assert n < sum(len(t["calls"]) for t in doc["transcripts"])
    page = render_html(doc)
    assert f'id="n-calls" data-n="{n}">{n} judged call' in page


def test_one_answered_call_is_singular(example_doc: dict[str, Any]) -> None:
    doc = example_doc
    doc["transcripts"] = [t | {"status": "classified", "answered": 1, "counts": dict.fromkeys(KEYS, 0)}
                          for t in doc["transcripts"][:1]]  # fmt: skip
    doc["transcripts"][0]["calls"] = doc["transcripts"][0]["calls"][:1]
    page = render_html(doc)
    assert 'title="0 of 1 answered call sufficient"' in page  # the heat map's cell
    assert "(0 of 1 answered call)" in page  # look here first
    assert "/1 calls" not in page and "0/1 call<" in page


# -- the trend chart ----------------------------------------------------------------------------------


def trend_points(page: str) -> dict[tuple[str, str, int], dict[str, Any]]:
    """Each drawn trend point by (arm, metric, run): its attributes, and the circles and
    lines drawn inside its group, in order."""
    out: dict[tuple[str, str, int], dict[str, Any]] = {}
    arm = metric = ""
    current: dict[str, Any] | None = None
    for tag, attrs in Page(page).tags:
        cls = attrs.get("class") or ""
        if tag == "div" and "trend-arm" in cls.split():
            arm = str(attrs["data-arm"])
        elif tag == "div" and "trend-panel" in cls.split():
            metric = str(attrs["data-metric"])
        if tag == "g" and cls == "trend-point":
            current = {"attrs": attrs, "circle": [], "line": []}
            out[(arm, metric, int(str(attrs["data-run"])))] = current
        elif tag == "g" or tag == "svg":
            current = None
        elif current is not None and tag in ("circle", "line"):
            current[tag].append(attrs)
    return out


def test_the_trend_chart_draws_every_point_of_the_json_with_its_interval(trend_doc: dict[str, Any]) -> None:
    page = render_html(trend_doc)
    drawn = trend_points(page)
    expected = {
        (arm, metric, i): p
        for arm, data in trend_doc["trend"]["arms"].items()
        for metric, series in data["points"].items()
        for i, p in enumerate(series)
        if p is not None
    }
    assert set(drawn) == set(expected)
    assert {m for _, m, _ in drawn} >= {*KEYS, "allocation", "residual_share"}
    labels = [r["label"] for r in trend_doc["trend"]["runs"]]
    for key, p in expected.items():
        a = drawn[key]["attrs"]
        assert float(a["data-share"]) == p["share"] and a["data-label"] == labels[key[2]]
        if p["lo"] is None:
            assert "data-lo" not in a and len(drawn[key]["line"]) == 0
        else:
            assert (float(a["data-lo"]), float(a["data-hi"])) == (p["lo"], p["hi"])
            # the bar runs from the upper bound to the lower one, through the point (y grows down)
            bar = drawn[key]["line"][0]
            cy = float(drawn[key]["circle"][-1]["cy"])
            assert float(bar["y1"]) <= cy <= float(bar["y2"])
        beyond = bool(p["change"] and p["change"]["beyond_noise"])
        assert a["data-beyond"] == ("true" if beyond else "false")
        assert len(drawn[key]["circle"]) == (2 if beyond else 1)  # the ring marks the change
    # Within a panel, a higher share is drawn higher.
    for (arm, metric, i), d in drawn.items():
        for (arm2, metric2, j), e in drawn.items():
            if (arm, metric) == (arm2, metric2) and expected[arm, metric, i]["share"] > expected[
                arm2, metric2, j
            ]["share"]:
                assert float(d["circle"][-1]["cy"]) < float(e["circle"][-1]["cy"])


def test_the_trend_chart_marks_the_change_beyond_noise_and_the_latest_against_the_best(
    trend_doc: dict[str, Any],
) -> None:
    page = render_html(trend_doc)
    drawn = trend_points(page)
    marked = {k: d["attrs"] for k, d in drawn.items() if d["attrs"]["data-beyond"] == "true"}
    # arm with: sufficient fell from 100% to 7% (worse), Read-returned rose to 93% (worse too:
    # lower is better for every miss bucket)
    assert marked.keys() == {("with", "sufficient", 2), ("with", "read_returned", 2)}
    assert marked["with", "sufficient", 2]["data-direction"] == "down"
    assert marked["with", "read_returned", 2]["data-direction"] == "up"
    assert {a["data-worse"] for a in marked.values()} == {"true"}
    (line,) = re.findall(r'<li data-metric="sufficient"[^>]*data-worse="true"[^>]*>([^<]*)</li>', page)
    vs = trend_doc["trend"]["arms"]["with"]["latest_vs_best"]["sufficient"]
    assert (
        f"latest {half_up(vs['latest'] * 100)}%" in line and f"{half_up(vs['diff'] * 100):+d} points" in line
    )
    assert "against the best earlier run, 89abcdef" in line and "worse beyond noise" in line


def test_the_trend_names_runs_by_name_or_commit_and_escapes_every_name(trend_doc: dict[str, Any]) -> None:
    page = render_html(trend_doc)
    assert HOSTILE_RUN not in page and HOSTILE_ARM not in page
    assert "&lt;img src=x onerror=alert(6)&gt;" in page and "&lt;b onmouseover=alert(5)&gt;" in page
    parsed = Page(page)
    assert "img" not in [t for t, _ in parsed.tags]
    assert not [a for _, a in parsed.tags if any(k.startswith("on") for k in a)]
    rows = [a["data-label"] for t, a in parsed.tags if t == "tr" and "data-label" in a]
    assert rows == ["nightly-1", "89abcdef", HOSTILE_RUN] == [r["label"] for r in trend_doc["trend"]["runs"]]
    axis = re.findall(r'<text class="tick run-label"[^>]*><title>([^<]*)</title>([^<]*)</text>', page)
    # cut to 12 characters on the axis (whole in its tooltip), escaped
    assert {text for _, text in axis} == {"nightly-1", "89abcdef", "&lt;img src=x …"}
    assert any("commit 89abcdef0123456789abcdef0123456789abcdef" in title for title, _ in axis)
    # still one script, pinned by its hash: the chart is drawn here, not by the page
    (csp,) = [
        a["content"]
        for t, a in parsed.tags
        if t == "meta" and a.get("http-equiv") == "Content-Security-Policy"
    ]
    (code,) = [text for attrs, text in parsed.scripts if "type" not in attrs]
    assert f"'sha256-{base64.b64encode(hashlib.sha256(code.encode()).digest()).decode()}'" in str(csp)


def test_a_report_without_a_trend_or_with_a_malformed_one_has_no_chart(example_doc: dict[str, Any]) -> None:
    assert example_doc["trend"] is None
    page = render_html(example_doc)
    assert 'id="trend"' not in page and 'href="#trend"' not in page
    for bad in ({"runs": "x"}, {"runs": []}, [1]):
        example_doc["trend"] = bad
        assert 'id="trend"' not in render_html(example_doc)
    series = [{"share": "y"}, {"share": 0.5, "change": {"diff": "z"}}, {"share": 0.1}]
    example_doc["trend"] = {"runs": [{"label": "a"}, 7], "arms": {"x": {"points": {"sufficient": series}}}}
    drawn = trend_points(render_html(example_doc))
    assert set(drawn) == {("x", "sufficient", 1)}  # a point past the runs, or without a number: none


def test_explore_suff_html_draws_the_trend_of_a_saved_report(_trend: tuple[Path, dict[str, Any]]) -> None:
    work, doc = _trend
    (saved,) = sorted((work / ".explore-suff").glob("0003_*.json"))
    exe = Path(sys.executable).with_name("explore-suff")
    out = work / "page.html"
    result = subprocess.run([str(exe), "html", "3", "-o", str(out)], cwd=work, capture_output=True, text=True,
                            check=False)  # fmt: skip
    assert result.returncode == 0, result.stderr
    assert json.loads(saved.read_text(encoding="utf-8"))["trend"] == doc["trend"]
    page = out.read_text(encoding="utf-8")
    assert trend_points(page) == trend_points(render_html(doc)) != {}


@pytest.fixture(scope="module")
def _mixed(tmp_path_factory: pytest.TempPathFactory) -> dict[str, Any]:
    work = tmp_path_factory.mktemp("mixed")
    return run_plugin(work, mixed_estimated_campaign(work / "camp"))


def test_the_agents_of_each_arm_are_shown_and_a_mixed_arm_is_marked(_mixed: dict[str, Any]) -> None:
    doc = copy.deepcopy(_mixed)
    assert doc["arms"]["with"]["agents"] == {"copilot": 1, "qwen": 1}
    # An agent's name comes from a reader (a third party's too): shown only as text.
    doc["arms"]["without"]["agents"] = {"<b>x</b>": 1}
    page = render_html(doc)
    assert "<b>x</b>" not in page and "&lt;b&gt;x&lt;/b&gt; (1)" in page
    cells = {a.get("data-arm") or "pooled": a for a in attrs(page, "td", "agents")}
    assert cells["with"].get("data-mixed") == "true"
    assert "data-mixed" not in cells["without"] and "data-mixed" not in cells["pooled"]
    row = re.search(r'<tr class="agents-row">.*?</tr>', page, re.S)
    assert row
    assert strip_tags(row[0]).split("\n")[0].startswith("agents (transcripts)")
    assert "copilot (1), qwen (1) mixes agents" in strip_tags(row[0])
    (note,) = re.findall(r'<p class="note mixed-note" data-arm="([^"]*)">(.*?)</p>', page, re.S)
    assert note[0] == "with"
    assert strip_tags(note[1]) == "Arm with mixes agents: copilot (1), qwen (1); its shares pool them."
    bar = re.search(r'<tr class="arm-bar" data-arm="with".*?</td>', page, re.S)
    assert bar and "copilot (1), qwen (1)" in bar[0] and "mixes agents" in bar[0]
    # Each transcript's agent travels in the drill-down, for the page to show beside its format.
    data = Page(page).data()
    agent, kind = T_FIELDS.index("agent"), T_FIELDS.index("kind")
    assert sorted((t[agent], t[kind]) for t in data["transcripts"]) == [
        ("claude", "stream-json"),
        ("copilot", "copilot"),
        ("qwen", "qwen"),
    ]


def test_an_arm_of_one_agent_is_not_marked_mixed(example_doc: dict[str, Any]) -> None:
    page = render_html(example_doc)
    assert "mixed-note" not in page and "data-mixed" not in page
    cells = attrs(page, "td", "agents")
    assert len(cells) == len(example_doc["arms"]) + 1  # and the pooled column


def test_estimated_occupancy_is_marked_in_the_page(_mixed: dict[str, Any]) -> None:
    doc = copy.deepcopy(_mixed)
    page = render_html(doc)
    rows = {a["data-arm"]: a for a in attrs(page, "tr", "occ-row")}
    assert rows["with"]["data-estimated"] == "1" and rows["without"]["data-estimated"] == "0"
    for arm, marked in (("with", True), ("without", False)):
        m = re.search(rf'<tr class="occ-row" data-arm="{arm}".*?</tr>', page, re.S)
        assert m
        figures = re.findall(r'<td class="num">(.*?)</td>', m[0], re.S)[1:]
        assert len(figures) == 6 and all(f.startswith("~") == marked for f in figures), figures
    assert "(1 estimated)" in page
    assert re.search(r'<p class="note" id="occupancy-estimated">~ includes estimated figures', page)
    for agg in doc["arms"].values():
        agg["occupancy"]["estimated"] = 0
    page = render_html(doc)
    assert 'id="occupancy-estimated"' not in page and "estimated)" not in page
