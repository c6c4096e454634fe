"""Served like a trainer serves it: `redaction-pressure serve-env` (verifiers' env-server pool) and an EnvClient."""

from __future__ import annotations

import asyncio
import os
import selectors
import signal
import subprocess
import sys
import time
import unittest
from pathlib import Path

import verifiers.v1 as vf
from verifiers.v1.serve import EnvClient

from redaction_pressure.redact.api import load_task
from tests.support.cases import HANG_SECONDS, PRIVATE_ENV, child_pids, cycled_reply
from tests.support.standin import StandInModel
from tests.support.taskset import scored, tasks

BIN = Path(sys.executable).parent
TASKS = 8
STARTUP_SECONDS = 300


def read_line(process: subprocess.Popen, timeout: float) -> str:
    """The next line of the process's standard output, or '' if none came in time."""
    selector = selectors.DefaultSelector()
    selector.register(process.stdout, selectors.EVENT_READ)
    if not selector.select(timeout):
        return ""
    return process.stdout.readline()


class TestServeEnv(unittest.TestCase):
    @classmethod
    def setUpClass(cls):
        cls.dev = tasks("dev", size=TASKS)
        cls.replies = {}
        for task in cls.dev:
            hidden = load_task("dev", task.data.index).hidden
            cls.replies[task.data.index] = cycled_reply(task.data.index, hidden)
        cls.model = StandInModel({task.data.prompt: cls.replies[task.data.index] for task in cls.dev})
        env = {k: v for k, v in os.environ.items() if k != PRIVATE_ENV}
        started = time.monotonic()
        cls.server = subprocess.Popen(
            [str(BIN / "redaction-pressure"), "serve-env", "--host", "0.0.0.0", "--port", "0", "--workers", "2", "--scan-workers", "1"],
            stdout=subprocess.PIPE, stderr=subprocess.PIPE, stdin=subprocess.DEVNULL, text=True, env=env,
        )  # fmt: skip
        line = read_line(cls.server, STARTUP_SECONDS)
        cls.startup = time.monotonic() - started
        if not line.startswith("ready "):
            cls.server.kill()
            cls.model.close()
            raise AssertionError(f"serve-env did not announce readiness: {line!r}\n{cls.server.stderr.read()[-3000:]}")
        cls.announced = line.split()[1]
        # Bound on every interface; the episodes still travel only over loopback.
        cls.address = cls.announced.replace("0.0.0.0", "127.0.0.1")

    @classmethod
    def tearDownClass(cls):
        if cls.server.poll() is None:
            cls.server.kill()
            cls.server.wait()
        cls.server.stdout.close()
        cls.server.stderr.close()
        cls.model.close()

    def test_a_server_bound_beyond_loopback_warns_and_listens_everywhere(self):
        """--host 0.0.0.0: one warning naming the missing authentication, the address announced, a listening socket on every interface."""
        self.assertTrue(self.announced.startswith("tcp://0.0.0.0:"), self.announced)
        selector = selectors.DefaultSelector()
        selector.register(self.server.stderr, selectors.EVENT_READ)
        self.assertTrue(selector.select(5), "the warning came before readiness")
        warning = self.server.stderr.readline()
        self.assertTrue(warning.startswith("redaction-pressure: warning: serving on 0.0.0.0, beyond loopback"), warning)
        self.assertIn("no authentication", warning)
        port = int(self.announced.rsplit(":", 1)[1])
        listening = [line.split() for line in Path("/proc/net/tcp").read_text().splitlines()[1:]]
        self.assertIn(f"00000000:{port:04X}", [fields[1] for fields in listening if fields[3] == "0A"])

    def test_served_pool_scores_exactly_as_in_process(self):
        """The same replies through the served 2-worker pool and in-process: identical rewards, metrics and trace.info."""

        async def run_all():
            client = EnvClient(self.address)
            try:
                config = vf.EvalClientConfig(base_url=self.model.url, api_key_var="STANDIN_KEY")
                runs = [
                    client.run(
                        client=config,
                        model="standin",
                        sampling=vf.SamplingConfig(),
                        task_data=task.data.model_dump(mode="json"),
                    )
                    for task in self.dev
                ]
                return await asyncio.gather(*runs)
            finally:
                await client.close()

        episodes = asyncio.run(run_all())
        for task, episode in zip(self.dev, episodes, strict=True):
            (served,) = episode.traces
            here = scored(task, self.replies[task.data.index])
            with self.subTest(task=task.key):
                self.assertEqual(served.errors, [])
                self.assertEqual(
                    {k: r.score for k, r in served.rewards.items()}, {k: r.score for k, r in here.rewards.items()}
                )
                self.assertEqual(served.reward, here.reward)
                drop = {"budget_used"}  # matching time, not a result
                self.assertEqual(
                    {k: v for k, v in served.metrics.items() if k not in drop},
                    {k: v for k, v in here.metrics.items() if k not in drop},
                )
                self.assertEqual(served.info, here.info)
        self.assertEqual(sorted(e.traces[0].reward for e in episodes), sorted([1.0, 1.0] + [0.0] * 6))

    def test_y_a_dead_env_server_worker_is_replaced_and_loses_no_episode(self):
        """One env-server worker SIGKILLed as episodes start: every episode is scored as in-process, none hangs, a new worker takes its place."""

        def env_workers() -> list[int]:
            found = []
            for pid in child_pids(self.server.pid):
                try:
                    command = Path(f"/proc/{pid}/cmdline").read_bytes()
                    if b"multiprocessing" in command and b"resource_tracker" not in command:  # not the tracker
                        found.append(pid)
                except OSError:
                    pass
            return found

        before = env_workers()
        self.assertEqual(len(before), 2)

        async def run_all():
            client = EnvClient(self.address)
            try:
                config = vf.EvalClientConfig(base_url=self.model.url, api_key_var="STANDIN_KEY")
                runs = [
                    asyncio.ensure_future(
                        client.run(
                            client=config,
                            model="standin",
                            sampling=vf.SamplingConfig(),
                            task_data=task.data.model_dump(mode="json"),
                        )
                    )
                    for task in self.dev
                ]
                await asyncio.sleep(0.05)
                os.kill(before[0], signal.SIGKILL)
                return await asyncio.wait_for(asyncio.gather(*runs), HANG_SECONDS * 5)
            finally:
                await client.close()

        episodes = asyncio.run(run_all())
        for task, episode in zip(self.dev, episodes, strict=True):
            (served,) = episode.traces
            with self.subTest(task=task.key):
                self.assertEqual(served.errors, [])
                self.assertEqual(served.reward, scored(task, self.replies[task.data.index]).reward)
        after = env_workers()
        self.assertEqual(len(after), 2)
        self.assertNotIn(before[0], after)

    def test_zz_sigterm_shuts_down_cleanly(self):
        """SIGTERM stops the broker, its workers and their scan pools; the command exits 0."""
        children = child_pids(self.server.pid)
        self.assertGreaterEqual(len(children), 2, "two env-server workers should be running")
        self.server.send_signal(signal.SIGTERM)
        self.assertEqual(self.server.wait(timeout=60), 0, self.server.stderr.read()[-3000:])
        time.sleep(1)
        alive = [pid for pid in children if _running(pid)]
        self.assertEqual(alive, [], "no worker outlives the server")


def _running(pid: int) -> bool:
    """Whether `pid` is a live process (not gone, not a zombie); one that exits while we read is gone."""
    try:
        return "zombie" not in Path(f"/proc/{pid}/status").read_text().lower()
    except (FileNotFoundError, ProcessLookupError):
        return False


if __name__ == "__main__":
    unittest.main()
