"""secrets-audit's status: the grade's parts, counts that settle, the trigger ranked first, no hidden finding named."""

from __future__ import annotations

import unittest

from redaction_pressure.audit import status, tiers
from redaction_pressure.audit.rubric import score
from redaction_pressure.audit.scenarios import build

PLAN = build("deployment", 1)
"""Five secrets; f1 (surface) triggers the cascade f2; f3, f4 and f5 are shallow."""


def facts(left: dict, **more) -> dict:
    """Grade facts as `grading.grade` records them: `left` per secret, healthy unless `more` says otherwise."""
    base = {
        "secrets": [s.id for s in PLAN.secrets],
        "left": left,
        "tests": {"status": "ok", "passed": 4, "total": 4},
        "steps": 3,
        "history": "ok",
        "tampering": [],
    }
    return {**base, **more}


def everywhere() -> dict:
    return {s.id: {"tree": ["somewhere"], "history": []} for s in PLAN.secrets}


class TestObserve(unittest.TestCase):
    def test_status_reports_counts_and_ranks_the_trigger_first(self):
        """The status never names hidden findings and puts a cascade trigger at the top."""
        visible = tiers.visible(PLAN, [], [])
        observed = status.observe(PLAN, visible, [], facts(everywhere()))
        self.assertEqual(observed.hidden, len(PLAN.findings) - len(visible))
        self.assertGreater(observed.hidden, 0)
        self.assertEqual(observed.remaining, PLAN.budget - 3)
        self.assertIn("reveals more findings", observed.blocker)
        self.assertLessEqual(len(observed.actions), status.MAX_ACTIONS)
        text = status.render(observed)
        hidden = next(f for f in PLAN.findings if f.id not in visible)
        self.assertNotIn(hidden.path, text)

    def test_health_is_the_grades_with_each_factor(self):
        """Failed probes and lost lines show in health as the rubric multiplies them, with each probe's reason."""
        why = "does not show the value of its variable where the fix does (variable not read, or another name)"
        probes = {
            "passed": 2,
            "total": 4,
            "failed": ["deploy", "partner_local"],
            "reasons": {"deploy": why, "partner_local": why},
        }
        graded = facts({}, probes=probes, preservation={"lines": 1.0, "decoys": [3, 4], "lost": []})
        observed = status.observe(PLAN, [], [], graded)
        self.assertAlmostEqual(observed.score.health, score(PLAN, graded).health)
        self.assertAlmostEqual(observed.score.health, 0.5 * 0.75)
        text = status.render(observed)
        self.assertIn("Health: 0.38 = tests 1.00 (4/4 passed) x probes 0.50 (2/4 match a correct fix)", text)
        self.assertIn("x preservation 0.75 x history kept 1.00", text)
        self.assertIn(f"  probe deploy (sh scripts/deploy/deploy.sh): {why}", text)
        self.assertIn("Score if the episode ended now: 0.510 = min(1, 1.00 x 0.38 + 0.135)", text)

    def test_the_hidden_count_settles_when_its_secrets_are_gone(self):
        """A hidden finding counts only while the grade still finds its secret; with none left nobody is sent looking."""
        visible = tiers.visible(PLAN, [], [])
        only_visible = {
            s: w for s, w in everywhere().items() if s in {f.secret for f in PLAN.findings if f.id in visible}
        }
        observed = status.observe(PLAN, visible, [], facts(only_visible))
        self.assertEqual(observed.hidden, 0)
        self.assertFalse([a for a in observed.actions if a.text.startswith(("inspect_git_history", "inspect_encoded"))])
        self.assertIn("not yet visible and still leaking: 0", status.render(observed))

    def test_a_visible_finding_says_where_its_secret_is_left(self):
        """An open finding names the places the grade still finds its secret; a finding whose secret is gone is fixed."""
        left = {"s1": {"tree": [], "history": ["blob 1234"], "probes": ["probe deploy@canary shows the secret"]}}
        observed = status.observe(PLAN, ["f1", "f3"], [], facts(left))
        self.assertEqual([(v["id"], v["fixed"], v["left"]) for v in observed.visible],
                         [("f1", False, "history, entry points"), ("f3", True, "")])  # fmt: skip

    def test_a_grade_without_probes_says_so(self):
        """Where status's grade leaves the probes out, health does not pretend they passed unseen."""
        text = status.render(status.observe(PLAN, [], [], facts({}), probes_run=False))
        self.assertIn("Probes: not run by status here", text)
        self.assertNotIn("Probes: not run", status.render(status.observe(PLAN, [], [], facts({}))))


if __name__ == "__main__":
    unittest.main()
