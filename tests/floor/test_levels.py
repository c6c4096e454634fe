"""Difficulty levels: each is a corpus of its own, and each keeps the stream's fairness promises."""

from __future__ import annotations

import hashlib
import re
import statistics
import unittest
from functools import cache
from pathlib import Path

from redaction_pressure.corpus import CORPUS_VERSION, DIFFICULTIES, corpus_version
from redaction_pressure.redact.api import load_task, score_reply
from redaction_pressure.redact.scanner import scan
from redaction_pressure.spans import Record, Span
from redaction_pressure.splits import DEV_SIZE, commitment, seed_for
from tests.support.realism import key_context, line_of, recognisably_not_secret, shown_convention

# Pinned like the standard level's digest in test_corpus: a change to a level's generated dev
# records must come with a new version of that level (corpus.LEVEL_VERSIONS).
PINNED_LEVELS = {
    "easy": ("4-easy", "2366fd84a88be08badc6e23692185fb8feef13ea59cb5a20c5ddee13a7157372"),
    "hard": ("5-hard", "ac5b447c8805a432b7af8f9f89b10a75fba317429492d5b24db89482871097aa"),
    "expert": ("6-expert", "6efbf923b59eeb825e4652498486ef24ad9613f9f2247dc13e3397c251575845"),
}
# The standard level's dev commitment is the levels-free corpus's: its identity is unchanged.
STANDARD_DEV_COMMITMENT = "25e0abfb0ab27f094521f80e065467af20394fa8a31781b20de7f8454bbbd88c"


@cache
def level_tasks(level: str):
    return tuple(load_task("dev", index, difficulty=level) for index in range(DEV_SIZE))


def section_of(record: Record, span: Span) -> str:
    """The section a value sits in: the nearest line above it that opens a TOML table or has less
    indentation than the value's own line (a YAML parent such as a service); '' when flat."""
    start = record.text.rfind("\n", 0, span.start) + 1
    indent = len(record.text[start:]) - len(record.text[start:].lstrip(" "))
    for line in reversed(record.text[:start].splitlines()):
        if re.fullmatch(r"\[[^\]]+\]", line.strip()):
            return line.strip()
        stripped = line.lstrip(" ")
        if stripped and len(line) - len(stripped) < indent:
            return line.strip()
    return ""


def signature(record: Record, span: Span) -> tuple[str, str, str]:
    """What a careful reader can see of where a value sits: family, section, key context."""
    return record.family, section_of(record, span), key_context(record, span)


class TestLevelIdentity(unittest.TestCase):
    def test_standard_is_the_default_level_with_an_unchanged_identity(self):
        """Without a difficulty, tasks are the standard level's: corpus version 4, the split's own commitment."""
        for index in (0, 17):
            self.assertEqual(load_task("dev", index), load_task("dev", index, difficulty="standard"))
        self.assertEqual(corpus_version(), CORPUS_VERSION)
        self.assertEqual(commitment("dev"), STANDARD_DEV_COMMITMENT)
        self.assertEqual(seed_for("dev", 5), 1_005)

    def test_each_level_names_itself_in_identity_and_commitment(self):
        """corpus_version is `4`, `4-easy`, `5-hard`, `6-expert`; every level has its own commitment and seeds."""
        for level in DIFFICULTIES:
            task = load_task("dev", 0, difficulty=level)
            self.assertEqual(task.identity["corpus_version"], corpus_version(level))
            self.assertEqual(task.identity["split_commitment"], commitment("dev", level))
            self.assertEqual(task.difficulty, level)
        self.assertEqual([corpus_version(level) for level in DIFFICULTIES], ["4-easy", "4", "5-hard", "6-expert"])
        self.assertEqual(len({commitment(split, level) for split in ("train", "dev") for level in DIFFICULTIES}), 8)
        self.assertEqual(len({seed_for("dev", 0, level) for level in DIFFICULTIES}), 4)

    def test_levels_generate_different_tasks(self):
        """The same index at two levels is a different task."""
        prompts = {load_task("dev", 3, difficulty=level).prompt.user for level in DIFFICULTIES}
        self.assertEqual(len(prompts), len(DIFFICULTIES))

    def test_an_unknown_level_is_refused_by_name(self):
        """A misspelt difficulty is an error that lists the levels."""
        with self.assertRaisesRegex(ValueError, "unknown difficulty 'medium'.*easy, standard, hard, expert"):
            load_task("dev", 0, difficulty="medium")

    def test_dev_digests_are_pinned_per_level(self):
        """Any change to a level's generated dev records must come with a new CORPUS_VERSION."""
        for level, pinned in PINNED_LEVELS.items():
            digest = hashlib.sha256()
            for task in level_tasks(level):
                for record in (*task.shown, *task.hidden):
                    digest.update(record.model_dump_json().encode())
            with self.subTest(level=level):
                self.assertEqual((corpus_version(level), digest.hexdigest()), pinned)


