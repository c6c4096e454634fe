"""The hostile suite: answers a reward-hacking policy might send, scored the production way.

Every case goes through a scan pool (isolated workers), ends with its expected error
code (None: a valid answer that must simply not misbehave), scores 0 and finishes
within a bound. The bound is generous on purpose: it proves interruption, not speed
(`benchmarks/bench_scoring.py` measures that).
"""

from __future__ import annotations

import json
import time
import unittest

from redaction_pressure.redact.api import Prompt, RedactionTask, score_reply
from redaction_pressure.redact.pool import ScanPool
from tests.support.cases import EXHAUSTING, HANG_SECONDS, longest_dev_task, reply, synthetic_record

RUNS = (
    synthetic_record("a" * 5000 + "b", secrets=[(0, 16)]),
    synthetic_record("x" * 3000, secrets=[(0, 16)]),
    synthetic_record("word " * 2000 + "!", secrets=[(0, 4)]),
)
LETTERS = "|".join("abcdefghijklmnopqrstuvwxyz")

# (name, reply, hidden texts: "runs" or "dev", expected first error code or None)
CASES: list[tuple[str, str, str, str | None]] = [
    ("nested plus, anchored", reply(("(a+)+$", "")), "runs", "timeout"),
    ("overlapping alternation", reply(("(a|aa)+$", "")), "runs", "timeout"),
    ("optional alternation", reply(("(a|a?)+$", "")), "runs", "timeout"),
    ("repeated plus group", reply(("(?:a+){2,}$", "")), "runs", "timeout"),
    ("nested quantifiers on x", reply(("(x+x+)+y", "")), "runs", "timeout"),
    ("words then anchor", reply((r"(\w+\s?)+$", "")), "runs", "timeout"),
    ("dot-star repeated twelve times", reply(("(.*a){12}x", "")), "runs", "timeout"),
    ("exponential with hidden literal", reply((r"(?s)(.|.)*(?<=\x00)", "")), "dev", "timeout"),
    ("recursion", reply(("a(?R)?b", "")), "runs", "timeout"),
    ("lookbehind abuse", reply(("(?<=x(?:a|aa)+)b", "")), "runs", "timeout"),
    ("negative lookbehind abuse", reply(("(?<!x(?:a|aa)+)b", "")), "runs", "timeout"),
    # Linear per record, so no call nears the cap on any machine (a cubic `.*.*.*` came within
    # 1.4x of it on the longest dev record: `timeout` on a slower machine).
    ("many polynomial rules", reply(*[(EXHAUSTING, "")] * 24), "dev", "budget_exhausted"),
    ("huge repeat bound", reply(("a{100000}", "")), "runs", "invalid_regex"),
    ("repeat bound just over the limit", reply(("a{1001}", "")), "runs", "invalid_regex"),
    ("nested repeat bounds", reply(("(?:(?:a{100}){100}){2}", "")), "runs", "invalid_regex"),
    ("compile bomb", reply(("((a{1000}){1000}){100}", "")), "runs", "invalid_regex"),
    ("fuzzy matching", reply(("(?:AKIA){e<=3}", "")), "runs", "invalid_regex"),
    ("fuzzy edit costs", reply(("(?:ghp_){i<=1,d<=1,s<=1}", "")), "runs", "invalid_regex"),
    ("verbose comment hides fuzzy matching", reply(("(?x)#[\n(?:secret){e<=2}#]", "")), "runs", "invalid_regex"),
    ("verbose comment hides a compile bomb", reply(("(?x)#[\n(?:(?:x{1000}){1000})#]", "")), "runs", "invalid_regex"),
    ("verbose whitespace before a fuzzy bound", reply(("(?x)(?: secret ) { e<=2 }", "")), "runs", "invalid_regex"),
    ("verbose escaped hash then fuzzy", reply(("(?x)a\\#{e<=1}", "")), "runs", "invalid_regex"),
    ("verbose hash in a class then fuzzy", reply(("(?x)a[#]{e<=1}", "")), "runs", "invalid_regex"),
    ("late unscoped verbose flag", reply(("a(?x)#[\n(?:s){e<=1}#]", "")), "runs", "invalid_regex"),
    ("scoped verbose group", reply(("(?x:#[\n(?:(?:x{1000}){1000})#])", "")), "runs", "invalid_regex"),
    ("verbose switched off in a group", reply(("(?x)(?-x:a)#[\n(?:s){e<=1}#]", "")), "runs", "invalid_regex"),
    ("integer past the int-string limit", '{"rules": [' + "1" * 5000 + "]}", "dev", "malformed_json"),
    (
        "integer pattern past the limit",
        '{"rules": [{"pattern": ' + "7" * 4400 + ', "replacement": ""}]}',
        "dev",
        "malformed_json",
    ),
    ("giant alternation", reply((f"(?:{LETTERS})", "")), "runs", "excessive_matches"),
    ("match flood", reply(("(?s).", "[REDACTED]")), "dev", "excessive_matches"),
    ("empty-match flood: word boundary", reply((r"\b", "")), "dev", "empty_match"),
    ("empty-match flood: lookahead", reply(("(?=a)", "")), "runs", "empty_match"),
    ("empty-match flood: optional", reply(("a?", "")), "runs", "empty_match"),
    ("one-megabyte reply", '{"rules": [], "pad": "' + "x" * (1 << 20) + '"}', "dev", "malformed_json"),
    ("deeply nested JSON", "[" * 30_000 + "]" * 30_000, "dev", "malformed_json"),
    ("duplicate keys", '{"rules": [{"pattern": "a", "replacement": "", "replacement": ""}]}', "dev", "malformed_json"),
    ("NaN", '{"rules": NaN}', "dev", "malformed_json"),
    ("a thousand rules", reply(*[("AKIA", "")] * 1000), "dev", "too_many_rules"),
    ("capture expansion", reply(("(ghp_)\\w+", "\\g<0>")), "dev", "unsafe_replacement"),
    (
        "NUL bytes in a pattern",
        json.dumps({"rules": [{"pattern": "AKIA\u0000\u0000", "replacement": ""}]}),
        "dev",
        None,
    ),
    (
        "unusual Unicode in a pattern",
        json.dumps({"rules": [{"pattern": "\u202e\u0301\\p{Han}+\U0001f600", "replacement": ""}]}),
        "dev",
        None,
    ),
    ("lone surrogate in a pattern", '{"rules": [{"pattern": "\\ud800x", "replacement": ""}]}', "dev", None),
]


