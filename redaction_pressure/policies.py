"""Reference policies built from a task's records: the oracle and known exploits.

The oracle knows the hidden secrets and redacts exactly them, so it must score 1.0; it
is how `Task.validate` proves every task solvable within the answer limits. The
exploits are policies a reward must not pay for (the first-character exploit deletes
one character of each secret; delete-everything removes every character).

Each secret is addressed by its shortest prefix that occurs in the hidden texts only
where the secret itself does, followed by a length-exact wildcard, so long values such
as PEM blocks fit the pattern limit. Pieces are packed into as few rules as fit.
"""

from __future__ import annotations

import json
from collections.abc import Callable, Sequence

import regex

from redaction_pressure.rules import MAX_PATTERN_CHARS, MAX_REPEAT_BOUND, MAX_RULES, Rule
from redaction_pressure.scanner import REDACTED
from redaction_pressure.spans import Record

_MIN_PREFIX = 6


def oracle_rules(hidden: Sequence[Record]) -> list[Rule]:
    """Rules that remove exactly the hidden secrets."""
    return _pack(_secret_pieces(hidden, _whole))


def first_character_rules(hidden: Sequence[Record]) -> list[Rule]:
    """Rules that delete only the first character of every hidden secret."""
    return _pack(_secret_pieces(hidden, _first_char))


def delete_everything_rules() -> list[Rule]:
    return [Rule("(?s).+", REDACTED)]


def reply(rules: Sequence[Rule]) -> str:
    """The JSON reply a model would send for `rules`."""
    return json.dumps(
        {"rules": [{"pattern": r.pattern, "replacement": r.replacement} for r in rules]}
    )


def _whole(value: str, prefix: str) -> str:
    rest = len(value) - len(prefix)
    tail = ""
    while rest > 0:
        step = min(rest, MAX_REPEAT_BOUND)
        tail += f"[\\s\\S]{{{step}}}"
        rest -= step
    return regex.escape(prefix) + tail


def _first_char(value: str, prefix: str) -> str:
    return regex.escape(prefix[0]) + "(?=" + regex.escape(prefix[1:]) + ")"


def _secret_pieces(hidden: Sequence[Record], piece: Callable[[str, str], str]) -> list[str]:
    haystack = "\x00".join(record.text for record in hidden)
    values = sorted({record.value(span) for record in hidden for span in record.secrets})
    pieces = []
    for value in values:
        wanted = _occurrences(haystack, value)
        length = min(_MIN_PREFIX, len(value))
        while length < len(value) and _occurrences(haystack, value[:length]) != wanted:
            length += 1
        pieces.append(piece(value, value[: max(length, 2)]))
    return pieces


def _occurrences(haystack: str, needle: str) -> int:
    count, at = 0, haystack.find(needle)
    while at >= 0:
        count += 1
        at = haystack.find(needle, at + 1)
    return count


def _pack(pieces: list[str]) -> list[Rule]:
    rules: list[str] = []
    for piece in pieces:
        if rules and len(rules[-1]) + 1 + len(piece) + 4 <= MAX_PATTERN_CHARS:
            rules[-1] += "|" + piece
        else:
            rules.append(piece)
    patterns = [f"(?:{body})" if len(body) + 4 <= MAX_PATTERN_CHARS else body for body in rules]
    if any(len(p) > MAX_PATTERN_CHARS for p in patterns) or len(patterns) > MAX_RULES:
        raise ValueError(
            f"the secrets need {len(patterns)} rules or a piece over {MAX_PATTERN_CHARS} "
            "characters; the corpus must keep every task solvable within the limits"
        )
    return [Rule(p, REDACTED) for p in patterns]
