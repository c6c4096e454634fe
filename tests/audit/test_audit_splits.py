"""secrets-audit's splits: dev covers every scenario four times; private seeds need the secret and
use their own label.
"""

from __future__ import annotations

import unittest

from redaction_pressure import splits as shared_splits
from redaction_pressure.audit import splits
from redaction_pressure.audit.scenarios import SCENARIOS
from tests.support.cases import PRIVATE_ENV, TEST_SECRET, private_secret


class TestSplits(unittest.TestCase):
    def test_dev_covers_every_scenario_four_times(self):
        """dev is 52 tasks: each scenario at four seeds."""
        names = [splits.scenario_for(i) for i in range(splits.DEV_SIZE)]
        self.assertEqual({n: names.count(n) for n in names}, {s.name: 4 for s in SCENARIOS})
        self.assertEqual(len({splits.seed_for("dev", i) for i in range(splits.DEV_SIZE)}), splits.DEV_SIZE)
        with self.assertRaises(shared_splits.SplitError):
            splits.seed_for("dev", splits.DEV_SIZE)

    def test_private_seeds_need_the_secret_and_use_their_own_label(self):
        """private_eval fails without the secret and never shares redaction-pressure's seeds."""
        import os

        saved = os.environ.pop(PRIVATE_ENV, None)
        try:
            with self.assertRaises(shared_splits.SplitError):
                splits.seed_for("private_eval", 0)
        finally:
            if saved is not None:
                os.environ[PRIVATE_ENV] = saved
        with private_secret(TEST_SECRET):
            mine = splits.seed_for("private_eval", 0)
            theirs = shared_splits.seed_for("private_eval", 0)
        self.assertNotEqual(mine, theirs)
        self.assertGreaterEqual(mine, 1 << 63)


if __name__ == "__main__":
    unittest.main()
