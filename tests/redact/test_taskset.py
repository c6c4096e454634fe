"""The verifiers adapter: tasks, traces, rewards, metrics, levels, wire data and the real CLIs
(its behaviour under load and faults is `test_taskset_load`).
"""

from __future__ import annotations

import asyncio
import json
import os
import subprocess
import tempfile
import time
import unittest
from pathlib import Path

import verifiers.v1 as vf
from pydantic import ValidationError
from verifiers.v1.utils.loaders import default_harness_id, taskset_class

from redaction_pressure.corpus import SECRET_KINDS
from redaction_pressure.redact import policies
from redaction_pressure.redact.api import identity, load_task, score_reply
from redaction_pressure.redact.taskset import (
    RedactionPressureConfig,
    RedactionPressureData,
    RedactionPressureTask,
    RedactionPressureTaskset,
)
from redaction_pressure.splits import commitment, seed_for
from tests.support.cases import (
    BAD_ANSWERS,
    OTHER_SECRET,
    TEST_SECRET,
    captured_logs,
    longest_dev_task,
    private_secret,
)
from tests.support.taskset import make_trace, oracle_reply, scored, tasks

ROOT = Path(__file__).resolve().parents[2]


REWARDS = {"recall": 0.35, "precision": 0.35, "clean_gate": 0.30}


class TestTaskset(unittest.TestCase):
    def test_plugin_loader_finds_the_taskset_and_null_harness(self):
        """`vf-eval redaction-pressure` resolves our taskset, and the tool-less harness by default."""
        self.assertIs(taskset_class("redaction-pressure"), RedactionPressureTaskset)
        self.assertEqual(default_harness_id("redaction-pressure"), "redaction-pressure")

    def test_dev_has_64_uniquely_keyed_tasks(self):
        """The dev split loads 64 tasks with durable, distinct keys and ids."""
        loaded = tasks("dev")
        self.assertEqual(len(loaded), 64)
        self.assertEqual(len({t.key for t in loaded}), 64)
        self.assertEqual(loaded[7].data.id, "dev-00007")

    def test_task_data_carries_prompt_and_identity_not_hidden_records(self):
        """Wire data has the prompt and identity block, but no hidden text or seed."""
        task = tasks("dev", size=2)[1]
        loaded = load_task("dev", 1)
        wire = task.data.model_dump_json()
        self.assertEqual(task.data.environment, identity("dev", commitment("dev")))
        self.assertEqual((task.data.prompt, task.data.system_prompt), (loaded.prompt.user, loaded.prompt.system))
        for record in loaded.hidden:
            for span in record.secrets:
                self.assertNotIn(json.dumps(record.value(span))[1:-1], wire)

    def test_train_is_unbounded_and_dev_is_not(self):
        """Train streams without end unless sized; dev and private_eval are bounded."""
        self.assertFalse(RedactionPressureTaskset(RedactionPressureConfig(split="train")).bounded)
        self.assertTrue(RedactionPressureTaskset(RedactionPressureConfig(split="train", size=3)).bounded)
        self.assertTrue(RedactionPressureTaskset(RedactionPressureConfig(split="dev")).bounded)
        first = next(iter(RedactionPressureTaskset(RedactionPressureConfig(split="train"))))
        self.assertEqual(first.data.id, "train-00000")

    def test_bad_config_is_refused_by_name(self):
        """Unknown splits, bad sizes and an oversized dev are validation errors."""
        for kwargs, words in [
            ({"split": "test"}, "split"),
            ({"shown": 0}, "shown"),
            ({"hidden": 999}, "hidden"),
            ({"split": "dev", "size": 65}, "dev has 64 tasks"),
        ]:
            with self.subTest(kwargs=kwargs):
                with self.assertRaises(ValidationError) as caught:
                    RedactionPressureConfig(**kwargs)
                self.assertIn(words, str(caught.exception))

    def test_private_eval_without_secret_fails_at_load(self):
        """Asking for private_eval without the secret fails up front, naming the variable."""
        with private_secret(None):
            with self.assertRaises(ValueError) as caught:
                RedactionPressureTaskset(RedactionPressureConfig(split="private_eval"))
        self.assertIn("REDACTION_PRESSURE_PRIVATE_SEED", str(caught.exception))


