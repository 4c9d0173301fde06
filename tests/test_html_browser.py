"""The HTML report in a real browser: headless Chromium driven by selenium.

Needs selenium (``pip install selenium``) and Chromium with its driver (Debian:
``apt-get install chromium chromium-driver``); every test is skipped, with the
reason, when one is missing. Each xdist worker starts its own browser (the
driver is module-scoped), and each test writes its page under its own tmp_path,
so the tests run safely under ``-n 2``.
"""

from __future__ import annotations

import json
import shutil
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from builders import allocation_run
from helpers import (
    EXAMPLES,
    HOSTILE_FILE,
    HOSTILE_GROUP,
    IMG_Q,
    SCRIPT_Q,
    hostile_campaign,
    metrics_campaign,
    run_plugin,
    trend_runs,
)

from pytest_explore_suff.buckets import KEYS
from pytest_explore_suff.html import write_html_atomic


def _browser() -> tuple[str | None, str | None]:
    binary = shutil.which("chromium") or shutil.which("chromium-browser") or shutil.which("google-chrome")
    return binary, shutil.which("chromedriver")


def chrome(width: int = 1280, height: int = 1000) -> Any:
    """Headless Chromium through selenium, sized to ``width`` x ``height`` CSS pixels
    (also what docs/make_screenshot.py takes its screenshot with)."""
    from selenium import webdriver
    from selenium.webdriver.chrome.service import Service

    binary, chromedriver = _browser()
    opts = webdriver.ChromeOptions()
    for arg in (
        "--headless=new",
        "--no-sandbox",
        "--disable-gpu",
        "--disable-dev-shm-usage",
        "--hide-scrollbars",
        "--force-device-scale-factor=1",
        f"--window-size={width},{height}",
    ):
        opts.add_argument(arg)
    if binary:
        opts.binary_location = binary
    opts.set_capability("goog:loggingPrefs", {"browser": "ALL"})
    return webdriver.Chrome(options=opts, service=Service(chromedriver) if chromedriver else Service())


@pytest.fixture(scope="module")
def driver() -> Iterator[Any]:
    try:
        import selenium  # noqa: F401
    except ImportError:
        pytest.skip("browser tests need selenium: pip install selenium")
    binary, chromedriver = _browser()
    if binary is None or chromedriver is None:
        pytest.skip("browser tests need Chromium and chromedriver: apt-get install chromium chromium-driver")
    try:
        d = chrome()
    except Exception as exc:  # a browser that cannot start in this sandbox
        pytest.skip(f"headless Chromium did not start: {str(exc).splitlines()[0]}")
    yield d
    d.quit()


@pytest.fixture(scope="module")
def example_doc(tmp_path_factory: pytest.TempPathFactory) -> dict[str, Any]:
    example = EXAMPLES / "new-vs-baseline"
    return run_plugin(tmp_path_factory.mktemp("example"), example, "--min-sufficient=0.4")


@pytest.fixture(scope="module")
def hostile_doc(tmp_path_factory: pytest.TempPathFactory) -> dict[str, Any]:
    work = tmp_path_factory.mktemp("hostile")
    return run_plugin(work, hostile_campaign(work / "camp"), "--min-sufficient=0.5")


@pytest.fixture(scope="module")
def metrics_doc(tmp_path_factory: pytest.TempPathFactory) -> dict[str, Any]:
    work = tmp_path_factory.mktemp("metrics")
    return run_plugin(work, metrics_campaign(work / "camp"))


@pytest.fixture(scope="module")
def trend_doc(tmp_path_factory: pytest.TempPathFactory) -> dict[str, Any]:
    return trend_runs(tmp_path_factory.mktemp("trend"))


def load(driver: Any, document: dict[str, Any], path: Path) -> None:
    write_html_atomic(str(path), document)
    driver.get_log("browser")  # drop what earlier pages logged
    driver.get(path.as_uri())
    assert driver.find_element("css selector", "body").get_attribute("data-ready") == "true"


