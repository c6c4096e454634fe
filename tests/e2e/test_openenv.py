"""Both environments as OpenEnv servers, driven by OpenEnv's own client, against the verifiers path.

The servers run where openenv is installed, which cannot be where verifiers is (servers/openenv
has its own project and lock): each test class starts `redaction-pressure serve-openenv` from
that project's environment (`uv sync --project servers/openenv --frozen` makes it) and plays
episodes through `tests/support/openenv_driver.py`, run by the same Python, which uses OpenEnv's
`EnvClient`. What the episodes score is compared here, in the suite's environment, with
`score_reply` (redaction-pressure) and with a real `vf-eval` run of the same tool calls
(secrets-audit).
"""

from __future__ import annotations

import json
import os
import select
import shlex
import shutil
import subprocess
import sys
import tempfile
import time
import unittest
import urllib.error
import urllib.request
from pathlib import Path

from redaction_pressure import splits as shared_splits
from redaction_pressure.audit import programs
from redaction_pressure.audit import splits as audit_splits
from redaction_pressure.audit.prompt import prompt
from redaction_pressure.redact.api import load_task, score_reply
from redaction_pressure.redact.policies.reference import first_character_rules, oracle_rules
from redaction_pressure.redact.policies.reference import reply as rules_json
from tests.support.standin import ToolCallingModel

ROOT = Path(__file__).resolve().parents[2]
OPENENV_PYTHON = ROOT / "servers" / "openenv" / ".venv" / "bin" / "python"
DRIVER = ROOT / "tests" / "support" / "openenv_driver.py"
BIN = Path(sys.executable).parent
SECRET = "openenv-test-secret-of-this-module-only-0123456789"
TOKEN = "openenv-test-token-0123456789abcdef"


def openenv_python() -> str:
    if not OPENENV_PYTHON.exists():
        raise AssertionError(
            f"{OPENENV_PYTHON} is missing: run `uv sync --project servers/openenv --frozen` first (the OpenEnv servers "
            "cannot run in the suite's environment: openenv and verifiers conflict)"
        )
    return str(OPENENV_PYTHON)


class Server:
    """`serve-openenv` in the OpenEnv project's environment, on a free port, until `close()`."""

    def __init__(self, *args: str, env: dict[str, str] | None = None, ready_timeout: float = 300) -> None:
        full = {k: v for k, v in os.environ.items() if k != shared_splits.PRIVATE_ENV}
        full.update(env or {})
        self.proc = subprocess.Popen(
            [openenv_python(), "-m", "redaction_pressure", "serve-openenv", "--port", "0", *args],
            cwd=ROOT, env=full, stdin=subprocess.DEVNULL, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True,
        )  # fmt: skip
        deadline = time.monotonic() + ready_timeout
        line = ""
        while time.monotonic() < deadline:
            ready, _, _ = select.select([self.proc.stdout], [], [], 1.0)
            if ready:
                line = self.proc.stdout.readline()
                break
            if self.proc.poll() is not None:
                break
        if not line.startswith("ready "):
            self.close()
            raise AssertionError(f"serve-openenv did not start: {line!r} {self.proc.stderr.read()[-2000:]}")
        self.url = line.split()[1]

    def play(self, episodes: list[dict], timeout: float = 1800) -> list[dict]:
        done = subprocess.run(
            [openenv_python(), str(DRIVER), self.url], input=json.dumps(episodes), capture_output=True, text=True,
            cwd=ROOT, timeout=timeout,
        )  # fmt: skip
        if done.returncode:
            raise AssertionError(f"the driver failed: {done.stderr[-3000:]}")
        return json.loads(done.stdout)

    def close(self) -> str:
        self.proc.terminate()
        try:
            _, err = self.proc.communicate(timeout=30)
        except subprocess.TimeoutExpired:
            self.proc.kill()
            _, err = self.proc.communicate()
        return err or ""


