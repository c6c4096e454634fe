"""secrets-audit's scenarios: every one builds deterministically, starts healthy and leaky, and
the oracle fixes it (score 1); dev prompts are unique and hold no secret.
"""

from __future__ import annotations

import unittest

from redaction_pressure.audit import programs, splits
from redaction_pressure.audit.local import LocalWorkspace
from redaction_pressure.audit.plan import plan_from_json, plan_to_json
from redaction_pressure.audit.prompt import prompt
from redaction_pressure.audit.rubric import score_facts
from redaction_pressure.audit.scenarios import SCENARIOS, build


class TestScenarios(unittest.TestCase):
    def test_every_scenario_builds_deterministically(self):
        """The same (scenario, seed) gives the same plan; another seed gives other secrets."""
        for scenario in SCENARIOS:
            with self.subTest(scenario=scenario.name):
                a, b, c = build(scenario.name, 1), build(scenario.name, 1), build(scenario.name, 2)
                self.assertEqual(plan_to_json(a), plan_to_json(b))
                self.assertNotEqual([s.value for s in a.secrets], [s.value for s in c.secrets])
                self.assertGreaterEqual(len(a.commits), 2)
                self.assertEqual(plan_to_json(plan_from_json(plan_to_json(a))), plan_to_json(a))

    def test_tests_pass_before_and_after_the_oracle_which_scores_one(self):
        """Each repository starts healthy and leaky (inaction scores 0); the oracle leaves it healthy and clean."""
        for scenario in SCENARIOS:
            plan = build(scenario.name, 3)
            with self.subTest(scenario=scenario.name), LocalWorkspace(plan) as ws:
                before = ws.facts()
                self.assertEqual(before["tests"]["status"], "ok")
                self.assertEqual(before["tests"]["passed"], before["tests"]["total"])
                self.assertEqual(set(before["left"]), {s.id for s in plan.secrets})
                self.assertEqual(score_facts(before, plan.budget).total, 0.0)
                self.assertEqual(ws.bash(programs.oracle_script(plan)).returncode, 0)
                after = ws.facts(1)
                self.assertEqual(score_facts(after, plan.budget).total, 1.0, (after["left"], after["probes"]))

    def test_dev_prompts_are_unique_and_never_hold_a_secret(self):
        """The stand-in model and people can tell tasks apart; no value is in a prompt."""
        prompts = set()
        for index in range(splits.DEV_SIZE):
            plan = splits.plan_for("dev", index)
            text = prompt(plan)
            prompts.add(text.user)
            for secret in plan.secrets:
                self.assertNotIn(secret.value, text.user + text.system)
        self.assertEqual(len(prompts), splits.DEV_SIZE)


if __name__ == "__main__":
    unittest.main()
