"""Policies: functions from a task (or only its prompt) to the rules a model would answer with.

`reference` holds the oracle, the exploits and the simple baselines; `induction` reads
only the prompt; `constant` is one answer fitted on train tasks and used unchanged.
"""

from __future__ import annotations

from redaction_pressure.redact.policies.constant import constant_rules
from redaction_pressure.redact.policies.induction import induction_rules
from redaction_pressure.redact.policies.reference import (
    ScannerUnavailable,
    after_separator_rules,
    copy_rules,
    delete_everything_rules,
    first_character_rules,
    literal_rules,
    long_token_rules,
    oracle_rules,
    prefix_rules,
    reply,
    scanner_pieces,
    scanner_rules,
)

__all__ = [
    "ScannerUnavailable",
    "after_separator_rules",
    "constant_rules",
    "copy_rules",
    "delete_everything_rules",
    "first_character_rules",
    "induction_rules",
    "literal_rules",
    "long_token_rules",
    "oracle_rules",
    "prefix_rules",
    "reply",
    "scanner_pieces",
    "scanner_rules",
]
