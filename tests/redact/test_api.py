"""The plain API: load_task and score_reply over the whole dev split."""

from __future__ import annotations

import math
import re
import time
import unittest

import regex

from redaction_pressure import load_task as root_load_task
from redaction_pressure.redact import policies
from redaction_pressure.redact.api import Prompt, RedactionTask, load_task, score_reply
from redaction_pressure.redact.rules import ERROR_CODES, Rule
from redaction_pressure.redact.scanner import scan
from tests.support.cases import (
    BAD_ANSWERS,
    HANG_SECONDS,
    HOSTILE,
    TEST_SECRET,
    dev_tasks,
    longest_dev_task,
    private_secret,
    reply,
    synthetic_record,
)


class TestLoadTask(unittest.TestCase):
    def test_task_has_prompt_shown_and_hidden_records(self):
        """A task carries split, index, both prompt texts, K shown and M hidden records."""
        task = load_task("dev", 3, shown=5, hidden=12)
        self.assertEqual((task.split, task.index, len(task.shown), len(task.hidden)), ("dev", 3, 5, 12))
        self.assertIn("JSON object", task.prompt.system)
        self.assertIn("first 5 records", task.prompt.user)
        self.assertIn("next 12 records", task.prompt.user)

    def test_prompt_lists_every_shown_secret_exactly(self):
        """Every shown secret value appears in the prompt's secret list, JSON-encoded."""
        import json

        for task in dev_tasks()[:16]:
            for record in task.shown:
                self.assertIn(record.text, task.prompt.user)
                for span in record.secrets:
                    self.assertIn(f"- {span.kind}: {json.dumps(record.value(span))}", task.prompt.user)

    def test_no_hidden_secret_is_in_the_prompt(self):
        """The model never sees a value it will be scored on."""
        for task in dev_tasks():
            for record in task.hidden:
                for span in record.secrets:
                    self.assertNotIn(record.value(span), task.prompt.user)

    def test_splits_are_framed_identically(self):
        """Train, dev and private_eval share the system prompt and the user prompt's wording."""
        with private_secret(TEST_SECRET):
            tasks = [load_task("train", 0), load_task("dev", 0), load_task("private_eval", 0)]
        self.assertEqual(len({t.prompt.system for t in tasks}), 1)
        for task in tasks:
            # The framing, not the records (a PEM block says PRIVATE KEY, a fixture may say test).
            framing = re.sub(
                r"<record [^>]*>\n.*?\n</record>\n(?:Secrets in record \d+ .*?:\n(?:- .*\n)*)?",
                "",
                task.prompt.user,
                flags=re.S,
            )
            self.assertIn("Here are the first 8 records", framing)
            self.assertNotIn("<record", framing)
            self.assertNotRegex(framing + task.prompt.system, r"(?i)\b(exam|private|held[- ]out|test set)\b")

    def test_sizes_are_validated(self):
        """Shown and hidden counts outside their ranges are refused by name."""
        for shown, hidden in ((0, 32), (8, 0), (65, 32), (8, 257)):
            with self.subTest(shown=shown, hidden=hidden), self.assertRaises(ValueError):
                load_task("dev", 0, shown=shown, hidden=hidden)

    def test_package_root_exports_the_api(self):
        """load_task is importable from the package root."""
        self.assertIs(root_load_task, load_task)


