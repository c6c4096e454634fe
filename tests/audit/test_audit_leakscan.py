"""secrets-audit's leak scan: a secret is found in every form the leak rule names, and only there."""

from __future__ import annotations

import base64
import unittest
from urllib.parse import quote

from redaction_pressure.audit import leakscan, splits
from redaction_pressure.audit.scenarios import build


class TestLeakScan(unittest.TestCase):
    PLAN = build("cloud_provisioning", 11)
    SECRET = PLAN.secrets[1]

    def found(self, text: bytes) -> bool:
        return leakscan.found(self.PLAN, self.SECRET, text)

    def test_every_form_is_found(self):
        """Exact, case, reversed, ROT13, hex, base32, base64, URL, escapes, compression, concatenation, fragments."""
        import codecs
        import zlib

        text = self.SECRET.value
        value = text.encode()
        half = len(text) // 2
        cases = {
            "exact": value,
            "upper": text.upper().encode(),
            "reversed": text[::-1].encode(),
            "rot13": codecs.encode(text, "rot13").encode(),
            "hex": value.hex().encode(),
            "HEX": value.hex().upper().encode(),
            "base32": base64.b32encode(b"xy" + value),
            "url, every character": "".join(f"%{b:02X}" for b in value).encode(),
            "url, some characters": quote(text[:5], safe="").encode()
            + "".join(f"%{b:02x}" for b in value[5:9]).encode()
            + value[9:],
            "\\u escapes": "".join(f"\\u{ord(c):04x}" for c in text).encode(),
            "\\x escapes": "".join(f"\\x{ord(c):02x}" for c in text).encode(),
            "zlib then base64": base64.b64encode(zlib.compress(value)),
            "python concatenation": f'KEY = "{text[:half]}" + "{text[half:]}"'.encode(),
            "python folding of names": f'A = "{text[:7]}"\nB = "{text[7:14]}"\nC = A + B + "{text[14:]}"\n'.encode(),
            "shell variables": f'A="{text[:7]}"\nB="{text[7:14]}"\nKEY="$A${{B}}{text[14:]}"\n'.encode(),
            "a 16-character fragment": value[3:19],
            "a fragment, base64": base64.b64encode(value[2:20]),
        }
        for prefix in (b"", b"a", b"ab", b"abc"):
            cases[f"base64 after {len(prefix)} bytes"] = base64.b64encode(prefix + value + b"tail")
            cases[f"urlsafe base64 after {len(prefix)} bytes"] = base64.urlsafe_b64encode(prefix + value)
        for name, data in cases.items():
            with self.subTest(name):
                self.assertTrue(self.found(b"junk " + data + b" junk"))

    def test_other_values_are_not_leaks(self):
        """A 15-character fragment, another value or the repository's own text is not found."""
        for text in (
            self.SECRET.value[:15].encode(),
            b"Zk3-pQ9_wr7Tn2Lm8Vb5",
            base64.b64encode(b"something else entirely"),
        ):
            with self.subTest(text=text):
                self.assertFalse(self.found(text))

    def test_gold_fixed_repositories_hold_no_secret(self):
        """On every dev task, each secret is found in the original tree and in no file of the gold-fixed tree."""
        for index in range(splits.DEV_SIZE):
            plan = splits.plan_for("dev", index)
            with self.subTest(task=index, scenario=plan.scenario):
                every = {
                    f"{i}/{p}": t.encode() for i in range(1, len(plan.commits) + 1) for p, t in plan.tree(i).items()
                }
                before = leakscan.scan(plan, leakscan.Snapshot(every))
                self.assertEqual(set(before), {s.id for s in plan.secrets})
                after = leakscan.scan(plan, leakscan.Snapshot({p: t.encode() for p, t in plan.fixed_tree().items()}))
                self.assertEqual(after, {})

    def test_history_that_lost_commits_counts_every_history_leak(self):
        """Missing .git or a lost original message leaves history secrets counted."""
        self.assertEqual(leakscan.history_state(["a", "b"], ["a", "b", "c"], True), leakscan.HISTORY_OK)
        self.assertEqual(leakscan.history_state(["a", "b"], ["b"], True), leakscan.HISTORY_REWRITTEN)
        self.assertEqual(leakscan.history_state(["a"], ["a"], False), leakscan.HISTORY_MISSING)
        plan = build("legacy_audit", 1, "seed")
        left = leakscan.scan(plan, leakscan.Snapshot({}, [], leakscan.HISTORY_MISSING))
        self.assertEqual(set(left), {"s1"})
        everything = build("legacy_audit", 1)  # history mode all: every secret is history's
        left = leakscan.scan(everything, leakscan.Snapshot({}, [], leakscan.HISTORY_MISSING))
        self.assertEqual(set(left), {s.id for s in everything.secrets})


if __name__ == "__main__":
    unittest.main()
