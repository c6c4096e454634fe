"""secrets-audit's tools: computed on the host, taking the prompt's paths, reporting the grade; the box holds a stub.

The tools run on real workspaces (`LocalWorkspace.tools()`, what the taskset's interceptor calls);
bash and edit are verifiers' own `run_bash` and `run_edit`, run in the workspace as the harness
runs them. The box side is checked as verifiers would launch it: the toolset class's
distribution (what `_install_in_sandbox` would install) and the stub spoken to over stdio.
"""

from __future__ import annotations

import ast
import asyncio
import contextlib
import dataclasses
import json
import os
import subprocess
import sys
import tempfile
import unittest
from pathlib import Path
from types import SimpleNamespace

from redaction_pressure.audit import programs, tools
from redaction_pressure.audit.local import LocalWorkspace
from redaction_pressure.audit.prompt import SYSTEM
from redaction_pressure.audit.splits import plan_for
from redaction_pressure.audit.toolcalls import catalogue

LOOK_TASK = 4
"""dev 4: system_logging; settings/fraud_client.toml holds the shallow finding f1."""
FIX_TASK = 12
"""dev 12: legacy_audit (hard): three of its four findings start hidden, five probes, gold 1.0."""


@contextlib.contextmanager
def inside(folder: Path):
    """The harness's bash and edit work relative to the process's working directory."""
    before = os.getcwd()
    os.chdir(folder)
    try:
        yield
    finally:
        os.chdir(before)


def call(ws_tools, name: str, steps: int = 1, **args) -> str:
    return asyncio.run(ws_tools.call(name, args, steps))


def off_convention(plan):
    """The plan with its gold fix reading every secret from a variable the convention does not name."""
    names = sorted({s.env for s in plan.secrets}, key=len, reverse=True)

    def rename(text):
        for name in names:
            text = text.replace(name, f"{name}_LOCAL")
        return text

    return dataclasses.replace(plan, fix=tuple((p, None if t is None else rename(t)) for p, t in plan.fix))


class TestPromptPaths(unittest.TestCase):
    def test_every_tool_takes_the_prompts_paths(self):
        """bash, edit and the four audit tools all work with repo/<path>, the base the prompt states."""
        self.assertIn("Tools take paths relative to your working directory, where the repository is ./repo", SYSTEM)
        from verifiers.v1.harnesses.utils.core import run_bash, run_edit

        plan = plan_for("dev", LOOK_TASK)
        shallow = next(f for f in plan.findings if f.tier == "shallow")
        path = f"repo/{shallow.path}"
        with LocalWorkspace(plan) as ws, inside(ws.root):
            box = ws.tools()
            self.assertIn("[fraud_client]", run_bash(f"cat {path}"))
            shown = call(box, "inspect_file", path=path)
            self.assertIn("    1  [fraud_client]", shown)
            self.assertIn(f"- {shallow.id}: {shallow.kind} at {shallow.path}:{shallow.line} (shallow)", shown)
            self.assertIn("no decodable values found", call(box, "inspect_encoded", path=path))
            self.assertIn(f"+++ b/{shallow.path}", call(box, "inspect_git_history", path=path))
            self.assertIn("Visible findings", call(box, "status"))
            self.assertEqual(run_edit(path, "[fraud_client]", "[fraud_client] # edited"), f"Edited {path}")
            self.assertIn("# edited", (ws.repo / shallow.path).read_text())
            self.assertIn("    1  [fraud_client] # edited", call(box, "inspect_file", path=shallow.path), "lenient too")

    def test_a_path_out_of_the_repository_is_no_file(self):
        """inspect_file refuses paths that leave the repository, links included, and folders."""
        plan = plan_for("dev", LOOK_TASK)
        with LocalWorkspace(plan) as ws:
            (ws.repo / "out").symlink_to("/etc/hostname")
            box = ws.tools()
            for path in ("../../etc/passwd", "/etc/hostname", "repo/out", "", "repo/settings"):
                with self.subTest(path=path):
                    self.assertEqual(
                        call(box, "inspect_file", path=path), f"error: {path} is not a file in the repository"
                    )


class TestHistory(unittest.TestCase):
    def test_git_runs_without_the_repositorys_commands(self):
        """inspect_git_history shows patches without running the agent's pager, external diff, textconv or hooks."""
        plan = plan_for("dev", LOOK_TASK)
        with LocalWorkspace(plan) as ws:
            ran = ws.root / "ran"
            ws.bash(
                "cd repo && git config core.pager 'touch ../ran/pager; cat' && git config diff.external 'touch ../ran/external'"
                " && git config diff.x.textconv 'touch ../ran/textconv; cat' && echo '* diff=x' > .git/info/attributes"
                " && git config core.fsmonitor 'touch ../ran/fsmonitor' && mkdir -p ../ran"
            )
            shown = call(ws.tools(), "inspect_git_history", path="repo/settings/fraud_client.toml")
            self.assertIn("+api_token = ", shown)
            self.assertEqual(sorted(p.name for p in ran.iterdir()), [])


