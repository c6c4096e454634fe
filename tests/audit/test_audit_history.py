"""secrets-audit's history modes: in `all` a committed secret leaks until every git object is clean, in
every scenario; `seed` keeps the seed's curriculum, where only two scenarios' history counts."""

from __future__ import annotations

import unittest

from redaction_pressure.audit import programs, splits
from redaction_pressure.audit.local import LocalWorkspace
from redaction_pressure.audit.plan import HISTORY_ALL, HISTORY_SEED, plan_from_json, plan_to_json
from redaction_pressure.audit.prompt import prompt
from redaction_pressure.audit.rubric import score
from redaction_pressure.audit.scenarios import SCENARIOS

SEED_HISTORY = {"git_basics", "legacy_audit"}


def _tree_fix_score(index: int, history: str) -> tuple[str, float, dict]:
    plan = splits.plan_for("dev", index, history)
    with LocalWorkspace(plan) as ws:
        done = ws.bash(programs.oracle_script(plan, history=False))
        assert done.returncode == 0, done.stderr
        facts = ws.facts(1)
    return plan.scenario, score(plan, facts).total, facts


class TestHistoryModes(unittest.TestCase):
    def test_in_all_mode_a_fix_that_leaves_history_is_below_gold_on_every_scenario(self):
        """The working-tree fix alone, on dev tasks 0-12 (the 13 scenarios): every secret is still in git's
        objects, so it earns the efficiency bonus at most; the facts say what history was scanned."""
        for index in range(len(SCENARIOS)):
            scenario, total, facts = _tree_fix_score(index, HISTORY_ALL)
            with self.subTest(scenario=scenario):
                self.assertLess(total, 1.0)
                self.assertTrue(all(where.get("history") for where in facts["left"].values()), facts["left"])
                self.assertEqual(facts["history_scanned"]["mode"], HISTORY_ALL)
                self.assertEqual(len(facts["history_scanned"]["secrets"]), len(facts["secrets"]))

    def test_in_seed_mode_only_the_seeds_history_scenarios_count_history(self):
        for index in range(len(SCENARIOS)):
            scenario, total, facts = _tree_fix_score(index, HISTORY_SEED)
            with self.subTest(scenario=scenario):
                if scenario in SEED_HISTORY:
                    self.assertLess(total, 1.0)
                else:
                    self.assertEqual(total, 1.0, facts.get("left"))

    def test_the_gold_fix_rewrites_history_in_all_mode_and_scores_one(self):
        for index in (1, 6, 9):
            plan = splits.plan_for("dev", index)
            with self.subTest(scenario=plan.scenario), LocalWorkspace(plan) as ws:
                self.assertIn("filter-repo", programs.oracle_script(plan))
                self.assertEqual(ws.bash(programs.oracle_script(plan)).returncode, 0)
                facts = ws.facts(1)
                self.assertEqual(score(plan, facts).total, 1.0, (facts["left"], facts["probes"]))

    def test_the_mode_travels_with_the_plan_and_the_prompt_says_it(self):
        for history in (HISTORY_ALL, HISTORY_SEED):
            plan = splits.plan_for("dev", 4, history)
            self.assertEqual(plan_from_json(plan_to_json(plan)).history_mode, history)
        everything, seed = (prompt(splits.plan_for("dev", 4, h)).system for h in (HISTORY_ALL, HISTORY_SEED))
        self.assertIn("leaks until every git object is clean", everything)
        self.assertNotIn("leaks until every git object is clean", seed)
        self.assertIn("where history counts", seed)


if __name__ == "__main__":
    unittest.main()
