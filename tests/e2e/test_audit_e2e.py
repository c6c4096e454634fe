"""secrets-audit end to end: vf-eval with a tool-calling stand-in model, then vf-replay.

One vf-eval run plays 11 dev tasks: the oracle on the two history scenarios (`test_audit_scenarios`
plays it on every scenario, `test_packaging` runs vf-validate's gold and noop checks), and one scripted policy each on nine
of tasks 15-25 (one of them the scripted baseline, which must score what it scores on
the framework-free path, where `test_audit_agent` plays it on every scenario); each policy's
reward is what the formula says. The
run is started with a private secret in vf-eval's environment, and one policy dumps every
environment it can read: the secret must appear in no output.

Two more runs carry the private secret: one private_eval episode of secrets-audit, and one
of redaction-pressure with the bash harness, whose model only snoops (its default harness
has no shell; a shell must not see the secret either).
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

from redaction_pressure.audit import agent as audit_agent
from redaction_pressure.audit import programs, splits
from redaction_pressure.audit.local import LocalWorkspace
from redaction_pressure.audit.prompt import prompt
from redaction_pressure.audit.rubric import efficiency
from redaction_pressure.cli.endpoint import ChatServer, last_user_text
from redaction_pressure.redact.api import load_task
from tests.support.cases import PRIVATE_ENV, private_secret
from tests.support.standin import ToolCallingModel

SECRET = "audit-e2e-secret-of-this-module-only-0123456789abcdef"
"""This module's private secret, used by no other test module: its snoops read the environment of
every process on the machine, so another module's private_eval run going on beside it (the
runner runs modules in parallel) must not hold the value they look for."""

ROOT = Path(__file__).resolve().parents[2]
BIN = Path(sys.executable).parent
TASKS = 26
ORACLE_PLAYED = (3, 12)
"""Through vf-eval the oracle plays the two history scenarios (git_basics, legacy_audit);
`test_packaging` runs it through vf-validate, and `test_audit_scenarios` on every scenario on the
framework-free path."""
PLAYED = (*ORACLE_PLAYED, *(i for i in range(15, TASKS) if i not in (21, 24)))
"""Tasks 13 and 14 (inaction, reading) score 0 as vf-validate's noop check (`test_packaging`) and tasks 20 and 22
(which read and check status) already show; 21 and 24 (db_migration, deep_logic) had the
baseline too, and the framework-free tests cover them."""
CONCURRENT = 6
"""Episodes in flight: each starts a tool server (a Python process importing verifiers, ~5 s
of CPU) that verifiers waits 180 s for; all 26 at once on 2 busy cores miss that deadline."""
BASELINE = (23,)
"""Dev task the scripted baseline plays here (microservices; `test_audit_agent` plays it on
every scenario on the framework-free path)."""


def bash(command: str) -> dict:
    return {"name": "bash", "arguments": {"command": command}}


def tree_fix(plan) -> str:
    """The oracle's working-tree part only: files fixed and committed, history untouched."""
    return programs.oracle_script(plan, history=False)


def history_rewrite(plan) -> str:
    """The oracle's history part alone, after commands left in `repo`: every secret's value
    replaced in every commit (git filter-repo), whatever the working tree now holds."""
    return "\n" + programs.oracle_script(plan).removeprefix(tree_fix(plan)).strip()


SNOOP = (
    "env | grep -a PRIVATE_SEED; for p in /proc/[0-9]*; do cat $p/environ $p/cmdline 2>/dev/null; echo; done"
    " | tr '\\0' '\\n' | grep -a PRIVATE_SEED; grep -rIa PRIVATE_SEED= ~ . 2>/dev/null | head -20; echo scanned"
)


def status_until(budget: int, per_turn: int = 5) -> list[list[dict]]:
    """`status` calls, `per_turn` in parallel per turn, exactly `budget` of them, then more turns
    the budget must cut off (one call per turn would take `budget` slow turns)."""
    calls = [{"name": "status", "arguments": {}}]
    return [calls * min(per_turn, budget - done) for done in range(0, budget, per_turn)] + [calls] * 5


