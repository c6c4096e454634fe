"""The environments-folder entry resolves as `secrets-audit` and keeps the README's promises.

A fast subset of the root suite, built on the root suite's own cases (`tests/support/cases.py`,
imported, not copied), played on the framework-free path (git, git-filter-repo and pytest as
the runtime needs them): the id resolves to the taskset with verifiers' bash harness; on one
dev repository of each difficulty the gold remediation scores 1.0 and inaction 0; repositories
are the same every time; private_eval needs its secret and refuses the unsealed subprocess
runtime unless told; the runtime's missing tools are named.
"""

from __future__ import annotations

import asyncio
import os
import sys
import tempfile
import unittest
from pathlib import Path

ROOT_TESTS = Path(__file__).resolve().parents[3] / "tests"
sys.path.insert(0, str(ROOT_TESTS))  # the root suite's shared cases (support/cases.py), one source of truth

from support.cases import TEST_SECRET, private_secret  # noqa: E402

from redaction_pressure.audit import grading, programs, splits  # noqa: E402
from redaction_pressure.audit.local import LocalWorkspace  # noqa: E402
from redaction_pressure.audit.scenarios import SCENARIOS  # noqa: E402
from redaction_pressure.splits import SplitError  # noqa: E402

# One dev task of each difficulty (the scenario of dev task i is SCENARIOS[i % 13]).
PLAYED = {level: next(i for i in range(13) if SCENARIOS[i].difficulty == level) for level in ("easy", "medium", "hard")}


class TestEntry(unittest.TestCase):
    def test_id_resolves_to_the_taskset_with_the_bash_harness(self):
        """verifiers resolves `secrets-audit` to the module exporting the taskset; its default harness is verifiers' bash."""
        import verifiers.v1 as vf
        from verifiers.v1.utils.loaders import _plugin_class, default_harness_id, import_taskset

        module = import_taskset("secrets-audit")
        self.assertEqual(_plugin_class(module, vf.Taskset, "taskset").__name__, "SecretsAuditTaskset")
        self.assertEqual(default_harness_id("secrets-audit"), "bash")


class TestGoldAndNoop(unittest.TestCase):
    def test_the_gold_remediation_scores_one_on_each_difficulty(self):
        """The gold fix (working tree and history) scores 1.0 on a dev repository of each difficulty."""
        for level, index in PLAYED.items():
            plan = splits.plan_for("dev", index)
            with self.subTest(level=level, scenario=plan.scenario), LocalWorkspace(plan) as workspace:
                self.assertEqual(workspace.bash(programs.oracle_script(plan)).returncode, 0)
                self.assertEqual(workspace.score(steps=1).total, 1.0)

    def test_inaction_scores_zero_on_each_difficulty(self):
        """A repository left as it was scores 0 on a dev repository of each difficulty."""
        for level, index in PLAYED.items():
            plan = splits.plan_for("dev", index)
            with self.subTest(level=level, scenario=plan.scenario), LocalWorkspace(plan) as workspace:
                self.assertEqual(workspace.score().total, 0.0)

    def test_the_working_tree_fix_alone_leaves_history_secrets(self):
        """On a repository whose history holds a secret, fixing only the working tree scores below 1."""
        plan = next(splits.plan_for("dev", i) for i in range(13) if splits.plan_for("dev", i).history_secrets)
        with LocalWorkspace(plan) as workspace:
            self.assertEqual(workspace.bash(programs.oracle_script(plan, history=False)).returncode, 0)
            self.assertLess(workspace.score(steps=1).total, 1.0)


class TestSplits(unittest.TestCase):
    def test_repositories_are_the_same_every_time(self):
        """The same split and index build the same repository plan; the next index another."""
        self.assertEqual(splits.plan_for("dev", 5), splits.plan_for("dev", 5))
        self.assertNotEqual(splits.plan_for("dev", 5).tree(), splits.plan_for("dev", 18).tree())

    def test_private_eval_needs_its_secret(self):
        """Without the secret a private_eval repository cannot be built, and the error names the variable."""
        with private_secret(None), self.assertRaises(SplitError) as caught:
            splits.plan_for("private_eval", 0)
        self.assertIn("REDACTION_PRESSURE_PRIVATE_SEED", str(caught.exception))

    def test_private_eval_refuses_the_unsealed_subprocess_runtime_unless_told(self):
        """On the subprocess runtime a private_eval task refuses to start, naming the option; with allow_unsealed it is recorded unsealed."""
        import verifiers.v1 as vf
        from verifiers.v1.runtimes import SubprocessConfig, make_runtime

        from redaction_pressure.audit.taskset import SecretsAuditConfig, SecretsAuditTaskConfig, SecretsAuditTaskset

        runtime = make_runtime(SubprocessConfig(), name="entry-private-check")
        with private_secret(TEST_SECRET):
            (task,) = list(SecretsAuditTaskset(SecretsAuditConfig(split="private_eval", size=1)))
            with self.assertRaises(vf.TaskError) as caught:
                task._check_sealed(runtime)
            self.assertIn("--env.taskset.task.allow-unsealed true", str(caught.exception))
            (allowed,) = list(
                SecretsAuditTaskset(
                    SecretsAuditConfig(split="private_eval", size=1, task=SecretsAuditTaskConfig(allow_unsealed=True))
                )
            )
            self.assertFalse(allowed._check_sealed(runtime))


class TestRuntimeTools(unittest.TestCase):
    def test_a_runtime_without_the_tools_names_each_missing_one(self):
        """The runtime probe on an empty PATH names python with pytest, git and git-filter-repo."""
        import subprocess

        with tempfile.TemporaryDirectory() as empty:
            result = subprocess.run(
                ["/bin/sh", "-c", programs.PROBE], env={"PATH": empty}, capture_output=True, text=True, timeout=60
            )
        self.assertEqual(grading.parse_probe(result.stdout), (None, "", False, ""))

    def test_the_agents_own_toolchain_is_found_without_this_environments_path(self):
        """On the subprocess runtime the taskset puts the agent's own toolchain first on PATH: its python has pytest, not this package."""
        from verifiers.v1.runtimes import SubprocessConfig, make_runtime

        from redaction_pressure.audit import host_toolchain
        from redaction_pressure.audit.taskset import own_toolchain_first

        runtime = make_runtime(SubprocessConfig(), name="entry-path-check")
        runtime.env = {"PATH": "/nonexistent"}

        async def probe():
            await own_toolchain_first(runtime)
            await runtime.start()
            try:
                found = await runtime.run(["python", "-c", "import sys, pytest; print(sys.prefix)"], {})
                package = await runtime.run(["python", "-c", "import secrets_audit"], {})
                return found, package
            finally:
                await runtime.stop()

        found, package = asyncio.run(probe())
        self.assertEqual(runtime.env["PATH"].split(os.pathsep)[0], str(host_toolchain.ensure() / "bin"))
        self.assertEqual(found.exit_code, 0, found.stderr)
        self.assertEqual(found.stdout.strip(), str(host_toolchain.ensure()))
        self.assertNotEqual(package.exit_code, 0)


if __name__ == "__main__":
    unittest.main()
