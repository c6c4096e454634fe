"""secrets-audit's bounded inflation: small files that would inflate to gigabytes end as
`oversized`, within the episode's budget.
"""

from __future__ import annotations

import unittest

from redaction_pressure.audit import inflate, programs
from redaction_pressure.audit.local import LocalWorkspace
from redaction_pressure.audit.rubric import score_facts
from redaction_pressure.audit.scenarios import build
from tests.support import bombs


class TestBombs(unittest.TestCase):
    """Small files that would inflate to gigabytes end as `oversized`, within the episode's budget."""

    def test_every_bomb_is_oversized_with_every_secret_left(self):
        """Planted after the gold fix, in the object store and in the working tree: oversized, total 0."""
        places = {
            "delta_chain_pack": [
                ("legacy_audit", ".git/objects/pack/pack-bomb.pack"),
                ("cloud_provisioning", "assets/data.pack"),
            ],
            "loose_object": [("legacy_audit", ".git/objects/ab/" + "c" * 38)],
            "gzip_second_member": [("database_layer", "logs/notes.gz")],
            "zip_member": [("database_layer", "assets/backup.zip")],
        }
        for name, where in places.items():
            data = bombs.BOMBS[name]()
            for scenario, path in where:
                with self.subTest(bomb=name, at=path):
                    plan = build(scenario, 11)
                    with LocalWorkspace(plan) as ws:
                        self.assertEqual(ws.bash(programs.oracle_script(plan)).returncode, 0)
                        target = ws.repo / path
                        target.parent.mkdir(parents=True, exist_ok=True)
                        target.write_bytes(data)
                        facts = ws.facts(steps=1)
                    self.assertLessEqual(facts.get("inflated", 0), inflate.INFLATION_BYTES)
                    if name == "loose_object":  # it understates its size: a damaged store, not a bomb read
                        self.assertEqual(facts["history"], "corrupt", facts.get("reason"))
                        self.assertIn("s1", facts["left"])
                        continue
                    self.assertEqual(
                        (facts["history"], set(facts["left"])),
                        ("oversized", {s.id for s in plan.secrets}),
                        facts.get("reason"),
                    )
                    self.assertEqual(score_facts(facts, plan.budget).total, 0.0)


if __name__ == "__main__":
    unittest.main()