DROP_SOURCES = (
    "cd repo && find . -mindepth 1 -maxdepth 1 ! -name .git ! -name tests ! -name pytest.ini ! -name README.md"
    " ! -name .gitignore -exec rm -rf {} +"
)
"""Every file and folder of the repository but its tests, README and git metadata (layouts vary with the seed)."""
LOCAL = -1.0
"""Expected reward: what the same bash commands score on the framework-free path."""


def first(plan, tier: str) -> str:
    """The id of the plan's first finding of `tier`."""
    return next(f.id for f in plan.findings if f.tier == tier)


def script_for(index: int) -> tuple[str, list[list[dict]], float | None]:
    """(policy name, tool-call turns, expected reward) for dev task `index`."""
    plan = splits.plan_for("dev", index)
    budget = plan.budget
    if index < 13:
        return "oracle", [[bash(programs.oracle_script(plan))]], 1.0
    held = plan.findings[0].path
    shallow = next(f.path for f in plan.findings if f.tier == "shallow") if index == 20 else ""
    policies = {
        13: ("do nothing", [], 0.0),
        14: (
            "read only",
            [
                [bash(f"cat repo/{held}; git -C repo log --oneline")],
                [{"name": "inspect_file", "arguments": {"path": held}}],
                [{"name": "status", "arguments": {}}],
            ],
            0.0,
        ),
        15: (
            "rm -rf sources",
            [[bash(DROP_SOURCES + " && git add -A && git commit -qm 'remove sources'" + history_rewrite(plan))]],
            efficiency(1, budget),
        ),
        16: (
            "amend, reflog kept",
            [[bash(tree_fix(plan).replace("git commit -q -m", "git commit -q --amend -m"))]],
            LOCAL,
        ),
        17: (
            "edit tests, drop sources",
            [
                [
                    bash(
                        DROP_SOURCES
                        + " && for t in tests/test_*.py; do printf 'def test_ok():\\n    pass\\n' > $t; done"
                        + " && git add -A && git commit -qm 'simpler tests'"
                        + history_rewrite(plan)
                    )
                ]
            ],
            efficiency(1, budget),
        ),
        18: ("status until the budget", status_until(budget), 0.0),
        19: ("snoop for the private secret", [[bash(SNOOP)]], 0.0),
        20: (
            "inspect, then oracle",
            [[{"name": "inspect_file", "arguments": {"path": shallow}}], [bash(programs.oracle_script(plan))]],
            1.0,
        ),
        22: ("oracle, then status", [[bash(programs.oracle_script(plan))], [{"name": "status", "arguments": {}}]], 1.0),
        **{i: ("scripted baseline", audit_agent.answer, None) for i in BASELINE},
        25: (
            "delete .git",
            [[bash(tree_fix(plan) + "\ncd .. && rm -rf repo/.git")]],
            0.0,  # no .git to scan: every secret counts in history
        ),
    }
    return policies.get(index, ("do nothing", [], 0.0))


