"""Render a run's report and print its size and how long headless Chromium takes to open it.

    uv run python -m benchmarks.bench_report RUN_DIR [RUN_DIR ...] [--screenshots DIR]

Prints the render time, the page's size, and for 1280 and 390 px viewports the time to
the load event, the page's scroll width (no sideways scroll when it equals the viewport)
and the smallest chart text height. With --screenshots it saves small PNGs of the first
screen at both widths, the mistakes section and the first task (for docs/).
"""

from __future__ import annotations

import argparse
import shutil
import tempfile
import time
from pathlib import Path

from redaction_pressure.report import render, runs


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("runs", nargs="+", type=Path)
    parser.add_argument("--screenshots", type=Path, help="folder to write PNG screenshots into")
    args = parser.parse_args()
    found = runs.find_runs(args.runs)
    with tempfile.TemporaryDirectory() as folder:
        page_path = Path(folder) / "report.html"
        started = time.perf_counter()
        render.write(found, page_path)
        print(f"render: {time.perf_counter() - started:.1f} s for {sum(len(r.episodes) for r in found)} episodes")
        print(f"size: {page_path.stat().st_size / 1000:.0f} KB")
        browse(page_path, args.screenshots)


def browse(path: Path, screenshots: Path | None) -> None:
    from playwright.sync_api import sync_playwright

    browser_path = shutil.which("chromium") or shutil.which("chromium-browser")
    with sync_playwright() as playwright:
        browser = playwright.chromium.launch(executable_path=browser_path, args=["--no-sandbox"])
        for width in (1280, 390):
            page = browser.new_page(viewport={"width": width, "height": 844})
            started = time.perf_counter()
            page.goto(path.resolve().as_uri())
            page.wait_for_load_state("load")
            loaded = time.perf_counter() - started
            scroll = page.evaluate("document.documentElement.scrollWidth")
            text = page.evaluate(
                "Math.min(...Array.from(document.querySelectorAll('svg text'))"
                ".map(t => t.getBoundingClientRect().height).filter(h => h > 0))"
            )
            print(f"{width} px: loaded in {loaded:.2f} s, scroll width {scroll}, smallest chart text {text:.1f} px")
            if screenshots:
                screenshots.mkdir(parents=True, exist_ok=True)
                name = "narrow" if width == 390 else "headline"
                shoot(page, screenshots / f"report-{name}.png")
                if width == 1280 and page.locator("#mistakes").count():
                    page.locator("#mistakes").scroll_into_view_if_needed()
                    page.evaluate("document.getElementById('mistakes').scrollIntoView()")
                    shoot(page, screenshots / "report-mistakes.png")
            page.close()
        browser.close()


def shoot(page, target: Path) -> None:
    from PIL import Image

    page.screenshot(path=str(target))
    with Image.open(target) as image:
        small = image.convert("RGB").quantize(colors=64)
        small.save(target, optimize=True)
    print(f"wrote {target} ({target.stat().st_size / 1000:.0f} KB)")


if __name__ == "__main__":
    main()
