"""The verifiers adapter under load: scoring does not wait on the event loop, and 64 concurrent
mixed episodes keep every reward through CPU burners and killed workers.
"""

from __future__ import annotations

import asyncio
import contextlib
import json
import os
import unittest

import verifiers.v1 as vf

from redaction_pressure.redact.api import load_task
from tests.support import calibrate
from tests.support.cases import (
    EXHAUSTING,
    HANG_SECONDS,
    child_pids,
    longest_dev_task,
)
from tests.support.taskset import make_trace, oracle_reply, scored, tasks


class TestLoad(unittest.TestCase):
    def test_reward_does_not_depend_on_concurrent_episodes(self):
        """A budget-hungry but valid answer scores identically alone and among 16 concurrent episodes, 10 hostile.

        The hungry part is sized on this machine (`calibrate.spending_rules`): copies of a linear
        pattern that together spend about a third of the episode budget here, each call a small
        part of the per-call cap, so the answer is valid with a threefold margin on a fast
        machine or a slow one. The hostile answers end in their codes by wide margins on any
        machine: exponential backtracking reaches the per-call cap, and 24 copies of a linear
        pattern need several budgets in all with no call near the cap (`EXHAUSTING`).
        """
        dev = tasks("dev")
        task = dev[longest_dev_task().index]
        spending = calibrate.spending_rules([r.text for r in longest_dev_task().hidden], share=1 / 3)
        heavy = json.loads(oracle_reply(task))
        heavy["rules"] += [{"pattern": spending.pattern, "replacement": ""}] * spending.copies
        answer = json.dumps(heavy)
        alone = scored(task, answer)
        self.assertEqual(alone.info["redaction_errors"], [])
        self.assertGreater(
            alone.metrics["budget_used"],
            0.1,
            f"the calibrated rules should spend a good share of the budget ({spending})",
        )
        hostile = [
            json.dumps({"rules": [{"pattern": r"(?s)(.|.)*(?<=\x00)", "replacement": ""}]}),
            json.dumps({"rules": [{"pattern": EXHAUSTING, "replacement": ""}] * 24}),
        ]
        others = [(task, hostile[i % 2]) if i < 10 else (dev[i], oracle_reply(dev[i])) for i in range(16)]

        async def crowd():
            traces = [make_trace(t, a) for t, a in [(task, answer), *others]]
            await asyncio.gather(*(t.score(tr) for t, tr in zip([task] + [t for t, _ in others], traces, strict=True)))
            return traces

        crowded = asyncio.run(crowd())
        self.assertEqual(
            ({n: r.score for n, r in crowded[0].rewards.items()}, crowded[0].info["redaction_errors"]),
            ({n: r.score for n, r in alone.rewards.items()}, alone.info["redaction_errors"]),
        )
        codes = [t.info["redaction_errors"][0]["code"] for t in crowded[1:11]]
        self.assertEqual(codes, ["timeout", "budget_exhausted"] * 5)
        self.assertTrue(all(t.reward == 1.0 for t in crowded[11:]))


def _burn(stop, burning) -> None:
    burning.release()
    while not stop.is_set():
        sum(range(10_000))


