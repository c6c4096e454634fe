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
from tests.support.openenv_server import DRIVER, Server, openenv_python
from tests.support.standin import ToolCallingModel

ROOT = Path(__file__).resolve().parents[2]
BIN = Path(sys.executable).parent
SECRET = "openenv-test-secret-of-this-module-only-0123456789"
TOKEN = "openenv-test-token-0123456789abcdef"


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
            {"tool": "submit"}, {"command": "ls"}]}])  # fmt: skip
        self.assertNotIn("error", got, got.get("error"))
        unknown, empty, outside, _, after_end = got["steps"]
        self.assertIn("the episode is over", after_end["error"])
        self.assertIn("unknown tool 'rm_rf'", unknown["error"])
        self.assertIn("the command is empty", empty["error"])
        self.assertIn("is not a file in the repository", outside["observation"]["observation"])
        self.assertNotIn("root:x:0:0", json.dumps(outside))

    def test_a_command_printing_300_mb_costs_the_server_no_memory(self):
        """The agent reads the level's cap of the output; the server keeps a bounded head of each stream and
        drops the rest, so its peak memory barely moves."""

        def peak_kib() -> int:
            status = Path(f"/proc/{self.server.proc.pid}/status").read_text()
            return int(next(line.split()[1] for line in status.splitlines() if line.startswith("VmHWM:")))

        before = peak_kib()
        flood = "head -c 300000000 /dev/zero | tr '\\0' x; echo; echo last-line >&2"
        (got,) = self.server.play([{"taskset": "secrets-audit", "reset": {"split": "dev", "index": 0},
                                    "actions": [{"command": flood}, {"tool": "submit"}]}])  # fmt: skip
        self.assertNotIn("error", got, got.get("error"))
        step = got["steps"][0]["observation"]
        self.assertEqual(step["last_result"]["exit_code"], 0)
        self.assertLess(len(step["observation"]), 25_000)
        self.assertIn("more characters", step["observation"])
        self.assertLess(peak_kib() - before, 100 * 1024, "the server's peak memory grew by the output's size")

    def test_private_eval_is_refused_in_the_local_box(self):
        """--sandbox local puts the agent on the evaluator's host: a private_eval reset is refused by name."""
        (got,) = self.server.play([{"taskset": "secrets-audit", "reset": {"split": "private_eval", "index": 0}}])
        self.assertIn("private_eval runs only in the podman sandbox", got["error"])


