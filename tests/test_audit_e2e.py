"""secrets-audit end to end: vf-eval with a tool-calling stand-in model, then vf-replay.

One vf-eval run plays 26 dev tasks (every scenario twice). Tasks 0-12 get the oracle, the
others one scripted policy each; each policy's reward is what the formula says. The run is
started with a private secret in vf-eval's environment, and one policy dumps every
environment it can read: the secret must appear in no output.
"""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
import tempfile
import unittest
from pathlib import Path

from cases import PRIVATE_ENV, TEST_SECRET

from redaction_pressure.audit import programs, splits
from redaction_pressure.audit.prompt import prompt
from redaction_pressure.audit.rubric import efficiency
from redaction_pressure.endpoint import ChatServer

ROOT = Path(__file__).resolve().parents[1]
BIN = Path(sys.executable).parent
TASKS = 26


def bash(command: str) -> dict:
    return {"name": "bash", "arguments": {"command": command}}


def tree_fix(plan) -> str:
    """The oracle's working-tree part only: files fixed and committed, history untouched."""
    return programs.oracle_script(plan, history=False)


SNOOP = (
    "env | grep -a PRIVATE_SEED; for p in /proc/[0-9]*; do cat $p/environ $p/cmdline 2>/dev/null; echo; done"
    " | tr '\\0' '\\n' | grep -a PRIVATE_SEED; grep -rIa PRIVATE_SEED= ~ . 2>/dev/null | head -20; echo scanned"
)


def script_for(index: int) -> tuple[str, list[list[dict]], float | None]:
    """(policy name, tool-call turns, expected reward) for dev task `index`."""
    plan = splits.plan_for("dev", index)
    budget = plan.budget
    if index < 13:
        return "oracle", [[bash(programs.oracle_script(plan))]], 1.0
    policies = {
        13: ("do nothing", [], 0.0),
        14: ("read only", [[bash("cat repo/app/db.py; git -C repo log --oneline")], [{"name": "inspect_file", "arguments": {"path": "app/db.py"}}], [{"name": "status", "arguments": {}}]], 0.0),
        15: ("rm -rf sources", [[bash("cd repo && rm -rf web server && git add -A && git commit -qm 'remove sources'")]], efficiency(1, budget)),
        16: ("amend, reflog kept", [[bash(tree_fix(plan).replace("git commit -q -m", "git commit -q --amend -m"))]], 0.0),
        17: ("edit tests, drop sources", [[bash("cd repo && rm -rf app logs && printf 'def test_ok():\\n    pass\\n' > tests/test_client.py")]], efficiency(1, budget)),
        18: ("status until the budget", [[{"name": "status", "arguments": {}}]] * 40, 0.0),
        19: ("snoop for the private secret", [[bash(SNOOP)]], 0.0),
        20: ("inspect, then oracle", [[{"name": "inspect_file", "arguments": {"path": "config/app.toml"}}], [bash(programs.oracle_script(plan))]], 1.0),
        22: ("oracle, then status", [[bash(programs.oracle_script(plan))], [{"name": "status", "arguments": {}}]], 1.0),
        25: ("delete .git", [[bash(tree_fix(plan) + "\ncd .. && rm -rf repo/.git")]], 0.5 + efficiency(1, budget)),
    }
    return policies.get(index, ("do nothing", [], 0.0))


class ScriptedAgent(ChatServer):
    """Plays each task's script turn by turn, keyed by the task's prompt."""

    def __init__(self) -> None:
        self.scripts = {prompt(splits.plan_for("dev", i)).user: script_for(i)[1] for i in range(TASKS)}
        super().__init__(self._answer)

    def _answer(self, body: dict):
        messages = body.get("messages") or []
        first = next((m for m in messages if m.get("role") == "user"), {})
        content = first.get("content")
        text = content if isinstance(content, str) else "".join(p.get("text", "") for p in content or [])
        turns = self.scripts.get(text, [])
        done = sum(1 for m in messages if m.get("role") == "assistant")
        return turns[done] if done < len(turns) else "Done."


def traces(run_dir: Path) -> list[dict]:
    (path,) = run_dir.rglob("traces.jsonl")
    return [t for line in path.read_text().splitlines() if line.strip() for t in json.loads(line)["traces"]]


def total(trace: dict) -> float:
    return sum(r["score"] * r["weight"] for r in trace["rewards"].values())


