"""Induction: rules written from the prompt alone, the way a careful reader would.

The policy reads the user prompt's text (never the task's records or spans): the shown
records and the secrets listed for each. For every listed occurrence it looks for the
smallest piece `(?<=LEFT)VALUE(?=RIGHT)` that removes, on the shown records, only whole
listed secrets and covers this one:

- LEFT is the last k units of the text before the value on its line (a unit is a run of
  word characters or one other character; digit runs generalise to `\\d+`), tried for
  k = 1, 2, ...; a leading word unit gets a word boundary;
- VALUE is first the broadest class the delimiters allow (`[^\\s"'...]+`); if that also
  matches text that is not a secret, the characters of those look-alikes that no secret
  of the piece uses are excluded, and then generic guards are tried (no run of six equal
  characters, no fake-sounding word, no `EXAMPLE` ending, no counting sequence);
- RIGHT is the character that follows the value (or the end of the line).

PEM blocks get one block rule; values no context can pin get a shape rule (their literal
prefix, their character class, their length range). Pieces are packed into at most 24
rules. Everything needed is in the prompt, since the task's hidden records reuse the
shown records' slots; this policy is the proof that the tasks are solvable from it.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

import regex

from redaction_pressure.redact.policies.reference import PEM_BLOCK, pack
from redaction_pressure.redact.prompt import PromptRecord, parse_user_prompt
from redaction_pressure.redact.rules import MAX_PATTERN_CHARS, Rule

MAX_UNITS = 12
_FAKE_WORDS = ("fake", "dummy", "test", "sample", "notreal", "example", "mock", "xxxx")
_STRUCTURAL = "${}<>[]()%:@#|,;!*?^&=+/~.-_"
"""Characters a value class may drop to avoid a look-alike, most structural (least likely in a secret) first."""
_GUARDS = (
    ("allowlisted", r"(?![^\n]*(?:allowlist secret|gitleaks:allow|trufflehog:ignore|nosec|noqa))"),
    ("repeat", r"(?!\S*?(?P<run>\S)(?P=run){5})"),
    ("words", r"(?!\S*?(?i:" + "|".join(_FAKE_WORDS) + "))"),
    ("sequence", r"(?!\S*?(?i:0123456789|abcdef0123))"),
)


@dataclass(frozen=True)
class _Occurrence:
    record: int
    start: int
    end: int

    def key(self) -> tuple[int, int, int]:
        return (self.record, self.start, self.end)


def induction_rules(user_prompt: str) -> list[Rule]:
    """Rules induced from the shown records and listed secrets of a user prompt."""
    records = parse_user_prompt(user_prompt)
    texts = [r.text for r in records]
    occurrences = _occurrences(records)
    spans = {o.key() for o in occurrences}
    pieces: list[str] = []
    covered: set[tuple[int, int, int]] = set()
    for occurrence in occurrences:
        if occurrence.key() in covered:
            continue
        for piece in _candidates(texts, occurrence, spans):
            hits = _exact_hits(piece, texts, spans)
            if hits is not None and occurrence.key() in hits:
                pieces.append(piece)
                covered |= hits
                break
    return pack([p for p in pieces if len(p) + 4 <= MAX_PATTERN_CHARS], strict=False)


def _occurrences(records: Sequence[PromptRecord]) -> list[_Occurrence]:
    found = []
    for n, record in enumerate(records):
        for value in dict.fromkeys(value for _, value in record.secrets):
            at = record.text.find(value)
            while at >= 0:
                found.append(_Occurrence(n, at, at + len(value)))
                at = record.text.find(value, at + len(value))
    return found


def _exact_hits(piece: str, texts: Sequence[str], spans: set[tuple[int, int, int]]) -> set[tuple[int, int, int]] | None:
    """The listed secrets `piece` removes on the shown texts, or None if it touches anything else."""
    try:
        pattern = regex.compile(piece)
    except regex.error:
        return None
    hits = set()
    for n, text in enumerate(texts):
        for match in pattern.finditer(text, timeout=0.5):
            key = (n, match.start(), match.end())
            if key not in spans:
                return None
            hits.add(key)
    return hits


def _candidates(texts: Sequence[str], occ: _Occurrence, spans: set[tuple[int, int, int]]):
    text = texts[occ.record]
    value = text[occ.start : occ.end]
    if value.startswith("-----BEGIN"):
        yield PEM_BLOCK
    line_start = text.rfind("\n", 0, occ.start) + 1
    previous_start = text.rfind("\n", 0, max(line_start - 1, 0)) + 1 if line_start else 0
    right, stop = _right(text, occ.end)
    one_line = _lefts(split_units(text[line_start : occ.start]), 0) or [r"(?m:^)"]
    # The context may reach back into the previous line (a YAML `- name:` above `value:`),
    # but only once the value's own line cannot pin it: the line above varies more.
    two_lines = _lefts(split_units(text[previous_start : occ.start]), len(one_line))
    # Broad classes with ever longer contexts first; narrowed classes and guards only after.
    for lefts in (one_line, two_lines):
        for narrow in (False, True):
            for left in lefts:
                for body in _bodies(texts, left, right, stop, value, spans, narrow):
                    yield f"(?<={left}){body}(?={right})"
    yield _shape(value)


def _lefts(units: list[str], skip: int) -> list[str]:
    """Contexts of 1, 2, ... units (from `skip` + 1 on), stopping before a unit that is a value."""
    stable = next((k for k, unit in enumerate(units) if _variable(unit)), len(units))
    return [_left(units[:k]) for k in range(skip + 1, min(stable, MAX_UNITS) + 1)]


def split_units(before: str) -> list[str]:
    """Units of `before`, right to left: runs of word characters or of blanks, or single other characters."""
    units, i = [], len(before)
    while i > 0:
        j = i - 1
        if before[j].isalnum() or before[j] == "_":
            while j > 0 and (before[j - 1].isalnum() or before[j - 1] == "_"):
                j -= 1
        elif before[j] in " \t":
            while j > 0 and before[j - 1] in " \t":
                j -= 1
        units.append(before[j:i])
        i = j
    return units


def _variable(unit: str) -> bool:
    """A unit that is a value, not wording: letters mixed with digits (ids, hashes, timestamps)."""
    return len(unit) > 2 and any(c.isdigit() for c in unit) and any(c.isalpha() for c in unit)


def _left(units: Sequence[str]) -> str:
    out = ""
    for unit in reversed(units):
        if unit[0].isalnum() or unit[0] == "_":
            out += "".join(
                r"\d+" if part.isdigit() else regex.escape(part) for part in regex.split(r"(\d+)", unit) if part
            )
        else:
            out += regex.escape(unit)
    first = units[-1]
    if first[0].isalnum() or first[0] == "_":
        out = r"(?<![A-Za-z0-9_.-])" + out
    return out


def _right(text: str, end: int) -> tuple[str, str]:
    """The lookahead after a value, and the character it stops at (any whitespace stands for all)."""
    if end >= len(text) or text[end].isspace():
        return r"\s|\Z", "\n"
    return regex.escape(text[end]), text[end]


def _bodies(
    texts: Sequence[str], left: str, right: str, stop: str, value: str, spans: set[tuple[int, int, int]], narrow: bool
):
    """Value classes for one context: the broadest, or narrowed by the look-alikes it would hit."""
    stops = ({"\n", " ", "\t", '"', "'", "`", stop}) - set(value)
    broad = _negated(stops)
    if not narrow:
        yield broad + "+"
        return
    # What the broad class would take that is not a secret: drop characters no secret uses.
    probe = regex.compile(f"(?<={left}){broad}+(?={right})")
    used = set(value)
    for n, text in enumerate(texts):
        for match in probe.finditer(text, timeout=0.5):
            if (n, match.start(), match.end()) in spans:
                used |= set(match.group())
    # Exclude, for each look-alike the broad class takes, one character no secret here uses:
    # the most structural one (`$`, `{`, `<`, ...) first. Letters and digits are never
    # excluded: hidden values draw them freely.
    strangers: set[str] = set()
    for text_n, text in enumerate(texts):
        for match in probe.finditer(text, timeout=0.5):
            if (text_n, match.start(), match.end()) in spans or set(match.group()) & strangers:
                continue
            options = [c for c in match.group() if c not in used and not c.isalnum()]
            if options:
                strangers.add(
                    min(options, key=lambda c: _STRUCTURAL.index(c) if c in _STRUCTURAL else len(_STRUCTURAL))
                )
    if strangers:
        narrowed = _negated(stops | strangers) + "+"
        yield narrowed
    else:
        narrowed = broad + "+"
    # A fake-word guard is useless when the secret itself holds such a word (`sk_test_...`).
    guards = [g for name, g in _GUARDS if not (name == "words" and any(word in value.lower() for word in _FAKE_WORDS))]
    for guard in guards:
        yield guard + narrowed
    yield narrowed + "(?<!EXAMPLE)"
    yield "".join(guards) + narrowed + "(?<!EXAMPLE)"
    # A vendor's secret and public ids may share a context (one auth header): their prefix tells.
    # A one-letter second segment counts here (`kr.k.` secret beside `kr.m.` and `kr.key.` ids).
    for prefix in dict.fromkeys((_prefix(value), _prefix(value, shortest=1))):
        if prefix:
            yield regex.escape(prefix) + narrowed
            yield "".join(guards) + regex.escape(prefix) + narrowed + "(?<!EXAMPLE)"


def _negated(stops: set[str]) -> str:
    return "[^" + "".join(sorted({r"\s" if c in " \n\t" else regex.escape(c) for c in stops if c})) + "]"


def _prefix(value: str, shortest: int = 2) -> str:
    """A value's literal prefix: a word and its separator, and a short second segment
    (`st-key-`, `sk_live_`; of one character too with `shortest=1`: `kr.k.`)."""
    match = regex.match(rf"[A-Za-z]{{2,12}}[_.-](?:[A-Za-z0-9]{{{shortest},5}}[_.-])?", value)
    return match.group() if match else ""


def _shape(value: str) -> str:
    """A shape rule: the literal prefix up to the first non-alphanumeric separator, then the class and length."""
    prefix = _prefix(value)
    rest = value[len(prefix) :]
    classes = ""
    if any(c.islower() for c in rest):
        classes += "a-z"
    if any(c.isupper() for c in rest):
        classes += "A-Z"
    if any(c.isdigit() for c in rest):
        classes += "0-9"
    classes += "".join(sorted(regex.escape(c) for c in set(rest) if not c.isalnum()))
    n = len(rest)
    return rf"(?<![A-Za-z0-9_]){regex.escape(prefix)}[{classes}]{{{max(1, n - 2)},{n + 2}}}(?![A-Za-z0-9_])"
