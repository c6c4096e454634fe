"""The corpus: deterministic, realistic, fair and fresh streams."""

from __future__ import annotations

import base64
import hashlib
import itertools
import json
import os
import subprocess
import sys
import unittest
from pathlib import Path

from cases import dev_tasks

from redaction_pressure.api import load_task
from redaction_pressure.corpus import CORPUS_VERSION, DECOY_KINDS, FAMILIES, SECRET_KINDS, stream

ROOT = Path(__file__).resolve().parents[1]

# Pinned: CORPUS_VERSION and the digest of every dev task's generated records. If this
# fails, generated output changed: bump CORPUS_VERSION and update both values.
PINNED_CORPUS = ("1", "bd780298a34ede6d44c349c89d71c6c59df8ee6d7b28f3ed653fd707194f2823")

SHAPES = {
    "aws_access_key_id": r"(?:AKIA|ASIA)[A-Z2-7]{16}",
    "aws_secret_access_key": r"[A-Za-z0-9/+]{40}",
    "github_token": r"gh[po]_[A-Za-z0-9]{36}",
    "github_pat": r"github_pat_[A-Za-z0-9]{22}_[A-Za-z0-9]{59}",
    "gitlab_pat": r"glpat-[A-Za-z0-9_-]{20}",
    "slack_token": r"xoxb-\d{12}-\d{13}-[A-Za-z0-9]{24}|xoxp-\d{12}-\d{12}-\d{13}-[0-9a-f]{32}",
    "stripe_key": r"(?:sk_live|rk_live|sk_test)_(?:[A-Za-z0-9]{24}|51[A-Za-z0-9]{97})",
    "google_api_key": r"AIza[A-Za-z0-9_-]{35}",
    "openai_key": r"sk-proj-[A-Za-z0-9_-]{74}T3BlbkFJ[A-Za-z0-9_-]{74}",
    "npm_token": r"npm_[A-Za-z0-9]{36}",
    "jwt": r"eyJ[A-Za-z0-9_-]+\.eyJ[A-Za-z0-9_-]+\.[A-Za-z0-9_-]{43,}",
    "private_key": r"-----BEGIN ((?:RSA |EC |OPENSSH )?PRIVATE KEY)-----(?:\n|\\n)[A-Za-z0-9+/=\n\\n]+-----END \1-----",
    "dsn_password": r"[A-Za-z0-9._~-]{14,28}",
    "sql_password": r"[A-Za-z0-9!#$%^&*()=+_-]{12,24}",
    "generic_secret": r"[A-Za-z0-9+/=!@#%^&*_-]{18,64}",
    "base64_credential": r"[A-Za-z0-9+/]+={0,2}",
}
DECOY_SHAPES = {
    "example_key": r".*EXAMPLE(?:KEY)?",
    "placeholder": r"\$\{[A-Z_]+\}|\$\{\{ secrets\.[A-Z_]+ \}\}|<[A-Z_]+>|changeme|REPLACE_ME|os\.(?:environ\[|getenv\(|environ\.get\().*",
    "commit_sha": r"[0-9a-f]{40}",
    "uuid": r"[0-9a-f]{8}-[0-9a-f]{4}-4[0-9a-f]{3}-[89ab][0-9a-f]{3}-[0-9a-f]{12}",
    "hash_digest": r"(?:sha256:)?[0-9a-f]{64}|sha512-[A-Za-z0-9+/]{86}==",
    "public_key": r"ssh-ed25519 AAAA[A-Za-z0-9+/=]+|-----BEGIN PUBLIC KEY-----\n[A-Za-z0-9+/=\n]+-----END PUBLIC KEY-----",
    "test_fixture": r"[A-Za-z0-9]{24,40}",
    "redacted_marker": r"\[REDACTED\]",
}


def records_digest(tasks) -> str:
    digest = hashlib.sha256()
    for task in tasks:
        for record in task.shown + task.hidden:
            digest.update(record.model_dump_json().encode())
    return digest.hexdigest()


