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
from builders import Run, allocation_run, no_explore_run, response, sufficient_run

from pytest_explore_suff.buckets import KEYS
from pytest_explore_suff.html import T_FIELDS, main, render_html, script_json, write_html_atomic

SCRIPT_Q = "</script><script>alert(1)</script>"
IMG_Q = "<img src=x onerror=alert(1)>"
COMMENT_Q = "<!-- <script>alert(3)</script>"
HOSTILE_GROUP = "<svg onload=alert(4)>"
EXAMPLE = Path(__file__).resolve().parent.parent / "examples" / "new-vs-baseline"


def hostile_campaign(root: Path) -> Path:
    """Two arms, two repos (one named like markup), hostile queries, a raced run, a failing file."""
    run = Run()
    run.step(run.explore(SCRIPT_Q), response(["lib/a.js"]))
    run.step(run.use("Read", file_path="/t/lib/a.js"))
    run.step(run.explore(IMG_Q), response(["lib/b.js"]))
    run.step(run.use("Grep", pattern="x"))
    run.step(run.explore(COMMENT_Q), response(["lib/c.js"]))
    run.step(run.use("Edit", file_path="lib/c.js"))
    run.finish()
    run.write(root / "express" / "run1" / "run-headless-with.jsonl")
    sufficient_run("fine query").write(root / "express" / "run2" / "run-headless-with.jsonl")
    no_explore_run().write(root / "express" / "run1" / "run-headless-without.jsonl")
    allocation_run("odd repo").write(root / HOSTILE_GROUP / "run1" / "run-headless-with.jsonl")
    raced = Run()
    raced.step(
        raced.explore("raced q"),
        "Error: No such tool available: mcp__codegraph__codegraph_explore",
        is_error=True,
    )
    raced.write(root / "express" / "run9" / "run-headless-with.jsonl")
    bad = root / "express" / "run3" / "run-headless-with.jsonl"
    bad.parent.mkdir(parents=True)
    bad.write_bytes(b"\x00\x01garbage\n")
    (root / "express" / "notes-<b>.jsonl").write_text('{"query": "x"}\n')
    return root


def plugin_report(pytester: pytest.Pytester, campaign: Path, *args: str) -> dict[str, Any]:
    pytester.runpytest(
        f"--explore-suff={campaign}", "--explore-suff-json=report.json", "-p", "no:cacheprovider", *args
    )
    return json.loads((pytester.path / "report.json").read_text(encoding="utf-8"))  # type: ignore[no-any-return]


def run_plugin(workdir: Path, campaign: Path, *args: str) -> dict[str, Any]:
    """The plugin run once in a fresh interpreter (the documents are shared by a module's tests)."""
    report = workdir / "report.json"
    cmd = [
        sys.executable,
        "-m",
        "pytest",
        "-p",
        "no:cacheprovider",
        "-q",
        "--rootdir",
        str(workdir),
        f"--explore-suff={campaign}",
        f"--explore-suff-json={report}",
        *args,
    ]
    subprocess.run(cmd, cwd=workdir, check=False, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    return json.loads(report.read_text(encoding="utf-8"))  # type: ignore[no-any-return]


@pytest.fixture(scope="module")
def _hostile(tmp_path_factory: pytest.TempPathFactory) -> dict[str, Any]:
    work = tmp_path_factory.mktemp("hostile")
    campaign = hostile_campaign(work / "camp")
    return run_plugin(work, campaign, "--min-sufficient=0.5", "--min-sufficient=headless-without:0.5")


@pytest.fixture(scope="module")
def _example(tmp_path_factory: pytest.TempPathFactory) -> dict[str, Any]:
    return run_plugin(tmp_path_factory.mktemp("example"), EXAMPLE, "--min-sufficient=0.4")


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
        r'<td class="num share-cell" data-arm="([^"]*)" data-bucket="(\w+)" data-count="(\d+)" '
        r'data-share="([^"]*)">(.*?)</td>',
        page,
    )
    arms = example_doc["arms"]
    assert len(cells) == len(KEYS) * (len(arms) + 1)  # + the pooled column
    for arm, bucket, count, share, text in cells:
        agg = example_doc["pooled"] if arm == "(pooled)" else arms[arm]
        assert int(count) == agg["counts"][bucket]
        assert float(share) == agg["shares"][bucket]
        iv = agg["intervals"][bucket]
        assert strip_tags(text) == (
            f"{count} ({agg['shares'][bucket]:.0%}) [{iv['lo'] * 100:.0f}–{iv['hi'] * 100:.0f}]"
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


def test_an_empty_campaign_renders(pytester: pytest.Pytester) -> None:
    (pytester.path / "empty").mkdir()
    doc = plugin_report(pytester, pytester.path / "empty")
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


def test_baseline_changes_are_charted(pytester: pytest.Pytester, example_doc: dict[str, Any]) -> None:
    old = pytester.path / "old.json"
    old.write_text(json.dumps(example_doc))
    doc = plugin_report(pytester, EXAMPLE, f"--explore-suff-baseline={old}", "--max-sufficient-drop=0.05")
    page = render_html(doc)
    assert 'id="baseline"' in page
    assert len(re.findall(r'data-kind="baseline"', page)) == len(doc["baseline"]["arms"])
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
    result.stdout.fnmatch_lines(["explore-suff: could not write taken/r.html: *"])


def test_pytest_html_gets_the_per_arm_summary(pytester: pytest.Pytester) -> None:
    pytest.importorskip("pytest_html")
    campaign = hostile_campaign(pytester.path / "camp")
    pytester.runpytest(f"--explore-suff={campaign}", "--html=ph.html", "--self-contained-html")
    page = (pytester.path / "ph.html").read_text(encoding="utf-8")
    assert "Explore sufficiency" in page
    assert "headless-with" in page and "moved on / answered" in page
