"""The OpenEnv servers' `/web` debug page in Debian's Chromium (Playwright with the system browser): a whole
secrets-audit episode and one redaction-pressure task, at 1400 and 390 px, with no console error.

Screenshots are kept in outputs/test-artifacts/web/ (printed at the end of each test)."""

from __future__ import annotations

import unittest

from redaction_pressure.audit import programs
from redaction_pressure.audit import splits as audit_splits
from redaction_pressure.redact.api import load_task
from redaction_pressure.redact.policies.reference import oracle_rules
from redaction_pressure.redact.policies.reference import reply as rules_json
from tests.support.browser import open_page
from tests.support.openenv_server import ROOT, Server

ARTIFACTS = ROOT / "outputs" / "test-artifacts" / "web"
WIDTHS = (1400, 390)
WAIT = 600_000
"""Milliseconds a step may take on a busy machine (a grade runs tests, probes and the leak scan)."""


def figure(page, name: str) -> str:
    """The value shown above a figure's label (the first panel that has it)."""
    return page.evaluate(
        """(name) => { for (const cell of document.querySelectorAll('.figure')) {
               if (cell.querySelector('span').textContent === name && cell.offsetParent) return cell.querySelector('b').textContent; }
           return null; }""",
        name,
    )


def fits(page) -> bool:
    """Nothing wider than the window: no sideways scrolling."""
    return page.evaluate("() => document.documentElement.scrollWidth <= window.innerWidth")


class TestAuditPage(unittest.TestCase):
    @classmethod
    def setUpClass(cls):
        ARTIFACTS.mkdir(parents=True, exist_ok=True)
        cls.server = Server("--taskset", "secrets-audit", "--sandbox", "local", "--max-sessions", "4")

    @classmethod
    def tearDownClass(cls):
        cls.server.close()

    def test_a_whole_episode_on_the_page(self):
        """Pick dev 3, run a command, inspect a file, apply the gold fix (the reward goes to 1), submit (the grade
        appears with its reasons); the page fits both widths and logs no console error."""
        plan = audit_splits.plan_for("dev", 3)
        target = plan.findings[0].path
        for width in WIDTHS:
            with self.subTest(width=width):
                page, problems = open_page(self, self.server.url + "/web", width=width, height=900)
                page.wait_for_function("document.getElementById('conn').textContent === 'connected'", timeout=WAIT)
                self.assertEqual(
                    page.eval_on_selector_all("#split option", "os => os.map(o => o.value)"), ["dev", "train"]
                )
                page.fill("#index", "3")
                page.dispatch_event("#index", "change")
                page.wait_for_function(
                    f"document.getElementById('scenario').textContent === 'scenario: {plan.scenario}'", timeout=WAIT
                )
                page.click("#start")
                page.wait_for_function(
                    "document.getElementById('conn').textContent.startsWith('task dev-3')", timeout=WAIT
                )
                self.assertEqual(figure(page, "reward"), "0")
                self.assertEqual(figure(page, "steps"), f"0 / {plan.budget}")
                self.assertIn("Known findings", page.text_content("#observation"))
                self.assertIn("./repo", page.text_content("#system"))

                page.fill("#command", "git -C repo log --oneline | head -3")
                page.click("#run-bash")
                page.wait_for_function("document.querySelectorAll('#history tr').length === 1", timeout=WAIT)
                self.assertIn("bash: git -C repo log", page.text_content("#history"))

                page.fill("#path", target)
                page.click("button[data-tool=inspect_file]")
                page.wait_for_function("document.querySelectorAll('#history tr').length === 2", timeout=WAIT)
                self.assertIn(f"inspect_file {target}", page.text_content("#observation-title"))
                self.assertEqual(figure(page, "steps"), f"2 / {plan.budget}")

                page.fill("#command", programs.oracle_script(plan))
                page.click("#run-bash")
                page.wait_for_function("document.querySelectorAll('#history tr').length === 3", timeout=WAIT)
                self.assertEqual(
                    (figure(page, "reward"), figure(page, "detection"), figure(page, "health")), ("1", "1", "1")
                )
                page.screenshot(path=str(ARTIFACTS / f"audit-{width}-fixed.png"), full_page=True)

                page.click("button[data-tool=submit]")
                page.wait_for_function(
                    "!document.getElementById('grade-panel').classList.contains('hidden')", timeout=WAIT
                )
                grade = page.text_content("#grade-panel")
                self.assertIn("no secret left", grade)
                self.assertIn("submitted", grade)
                self.assertEqual(figure(page, "total"), "1")
                self.assertTrue(page.is_disabled("#run-bash"), "the episode is over: no more actions")
                self.assertTrue(fits(page), f"the page scrolls sideways at {width} px")
                page.screenshot(path=str(ARTIFACTS / f"audit-{width}-graded.png"), full_page=True)
                self.assertEqual(problems, [])
        print(f"screenshots: {ARTIFACTS}")


