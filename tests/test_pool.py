"""Isolated scanning: worker processes with a memory cap, a CPU allowance per episode and retries."""

from __future__ import annotations

import json
import os
import signal
import threading
import time
import unittest

from cases import HANG_SECONDS, dev_tasks

from redaction_pressure import policies
from redaction_pressure.api import prompt_digest, score_reply
from redaction_pressure.pool import RESOURCE_EXHAUSTED, PromptMismatch, ScanPool
from redaction_pressure.rules import Rule
from redaction_pressure.scanner import Budget, scan
from redaction_pressure.splits import seed_for


class TestScanPool(unittest.TestCase):
    @classmethod
    def setUpClass(cls):
        cls.pool = ScanPool(workers=2, memory_mb=256, cpu_seconds=1.0)

    @classmethod
    def tearDownClass(cls):
        cls.pool.close()

    def test_results_equal_the_in_process_scan(self):
        """A worker returns exactly what scan() returns in this process."""
        for task in dev_tasks()[:8]:
            rules = [*policies.oracle_rules(task.hidden), Rule("EXAMPLE", ""), Rule("[0-9a-f]{40}", "[REDACTED]")]
            texts = [r.text for r in task.hidden]
            here, there = scan(rules, texts), self.pool.scan(rules, texts)
            self.assertEqual((there.removed, there.redacted, there.matches, there.errors), (here.removed, here.redacted, here.matches, here.errors))

    def test_whole_episodes_equal_the_in_process_score(self):
        """An episode scored in a worker from its seed equals score_reply in this process."""
        for task in dev_tasks()[:8]:
            seed = seed_for("dev", task.index)
            for answer in (policies.reply(policies.oracle_rules(task.hidden)), '{"rules": [{"pattern": "AKIA", "replacement": ""}]}', "nope"):
                there = self.pool.score_episode(seed, 8, 32, prompt_digest(task.prompt.user), answer)
                here = score_reply(task, answer)
                self.assertEqual(there.model_dump(exclude={"metrics"}), here.model_dump(exclude={"metrics"}))
                self.assertEqual(set(there.metrics), set(here.metrics))

    def test_an_exhausted_episode_keeps_its_metrics(self):
        """An episode past its CPU allowance scores 0 with resource_exhausted and the usual metric keys."""
        task = dev_tasks()[0]
        answer = json.dumps({"rules": [{"pattern": r"(?s)(.|.)*(?<=\x00)", "replacement": ""}]})
        budget = Budget(episode=60, call=60)
        result = self.pool.score_episode(seed_for("dev", 0), 8, 32, prompt_digest(task.prompt.user), answer, budget)
        self.assertEqual(([e.code for e in result.errors], result.reward), ([RESOURCE_EXHAUSTED], 0.0))
        self.assertEqual(set(result.metrics), set(score_reply(task, "{}").metrics))

    def test_a_prompt_that_the_seed_does_not_give_is_refused(self):
        """A digest that does not match the rebuilt prompt raises PromptMismatch."""
        with self.assertRaises(PromptMismatch):
            self.pool.score_episode(seed_for("dev", 0), 8, 32, "0" * 64, '{"rules": []}')

    def test_an_episode_past_its_cpu_allowance_is_killed_and_replaced(self):
        """Past its CPU allowance the worker is killed; the episode is resource_exhausted, not retried; the pool goes on."""
        replaced, retried = self.pool.replaced, self.pool.retried
        start = time.perf_counter()
        result = self.pool.scan([Rule("(a+)+$", "")], ["a" * 5000 + "b"], Budget(episode=60, call=60))
        self.assertLess(time.perf_counter() - start, HANG_SECONDS)
        self.assertEqual([e.code for e in result.errors], [RESOURCE_EXHAUSTED])
        self.assertIn("CPU", result.errors[0].detail)
        self.assertEqual((self.pool.replaced, self.pool.retried), (replaced + 1, retried))
        self.assertEqual(self.pool.scan([Rule("b", "")], ["ab"]).removed, (((1, 2),),))

    def test_a_worker_killed_during_an_episode_costs_nothing(self):
        """A worker killed from outside mid-episode is replaced and the episode runs again, same result."""
        task = dev_tasks()[1]
        # A slow but honest scan (about 0.2 s of CPU on a quiet machine), so the kill lands while it runs.
        rules = [Rule(r"[A-Za-z0-9]{1,60}(?<=Q{3})", ""), *policies.oracle_rules(task.hidden)]
        texts = [r.text for r in task.hidden] * 8
        budget = Budget(episode=30, call=30)
        quiet = scan(rules, texts, budget)
        with ScanPool(workers=1, memory_mb=256) as pool:
            worker = pool._idle.queue[0]
            killer = threading.Timer(0.05, os.kill, (worker.process.pid, signal.SIGKILL))
            killer.start()
            result = pool.scan(rules, texts, budget)
            killer.join()
            self.assertEqual((pool.retried, pool.replaced), (1, 1))
        self.assertEqual((result.removed, result.matches, result.errors), (quiet.removed, quiet.matches, quiet.errors))

    def test_a_stalled_worker_is_replaced_and_the_episode_runs_again(self):
        """A worker stopped from outside (no CPU used) trips the wall-clock safety net; the episode is retried."""
        with ScanPool(workers=1, memory_mb=256, deadline=1.0) as pool:
            os.kill(pool._idle.queue[0].process.pid, signal.SIGSTOP)
            result = pool.scan([Rule("b", "")], ["ab"])
            self.assertEqual((result.removed, result.errors), ((((1, 2),),), ()))
            self.assertEqual((pool.retried, pool.replaced), (1, 1))

    def test_an_episode_over_the_memory_cap_is_resource_exhausted(self):
        """A job the worker cannot hold in its memory cap ends as resource_exhausted, not a crash."""
        result = self.pool.scan([Rule("b", "")], ["a" * (300 * 1024 * 1024)])
        self.assertEqual([e.code for e in result.errors], [RESOURCE_EXHAUSTED])
        self.assertEqual(self.pool.scan([Rule("b", "")], ["ab"]).errors, ())

    def test_a_worker_killed_while_idle_costs_no_episode(self):
        """A worker that died between episodes is replaced before it takes the next one."""
        for worker in list(self.pool._idle.queue):
            os.kill(worker.process.pid, signal.SIGKILL)
            worker.process.wait()
        for _ in range(3):
            self.assertEqual(self.pool.scan([Rule("b", "")], ["ab"]).errors, ())

    def test_bad_settings_are_refused(self):
        """A pool needs at least one worker, 64 MiB, a positive deadline and a positive CPU allowance."""
        for kwargs in ({"workers": 0}, {"memory_mb": 8}, {"deadline": 0}, {"cpu_seconds": 0}):
            with self.subTest(**kwargs), self.assertRaises(ValueError):
                ScanPool(**kwargs)

    def test_a_closed_pool_refuses_work(self):
        """After close(), scanning raises instead of hanging."""
        pool = ScanPool(workers=1)
        pool.close()
        with self.assertRaises(RuntimeError):
            pool.scan([Rule("a", "")], ["a"])



