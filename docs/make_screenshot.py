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
import shutil
import subprocess
import sys
import tempfile
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
WIDTH = 1280


def example_report(workdir: Path) -> Path:
    """Run the plugin on the example campaign, with a gate, and return its JSON report."""
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
        f"--explore-suff={ROOT / 'examples' / 'new-vs-baseline'}",
        f"--explore-suff-json={report}",
        "--min-sufficient=0.4",
        "--max-read-returned=0.2",
    ]
    subprocess.run(cmd, cwd=workdir, check=False, stdout=subprocess.DEVNULL)
    if not report.exists():
        raise SystemExit(f"the plugin wrote no report: {' '.join(cmd)}")
    return report


def driver(width: int = WIDTH, height: int = 1000):  # type: ignore[no-untyped-def]
    from selenium import webdriver
    from selenium.webdriver.chrome.service import Service

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
    binary = shutil.which("chromium") or shutil.which("chromium-browser") or shutil.which("google-chrome")
    if binary:
        opts.binary_location = binary
    path = shutil.which("chromedriver")
    return webdriver.Chrome(options=opts, service=Service(path) if path else Service())


def screenshot(html: Path, out: Path, max_height: int = 2600) -> None:
    d = driver()
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
    sys.path.insert(0, str(ROOT))
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
