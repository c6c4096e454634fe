"""End to end with the real verifiers tools: vf-eval against a stand-in model, then vf-replay."""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
import tempfile
import unittest
from pathlib import Path

from cases import PRIVATE_ENV, TEST_SECRET, private_secret
from standin import StandInModel

from redaction_pressure import policies
from redaction_pressure.api import load_task
from redaction_pressure.identity import identity
from redaction_pressure.splits import commitment, seed_for

ROOT = Path(__file__).resolve().parents[1]
BIN = Path(sys.executable).parent
DEV_TASKS = 8
# Task i of the dev run answers with policy i % 4: the reward each must earn, and the
# error code it must leave on the trace.
SCRIPT = {
    0: ("oracle", 1.0, None),
    1: ("no rules", 0.0, None),
    2: ("first-character exploit", 0.0, None),
    3: ("malformed JSON", 0.0, "malformed_json"),
}


def scripted_reply(index: int, hidden) -> str:
    kind = index % 4
    if kind == 0:
        return policies.reply(policies.oracle_rules(hidden))
    if kind == 1:
        return '{"rules": []}'
    if kind == 2:
        return policies.reply(policies.first_character_rules(hidden))
    return '{"rules": [{"pattern": "AKIA", "replacement": "[REDACTED]"},]}'


def traces(run_dir: Path) -> list[dict]:
    (path,) = run_dir.rglob("traces.jsonl")
    return [trace for line in path.read_text().splitlines() if line.strip() for trace in json.loads(line)["traces"]]


class TestVerifiersClients(unittest.TestCase):
    @classmethod
    def setUpClass(cls):
        replies = {}
        for index in range(DEV_TASKS):
            task = load_task("dev", index)
            replies[task.prompt.user] = scripted_reply(index, task.hidden)
        with private_secret(TEST_SECRET):
            private = load_task("private_eval", 0)
            cls.private_seed = seed_for("private_eval", 0)
            cls.private_commitment = commitment("private_eval")
        replies[private.prompt.user] = policies.reply(policies.oracle_rules(private.hidden))
        cls.model = StandInModel(replies)
        cls.home = Path(tempfile.mkdtemp(prefix="rp-e2e-"))

    @classmethod
    def tearDownClass(cls):
        cls.model.close()
        shutil.rmtree(cls.home, ignore_errors=True)

    def environment(self, **extra: str) -> dict[str, str]:
        env = {k: v for k, v in os.environ.items() if k != PRIVATE_ENV}
        # The subprocess runtime caches under $HOME; reuse uv's package cache to stay quick.
        env.setdefault("UV_CACHE_DIR", str(Path.home() / ".cache" / "uv"))
        env.update(HOME=str(self.home), UV_PYTHON_DOWNLOADS="never", STANDIN_KEY="not-a-real-key", **extra)
        return env

    def run_tool(self, args: list[str], env: dict[str, str]) -> subprocess.CompletedProcess:
        result = subprocess.run(
            [str(BIN / args[0]), *args[1:]], env=env, cwd=ROOT, capture_output=True, text=True,
            stdin=subprocess.DEVNULL, timeout=900,
        )  # fmt: skip
        self.assertEqual(result.returncode, 0, f"{args[0]} failed:\n{result.stdout[-3000:]}\n{result.stderr[-3000:]}")
        return result

    def vf_eval(self, split: str, count: int, out: Path, env: dict[str, str]) -> tuple[Path, subprocess.CompletedProcess]:
        result = self.run_tool(
            ["vf-eval", "redaction-pressure", "-n", str(count), "-m", "standin",
             "--client.base-url", self.model.url, "--client.api-key-var", "STANDIN_KEY",
             "--env.agent.runtime.type", "subprocess", "--env.taskset.split", split,
             "--no-push", "--no-rich", "-o", str(out)],
            env,
        )  # fmt: skip
        (run_dir,) = [path.parent for path in out.rglob("traces.jsonl")]
        return run_dir, result

    def test_dev_run_scores_each_policy_and_replays_identically(self):
        """vf-eval scores the scripted policies as the contract says; vf-replay reproduces every reward."""
        out = self.home / "dev-run"
        run_dir, _ = self.vf_eval("dev", DEV_TASKS, out, self.environment())
        scored = traces(run_dir)
        self.assertEqual(sorted(t["task"]["data"]["index"] for t in scored), list(range(DEV_TASKS)))
        block = identity("dev", commitment("dev"))
        for trace in scored:
            index = trace["task"]["data"]["index"]
            name, reward, code = SCRIPT[index % 4]
            with self.subTest(task=index, policy=name):
                total = sum(r["score"] * r["weight"] for r in trace["rewards"].values())
                self.assertEqual(total, reward)
                self.assertEqual(set(trace["rewards"]), {"recall", "precision", "clean_gate"})
                self.assertEqual(trace["info"]["environment"], block)
                self.assertEqual(trace["task"]["data"]["environment"]["split_commitment"], commitment("dev"))
                self.assertEqual([e["code"] for e in trace["info"]["redaction_errors"]], [code] if code else [])
                self.assertEqual(trace["info"]["task_seed"], seed_for("dev", index))
        replay = self.home / "dev-replay"
        self.run_tool(["vf-replay", str(run_dir), "-o", str(replay), "--no-rich"], self.environment())
        again = {t["task"]["data"]["index"]: t for t in traces(replay)}
        self.assertEqual(len(again), DEV_TASKS)
        for trace in scored:
            index = trace["task"]["data"]["index"]
            self.assertEqual(again[index]["rewards"], trace["rewards"], f"task {index}")
            self.assertEqual(again[index]["info"]["redaction_errors"], trace["info"]["redaction_errors"])

    def test_private_run_reveals_the_seed_and_never_the_secret(self):
        """A private_eval episode scores, records its seed in the trace, and writes the secret nowhere."""
        out = self.home / "private-run"
        run_dir, result = self.vf_eval("private_eval", 1, out, self.environment(**{PRIVATE_ENV: TEST_SECRET}))
        (trace,) = traces(run_dir)
        self.assertEqual(sum(r["score"] * r["weight"] for r in trace["rewards"].values()), 1.0)
        self.assertEqual(trace["info"]["task_seed"], self.private_seed)
        self.assertEqual(trace["info"]["environment"]["split"], "private_eval")
        self.assertEqual(trace["info"]["environment"]["split_commitment"], self.private_commitment)
        self.assertNotIn(str(self.private_seed), json.dumps(trace["task"]["data"]))
        secret = TEST_SECRET.encode()
        files = [path for path in out.rglob("*") if path.is_file()]
        self.assertTrue(files)
        for path in files:
            self.assertNotIn(secret, path.read_bytes(), str(path))
        self.assertNotIn(TEST_SECRET, result.stdout + result.stderr)


if __name__ == "__main__":
    unittest.main()
