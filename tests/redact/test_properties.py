"""Invariants of scanning and reward, checked on generated inputs (hypothesis)."""

from __future__ import annotations

import itertools
import unittest

import regex
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from redaction_pressure.corpus import stream
from redaction_pressure.redact import policies
from redaction_pressure.redact.api import Prompt, RedactionTask, score_reply
from redaction_pressure.redact.rubric import grade
from redaction_pressure.redact.rules import Rule
from redaction_pressure.redact.scanner import scan
from redaction_pressure.spans import Record, Span

SETTINGS = settings(max_examples=120, deadline=None, suppress_health_check=[HealthCheck.too_slow])
ALPHABET = 'ab=" Kx9_'
# Small, fast patterns over ALPHABET; none can match the empty string.
PATTERNS = st.sampled_from(
    ["a", "b+", "[ab]{2}", "K", "x9", '"[^"]+"', "a|b", "=", r"\w+", " ", "K[ab_]{1,3}", "[^ ]{3}"]
)


@st.composite
def records(draw) -> Record:
    """A short text with some disjoint secret spans and one optional decoy."""
    text = draw(st.text(alphabet=ALPHABET, min_size=1, max_size=60))
    cuts = sorted(set(draw(st.lists(st.integers(0, len(text)), max_size=8))))
    pairs = [(a, b) for a, b in zip(cuts[::2], cuts[1::2], strict=False) if a < b]
    secrets = tuple(Span(start=a, end=b, kind=draw(st.sampled_from(["k1", "k2"]))) for a, b in pairs)
    return Record(text=text, secrets=secrets, decoys=(), family="generated")


def runs_of(chars: set[int]) -> list[tuple[int, int]]:
    """Maximal runs of a character set, as the scanner reports removed text."""
    out: list[tuple[int, int]] = []
    for i in sorted(chars):
        if out and out[-1][1] == i:
            out[-1] = (out[-1][0], i + 1)
        else:
            out.append((i, i + 1))
    return out


def brute_force(record: Record, removed: set[int]) -> tuple[float, float]:
    full = [s for s in record.secrets if set(range(s.start, s.end)) <= removed]
    recall = len(full) / len(record.secrets) if record.secrets else 0.0
    kept = set().union(*(set(range(s.start, s.end)) for s in full)) if full else set()
    precision = len(removed & kept) / len(removed) if removed else 0.0
    return recall, precision


def task_of(hidden: tuple[Record, ...]) -> RedactionTask:
    return RedactionTask(split="dev", index=0, prompt=Prompt(system="", user=""), shown=(), hidden=hidden, identity={})


class TestGradeProperties(unittest.TestCase):
    @SETTINGS
    @given(records(), st.data())
    def test_recall_and_precision_equal_the_brute_force_sets(self, record, data):
        """Grading maximal runs agrees with a character-set computation of recall and precision."""
        removed = set(data.draw(st.sets(st.integers(0, len(record.text) - 1))))
        g = grade([record], [runs_of(removed)], valid=True)
        recall, precision = brute_force(record, removed)
        self.assertAlmostEqual(g.recall, recall, places=12)
        self.assertAlmostEqual(g.precision, precision, places=12)
        self.assertGreaterEqual(g.reward, 0.0)
        self.assertLessEqual(g.reward, 1.0)

    @SETTINGS
    @given(records(), st.data())
    def test_a_partial_edit_never_counts(self, record, data):
        """Removing all but at least one character of a secret never counts it as removed."""
        if not record.secrets:
            return
        target = data.draw(st.sampled_from(record.secrets))
        spared = data.draw(st.integers(target.start, target.end - 1))
        removed = set(range(len(record.text))) - {spared}
        g = grade([record], [runs_of(removed)], valid=True)
        self.assertLess(g.metrics["secrets_removed"], len(record.secrets))
        self.assertEqual(g.clean_gate, 0.0)

    @SETTINGS
    @given(records(), st.data())
    def test_removing_non_secret_characters_never_raises_the_reward(self, record, data):
        """Adding removals outside every secret cannot increase the reward."""
        secret_chars = set().union(*(set(range(s.start, s.end)) for s in record.secrets)) if record.secrets else set()
        others = sorted(set(range(len(record.text))) - secret_chars)
        base = set(data.draw(st.sets(st.integers(0, len(record.text) - 1))))
        extra = set(data.draw(st.sets(st.sampled_from(others)))) if others else set()
        before = grade([record], [runs_of(base)], valid=True).reward
        after = grade([record], [runs_of(base | extra)], valid=True).reward
        self.assertLessEqual(after, before + 1e-12)


