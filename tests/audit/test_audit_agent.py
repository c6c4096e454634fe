"""The scripted secrets-audit baseline: its scanner rules, its fixes and its scores."""

from __future__ import annotations

import unittest

from redaction_pressure.audit import agent as audit_agent
from redaction_pressure.audit import splits
from redaction_pressure.audit.local import LocalWorkspace
from redaction_pressure.audit.prompt import prompt
from redaction_pressure.audit.scenarios import SCENARIOS

FIRST_OF_EACH = range(len(SCENARIOS))
"""dev tasks 0-12: one seed of every scenario."""


class TestScanText(unittest.TestCase):
    def test_secrets_are_found_and_only_same_shaped_decoys_fool_it(self):
        """On one seed of every scenario the rules find most secrets and spare UUIDs, placeholders,
        example keys and commit ids; public ids in a secret's own shape (a vendor's publishable key
        beside its secret key) and hashes under names its filters do not know (`ca_fingerprint`)
        are beyond a pattern scanner, which is what those decoys test."""
        found_secrets = total = 0
        fooled = set()
        for index in FIRST_OF_EACH:
            plan = splits.plan_for("dev", index)
            found = {c.value for path, text in plan.tree().items() for c in audit_agent.scan_text(path, text)}
            for decoy in plan.decoys:
                if any(decoy.value in v or v in decoy.value for v in found):
                    fooled.add(decoy.kind)
            head = "\n".join(plan.tree().values())
            live = [s for s in plan.secrets if s.value in head]  # a secret only old commits hold is history's
            total += len(live)
            found_secrets += sum(1 for s in live if s.value in found)
        self.assertGreaterEqual(found_secrets / total, 0.7)
        self.assertTrue(fooled)
        self.assertFalse(fooled & {"uuid", "placeholder", "example_key", "commit_sha"}, fooled)

    def test_known_formats_and_contexts(self):
        """Each rule fires on a line shaped like its format, and not on a look-alike."""
        cases = [
            ("config.py", 'KEY = "AKIAQWERTYUIOPASDFGH"', "aws_access_key_id"),
            ("db.py", 'URL = "postgresql://app:Zq8-xW2_pL9mK4@db:5432/app"', "url_credential"),
            ("0002.sql", "CREATE USER a WITH PASSWORD 'Zq8-xW2_pL9mK4vB';", "sql_password"),
            ("utils.py", 'HEADER_VALUE = "YWxpY2U6UzhmNldTT3JjVDFwR18tZ1pqMw=="', "base64_credential"),
            (".env", "SESSION_SECRET=9d023680bf6d773d22d30f85a1aa3557", "keyword"),
        ]
        for path, text, rule in cases:
            with self.subTest(rule=rule):
                self.assertEqual([c.rule for c in audit_agent.scan_text(path, text + "\n")], [rule])
        lookalikes = [
            'EXAMPLE = "AKIAIOSFODNN7EXAMPLE"',
            'BUNDLE_SHA256 = "0350408cb036c400f4e152fe3efc87d9858985bbf89c4b96d4528f91a66fd102"',
            'REQUEST = "ef3bfdff-f2ed-4d52-b014-7109e476dc2c"',
            'API_KEY = os.environ.get("API_KEY", "")',
            "apiKey: process.env.FIREBASE_API_KEY,",
            'host = "analytics.aperture.internal"',
        ]
        for text in lookalikes:
            with self.subTest(text=text):
                self.assertEqual(audit_agent.scan_text("x.py", text + "\n"), [])


class TestFixes(unittest.TestCase):
    def test_a_secret_becomes_a_lookup_in_its_language(self):
        """Python, shell, workflow, JavaScript, SQL and TOML each get their own kind of lookup."""
        value = "Zq8-xW2_pL9mK4vB7nT1"
        cases = [
            ("a.py", f'TOKEN = os.environ.get("TOKEN", "{value}")', 'TOKEN = os.environ.get("TOKEN", "")'),
            ("a.py", f'NPM_TOKEN = "{value}"', 'import os\nNPM_TOKEN = os.environ.get("NPM_TOKEN", "")'),
            ("login.sh", f"echo '{value}' | docker login", 'echo "${LOGIN_SECRET}" | docker login'),
            (".github/workflows/d.yml", f"      TOKEN: {value}", "      TOKEN: ${{ secrets.TOKEN }}"),
            ("web/c.js", f'  apiKey: "{value}",', "  apiKey: process.env.API_KEY,"),
            ("m.sql", f"CREATE USER ops WITH PASSWORD '{value}';", "CREATE USER ops WITH PASSWORD :'ops_password';"),
            ("app.toml", f'api_key = "{value}"', 'api_key = ""'),
        ]
        for path, before, after in cases:
            with self.subTest(path=path):
                self.assertEqual(audit_agent.fix_file(path, before, [value]), after)


class TestBaseline(unittest.TestCase):
    @classmethod
    def setUpClass(cls):
        cls.episodes = {}
        for index in FIRST_OF_EACH:
            plan = splits.plan_for("dev", index)
            cls.episodes[plan.scenario] = (plan, audit_agent.play_local(plan))

    def test_it_removes_leaks_but_cannot_read_the_conventions(self):
        """It removes leaks on every scenario (detection > 0, so it beats inaction's 0) but scores at
        most 0.60 on average: its variables are guesses, not the repository's convention, so the
        probes see no canary, and its rewrites blank decoys in a secret's shape."""
        for scenario, (_, episode) in self.episodes.items():
            with self.subTest(scenario=scenario):
                self.assertGreater(episode.detection, 0.0)
                self.assertGreater(episode.total, 0.0)
        mean = sum(e.total for _, e in self.episodes.values()) / len(self.episodes)
        self.assertLessEqual(mean, 0.60)
        self.assertTrue(
            any(e.facts["probes"]["passed"] < e.facts["probes"]["total"] for _, e in self.episodes.values())
        )

    def test_it_rewrites_history_that_holds_a_secret(self):
        """On the history scenarios no secret it found is left in history."""
        for scenario in ("git_basics", "legacy_audit"):
            plan, episode = self.episodes[scenario]
            with self.subTest(scenario=scenario):
                self.assertNotEqual(episode.facts["history"], "missing")
                self.assertFalse(
                    [s for s, where in episode.facts["left"].items() if where.get("history")], episode.facts["left"]
                )

    def test_it_sees_only_the_prompt_and_its_tool_results(self):
        """The first decision is the same dump whatever the task; later ones follow the dump, not the plan."""
        first = [audit_agent.decide(prompt(splits.plan_for("dev", i)).user, []) for i in (0, 9)]
        self.assertEqual(first[0], first[1])
        self.assertEqual(first[0], [audit_agent.bash(audit_agent.DISCOVER)])
        plan = splits.plan_for("dev", 12)
        with LocalWorkspace(plan) as ws:
            dump = ws.bash(audit_agent.DISCOVER).stdout
            (fix,) = audit_agent.decide(prompt(plan).user, [dump])
            after = ws.bash(fix["arguments"]["command"]).stdout
        self.assertEqual(audit_agent.decide(prompt(plan).user, [dump, after]), audit_agent.DONE)
        self.assertEqual(audit_agent.decide("", [after]), audit_agent.DONE)


if __name__ == "__main__":
    unittest.main()