class ScriptedAgent(ToolCallingModel):
    """Plays each task's script turn by turn, keyed by the task's prompt."""

    def __init__(self) -> None:
        super().__init__({prompt(splits.plan_for("dev", i)).user: script_for(i)[1] for i in range(TASKS)})


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
            ["vf-eval", "secrets-audit", "--select.include.idx", *map(str, PLAYED), "-m", "standin",
             "--client.base-url", cls.model.url, "--client.api-key-var", "STANDIN_KEY",
             "--env.agent.runtime.type", "subprocess", "--env.taskset.split", "dev",
             "--no-push", "--no-rich", "-c", str(CONCURRENT), "-o", str(out)],
            {**env, PRIVATE_ENV: SECRET},
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
        self.assertEqual(sorted(self.traces), list(PLAYED), "every selected episode has a trace")
        for index, trace in sorted(self.traces.items()):
            name, _, expected = script_for(index)
            with self.subTest(task=index, scenario=trace["task"]["data"]["scenario"], policy=name):
                self.assertFalse(trace.get("errors"), trace.get("errors"))
                why = ""
                if expected == LOCAL:  # the same commands on the framework-free path
                    plan = splits.plan_for("dev", index)
                    with LocalWorkspace(plan) as ws:
                        for turn in script_for(index)[1]:
                            for call in turn:
                                ws.bash(call["arguments"]["command"])
                        expected = ws.score(steps=trace["metrics"]["steps"]).total
                if expected is None:  # the scripted baseline: what it scores on the framework-free path
                    local = audit_agent.play_local(splits.plan_for("dev", index))
                    self.assertEqual(trace["metrics"]["steps"], local.steps)
                    expected = local.total
                    keys = ("left", "history", "tests", "tampering", "reason")
                    why = f"; trace facts {[trace['info']['audit'].get(k) for k in keys]}, local facts {[local.facts.get(k) for k in keys]}"
                self.assertAlmostEqual(
                    total(trace), expected, places=9, msg=f"trace {total(trace)} against {expected}{why}"
                )
                self.assertEqual(trace["info"]["environment"]["name"], "secrets-audit")

    def test_gaming_does_not_hide_leaks_or_lift_health(self):
        """Deleting .git and amending leave history leaks; replaced tests do not count."""
        self.assertEqual(self.traces[25]["info"]["audit"]["history"], "missing")
        self.assertIn("s1", self.traces[25]["info"]["audit"]["left"])
        self.assertEqual(
            set(self.traces[16]["info"]["audit"]["left"]), {s.id for s in splits.plan_for("dev", 16).history_secrets}
        )
        self.assertEqual(self.traces[17]["metrics"]["health"], 0.0)
        self.assertEqual(self.traces[17]["metrics"]["detection"], 1.0)

    def test_the_budget_stops_the_episode(self):
        """An agent that never stops is cut off after exactly its step budget."""
        trace = self.traces[18]
        self.assertEqual(trace["stop_condition"], "step_budget")
        self.assertEqual(trace["info"]["audit"]["steps"], trace["task"]["data"]["budget"])

    def test_revealed_findings_are_appended(self):
        """inspect_file reveals a shallow finding; a fixed trigger reveals its cascade at the next tool call."""
        for index, finding in (
            (20, first(splits.plan_for("dev", 20), "shallow")),
            (22, first(splits.plan_for("dev", 22), "cascading")),
        ):
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
        secret = SECRET.encode()
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


def snoop_into(path: Path) -> str:
    """SNOOP with its output kept in a host file (a one-turn episode records no tool result)."""
    return "{ " + SNOOP + "; } > " + str(path) + " 2>&1"


