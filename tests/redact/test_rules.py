"""The answer: strict parsing of replies and validation of every rule."""

from __future__ import annotations

import json
import unittest

from redaction_pressure.redact.rules import (
    MAX_REPLY_CHARS,
    Rule,
    compile_rules,
    parse_reply,
)
from redaction_pressure.redact.static_check import static_problem
from tests.support.cases import BAD_ANSWERS, reply

PARSE_CODES = {"malformed_json", "bad_entry", "too_many_rules", "unsafe_replacement"}


class TestParseReply(unittest.TestCase):
    def test_a_plain_object_is_accepted(self):
        """A bare JSON object with valid rules parses to those rules, in order."""
        answer = parse_reply(reply(("AKIA[A-Z2-7]{16}", "[REDACTED]"), ("ghp_\\w{36}", "")))
        self.assertEqual(answer.errors, ())
        self.assertEqual(answer.rules, (Rule("AKIA[A-Z2-7]{16}", "[REDACTED]"), Rule("ghp_\\w{36}", "")))

    def test_a_single_json_fence_and_whitespace_are_accepted(self):
        """One ```json fence around the object, with surrounding whitespace, is allowed."""
        body = reply(("npm_[A-Za-z0-9]{36}", "[REDACTED]"))
        for text in (f"```json\n{body}\n```", f"\n  ```json\n{body}\n```  \n", f"  {body}\n"):
            with self.subTest(text=text[:12]):
                self.assertEqual(parse_reply(text).errors, ())

    def test_zero_rules_are_valid(self):
        """An empty rules list is a valid answer (it simply removes nothing)."""
        self.assertEqual(parse_reply('{"rules": []}'), parse_reply('```json\n{"rules": []}\n```'))
        self.assertEqual(parse_reply('{"rules": []}').errors, ())

    def test_other_fences_are_rejected(self):
        """A fence without the json tag, or text outside the fence, is malformed."""
        body = reply(("a", ""))
        for text in (f"```\n{body}\n```", f"```python\n{body}\n```", f"Rules:\n```json\n{body}\n```"):
            with self.subTest(text=text[:12]):
                self.assertEqual([e.code for e in parse_reply(text).errors], ["malformed_json"])

    def test_each_bad_answer_gets_its_code(self):
        """Every parse-level bad answer is rejected with its expected code and no rules."""
        for name, text, code in BAD_ANSWERS:
            if code not in PARSE_CODES:
                continue
            with self.subTest(name):
                answer = parse_reply(text)
                self.assertEqual(answer.errors[0].code, code)
                self.assertEqual(answer.rules, ())

    def test_entry_errors_name_each_rule_in_order(self):
        """Several bad entries give one error each, in order, naming the rule index."""
        text = json.dumps({"rules": [
            {"pattern": "ok", "replacement": ""},
            {"pattern": "a", "replacement": "\\1"},
            "nope",
            {"pattern": "", "replacement": ""},
        ]})  # fmt: skip
        errors = parse_reply(text).errors
        self.assertEqual(
            [(e.code, e.rule) for e in errors], [("unsafe_replacement", 1), ("bad_entry", 2), ("bad_entry", 3)]
        )
        for error in errors:
            self.assertTrue(error.detail.startswith(f"rule {error.rule}:"), error.detail)
            self.assertIsNone(error.record)

    def test_oversized_and_deeply_nested_replies_are_malformed(self):
        """A reply over the size limit or nested past the parser's depth is malformed, not a crash."""
        huge = '{"rules": [], "pad": "' + "x" * MAX_REPLY_CHARS + '"}'
        deep = "[" * 50_000 + "]" * 50_000
        for text in (huge, deep[:MAX_REPLY_CHARS]):
            with self.subTest(size=len(text)):
                self.assertEqual([e.code for e in parse_reply(text).errors], ["malformed_json"])

    def test_an_integer_past_the_int_string_limit_is_malformed(self):
        """An integer literal of more than 4,300 digits is malformed_json with a detail, not a ValueError."""
        for text in (
            '{"rules": [' + "1" * 5000 + "]}",
            '{"rules": [{"pattern": ' + "9" * 4301 + ', "replacement": ""}]}',
        ):
            with self.subTest(size=len(text)):
                (error,) = parse_reply(text).errors
                self.assertEqual(error.code, "malformed_json")
                self.assertIn("4300", error.detail)

    def test_non_text_reply_is_malformed(self):
        """A reply that is not a string is reported, not raised."""
        self.assertEqual(parse_reply(None).errors[0].code, "malformed_json")  # type: ignore[arg-type]

    def test_infinity_and_nan_are_rejected(self):
        """Non-standard JSON constants are malformed even where a value is otherwise ignored."""
        for constant in ("NaN", "Infinity", "-Infinity"):
            with self.subTest(constant):
                text = '{"rules": [{"pattern": "a", "replacement": ' + constant + "}]}"
                self.assertEqual(parse_reply(text).errors[0].code, "malformed_json")