class TestSecretsAuditInPodman(unittest.TestCase):
    """The default sandbox: each session in a container of its own, the agent unprivileged, attacked from its shell."""

    @classmethod
    def setUpClass(cls):
        from redaction_pressure.audit import container

        reason = container.available()
        if reason:
            raise AssertionError(f"the podman sandbox cannot be tested: {reason}")
        if not container.has_image():
            container.build_image()
        cls.server = Server("--taskset", "secrets-audit", "--max-sessions", "3",
                            env={shared_splits.PRIVATE_ENV: SECRET})  # fmt: skip

    @classmethod
    def tearDownClass(cls):
        cls.server.close()

    def test_the_gold_fix_scores_as_on_the_local_path(self):
        """The oracle on a history scenario (dev 3) scores 1.0; a refused edit is an error the agent reads."""
        plan = audit_splits.plan_for("dev", 3)
        (got,) = self.server.play([{"taskset": "secrets-audit", "reset": {"split": "dev", "index": 3}, "actions": [
            {"tool": "edit", "args": {"path": "repo/README.md", "old_str": "no such text", "new_str": "x"}},
            {"command": programs.oracle_script(plan)}, {"tool": "submit"}]}])  # fmt: skip
        self.assertNotIn("error", got, got.get("error"))
        edit, _, last = got["steps"]
        self.assertIn("old_str must appear exactly once", edit["observation"]["observation"])
        self.assertTrue(last["done"])
        self.assertEqual(last["reward"], 1.0, last["observation"]["grade"])
        self.assertEqual(last["observation"]["grade"]["health"], 1.0)

    def test_the_agent_reaches_no_secret_no_host_file_and_no_process_of_an_earlier_step(self):
        """From the agent's shell: not root, no private secret in any environment it can read, none of the host's
        files or this package, no secret's value in a file outside the repository, and a process it left running
        is gone at the next step."""
        snoop = (
            "id -u; cat /proc/[0-9]*/environ 2>/dev/null | tr '\\0' '\\n' | grep -c PRIVATE_SEED; "
            f"test -e {ROOT}/redaction_pressure && echo HOST-CODE-VISIBLE; "
            "python3 -c 'import redaction_pressure' 2>/dev/null && echo PACKAGE-IMPORTABLE; "
            "(setsid sleep 300 >/dev/null 2>&1 &); echo left-running"
        )
        after = "for p in /proc/[0-9]*; do tr '\\0' ' ' < $p/cmdline 2>/dev/null; echo; done | grep -c '[s]leep 300'"
        # every secret's value, searched for in every file the agent can read: only the repository's own
        values = " ".join(f"-e {shlex.quote(v.value)}" for v in audit_splits.plan_for("dev", 0).secrets)
        after += f"; grep -rlsF {values} / --exclude-dir=proc --exclude-dir=sys --exclude-dir=dev | grep -v '^/work/repo/'; true"
        (got,) = self.server.play([{"taskset": "secrets-audit", "reset": {"split": "dev", "index": 0},
                                     "actions": [{"command": snoop}, {"command": after}, {"tool": "submit"}]}])  # fmt: skip
        self.assertNotIn("error", got, got.get("error"))
        first, second, _ = (s["observation"]["last_result"]["stdout"] for s in got["steps"])
        lines = first.split()
        self.assertNotEqual(lines[0], "0", "the agent is not root")
        self.assertEqual(lines[1], "0", "no readable environment names the private secret")
        self.assertNotIn("HOST-CODE-VISIBLE", first)
        self.assertNotIn("PACKAGE-IMPORTABLE", first)
        self.assertIn("left-running", first)
        self.assertEqual(second.strip(), "0", "the process left running was killed after its step; no file outside "
                         "the repository (a plan, a gold fix, a grader's copy) holds a secret's value")  # fmt: skip
        self.assertNotIn(SECRET, json.dumps(got))

    def test_a_server_stopped_mid_episode_leaves_no_container(self):
        """SIGTERM while a session's command runs: the server exits and removes the session's container."""
        import uuid

        from redaction_pressure.audit import container

        nonce = uuid.uuid4().hex
        server = Server("--taskset", "secrets-audit", "--max-sessions", "1")
        episode = {"taskset": "secrets-audit", "reset": {"split": "dev", "index": 0},
                   "actions": [{"command": f"echo {nonce} > /tmp/box-name; sleep 600"}]}  # fmt: skip
        driver = subprocess.Popen([openenv_python(), str(DRIVER), server.url], stdin=subprocess.PIPE,
                                  stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL, text=True, cwd=ROOT)  # fmt: skip
        driver.stdin.write(json.dumps([episode]))
        driver.stdin.close()
        try:
            names = []
            deadline = time.monotonic() + 600
            while not names and time.monotonic() < deadline:
                time.sleep(2)
                listed = container.podman("ps", "--format", "{{.Names}}", timeout=60).stdout.decode().split()
                for name in (n for n in listed if n.startswith("secrets-audit-")):
                    read = container.podman("exec", name, "cat", "/tmp/box-name", timeout=60)
                    if read.returncode == 0 and read.stdout.decode().strip() == nonce:
                        names.append(name)
            self.assertTrue(names, "the session's container never ran its command")
            server.close()
            self.assertIsNotNone(server.proc.returncode)
            for name in names:
                self.assertNotEqual(container.podman("container", "exists", name, timeout=60).returncode, 0, name)
        finally:
            server.close()
            driver.kill()
            driver.wait()

    def test_a_grader_call_killed_from_outside_voids_the_episode_instead_of_scoring_it_0(self):
        """A `podman` call of the grade killed by a signal on the host (nothing in the box can do that) ends the
        episode with an error naming it, not with the 0 the grader's fail-closed verdict would give."""
        script = (
            "import subprocess\n"
            "from redaction_pressure.audit import container\n"
            "from redaction_pressure.audit.openenv_env import AuditAction, environment_factory\n"
            "env = environment_factory('podman')()\n"
            "env.reset(split='dev', index=0)\n"
            "real = container.podman\n"
            "def killed(*a, **k):\n"
            "    done = real(*a, **k)\n"
            "    return subprocess.CompletedProcess(done.args, -9, b'', b'')\n"
            "container.podman = killed  # as if the host killed every podman call from now on\n"
            "try:\n    env.step(AuditAction(tool='submit')); print('SCORED')\n"
            "except RuntimeError as exc:\n    print(exc)\n"
            "print('done' if env.state.done else 'open', 'box' if env._box else 'no-box')\n"
        )
        done = subprocess.run([openenv_python(), "-c", script], capture_output=True, text=True, timeout=900,
                              cwd=ROOT, stdin=subprocess.DEVNULL)  # fmt: skip
        self.assertIn("killed from outside it: the grade is void", done.stdout, done.stdout + done.stderr[-2000:])
        self.assertNotIn("SCORED", done.stdout)
        self.assertIn("done no-box", done.stdout)

    def test_a_session_cannot_read_another_sessions_workspace(self):
        """Two sessions at once: what one writes in its workspace and home, the other finds nowhere."""
        writer = {"taskset": "secrets-audit", "reset": {"split": "dev", "index": 1}, "actions": [
            {"command": "echo MARK-OF-A > repo/mark-a.txt && echo MARK-OF-A > ~/mark-a.txt && echo written"},
            {"command": "sleep 25; echo done"}, {"tool": "submit"}]}  # fmt: skip
        reader = {"taskset": "secrets-audit", "reset": {"split": "dev", "index": 2}, "actions": [
            {"command": "sleep 12; find / -xdev -name 'mark-a.txt' 2>/dev/null; "
                        "grep -rls MARK-OF-A /home /tmp /work /var /root 2>/dev/null; echo searched"},
            {"tool": "submit"}]}  # fmt: skip
        a, b = self.server.play([writer, reader], parallel=True)
        self.assertNotIn("error", a, a.get("error"))
        self.assertNotIn("error", b, b.get("error"))
        self.assertIn("written", a["steps"][0]["observation"]["last_result"]["stdout"])
        found = b["steps"][0]["observation"]["last_result"]["stdout"]
        self.assertEqual(found.strip(), "searched", found)

    def test_a_client_killed_mid_episode_leaves_no_container(self):
        """A client resets (its box starts) and is SIGKILLed without closing: the server removes its box."""
        from redaction_pressure.audit import container

        def boxes() -> set[str]:
            listed = container.podman("ps", "-a", "--format", "{{.Names}}", timeout=120).stdout.decode().split()
            return {name for name in listed if name.startswith("secrets-audit-")}

        before = boxes()
        vanish = (
            "import sys, time\n"
            "from redaction_pressure.audit.openenv_env import SecretsAuditEnv\n"
            "env = SecretsAuditEnv(base_url=sys.argv[1]).sync(); env.connect(); env.reset(split='dev', index=1)\n"
            "print('reset', flush=True); time.sleep(600)\n"
        )
        client = subprocess.Popen([openenv_python(), "-c", vanish, self.server.url], cwd=ROOT, text=True,
                                  stdout=subprocess.PIPE, stderr=subprocess.DEVNULL, stdin=subprocess.DEVNULL)  # fmt: skip
        try:
            self.assertEqual(client.stdout.readline().strip(), "reset")
            self.assertEqual(len(boxes() - before), 1, "the session's box runs while its client lives")
        finally:
            client.kill()
            client.wait(60)
        deadline = time.monotonic() + 180
        while boxes() - before and time.monotonic() < deadline:
            time.sleep(1)
        self.assertEqual(boxes() - before, set(), "the vanished client's box is removed")