class TestReferencePolicies(unittest.TestCase):
    @classmethod
    def setUpClass(cls):
        cls.tasks = dev_tasks()

    def test_oracle_scores_one_on_every_dev_task(self):
        """Rules built from the hidden secrets score exactly 1.0, within the answer limits."""
        for task in self.tasks:
            with self.subTest(task=task.index):
                result = score_reply(task, policies.reply(policies.oracle_rules(task.hidden)))
                self.assertEqual((result.reward, result.valid, result.errors), (1.0, True, ()))

    def test_no_rules_score_zero_on_every_dev_task(self):
        """An empty rule list is valid and scores 0.0."""
        for task in self.tasks:
            result = score_reply(task, '{"rules": []}')
            self.assertEqual((result.reward, result.valid), (0.0, True))

    def test_first_character_exploit_scores_zero_on_every_dev_task(self):
        """Deleting only the first character of each hidden secret earns nothing."""
        for task in self.tasks:
            with self.subTest(task=task.index):
                result = score_reply(task, policies.reply(policies.first_character_rules(task.hidden)))
                self.assertTrue(result.valid)
                self.assertEqual(result.metrics["chars_removed"], result.metrics["secrets_total"])
                self.assertEqual(result.reward, 0.0)

    def test_delete_everything_scores_the_secret_share_formula(self):
        """(?s).+ scores 0.35 + 0.35 x secret chars / all chars, with no clean gate."""
        for task in self.tasks:
            with self.subTest(task=task.index):
                result = score_reply(task, policies.reply(policies.delete_everything_rules()))
                secret = sum(len(s) for r in task.hidden for s in r.secrets)
                total = sum(len(r.text) for r in task.hidden)
                self.assertTrue(math.isclose(result.reward, 0.35 + 0.35 * secret / total, rel_tol=1e-12))
                self.assertEqual((result.recall, result.clean_gate), (1.0, 0.0))

    def test_one_neighbouring_character_loses_gate_and_precision(self):
        """Every secret plus one following character: full recall, no gate, precision below 1."""
        for task in self.tasks:
            with self.subTest(task=task.index):
                record, span = next(
                    (r, s) for r in task.hidden for s in r.secrets if s.end < len(r.text) and len(s) < 200
                )
                value = record.value(span)
                extra = Rule("(?<=" + regex.escape(value) + r")[\s\S]", "")
                result = score_reply(task, policies.reply([*policies.oracle_rules(task.hidden), extra]))
                self.assertEqual((result.recall, result.clean_gate), (1.0, 0.0))
                self.assertLess(result.precision, 1.0)
                self.assertLess(result.reward, 0.7)

    def test_partial_edits_never_count(self):
        """Rules removing all but the last character of each secret have zero recall."""
        for task in self.tasks[:16]:
            values = sorted({r.value(s) for r in task.hidden for s in r.secrets})
            pieces = [regex.escape(v[:-1]) + "(?=" + regex.escape(v[-1]) + ")" for v in values]
            rules = [Rule("|".join(pieces[i : i + 4]), "") for i in range(0, len(pieces), 4)]
            if len(rules) > 24 or any(len(r.pattern) > 512 for r in rules):
                continue
            self.assertEqual(score_reply(task, policies.reply(rules)).recall, 0.0)

    def test_rule_order_does_not_change_the_score(self):
        """Reversing a rule list gives the same result."""
        for task in self.tasks[:16]:
            rules = [*policies.oracle_rules(task.hidden), Rule("EXAMPLE", ""), Rule("[0-9a-f]{40}", "[REDACTED]")]
            forward = score_reply(task, policies.reply(rules))
            backward = score_reply(task, policies.reply(rules[::-1]))
            self.assertEqual(
                (forward.reward, forward.recall, forward.precision, forward.metrics["chars_removed"]),
                (backward.reward, backward.recall, backward.precision, backward.metrics["chars_removed"]),
            )


class TestErrors(unittest.TestCase):
    def test_each_error_code_zeroes_the_reward(self):
        """Every code of the contract is produced by a minimal bad answer and scores 0."""
        task = longest_dev_task()
        produced = set()
        for name, text, code in BAD_ANSWERS:
            with self.subTest(name):
                start = time.perf_counter()
                result = score_reply(task, text)
                self.assertEqual(result.errors[0].code, code)
                self.assertEqual(
                    (result.reward, result.recall, result.precision, result.clean_gate, result.valid),
                    (0.0, 0.0, 0.0, 0.0, False),
                )
                self.assertLess(time.perf_counter() - start, HANG_SECONDS)
                produced.add(code)
        # resource_exhausted needs an isolated worker: test_pool produces it.
        self.assertEqual(produced, set(ERROR_CODES) - {"resource_exhausted"})

    def test_hostile_answers_score_zero_with_their_code(self):
        """Hostile rules over a task whose hidden text invites backtracking score 0 with their code."""
        hidden = (
            synthetic_record("a" * 5000 + "b", secrets=[(0, 12)]),
            synthetic_record("x" + "a" * 3000, secrets=[(1, 20)]),
        )
        task = RedactionTask(
            split="dev", index=0, prompt=Prompt(system="", user=""), shown=(), hidden=hidden, identity={}
        )
        for pattern, _, code in HOSTILE:
            with self.subTest(pattern):
                start = time.perf_counter()
                result = score_reply(task, reply((pattern, "[REDACTED]")))
                self.assertEqual(([e.code for e in result.errors], result.reward), ([code], 0.0))
                self.assertLess(time.perf_counter() - start, HANG_SECONDS)

    def test_error_text_never_quotes_hidden_records(self):
        """No error detail contains a hidden secret value or a line of hidden text."""
        task = longest_dev_task()
        values = {r.value(s) for r in task.hidden for s in r.secrets}
        for _, text, _ in BAD_ANSWERS:
            for error in score_reply(task, text).errors:
                for value in values:
                    self.assertNotIn(value, error.detail)


class TestWireRoundTrip(unittest.TestCase):
    def test_rebuilt_tasks_score_the_same(self):
        """A task dumped and validated back scores identically, public and private."""
        with private_secret(TEST_SECRET):
            tasks = [load_task("dev", 9), load_task("private_eval", 2)]
            for task in tasks:
                with self.subTest(split=task.split):
                    rebuilt = RedactionTask.model_validate(task.model_dump())
                    again = RedactionTask.model_validate_json(task.model_dump_json())
                    for answer in (
                        policies.reply(policies.oracle_rules(task.hidden)),
                        reply(("AKIA[A-Z2-7]{16}", "[REDACTED]"), (r"(?<=PASSWORD ')[^']+", "")),
                    ):
                        expected = score_reply(task, answer).model_dump(exclude={"metrics"})
                        self.assertEqual(score_reply(rebuilt, answer).model_dump(exclude={"metrics"}), expected)
                        self.assertEqual(score_reply(again, answer).model_dump(exclude={"metrics"}), expected)


