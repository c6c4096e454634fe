"""The reward: recall, precision and the clean gate over removed characters."""

from __future__ import annotations

import unittest

from redaction_pressure.redact.rubric import REWARD_SCHEMA_VERSION, WEIGHTS, grade
from tests.support.cases import synthetic_record

# "id=SECRET1 k=SECRET22 note=DECOY"; secrets at [3, 10) and [13, 21), decoy at [27, 32).
RECORD = synthetic_record("id=SECRET1 k=SECRET22 note=DECOY", secrets=[(3, 10), (13, 21)], decoys=[(27, 32)])


class TestGrade(unittest.TestCase):
    def test_removing_exactly_the_secrets_scores_one(self):
        """All secrets fully removed and nothing else: recall, precision and gate are 1."""
        g = grade([RECORD], [[(3, 10), (13, 21)]], valid=True)
        self.assertEqual((g.recall, g.precision, g.clean_gate, g.reward), (1.0, 1.0, 1.0, 1.0))

    def test_a_partial_edit_earns_nothing(self):
        """Removing all but one character of a secret does not count it, and costs precision."""
        g = grade([RECORD], [[(3, 10), (13, 20)]], valid=True)
        self.assertEqual(g.recall, 0.5)
        self.assertAlmostEqual(g.precision, 7 / 14)
        self.assertEqual(g.clean_gate, 0.0)

    def test_one_extra_character_closes_the_gate(self):
        """A neighbouring character removed with the secrets keeps recall but loses gate and precision."""
        g = grade([RECORD], [[(3, 11), (13, 21)]], valid=True)
        self.assertEqual((g.recall, g.clean_gate), (1.0, 0.0))
        self.assertAlmostEqual(g.precision, 15 / 16)

    def test_touching_a_decoy_is_counted(self):
        """A removed decoy character is a touched decoy and closes the gate."""
        g = grade([RECORD], [[(3, 10), (13, 21), (30, 31)]], valid=True)
        self.assertEqual((g.metrics["decoys_touched"], g.clean_gate), (1.0, 0.0))

    def test_nothing_removed_scores_zero(self):
        """No removal: recall 0, precision 0 (not undefined), reward 0."""
        g = grade([RECORD], [[]], valid=True)
        self.assertEqual((g.recall, g.precision, g.clean_gate, g.reward), (0.0, 0.0, 0.0, 0.0))

    def test_an_invalid_episode_counts_nothing(self):
        """With an error, even a perfect removal scores 0 on every component."""
        g = grade([RECORD], [[(3, 10), (13, 21)]], valid=False)
        self.assertEqual((g.recall, g.precision, g.clean_gate, g.reward, g.valid), (0.0, 0.0, 0.0, 0.0, False))
        self.assertEqual(g.metrics["validity"], 0.0)

    def test_reward_is_the_weighted_sum(self):
        """reward = 0.35 recall + 0.35 precision + 0.30 gate."""
        g = grade([RECORD], [[(3, 10), (13, 20)]], valid=True)
        self.assertAlmostEqual(g.reward, 0.35 * g.recall + 0.35 * g.precision + 0.30 * g.clean_gate)

    def test_metrics_report_per_kind_counts(self):
        """Metrics carry totals and removed counts, per secret kind on every episode (0 when absent)."""
        g = grade([RECORD], [[(3, 10)]], valid=True)
        self.assertEqual(g.metrics["secrets_total"], 2.0)
        self.assertEqual(g.metrics["secrets_removed"], 1.0)
        self.assertEqual(g.kinds, {"generic_secret": (1, 2)})
        self.assertEqual((g.metrics["all_removed_generic_secret"], g.metrics["all_removed_openai_key"]), (0.0, 1.0))
        self.assertFalse(any(name.startswith(("secrets_generic", "removed_")) for name in g.metrics))
        self.assertFalse(any(name.startswith("recall_") for name in g.metrics))
        self.assertEqual(g.metrics["chars_removed"], 7.0)

    def test_schema_is_pinned(self):
        """The reward schema version and weights change only deliberately."""
        self.assertEqual(
            (REWARD_SCHEMA_VERSION, WEIGHTS), ("5", {"recall": 0.35, "precision": 0.35, "clean_gate": 0.30})
        )


if __name__ == "__main__":
    unittest.main()
