"""`redaction-pressure agent`, the seed's baseline loop, against a stand-in model on 127.0.0.1 and `serve-openenv`."""

from __future__ import annotations

import json
import os
import socket
import subprocess
import unittest

from redaction_pressure import splits as shared_splits
from redaction_pressure.audit import programs
from redaction_pressure.audit import splits as audit_splits
from redaction_pressure.audit.prompt import prompt
from redaction_pressure.redact.api import load_task
from redaction_pressure.redact.policies.reference import oracle_rules
from redaction_pressure.redact.policies.reference import reply as rules_json
from tests.support.openenv_server import ROOT, Server, openenv_python
from tests.support.standin import StandInModel, ToolCallingModel


def agent(*args: str) -> subprocess.CompletedProcess:
    env = {k: v for k, v in os.environ.items() if k != shared_splits.PRIVATE_ENV}
    env["STANDIN_KEY"] = "not-a-real-key"
    return subprocess.run([openenv_python(), "-m", "redaction_pressure", "agent", "--model", "standin", *args],
                          env=env, cwd=ROOT, capture_output=True, text=True, timeout=1800, stdin=subprocess.DEVNULL)  # fmt: skip


class TestAgentOnSecretsAudit(unittest.TestCase):
    @classmethod
    def setUpClass(cls):
        cls.server = Server("--taskset", "secrets-audit", "--sandbox", "local", "--max-sessions", "2")

    @classmethod
    def tearDownClass(cls):
        cls.server.close()

    def test_a_model_playing_the_gold_fix_scores_1_and_stops(self):
        """Tool calls: the gold fix brings the reward to 1.0, the agent submits at once and prints the seed's lines."""
        plan = audit_splits.plan_for("dev", 3)
        model = ToolCallingModel(
            {prompt(plan).user: [[{"name": "bash", "arguments": {"command": programs.oracle_script(plan)}}]]}
        )
        try:
            done = agent("--env-url", self.server.url, "--base-url", model.url, "--api-key-var", "STANDIN_KEY",
                         "--split", "dev", "--index", "3")  # fmt: skip
        finally:
            model.close()
        self.assertEqual(done.returncode, 0, done.stderr[-3000:])
        lines = done.stdout.strip().splitlines()
        self.assertEqual(lines[0], "[START] task=dev-3 env=secrets-audit model=standin")
        self.assertRegex(lines[1], r"^\[STEP\] step=1 action=bash\(.* reward=1\.00 done=false error=null$")
        self.assertEqual(lines[2], "[END] success=true steps=1 score=1.00 rewards=1.00")
        summary = json.loads(lines[3])
        self.assertEqual((summary["reward"], summary["steps"], summary["ended"]), (1.0, 1, "the reward reached 1.0"))
        self.assertEqual((summary["grade"]["detection"], summary["grade"]["health"]), (1.0, 1.0))
        self.assertLessEqual(summary["steps"], plan.budget)

    def test_a_model_repeating_itself_is_stopped_by_the_guard(self):
        """Fenced commands, the same one every turn: two steps, the guard fires at the third, the run ends graded."""
        plan = audit_splits.plan_for("dev", 0)
        same = "Let me look.\n```bash\ngit -C repo status --short\n```"
        model = ToolCallingModel({prompt(plan).user: lambda body: same})
        try:
            done = agent("--env-url", self.server.url, "--base-url", model.url, "--split", "dev", "--index", "0")
        finally:
            model.close()
        self.assertEqual(done.returncode, 0, done.stderr[-3000:])
        lines = done.stdout.strip().splitlines()
        steps = [line for line in lines if line.startswith("[STEP]")]
        self.assertEqual(len(steps), 3, lines)
        self.assertTrue(
            steps[0].startswith("[STEP] step=1 action=bash(git -C repo status --short) reward=0.00"), steps[0]
        )
        self.assertEqual(steps[2], "[STEP] step=3 action=bash(git -C repo status --short) guard=repeat")
        self.assertEqual(lines[-2], "[END] success=false steps=2 score=0.00 rewards=0.00,0.00")
        summary = json.loads(lines[-1])
        self.assertEqual(summary["ended"], "the repeat guard: the same action 3 times in a row")
        self.assertEqual((summary["reward"], summary["grade"]["steps"]), (0.0, 2))

    def test_a_dead_model_endpoint_is_one_line_and_exit_1(self):
        """Nothing listens at the model's URL: one line on stderr naming the endpoint, exit 1, nothing on stdout but
        the start line; the server serves the next client."""
        with socket.socket() as probe:
            probe.bind(("127.0.0.1", 0))
            dead = f"http://127.0.0.1:{probe.getsockname()[1]}/v1"
        done = agent("--env-url", self.server.url, "--base-url", dead)
        self.assertEqual(done.returncode, 1)
        self.assertEqual(len(done.stderr.strip().splitlines()), 1, done.stderr)
        self.assertIn(f"the model at {dead} did not answer", done.stderr)
        self.assertEqual(done.stdout.strip(), "[START] task=dev-0 env=secrets-audit model=standin")
        unset = agent("--env-url", self.server.url, "--base-url", dead, "--api-key-var", "NO_SUCH_VARIABLE_SET")
        self.assertEqual(unset.returncode, 2)
        self.assertIn("--api-key-var NO_SUCH_VARIABLE_SET: the variable is not set", unset.stderr)


class TestAgentOnRedactionPressure(unittest.TestCase):
    def test_the_reply_is_the_step(self):
        """One turn: the oracle's rules as the model's reply score 1.0, in one step."""
        task = load_task("dev", 5)
        model = StandInModel({task.prompt.user: rules_json(oracle_rules(task.hidden))})
        server = Server("--taskset", "redaction-pressure")
        try:
            done = agent("--env-url", server.url, "--base-url", model.url, "--split", "dev", "--index", "5")
        finally:
            server.close()
            model.close()
        self.assertEqual(done.returncode, 0, done.stderr[-3000:])
        lines = done.stdout.strip().splitlines()
        self.assertEqual(lines[0], "[START] task=dev-5 env=redaction-pressure model=standin")
        self.assertRegex(lines[1], r"^\[STEP\] step=1 action=reply\(\d+ chars\) reward=1\.00 done=true error=null$")
        self.assertEqual(lines[2], "[END] success=true steps=1 score=1.00 rewards=1.00")
        self.assertEqual(json.loads(lines[3])["recall"], 1.0)