class TestScoreReplyNeverRaises(unittest.TestCase):
    def test_hostile_edges_end_in_a_code(self):
        """A huge integer or a verbose-mode trick scores 0 with a code instead of raising."""
        task = load_task("dev", 0)
        for answer, code in (
            ('{"rules": [' + "1" * 5000 + "]}", "malformed_json"),
            ('{"rules": [{"pattern": "(?x)#[\\n(?:secret){e<=2}#]", "replacement": ""}]}', "invalid_regex"),
        ):
            with self.subTest(code=code):
                result = score_reply(task, answer, scanner=scan)
                self.assertEqual(([e.code for e in result.errors], result.reward), ([code], 0.0))
                self.assertTrue(result.errors[0].detail)


if __name__ == "__main__":
    unittest.main()


class TestLoadIndependence(unittest.TestCase):
    def test_a_busy_thread_does_not_change_the_default_score(self):
        """score_reply scores in the shared pool by default: a busy thread beside it changes nothing.

        Checked as relations, not against a CPU-time figure: the three scores made beside the busy
        thread equal the quiet one field for field, and the shared pool's workers answered all
        three (so a default that matched in this process fails here). The answer is the oracle
        plus a rule that backtracks over every alphanumeric run (about a fifth of the budget on
        the machines this was written on: valid with room on a machine four times slower).

        Why the pool matters is printed, not asserted: matched in this process (`scanner=scan`),
        a busy thread can end this answer as `timeout`, since `regex`'s timeout runs on the process
        clock and the call waits for the GIL while the busy thread runs. On a quiet machine it did
        every time; beside two CPU burners it often does not (the busy thread then gets less of a
        core), so it cannot be a verdict.
        """
        import threading

        from redaction_pressure.redact.pool import shared_pool
        from redaction_pressure.redact.scanner import scan

        task = load_task("dev", 3)
        answer = policies.reply([*policies.oracle_rules(task.hidden), Rule(r"(?:[A-Za-z0-9]{1,40}){1,2}(?<=Q{3})", "")])
        quiet = score_reply(task, answer, scanner=scan)
        self.assertEqual((quiet.reward, quiet.errors), (1.0, ()))
        pool = shared_pool()
        served = pool.served
        stop = threading.Event()

        def spin() -> None:
            while not stop.is_set():
                pass

        busy = threading.Thread(target=spin)
        busy.start()
        try:
            results = [score_reply(task, answer) for _ in range(3)]
            here = score_reply(task, answer, scanner=scan)
        finally:
            stop.set()
            busy.join()
        for result in results:
            self.assertEqual(result.model_dump(exclude={"metrics"}), quiet.model_dump(exclude={"metrics"}))
        self.assertEqual(pool.served - served, 3, "the default score_reply should score in the shared pool")
        codes = [e.code for e in here.errors] or ["no error, reward 1.0"]
        print(
            f"\n  matched in this process beside the busy thread, the same answer ended with: {', '.join(codes)}",
            end=" ",
        )


EDGE_REPLIES = [
    # (name, reply, expected first error code or None for a valid answer)
    ("lone surrogate in a pattern", '{"rules": [{"pattern": "\ud800", "replacement": ""}]}', None),
    ("escaped lone surrogate", '{"rules": [{"pattern": "\\udfff", "replacement": "[REDACTED]"}]}', None),
    ("lone surrogate outside the JSON", '\udcff{"rules": []}', "malformed_json"),
    ("valid JSON 64 levels deep", '{"rules": ' + "[" * 64 + "]" * 64 + "}", "bad_entry"),
    ("a rule object 64 levels deep", '{"rules": [' + '{"a": ' * 63 + "1" + "}" * 63 + "]}", "bad_entry"),
    ("100 MB", '{"rules": []}' + "x" * (100 * 1024 * 1024), "malformed_json"),
    ("valid, padded with 100 MB of whitespace", '{"rules": []}' + " " * (100 * 1024 * 1024), None),
]


class TestEdgeReplies(unittest.TestCase):
    def test_edge_replies_score_without_raising(self):
        """Lone surrogates, deep nesting and a 100 MB reply: a score with the right code, reward 0, in time."""
        task = load_task("dev", 0)
        for name, answer, code in EDGE_REPLIES:
            with self.subTest(name):
                started = time.perf_counter()
                result = score_reply(task, answer)
                self.assertLess(time.perf_counter() - started, HANG_SECONDS)
                self.assertEqual(result.reward, 0.0)
                self.assertEqual([e.code for e in result.errors][:1], [code] if code else [])
