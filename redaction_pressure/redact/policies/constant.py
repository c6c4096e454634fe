"""The constant answer: one rule set fitted on train tasks, then used unchanged on every task.

It is the strongest memoriser we could build automatically, and the proof that the
corpus rewards reading the prompt: whatever it scores on dev is what a model can earn
without looking at a task's shown records.

This module is what runs: `constant_rules(level)` reads the answer committed for a level
(`constant_rules.json` next to this module for the standard level, `constant_rules_<level>.json`
for the others), and `save` writes one in that format. The answer is fitted offline by
`fitting.fit` (candidates mined by `mining.mine`); `benchmarks/fit_constant.py` refits it
and prints its scores on train and dev.
"""

from __future__ import annotations

import json
from collections.abc import Sequence
from functools import lru_cache
from pathlib import Path

from redaction_pressure.redact.rules import Rule

RULES_FILE = Path(__file__).with_name("constant_rules.json")
"""The standard level's fitted answer; another level's is `constant_rules_<level>.json`."""


def rules_file(difficulty: str = "standard") -> Path:
    """Where the answer fitted on `difficulty`'s train tasks is committed."""
    return RULES_FILE if difficulty == "standard" else RULES_FILE.with_name(f"constant_rules_{difficulty}.json")


@lru_cache(maxsize=4)
def constant_rules(difficulty: str = "standard") -> list[Rule]:
    """The committed answer fitted on `difficulty`'s train tasks."""
    data = json.loads(rules_file(difficulty).read_text())
    return [Rule(rule["pattern"], rule["replacement"]) for rule in data["rules"]]


def save(rules: Sequence[Rule], note: dict, difficulty: str = "standard") -> None:
    """Commit `rules` as `difficulty`'s answer, with `note` (what it was fitted on, its scores)."""
    data = {"note": note, "rules": [{"pattern": r.pattern, "replacement": r.replacement} for r in rules]}
    rules_file(difficulty).write_text(json.dumps(data, indent=1) + "\n")


__all__ = ["RULES_FILE", "constant_rules", "rules_file", "save"]
