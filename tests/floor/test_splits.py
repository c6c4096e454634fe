"""Splits: public seed ranges, HMAC-derived private seeds, and a secret that never leaks."""

from __future__ import annotations

import hashlib
import hmac
import unittest

from redaction_pressure import splits
from redaction_pressure.redact.api import load_task, score_reply
from redaction_pressure.splits import PRIVATE_ENV, SplitError, commitment, seed_for
from tests.support.cases import OTHER_SECRET, TEST_SECRET, captured_logs, private_secret, reply


class TestSeeds(unittest.TestCase):
    def test_splits_use_disjoint_seeds(self):
        """No seed is shared by train, dev and private_eval tasks."""
        with private_secret(TEST_SECRET):
            private = {seed_for("private_eval", i) for i in range(512)}
        train = {seed_for("train", i) for i in range(5_000)} | {seed_for("train", splits.TRAIN_MAX_INDEX - 1)}
        dev = {seed_for("dev", i) for i in range(splits.DEV_SIZE)}
        self.assertEqual(len(dev), 64)
        self.assertFalse(train & dev or train & private or dev & private)
        self.assertTrue(all(seed >= 2**63 for seed in private))
        self.assertTrue(all(seed < 2**63 for seed in train | dev))

    def test_private_seed_follows_the_documented_hmac(self):
        """Task i's private seed is HMAC-SHA256(secret, label NUL i), first 8 bytes, top bit set."""
        with private_secret(TEST_SECRET):
            seed = seed_for("private_eval", 5)
        mac = hmac.new(TEST_SECRET.encode(), splits.PRIVATE_SEED_LABEL + b"\x005", hashlib.sha256)
        self.assertEqual(seed, int.from_bytes(mac.digest()[:8], "big") | (1 << 63))

    def test_out_of_range_indices_are_refused_by_name(self):
        """An index outside a split, a bool or an unknown split is a SplitError naming the problem."""
        for split, index, words in [
            ("dev", 64, "dev has tasks 0 to 63"),
            ("dev", -1, "index -1"),
            ("train", True, "integer"),
            ("test", 0, "unknown split 'test'"),
        ]:
            with self.subTest(split=split, index=index):
                with self.assertRaises(SplitError) as caught:
                    seed_for(split, index)
                self.assertIn(words, str(caught.exception))

    def test_public_commitments_name_each_split(self):
        """Public splits carry distinct, stable SHA-256 commitments."""
        self.assertNotEqual(commitment("train"), commitment("dev"))
        self.assertRegex(commitment("dev"), "^[0-9a-f]{64}$")
        self.assertEqual(commitment("dev"), commitment("dev"))


class TestPrivateSecret(unittest.TestCase):
    def test_missing_secret_is_an_error_naming_the_variable(self):
        """private_eval without the secret fails clearly; it never falls back to a public split."""
        with private_secret(None):
            for call in (lambda: load_task("private_eval", 0), lambda: commitment("private_eval")):
                with self.assertRaises(SplitError) as caught:
                    call()
                self.assertIn(PRIVATE_ENV, str(caught.exception))
                self.assertIn("not set", str(caught.exception))

    def test_a_31_character_secret_is_refused(self):
        """A secret one character short is refused, and the message quotes only its length."""
        short = "x" * 31
        with private_secret(short):
            with self.assertRaises(SplitError) as caught:
                load_task("private_eval", 0)
        message = str(caught.exception)
        self.assertIn(PRIVATE_ENV, message)
        self.assertIn("31 characters", message)
        self.assertNotIn(short, message)
        with private_secret("x" * 32):
            self.assertEqual(load_task("private_eval", 0).split, "private_eval")

    def test_two_secrets_give_different_tasks(self):
        """Different secrets derive different private tasks and commitments."""
        with private_secret(TEST_SECRET):
            first = load_task("private_eval", 0)
        with private_secret(OTHER_SECRET):
            second = load_task("private_eval", 0)
        self.assertNotEqual(first.prompt.user, second.prompt.user)
        self.assertNotEqual(first.identity["split_commitment"], second.identity["split_commitment"])

    def test_private_tasks_differ_from_public_ones(self):
        """A private task is not a dev or train task under another name."""
        with private_secret(TEST_SECRET):
            private = load_task("private_eval", 0).prompt.user
        self.assertNotIn(private, {load_task("dev", i).prompt.user for i in range(8)})

    def test_the_secret_never_appears_in_data_prompts_errors_or_logs(self):
        """Loading and scoring private tasks writes the secret nowhere a user could see it."""
        seen: list[str] = []
        with captured_logs() as logs, private_secret(TEST_SECRET):
            for index in range(4):
                task = load_task("private_eval", index)
                result = score_reply(task, reply(("(?s).+", "[REDACTED]")))
                bad = score_reply(task, "not json")
                seen += [task.model_dump_json(), repr(task), str(task), result.model_dump_json(), repr(bad)]
                seen.append(str(seed_for("private_eval", index)))
            seen.append(commitment("private_eval"))
            for call in (lambda: seed_for("private_eval", -1), lambda: load_task("private_eval", 0, shown=0)):
                try:
                    call()
                except (SplitError, ValueError) as exc:
                    seen.append(str(exc))
        seen.append(logs.getvalue())
        for text in seen:
            self.assertNotIn(TEST_SECRET, text)
            self.assertNotIn(TEST_SECRET[:16], text)

    def test_private_task_data_does_not_carry_its_seed(self):
        """A private task's data names split and index, not the derived seed."""
        with private_secret(TEST_SECRET):
            task = load_task("private_eval", 3)
            seed = seed_for("private_eval", 3)
        self.assertNotIn(str(seed), task.model_dump_json())


if __name__ == "__main__":
    unittest.main()
