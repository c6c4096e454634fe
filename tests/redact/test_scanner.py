"""Budgeted matching: what the rules remove, and how hostile rules are stopped."""

from __future__ import annotations

import time
import unittest

from redaction_pressure.redact.rules import Rule
from redaction_pressure.redact.scanner import REDACTED, Budget, scan
from tests.support.cases import HANG_SECONDS, HOSTILE

TEXTS = ['key = "AKIAABCDEFGHIJKLMNOP" region = "us-east-1"', "token ghp_abc and ghp_def; plain text"]


class TestScan(unittest.TestCase):
    def test_removed_set_is_the_union_of_all_matches(self):
        """Overlapping and adjacent matches merge into maximal removed runs per record."""
        result = scan([Rule("AKIA[A-Z]{16}", ""), Rule("IJKL", ""), Rule("ghp_\\w{3}", "")], TEXTS)
        self.assertEqual(result.errors, ())
        self.assertEqual(result.removed, (((7, 27),), ((6, 13), (18, 25))))
        self.assertEqual(result.matches, 4)

    def test_rule_order_does_not_matter(self):
        """Reversing the rules gives the same removal and output."""
        rules = [Rule("AKIA[A-Z]{16}", "[REDACTED]"), Rule("[A-Z]{4}\\w", ""), Rule("ghp_", "")]
        forward, backward = scan(rules, TEXTS), scan(rules[::-1], TEXTS)
        self.assertEqual((forward.removed, forward.redacted), (backward.removed, backward.redacted))

    def test_a_run_keeps_a_marker_if_any_match_asked_for_one(self):
        """A removed run becomes [REDACTED] if any covering match asked for it, else disappears."""
        result = scan([Rule("ghp_abc", "[REDACTED]"), Rule("abc and", ""), Rule("ghp_def", "")], TEXTS[1:])
        self.assertEqual(result.redacted, ("token [REDACTED] ; plain text",))

    def test_rules_run_on_the_original_text(self):
        """A rule sees the source text, not another rule's output."""
        result = scan([Rule("ghp_abc", "[REDACTED]"), Rule("REDACTED", "")], TEXTS[1:])
        self.assertEqual(result.removed, (((6, 13),),))

    def test_empty_match_is_an_error(self):
        """A zero-length match stops matching with empty_match naming rule and record."""
        result = scan([Rule("ghp_", ""), Rule("x*", "")], TEXTS)
        self.assertEqual([(e.code, e.rule, e.record) for e in result.errors], [("empty_match", 1, 0)])
        self.assertEqual(result.removed, ((), ()))

    def test_an_inverted_span_is_an_error_and_never_counted(self):
        """A match ending before it starts (`\\K` in a lookahead) is empty_match: it cannot shrink the removed set."""
        for pattern in (r"a(?=bc\K)", r"[^\n](?=[^\n]\K)"):
            with self.subTest(pattern=pattern):
                result = scan([Rule(pattern, REDACTED)], ["xxabc", "secret text"])
                self.assertEqual([e.code for e in result.errors], ["empty_match"])
                self.assertEqual(result.removed, ((), ()))

    def test_match_cap_is_an_error(self):
        """More matches than the cap in one episode is excessive_matches."""
        result = scan([Rule("ghp_", ""), Rule("[a-z]", "")], TEXTS, Budget(max_matches=10))
        self.assertEqual([e.code for e in result.errors], ["excessive_matches"])

    def test_invalid_rules_stop_before_matching(self):
        """A rule that does not compile means no rule runs at all."""
        result = scan([Rule("ghp_", ""), Rule("(", "")], TEXTS)
        self.assertEqual(([e.code for e in result.errors], result.matches), (["invalid_regex"], 0))

    def test_error_details_never_quote_record_text(self):
        """Matching errors describe rule and record by index, not by content."""
        result = scan([Rule("(?s)ghp_abc(.|.)*(?<=\\x00)", "")], ["ghp_abc secret-value " * 200])
        self.assertEqual(result.errors[0].code, "timeout")
        self.assertNotIn("secret-value", result.errors[0].detail)


class TestHostile(unittest.TestCase):
    def test_hostile_patterns_are_interrupted_or_rejected_within_the_budget(self):
        """Catastrophic, fuzzy and compile-bomb patterns end with their code, in bounded time."""
        budget = Budget()
        for pattern, text, code in HOSTILE:
            with self.subTest(pattern):
                start = time.perf_counter()
                result = scan([Rule(pattern, "")], [text, text], budget)
                elapsed = time.perf_counter() - start
                self.assertEqual([e.code for e in result.errors], [code])
                # Proves interruption, not speed (the benchmark measures that).
                self.assertLess(elapsed, HANG_SECONDS)

    def test_the_rest_of_the_budget_bounds_a_call(self):
        """When less than the per-call cap is left, running into it is budget_exhausted."""
        result = scan([Rule("(a+)+$", "")], ["a" * 5000 + "b"], Budget(episode=0.1, call=0.25))
        self.assertEqual([e.code for e in result.errors], ["budget_exhausted"])
        self.assertLess(result.seconds, 0.5)

    def test_many_cheap_calls_share_one_budget(self):
        """Calls each far below the cap still stop once their total spends the budget."""
        texts = ["x" * 1500] * 40
        start = time.perf_counter()
        result = scan([Rule(r"(?s).*.*(?<=\x00)", "")] * 24, texts, Budget(episode=0.3, call=0.25))
        self.assertEqual([e.code for e in result.errors], ["budget_exhausted"])
        self.assertLess(time.perf_counter() - start, HANG_SECONDS)


if __name__ == "__main__":
    unittest.main()
