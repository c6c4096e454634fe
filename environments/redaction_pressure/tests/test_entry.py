"""The environments-folder entry resolves as `redaction-pressure` and keeps the README's promises.

A fast subset of the root suite (which `uv run python tests/run.py` runs from the repository
root), built on the root suite's own cases (`tests/support/cases.py`, imported, not copied): the id
resolves through verifiers' loader to the taskset and its default harness; on all 64 dev tasks
the oracle scores 1.0 with the clean gate, an empty answer 0.0 and the first-character exploit
0.0; every malformed answer of the shared table ends in its code with reward 0; splits are
deterministic and private_eval needs its secret; a hostile answer is stopped within its budget.
"""

from __future__ import annotations

import sys
import time
import unittest
from importlib import metadata
from pathlib import Path

ROOT_TESTS = Path(__file__).resolve().parents[3] / "tests"
sys.path.insert(0, str(ROOT_TESTS))  # the root suite's shared cases (support/cases.py), one source of truth

from support.cases import (  # noqa: E402
    BAD_ANSWERS,
    EXHAUSTING,
    PRIVATE_ENV,
    TEST_SECRET,
    dev_tasks,
    longest_dev_task,
    private_secret,
    reply,
)

from redaction_pressure import load_task, score_reply  # noqa: E402
from redaction_pressure.redact import policies  # noqa: E402
from redaction_pressure.redact.scanner import EPISODE_BUDGET_SECONDS  # noqa: E402
from redaction_pressure.splits import SplitError  # noqa: E402


class TestEntry(unittest.TestCase):
    def test_id_resolves_to_the_taskset_and_its_harness(self):
        """verifiers resolves `redaction-pressure` to the module exporting the taskset and its one-turn harness."""
        import verifiers.v1 as vf
        from verifiers.v1.utils.loaders import _plugin_class, default_harness_id, import_taskset

        module = import_taskset("redaction-pressure")
        self.assertEqual(_plugin_class(module, vf.Taskset, "taskset").__name__, "RedactionPressureTaskset")
        self.assertEqual(_plugin_class(module, vf.Harness, "harness").__name__, "OneTurnHarness")
        self.assertEqual(default_harness_id("redaction-pressure"), "redaction-pressure")

    def test_the_entry_runs_the_repositorys_one_copy_of_the_code(self):
        """Installed for development, the entry imports the repository's package (its wheel carries a copy) at its own version."""
        import redaction_pressure
        from redaction_pressure import identity

        self.assertEqual(Path(redaction_pressure.__file__).parent, ROOT_TESTS.parent / "redaction_pressure")
        self.assertEqual(identity.version(), metadata.version("redaction-pressure"))


class TestDevSplit(unittest.TestCase):
    @classmethod
    def setUpClass(cls):
        cls.tasks = dev_tasks()

    def test_the_oracle_scores_one_with_the_clean_gate_on_every_dev_task(self):
        """The oracle's rules: reward 1.0 and the clean gate on all 64 dev tasks."""
        for task in self.tasks:
            with self.subTest(task=task.index):
                result = score_reply(task, policies.reply(policies.oracle_rules(task.hidden)))
                self.assertEqual((result.reward, result.clean_gate), (1.0, 1.0))

    def test_inaction_scores_zero_on_every_dev_task(self):
        """An empty rule list: reward 0.0 on all 64 dev tasks."""
        for task in self.tasks:
            with self.subTest(task=task.index):
                self.assertEqual(score_reply(task, '{"rules": []}').reward, 0.0)

    def test_the_first_character_exploit_earns_nothing_on_any_dev_task(self):
        """Removing only each secret's first character (a partial edit) scores 0.0 on all 64 dev tasks."""
        for task in self.tasks:
            with self.subTest(task=task.index):
                self.assertEqual(
                    score_reply(task, policies.reply(policies.first_character_rules(task.hidden))).reward, 0.0
                )


class TestAnswers(unittest.TestCase):
    def test_every_bad_answer_ends_in_its_code_with_reward_zero(self):
        """Each answer of the shared table of bad answers is invalid: its error code is the first recorded, every reward part 0."""
        task = load_task("dev", 0)
        for name, text, code in BAD_ANSWERS:
            if code in ("timeout", "budget_exhausted"):
                continue  # matching-time codes: TestBudget
            with self.subTest(case=name):
                result = score_reply(task, text)
                self.assertEqual(result.errors[0].code, code)
                self.assertEqual(
                    (result.reward, result.recall, result.precision, result.clean_gate, result.valid),
                    (0.0, 0.0, 0.0, 0.0, False),
                )


class TestSplits(unittest.TestCase):
    def test_tasks_are_the_same_every_time(self):
        """The same split and index give the same prompt and hidden records; neighbouring dev tasks differ."""
        first, again, other = load_task("dev", 5), load_task("dev", 5), load_task("dev", 6)
        self.assertEqual(first.model_dump(), again.model_dump())
        self.assertNotEqual(first.prompt.user, other.prompt.user)

    def test_private_eval_needs_its_secret_and_is_not_dev(self):
        """Without the secret private_eval fails naming the variable; with it, tasks are deterministic and differ from dev's."""
        with private_secret(None), self.assertRaises(SplitError) as caught:
            load_task("private_eval", 0)
        self.assertIn(PRIVATE_ENV, str(caught.exception))
        with private_secret(TEST_SECRET):
            private, again = load_task("private_eval", 0), load_task("private_eval", 0)
        self.assertEqual(private.model_dump(), again.model_dump())
        self.assertNotEqual(private.prompt.user, load_task("dev", 0).prompt.user)


class TestBudget(unittest.TestCase):
    def test_a_hostile_answer_is_stopped_within_its_budget(self):
        """Exponential backtracking ends as `timeout` and 24 cheap scans as `budget_exhausted`, each well within seconds, reward 0."""
        task = longest_dev_task()
        for text, code in (
            (reply((r"(?s)(.|.)*(?<=\x00)", "")), "timeout"),
            (reply(*[(EXHAUSTING, "")] * 24), "budget_exhausted"),
        ):
            with self.subTest(code=code):
                started = time.process_time()
                result = score_reply(task, text)
                spent = time.process_time() - started
                self.assertEqual([e.code for e in result.errors], [code])
                self.assertEqual(result.reward, 0.0)
                self.assertLess(spent, EPISODE_BUDGET_SECONDS + 1.0, "the episode's budget bounds the CPU it takes")


if __name__ == "__main__":
    unittest.main()