class TestRedactionPage(unittest.TestCase):
    @classmethod
    def setUpClass(cls):
        ARTIFACTS.mkdir(parents=True, exist_ok=True)
        cls.server = Server("--taskset", "redaction-pressure")

    @classmethod
    def tearDownClass(cls):
        cls.server.close()

    def test_a_reply_scored_with_its_marks(self):
        """dev 0: the prompt shows; the oracle's rules score 1 and every hidden secret is marked removed; a rule
        that also eats a decoy shows it touched; both widths, no console error."""
        task = load_task("dev", 0)
        for width in WIDTHS:
            with self.subTest(width=width):
                page, problems = open_page(self, self.server.url + "/web", width=width, height=900)
                page.wait_for_function("document.getElementById('conn').textContent === 'connected'", timeout=WAIT)
                page.click("#start")
                page.wait_for_function(
                    "document.getElementById('conn').textContent.startsWith('task dev-0')", timeout=WAIT
                )
                self.assertEqual(page.text_content("#observation"), task.prompt.user)
                page.fill("#reply", rules_json(oracle_rules(task.hidden)))
                page.click("#send-reply")
                page.wait_for_function("document.querySelectorAll('#marks .record').length > 0", timeout=WAIT)
                self.assertEqual(figure(page, "reward"), "1")
                self.assertEqual(
                    page.text_content("#marks-summary"), f"0 of {len(task.hidden)} hidden records with a mistake"
                )
                self.assertEqual(
                    page.locator("#marks .record:visible").count(), 0, "only records with a mistake, by default"
                )
                page.screenshot(path=str(ARTIFACTS / f"redaction-{width}-oracle.png"), full_page=True)
                page.uncheck("#only-mistakes")
                self.assertEqual(page.locator("#marks .record:visible").count(), len(task.hidden))
                secrets = sum(len(r.secrets) for r in task.hidden)
                self.assertEqual(page.locator("#marks .secret-removed").count() >= secrets, True)
                self.assertEqual(page.locator("#marks .secret-missed").count(), 0)
                self.assertTrue(fits(page), f"the page scrolls sideways at {width} px")
                page.screenshot(path=str(ARTIFACTS / f"redaction-{width}-all-records.png"))
                self.assertEqual(problems, [])

                # the next task on the same page: everything removed, so decoys are touched
                page.fill("#index", "1")
                page.click("#start")
                page.wait_for_function(
                    "document.getElementById('conn').textContent.startsWith('task dev-1')", timeout=WAIT
                )
                page.fill("#reply", '{"rules": [{"pattern": "\\\\S+", "replacement": "[REDACTED]"}]}')
                page.click("#send-reply")
                page.wait_for_function("document.querySelectorAll('#marks .record').length > 0", timeout=WAIT)
                self.assertGreater(page.locator("#marks .decoy-touched").count(), 0)
                page.check("#only-mistakes")
                page.screenshot(path=str(ARTIFACTS / f"redaction-{width}-mistakes.png"))
                self.assertEqual(figure(page, "clean gate"), "0")
                self.assertEqual(problems, [])
        print(f"screenshots: {ARTIFACTS}")