class TestOpenEnvValidate(unittest.TestCase):
    """`openenv validate` on each environment's package (servers/openenv/envs/*): the static level through its CLI;
    every level through the validator's own Docker provider, podman standing in for Docker
    (servers/openenv/validate.py: it builds the package's image, starts it read-only, unprivileged and without
    network, plays the runtime plan and measures the network from outside)."""

    PACKAGES = {"redaction-pressure": "redaction_pressure", "secrets-audit": "secrets_audit"}
    RUNS_HERE = ("static.manifest", "runtime.startup", "runtime.network_policy", "runtime.observation_schema",
                 "runtime.reward_well_formed", "runtime.state_contract")  # fmt: skip
    """Every check openenv 0.10.0 has a grader for; each of the others reports SKIP "grader not implemented"."""

    def test_the_static_level_passes(self):
        """openenv validate --level static: PASS, exit 0, for both packages."""
        openenv = Path(openenv_python()).parent / "openenv"
        for taskset, folder in self.PACKAGES.items():
            with self.subTest(taskset=taskset):
                done = subprocess.run([str(openenv), "validate", str(ROOT / "servers/openenv/envs" / folder), "--level", "static"],
                                      capture_output=True, text=True, timeout=300, stdin=subprocess.DEVNULL)  # fmt: skip
                self.assertEqual(done.returncode, 0, done.stdout + done.stderr)
                self.assertIn("Verdict: PASS", done.stdout)

    def test_every_level_passes_in_the_validators_own_container(self):
        """Every check openenv implements passes against the server in its image (network included); every other
        check is a SKIP because openenv has no grader for it; no container and no staged file is left."""
        from redaction_pressure.audit import container

        done = subprocess.run([openenv_python(), str(ROOT / "servers/openenv/validate.py"), "--json"],
                              capture_output=True, text=True, timeout=3000, stdin=subprocess.DEVNULL, cwd=ROOT)  # fmt: skip
        self.assertEqual(done.returncode, 0, done.stderr[-3000:])
        reports = json.loads(done.stdout)
        self.assertEqual(set(reports), set(self.PACKAGES.values()))
        for folder, report in reports.items():
            rows = {r["check_id"]: r for r in report["results"]}
            for check in self.RUNS_HERE:
                with self.subTest(package=folder, check=check):
                    self.assertEqual(rows[check]["status"], "pass", rows[check])
            self.assertEqual(rows["runtime.startup"]["measured"]["provider"], "docker-local")
            for check, row in rows.items():
                if check not in self.RUNS_HERE:
                    self.assertEqual(
                        (row["status"], row["evidence"]), ("skip", ["grader not implemented in this build"]), check
                    )
            self.assertEqual(report["verdict"], "warn")
            self.assertFalse((ROOT / "servers/openenv/envs" / folder / "site.tar").exists())
        left = container.podman("ps", "--all", "--quiet", "--filter", "label=org.openenv.validation.run", timeout=60)
        self.assertEqual(left.stdout.decode().strip(), "", "the validator's containers are removed")

    def test_the_image_grades_as_the_server_does(self):
        """The secrets-audit image, started with the validator's hardening: the agent is its unprivileged user and
        the gold fix of a history scenario scores 1.0 with health 1.0, as on the host."""
        import uuid

        from redaction_pressure.audit import container

        package = ROOT / "servers/openenv/envs/secrets_audit"
        tag, name = f"localhost/openenv-check-{uuid.uuid4().hex[:8]}", f"openenv-check-{uuid.uuid4().hex[:8]}"
        stage = "import sys; sys.path.insert(0, sys.argv[1]); import validate; validate.prepare(); validate.stage(validate.Path(sys.argv[2]))"
        try:
            staged = subprocess.run([openenv_python(), "-c", stage, str(ROOT / "servers/openenv"), str(package)],
                                    capture_output=True, text=True, timeout=1200, stdin=subprocess.DEVNULL)  # fmt: skip
            self.assertEqual(staged.returncode, 0, staged.stderr[-2000:])
            built = container.podman("build", "-q", "-t", tag, str(package), timeout=1200)
            self.assertEqual(built.returncode, 0, built.stderr.decode()[-2000:])
            started = container.podman("run", "-d", "--name", name, "--init", "--user", "65532:65532", "--read-only",
                                       "--cap-drop", "ALL", "--security-opt", "no-new-privileges", "--network", "none",
                                       "--pids-limit", "256", "--memory", "2048m",
                                       "--tmpfs", "/tmp:rw,nosuid,nodev,size=960m,mode=1777", tag, timeout=300)  # fmt: skip
            self.assertEqual(started.returncode, 0, started.stderr.decode()[-2000:])
            plan = audit_splits.plan_for("dev", 3)
            episode = [{"taskset": "secrets-audit", "reset": {"split": "dev", "index": 3},
                        "actions": [{"command": "id -u; touch /opt/site/x 2>&1"}, {"command": programs.oracle_script(plan)}, {"tool": "submit"}]}]  # fmt: skip
            driver = (ROOT / "tests/support/openenv_driver.py").read_text()
            health = "import urllib.request; urllib.request.urlopen('http://127.0.0.1:8000/health', timeout=5)"
            deadline = time.monotonic() + 300
            while container.podman("exec", name, "python3", "-c", health, timeout=60).returncode:
                self.assertLess(time.monotonic(), deadline, "the server in the image never answered /health")
                time.sleep(1)  # it listens inside the box's own network namespace
            ran = container.podman("exec", "-i", name, "python3", "-c", driver, "http://127.0.0.1:8000",
                                   data=json.dumps(episode).encode(), timeout=900)  # fmt: skip
            self.assertEqual(ran.returncode, 0, ran.stderr.decode()[-2000:])
            (got,) = json.loads(ran.stdout)
            self.assertNotIn("error", got, got.get("error"))
            first, _, last = got["steps"]
            out = first["observation"]["last_result"]["stdout"]
            self.assertEqual(out.splitlines()[0], "65532")
            self.assertIn("Read-only file system", out)
            self.assertEqual((last["done"], last["reward"]), (True, 1.0), last["observation"].get("grade"))
            self.assertEqual(last["observation"]["grade"]["health"], 1.0)
        finally:
            container.podman("rm", "--force", "--time", "0", name, timeout=120)
            container.podman("image", "rm", "--force", tag, timeout=120)
            (package / "site.tar").unlink(missing_ok=True)


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

    def test_without_its_secret_private_eval_is_refused_and_sessions_are_bounded(self):
        """No private secret: a private_eval reset names the variable. --max-sessions 1: of two clients at once,
        one is served and the other told the server is full; the server goes on serving."""
        server = Server("--taskset", "redaction-pressure", "--max-sessions", "1")
        try:
            (private,) = server.play(
                [{"taskset": "redaction-pressure", "reset": {"split": "private_eval", "index": 0}}]
            )
            self.assertIn(shared_splits.PRIVATE_ENV, private["error"])
            # A holds its session while B asks for one: B is told the server is full, whatever the timing.
            both = (
                "import sys\n"
                "from redaction_pressure.redact.openenv_env import RedactionPressureEnv\n"
                "a = RedactionPressureEnv(base_url=sys.argv[1]).sync(); a.connect(); a.reset(split='dev', index=0)\n"
                "b = RedactionPressureEnv(base_url=sys.argv[1]).sync()\n"
                "try:\n    b.connect(); b.reset(split='dev', index=1); print('SERVED')\n"
                "except Exception as exc:\n    print(exc)\n"
                "a.close()\n"
            )
            done = subprocess.run([openenv_python(), "-c", both, server.url], capture_output=True, text=True,
                                  timeout=300, cwd=ROOT, stdin=subprocess.DEVNULL)  # fmt: skip
            self.assertIn("CAPACITY_REACHED", done.stdout, done.stdout + done.stderr[-2000:])
            (after,) = server.play([{"taskset": "redaction-pressure", "reset": {"split": "dev", "index": 2},
                                     "actions": [{"reply": '{"rules": []}'}]}])  # fmt: skip
            self.assertEqual(after["steps"][0]["reward"], 0.0)
        finally:
            server.close()

    def test_garbage_on_the_wire_and_a_short_secret_are_answered_and_the_session_goes_on(self):
        """On one WebSocket: text that is not JSON, an unknown message type, a step before reset, a seed no task has
        and private_eval under a 10-character secret each get an error naming what is wrong (never the secret);
        then a dev reset is served on the same connection. Malformed JSON over HTTP is a 4xx."""
        short = "too-short!"
        server = Server("--taskset", "redaction-pressure", env={shared_splits.PRIVATE_ENV: short})
        wire = (
            "import json, sys\n"
            "from websockets.sync.client import connect\n"
            "with connect(sys.argv[1].replace('http', 'ws', 1) + '/ws', open_timeout=60) as ws:\n"
            "    for raw in sys.stdin.read().split('\\n'):\n"
            "        ws.send(raw); print(ws.recv(timeout=120))\n"
        )
        messages = ["not json{", json.dumps({"type": "teleport"}), json.dumps({"type": "step", "data": {"reply": "{}"}}),
                    json.dumps({"type": "reset", "data": {"seed": -5}}),
                    json.dumps({"type": "reset", "data": {"split": "private_eval", "index": 0}}),
                    json.dumps({"type": "reset", "data": {"split": "dev", "index": 0}})]  # fmt: skip
        try:
            done = subprocess.run([openenv_python(), "-c", wire, server.url], input="\n".join(messages), capture_output=True,
                                  text=True, timeout=600, cwd=ROOT)  # fmt: skip
            self.assertEqual(done.returncode, 0, done.stderr[-2000:])
            garbage, unknown, early, seed, private, served = map(json.loads, done.stdout.splitlines())
            self.assertEqual(garbage["data"]["code"], "INVALID_JSON")
            self.assertEqual(unknown["data"]["code"], "UNKNOWN_TYPE")
            self.assertIn("step before reset", early["data"]["message"])
            self.assertEqual(seed["type"], "error")
            self.assertIn("seed -5 names no task", seed["data"]["message"])
            self.assertIn("has 10 characters; private_eval needs at least 32", private["data"]["message"])
            self.assertNotIn(short, done.stdout)
            self.assertEqual(served["type"], "observation", served)
            self.assertIn("REDACTED", served["data"]["observation"]["user_prompt"])
            request = urllib.request.Request(server.url + "/step", data=b"{not json", method="POST",
                                             headers={"Content-Type": "application/json"})  # fmt: skip
            with self.assertRaises(urllib.error.HTTPError) as refused:
                urllib.request.urlopen(request, timeout=60)
            self.assertTrue(400 <= refused.exception.code < 500, refused.exception.code)
        finally:
            server.close()

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