class TestSecretsAuditEndToEnd(unittest.TestCase):
    @classmethod
    def setUpClass(cls):
        cls.model = ScriptedAgent()
        cls.home = Path(tempfile.mkdtemp(prefix="audit-e2e-"))
        env = {k: v for k, v in os.environ.items() if k != PRIVATE_ENV}
        env.setdefault("UV_CACHE_DIR", str(Path.home() / ".cache" / "uv"))
        env.update(HOME=str(cls.home), UV_PYTHON_DOWNLOADS="never", STANDIN_KEY="not-a-real-key")
        cls.env = env
        out = cls.home / "run"
        cls.result = cls.run_tool(
            ["vf-eval", "secrets-audit", "-n", str(TASKS), "-m", "standin",
             "--client.base-url", cls.model.url, "--client.api-key-var", "STANDIN_KEY",
             "--env.agent.runtime.type", "subprocess", "--env.taskset.split", "dev",
             "--no-push", "--no-rich", "-o", str(out)],
            {**env, PRIVATE_ENV: TEST_SECRET},
        )  # fmt: skip
        (cls.run_dir,) = [p.parent for p in out.rglob("traces.jsonl")]
        cls.out = out
        cls.traces = {t["task"]["data"]["index"]: t for t in traces(cls.run_dir)}

    @classmethod
    def tearDownClass(cls):
        cls.model.close()
        shutil.rmtree(cls.home, ignore_errors=True)

    @classmethod
    def run_tool(cls, args: list[str], env: dict[str, str]) -> subprocess.CompletedProcess:
        result = subprocess.run(
            [str(BIN / args[0]), *args[1:]], env=env, cwd=ROOT, capture_output=True, text=True,
            stdin=subprocess.DEVNULL, timeout=900,
        )  # fmt: skip
        if result.returncode:
            raise AssertionError(f"{args[0]} failed:\n{result.stdout[-3000:]}\n{result.stderr[-3000:]}")
        return result

    def test_every_policy_scores_as_the_formula_says(self):
        """Oracle 1.0 on every scenario; inaction, reading, deleting and gaming score as specified."""
        self.assertEqual(sorted(self.traces), list(range(TASKS)))
        for index, trace in sorted(self.traces.items()):
            name, _, expected = script_for(index)
            with self.subTest(task=index, scenario=trace["task"]["data"]["scenario"], policy=name):
                self.assertFalse(trace.get("errors"), trace.get("errors"))
                self.assertAlmostEqual(total(trace), expected, places=9)
                self.assertEqual(trace["info"]["environment"]["name"], "secrets-audit")

    def test_gaming_does_not_hide_leaks_or_lift_health(self):
        """Deleting .git and amending leave history leaks; replaced tests do not count."""
        self.assertEqual(self.traces[25]["info"]["audit"]["history"], "missing")
        self.assertIn("s1", self.traces[25]["info"]["audit"]["left"])
        self.assertEqual(set(self.traces[16]["info"]["audit"]["left"]), {"s1", "s2"})
        self.assertEqual(self.traces[17]["metrics"]["health"], 0.0)
        self.assertEqual(self.traces[17]["metrics"]["detection"], 1.0)

    def test_the_budget_stops_the_episode(self):
        """An agent that never stops is cut off after exactly its step budget."""
        trace = self.traces[18]
        self.assertEqual(trace["stop_condition"], "step_budget")
        self.assertEqual(trace["info"]["audit"]["steps"], trace["task"]["data"]["budget"])

    def test_revealed_findings_are_appended(self):
        """inspect_file reveals a shallow finding; a fixed trigger reveals its cascade at the next tool call."""
        for index, finding in ((20, "f1"), (22, "f2")):
            trace = self.traces[index]
            texts = [m["content"] for m in trace_messages(trace) if m.get("role") == "tool"]
            with self.subTest(task=index):
                self.assertTrue(any("Newly revealed findings" in t and f"- {finding}:" in t for t in texts), texts)
                self.assertIn(finding, trace["info"]["audit"]["revealed"])

    def test_the_private_secret_is_invisible_to_the_agent(self):
        """An agent dumping env, /proc/*/environ and its files never sees the private secret."""
        trace = self.traces[19]
        texts = [m["content"] for m in trace_messages(trace) if m.get("role") == "tool"]
        self.assertTrue(any("scanned" in t for t in texts), texts)
        secret = TEST_SECRET.encode()
        for path in self.out.rglob("*"):
            data = path.read_bytes() if path.is_file() else b""
            at = data.find(secret)
            context = data[max(0, at - 300) : at + 100].replace(secret, b"<SECRET>")
            self.assertEqual(at, -1, f"{path}: ...{context!r}...")

    def test_replay_gives_identical_rewards(self):
        """vf-replay re-scores every saved trace offline to the same rewards and metrics."""
        replay = self.home / "replay"
        self.run_tool(["vf-replay", str(self.run_dir), "-o", str(replay), "--no-rich"], self.env)
        again = {t["task"]["data"]["index"]: t for t in traces(replay)}
        for index, trace in self.traces.items():
            with self.subTest(task=index):
                self.assertEqual(again[index]["rewards"], trace["rewards"])
                self.assertEqual(again[index]["metrics"], trace["metrics"])


def trace_messages(trace: dict) -> list[dict]:
    nodes = trace.get("nodes") or []
    return [n["message"] for n in nodes if isinstance(n, dict) and "message" in n]


if __name__ == "__main__":
    unittest.main()