class TestScoring(unittest.TestCase):
    @classmethod
    def setUpClass(cls):
        cls.dev = tasks("dev", size=8)

    def test_oracle_trace_carries_rewards_metrics_and_info(self):
        """A scored trace has three weighted rewards summing to 1.0, metrics and the info blocks."""
        task = self.dev[0]
        trace = scored(task, oracle_reply(task))
        self.assertEqual({name: r.weight for name, r in trace.rewards.items()}, REWARDS)
        self.assertEqual({name: r.score for name, r in trace.rewards.items()}, dict.fromkeys(REWARDS, 1.0))
        self.assertEqual(list(trace.rewards), ["recall", "precision", "clean_gate"])
        self.assertEqual(trace.reward, 1.0)
        for metric in (
            "validity",
            "rules",
            "secrets_total",
            "secrets_removed",
            "chars_removed",
            "decoys_touched",
            "budget_used",
        ):
            self.assertIn(metric, trace.metrics)
        shares = {name: value for name, value in trace.metrics.items() if name.startswith("all_removed_")}
        self.assertEqual(set(shares), {f"all_removed_{kind}" for kind in SECRET_KINDS}, "every kind on every episode")
        self.assertEqual(set(shares.values()), {1.0})  # the oracle leaves no secret of any kind
        kinds = trace.info["secret_kinds"]
        self.assertTrue(kinds)
        self.assertEqual(sum(counts["total"] for counts in kinds.values()), trace.metrics["secrets_total"])
        for kind, counts in kinds.items():
            self.assertEqual(counts["removed"], counts["total"], kind)
        self.assertEqual(trace.info["environment"], identity("dev", commitment("dev")))
        self.assertEqual(trace.info["redaction_errors"], [])
        self.assertEqual(trace.info["task_seed"], seed_for("dev", 0))

    def test_rewards_match_score_reply(self):
        """The verifiers rewards are the plain API's result, component by component."""
        task = self.dev[1]
        answer = '{"rules": [{"pattern": "(?s).+", "replacement": "[REDACTED]"}]}'
        trace = scored(task, answer)
        result = score_reply(load_task("dev", 1), answer)
        self.assertEqual(
            (trace.rewards["recall"].score, trace.rewards["precision"].score, trace.rewards["clean_gate"].score),
            (result.recall, result.precision, result.clean_gate),
        )
        self.assertAlmostEqual(trace.reward, result.reward, places=12)

    def test_every_error_code_lands_in_the_trace_and_zeroes_rewards(self):
        """Each minimal bad answer's code is in info.redaction_errors and all three rewards are 0."""
        longest = tasks("dev")[longest_dev_task().index]
        for name, text, code in BAD_ANSWERS:
            with self.subTest(name):
                trace = scored(longest, text)
                self.assertEqual(trace.info["redaction_errors"][0]["code"], code)
                self.assertEqual(set(trace.info["redaction_errors"][0]), {"code", "rule", "record", "detail"})
                self.assertEqual({n: r.score for n, r in trace.rewards.items()}, dict.fromkeys(REWARDS, 0.0))
                self.assertEqual(trace.metrics["validity"], 0.0)

    def test_an_untouched_trace_scores_zero(self):
        """No reply at all is a malformed answer, not a crash."""
        trace = scored(self.dev[2], None)
        self.assertEqual(trace.reward, 0.0)
        self.assertEqual(trace.info["redaction_errors"][0]["code"], "malformed_json")

    def test_gold_check_passes(self):
        """Task.validate reports the oracle as solving the task."""
        self.assertTrue(asyncio.run(self.dev[3].validate(None)))

    def test_scoring_does_not_block_the_event_loop(self):
        """While a hostile reply is scored, other coroutines keep running."""
        task = self.dev[4]
        hostile = '{"rules": [{"pattern": "(?s)(.|.)*(?<=\\\\x00)", "replacement": ""}]}'

        async def main() -> float:
            gaps, stop = [], asyncio.Event()

            async def ticker():
                last = time.perf_counter()
                while not stop.is_set():
                    await asyncio.sleep(0.005)
                    now = time.perf_counter()
                    gaps.append(now - last)
                    last = now

            tick = asyncio.create_task(ticker())
            await asyncio.sleep(0)  # the ticker starts before the scan
            trace = make_trace(task, hostile)
            await task.score(trace)
            stop.set()
            await tick
            self.assertEqual(trace.info["redaction_errors"][0]["code"], "timeout")
            return len(gaps)

        # The scan spends its whole 0.25 s CPU budget: a loop it blocked would tick once or twice
        # in that time, a free one ticks every 5 ms (about 50 times on a quiet machine). No
        # wall-clock bound, so a busy machine, which slows the scan as much as the ticker, passes.
        self.assertGreaterEqual(asyncio.run(main()), 10)


