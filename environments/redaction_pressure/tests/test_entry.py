"""The environments-folder entry resolves as `redaction-pressure` and scores.

A fast subset, not a copy of the root suite (which `uv run python -m unittest discover -s
tests` runs from the repository root): the id resolves through verifiers' own loader to the
taskset, a dev task loads, and the oracle's and an empty answer score 1.0 and 0.0.
"""

from __future__ import annotations

import unittest
from importlib import metadata


class TestEntry(unittest.TestCase):
    def test_id_resolves_to_the_taskset(self):
        """verifiers resolves `redaction-pressure` to a module exporting the taskset and null harness."""
        import verifiers.v1 as vf
        from verifiers.v1.utils.loaders import _plugin_class, import_taskset

        module = import_taskset("redaction-pressure")
        self.assertEqual(_plugin_class(module, vf.Taskset, "taskset").__name__, "RedactionPressureTaskset")
        self.assertTrue(issubclass(_plugin_class(module, vf.Harness, "harness"), vf.Harness))

    def test_entry_pins_the_installed_core(self):
        """The entry's distribution requires exactly the core version that is installed."""
        requires = metadata.requires("redaction-pressure") or []
        core = metadata.version("redaction-pressure-core")
        self.assertIn(f"redaction-pressure-core=={core}", [r.replace(" ", "") for r in requires])

    def test_oracle_scores_one_and_no_rules_zero(self):
        """On a dev task the oracle's rules score 1.0 and an empty rule list 0.0."""
        from redaction_pressure import load_task, score_reply
        from redaction_pressure.policies.reference import oracle_rules, reply

        task = load_task("dev", 3)
        self.assertEqual(score_reply(task, reply(oracle_rules(task.hidden))).reward, 1.0)
        self.assertEqual(score_reply(task, '{"rules": []}').reward, 0.0)


if __name__ == "__main__":
    unittest.main()