class TestRedactionPressureOverOpenEnv(unittest.TestCase):
    @classmethod
    def setUpClass(cls):
        cls.server = Server("--taskset", "redaction-pressure", env={shared_splits.PRIVATE_ENV: SECRET})

    @classmethod
    def tearDownClass(cls):
        cls.stderr = cls.server.close()

    def test_a_step_scores_what_score_reply_scores(self):
        """On all 64 dev tasks (oracle, empty, first-character and malformed replies in turn) a step's reward,
        recall, precision, clean gate and error codes are score_reply's for the same reply."""
        episodes, expected = [], []
        for index in range(shared_splits.DEV_SIZE):
            task = load_task("dev", index)
            reply = (
                rules_json(oracle_rules(task.hidden)),
                '{"rules": []}',
                rules_json(first_character_rules(task.hidden)),
                '{"rules": [{"pattern": "(a+)+$", "replacement": "\\\\1"}]}',
            )[index % 4]
            episodes.append({"taskset": "redaction-pressure", "reset": {"split": "dev", "index": index},
                             "actions": [{"reply": reply}]})  # fmt: skip
            expected.append(score_reply(task, reply))
        played = self.server.play(episodes)
        for index, (got, want) in enumerate(zip(played, expected)):
            with self.subTest(task=index):
                (step,) = got["steps"]
                obs = step["observation"]
                self.assertTrue(step["done"])
                self.assertEqual(step["reward"], want.reward)
                self.assertEqual((obs["recall"], obs["precision"], obs["clean_gate"], obs["valid"]),
                                 (want.recall, want.precision, want.clean_gate, want.valid))  # fmt: skip
                self.assertEqual([e["code"] for e in obs["redaction_errors"]], [e.code for e in want.errors])
                self.assertEqual(got["reset"]["user_prompt"], load_task("dev", index).prompt.user)
        self.assertEqual([p["steps"][0]["reward"] for p in played[::4]], [1.0] * 16, "the oracle scores 1.0")

    def test_private_eval_reveals_its_seed_only_at_the_end_and_never_the_secret(self):
        """A private_eval reset carries the split's commitment and no seed; the step carries the derived seed."""
        (got,) = self.server.play(
            [
                {
                    "taskset": "redaction-pressure",
                    "reset": {"split": "private_eval", "index": 5},
                    "actions": [{"reply": '{"rules": []}'}],
                }
            ]
        )
        os.environ[shared_splits.PRIVATE_ENV] = SECRET
        try:
            seed = shared_splits.seed_for("private_eval", 5)
            commitment = shared_splits.commitment("private_eval")
        finally:
            del os.environ[shared_splits.PRIVATE_ENV]
        self.assertIsNone(got["reset"]["seed"])
        self.assertEqual(got["reset"]["task"]["identity"]["split_commitment"], commitment)
        self.assertEqual(got["steps"][0]["observation"]["seed"], seed)
        self.assertNotIn(SECRET, json.dumps(got))

    def test_bad_input_is_one_line_and_the_server_keeps_serving(self):
        """Unknown split, index past the split, a step after the end and a reply over 64 KB are refused by name."""
        played = self.server.play([
            {"taskset": "redaction-pressure", "reset": {"split": "exam"}},
            {"taskset": "redaction-pressure", "reset": {"split": "dev", "index": 64}},
            {"taskset": "redaction-pressure", "reset": {"split": "dev", "index": 1},
             "actions": [{"reply": '{"rules": []}'}, {"reply": '{"rules": []}'}, {"reply": "x" * 70_000}]},
        ])  # fmt: skip
        self.assertIn("unknown split 'exam'", played[0]["error"])
        self.assertIn("dev has tasks 0 to 63", played[1]["error"])
        first, after_end, oversized = played[2]["steps"]
        self.assertEqual(first["reward"], 0.0)
        self.assertIn("the episode is over", after_end["error"])
        self.assertIn("error", oversized)
        self.assertEqual(self.server.proc.poll(), None, "the server still runs")


def bash(command: str) -> dict:
    return {"name": "bash", "arguments": {"command": command}}


