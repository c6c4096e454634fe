"""Reference policies: the oracle, known exploits, and non-LLM baselines.

Each policy maps a task to the rules it would answer with. The oracle knows the hidden
secrets and redacts exactly them, so it must score 1.0; it is how `Task.validate`
proves every task solvable within the answer limits. The exploits are policies a
reward must not pay for (first-character deletion, delete-everything). The baselines
only see what a model sees (the prompt's shown records) or general knowledge:

- `literal`: redact exactly the secret values shown in the prompt (memorisation);
- `prefix`: one rule per key prefix seen in the prompt's secrets, plus the token after it;
- `scanner`: the regex detectors of Yelp's detect-secrets, read from the installed
  package at run time (an optional extra), each cut down to the part it reports.

Secrets are addressed by their shortest prefix that occurs in the hidden texts only
where the secret itself does, followed by a length-exact wildcard, so long values such
as PEM blocks fit the pattern limit. Pieces are packed into as few rules as fit.
"""

from __future__ import annotations

import json
import re
from collections.abc import Callable, Iterable, Sequence

import regex

from redaction_pressure.redact.rules import MAX_PATTERN_CHARS, MAX_RULES, Rule, compile_rules
from redaction_pressure.redact.scanner import REDACTED
from redaction_pressure.redact.static_check import MAX_REPEAT_BOUND, skip_class, skip_escape
from redaction_pressure.spans import Record

_MIN_PREFIX = 6
_PREFIX = re.compile(r"[A-Za-z0-9]{2,12}[_-](?:[a-z]{2,5}[_-])?|[A-Za-z]{3,4}")
"""A key prefix: `ghp_`, `sk_live_`, `xoxb-`, `glpat-`, `github_pat_`, else up to 4 letters (`AKIA`)."""
_TOKEN_TAIL = r"[A-Za-z0-9_+/=.-]+"


class ScannerUnavailable(RuntimeError):
    """detect-secrets is not installed (it is the optional `scanners` extra)."""


def oracle_rules(hidden: Sequence[Record]) -> list[Rule]:
    """Rules that remove exactly the hidden secrets."""
    return pack(_secret_pieces(hidden, _whole))


def first_character_rules(hidden: Sequence[Record]) -> list[Rule]:
    """Rules that delete only the first character of every hidden secret."""
    return pack(_secret_pieces(hidden, _first_char))


def delete_everything_rules() -> list[Rule]:
    return [Rule("(?s).+", REDACTED)]


PEM_BLOCK = r"-----BEGIN (?:[A-Z0-9]+ )*PRIVATE KEY-----[\s\S]*?-----END (?:[A-Z0-9]+ )*PRIVATE KEY-----"


def long_token_rules() -> list[Rule]:
    """A context-free heuristic: delete long tokens mixing upper case, lower case and digits, and PEM blocks."""
    token = r"(?<![A-Za-z0-9+/=_.-])(?=[A-Za-z0-9+/=_.-]*\d)(?=[A-Za-z0-9+/=_.-]*[a-z])(?=[A-Za-z0-9+/=_.-]*[A-Z])[A-Za-z0-9+/=_.-]{20,}"
    return [Rule(token, REDACTED), Rule(PEM_BLOCK, REDACTED)]


def after_separator_rules() -> list[Rule]:
    """A context-free heuristic: delete every value after `=` or `: ` (quoted or not), and PEM blocks."""
    value = r"""(?<=[=:][ \t]?["']?)[^\s"',;]{8,}"""
    return [Rule(value, REDACTED), Rule(PEM_BLOCK, REDACTED)]


def literal_rules(shown: Sequence[Record]) -> list[Rule]:
    """Rules that redact exactly the secret values the prompt shows (memorisation)."""
    return literal_rules_for([record.value(span) for record in shown for span in record.secrets])


def literal_rules_for(values: Sequence[str]) -> list[Rule]:
    """`literal_rules` from the listed secret values alone (what a prompt gives)."""
    return pack(_fitting(regex.escape(v) for v in sorted(set(values))), strict=False)


def prefix_rules(shown: Sequence[Record]) -> list[Rule]:
    """One rule per key prefix seen in the prompt's secrets: the prefix and the token after it."""
    return prefix_rules_for([record.value(span) for record in shown for span in record.secrets])


def prefix_rules_for(values: Sequence[str]) -> list[Rule]:
    """`prefix_rules` from the listed secret values alone, in the order listed."""
    prefixes: list[str] = []
    for value in values:
        match = _PREFIX.match(value)
        if match and match.group() not in prefixes:
            prefixes.append(match.group())
    return [Rule(regex.escape(prefix) + _TOKEN_TAIL, REDACTED) for prefix in prefixes[:MAX_RULES]]


_KEY_BEFORE = re.compile(r"""([A-Za-z_][A-Za-z0-9_.-]*)["']?[ \t]*[:=][ \t]*["']?$""")
_KEY_VALUE = r"""[^\s"'`<>{}\[\],;]+"""