def severe(driver: Any) -> list[dict[str, Any]]:
    return [e for e in driver.get_log("browser") if e["level"] == "SEVERE"]


def select(driver: Any, element_id: str, value: str) -> None:
    from selenium.webdriver.support.ui import Select

    Select(driver.find_element("id", element_id)).select_by_value(value)


def set_misses(driver: Any, on: bool) -> None:
    box = driver.find_element("id", "f-misses")
    if box.is_selected() != on:
        box.click()


def rows(driver: Any) -> list[Any]:
    """Every call row the filters match: "show more" is clicked until all are in the DOM."""
    more = driver.find_element("id", "calls-more")
    while more.is_displayed():
        more.click()
    return driver.find_elements("css selector", "#calls-table tr.call")  # type: ignore[no-any-return]


def calls(document: dict[str, Any], **want: str) -> list[dict[str, Any]]:
    out = []
    for t in document["transcripts"]:
        if t["status"] != "classified" or any(t[k] != v for k, v in want.items() if k in ("arm", "group")):
            continue
        out += [c for c in t["calls"] if "bucket" not in want or c["bucket"] == want["bucket"]]
    return out


def test_the_page_loads_without_console_errors(
    driver: Any, example_doc: dict[str, Any], tmp_path: Path
) -> None:
    load(driver, example_doc, tmp_path / "report.html")
    assert severe(driver) == []
    # The default view: misses only, counted transcripts.
    expected = [c for c in calls(example_doc) if c["bucket"] != "sufficient"]
    assert driver.find_element("id", "drill-count").get_attribute("data-calls") == str(len(expected))
    assert len(rows(driver)) == len(expected)
    assert all(r.get_attribute("data-bucket") != "sufficient" for r in rows(driver))
    assert severe(driver) == []


def test_the_shares_shown_equal_the_json(driver: Any, example_doc: dict[str, Any], tmp_path: Path) -> None:
    load(driver, example_doc, tmp_path / "report.html")
    for arm, agg in example_doc["arms"].items():
        for key in KEYS:
            cell = driver.find_element(
                "css selector", f'td.share-cell[data-arm="{arm}"][data-bucket="{key}"]'
            )
            assert float(cell.get_attribute("data-share")) == agg["shares"][key]
            assert cell.find_element("css selector", ".pct").text == f"{agg['shares'][key]:.0%}"
        bar = driver.find_element("css selector", f'tr.arm-bar[data-arm="{arm}"]')
        assert bar.get_attribute("data-answered") == str(agg["answered"])
        seg = bar.find_element("css selector", 'g.seg[data-bucket="sufficient"] text')
        assert seg.text == f"{agg['shares']['sufficient']:.0%}"


def test_filtering_by_arm_and_bucket_shows_the_right_calls(
    driver: Any, example_doc: dict[str, Any], tmp_path: Path
) -> None:
    load(driver, example_doc, tmp_path / "report.html")
    set_misses(driver, False)
    assert len(rows(driver)) == len(calls(example_doc))
    for arm in example_doc["arms"]:
        select(driver, "f-arm", arm)
        assert len(rows(driver)) == len(calls(example_doc, arm=arm))
        assert {
            b.get_attribute("data-arm") for b in driver.find_elements("css selector", "tbody.transcript")
        } == {arm}
        for i, key in enumerate(KEYS):
            select(driver, "f-bucket", str(i))
            shown = rows(driver)
            assert len(shown) == len(calls(example_doc, arm=arm, bucket=key))
            assert {r.get_attribute("data-bucket") for r in shown} <= {key}
        select(driver, "f-bucket", "")
    # Choosing "sufficient" turns "misses only" off rather than showing nothing.
    select(driver, "f-arm", "")
    set_misses(driver, True)
    select(driver, "f-bucket", str(KEYS.index("sufficient")))
    assert not driver.find_element("id", "f-misses").is_selected()
    assert len(rows(driver)) == len(calls(example_doc, bucket="sufficient"))
    assert severe(driver) == []


