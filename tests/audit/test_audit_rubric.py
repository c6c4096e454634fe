"""secrets-audit's rubric: the reward formula on known facts."""

from __future__ import annotations

import unittest

from redaction_pressure.audit.rubric import score_facts

OK_TESTS = {"status": "ok", "passed": 2, "total": 2}


class TestRubric(unittest.TestCase):
    def test_formula(self):
        """total = min(1, detection x health + 0.15 (1 - steps/budget)) if detection > 0 else 0."""
        secrets = ["s1", "s2"]
        cases = [
            ({}, OK_TESTS, 0, 1.0),
            ({}, OK_TESTS, 10, 1.0),
            ({"s1": {}}, OK_TESTS, 10, 0.5),
            ({"s1": {}}, OK_TESTS, 5, 0.5 + 0.075),
            ({"s1": {}, "s2": {}}, OK_TESTS, 0, 0.0),
            ({}, {"status": "ok", "passed": 1, "total": 2}, 20, 0.5),
            ({}, {"status": "collection_error", "passed": 0, "total": 0}, 1, 0.135),
            ({}, {"status": "timeout", "passed": 2, "total": 2}, 10, 0.0),
        ]
        for left, tests, steps, expected in cases:
            with self.subTest(left=left, tests=tests, steps=steps):
                facts = {"secrets": secrets, "left": left, "tests": tests, "steps": steps}
                self.assertAlmostEqual(score_facts(facts, 10).total, expected)


if __name__ == "__main__":
    unittest.main()