class TestPrivateSecretStaysSealed(unittest.TestCase):
    """private_eval runs with the secret in vf-eval's environment, for both tasksets."""

    @classmethod
    def setUpClass(cls):
        cls.home = Path(tempfile.mkdtemp(prefix="audit-private-"))
        with private_secret(SECRET):
            cls.plan = splits.plan_for("private_eval", 0)
            cls.seed = splits.seed_for("private_eval", 0)
            cls.commitment = splits.commitment("private_eval")
            rp_prompt = load_task("private_eval", 0).prompt.user
        audit_prompt = prompt(cls.plan).user
        cls.rp_snoop = cls.home / "redaction-pressure-snoop.txt"
        turns = {
            audit_prompt: [[bash(SNOOP)], [bash(programs.oracle_script(cls.plan))]],
            rp_prompt: [[bash(snoop_into(cls.rp_snoop))]],
        }

        def answer(body: dict):
            messages = body.get("messages") or []
            script = turns.get(last_user_text(body), [])
            done = sum(1 for m in messages if m.get("role") == "assistant")
            return script[done] if done < len(script) else "Done."

        cls.model = ChatServer(answer)
        env = {k: v for k, v in os.environ.items() if k != PRIVATE_ENV}
        env.setdefault("UV_CACHE_DIR", str(Path.home() / ".cache" / "uv"))
        env.update(
            HOME=str(cls.home), UV_PYTHON_DOWNLOADS="never", STANDIN_KEY="not-a-real-key", **{PRIVATE_ENV: SECRET}
        )
        common = ["-n", "1", "-c", "1", "-m", "standin", "--client.base-url", cls.model.url, "--client.api-key-var", "STANDIN_KEY",
                  "--env.agent.runtime.type", "subprocess", "--env.taskset.split", "private_eval", "--no-push", "--no-rich"]  # fmt: skip
        cls.out = cls.home / "out"
        refused = subprocess.run(
            [str(BIN / "vf-eval"), "secrets-audit", *common, "-o", str(cls.out / "refused")],
            env=env, cwd=ROOT, capture_output=True, text=True, stdin=subprocess.DEVNULL, timeout=900,
        )  # fmt: skip
        cls.refused = [t for path in (cls.out / "refused").rglob("traces.jsonl") for t in traces(path.parent)]
        cls.refused_output = refused.stdout + refused.stderr
        cls.results = [
            TestSecretsAuditEndToEnd.run_tool(
                [
                    "vf-eval",
                    "secrets-audit",
                    *common,
                    "--env.taskset.task.allow-unsealed",
                    "true",
                    "-o",
                    str(cls.out / "audit"),
                ],
                env,
            ),
            TestSecretsAuditEndToEnd.run_tool(
                ["vf-eval", "redaction-pressure", *common, "--env.agent.harness.id", "bash", "-o", str(cls.out / "rp")],
                env,
            ),
        ]
        (cls.audit_trace,) = traces(cls.out / "audit")
        (cls.rp_trace,) = traces(cls.out / "rp")

    @classmethod
    def tearDownClass(cls):
        cls.model.close()
        shutil.rmtree(cls.home, ignore_errors=True)

    def test_private_eval_refuses_the_subprocess_runtime_unless_accepted(self):
        """Without the flag the episode is refused, naming the isolating runtimes; with it the trace records sealed: false."""
        errors = json.dumps([t.get("errors") for t in self.refused]) + self.refused_output
        self.assertIn("private_eval refuses the subprocess runtime", errors)
        self.assertIn("docker", errors)
        self.assertNotIn(SECRET, errors)
        self.assertIs(self.audit_trace["info"]["sealed"], False)
        self.assertIs(self.audit_trace["info"]["audit"]["sealed"], False)

    def test_a_private_audit_episode_scores_and_reveals_its_seed_only_in_info(self):
        """The private task scores 1.0 after a snoop and the oracle; its seed is in trace.info and nowhere else."""
        trace = self.audit_trace
        self.assertFalse(trace.get("errors"), trace.get("errors"))
        self.assertEqual(total(trace), 1.0)
        self.assertEqual(trace["info"]["task_seed"], self.seed)
        self.assertEqual(trace["info"]["environment"]["split"], "private_eval")
        self.assertEqual(trace["info"]["environment"]["split_commitment"], self.commitment)
        outside = json.dumps({k: v for k, v in trace.items() if k != "info"})
        self.assertNotIn(str(self.seed), outside)
        self.assertIn(str(self.seed), json.dumps(trace["info"]))

    def test_no_agent_shell_sees_the_private_secret(self):
        """Both snoops ran (env, /proc/*/environ, grep of $HOME and the working folder) and found no secret."""
        texts = [m["content"] for m in trace_messages(self.audit_trace) if m.get("role") == "tool"]
        self.assertTrue(any("scanned" in t for t in texts), texts)
        self.assertFalse(any(SECRET in t for t in texts))
        self.assertEqual(self.rp_trace["info"]["environment"]["split"], "private_eval")
        snooped = self.rp_snoop.read_text(errors="replace")
        self.assertIn("scanned", snooped)
        self.assertIn("REDACTION_PRESSURE_PRIVATE_SEED=", snooped)  # the variable is there, masked
        self.assertNotIn(SECRET, snooped)

    def test_the_secret_is_in_no_output_file(self):
        """Neither run writes the secret to any file or to its console."""
        secret = SECRET.encode()
        files = [path for path in self.out.rglob("*") if path.is_file()]
        self.assertTrue(files)
        for path in files:
            self.assertNotIn(secret, path.read_bytes(), str(path))
        for result in self.results:
            self.assertNotIn(SECRET, result.stdout + result.stderr)


def trace_messages(trace: dict) -> list[dict]:
    nodes = trace.get("nodes") or []
    return [n["message"] for n in nodes if isinstance(n, dict) and "message" in n]


if __name__ == "__main__":
    unittest.main()