class TestEdgeReplies(unittest.TestCase):
    def test_edge_replies_land_on_the_trace(self):
        """Lone surrogates, deep nesting and a 100 MB reply score in the taskset exactly as score_reply says."""
        from .test_api import EDGE_REPLIES

        task = tasks("dev", size=1)[0]
        plain = load_task("dev", 0)
        for name, answer, code in EDGE_REPLIES:
            with self.subTest(name):
                trace = scored(task, answer)
                expected = score_reply(plain, answer)
                self.assertEqual(trace.reward, expected.reward)
                self.assertEqual([e["code"] for e in trace.info["redaction_errors"]], [e.code for e in expected.errors])
                self.assertEqual([e["code"] for e in trace.info["redaction_errors"]][:1], [code] if code else [])


class TestDifficulty(unittest.TestCase):
    def test_a_hard_taskset_builds_and_scores_hard_tasks(self):
        """`difficulty="hard"` loads hard tasks with their own identity, and a worker scores them at that level."""
        task = tasks("dev", size=2, difficulty="hard")[1]
        self.assertEqual(task.data.difficulty, "hard")
        self.assertEqual(task.data.environment["corpus_version"], "5-hard")
        self.assertEqual(task.data.prompt, load_task("dev", 1, difficulty="hard").prompt.user)
        self.assertNotEqual(task.data.prompt, load_task("dev", 1).prompt.user)
        hidden = load_task("dev", 1, difficulty="hard").hidden
        trace = scored(task, policies.reply(policies.oracle_rules(hidden)))
        self.assertEqual(trace.reward, 1.0)
        self.assertEqual(trace.info["environment"], identity("dev", commitment("dev", "hard"), "hard"))
        self.assertEqual(trace.info["task_seed"], seed_for("dev", 1, "hard"))
        rebuilt = RedactionPressureTask(RedactionPressureData.model_validate(task.data.model_dump()))
        self.assertEqual(scored(rebuilt, policies.reply(policies.oracle_rules(hidden))).reward, 1.0)

    def test_the_default_difficulty_is_standard(self):
        """Without a difficulty the taskset is the standard level's, with ids as before."""
        task = tasks("dev", size=1)[0]
        self.assertEqual(
            (task.data.difficulty, task.data.id, task.data.environment["corpus_version"]),
            ("standard", "dev-00000", "4"),
        )

    def test_an_unknown_difficulty_is_refused(self):
        """A misspelt level is a configuration error."""
        with self.assertRaises(ValueError):
            RedactionPressureConfig(difficulty="medium")