class _KillStarts(ScanPool):
    """A pool whose next `starts_to_kill` worker starts die of `signum` before they are ready."""

    def __init__(self, signum: int) -> None:
        self.signum, self.starts_to_kill = signum, 0
        super().__init__(workers=1, memory_mb=256)

    def _spawn(self):
        worker = super()._spawn()
        if self.starts_to_kill:
            self.starts_to_kill -= 1
            os.kill(worker.process.pid, self.signum)
        return worker


class TestStartingWorkers(unittest.TestCase):
    def pool_whose_next_starts_die(self, signum: int, starts: int) -> _KillStarts:
        """A one-worker pool whose worker was just SIGKILLed and whose next `starts` starts die of `signum`."""
        pool = _KillStarts(signum)
        self.addCleanup(pool.close)
        (worker,) = list(pool._idle.queue)
        pool.starts_to_kill = starts
        os.kill(worker.process.pid, signal.SIGKILL)
        worker.process.wait()
        return pool

    def test_a_replacement_killed_many_times_while_starting_still_serves(self):
        """Twenty starts SIGKILLed in a row (a killer on a loaded machine) delay the episode, never fail it."""
        pool = self.pool_whose_next_starts_die(signal.SIGKILL, 20)
        self.assertEqual(pool.scan([Rule("b", "")], ["ab"]).removed, (((1, 2),),))
        self.assertEqual(pool.starts_to_kill, 0)

    def test_a_worker_that_cannot_start_fails_one_episode_and_the_pool_heals(self):
        """A start that crashes by itself fails the waiting episode with the reason; the next episode is served."""
        pool = self.pool_whose_next_starts_die(signal.SIGSEGV, 1)
        with self.assertRaises(RuntimeError) as caught:
            pool.scan([Rule("b", "")], ["ab"])
        self.assertIn("exited while starting", str(caught.exception))
        self.assertEqual(pool.scan([Rule("b", "")], ["ab"]).removed, (((1, 2),),))


if __name__ == "__main__":
    unittest.main()