def test_text_search_and_the_worst_group_button(
    driver: Any, example_doc: dict[str, Any], tmp_path: Path
) -> None:
    load(driver, example_doc, tmp_path / "report.html")
    set_misses(driver, False)
    box = driver.find_element("id", "f-text")
    box.send_keys("narrower")
    expected = [c for c in calls(example_doc) if "narrower" in c["query"]]
    driver.implicitly_wait(0)
    from selenium.webdriver.support.ui import WebDriverWait

    WebDriverWait(driver, 5).until(
        lambda d: d.find_element("id", "drill-count").get_attribute("data-calls") == str(len(expected))
    )
    assert len(rows(driver)) == len(expected) > 0
    # "Look here first" lists the misses of the worst group, all arms.
    worst = driver.find_element("id", "worst").get_attribute("data-group")
    driver.find_element("css selector", "button.pick-worst").click()
    misses = [c for c in calls(example_doc, group=worst) if c["bucket"] != "sufficient"]
    assert len(rows(driver)) == len(misses) > 0
    groups = {b.get_attribute("data-group") for b in driver.find_elements("css selector", "tbody.transcript")}
    assert groups == {worst}
    # A heat-map cell narrows it to one arm.
    cell = driver.find_element("css selector", f'.heat td.cell[data-group="{worst}"][data-arm="new"]')
    cell.click()
    assert len(rows(driver)) == len(
        [c for c in calls(example_doc, group=worst, arm="new") if c["bucket"] != "sufficient"]
    )


def test_the_group_of_the_transcripts_at_the_campaigns_root_is_a_filter_of_its_own(
    driver: Any, tmp_path: Path
) -> None:
    # Group "" (files at the campaign's root) beside a folder: "(no group)" must not be "all groups".
    camp = tmp_path / "camp"
    for i in (1, 2):
        allocation_run(f"root {i}").write(camp / f"run-a-{i}.jsonl")
    allocation_run("in sub").write(camp / "sub" / "run-a-1.jsonl")
    doc = run_plugin(tmp_path, camp)
    assert {t["group"] for t in doc["transcripts"]} == {"", "sub"}
    load(driver, doc, tmp_path / "report.html")
    root_misses = [c for c in calls(doc, group="") if c["bucket"] != "sufficient"]
    assert len(root_misses) == 2
    driver.find_element("css selector", '.heat a.pick[data-group=""]').click()
    assert len(rows(driver)) == 2
    assert {
        b.get_attribute("data-group") for b in driver.find_elements("css selector", "tbody.transcript")
    } == {""}
    from selenium.webdriver.support.ui import Select

    Select(driver.find_element("id", "f-group")).select_by_visible_text("(no group)")
    assert len(rows(driver)) == 2
    select(driver, "f-group", "")  # all groups
    assert len(rows(driver)) == 3
    assert severe(driver) == []


def test_hostile_strings_show_as_text(driver: Any, hostile_doc: dict[str, Any], tmp_path: Path) -> None:
    from selenium.common.exceptions import NoAlertPresentException

    load(driver, hostile_doc, tmp_path / "hostile.html")
    select(driver, "f-status", "")
    set_misses(driver, False)
    queries = [td.text for td in driver.find_elements("css selector", "#calls-table td.q")]
    assert SCRIPT_Q in queries and IMG_Q in queries
    with pytest.raises(NoAlertPresentException):
        driver.switch_to.alert.text  # noqa: B018
    assert driver.execute_script("return document.querySelectorAll('img, iframe, object').length") == 0
    assert driver.execute_script("return document.scripts.length") == 2
    assert driver.execute_script("return document.querySelectorAll('svg[onload], [onerror]').length") == 0
    options = [o.text for o in driver.find_elements("css selector", "#f-group option")]
    assert HOSTILE_GROUP in options
    assert HOSTILE_GROUP in driver.find_element("css selector", ".heat").text
    excluded = driver.find_element("id", "excluded-table").text
    assert (
        "express/run9/run-headless-with.jsonl" in excluded and "skipped" in excluded and "error" in excluded
    )
    assert "notes-<b>.jsonl" in driver.find_element("id", "ignored-table").text
    assert severe(driver) == []


