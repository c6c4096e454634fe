"""The baseline ladder: non-LLM policies scored over a split, to show where the reward lands.

Each rung is a named policy mapping a task to rules. `run_ladder` scores every policy on
every task with `score_reply` and averages the reward and its components, so the table
says how much headroom a learned policy has between memorisation, naive prefixes, a
production scanner's patterns and the oracle's 1.0.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from functools import lru_cache
from statistics import fmean

from redaction_pressure.redact import policies
from redaction_pressure.redact.api import RedactionTask, score_reply
from redaction_pressure.redact.rules import Rule


@dataclass(frozen=True)
class Policy:
    name: str
    description: str
    rules: Callable[[RedactionTask], list[Rule]]


@dataclass(frozen=True)
class LadderRow:
    """One policy's averages over the tasks; `available` is False when its extra is missing."""

    policy: str
    description: str
    tasks: int
    available: bool = True
    reward: float = 0.0
    recall: float = 0.0
    precision: float = 0.0
    clean_gate: float = 0.0
    valid: float = 0.0
    errors: dict[str, int] = field(default_factory=dict)
    note: str = ""


@lru_cache(maxsize=1)
def _scanner() -> tuple[Rule, ...]:
    return tuple(policies.scanner_rules())


LADDER: tuple[Policy, ...] = (
    Policy("oracle", "rules built from the hidden secrets (the ceiling)", lambda t: policies.oracle_rules(t.hidden)),
    Policy("induction", "rules induced from the prompt alone: each listed secret's key context and value class, guarded against the look-alikes beside it", lambda t: policies.induction_rules(t.prompt.user)),
    Policy("constant", "one answer fitted on the level's train tasks (mined contexts, shapes, key words, sibling keys, shared prefixes), the same for every task", lambda t: policies.constant_rules(t.difficulty)),
    Policy("copy", "copy the listed secrets' prefixes and key names: each prefix or key, plus the token after it", lambda t: policies.copy_rules(t.shown)),
    Policy("prefix", "one rule per key prefix seen in the prompt, plus the token after it", lambda t: policies.prefix_rules(t.shown)),
    Policy("after_separator", "every value of 8+ characters after = or : (quoted or not), and PEM blocks", lambda t: policies.after_separator_rules()),
    Policy("long_tokens", "every token of 20+ characters mixing upper case, lower case and digits, and PEM blocks", lambda t: policies.long_token_rules()),
    Policy("delete_everything", "one rule (?s).+", lambda t: policies.delete_everything_rules()),
    Policy("scanner", "detect-secrets' regex detectors (optional extra)", lambda t: list(_scanner())),
    Policy("no_rules", "an empty rule list", lambda t: []),
    Policy("first_character", "delete the first character of every hidden secret", lambda t: policies.first_character_rules(t.hidden)),
    Policy("literal", "redact exactly the secret values shown in the prompt", lambda t: policies.literal_rules(t.shown)),
)  # fmt: skip
POLICIES = {policy.name: policy for policy in LADDER}


def run_ladder(
    tasks: Sequence[RedactionTask],
    ladder: Sequence[Policy] = LADDER,
    advance: Callable[[], None] | None = None,
) -> list[LadderRow]:
    """Score every policy on every task; `advance` is called once per scored episode."""
    rows = []
    for policy in ladder:
        try:
            results = []
            for task in tasks:
                results.append(score_reply(task, policies.reply(policy.rules(task))))
                if advance:
                    advance()
        except policies.ScannerUnavailable as exc:
            rows.append(LadderRow(policy.name, policy.description, len(tasks), available=False, note=str(exc)))
            if advance:
                for _ in range(len(tasks) - len(results)):
                    advance()
            continue
        errors = Counter(error.code for result in results for error in result.errors[:1])
        rows.append(
            LadderRow(
                policy=policy.name,
                description=policy.description,
                tasks=len(results),
                reward=fmean(r.reward for r in results),
                recall=fmean(r.recall for r in results),
                precision=fmean(r.precision for r in results),
                clean_gate=fmean(r.clean_gate for r in results),
                valid=fmean(1.0 if r.valid else 0.0 for r in results),
                errors=dict(sorted(errors.items())),
            )
        )
    return rows
