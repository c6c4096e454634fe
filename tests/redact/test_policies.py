"""Reference policies and the baseline ladder: what each policy does, and where it lands."""

from __future__ import annotations

import dataclasses
import functools
import json
import math
import unittest
from statistics import fmean

import regex

from redaction_pressure.corpus import CORPUS_VERSION, DIFFICULTIES, corpus_version
from redaction_pressure.redact import policies
from redaction_pressure.redact.api import RedactionTask, load_task, score_reply
from redaction_pressure.redact.baselines import LADDER, POLICIES, run_ladder
from redaction_pressure.redact.policies import constant, fitting, mining, reference
from redaction_pressure.redact.rules import MAX_PATTERN_CHARS, MAX_RULES, compile_rules
from redaction_pressure.splits import DEV_SIZE
from tests.support.cases import dev_tasks


@functools.cache
def _induced(text: str) -> tuple:
    return tuple(policies.induction_rules(text))


def induced(task: RedactionTask) -> list:
    """`policies.induction_rules(task.prompt.user)`, computed once per prompt text in this module
    (~0.3 CPU-s a task; `TestInduction` and `TestLadder` need the same dev tasks' rules, and
    `test_rules_depend_on_the_prompt_text_only` checks the rules depend on that text alone)."""
    return list(_induced(str(task.prompt.user)))


LADDER_ONCE = tuple(
    dataclasses.replace(policy, rules=induced) if policy.name == "induction" else policy for policy in LADDER
)
"""The ladder, its induction policy (`lambda t: policies.induction_rules(t.prompt.user)`) memoised by `induced`."""


def shown_as_hidden(task: RedactionTask) -> RedactionTask:
    """The same task, scored on the records the prompt showed."""
    return task.model_copy(update={"hidden": task.shown})


class TestBaselinePolicies(unittest.TestCase):
    @classmethod
    def setUpClass(cls):
        cls.tasks = dev_tasks()

    def test_every_policy_answers_within_the_limits(self):
        """Each ladder policy's rules fit the rule and pattern limits and compile."""
        for policy in LADDER:
            for task in self.tasks[:8]:
                with self.subTest(policy=policy.name, task=task.index):
                    rules = policy.rules(task)
                    self.assertLessEqual(len(rules), MAX_RULES)
                    self.assertTrue(all(len(r.pattern) <= MAX_PATTERN_CHARS for r in rules))
                    self.assertEqual(compile_rules(rules)[1], [])

    def test_literal_policy_memorises_but_does_not_generalise(self):
        """Exact shown values remove every short shown secret, and nothing of the hidden records."""
        for task in self.tasks[:16]:
            rules = policies.literal_rules(task.shown)
            on_shown = score_reply(shown_as_hidden(task), policies.reply(rules))
            short = [s for r in task.shown for s in r.secrets if len(regex.escape(r.value(s))) + 4 <= MAX_PATTERN_CHARS]
            self.assertEqual(on_shown.metrics["secrets_removed"], len(short))
            self.assertEqual(score_reply(task, policies.reply(rules)).reward, 0.0)

    def test_prefix_policy_uses_the_prompts_key_prefixes(self):
        """The prefix policy keeps known prefixes such as ghp_, sk_live_ (or rk_live_), xoxb- and AKIA."""
        seen = {rule.pattern.split("[", 1)[0] for task in self.tasks for rule in policies.prefix_rules(task.shown)}
        for prefix in ("ghp_", "xoxb\\-", "AKIA", "npm_", "glpat\\-", "github_pat_"):
            self.assertIn(prefix, seen)
        # Stripe's secret prefix is whichever the tasks drew (live, restricted or test).
        self.assertTrue(seen & {"sk_live_", "rk_live_", "sk_test_"})

    def test_scanner_rules_come_from_detect_secrets(self):
        """The scanner policy reads detect-secrets' patterns from the installed package."""
        import detect_secrets

        pieces = policies.scanner_pieces()
        self.assertGreater(len(pieces), 20)
        self.assertTrue(any("T3BlbkFJ" in p for p in pieces))
        self.assertTrue(detect_secrets.__file__)
        self.assertLessEqual(len(policies.scanner_rules()), MAX_RULES)

    def test_reported_group_becomes_lookarounds(self):
        """A pattern reporting a group inside context removes only the group."""
        self.assertEqual(reference._reported_part("://[a-z]+:([^@]+)@"), "(?<=://[a-z]+:)(?:[^@]+)(?=@)")
        for whole in ("(ghp|gho)_[A-Za-z0-9]{36}", "a(b)+c", "x(y)|z", "plain", "a(b)c(d)"):
            with self.subTest(whole):
                self.assertEqual(reference._reported_part(whole), whole)