class TestStatus(unittest.TestCase):
    """Three grades of one task: untouched, fixed with variables off the convention, fixed by gold."""

    @classmethod
    def setUpClass(cls):
        cls.plan = plan_for("dev", FIX_TASK)
        cls.hidden = [f for f in cls.plan.findings if f.tier != "surface"]
        with LocalWorkspace(cls.plan) as ws:
            box = ws.tools()
            cls.untouched = call(box, "status", steps=1)
            ws.bash(programs.oracle_script(off_convention(cls.plan)))
            cls.off = call(box, "status", steps=3)
            cls.off_score = ws.score(steps=3)
        with LocalWorkspace(cls.plan) as ws:
            ws.bash(programs.oracle_script(cls.plan))
            cls.gold = call(ws.tools(), "status", steps=2)
            cls.gold_score = ws.score(steps=2)

    def test_status_shows_the_health_the_grade_gives(self):
        """Variables named off the convention: every secret is gone but the probes fail, and status says so as the grade does."""
        self.assertEqual(self.off_score.detection, 1.0)
        self.assertLess(self.off_score.health, 1.0)
        self.assertIn(f"Health: {self.off_score.health:.2f} = ", self.off)
        self.assertNotIn("Health: 1.00", self.off)
        self.assertIn("Failed probes (entry points whose output differs from a correct fix's):", self.off)
        self.assertIn("variable not read, or another name", self.off)
        self.assertIn(f"Score if the episode ended now: {self.off_score.total:.3f}", self.off)

    def test_after_the_real_fix_status_shows_full_health(self):
        """The gold fix: health 1.00, every factor 1.00, the score the grade gives."""
        self.assertEqual(self.gold_score.total, 1.0)
        self.assertIn("Health: 1.00 = tests 1.00", self.gold)
        self.assertIn("x probes 1.00", self.gold)
        self.assertNotIn("Failed probes", self.gold)
        self.assertIn("Score if the episode ended now: 1.000", self.gold)

    def test_the_hidden_count_drops_when_the_hidden_secrets_are_gone(self):
        """Untouched, every hidden finding still leaks; once their secrets are gone none is counted."""
        self.assertIn(f"not yet visible and still leaking: {len(self.hidden)}", self.untouched)
        self.assertIn("not yet visible and still leaking: 0", self.gold)
        for finding in self.hidden:
            self.assertNotIn(finding.path + ":", self.untouched.split("Next actions:")[0])


class TestBox(unittest.TestCase):
    def test_the_box_gets_only_verifiers(self):
        """The toolset is verifiers' own class: installing it into a container installs verifiers, nothing of this package."""
        from verifiers.v1.mcp.launch import _package_dir
        from verifiers.v1.mcp.server import ServerBase

        served = tools.box_toolset()
        self.assertTrue(type(served).__module__.startswith("verifiers."))
        self.assertEqual(_package_dir(type(served)), _package_dir(ServerBase))
        self.assertIn("verifiers-", Path(_package_dir(type(served))).name)
        config = served.config.model_dump_json()  # what the proxy gets in its environment
        for index in range(0, 52, 5):
            plan = plan_for("dev", index)
            for secret in plan.secrets:
                self.assertNotIn(secret.value, config)
            self.assertNotIn(str(plan.seed), config)

    def test_the_stub_imports_only_the_standard_library(self):
        """The program sent to the box imports json and sys, nothing else."""
        imported = {
            alias.name
            for node in ast.walk(ast.parse(programs.TOOL_STUB))
            if isinstance(node, (ast.Import, ast.ImportFrom))
            for alias in node.names
        }
        self.assertEqual(imported, {"json", "sys"})

    def test_the_stub_lists_the_tools_and_answers_a_placeholder(self):
        """Launched as the proxy launches it, the stub speaks MCP over stdio: discover refused, then the handshake, the list, a call."""
        server = tools.stub_server()
        requests = [
            {"jsonrpc": "2.0", "id": 1, "method": "server/discover", "params": {}},
            {"jsonrpc": "2.0", "id": 2, "method": "initialize", "params": {"protocolVersion": "2025-06-18"}},
            {"jsonrpc": "2.0", "method": "notifications/initialized"},
            {"jsonrpc": "2.0", "id": 3, "method": "tools/list", "params": {}},
            {"jsonrpc": "2.0", "id": 4, "method": "tools/call", "params": {"name": "status", "arguments": {}}},
            {"jsonrpc": "2.0", "id": 5, "method": "ping"},
        ]
        env = {"PATH": os.path.dirname(sys.executable) + os.pathsep + os.environ.get("PATH", "")}
        with tempfile.TemporaryDirectory() as empty:
            done = subprocess.run([server["command"], *server["args"]], input="".join(json.dumps(r) + "\n" for r in requests),
                                  capture_output=True, text=True, env=env, cwd=empty, timeout=60)  # fmt: skip
        replies = {r["id"]: r for r in map(json.loads, done.stdout.splitlines())}
        self.assertEqual(sorted(replies), [1, 2, 3, 4, 5], done.stderr)
        self.assertEqual(replies[1]["error"]["code"], -32601)
        self.assertEqual(replies[2]["result"]["protocolVersion"], "2025-06-18")
        self.assertEqual(replies[3]["result"]["tools"], catalogue())
        self.assertEqual(
            [t["name"] for t in catalogue()], ["inspect_file", "inspect_git_history", "inspect_encoded", "status"]
        )
        self.assertEqual(replies[4]["result"]["content"][0]["type"], "text")
        self.assertEqual(replies[5]["result"], {})