def test_a_screenshot_of_the_report(driver: Any, example_doc: dict[str, Any], tmp_path: Path) -> None:
    load(driver, example_doc, tmp_path / "report.html")
    out = tmp_path / "report.png"
    assert driver.save_screenshot(str(out))
    assert out.read_bytes()[:8] == b"\x89PNG\r\n\x1a\n"
    (tmp_path / "report.json").write_text(json.dumps(example_doc))


def test_the_metric_panels_and_drill_down_render_without_console_errors(
    driver: Any, metrics_doc: dict[str, Any], tmp_path: Path
) -> None:
    load(driver, metrics_doc, tmp_path / "metrics.html")
    assert severe(driver) == []
    for arm, agg in metrics_doc["arms"].items():
        row = driver.find_element("css selector", f'tr.occ-row[data-arm="{arm}"]')
        assert float(row.get_attribute("data-ctx-final")) == agg["occupancy"]["ctx_final"]["median"]
        bar = driver.find_element("css selector", f'g.occ-bar[data-arm="{arm}"]')
        assert bar.find_elements("css selector", "rect.occ-seg")  # the stacked bar has segments
    alloc = metrics_doc["arms"]["headless-with"]["allocation"]
    cell = driver.find_element("css selector", 'tr.alloc-row[data-arm="headless-with"] td.eff')
    assert cell.text.startswith(f"{alloc['efficiency']['share']:.0%}")
    sentence = driver.find_element("id", "residual-sentence").text
    assert "higher with headless-with than with headless-without" in sentence
    # Every call, with its allocation; every transcript with its files and occupancy.
    set_misses(driver, False)
    select(driver, "f-status", "")
    shown = rows(driver)
    recs = {t["path"]: t for t in metrics_doc["transcripts"]}
    assert len(shown) == sum(len(t["calls"]) for t in recs.values())
    for body in driver.find_elements("css selector", "tbody.transcript"):
        rec = recs[body.get_attribute("data-path")]
        text = body.find_element("css selector", "tr.metrics").text
        if rec["occupancy"] is None:
            assert f"occupancy: none ({rec['occupancy_reason']})" in text
        else:
            assert f"final context {rec['occupancy']['ctx_final']:,} tokens" in text
        a = rec["allocation"]
        if a is None:
            assert f"allocation: none ({rec['allocation_reason']})" in text
            continue
        files = body.find_elements("css selector", "table.files tr.file")
        assert [f.get_attribute("data-via") for f in files] == [x["via"] or "uncited" for x in a["files"]]
        assert [f.find_element("css selector", "td.mono").text for f in files] == [
            x["path"] for x in a["files"]
        ]
        symbols = [f.text for f in body.find_elements("css selector", "table.files .via.symbol code")]
        assert symbols == [x["symbol"] for x in a["files"] if x["via"] == "symbol"]
        per_call = {c["id"]: c for c in a["calls"]}
        cells = [td.text for td in body.find_elements("css selector", "tr.call td.alloc")]
        expected = [per_call[c["id"]] for c in rec["calls"]]
        assert [c.splitlines()[0] for c in cells] == [
            f"{round(c['efficiency'] * 100)}% of {c['envelope']:,} chars" for c in expected
        ]
    assert HOSTILE_FILE in driver.find_element("id", "calls-table").text  # shown as text
    assert driver.execute_script("return document.querySelectorAll('img, [onerror]').length") == 0
    # Re-filtering rebuilds the list (the files tables nested in it included) without an error.
    select(driver, "f-arm", "headless-with")
    select(driver, "f-arm", "")
    assert len(rows(driver)) == len(shown)
    assert severe(driver) == []