class TestInduction(unittest.TestCase):
    @classmethod
    def setUpClass(cls):
        cls.tasks = dev_tasks()

    def test_rules_are_exact_on_the_shown_records(self):
        """On the records the prompt shows, induced rules remove exactly the listed secrets."""
        for task in self.tasks:
            with self.subTest(task=task.index):
                result = score_reply(shown_as_hidden(task), policies.reply(induced(task)))
                self.assertEqual(result.clean_gate, 1.0, result.metrics)

    def test_rules_depend_on_the_prompt_text_only(self):
        """The policy takes the user prompt's text: two tasks with the same prompt get the same rules."""
        task = self.tasks[3]
        self.assertEqual(policies.induction_rules(task.prompt.user), policies.induction_rules(str(task.prompt.user)))
        self.assertNotEqual(
            policies.induction_rules(task.prompt.user), policies.induction_rules(self.tasks[4].prompt.user)
        )


class TestConstant(unittest.TestCase):
    def test_committed_answer_was_fitted_on_this_corpus(self):
        """The committed constant answer names the corpus version it was fitted on, which is this one."""
        data = json.loads(constant.RULES_FILE.read_text())
        self.assertEqual(data["note"]["corpus_version"], CORPUS_VERSION)
        self.assertEqual(compile_rules(constant.constant_rules())[1], [])

    def test_each_level_has_an_answer_fitted_on_that_level(self):
        """Each difficulty level's committed constant names that level's corpus version and compiles."""
        for level in DIFFICULTIES:
            with self.subTest(level=level):
                data = json.loads(constant.rules_file(level).read_text())
                self.assertEqual(data["note"]["corpus_version"], corpus_version(level))
                self.assertEqual(compile_rules(constant.constant_rules(level))[1], [])

    def test_cross_record_atoms_find_a_sibling_key(self):
        """The fitter mines a backreference atom: a value whose key is named again later in the record."""
        text = 'def sync(path):\n    zorvex_api_key = "zx-live-AbCdEf0123456789"\n\ndef other():\n    x = os.environ.get("ZORVEX_API_KEY")\n'
        start = text.index("zx-live")
        pieces = [capture + sibling for capture, sibling in mining._siblings(text, start)]
        self.assertTrue(pieces)
        pattern = regex.compile(pieces[0] + r"[^\s\"]+")
        self.assertEqual([m.group() for m in pattern.finditer(text)], ["zx-live-AbCdEf0123456789"])
        self.assertEqual(
            [m.group() for m in pattern.finditer(text.replace('get("ZORVEX_API_KEY")', 'get("OTHER_KEY")'))], []
        )

    def test_world_knowledge_atoms_are_candidates_like_a_red_teams(self):
        """The fitter's pool holds a red team's generic atom: every key=value, escaped quotes too,
        skipping what general knowledge calls public or fake (anon JWTs, pk_ keys, placeholders,
        references, digit-free settings, EXAMPLE values, allowlisted lines)."""
        task = load_task("train", 0)
        pool = mining.mine([(task.shown, task.hidden)])
        for atom in mining.WORLD_KNOWLEDGE:
            self.assertIn(atom, pool)
        anon = "eyJhbGciOiJIUzI1NiJ9.eyJyb2xlIjoiYW5vbiJ9.c2lnbmF0dXJlMTIz"
        text = (
            '{"body": "{\\"zx_api_key\\": \\"zx-k-Ab12Cd34Ef56Gh78\\"}"}\n'
            "ZX_TOKEN=zx-u-9Xy8Wv7Ut6Sr5Qp4\n"
            f"ANON_KEY={anon}\nSTRIPE_PUBLISHABLE_KEY=pk_live_51Abc123def456\n"
            "STAGING_API_KEY=${ZX_API_KEY}\nTOKEN_ALGORITHM=HS256abcd\n"
            "EXAMPLE_KEY=AKIAIOSFODNN7EXAMPLE\nTEST_TOKEN=zx-t-1a2b3c4d5e6f7g8h  # pragma: allowlist secret\n"
        )
        found = [m.group() for m in regex.finditer(mining.WORLD_KNOWLEDGE[0], text)]
        self.assertEqual(found, ["zx-k-Ab12Cd34Ef56Gh78", "zx-u-9Xy8Wv7Ut6Sr5Qp4"])

    def test_fitting_selects_rules_that_help_on_train(self):
        """Fitting on a few train tasks gives valid rules that score above the empty answer there."""
        train = [load_task("train", i) for i in range(6)]
        rules = fitting.fit([(t.shown, t.hidden) for t in train])
        self.assertLessEqual(len(rules), MAX_RULES)
        self.assertEqual(compile_rules(rules)[1], [])
        self.assertGreater(sum(score_reply(t, policies.reply(rules)).reward for t in train) / len(train), 0.3)