class TestToolServerAlive(unittest.TestCase):
    def test_the_check_sees_the_proxy_and_the_stub_of_its_own_workspace(self):
        """TOOL_SERVER_ALIVE holds while both run in the workspace and fails once either is gone (it never sees itself)."""
        with tempfile.TemporaryDirectory() as work:

            def alive() -> bool:
                return subprocess.run(["sh", "-c", programs.TOOL_SERVER_ALIVE], cwd=work, timeout=60).returncode == 0

            self.assertFalse(alive())
            sleep = [sys.executable, "-c", "import time; time.sleep(60)"]
            proxy = subprocess.Popen([*sleep, "-m", "verifiers.v1.tasksets.harbor.toolset"], cwd=work)
            stub = subprocess.Popen([*sleep, "# secrets-audit-tools-stub: the host answers every call"], cwd=work)
            try:
                self.assertTrue(alive())
                stub.kill()
                stub.wait()
                self.assertFalse(alive())
            finally:
                for process in (proxy, stub):
                    process.kill()
                    process.wait()


class TestInterceptor(unittest.TestCase):
    """The task's `audit_calls` on the requests verifiers shows it (a tool gate's empty probe, a later result)."""

    @classmethod
    def setUpClass(cls):
        import verifiers.v1 as vf

        from redaction_pressure.audit.taskset import LiveEpisode, SecretsAuditConfig, SecretsAuditTaskset

        cls.vf = vf
        cls.task = next(iter(SecretsAuditTaskset(SecretsAuditConfig(split="dev", size=LOOK_TASK + 1)).load()))
        cls.plan = plan_for("dev", 0)
        cls.ws = LocalWorkspace(cls.plan)
        cls.live = LiveEpisode
        cls.path = f"repo/{cls.plan.findings[0].path}"

    @classmethod
    def tearDownClass(cls):
        cls.ws.close()

    def request(self, tool: str, content: str, arguments: dict):
        vf = self.vf
        call = vf.ToolCall(id="call-1", name=tool, arguments=json.dumps(arguments))
        return vf.Request(
            messages=[
                vf.UserMessage(content="audit"),
                vf.AssistantMessage(content="", tool_calls=[call]),
                vf.ToolMessage(tool_call_id="call-1", name=tool, content=content),
            ]
        )

    def answer(self, gated: bool, tool: str, content: str, **arguments):
        self.task._live = {"t": self.live(self.ws.tools(), gated)}
        return asyncio.run(self.task.audit_calls(self.request(tool, content, arguments), SimpleNamespace(id="t")))

    def test_a_gated_call_is_answered_at_the_gate(self):
        """With a tool gate the empty probe becomes the host's result: the call never reaches the box."""
        rewritten = self.answer(True, "inspect_file", "", path=self.path)
        self.assertIn("    1  ", rewritten.messages[-1].content)

    def test_without_a_gate_the_stubs_placeholder_is_replaced(self):
        """Without a gate the probe passes (a rewrite would end the rollout) and the stub's answer is replaced."""
        self.assertIsNone(self.answer(False, "inspect_file", "", path=self.path))
        rewritten = self.answer(False, "inspect_file", "(this call is answered by the environment)", path=self.path)
        self.assertIn("    1  ", rewritten.messages[-1].content)

    def test_other_tools_are_left_alone(self):
        """bash and edit results pass unchanged."""
        self.assertIsNone(self.answer(True, "bash", "", command="ls"))
        self.assertIsNone(self.answer(True, "bash", "repo", command="ls"))

    def test_the_default_harness_gates_its_calls(self):
        """The taskset's default harness (bash) asks the gate; a harness that does not is recognised as such."""
        from redaction_pressure.audit.taskset import gates_tool_calls

        def trace(harness):
            return SimpleNamespace(agent=SimpleNamespace(config=SimpleNamespace(harness=harness)))

        self.assertTrue(gates_tool_calls(trace(None)))
        self.assertTrue(gates_tool_calls(trace(SimpleNamespace(id="bash"))))
        self.assertFalse(gates_tool_calls(trace(SimpleNamespace(id="mini_swe_agent"))))
        self.assertFalse(gates_tool_calls(trace(SimpleNamespace(id="no-such-harness"))))


if __name__ == "__main__":
    unittest.main()