class TestStaticProblem(unittest.TestCase):
    def test_budget_defeating_patterns_are_rejected(self):
        """Fuzzy matching and costly repeat bounds are refused before compilation."""
        for pattern in (
            "(?:AKIA){e<=3}", "abc{e}", "(?:ab){i<=1,d<=1}", "a{1001}", "a{2,5000}",
            "((a{1000}){1000}){100}", "(?:(?:a{101}){100})", "(?:x{100}y{2}){101}", "a{", "a{,}",
        ):  # fmt: skip
            with self.subTest(pattern):
                self.assertIsNotNone(static_problem(pattern))

    def test_the_system_prompt_states_the_limits_the_check_enforces(self):
        """A model is told every limit that makes a pattern invalid: the prompt's own example of a
        nested repeat past the product limit is refused, and the same shape under it passes."""
        import re

        from redaction_pressure.redact.prompt import SYSTEM_PROMPT
        from redaction_pressure.redact.static_check import MAX_REPEAT_BOUND, MAX_REPEAT_PRODUCT

        self.assertIn(f"repeat bounds above {MAX_REPEAT_BOUND}", SYSTEM_PROMPT)
        self.assertIn(f"multiply past {MAX_REPEAT_PRODUCT}", SYSTEM_PROMPT)
        (example,) = re.findall(r"such as (\(\?:x\{0,\d+\}\)\{0,\d+\})", SYSTEM_PROMPT)
        self.assertIsNotNone(static_problem(example))
        self.assertIsNone(static_problem("(?:x{0,100}){0,100}"))

    def test_ordinary_patterns_pass(self):
        """Escaped braces, classes, property escapes and modest bounds are fine."""
        for pattern in (
            r"\{\{ secrets\.\w+ \}\}", r"[{}]+x", r"\p{L}{3,10}", r"\x{41}{2}", r"a{2,5}", r"a{,3}",
            r"(?:[A-Z2-7]{16}){1,10}", r"(?<=password = \")[^\"]{8,64}", r"(?#comment {e<=1})AKIA",
            r"(?P<k>ghp_)[A-Za-z0-9]{36}", r"-----BEGIN[\s\S]{10,1000}?-----END",
        ):  # fmt: skip
            with self.subTest(pattern):
                self.assertIsNone(static_problem(pattern))

    def test_verbose_mode_hides_nothing(self):
        """In verbose mode comments, escaped '#', whitespace and '#' inside a class are read as regex reads them."""
        for pattern in (
            "(?x)#[\n(?:secret){e<=2}#]",  # a '[' in a comment does not open a class
            "(?x)#[\n(?:(?:x{1000}){1000})#]",
            "(?x)a {e<=1}", "(?x)(?: secret ) { e<=2 }", "(?x)a\n{e<=1}",  # whitespace before and inside a bound
            "(?x)a\\#{e<=1}", "(?x)a[#]{e<=1}",  # an escaped '#' and a '#' in a class are not comments
            "(?x)a{ 1001 }", "(?x)(?:(?:a{ 100 }) { 100 }){2}",
            "a(?x)#[\n(?:s){e<=1}#]",  # an unscoped (?x) later in the pattern makes all of it verbose
            "a#{e<=1}\n[(?x)]",  # a '(?x)' inside a class is no flag
        ):  # fmt: skip
            with self.subTest(pattern):
                self.assertIsNotNone(static_problem(pattern))

    def test_inline_flag_groups_switch_verbose_mode_for_their_contents(self):
        """(?x:...) is verbose inside, (?-x:...) is not; a hostile pattern in either is found."""
        for pattern in (
            "(?x:#[\n(?:s){e<=1}#])",
            "(?x)(?-x:a)#[\n(?:s){e<=1}#]",
            "(?x-i:#[\n(?:(?:x{1000}){1000})#])",
            "(?ix:a {e<=1})",
        ):
            with self.subTest(pattern):
                self.assertIsNotNone(static_problem(pattern))
        for pattern in (
            "(?x) AKIA  # the prefix {16} [chars\n [A-Z2-7]{16}",
            "(?x)a{2, 3}",
            "(?-x:a#[{]b)",
            "(?x: a b ){2}",
        ):
            with self.subTest(pattern):
                self.assertIsNone(static_problem(pattern))
                self.assertEqual(compile_rules([Rule(pattern, "")])[1], [])

    def test_the_parse_tree_check_sees_what_the_text_walk_might_miss(self):
        """Fuzzy matching anywhere in regex's own parse tree is refused (version 1 sets included)."""
        self.assertIsNotNone(static_problem("(?V1)[[a]--[b]](?:x){e<=1}"))
        self.assertIsNone(static_problem("(?V1)[[a-z]--[aeiou]]{2}"))

    def test_problems_say_where_and_why(self):
        """A rejection names the position and the limit."""
        self.assertIn("position 6", static_problem("(?:ab){e<=1}"))
        self.assertIn("exceeds 1000", static_problem("a{1001}"))
        self.assertIn("multiply to 100000", static_problem("((a{100}){100}){10}"))


class TestCompileRules(unittest.TestCase):
    def test_invalid_patterns_are_reported_per_rule(self):
        """Each rule that fails to compile yields invalid_regex naming its index."""
        _, errors = compile_rules([Rule("ok", ""), Rule("(unclosed", ""), Rule("a{e<=1}", ""), Rule(r"\L<x>", "")])
        self.assertEqual(
            [(e.code, e.rule) for e in errors], [("invalid_regex", 1), ("invalid_regex", 2), ("invalid_regex", 3)]
        )

    def test_valid_patterns_compile(self):
        """Valid rules compile to patterns, in order."""
        compiled, errors = compile_rules([Rule("a+", ""), Rule("(?i)b", "")])
        self.assertEqual(errors, [])
        self.assertEqual([p.pattern for p in compiled], ["a+", "(?i)b"])


if __name__ == "__main__":
    unittest.main()
