"""Reports opened in headless Chromium: `chromium()` (the browser, or a failure naming how to
install it), `open_page` (a page and the problems it logged) and `clipped_labels` (chart texts
drawn outside their chart).
"""

from __future__ import annotations

import shutil
import unittest
from pathlib import Path


def chromium() -> str:
    found = shutil.which("chromium") or shutil.which("chromium-browser")
    if not found:
        raise AssertionError("headless Chromium is required (Debian: apt-get install chromium); .ci/run installs it")
    return found


def open_page(test: unittest.TestCase, path: Path | str, anchor: str = "", width: int = 1280, height: int = 900):
    """Load a report (a file) or a served page (an http URL) in headless Chromium (one browser per test, closed
    when it ends); returns (page, problems): console errors and warnings, page errors and dialogs seen so far."""
    if getattr(test, "_browser", None) is None:
        from playwright.sync_api import sync_playwright

        manager = sync_playwright()
        playwright = manager.start()
        test._browser = playwright.chromium.launch(executable_path=chromium(), args=["--no-sandbox"])
        test.addCleanup(manager.__exit__, None, None, None)
        test.addCleanup(test._browser.close)
        test.addCleanup(setattr, test, "_browser", None)
    page = test._browser.new_page(viewport={"width": width, "height": height})
    problems: list[str] = []
    page.on("console", lambda message: problems.append(f"console {message.type}: {message.text}")
            if message.type in ("error", "warning") else None)  # fmt: skip
    page.on("pageerror", lambda error: problems.append(f"page error: {error}"))
    page.on("dialog", lambda dialog: (problems.append(f"dialog: {dialog.message}"), dialog.dismiss()))
    page.goto((path if isinstance(path, str) else path.resolve().as_uri()) + anchor)
    page.wait_for_load_state("load")
    return page, problems


def clipped_labels(page) -> list[str]:
    """The chart texts (titles, axis and tick labels) that reach outside their chart as the browser draws them."""
    return page.evaluate("""() => [...document.querySelectorAll('svg')].flatMap(svg => {
        const box = svg.getBoundingClientRect();
        return [...svg.querySelectorAll('text')].filter(t => { const r = t.getBoundingClientRect();
            return r.width > 0 && (r.left < box.left - 0.5 || r.right > box.right + 0.5
                                   || r.top < box.top - 0.5 || r.bottom > box.bottom + 0.5); })
            .map(t => t.textContent); })""")