class TestWireData(unittest.TestCase):
    def rebuilt(self, task: RedactionPressureTask) -> RedactionPressureTask:
        return RedactionPressureTask(RedactionPressureData.model_validate(task.data.model_dump()))

    def test_rebuilt_public_task_scores_the_same(self):
        """model_dump then model_validate gives a task that scores identically (as vf-replay does)."""
        task = tasks("dev", size=6)[5]
        for answer in (oracle_reply(task), '{"rules": [{"pattern": "AKIA[A-Z2-7]{16}", "replacement": ""}]}'):
            first, second = scored(task, answer), scored(self.rebuilt(task), answer)
            self.assertEqual(
                ({n: r.score for n, r in first.rewards.items()}, first.info["redaction_errors"]),
                ({n: r.score for n, r in second.rewards.items()}, second.info["redaction_errors"]),
            )

    def test_private_trace_reveals_the_seed_but_never_the_secret(self):
        """A completed private trace has the derived seed in info, its data does not, and no output holds the secret."""
        with captured_logs() as logs, private_secret(TEST_SECRET):
            task = tasks("private_eval", size=2)[1]
            trace = scored(self.rebuilt(task), oracle_reply(task))
            seed = seed_for("private_eval", 1)
        self.assertNotIn(TEST_SECRET, logs.getvalue())
        self.assertEqual(trace.reward, 1.0)
        self.assertEqual(trace.info["task_seed"], seed)
        self.assertEqual(trace.info["environment"]["split"], "private_eval")
        self.assertNotIn(str(seed), task.data.model_dump_json())
        dumped = trace.model_dump_json()
        self.assertNotIn(TEST_SECRET, dumped)
        self.assertNotIn(TEST_SECRET, repr(task.data))

    def test_task_data_with_another_prompt_is_refused(self):
        """Data whose prompt is not what its seed generates fails clearly instead of mis-scoring."""
        task = tasks("dev", size=1)[0]
        tampered = RedactionPressureTask(task.data.model_copy(update={"prompt": task.data.prompt + " "}))
        with self.assertRaises(vf.TaskError) as caught:
            asyncio.run(tampered.score(make_trace(tampered, oracle_reply(task))))
        self.assertIn("prompt", str(caught.exception))

    def test_private_trace_scored_under_another_secret_is_refused(self):
        """Scoring a private trace with a different secret fails clearly instead of mis-scoring."""
        with private_secret(TEST_SECRET):
            task = tasks("private_eval", size=1)[0]
            answer = oracle_reply(task)
        with private_secret(OTHER_SECRET):
            with self.assertRaises(vf.TaskError) as caught:
                asyncio.run(task.score(make_trace(task, answer)))
        self.assertIn("commitment", str(caught.exception))
        self.assertNotIn(TEST_SECRET, str(caught.exception))
        self.assertNotIn(OTHER_SECRET, str(caught.exception))


class TestValidateCli(unittest.TestCase):
    def test_vf_validate_passes_every_dev_task(self):
        """The real vf-validate, subprocess runtime, reports a valid rate of 1.0 on 64 dev tasks."""
        with tempfile.TemporaryDirectory() as out:
            env = {**os.environ, "HOME": out, "UV_PYTHON_DOWNLOADS": "never"}
            run = subprocess.run(
                ["vf-validate", "redaction-pressure", "--taskset.split", "dev", "-n", "64",
                 "--runtime.type", "subprocess", "--no-rich", "-o", out],
                env=env, cwd=ROOT, capture_output=True, text=True, stdin=subprocess.DEVNULL, timeout=600,
            )  # fmt: skip
            self.assertEqual(run.returncode, 0, run.stderr[-2000:])
            (summary,) = Path(out).rglob("summary.json")
            data = json.loads(summary.read_text())
        self.assertEqual((data["total"], data["valid_rate"]), (64, 1.0))
        self.assertEqual(data["checks"]["gold"]["valid"], 64)
        self.assertEqual(data["checks"]["noop"]["valid"], 64)


if __name__ == "__main__":
    unittest.main()