def test_a_share_of_one_eighth_reads_the_same_in_the_server_and_the_script_parts(
    driver: Any, metrics_doc: dict[str, Any], tmp_path: Path
) -> None:
    # 12.5% is a tie: the arm's allocation (rendered by the server) and the transcript's
    # (rendered by the script, Math.round) must both say 13% (the server said 12%).
    doc = json.loads(json.dumps(metrics_doc))
    rec = next(t for t in doc["transcripts"] if t["arm"] == "headless-with" and t["allocation"])
    rec["allocation"]["efficiency"] = 0.125
    doc["arms"]["headless-with"]["allocation"]["efficiency"]["share"] = 0.125
    load(driver, doc, tmp_path / "eighth.html")
    cell = driver.find_element("css selector", 'tr.alloc-row[data-arm="headless-with"] td.eff')
    assert cell.text.startswith("13%")
    set_misses(driver, False)
    select(driver, "f-status", "")
    body = driver.find_element("css selector", f'tbody.transcript[data-path="{rec["path"]}"]')
    assert body.find_element("css selector", ".alloc-eff").text == "13%"
    assert severe(driver) == []


def test_the_pooled_column_is_not_an_arm_named_pooled(
    driver: Any, metrics_doc: dict[str, Any], tmp_path: Path
) -> None:
    doc = json.loads(json.dumps(metrics_doc).replace('"headless-without"', '"(pooled)"'))
    load(driver, doc, tmp_path / "pooled.html")
    cells = [
        e.text.split("\n") for e in driver.find_elements("css selector", "table.bars tr.arm-bar td.name")
    ]
    assert [c[0] for c in cells] == ["headless-with", "(pooled) [arm]", "(pooled)"]
    assert all(c[1].startswith("claude (") for c in cells)  # each arm's agents, under its name
    pooled = driver.find_element("css selector", 'table.bars tr.arm-bar[data-pooled="true"]')
    assert pooled.get_attribute("data-arm") is None and "pooled" in pooled.get_attribute("class")
    assert severe(driver) == []


def test_the_trend_chart_shows_each_runs_point_and_marks_the_change_beyond_noise(
    driver: Any, trend_doc: dict[str, Any], tmp_path: Path
) -> None:
    load(driver, trend_doc, tmp_path / "trend.html")
    assert severe(driver) == []
    section = driver.find_element("id", "trend")
    driver.execute_script("arguments[0].scrollIntoView()", section)
    shown = section.find_elements("css selector", "g.trend-point")
    expected = sum(p is not None for a in trend_doc["trend"]["arms"].values()
                   for series in a["points"].values() for p in series)  # fmt: skip
    assert len(shown) == expected and all(g.is_displayed() for g in shown)
    panel = section.find_element(
        "css selector", '.trend-arm[data-arm="with"] .trend-panel[data-metric="sufficient"]'
    )
    dots = panel.find_elements("css selector", "g.trend-point")
    series = trend_doc["trend"]["arms"]["with"]["points"]["sufficient"]
    assert [float(g.get_attribute("data-share")) for g in dots] == [p["share"] for p in series]
    # On screen: the runs left to right, the fall drawn lower, and the ring around the fallen point.
    centres = [g.find_elements("css selector", "circle")[-1].rect for g in dots]
    xs = [c["x"] + c["width"] / 2 for c in centres]
    ys = [c["y"] + c["height"] / 2 for c in centres]
    assert xs == sorted(xs) and len(set(xs)) == 3
    assert ys[0] == ys[1] < ys[2]
    (ring,) = panel.find_elements("css selector", "circle.change-mark")
    assert ring.is_displayed()
    r = ring.rect
    assert abs(r["x"] + r["width"] / 2 - xs[2]) < 1 and abs(r["y"] + r["height"] / 2 - ys[2]) < 1
    assert dots[2].get_attribute("data-beyond") == "true" and dots[2].get_attribute("data-worse") == "true"
    assert panel.find_element("css selector", "text.change-arrow").text == "▼"
    labels = [t.text for t in panel.find_elements("css selector", "text.run-label")]
    assert labels[:2] == ["nightly-1", "89abcdef"] and labels[2].startswith("<img src=x")
    assert severe(driver) == []