class TestFairnessAtEveryLevel(unittest.TestCase):
    def test_every_hidden_slot_is_shown(self):
        """On every dev task of every level, each slot a hidden record fills appears in the shown records."""
        for level in DIFFICULTIES:
            for task in level_tasks(level):
                shown = {s.slot for r in task.shown for s in (*r.secrets, *r.decoys)}
                hidden = {s.slot for r in task.hidden for s in (*r.secrets, *r.decoys)}
                with self.subTest(level=level, task=task.index):
                    self.assertEqual(sorted(hidden - shown), [])

    def test_every_hidden_decoy_is_told_apart_by_the_shown_records(self):
        """Every hidden decoy is recognisable by its kind's rule under the conventions the shown
        records establish, or sits where (family, section, key) the shown records hold only
        non-secrets."""
        for level in DIFFICULTIES:
            for task in level_tasks(level):
                convention = shown_convention(seed_for("dev", task.index, level), list(task.shown))
                secret_places = {signature(r, s) for r in task.shown for s in r.secrets}
                decoy_places = {signature(r, s) for r in task.shown for s in r.decoys}
                failures = []
                for n, record in enumerate(task.hidden):
                    for span in record.decoys:
                        value, line = record.value(span), line_of(record, span)
                        if recognisably_not_secret(span.kind, value, line, convention, key_context(record, span)):
                            continue
                        place = signature(record, span)
                        if place in decoy_places and place not in secret_places:
                            continue
                        failures.append(f"hidden record {n}: {span.kind} ({span.slot}) at {place}")
                with self.subTest(level=level, task=task.index):
                    self.assertEqual(failures, [])

    def test_no_hidden_secret_sits_where_the_shown_records_hold_only_public_values(self):
        """The mirror of the decoy test: no hidden secret sits at a (family, section, key) where the
        shown records hold non-secrets and no secret; a section no shown record uses (a further
        service of a repeated config) is read by the shown exception, not guessed against it."""
        for level in DIFFICULTIES:
            for task in level_tasks(level):
                secret_places = {signature(r, s) for r in task.shown for s in r.secrets}
                decoy_places = {signature(r, s) for r in task.shown for s in r.decoys}
                failures = [
                    f"hidden record {n}: {span.kind} ({span.slot}) at {signature(record, span)}"
                    for n, record in enumerate(task.hidden)
                    for span in record.secrets
                    if signature(record, span) in decoy_places - secret_places
                ]
                with self.subTest(level=level, task=task.index):
                    self.assertEqual(failures, [])


CONSTANT_TARGETS = {"easy": 0.55, "standard": 0.50, "hard": 0.45, "expert": 0.42}
"""The most a prompt-blind constant answer may score on a level's dev split (issue 18)."""
DATA = Path(__file__).resolve().parents[1] / "data"


RED_TEAM_REPLIES = (
    ("redteam3_easy.json", "easy"),
    ("redteam3_standard.json", "standard"),
    ("redteam3_hard.json", "hard"),
    ("redteam4_easy.json", "easy"),
    ("redteam4_standard.json", "standard"),
    ("redteam4_standard_allvalues.json", "standard"),
    ("redteam4_hard.json", "hard"),
)
"""Prompt-blind replies red teams fitted by hand, and the level each was fitted on."""


class TestBlindAnswers(unittest.TestCase):
    def test_the_red_teams_constant_replies_stay_under_each_levels_target(self):
        """The red teams' replies score at most their level's target on dev: corpus 3's
        (tests/data/redteam3_<level>.json: every key=value with world-knowledge filters, and on
        easy the role words) and corpus 4's hard one (redteam4_hard.json: only what general
        knowledge finds, published formats, PEM, JWTs, DSN and SQL passwords, precisely)."""
        for name, level in RED_TEAM_REPLIES:
            reply = (DATA / name).read_text()
            mean = statistics.fmean(score_reply(task, reply, scanner=scan).reward for task in level_tasks(level))
            with self.subTest(reply=name, level=level):
                self.assertLessEqual(mean, CONSTANT_TARGETS[level])