def copy_rules(shown: Sequence[Record]) -> list[Rule]:
    """Copy the listed secrets' prefixes and key names: `prefix_rules`, plus, for each listed
    secret that sits under a key (`NAME=`, `name: `, `"name": "`), the value after that key."""
    pieces = [rule.pattern for rule in prefix_rules(shown)]
    for record in shown:
        for span in record.secrets:
            line = record.text[record.text.rfind("\n", 0, span.start) + 1 : span.start]
            match = _KEY_BEFORE.search(line)
            if match:
                key = regex.escape(match.group(1))
                piece = rf"""(?<=(?<![\w.-]){key}["']?[ \t]*[:=][ \t]*["']?){_KEY_VALUE}"""
                if piece not in pieces:
                    pieces.append(piece)
    return pack(_fitting(pieces), strict=False)


def scanner_rules() -> list[Rule]:
    """detect-secrets' regex detectors as rules; raises ScannerUnavailable without the extra."""
    return pack(_fitting(scanner_pieces()), strict=False)


def scanner_pieces() -> list[str]:
    """Each detect-secrets denylist pattern, as one inline-flagged regex piece."""
    try:
        from detect_secrets.core.plugins.util import get_mapping_from_secret_type_to_class
        from detect_secrets.plugins.base import RegexBasedDetector
    except ImportError as exc:
        raise ScannerUnavailable(
            "the scanner policy needs detect-secrets: pip install 'redaction-pressure[scanners]'"
        ) from exc
    pieces = []
    for _, detector in sorted(get_mapping_from_secret_type_to_class().items()):
        if not issubclass(detector, RegexBasedDetector):
            continue  # entropy and keyword detectors have no patterns to run
        for pattern in detector().denylist:
            flags = "".join(f for f, bit in (("i", re.IGNORECASE), ("x", re.VERBOSE)) if pattern.flags & bit)
            # A verbose pattern's comments may hold parentheses: keep it whole.
            body = pattern.pattern if "x" in flags else _reported_part(pattern.pattern)
            pieces.append(f"(?{flags}:{body})" if flags else f"(?:{body})")
    return pieces


def _reported_part(pattern: str) -> str:
    """Cut a detector down to the value it reports, when its shape says which part that is.

    detect-secrets reports capture group 1 when a pattern has one. A pattern with a single
    top-level capturing group after some context and no top-level alternation,
    `ctx(value)ctx`, becomes `(?<=ctx)(?:value)(?=ctx)`, so only the value is removed. A
    group at the very start is a prefix alternation (`(ghp|gho)_...`), not a value: such
    patterns, like all others, are kept whole.
    """
    depth, groups, alternation, i = 0, [], False, 0
    while i < len(pattern):
        c = pattern[i]
        if c == "\\":
            i = skip_escape(pattern, i)
            continue
        if c == "[":
            i = skip_class(pattern, i)
            continue
        if c == "(":
            if depth == 0 and not pattern.startswith("(?", i):
                groups.append([i, None])
            depth += 1
        elif c == ")":
            depth -= 1
            if depth == 0 and groups and groups[-1][1] is None:
                groups[-1][1] = i
        elif c == "|" and depth == 0:
            alternation = True
        i += 1
    if alternation or len(groups) != 1 or groups[0][1] is None or groups[0][0] == 0:
        return pattern
    start, end = groups[0]
    before, inner, after = pattern[:start], pattern[start + 1 : end], pattern[end + 1 :]
    if after[:1] in ("*", "+", "?", "{"):
        return pattern
    return f"(?<={before})(?:{inner})" + (f"(?={after})" if after else "")


def _fitting(pieces: Iterable[str]) -> list[str]:
    """The pieces this environment accepts: short enough and compilable."""
    fit = [p for p in pieces if len(p) + 4 <= MAX_PATTERN_CHARS]
    return [p for p in fit if not compile_rules([Rule(p, REDACTED)])[1]]


def reply(rules: Sequence[Rule]) -> str:
    """The JSON reply a model would send for `rules`."""
    return json.dumps({"rules": [{"pattern": r.pattern, "replacement": r.replacement} for r in rules]})


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


def pack(pieces: list[str], strict: bool = True) -> list[Rule]:
    """Pack pieces into alternations of at most the pattern limit.

    Strict (the oracle): more than the rule limit is a corpus bug and raises. Otherwise
    (baselines) the first rules that fit the limit are kept, as a model would have to.
    """
    rules: list[str] = []
    pieces = list(dict.fromkeys(pieces))
    for piece in pieces:
        if rules and len(rules[-1]) + 1 + len(piece) + 4 <= MAX_PATTERN_CHARS:
            rules[-1] += "|" + piece
        else:
            rules.append(piece)
    patterns = [f"(?:{body})" if len(body) + 4 <= MAX_PATTERN_CHARS else body for body in rules]
    if not strict:
        return [Rule(p, REDACTED) for p in patterns if len(p) <= MAX_PATTERN_CHARS][:MAX_RULES]
    if any(len(p) > MAX_PATTERN_CHARS for p in patterns) or len(patterns) > MAX_RULES:
        raise ValueError(
            f"the secrets need {len(patterns)} rules or a piece over {MAX_PATTERN_CHARS} "
            "characters; the corpus must keep every task solvable within the limits"
        )
    return [Rule(p, REDACTED) for p in patterns]
