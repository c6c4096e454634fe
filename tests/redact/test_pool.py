"""Isolated scanning: worker processes with a memory cap, a CPU allowance per episode and retries."""

from __future__ import annotations

import json
import os
import random
import signal
import subprocess
import sys
import tempfile
import threading
import time
import unittest
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

from redaction_pressure.redact import policies
from redaction_pressure.redact import pool as pool_module
from redaction_pressure.redact.api import prompt_digest, score_reply
from redaction_pressure.redact.pool import RESOURCE_EXHAUSTED, PromptMismatch, ScanPool, shared_pool
from redaction_pressure.redact.rules import Rule
from redaction_pressure.redact.scanner import Budget, scan
from redaction_pressure.splits import seed_for
from tests.support import calibrate
from tests.support.cases import HANG_SECONDS, dev_tasks


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
            self.assertEqual(
                (there.removed, there.redacted, there.matches, there.errors),
                (here.removed, here.redacted, here.matches, here.errors),
            )

    def test_whole_episodes_equal_the_in_process_score(self):
        """An episode scored in a worker from its seed equals score_reply in this process."""
        for task in dev_tasks()[:8]:
            seed = seed_for("dev", task.index)
            for answer in (
                policies.reply(policies.oracle_rules(task.hidden)),
                '{"rules": [{"pattern": "AKIA", "replacement": ""}]}',
                "nope",
            ):
                there = self.pool.score_episode(seed, 8, 32, prompt_digest(task.prompt.user), answer)
                here = score_reply(task, answer)
                self.assertEqual(there.model_dump(exclude={"metrics"}), here.model_dump(exclude={"metrics"}))
                self.assertEqual(set(there.metrics), set(here.metrics))

    def test_a_close_budget_verdict_gets_every_run_and_a_flood_one(self):
        """budget_exhausted near the end of the calls runs BUDGET_RUNS times before it stands; one at the first call runs once.

        The heavy record's length is measured on this machine so that one quadratic call over it
        costs ~0.1 s of CPU here: eight of them after sixteen trivial calls need ~0.8 s against a
        0.3 s budget (exhausted, on any machine, after at least 18 of 24 calls: a close verdict),
        and one record three times as long needs ~0.9 s at the first call (a flood). The margins
        (2.7x and 3x) hold whatever the machine's speed, since the sizes follow it.
        """
        hungry = [Rule(r"(?s).*.*(?<=\x00)", "")]
        length = calibrate.quadratic_length(0.1)
        budget = Budget(episode=0.3, call=1.0)  # a call never reaches its own cap first
        close = ["x"] * 16 + ["a" * length] * 8
        flood = ["a" * (length * 3)] + ["x"] * 23
        for texts, runs in ((close, pool_module.BUDGET_RUNS), (flood, 1)):
            before = self.pool.rechecked
            result = self.pool.scan(hungry, texts, budget)
            with self.subTest(runs=runs, length=length):
                self.assertEqual([e.code for e in result.errors], ["budget_exhausted"])
                self.assertEqual(self.pool.rechecked - before, runs - 1)
        with ScanPool(workers=1, memory_mb=256, budget_runs=1) as once:
            self.assertEqual([e.code for e in once.scan(hungry, close, budget).errors], ["budget_exhausted"])
            self.assertEqual(once.rechecked, 0)

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
        """A worker killed from outside mid-episode is replaced and the episode runs again, same result.

        The kill is timed by the worker's own CPU clock, not the wall clock: it lands once the
        worker has spent 0.05 CPU-s on the episode, and the episode is made to need at least
        0.5 CPU-s here (its texts repeated until the quiet scan does), so the kill falls inside
        it on a fast machine and a slow one, quiet or busy.
        """
        task = dev_tasks()[1]
        rules = [Rule(r"[A-Za-z0-9]{1,60}(?<=Q{3})", ""), *policies.oracle_rules(task.hidden)]
        texts = [r.text for r in task.hidden]
        budget = Budget(episode=30, call=30)
        quiet = scan(rules, texts, budget)
        while quiet.seconds < 0.5:  # ten times the kill's CPU mark at least
            texts *= 2
            quiet = scan(rules, texts, budget)
        with ScanPool(workers=1, memory_mb=256) as pool:
            worker = pool._idle.queue[0]
            pid, idle = worker.process.pid, calibrate.cpu_seconds_of(worker.process.pid)
            struck = threading.Event()

            def killer() -> None:
                while not struck.is_set():
                    if calibrate.cpu_seconds_of(pid) - idle >= 0.05:
                        os.kill(pid, signal.SIGKILL)
                        struck.set()
                    time.sleep(0.002)

            thread = threading.Thread(target=killer, daemon=True)
            thread.start()
            result = pool.scan(rules, texts, budget)
            struck.set()
            thread.join()
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


def scan_workers_of(parent: int) -> list[int]:
    """PIDs of live `redaction_pressure.redact.worker` processes started by `parent` (wherever they were re-parented)."""
    found = []
    for entry in Path("/proc").iterdir():
        try:
            if not entry.name.isdigit() or "zombie" in (entry / "status").read_text().lower():
                continue
            argv = (entry / "cmdline").read_bytes().split(b"\0")
        except OSError:
            continue
        if b"redaction_pressure.redact.worker" in argv and argv[-2:-1] == [str(parent).encode()]:
            found.append(int(entry.name))
    return found