class TestHardLevel(unittest.TestCase):
    def test_a_key_is_secret_in_one_section_and_public_in_another(self):
        """On at least half the hard dev tasks one key holds, in the secret's shape, a secret in one
        section and a public id in another, and the shown records show it both ways."""
        varied = 0
        for task in level_tasks("hard"):
            secrets = {(r.family, key_context(r, s)) for r in task.shown for s in r.secrets}
            twins = {(r.family, key_context(r, d)) for r in task.shown for d in r.decoys if d.slot.endswith(":twin")}
            varied += bool(secrets & twins)
        self.assertGreaterEqual(varied, DEV_SIZE // 2)

    def test_hard_tasks_have_more_families_than_standard(self):
        """A hard task draws more families, so each slot gets fewer of the shown records."""
        count = lambda level: sum(len({r.family for r in t.shown}) for t in level_tasks(level))  # noqa: E731
        self.assertGreater(count("hard"), count("standard"))


ITEM = re.compile(r"- (\w+): (\S+)\n\s+vendor: (\S+)\n\s+value: ['\"]?([^'\"\n]+)")
"""One item of the expert level's credential inventory: its sibling field, scope word, vendor and value."""
PROMPT_LIMIT = 24_000
"""The most characters an expert task's system and user prompt may take (issue 29)."""


def inventory(task) -> list[tuple[str, str, bool, bool]]:
    """(scope word, vendor, is a secret, shown) of every credential-inventory item of a task."""
    items = []
    for shown, records in ((True, task.shown), (False, task.hidden)):
        for record in records:
            if record.family != "credential_list":
                continue
            secret_values = {record.value(span) for span in record.secrets}
            for _, scope, vendor, value in ITEM.findall(record.text):
                items.append((scope, vendor, value in secret_values, shown))
    return items


class TestExpertLevel(unittest.TestCase):
    def test_only_the_scope_and_vendor_together_decide_an_inventory_value(self):
        """In every expert dev task's inventory, one (scope, vendor) pair always means the same thing
        (secret or public), the shown records show every pair the hidden ones use, each vendor has
        secret and public items, and some scope word is secret for one vendor and public for another."""
        for task in level_tasks("expert"):
            items = inventory(task)
            with self.subTest(task=task.index):
                self.assertTrue(items, "no credential inventory")
                meaning: dict[tuple[str, str], set[bool]] = {}
                for scope, vendor, secret, _ in items:
                    meaning.setdefault((scope, vendor), set()).add(secret)
                self.assertEqual([pair for pair, seen in meaning.items() if len(seen) > 1], [])
                shown_pairs = {(scope, vendor) for scope, vendor, _, shown in items if shown}
                self.assertLessEqual({(scope, vendor) for scope, vendor, _, _ in items}, shown_pairs)
                vendors = {vendor for _, vendor, _, _ in items}
                for vendor in vendors:
                    self.assertEqual(
                        {m for (_, v), seen in meaning.items() if v == vendor for m in seen}, {True, False}, vendor
                    )
                by_scope: dict[str, set[bool]] = {}
                for (scope, _), seen in meaning.items():
                    by_scope.setdefault(scope, set()).update(seen)
                self.assertIn({True, False}, by_scope.values())

    def test_a_vendors_public_ids_can_wear_another_vendors_secret_prefix(self):
        """On every expert dev task some vendor's public id starts with another vendor's secret prefix."""
        from redaction_pressure.corpus import draw_dialect

        for index in range(DEV_SIZE):
            houses = draw_dialect(seed_for("dev", index, "expert"), 8)[0].world.houses
            secret = {h.secret_prefix for h in houses}
            with self.subTest(task=index):
                self.assertTrue(any(p in secret - {h.secret_prefix} for h in houses for p in h.public_prefixes))

    def test_prompts_stay_under_the_limit(self):
        """Every expert dev prompt (system and user) is under 24 000 characters."""
        self.assertLess(max(len(t.prompt.system) + len(t.prompt.user) for t in level_tasks("expert")), PROMPT_LIMIT)

    def test_the_inventory_is_shown_at_least_twice(self):
        """A pair's meaning is read from more than one shown item: the inventory is two of the shown records."""
        for task in level_tasks("expert"):
            self.assertGreaterEqual(sum(r.family == "credential_list" for r in task.shown), 2, task.index)


class TestEasyLevel(unittest.TestCase):
    def test_easy_tasks_have_fewer_vendors_and_families(self):
        """An easy task has one or two vendors and fewer families than a standard one."""
        from redaction_pressure.corpus import draw_dialect

        for index in range(DEV_SIZE):
            dialect, _ = draw_dialect(seed_for("dev", index, "easy"), 8)
            self.assertIn(len(dialect.world.houses), (1, 2))
            self.assertLessEqual(len(dialect.families), 3)

    def test_easy_role_words_mean_one_thing_per_task_and_nothing_across_tasks(self):
        """Within an easy task no role word names both a secret and a public id (the shown records
        settle it cleanly); across tasks each word names secrets in some tasks and public ids in
        others, so a blind answer reads nothing from the word."""
        from redaction_pressure.corpus import draw_dialect

        as_secret: set[tuple[str, ...]] = set()
        as_public: set[tuple[str, ...]] = set()
        for index in range(DEV_SIZE):
            world = draw_dialect(seed_for("dev", index, "easy"), 8)[0].world
            houses = (*world.houses, world.internal)
            secret_words = {h.secret_role for h in houses}
            public_words = {role for h in houses for role in h.public_roles}
            with self.subTest(task=index):
                self.assertEqual(secret_words & public_words, set())
                self.assertLessEqual(secret_words, set(world.secret_roles))
                self.assertLessEqual(public_words, set(world.public_roles))
            as_secret |= secret_words
            as_public |= public_words
        self.assertGreaterEqual(len(as_secret & as_public), 10)


if __name__ == "__main__":
    unittest.main()
