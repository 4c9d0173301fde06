"""Make docs/report.png: a screenshot of the HTML report of the example campaign.

Rerun it from the repository root, after changing the page's template, CSS or script:

    .venv/bin/python docs/make_screenshot.py

It runs the plugin on examples/new-vs-baseline (two arms, three repos, a gate
that fails), renders the report with ``pytest_explore_suff.html`` and takes a
1280-pixel-wide screenshot in headless Chromium. Needs selenium
(``pip install selenium``) and Chromium with its driver (Debian:
``apt-get install chromium chromium-driver``). Options:

    --json REPORT.json   screenshot this report instead of running the example
    --out PATH           where the PNG goes (default: docs/report.png)
    --html PATH          also keep the rendered page here
    --height N           cap the page height in pixels (default 2600; 0: whole page)
"""

from __future__ import annotations

import argparse
import sys
import tempfile
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
WIDTH = 1280
sys.path[:0] = [str(ROOT), str(ROOT / "tests")]  # the tests' browser and plugin run, reused

from helpers import run_plugin  # noqa: E402
from test_html_browser import chrome  # noqa: E402


def example_report(workdir: Path) -> Path:
    """Run the plugin on the example campaign, with gates, and return its JSON report."""
    example = ROOT / "examples" / "new-vs-baseline"
    run_plugin(workdir, example, "--min-sufficient=0.4", "--max-read-returned=0.2")
    return workdir / "report.json"


def screenshot(html: Path, out: Path, max_height: int = 2600) -> None:
    d = chrome(WIDTH)
    try:
        d.get(html.resolve().as_uri())
        height = int(d.execute_script("return document.documentElement.scrollHeight"))
        if max_height:
            height = min(height, max_height)
        d.set_window_size(WIDTH, height)
        # The window includes the browser's chrome in some versions: size the viewport exactly.
        inner = int(d.execute_script("return window.innerWidth"))
        if inner != WIDTH:
            d.set_window_size(WIDTH + (WIDTH - inner), height)
        d.save_screenshot(str(out))
    finally:
        d.quit()


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--json", type=Path)
    parser.add_argument("--out", type=Path, default=ROOT / "docs" / "report.png")
    parser.add_argument("--html", type=Path)
    parser.add_argument("--height", type=int, default=2600)
    args = parser.parse_args()
    from pytest_explore_suff.html import write_html_atomic

    with tempfile.TemporaryDirectory() as tmp:
        report = args.json or example_report(Path(tmp))
        import json

        document = json.loads(report.read_text(encoding="utf-8"))
        html = args.html or Path(tmp) / "report.html"
        write_html_atomic(str(html), document)
        screenshot(html, args.out, args.height)
    print(f"wrote {args.out}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
