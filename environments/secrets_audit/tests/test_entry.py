"""The environments-folder entry resolves as `secrets-audit` and scores.

A fast subset, not a copy of the root suite: the id resolves through verifiers' own loader
to the taskset, and on one dev repository the oracle remediation scores 1.0 and inaction 0,
played on the framework-free path (git, git-filter-repo and pytest as the runtime needs them).
"""

from __future__ import annotations

import unittest


class TestEntry(unittest.TestCase):
    def test_id_resolves_to_the_taskset(self):
        """verifiers resolves `secrets-audit` to the module exporting the secrets-audit taskset."""
        import verifiers.v1 as vf
        from verifiers.v1.utils.loaders import _plugin_class, import_taskset

        module = import_taskset("secrets-audit")
        self.assertEqual(_plugin_class(module, vf.Taskset, "taskset").__name__, "SecretsAuditTaskset")

    def test_oracle_scores_one_and_inaction_zero(self):
        """On a dev repository with history to scrub, the oracle scores 1.0 and doing nothing 0."""
        from redaction_pressure.audit import programs, splits
        from redaction_pressure.audit.local import LocalWorkspace

        plan = splits.plan_for("dev", 3)  # git_basics: the tracked .env lives in history too
        with LocalWorkspace(plan) as untouched:
            self.assertEqual(untouched.score().total, 0.0)
        with LocalWorkspace(plan) as ws:
            self.assertEqual(ws.bash(programs.oracle_script(plan)).returncode, 0)
            self.assertEqual(ws.score(steps=1).total, 1.0)


if __name__ == "__main__":
    unittest.main()