class TestLadder(unittest.TestCase):
    @classmethod
    def setUpClass(cls):
        cls.tasks = dev_tasks()
        cls.rows = {row.policy: row for row in run_ladder(cls.tasks, LADDER_ONCE)}

    def test_reference_points_hold_over_the_dev_split(self):
        """Oracle 1.0; no rules, first-character and literal 0.0; delete-everything its formula."""
        rows = self.rows
        self.assertEqual((rows["oracle"].reward, rows["oracle"].clean_gate), (1.0, 1.0))
        for name in ("no_rules", "first_character", "literal"):
            self.assertEqual(rows[name].reward, 0.0, name)
        share = [
            sum(len(s) for r in t.hidden for s in r.secrets) / sum(len(r.text) for r in t.hidden) for t in self.tasks
        ]
        expected = sum(0.35 + 0.35 * x for x in share) / len(share)
        self.assertTrue(math.isclose(rows["delete_everything"].reward, expected, rel_tol=1e-12))

    def test_memorising_and_context_free_policies_leave_headroom(self):
        """No policy that ignores the task's prompt comes near 1.0 or earns the clean gate often; all stay valid."""
        for name, row in self.rows.items():
            self.assertEqual(row.valid, 1.0, name)
            if name not in ("oracle", "induction"):
                self.assertLessEqual(row.reward, 0.55, name)
                self.assertLess(row.clean_gate, 0.1, name)

    def test_the_best_constant_answer_scores_at_most_055_on_dev(self):
        """One answer fitted on train tasks and used unchanged scores <= 0.55 on dev: memorising templates is not enough."""
        self.assertLessEqual(self.rows["constant"].reward, 0.55)

    def test_reading_the_prompt_solves_the_tasks(self):
        """Rules induced from the prompt alone score >= 0.90 on dev and earn the clean gate on >= half the tasks."""
        row = self.rows["induction"]
        self.assertGreaterEqual(row.reward, 0.90)
        self.assertGreaterEqual(row.clean_gate, 0.5)

    def test_scanner_and_prefix_policies_earn_partial_credit(self):
        """Real detectors and key prefixes find some secrets: neither scores 0 nor 1."""
        for name in ("scanner", "prefix"):
            row = self.rows[name]
            self.assertTrue(row.available, row.note)
            self.assertGreater(row.recall, 0.1, name)
            self.assertGreater(row.reward, 0.1, name)


class TestLadderPerLevel(unittest.TestCase):
    """The issue-18 targets on each level's dev split: headroom and attainability."""

    @classmethod
    def setUpClass(cls):
        cls.tasks = {
            level: [load_task("dev", i, difficulty=level) for i in range(DEV_SIZE)]
            for level in ("easy", "hard", "expert")
        }
        ladder = [POLICIES["constant"]]  # the oracle is scored task by task in its own test
        cls.rows = {level: {row.policy: row for row in run_ladder(tasks, ladder)} for level, tasks in cls.tasks.items()}
        # Induction per task (the ladder keeps only means), scored once for both kinds of check.
        cls.induction = {
            level: [score_reply(t, policies.reply(policies.induction_rules(t.prompt.user))).reward for t in tasks]
            for level, tasks in cls.tasks.items()
        }

    def test_the_oracle_earns_the_clean_gate_on_every_task_of_every_level(self):
        """Rules from the hidden secrets score exactly 1.0 with the clean gate on every easy, hard and expert dev task."""
        for level, tasks in self.tasks.items():
            for task in tasks:
                result = score_reply(task, policies.reply(policies.oracle_rules(task.hidden)))
                self.assertEqual((result.reward, result.clean_gate), (1.0, 1.0), (level, task.index))

    def test_easy_is_solved_by_reading_the_prompt_and_not_by_memorising(self):
        """Easy: the prompt-only induction policy scores >= 0.95, the best constant <= 0.55."""
        self.assertGreaterEqual(fmean(self.induction["easy"]), 0.95)
        self.assertLessEqual(self.rows["easy"]["constant"].reward, 0.55)

    def test_hard_leaves_headroom_above_the_prompt_only_program(self):
        """Hard: induction <= 0.75 and >= 0.25 below the oracle on at least half the tasks; the constant <= 0.45."""
        rewards = self.induction["hard"]
        self.assertLessEqual(fmean(rewards), 0.75)
        self.assertLessEqual(self.rows["hard"]["constant"].reward, 0.45)
        self.assertGreaterEqual(sum(1 for r in rewards if r <= 1.0 - 0.25), DEV_SIZE // 2)

    def test_expert_leaves_more_headroom_than_hard(self):
        """Expert: induction <= 0.45; the fitted constant <= 0.42 (0.35, the issue's target, is below
        what deleting everything scores: 0.35 recall + 0.35 x the secret share of the text)."""
        self.assertLessEqual(fmean(self.induction["expert"]), 0.45)
        self.assertLess(fmean(self.induction["expert"]), fmean(self.induction["hard"]))
        self.assertLessEqual(self.rows["expert"]["constant"].reward, 0.42)


if __name__ == "__main__":
    unittest.main()
