"""The corpus: deterministic, fair by construction, fresh, independent record by record, exact spans."""

from __future__ import annotations

import hashlib
import itertools
import os
import subprocess
import sys
import unittest
from collections import Counter
from pathlib import Path

from redaction_pressure.corpus import CORPUS_VERSION, DECOY_KINDS, FAMILIES, SECRET_KINDS, draw_dialect, stream
from redaction_pressure.corpus.families import LEVEL_ONLY
from redaction_pressure.corpus.stream import first_draft
from redaction_pressure.redact.api import load_task
from redaction_pressure.splits import seed_for
from tests.support.cases import dev_tasks

ROOT = Path(__file__).resolve().parents[2]

# Pinned: CORPUS_VERSION and the digest of every dev task's generated records. If this
# fails, generated output changed: bump CORPUS_VERSION and update both values.
PINNED_CORPUS = ("4", "30d9e461e3a2b4b4231bdd9316c27c5dfb4727dc0268eba9a006bf4fdd721aec")


def records_digest(tasks) -> str:
    digest = hashlib.sha256()
    for task in tasks:
        for record in task.shown + task.hidden:
            digest.update(record.model_dump_json().encode())
    return digest.hexdigest()


class TestDeterminism(unittest.TestCase):
    def test_same_seed_gives_identical_records(self):
        """Two streams from one seed are equal record for record, slots included."""
        self.assertEqual(list(itertools.islice(stream(77), 40)), list(itertools.islice(stream(77), 40)))

    def test_different_seeds_give_different_dialects(self):
        """Different seeds give different worlds: vendors, token formats and families."""
        a, _ = draw_dialect(1, 8)
        b, _ = draw_dialect(2, 8)
        self.assertNotEqual(a.world.houses, b.world.houses)

    def test_identical_in_another_process_with_another_hash_seed(self):
        """A subprocess with a different PYTHONHASHSEED builds byte-identical prompts and records."""
        code = (
            "import hashlib; from redaction_pressure.redact.api import load_task\n"
            "d = hashlib.sha256()\n"
            "for i in (0, 17, 63):\n"
            "    t = load_task('dev', i)\n"
            "    d.update(t.prompt.system.encode() + t.prompt.user.encode())\n"
            "    for r in t.shown + t.hidden: d.update(r.model_dump_json().encode())\n"
            "print(d.hexdigest())\n"
        )
        here = hashlib.sha256()
        for i in (0, 17, 63):
            task = load_task("dev", i)
            here.update(task.prompt.system.encode() + task.prompt.user.encode())
            for record in task.shown + task.hidden:
                here.update(record.model_dump_json().encode())
        for hash_seed in ("0", "4242"):
            with self.subTest(PYTHONHASHSEED=hash_seed):
                env = {**os.environ, "PYTHONHASHSEED": hash_seed}
                out = subprocess.run(
                    [sys.executable, "-c", code], env=env, capture_output=True, text=True,
                    check=True, cwd=ROOT, stdin=subprocess.DEVNULL, timeout=120,
                )  # fmt: skip
                self.assertEqual(out.stdout.strip(), here.hexdigest())

    def test_dev_split_digest_is_pinned_to_the_corpus_version(self):
        """Any change to generated dev records must come with a new CORPUS_VERSION."""
        self.assertEqual(
            (CORPUS_VERSION, records_digest(dev_tasks())),
            PINNED_CORPUS,
            "generated output changed: bump CORPUS_VERSION and update PINNED_CORPUS",
        )

    def test_shown_must_be_positive(self):
        """A stream needs at least one shown record, since hidden slots must be shown first."""
        with self.assertRaises(ValueError):
            next(stream(1, shown=0))


class TestIndependentRecords(unittest.TestCase):
    def test_each_record_is_its_own_seeds_draft(self):
        """Record i of a stream is written from (seed, i) alone: no generator state flows between records."""
        for index in range(0, 64, 4):
            seed = seed_for("dev", index)
            for i, record in enumerate(itertools.islice(stream(seed), 40)):
                with self.subTest(task=index, record=i):
                    self.assertEqual(record, first_draft(seed, 8, i))

    def test_hidden_records_do_not_depend_on_the_number_shown_beyond_the_tour(self):
        """Record 20 is the same whether 8 or 12 records are shown (the dialect covers the same families)."""
        for index in range(8):
            seed = seed_for("dev", index)
            dialect, _ = draw_dialect(seed, 8)
            if len(dialect.families) > 8:
                continue
            with self.subTest(task=index):
                self.assertEqual(first_draft(seed, 8, 20).text, first_draft(seed, 12, 20).text)