class TestFaultsAndLoad(unittest.TestCase):
    """64 concurrent mixed episodes: no CPU burner and no killed worker changes any reward."""

    @classmethod
    def setUpClass(cls):
        cls.dev = tasks("dev")
        hungry_tasks = [i for i in range(len(cls.dev)) if i % 10 == 3]
        # Budget-hungry, clear of every limit, sized on this machine: 24 copies of a linear pattern
        # whose dearest call is a fraction of the per-call cap and whose least total is several
        # budgets (`calibrate.exhausting_rule` balances the two), so a busy machine's slower
        # CPU-seconds still end it as budget_exhausted, never timeout, and a fast machine's
        # quicker ones never let it finish.
        cls.hungry = calibrate.exhausting_rule([[r.text for r in load_task("dev", i).hidden] for i in hungry_tasks])
        assert cls.hungry.margin >= 3, f"this machine gives the hungry answer too thin a margin: {cls.hungry}"
        hungry = json.dumps({"rules": [{"pattern": cls.hungry.pattern, "replacement": ""}] * 24})
        cls.mixed = []
        for i, task in enumerate(cls.dev):  # 85% exact, 10% budget-exhausting, 5% malformed
            kind = "hungry" if i in hungry_tasks else "malformed" if i % 20 == 7 else "exact"
            answer = hungry if kind == "hungry" else "rules: [AKIA]" if kind == "malformed" else oracle_reply(task)
            cls.mixed.append((task, answer))
        cls.quiet = [cls.outcome(scored(task, answer)) for task, answer in cls.mixed]
        kinds = [c for c in (q[1][:1] for q in cls.quiet)]
        assert kinds.count(["budget_exhausted"]) == 7 and kinds.count(["malformed_json"]) >= 3, kinds

    @staticmethod
    def outcome(trace: vf.Trace) -> tuple:
        # An escaped episode carries its detail, so a failure says why it escaped.
        codes = [
            e["code"] if e["code"] != "resource_exhausted" else f"resource_exhausted: {e['detail']}"
            for e in trace.info["redaction_errors"]
        ]
        return ({n: r.score for n, r in trace.rewards.items()}, codes)

    def concurrently(self) -> list[tuple]:
        async def crowd():
            traces = [make_trace(task, answer) for task, answer in self.mixed]
            await asyncio.gather(*(task.score(trace) for (task, _), trace in zip(self.mixed, traces, strict=True)))
            return traces

        return [self.outcome(trace) for trace in asyncio.run(crowd())]

    def test_cpu_burners_change_no_reward(self):
        """With two CPU-burning processes beside it on a 2-core machine, every reward and error code equals the quiet run's."""
        import multiprocessing

        context = multiprocessing.get_context("spawn")
        stop, burning = context.Event(), context.Semaphore(0)
        burners = [context.Process(target=_burn, args=(stop, burning), daemon=True) for _ in range(2)]
        for burner in burners:
            burner.start()
        try:
            # Both burn before the episodes start (a spawned process imports this module first).
            self.assertTrue(all(burning.acquire(timeout=HANG_SECONDS) for _ in burners), "the burners did not start")
            loaded = self.concurrently()
        finally:
            stop.set()
            for burner in burners:
                burner.join(HANG_SECONDS)
                if burner.is_alive():
                    burner.kill()
        self.assertEqual(loaded, self.quiet)

    def test_killed_scan_workers_change_no_reward(self):
        """Scan workers SIGKILLed at random moments during 64 concurrent episodes: every reward equals the quiet run's.

        The killer strikes by the work the workers have done, not by the wall clock: after each
        strike it waits until the workers together have spent a random 1 to 4 CPU-seconds (their
        CPU clocks read from /proc), then kills one at random. On a busy or slow machine a
        wall-clock killer strikes the same episode again and again (24 kills in a row exhaust it);
        counted in CPU-seconds, an episode that needs at most about three is struck a few times at
        most, on any machine.
        """
        import random
        import signal
        import threading

        pool = self.dev[0].pool
        replaced = pool.replaced
        stop, kills = threading.Event(), []
        rng = random.Random(7)

        def killer() -> None:
            seen: dict[int, float] = {}  # worker pid -> CPU seconds at the last look
            spent, due = 0.0, rng.uniform(1.0, 4.0)
            while not stop.wait(0.01):
                children = child_pids(os.getpid(), "redaction_pressure.redact.worker")
                for pid in children:
                    now = calibrate.cpu_seconds_of(pid)
                    spent += max(0.0, now - seen.get(pid, now))
                    seen[pid] = now
                if spent >= due and children:
                    victim = rng.choice(children)
                    with contextlib.suppress(ProcessLookupError):
                        os.kill(victim, signal.SIGKILL)
                        kills.append(victim)
                    spent, due = 0.0, rng.uniform(1.0, 4.0)

        thread = threading.Thread(target=killer)
        thread.start()
        rounds = []
        try:
            # The 64 episodes again until the killer has struck five times: the round count, not
            # the clock, varies with the machine.
            while len(rounds) < 10 and (not rounds or len(kills) < 5):
                rounds.append(self.concurrently())
        finally:
            stop.set()
            thread.join()
        self.assertGreaterEqual(len(kills), 5, "the killer should have struck several times")
        self.assertGreater(pool.replaced, replaced)
        for loaded in rounds:
            self.assertEqual(loaded, self.quiet)


if __name__ == "__main__":
    unittest.main()
