"""The non-LLM policies that answer from a user prompt alone, by name (what `serve --policy` runs).

Each takes the user prompt's text and returns rules; none sees a task's records or spans.
`prefix` and `literal` read the secrets the prompt lists; `induction` reads the shown
records too; the others ignore the prompt (`constant` is one answer fitted on train).
"""

from __future__ import annotations

from collections.abc import Callable

from redaction_pressure.policies.constant import constant_rules
from redaction_pressure.policies.induction import induction_rules
from redaction_pressure.policies.reference import (
    after_separator_rules,
    delete_everything_rules,
    literal_rules_for,
    long_token_rules,
    prefix_rules_for,
    scanner_rules,
)
from redaction_pressure.prompt import parse_user_prompt
from redaction_pressure.rules import Rule


def _listed(prompt: str) -> list[str]:
    return [value for record in parse_user_prompt(prompt) for _, value in record.secrets]


PROMPT_POLICIES: dict[str, Callable[[str], list[Rule]]] = {
    "induction": induction_rules,
    "prefix": lambda prompt: prefix_rules_for(_listed(prompt)),
    "literal": lambda prompt: literal_rules_for(_listed(prompt)),
    "constant": lambda prompt: constant_rules(),
    "after_separator": lambda prompt: after_separator_rules(),
    "long_tokens": lambda prompt: long_token_rules(),
    "delete_everything": lambda prompt: delete_everything_rules(),
    "scanner": lambda prompt: scanner_rules(),
    "no_rules": lambda prompt: [],
}
"""Policy name -> rules from the user prompt. The best is `induction` (0.94 on dev)."""
