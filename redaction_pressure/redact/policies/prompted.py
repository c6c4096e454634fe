"""The non-LLM policies that answer from a user prompt alone, by name (what `serve --policy` runs).

Each takes the user prompt's text and returns rules; none sees a task's records or spans.
`prefix`, `literal` and `copy` read the secrets the prompt lists (`copy` also the key each sits under); `induction` reads the shown
records too; the others ignore the prompt (`constant` is one answer fitted on train).
"""

from __future__ import annotations

from collections.abc import Callable

from redaction_pressure.redact.policies.constant import constant_rules
from redaction_pressure.redact.policies.induction import induction_rules
from redaction_pressure.redact.policies.reference import (
    after_separator_rules,
    copy_rules,
    delete_everything_rules,
    literal_rules_for,
    long_token_rules,
    prefix_rules_for,
    scanner_rules,
)
from redaction_pressure.redact.prompt import parse_user_prompt
from redaction_pressure.redact.rules import Rule
from redaction_pressure.spans import Record, Span


def _listed(prompt: str) -> list[str]:
    return [value for record in parse_user_prompt(prompt) for _, value in record.secrets]


def _shown(prompt: str) -> list[Record]:
    """The shown records with their listed secrets located in the text (every occurrence)."""
    records = []
    for shown in parse_user_prompt(prompt):
        spans = []
        for kind, value in shown.secrets:
            at = shown.text.find(value)
            while value and at >= 0:
                spans.append(Span(start=at, end=at + len(value), kind=kind))
                at = shown.text.find(value, at + len(value))
        records.append(
            Record(
                text=shown.text,
                secrets=tuple(sorted(set(spans), key=lambda s: (s.start, s.end))),
                decoys=(),
                family=shown.family,
            )
        )
    return records


PROMPT_POLICIES: dict[str, Callable[[str], list[Rule]]] = {
    "induction": induction_rules,
    "prefix": lambda prompt: prefix_rules_for(_listed(prompt)),
    "literal": lambda prompt: literal_rules_for(_listed(prompt)),
    "copy": lambda prompt: copy_rules(_shown(prompt)),
    "constant": lambda prompt: constant_rules(),
    "after_separator": lambda prompt: after_separator_rules(),
    "long_tokens": lambda prompt: long_token_rules(),
    "delete_everything": lambda prompt: delete_everything_rules(),
    "scanner": lambda prompt: scanner_rules(),
    "no_rules": lambda prompt: [],
}
"""Policy name -> rules from the user prompt. The best is `induction` (0.94 on dev)."""