def calls_for(index: int, plan) -> list[dict]:
    """The tool calls task `index` plays: the oracle, the oracle leaking one secret again, or a look."""
    kind = index % 3
    if kind == 0:
        return [bash(programs.oracle_script(plan))]
    if kind == 1:
        # the oracle, then one secret written back in a new file: detection below 1
        leak = f"\ncd repo && printf '%s\\n' {shlex.quote(plan.secrets[0].value)} > notes.txt && git add notes.txt && git commit -qm 'Add notes'"
        return [
            {"name": "inspect_git_history", "arguments": {}},
            bash("(\n" + programs.oracle_script(plan) + "\n)" + leak),
        ]
    return [bash("ls -la repo && git -C repo log --oneline | head -5")]


def as_action(call: dict) -> dict:
    if call["name"] == "bash":
        return {"command": call["arguments"]["command"]}
    return {"tool": call["name"], "args": call["arguments"]}


class TestSecretsAuditOverOpenEnv(unittest.TestCase):
    """The 13 scenarios of dev (tasks 0-12) through OpenEnv (local sandbox) and through vf-eval."""

    TASKS = range(13)

    @classmethod
    def setUpClass(cls):
        cls.server = Server("--taskset", "secrets-audit", "--sandbox", "local", "--max-sessions", "2")
        cls.plans = {i: audit_splits.plan_for("dev", i) for i in cls.TASKS}
        episodes = [
            {"taskset": "secrets-audit", "reset": {"split": "dev", "index": i},
             "actions": [*map(as_action, calls_for(i, cls.plans[i])), {"tool": "submit"}]}
            for i in cls.TASKS
        ]  # fmt: skip
        cls.played = dict(zip(cls.TASKS, cls.server.play(episodes)))
        cls.vf = cls._vf_eval()

    @classmethod
    def tearDownClass(cls):
        cls.server.close()
        shutil.rmtree(cls.home, ignore_errors=True)

    @classmethod
    def _vf_eval(cls) -> dict[int, dict]:
        scripts = {prompt(plan).user: [[c] for c in calls_for(i, plan)] for i, plan in cls.plans.items()}
        model = ToolCallingModel(scripts)
        cls.home = Path(tempfile.mkdtemp(prefix="openenv-e2e-"))
        env = {k: v for k, v in os.environ.items() if k != shared_splits.PRIVATE_ENV}
        env.setdefault("UV_CACHE_DIR", str(Path.home() / ".cache" / "uv"))
        env.update(HOME=str(cls.home), UV_PYTHON_DOWNLOADS="never", STANDIN_KEY="not-a-real-key")
        out = cls.home / "run"
        try:
            result = subprocess.run(
                [str(BIN / "vf-eval"), "secrets-audit", "--select.include.idx", *map(str, cls.TASKS), "-m", "standin",
                 "--client.base-url", model.url, "--client.api-key-var", "STANDIN_KEY",
                 "--env.agent.runtime.type", "subprocess", "--env.taskset.split", "dev",
                 "--no-push", "--no-rich", "-c", "4", "-o", str(out)],
                env=env, cwd=ROOT, capture_output=True, text=True, stdin=subprocess.DEVNULL, timeout=1800,
            )  # fmt: skip
        finally:
            model.close()
        if result.returncode:
            raise AssertionError(f"vf-eval failed:\n{result.stdout[-3000:]}\n{result.stderr[-3000:]}")
        (path,) = out.rglob("traces.jsonl")
        traces = [t for line in path.read_text().splitlines() if line.strip() for t in json.loads(line)["traces"]]
        return {t["task"]["data"]["index"]: t for t in traces}

    def test_the_last_step_scores_what_vf_eval_scores_for_the_same_calls(self):
        """Reward, detection, health, steps and the secrets left are equal on every scenario."""
        self.assertEqual(sorted(self.vf), list(self.TASKS))
        for i in self.TASKS:
            trace, got = self.vf[i], self.played[i]
            with self.subTest(task=i, scenario=self.plans[i].scenario):
                last = got["steps"][-1]
                grade = last["observation"]["grade"]
                vf_total = sum(r["score"] * r["weight"] for r in trace["rewards"].values())
                self.assertTrue(last["done"])
                self.assertAlmostEqual(last["reward"], vf_total, places=9)
                self.assertAlmostEqual(grade["detection"], trace["metrics"]["detection"], places=9)
                self.assertAlmostEqual(grade["health"], trace["metrics"]["health"], places=9)
                self.assertEqual(grade["steps"], trace["metrics"]["steps"])
                self.assertEqual(sorted(grade["facts"]["left"]), sorted(trace["info"]["audit"]["left"]))
        rewards = [self.played[i]["steps"][-1]["reward"] for i in self.TASKS]
        self.assertGreater(len(set(rewards)), 2, f"the calls score differently, not all alike: {rewards}")

    def test_every_step_carries_the_seeds_session(self):
        """Each step's observation has the seed's keys; its reward is the status tool's score after that step."""
        keys = {"visible_secrets", "hidden_count_hint", "ranked_actions", "top_blocker", "step_budget", "steps_taken",
                "steps_remaining", "efficiency_bonus", "conflict_map", "security_score", "health_score", "observation",
                "last_result"}  # fmt: skip
        for i in self.TASKS:
            for n, step in enumerate(self.played[i]["steps"][:-1], 1):
                with self.subTest(task=i, step=n):
                    obs = step["observation"]
                    self.assertLessEqual(keys, set(obs))
                    self.assertEqual(obs["steps_taken"], n)
                    self.assertEqual(obs["steps_remaining"], self.plans[i].budget - n)
                    self.assertFalse(step["done"])
                    self.assertEqual(set(obs["last_result"]), {"action", "exit_code", "stdout", "stderr", "timed_out"})

    def test_bad_actions_are_refused_by_name_and_paths_stay_in_the_repository(self):
        """An unknown tool, an empty command and a path outside the repository are answered, never served."""
        (got,) = self.server.play([{"taskset": "secrets-audit", "reset": {"split": "dev", "index": 0}, "actions": [
            {"tool": "rm_rf"}, {"command": "  "}, {"tool": "inspect_file", "args": {"path": "../../etc/passwd"}},
            {"tool": "submit"}]}])  # fmt: skip
        self.assertNotIn("error", got, got.get("error"))
        unknown, empty, outside, _ = got["steps"]
        self.assertIn("unknown tool 'rm_rf'", unknown["error"])
        self.assertIn("the command is empty", empty["error"])
        self.assertIn("is not a file in the repository", outside["observation"]["observation"])
        self.assertNotIn("root:x:0:0", json.dumps(outside))


