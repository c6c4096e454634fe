"""The grading budget (`audit/budget.py`): past any figure the repository is oversized, every
secret left, with a reason naming the figure; honest repositories stay far inside every one.

The verdicts are asserted, never the time a grade took: the budget counts work, so a flood is
refused the same on a fast machine and a loaded one.
"""

from __future__ import annotations

import time
import unittest
from unittest import mock

from redaction_pressure.audit import budget, programs, splits
from redaction_pressure.audit.local import LocalWorkspace
from redaction_pressure.audit.rubric import score_facts
from redaction_pressure.audit.scenarios import SCENARIOS, build

CLOUD = build("cloud_provisioning", 11)
FLOOD = (
    "python3 -c 'import os, sys\n"
    "for i in range(int(sys.argv[1])):\n"
    '    d = os.path.join(sys.argv[2], "d%d" % (i // 100)); os.makedirs(d, exist_ok=True)\n'
    '    open(os.path.join(d, "f%d.txt" % i), "w").write("x%d" % i)\' '
)
"""Bash: `FLOOD + "N FOLDER"` writes N tiny files under FOLDER, a hundred a folder."""
COMMIT = "git -C repo add -A && git -C repo -c user.name=a -c user.email=a@b.invalid commit -qm more"


def graded(plan, command: str) -> dict:
    """The gold fix, then `command` from the workspace's root, graded (one step)."""
    with LocalWorkspace(plan) as ws:
        for step in (programs.oracle_script(plan), command):
            done = ws.bash(step, timeout=300)
            if done.returncode:
                raise AssertionError(done.stderr[-500:])
        return ws.facts(steps=1)


def _compute(seconds: float) -> None:
    end = time.thread_time() + seconds
    while time.thread_time() < end:
        pass


class TestBudget(unittest.TestCase):
    def test_each_count_raises_past_its_figure_naming_it(self):
        """Files, objects and scanned bytes each raise Oversized once past their figure, and not at it."""
        cases = [
            ("count_files", budget.MAX_FILES, "files"),
            ("count_objects", budget.MAX_OBJECTS, "objects"),
            ("view", budget.VIEW_BYTES - budget.VIEW_CALL_BYTES, "MiB"),
        ]
        for method, figure, named in cases:
            with self.subTest(method):
                spent = budget.Budget()
                getattr(spent, method)(figure)
                with self.assertRaises(budget.Oversized) as caught:
                    getattr(spent, method)(1)
                self.assertIn(named, str(caught.exception))

    def test_the_clock_counts_the_steps_cpu_not_their_waiting(self):
        """A timed step that sleeps costs (almost) no CPU-seconds; one that computes costs what it computed."""
        spent = budget.Budget()
        spent.timed(time.sleep, 0.3)
        self.assertLess(spent.cpu_seconds, 0.1)
        spent.timed(_compute, 0.2)
        self.assertGreater(spent.cpu_seconds, 0.15)


class TestOversized(unittest.TestCase):
    """Repositories past the budget score as oversized: every secret left, a reason naming the figure."""

    def assertOversized(self, facts: dict, named: str) -> None:
        self.assertEqual(set(facts["left"]), {s.id for s in CLOUD.secrets})
        self.assertEqual(facts["history"], "oversized")
        self.assertIn(named, facts["reason"])
        self.assertEqual(score_facts(facts, CLOUD.budget).total, 0.0)

    def test_the_flood_that_took_68_seconds_is_oversized(self):
        """19,305 tiny untracked files beside the gold fix: past what the archive walks, refused before any scan or test run."""
        facts = graded(CLOUD, FLOOD + "19305 repo/flood")
        self.assertOversized(facts, "larger than the grader reads")
        self.assertEqual(facts["tests"]["status"], "not_run")

    def test_files_past_the_budget_are_oversized_tracked_or_not(self):
        """3,500 files (inside what the archive walks) untracked, or committed, are past MAX_FILES."""
        for name, command in (
            ("untracked", FLOOD + "3500 repo/flood"),
            ("committed", FLOOD + f"3500 repo/flood && {COMMIT}"),
        ):
            with self.subTest(name):
                facts = graded(CLOUD, command)
                self.assertOversized(facts, f"the grader reads {budget.MAX_FILES:,}")
                self.assertEqual(facts["tests"]["status"], "not_run")

    def test_objects_scanned_bytes_and_cpu_seconds_past_their_figures_are_oversized(self):
        """With each figure set low, the gold fix alone is past it: objects, bytes the scan reads, the analysis's CPU-seconds."""
        for figure, value, named in (
            ("MAX_OBJECTS", 10, "objects"),
            ("VIEW_BYTES", 64 * 1024, "MiB an episode may"),
            ("CPU_SECONDS", 0.0, "CPU-seconds"),
        ):
            with self.subTest(figure), mock.patch.object(budget, figure, value):
                self.assertOversized(graded(CLOUD, "true"), named)


class TestHonestRepositories(unittest.TestCase):
    def test_a_virtualenv_and_test_caches_inside_the_repository_cost_nothing(self):
        """A git-ignored .venv/ of 3,000 files and the caches of a pytest run count against no figure: the gold fix still scores 1.0."""
        facts = graded(
            CLOUD,
            FLOOD + "3000 repo/.venv && (cd repo && python -m pytest -q -p no:randomly tests >/dev/null 2>&1); true",
        )
        self.assertEqual(score_facts(facts, CLOUD.budget).total, 1.0, facts.get("reason"))
        self.assertLessEqual(facts["read"]["files"], len(CLOUD.tree()))

    def test_an_untracked_virtualenv_sized_folder_is_inside_the_budget(self):
        """1,200 untracked files nobody ignored (a virtualenv made in the repository): read, and no secret for it."""
        facts = graded(CLOUD, FLOOD + "1200 repo/venv")
        self.assertNotIn("reason", facts)
        self.assertEqual(facts["left"], {})

    def test_every_scenario_s_gold_fix_stays_far_inside_every_figure(self):
        """On one dev task per scenario, the gold fix reads under a tenth of the files, objects and scanned bytes allowed."""
        for index in range(len(SCENARIOS)):
            plan = splits.plan_for("dev", index)
            with self.subTest(scenario=plan.scenario):
                read = graded(plan, "true")["read"]
                self.assertLess(read["files"] * 10, budget.MAX_FILES)
                self.assertLess(read["objects"] * 10, budget.MAX_OBJECTS)
                self.assertLess(read["bytes_scanned"] * 10, budget.VIEW_BYTES)


if __name__ == "__main__":
    unittest.main()