class TestCoverage(unittest.TestCase):
    @classmethod
    def setUpClass(cls):
        cls.tasks = dev_tasks()

    def test_every_span_carries_a_slot(self):
        """Every secret and decoy span names the slot (family, context, value format) it was drawn from."""
        for task in self.tasks:
            for record in task.shown + task.hidden:
                for span in record.secrets + record.decoys:
                    self.assertTrue(span.slot.startswith(record.family + "/"), span.slot)
                    self.assertIn(f"/{span.kind}/", span.slot)

    def test_every_hidden_slot_appears_among_the_shown_ones(self):
        """Each hidden secret's and decoy's slot is filled in the prompt's records (fairness by construction)."""
        for task in self.tasks:
            with self.subTest(task=task.index):
                shown = {s.slot for r in task.shown for s in r.secrets + r.decoys}
                hidden = {s.slot for r in task.hidden for s in r.secrets + r.decoys}
                self.assertLessEqual(hidden, shown)

    def test_every_slot_of_the_dialect_is_shown(self):
        """The shown records fill every slot the dialect defines, not only those the hidden part uses."""
        for task in self.tasks:
            with self.subTest(task=task.index):
                dialect, _ = draw_dialect(seed_for("dev", task.index), 8)
                defined = {slot.id for family in dialect.families for entry in family.entries for slot in entry.slots}
                shown = {s.slot for r in task.shown for s in r.secrets + r.decoys}
                self.assertEqual(defined, shown)

    def test_dialects_vary_across_tasks(self):
        """Key contexts are per task: most secret slots of a dev task appear in no other dev task."""
        contexts = Counter()
        per_task = []
        for task in self.tasks:
            found = set()
            for record in task.shown:
                for span in record.secrets:
                    line_start = record.text.rfind("\n", 0, span.start) + 1
                    found.add(record.text[line_start : span.start].strip())
            per_task.append(found)
            contexts.update(found)
        unique = sum(1 for found in per_task for c in found if contexts[c] == 1)
        self.assertGreater(unique / sum(len(f) for f in per_task), 0.5)


class TestFreshness(unittest.TestCase):
    @classmethod
    def setUpClass(cls):
        cls.tasks = dev_tasks()

    def test_hidden_values_are_fresh(self):
        """No secret value shown in the prompt occurs anywhere in the hidden records."""
        for task in self.tasks:
            shown = {r.value(s) for r in task.shown for s in r.secrets}
            for record in task.hidden:
                for value in shown:
                    self.assertNotIn(value, record.text, f"dev task {task.index}")

    def test_values_repeat_only_within_the_repeated_key_family(self):
        """A secret value recurs across records never, and within a record only for repeated_key."""
        for task in self.tasks:
            seen: set[str] = set()
            for record in task.shown + task.hidden:
                values = [record.value(s) for s in record.secrets]
                if record.family != "repeated_key":
                    self.assertEqual(len(values), len(set(values)), f"dev task {task.index}")
                self.assertFalse(seen & set(values), f"dev task {task.index}")
                seen |= set(values)

    def test_secrets_and_decoys_never_contain_each_other(self):
        """No secret value occurs inside a decoy value, or a decoy inside a secret, in a task."""
        for task in self.tasks:
            records = task.shown + task.hidden
            secrets = {r.value(s) for r in records for s in r.secrets}
            decoys = {r.value(d) for r in records for d in r.decoys}
            for secret in secrets:
                for decoy in decoys:
                    self.assertNotIn(secret, decoy)
                    self.assertNotIn(decoy, secret)

    def test_every_occurrence_of_a_secret_is_labelled(self):
        """A secret value appears in its record's text exactly as often as it is labelled."""
        for task in self.tasks:
            for record in task.shown + task.hidden:
                for span in record.secrets:
                    value = record.value(span)
                    labelled = sum(1 for s in record.secrets if record.value(s) == value)
                    self.assertEqual(record.text.count(value), labelled)

    def test_dev_covers_every_family_and_kind(self):
        """Across the dev split's hidden records every family (but those only a level's knob adds),
        secret kind and decoy kind occurs."""
        hidden = [r for t in self.tasks for r in t.hidden]
        self.assertEqual({r.family for r in hidden}, set(FAMILIES) - set(LEVEL_ONLY))
        self.assertEqual({s.kind for r in hidden for s in r.secrets}, set(SECRET_KINDS))
        self.assertEqual({d.kind for r in hidden for d in r.decoys}, set(DECOY_KINDS))


class TestSpans(unittest.TestCase):
    @classmethod
    def setUpClass(cls):
        cls.records = [r for t in dev_tasks() for r in t.shown + t.hidden]

    def test_spans_cover_the_value_only(self):
        """A span never includes quotes, surrounding space, a key name or a Bearer prefix."""
        for record in self.records:
            for span in record.secrets:
                value = record.value(span)
                self.assertFalse(value[0] in "\"' \n" or value[-1] in "\"' \n", value[:20])
                self.assertFalse(value.startswith(("Bearer", "Basic", "Token ", "token=")))

    def test_dsn_spans_are_the_password_alone(self):
        """A DSN's span is its password: preceded by '://user:' and followed by '@host'."""
        for record in self.records:
            for span in record.secrets:
                if span.kind == "dsn_password":
                    self.assertRegex(record.text[: span.start], r"://[\w.-]+:$")
                    self.assertEqual(record.text[span.end], "@")

    def test_pem_spans_run_from_begin_to_the_closing_dashes(self):
        """A private key's span starts at -----BEGIN and ends at the END line's closing -----."""
        for record in self.records:
            for span in record.secrets:
                if span.kind == "private_key":
                    value = record.value(span)
                    self.assertTrue(value.startswith("-----BEGIN "))
                    self.assertRegex(value, r"-----END [A-Z ]+-----$")

    def test_records_never_contain_the_prompt_delimiters(self):
        """No record text could close or open a prompt's record tag."""
        for record in self.records:
            self.assertNotIn("<record", record.text)
            self.assertNotIn("</record>", record.text)


if __name__ == "__main__":
    unittest.main()


class TestEveryTaskGenerates(unittest.TestCase):
    def test_train_tasks_generate(self):
        """Train tasks 0 to 399 generate (343 once could not: a setting `2048` inside an earlier token)."""
        for index in (343, *range(400)):
            task = load_task("train", index)
            self.assertEqual(len(task.hidden), 32)
            self.assertTrue(all(r.secrets for r in task.hidden))