class TestStream(unittest.TestCase):
    def test_same_seed_gives_identical_records(self):
        """Two streams from one seed are equal record for record."""
        a = list(itertools.islice(stream(77), 40))
        b = list(itertools.islice(stream(77), 40))
        self.assertEqual(a, b)

    def test_different_seeds_give_different_records(self):
        """Different seeds give different documents."""
        self.assertNotEqual(next(stream(1)).text, next(stream(2)).text)

    def test_identical_in_another_process_with_another_hash_seed(self):
        """A subprocess with a different PYTHONHASHSEED builds byte-identical prompts and records."""
        code = (
            "import hashlib; from redaction_pressure.api import load_task\n"
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
        """A stream needs at least one shown record, since hidden kinds must be shown first."""
        with self.assertRaises(ValueError):
            next(stream(1, shown=0))


class TestFairness(unittest.TestCase):
    @classmethod
    def setUpClass(cls):
        cls.tasks = dev_tasks()

    def test_every_hidden_kind_is_shown(self):
        """Every secret kind, decoy kind and family of the hidden part appears in the prompt's records."""
        for task in self.tasks:
            with self.subTest(task=task.index):
                shown_secrets = {s.kind for r in task.shown for s in r.secrets}
                shown_decoys = {d.kind for r in task.shown for d in r.decoys}
                self.assertLessEqual({s.kind for r in task.hidden for s in r.secrets}, shown_secrets)
                self.assertLessEqual({d.kind for r in task.hidden for d in r.decoys}, shown_decoys)
                self.assertLessEqual({r.family for r in task.hidden}, {r.family for r in task.shown})

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
        """Across the dev split's hidden records every family, secret kind and decoy kind occurs."""
        hidden = [r for t in self.tasks for r in t.hidden]
        self.assertEqual({r.family for r in hidden}, set(FAMILIES))
        self.assertEqual({s.kind for r in hidden for s in r.secrets}, set(SECRET_KINDS))
        self.assertEqual({d.kind for r in hidden for d in r.decoys}, set(DECOY_KINDS))


class TestShapes(unittest.TestCase):
    @classmethod
    def setUpClass(cls):
        cls.records = [r for t in dev_tasks() for r in t.shown + t.hidden]

    def test_secret_values_have_published_shapes(self):
        """Every secret value matches the format real scanners look for."""
        for record in self.records:
            for span in record.secrets:
                with self.subTest(kind=span.kind):
                    self.assertRegex(record.value(span), f"^(?:{SHAPES[span.kind]})$")

    def test_decoy_values_have_their_shapes(self):
        """Every decoy value has the shape of its kind."""
        for record in self.records:
            for span in record.decoys:
                with self.subTest(kind=span.kind):
                    self.assertRegex(record.value(span), f"^(?:{DECOY_SHAPES[span.kind]})$")

    def test_spans_cover_the_value_only(self):
        """A span never includes quotes, surrounding space, a key name or a Bearer prefix."""
        for record in self.records:
            for span in record.secrets:
                value = record.value(span)
                self.assertFalse(value[0] in "\"' \n" or value[-1] in "\"' \n", value[:20])
                self.assertFalse(value.startswith(("Bearer", "Basic", "token=")))

    def test_dsn_spans_are_the_password_alone(self):
        """A DSN's span is its password: preceded by 'user:' and followed by '@host'."""
        for record in self.records:
            for span in record.secrets:
                if span.kind == "dsn_password":
                    self.assertRegex(record.text[: span.start], r"(?:://|\")[a-z_]+:$")
                    self.assertEqual(record.text[span.end], "@")

    def test_pem_spans_run_from_begin_to_the_closing_dashes(self):
        """A private key's span starts at -----BEGIN and ends at the END line's closing -----."""
        for record in self.records:
            for span in record.secrets:
                if span.kind == "private_key":
                    value = record.value(span)
                    self.assertTrue(value.startswith("-----BEGIN "))
                    self.assertRegex(value, r"-----END [A-Z ]+-----$")

    def test_jwts_and_base64_decode(self):
        """JWT parts decode to a JSON header and claims; base64 credentials decode."""
        for record in self.records:
            for span in record.secrets:
                value = record.value(span)
                if span.kind == "jwt":
                    header, claims, _ = value.split(".")
                    pad = lambda part: part + "=" * (-len(part) % 4)  # noqa: E731
                    self.assertEqual(json.loads(base64.urlsafe_b64decode(pad(header)))["typ"], "JWT")
                    self.assertIn("exp", json.loads(base64.urlsafe_b64decode(pad(claims))))
                if span.kind == "base64_credential":
                    self.assertTrue(base64.b64decode(value, validate=True))

    def test_sql_passwords_sit_in_password_clauses(self):
        """A SQL password is the quoted literal of a WITH PASSWORD clause."""
        for record in self.records:
            for span in record.secrets:
                if span.kind == "sql_password":
                    self.assertTrue(record.text[: span.start].endswith("WITH PASSWORD '"))
                    self.assertEqual(record.text[span.end], "'")

    def test_records_never_contain_the_prompt_delimiters(self):
        """No record text could close or open a prompt's record tag."""
        for record in self.records:
            self.assertNotIn("<record", record.text)
            self.assertNotIn("</record>", record.text)


if __name__ == "__main__":
    unittest.main()