class TestScanProperties(unittest.TestCase):
    @SETTINGS
    @given(
        st.lists(records(), min_size=1, max_size=3),
        st.lists(st.tuples(PATTERNS, st.sampled_from(["", "[REDACTED]"])), max_size=5),
        st.randoms(use_true_random=False),
    )
    def test_scan_removes_the_union_of_matches_whatever_the_rule_order(self, hidden, rules, rng):
        """The removed set is the union of every rule's matches, and permuting rules changes nothing."""
        rules = [Rule(p, r) for p, r in rules]
        texts = [record.text for record in hidden]
        result = scan(rules, texts)
        self.assertEqual(result.errors, ())
        expected = []
        for text in texts:
            chars = {i for rule in rules for m in regex.finditer(rule.pattern, text) for i in range(*m.span())}
            expected.append(tuple(runs_of(chars)))
        self.assertEqual(result.removed, tuple(expected))
        shuffled = list(rules)
        rng.shuffle(shuffled)
        again = scan(shuffled, texts)
        self.assertEqual((again.removed, again.redacted), (result.removed, result.redacted))

    @SETTINGS
    @given(
        st.lists(records(), min_size=1, max_size=3),
        st.lists(st.tuples(PATTERNS, st.sampled_from(["", "[REDACTED]"])), max_size=6),
    )
    def test_reward_stays_in_the_unit_interval(self, hidden, rules):
        """Any valid rule set scores within [0, 1], and 1 only with the clean gate."""
        result = score_reply(task_of(tuple(hidden)), policies.reply([Rule(p, r) for p, r in rules]))
        self.assertGreaterEqual(result.reward, 0.0)
        self.assertLessEqual(result.reward, 1.0)
        if result.reward == 1.0:
            self.assertEqual(result.clean_gate, 1.0)


class TestRuleProperties(unittest.TestCase):
    @SETTINGS
    @given(
        st.lists(records(), min_size=1, max_size=3),
        st.lists(st.tuples(PATTERNS, st.sampled_from(["", "[REDACTED]"])), max_size=4),
        st.data(),
    )
    def test_adding_a_rule_that_removes_only_non_secret_text_never_raises_the_reward(self, hidden, rules, data):
        """A literal rule none of whose matches touches a secret cannot raise the reward."""
        record = data.draw(st.sampled_from(hidden))
        start = data.draw(st.integers(0, len(record.text) - 1))
        literal = record.text[start : start + data.draw(st.integers(1, 4))]
        pattern = regex.escape(literal)
        for text, rec in ((r.text, r) for r in hidden):
            for m in regex.finditer(pattern, text):
                if any(m.start() < s.end and s.start < m.end() for s in rec.secrets):
                    return  # this literal touches a secret somewhere: not the case under test
        task = task_of(tuple(hidden))
        base = [Rule(p, r) for p, r in rules]
        before = score_reply(task, policies.reply(base)).reward
        after = score_reply(task, policies.reply([*base, Rule(pattern, "")])).reward
        self.assertLessEqual(after, before + 1e-12)


class TestOracleProperty(unittest.TestCase):
    @settings(max_examples=40, deadline=None)
    @given(st.integers(0, 2**62), st.integers(1, 8), st.integers(1, 12))
    def test_the_oracle_scores_one_on_any_stream(self, seed, shown, hidden):
        """For any seed and sizes, rules built from the hidden secrets score exactly 1.0."""
        records_ = tuple(itertools.islice(stream(seed, shown), shown + hidden))
        task = task_of(records_[shown:])
        result = score_reply(task, policies.reply(policies.oracle_rules(task.hidden)))
        self.assertEqual((result.reward, result.errors), (1.0, ()))


if __name__ == "__main__":
    unittest.main()
