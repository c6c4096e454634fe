"""secrets-audit's finding tiers: what each tool call or fix reveals."""

from __future__ import annotations

import unittest

from redaction_pressure.audit import tiers
from redaction_pressure.audit.scenarios import build


class TestTiers(unittest.TestCase):
    def test_reveals(self):
        """Shallow by inspect_file, deep by history or encoded inspection, cascading by a fix."""
        plan = build("microservices", 1)
        surface = [f.id for f in plan.findings if f.tier == "surface"]
        self.assertEqual(tiers.visible(plan, [], []), surface)
        shallow = next(f for f in plan.findings if f.tier == "shallow")
        seen = tiers.visible(plan, [tiers.Call("inspect_file", {"path": "./repo/" + shallow.path})], [])
        self.assertIn(shallow.id, seen)
        cascade = next(f for f in plan.findings if f.tier == "cascading")
        self.assertNotIn(cascade.id, tiers.visible(plan, [], []))
        self.assertIn(cascade.id, tiers.visible(plan, [], [cascade.trigger]))
        legacy = build("legacy_audit", 1)
        deep = next(f for f in legacy.findings if f.tier == "deep")
        self.assertIn(deep.id, tiers.visible(legacy, [tiers.Call("inspect_git_history", {})], []))


if __name__ == "__main__":
    unittest.main()
