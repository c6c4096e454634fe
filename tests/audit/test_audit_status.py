"""secrets-audit's status: the counts it reports, the trigger ranked first, no hidden finding named."""

from __future__ import annotations

import unittest

from redaction_pressure.audit import status, tiers
from redaction_pressure.audit.scenarios import build


class TestStatus(unittest.TestCase):
    def test_status_reports_counts_and_ranks_the_trigger_first(self):
        """The status never names hidden findings and puts a cascade trigger at the top."""
        plan = build("deployment", 1)
        visible = tiers.visible(plan, [], [])
        observed = status.observe(plan, visible, [], [], 3, 1.0)
        self.assertEqual(observed.hidden, len(plan.findings) - len(visible))
        self.assertGreater(observed.hidden, 0)
        self.assertEqual(observed.remaining, plan.budget - 3)
        self.assertIn("reveals more findings", observed.blocker)
        self.assertLessEqual(len(observed.actions), status.MAX_ACTIONS)
        text = status.render(observed)
        hidden = next(f for f in plan.findings if f.id not in visible)
        self.assertNotIn(hidden.path, text)


if __name__ == "__main__":
    unittest.main()