class TestHostileSuite(unittest.TestCase):
    @classmethod
    def setUpClass(cls):
        cls.pool = ScanPool(workers=2)
        dev = longest_dev_task()
        runs = RedactionTask(
            split="dev", index=0, prompt=Prompt(system="", user=""), shown=(), hidden=RUNS, identity={}
        )
        cls.tasks = {"dev": dev, "runs": runs}
        score_reply(runs, reply(("b", "")), scanner=cls.pool.scan)  # warm both the pool and imports

    @classmethod
    def tearDownClass(cls):
        cls.pool.close()

    def test_suite_is_large_enough(self):
        """At least 25 hostile cases, each with a distinct name."""
        self.assertGreaterEqual(len(CASES), 25)
        self.assertEqual(len({name for name, *_ in CASES}), len(CASES))

    def test_every_hostile_answer_scores_zero_with_its_code_in_bounded_time(self):
        """Each case ends with its code, reward 0, within the episode budget plus a margin.

        The budget is CPU time in the worker; the wall-clock bound only guards against a
        hang (benchmarks/bench_scoring.py measures the real worst case).
        """
        for name, text, texts, code in CASES:
            with self.subTest(name):
                start = time.perf_counter()
                result = score_reply(self.tasks[texts], text, scanner=self.pool.scan)
                elapsed = time.perf_counter() - start
                self.assertEqual(result.errors[0].code if result.errors else None, code)
                self.assertEqual(result.reward, 0.0)
                self.assertLess(elapsed, HANG_SECONDS)
        self.assertEqual(self.pool.replaced, 0, "no hostile case should need a worker killed")


if __name__ == "__main__":
    unittest.main()