class TestKillerDuringStarts(unittest.TestCase):
    def test_workers_killed_while_starting_and_scanning_change_no_result(self):
        """A killer striking the pool's first starts, replacements starting and busy workers: every episode is scored as on a quiet run."""
        tasks = dev_tasks()[:6]
        # Slow but honest scans (a fraction of a CPU second each), with a budget far above them.
        jobs = [
            (
                [Rule(r"[A-Za-z0-9]{1,40}(?<=Q{3})", ""), *policies.oracle_rules(task.hidden)],
                [r.text for r in task.hidden] * 2,
            )
            for task in tasks
        ] * 2
        budget = Budget(episode=60, call=60)
        quiet = [scan(rules, texts, budget) for rules, texts in jobs]
        pool = ScanPool(workers=2, memory_mb=256, wait=False)
        self.addCleanup(pool.close, kill=True)
        for pid in pool.pids():  # the pool's first starts, before any worker is ready
            os.kill(pid, signal.SIGKILL)
        rng, done, kills = random.Random(7), threading.Event(), {"starting": 0, "any": 0}

        def killer() -> None:
            seen = set(pool.pids())
            while not done.wait(rng.uniform(0.1, 0.4)):
                pids = pool.pids()
                young = [pid for pid in pids if pid not in seen]  # started since the last look
                seen.update(pids)
                kind = "starting" if young and rng.random() < 0.5 else "any"
                targets = young if kind == "starting" else pids
                if targets and sum(kills.values()) < 16:
                    try:
                        os.kill(rng.choice(targets), signal.SIGKILL)
                        kills[kind] += 1
                    except ProcessLookupError:
                        pass

        thread = threading.Thread(target=killer, daemon=True)
        thread.start()
        with ThreadPoolExecutor(4) as executor:
            futures = [executor.submit(pool.scan, rules, texts, budget) for rules, texts in jobs]
            results = [future.result(timeout=HANG_SECONDS * 5) for future in futures]
        done.set()
        thread.join()
        for here, there in zip(quiet, results, strict=True):
            self.assertEqual((there.removed, there.matches, there.errors), (here.removed, here.matches, here.errors))
        self.assertGreater(pool.killed_starts, 0, "some kills should land on starting workers")
        self.assertEqual(pool.broken(), [])


class TestSharedPool(unittest.TestCase):
    def test_episodes_arriving_together_share_one_pool(self):
        """Eight threads asking at once, while the first start is slow, get one pool (one set of workers)."""
        before = len(pool_module._POOLS)
        settings = (1, 200, 77.0, 3.0)  # settings no other test uses
        with ThreadPoolExecutor(8) as executor:
            pools = list(executor.map(lambda _: shared_pool(*settings), range(8)))
        self.assertEqual(len({id(p) for p in pools}), 1)
        self.assertEqual(len(pool_module._POOLS), before + 1)
        self.assertEqual(pools[0].scan([Rule("b", "")], ["ab"]).removed, (((1, 2),),))
        self.assertEqual(len(pools[0].pids()), 1)


class TestStopping(unittest.TestCase):
    def test_sigterm_and_sigint_stop_the_cli_and_its_scan_workers_at_once(self):
        """After SIGTERM or SIGINT to `redaction-pressure score`, none of its scan workers survives (hang guard only)."""
        with tempfile.TemporaryDirectory() as folder:
            answer = Path(folder) / "reply.json"
            answer.write_text(json.dumps({"rules": [{"pattern": r"[A-Za-z0-9]{1,40}(?<=Q{3})", "replacement": ""}]}))
            for signum in (signal.SIGTERM, signal.SIGINT):
                with self.subTest(signal=signal.Signals(signum).name):
                    cli = subprocess.Popen(
                        [str(Path(sys.executable).parent / "redaction-pressure"), "score", str(answer), "--split", "dev"],
                        stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL,
                    )  # fmt: skip
                    self.addCleanup(lambda p=cli: p.poll() is None and p.kill())
                    started = time.monotonic()
                    while (
                        not scan_workers_of(cli.pid)
                        and cli.poll() is None
                        and time.monotonic() - started < 3 * HANG_SECONDS
                    ):
                        time.sleep(0.05)
                    self.assertTrue(scan_workers_of(cli.pid), "the CLI should have started scan workers")
                    time.sleep(0.5)
                    cli.send_signal(signum)
                    cli.wait(timeout=HANG_SECONDS)
                    started = time.monotonic()
                    while scan_workers_of(cli.pid) and time.monotonic() - started < HANG_SECONDS:
                        time.sleep(0.1)
                    self.assertEqual(scan_workers_of(cli.pid), [])

    def test_workers_die_with_the_process_that_owns_the_pool(self):
        """A pool's owner SIGKILLed (no handler runs) takes its scan workers with it."""
        code = "from redaction_pressure.redact.pool import ScanPool; import time; ScanPool(workers=2, memory_mb=256); print('up', flush=True); time.sleep(600)"
        owner = subprocess.Popen([sys.executable, "-c", code], stdout=subprocess.PIPE, text=True)
        self.addCleanup(lambda: owner.poll() is None and owner.kill())
        self.assertEqual(owner.stdout.readline().strip(), "up")
        self.assertEqual(len(scan_workers_of(owner.pid)), 2)
        owner.kill()
        owner.wait()
        started = time.monotonic()
        while scan_workers_of(owner.pid) and time.monotonic() - started < HANG_SECONDS:
            time.sleep(0.1)
        self.assertEqual(scan_workers_of(owner.pid), [])
        owner.stdout.close()


if __name__ == "__main__":
    unittest.main()