class TestServing(unittest.TestCase):
    def test_beyond_loopback_it_needs_a_token(self):
        """--host 0.0.0.0 without --token-var exits 2 with one line naming the option."""
        done = subprocess.run(
            [openenv_python(), "-m", "redaction_pressure", "serve-openenv", "--host", "0.0.0.0", "--port", "0"],
            cwd=ROOT, capture_output=True, text=True, timeout=120, stdin=subprocess.DEVNULL,
        )  # fmt: skip
        self.assertEqual(done.returncode, 2)
        self.assertIn("needs --token-var NAME", done.stderr)
        self.assertEqual(len(done.stderr.strip().splitlines()), 1)

    def test_with_a_token_a_request_without_it_gets_401(self):
        """Every HTTP request and WebSocket handshake must carry the bearer token; the token is never printed."""
        server = Server("--token-var", "OE_TEST_TOKEN", env={"OE_TEST_TOKEN": TOKEN})
        try:
            with self.assertRaises(urllib.error.HTTPError) as refused:
                urllib.request.urlopen(server.url + "/health", timeout=30)
            self.assertEqual(refused.exception.code, 401)
            request = urllib.request.Request(server.url + "/health", headers={"Authorization": f"Bearer {TOKEN}"})
            with urllib.request.urlopen(request, timeout=30) as ok:
                self.assertEqual(ok.status, 200)
            (got,) = server.play([{"taskset": "redaction-pressure", "reset": {"split": "dev", "index": 0}}])
            self.assertIn("401", got["error"])
        finally:
            err = server.close()
        self.assertNotIn(TOKEN, err)


if __name__ == "__main__":
    unittest.main()
