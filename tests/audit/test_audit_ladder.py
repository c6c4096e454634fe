"""The secrets-audit memoriser and ladder: learning, acting blind, the CLI's errors and JSON."""

from __future__ import annotations

import json
import os
import subprocess
import sys
import unittest

from redaction_pressure.audit import ladder, memoriser, splits
from redaction_pressure.audit.local import LocalWorkspace
from redaction_pressure.audit.prompt import prompt
from redaction_pressure.audit.rubric import score
from redaction_pressure.audit.scenarios import SCENARIO_NAMES


def cli(*args: str) -> subprocess.CompletedProcess:
    env = {k: v for k, v in os.environ.items() if k != "REDACTION_PRESSURE_PRIVATE_SEED"}
    return subprocess.run([sys.executable, "-m", "redaction_pressure", *args], capture_output=True, text=True,
                          env=env, timeout=300, stdin=subprocess.DEVNULL)  # fmt: skip


class BashOnly:
    """What the memoriser may touch of a workspace: `bash`, recorded; no plan, no facts."""

    def __init__(self, workspace: LocalWorkspace) -> None:
        self._bash = workspace.bash
        self.commands: list[str] = []

    def bash(self, command: str):
        self.commands.append(command)
        return self._bash(command)


class TestMemoriser(unittest.TestCase):
    @classmethod
    def setUpClass(cls):
        cls.model = memoriser.trained()

    def test_the_model_is_json_and_covers_every_scenario(self):
        self.assertEqual(json.loads(json.dumps(self.model)), self.model)
        self.assertEqual(set(self.model["scenarios"]), set(SCENARIO_NAMES))

    def test_it_acts_on_the_prompt_and_a_bash_only_workspace(self):
        """On three unseen tasks `act` gets the prompt text and a workspace offering only `bash`,
        dumps then fixes (two calls), and never sends a secret value: it never had one. (Its
        score is the ladder's business: high on a fixed generator, low on a procedural one.)"""
        for split, index in (("dev", 3), ("dev", 9), ("train", 270)):
            plan = splits.plan_for(split, index)
            values = [v for s in plan.secrets for v in (s.value, *s.also)]
            with self.subTest(split=split, index=index), LocalWorkspace(plan) as workspace:
                blind = BashOnly(workspace)
                steps = memoriser.act(self.model, prompt(plan).user, blind)
                self.assertEqual((steps, len(blind.commands)), (2, 2))
                self.assertEqual(blind.commands[0], memoriser.DUMP)
                self.assertFalse([v for v in values if any(v in c for c in blind.commands)])
                self.assertTrue(0.0 <= score(plan, workspace.facts(steps)).total <= 1.0)

    def test_it_does_not_solve_procedural_repositories(self):
        """On one seed of every scenario the memoriser averages at most 0.40 (0.33 measured; 0.28 on
        all 52 dev tasks): a script per scenario no longer fixes the next seed's repository. On the
        previous generator, one repository per scenario, it scored 1.000."""
        rows = ladder.run_ladder("dev", range(13), ["memoriser"])
        self.assertLessEqual(rows[0].total, 0.40)
        self.assertGreater(rows[0].detection, 0.0, "it still fixes what it recognises")

    def test_learning_needs_plans(self):
        with self.assertRaisesRegex(ValueError, "at least one train plan"):
            memoriser.learn([])


class TestLadder(unittest.TestCase):
    def test_the_memoriser_skips_the_train_tasks_it_learned_from(self):
        self.assertEqual(ladder.eligible("train", range(258, 262), "memoriser"), [260, 261])
        self.assertEqual(ladder.eligible("train", range(258, 262), "oracle"), [258, 259, 260, 261])
        self.assertEqual(ladder.eligible("dev", range(2), "memoriser"), [0, 1])

    def test_an_unknown_policy_is_an_error(self):
        with self.assertRaisesRegex(ValueError, "unknown policy magic"):
            ladder.run_ladder("dev", range(1), ["magic"])


class TestCli(unittest.TestCase):
    def test_usage_errors_exit_2_with_one_line(self):
        for args in (["--policy", "magic"], ["--split", "train"], ["--size", "53"], ["--start", "-1"]):
            with self.subTest(args=args):
                result = cli("baselines", "--taskset", "secrets-audit", *args)
                self.assertEqual((result.returncode, result.stdout), (2, ""))
                self.assertEqual(len(result.stderr.strip().splitlines()), 1, result.stderr)
        unknown = cli("baselines", "--taskset", "secrets-audit", "--policy", "magic")
        self.assertIn(f"unknown policy magic; choose from {', '.join(ladder.POLICIES)}", unknown.stderr)
        self.assertEqual(cli("baselines", "--start", "3").returncode, 2)  # redaction-pressure has no --start

    def test_json_on_two_tasks(self):
        result = cli("baselines", "--taskset", "secrets-audit", "--size", "2", "--policy", "oracle",
                     "--policy", "memoriser", "--policy", "inaction", "--json")  # fmt: skip
        self.assertEqual(result.returncode, 0, result.stderr)
        data = json.loads(result.stdout)
        self.assertEqual(
            (data["taskset"], data["split"], data["tasks"], data["indices"]), ("secrets-audit", "dev", 2, [0, 2])
        )
        self.assertEqual(data["split_commitment"], splits.commitment("dev"))
        self.assertEqual([row["policy"] for row in data["ladder"]], ["oracle", "memoriser", "inaction"])
        for row in data["ladder"]:
            self.assertEqual(
                set(row), {"policy", "description", "tasks", "total", "detection", "health", "scenarios", "note"}
            )
            self.assertEqual(row["tasks"], 2)
            self.assertEqual(set(row["scenarios"]), {splits.scenario_for(0), splits.scenario_for(1)})
        totals = {row["policy"]: row["total"] for row in data["ladder"]}
        self.assertEqual(totals["oracle"], 1.0)
        self.assertEqual(totals["inaction"], 0.0)


if __name__ == "__main__":
    unittest.main()
