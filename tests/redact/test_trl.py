"""TRL's path without a server: the exported `prompt` column and `redaction_pressure.trl.reward_function`."""

from __future__ import annotations

import json
import tempfile
import unittest
from pathlib import Path

from redaction_pressure.redact.api import load_task, score_reply
from redaction_pressure.redact.policies.reference import first_character_rules, oracle_rules
from redaction_pressure.redact.policies.reference import reply as rules_json
from redaction_pressure.trl import reward_function
from tests.support.cli import run


class TestRewardFunction(unittest.TestCase):
    @classmethod
    def setUpClass(cls):
        with tempfile.TemporaryDirectory() as folder:
            out = Path(folder) / "dev"
            done = run("export", "dev", "--out", str(out), "--size", "6", "--shown", "6", "--hidden", "20")
            if done.returncode:
                raise AssertionError(done.stderr)
            cls.rows = [json.loads(line) for line in (out / "dev.jsonl").read_text().splitlines()]
        cls.columns = {key: [row[key] for row in cls.rows] for key in cls.rows[0] if key != "prompt"}
        cls.tasks = [load_task("dev", i, shown=6, hidden=20) for i in range(6)]

    def test_the_prompt_column_is_the_chat_trl_samples_from(self):
        """Each row's `prompt` is the system and user messages of its task, in TRL's conversational format."""
        for row, task in zip(self.rows, self.tasks):
            self.assertEqual(row["prompt"], [{"role": "system", "content": task.prompt.system},
                                             {"role": "user", "content": task.prompt.user}])  # fmt: skip

    def test_rewards_are_score_replys_for_chat_and_text_completions(self):
        """Oracle, first-character and empty replies, as chat completions and as text: score_reply's rewards."""
        for name, replies in (
            ("oracle", [rules_json(oracle_rules(t.hidden)) for t in self.tasks]),
            ("partial", [rules_json(first_character_rules(t.hidden)) for t in self.tasks]),
            ("empty", ["" for _ in self.tasks]),
        ):
            expected = [score_reply(t, r).reward for t, r in zip(self.tasks, replies)]
            chats = [[{"role": "assistant", "content": r}] for r in replies]
            with self.subTest(replies=name):
                self.assertEqual(
                    reward_function(chats, **self.columns, prompts=[row["prompt"] for row in self.rows]), expected
                )
                self.assertEqual(reward_function(replies, **self.columns), expected)
        self.assertEqual(reward_function([[{"role": "assistant", "content": rules_json(oracle_rules(self.tasks[0].hidden))}]],
                                         **{k: v[:1] for k, v in self.columns.items()}), [1.0])  # fmt: skip
        self.assertEqual(expected, [0.0] * 6)

    def test_a_batch_without_its_rows_is_refused_by_name(self):
        """Completions that do not match the rows passed are a one-line error naming what to pass."""
        with self.assertRaisesRegex(ValueError, "pass the dataset's split and index"):
            reward_function(["{}", "{}"], split=["dev"], index=[0])
