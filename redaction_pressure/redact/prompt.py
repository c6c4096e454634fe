"""The prompt: what the model is asked to do, and the shown records with their secrets.

The system prompt states the task, the exact answer format and its limits, and how
the rules are judged. The user prompt lists the shown records, each with its text and
its secrets as exact JSON strings with their kinds. Every split is framed the same way.
"""

from __future__ import annotations

import json
import re
from collections.abc import Sequence
from typing import NamedTuple

from redaction_pressure.redact.rules import MAX_PATTERN_CHARS, MAX_RULES
from redaction_pressure.redact.scanner import EPISODE_BUDGET_SECONDS, MAX_MATCHES
from redaction_pressure.redact.static_check import MAX_REPEAT_BOUND, MAX_REPEAT_PRODUCT
from redaction_pressure.spans import Record

SYSTEM_PROMPT = f"""\
You write redaction rules for a stream of text records: config files, logs, .env files, \
SQL, CI workflows, shell scripts and similar documents.

You are shown the first records of a stream with every secret in them listed. Your \
rules will then run on later records of the same stream that you do not see: the same \
kinds of documents written the same way (the same key names, layouts and token formats), \
with new secret values. Each stream has its own conventions, and look-alikes that are not \
secrets sit beside the secrets: documented example keys, placeholders and references to \
secrets by name, settings such as TTLs under secret-sounding names, commit SHAs, UUIDs and \
other ids, hashes, public keys and a vendor's public identifiers (which may look just like \
its secret tokens), test fixtures (visibly fake, or marked with an allowlist comment), and \
text already reading [REDACTED]. A value in a shown record that is not listed as a secret \
is not one. A rule must remove each secret value completely, and nothing else: not the key \
name, the quotes, a "Bearer " prefix or any look-alike. Everything that is not a secret must \
survive untouched.

Answer with one JSON object and nothing else (it may be wrapped in a single ```json fence):
{{"rules": [{{"pattern": "<regex>", "replacement": "[REDACTED]"}}]}}

Limits:
- at most {MAX_RULES} rules; each pattern has 1 to {MAX_PATTERN_CHARS} characters;
- "replacement" is exactly "[REDACTED]" or "" (nothing else is accepted);
- patterns use the Python `regex` module syntax, inline flags only such as (?i) or (?s); \
fuzzy matching, repeat bounds above {MAX_REPEAT_BOUND} and nested repeats whose bounds multiply past {MAX_REPEAT_PRODUCT} (such as (?:x{{0,100}}){{0,200}}) are rejected;
- every rule runs on the original text of every record; the union of all matches is removed;
- a rule that matches the empty string, more than {MAX_MATCHES} matches in total, or more \
than {EPISODE_BUDGET_SECONDS:g} second of matching time makes the whole answer score 0, as \
does any malformed answer.

Scoring: recall (a secret counts only if every character of it is removed), precision \
(the share of removed characters that belong to fully removed secrets), and a bonus \
when every secret is removed and nothing else is touched."""


def user_prompt(shown: Sequence[Record], hidden_count: int) -> str:
    """The user turn: the shown records, each with its secrets listed exactly."""
    blocks = [
        f"Here are the first {len(shown)} records of the stream. Your rules will run on the "
        f"next {hidden_count} records.\n"
    ]
    for number, record in enumerate(shown, start=1):
        lines = [f'<record number="{number}" kind="{record.family}">', record.text, "</record>"]
        if record.secrets:
            lines.append(f"Secrets in record {number} (exact values, JSON-encoded):")
            lines += [f"- {span.kind}: {json.dumps(record.value(span))}" for span in record.secrets]
        else:
            lines.append(f"Record {number} has no secrets.")
        blocks.append("\n".join(lines) + "\n")
    blocks.append("Everything not listed as a secret must survive. Reply with the JSON object of rules.")
    return "\n".join(blocks)


class PromptRecord(NamedTuple):
    """A shown record as a model reads it: its kind, its text and its listed secrets."""

    family: str
    text: str
    secrets: tuple[tuple[str, str], ...]
    """(kind, exact value) pairs, in the order the prompt lists them."""


_RECORD = re.compile(
    r'<record number="(\d+)" kind="([a-z0-9_]+)">\n(.*?)\n</record>\n'
    r'(?:Secrets in record \1 \(exact values, JSON-encoded\):\n((?:- [a-z0-9_]+: "[^\n]*"\n)*)|Record \1 has no secrets\.\n)',
    re.DOTALL,
)


def parse_user_prompt(user: str) -> list[PromptRecord]:
    """The shown records of a user prompt, read back from its text alone (inverse of `user_prompt`)."""
    records = []
    for match in _RECORD.finditer(user):
        secrets = []
        for line in (match.group(4) or "").splitlines():
            kind, _, value = line[2:].partition(": ")
            secrets.append((kind, json.loads(value)))
        records.append(PromptRecord(match.group(2), match.group(3), tuple(secrets)))
    return records
