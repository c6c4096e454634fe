"""Candidate pieces for the constant answer, mined from labelled train tasks (offline; `fitting` selects).

`mine` gathers, from the train tasks' labelled records:

- contexts: for every secret, the last k units of text before it (as the induction
  policy sees them), literally, with digit runs generalised, with word units
  generalised to `\\w+`, and as key-name suffixes (`(?i)\\w*api_key=`), each followed
  by a broad value class up to the character that ended the secret;
- value shapes: literal prefixes shared by secrets of several tasks, with the union of
  their character classes and their length range; JWTs; PEM blocks;
- generic heuristics: long mixed tokens, values after `=` or `: `;
- world-knowledge atoms as a red team writes them (`WORLD_KNOWLEDGE`): any key=value,
  escaped quotes included, with filters for what general knowledge calls public or fake
  (anon JWT claims, `pk_` keys, placeholders, references, digit-free settings, repeated-
  character fixtures, EXAMPLE, allowlist comments); PEM blocks, DSN and SQL passwords,
  Kubernetes name/value pairs, AWS key ids;
- cross-record atoms: the value's key name captured and named again elsewhere in the
  record (a backreference in a lookahead or a variable-length lookbehind: an
  environment look-up, an `_id` sibling, a redacted field of the same name), and
  prefix-sharing tokens (a vendor abbreviation that recurs with another marker);
- each with guarded variants that skip visibly fake values (`EXAMPLE`, six equal
  characters, fake-sounding words, counting sequences) and placeholders.

Every candidate is a pattern text of at most `MAX_PATTERN_CHARS - 4` characters; mining
is deterministic (the same tasks give the same list in the same order).
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence

import regex

from redaction_pressure.redact.policies.induction import split_units
from redaction_pressure.redact.policies.reference import PEM_BLOCK
from redaction_pressure.redact.rules import MAX_PATTERN_CHARS
from redaction_pressure.spans import Record

_FAKE = r"(?!\S*?(?P<run>\S)(?P=run){5})(?!\S*?(?i:fake|dummy|test|sample|notreal|example|mock|xxxx|0123456789))"
_ALLOWLISTED = r"(?![^\n]*(?:allowlist secret|gitleaks:allow|trufflehog:ignore|nosec|noqa))"
_PUBLIC_MARK = r"(?![A-Za-z]{1,8}[_.-]?(?i:pub|pk|id|client|public)[_.-])"
GUARDS = ("", _FAKE, _FAKE + _ALLOWLISTED, _FAKE + _ALLOWLISTED + _PUBLIC_MARK)
"""No guard; visibly fake values; also allowlisted lines; also values with a public marker in their prefix."""
_VALUE = r"""[^\s"'`$<>{}\[\]]+"""
_FAKE_TAIL = r"(?<!EXAMPLE)(?<!EXAMPLEKEY)"


def _is_word(unit: str) -> bool:
    return unit[0].isalnum() or unit[0] == "_"


def _literal(unit: str) -> str:
    if _is_word(unit):
        return "".join(r"\d+" if p.isdigit() else regex.escape(p) for p in regex.split(r"(\d+)", unit) if p)
    if unit[0] in " \t":
        return r"[ \t]+"
    return regex.escape(unit)


def _key_words(unit: str) -> list[str]:
    """The words of a key name: `BILLING_API_TOKEN`, `billingApiToken` and `billing-api-token` alike."""
    spaced = regex.sub(r"([a-z0-9])([A-Z])", r"\1_\2", unit)
    return [w.lower() for w in regex.split(r"[_.\-]+", spaced) if w]


def _contexts(text: str, start: int) -> Iterable[str]:
    """Left contexts of a value starting at `start`, generalised several ways."""
    line = text.rfind("\n", 0, start) + 1
    previous = text.rfind("\n", 0, max(line - 1, 0)) + 1 if line else 0
    units = split_units(text[previous:start])
    for k in range(1, min(len(units), 6) + 1):
        chosen = list(reversed(units[:k]))
        yield "".join(_literal(u) for u in chosen)
        yield "".join(r"\w+" if _is_word(u) else _literal(u) for u in chosen)
        words = [n for n, u in enumerate(chosen) if _is_word(u)]
        if words:
            first = words[0]
            tail = "".join(_literal(u) for u in chosen[first + 1 :])
            key = _key_words(chosen[first])
            for n in (1, 2):
                if len(key) >= n:
                    yield r"(?i:\w*" + r"[_.\-]?".join(key[-n:]) + ")" + tail


def _right(text: str, end: int) -> str:
    if end >= len(text) or text[end].isspace():
        return r"(?=\s|\Z)"
    return f"(?={regex.escape(text[end])})"


def _prefix_shapes(values: Sequence[str]) -> Iterable[tuple[str, str, str]]:
    by_prefix: dict[str, list[str]] = {}
    for value in values:
        match = regex.match(r"[A-Za-z0-9]{1,12}?[_.\-]|[A-Z]{4}(?=[A-Z2-7]{16}$)|eyJ|AIzaSy", value)
        if match:
            by_prefix.setdefault(match.group(), []).append(value)
    for prefix, group in by_prefix.items():
        if len(group) < 3:
            continue
        rest = "".join(v[len(prefix) :] for v in group)
        classes = "".join(
            c
            for c, test in (("a-z", str.islower), ("A-Z", str.isupper), ("0-9", str.isdigit))
            if any(test(ch) for ch in rest)
        )
        classes += "".join(sorted({regex.escape(ch) for ch in rest if not ch.isalnum() and ch not in "\n\\"}))
        low = min(len(v) for v in group) - len(prefix)
        high = max(len(v) for v in group) - len(prefix)
        if high > 1000 or not classes:
            continue
        yield rf"(?<![A-Za-z0-9_]){regex.escape(prefix)}", f"[{classes}]{{{max(low, 1)},{high}}}", "(?![A-Za-z0-9_])"


GENERIC = (
    ("", PEM_BLOCK, ""),
    ("", r"eyJ[A-Za-z0-9_-]+\.eyJ[A-Za-z0-9_-]+\.[A-Za-z0-9_-]+", ""),
    (
        r"(?<![A-Za-z0-9+/=_-])",
        r"(?=[A-Za-z0-9+/=_-]*[0-9])(?=[A-Za-z0-9+/=_-]*[a-z])(?=[A-Za-z0-9+/=_-]*[A-Z])[A-Za-z0-9+/=_-]{20,}",
        "",
    ),
    (r"(?<=[=:] ?[\"']?)", _VALUE, ""),
    (r"(?<=://[^:/\s@]+:)", r"[^@\s/]+", "(?=@)"),
    (r"(?<=(?i:PASSWORD|IDENTIFIED BY) ')", r"[^']+", "(?=')"),
    (r"(?<=(?:Bearer|Basic|Token) )", r"[A-Za-z0-9+/=._~-]+", ""),
)


# World-knowledge atoms, as a red team writes them (corpus 3's red team: `docs/corpus.md`): every
# key=value, quoted, unquoted or escaped inside a JSON string, with filters for what general
# knowledge says is public or fake (an anon JWT's claim, `pk_` keys, placeholders and references,
# digit-free settings, fixture bodies of one repeated character, EXAMPLE, allowlist comments);
# and the shapes a scanner knows (DSN and SQL passwords, Kubernetes name/value pairs, AWS ids).
_WK_FAKE = r"(?![^\s'\"]*?(?:EXAMPLE|(?P<r>.)(?P=r){5}|(?i:fake|dummy|test|notreal|sample)[0x_]|0123456789))(?!.*(?:allowl|leaks:|truffle|nosec|noqa|fixture,))"
_WK_PUBLIC = r"(?!eyJ[\w-]*\.eyJ[\w-]*(?:Jhbm9u|iYW5vbi|ImFub24i)|pk_|[$<%/]|os\.|process\.|arn:|vault:|\[RED)"
_WK_VALUE = _WK_PUBLIC + _WK_FAKE + r"(?=[^\s'\"]*\d)[^\s'\"`,;)}\\]{8,}"
_WK_SEP = r"(?:\\?[\"'])?\s*[:=]\s*(?:\\?[\"'])?(?:Bearer |Token )?"
_WK_KEY = r"(?:key|token|secret|auth|creds?|credentials|login|bearer|authorization)"
_WK_PASSWORD = r"(?:password|passwd|pwd|pass)"
_WK_NOT_TEST = r"(?!(?:test|fake|mock|sample|ci|local|dev|example|staging)[_.-]?)"
WORLD_KNOWLEDGE = (
    r"(?i)" + _WK_KEY + _WK_SEP + r"\K" + _WK_VALUE,
    r"(?i)(?<![\w.-])" + _WK_NOT_TEST + r"[\w.-]{0,30}?" + _WK_KEY + _WK_SEP + r"\K" + _WK_VALUE,
    r"(?i)" + _WK_PASSWORD + _WK_SEP + r"\K" + _WK_VALUE,
    r"(?i)(?<![\w.-])[\w.-]{2,40}" + _WK_SEP + r"\K" + _WK_VALUE,
    r"(?i)name: [\w.-]*?" + _WK_KEY + r"\s*\n\s*value: [\"']?\K" + _WK_VALUE,
    r"(?i)name: [\w.-]*?" + _WK_PASSWORD + r"\s*\n\s*value: [\"']?\K" + _WK_VALUE,
    r"(?<=://[A-Za-z0-9_.-]+:)(?![$<%{])[^@\s/'\"]+(?=@)",
    r"(?i)(?:PASSWORD|IDENTIFIED BY|AS)\s+'\K(?!SCRAM|md5|\*|:)[^'\s]+(?=')",
    r"-----BEGIN (?:EC |OPENSSH )?PRIVATE KEY-----[A-Za-z0-9+/=\s\\]*?-----END (?:EC |OPENSSH )?PRIVATE KEY-----",
    r"A[KS]IA" + _WK_FAKE + r"[A-Z2-7]{16}",
)
"""Generic atoms of general knowledge, each a whole piece (its own filters, no further guard)."""


_ANY = r"[^\x00]"
"""Any character of a record (the fitter joins a task's records with NUL, which no record holds)."""


def _siblings(text: str, start: int) -> Iterable[tuple[str, str]]:
    """Cross-record pieces for a value at `start`: the key name before it, captured, and each
    other place of the record that names the same key (`os.environ.get("KEY")`, `KEY_ID = `,
    a `[REDACTED]` field of the same name), as a backreference before or after the value."""
    line = text.rfind("\n", 0, start) + 1
    units = split_units(text[line:start])
    keys = [n for n, u in enumerate(units) if _is_word(u)]
    if not keys or keys[0] > 4:
        return
    n = keys[0]
    key = units[n]
    if len(key) < 3:
        return
    sep = "".join(_literal(u) for u in reversed(units[:n]))
    capture = rf"(?<=(?<![\w])(?P<k>\w+){sep})"
    for match in regex.finditer(rf"(?i)(?<![A-Za-z0-9]){regex.escape(key)}", text):
        if line <= match.start() < start:
            continue
        before = split_units(text[text.rfind("\n", 0, match.start()) + 1 : match.start()])[:2]
        after_end = match.end()
        tail = regex.match(r"[A-Za-z0-9_]*[^A-Za-z0-9_\s]{0,2}", text[after_end:]).group()
        sibling = "".join(_literal(u) for u in reversed(before)) + "(?i:(?P=k))" + regex.escape(tail)
        if match.start() > start:
            yield capture, f"(?={_ANY}*?{sibling})"
        else:
            yield capture, f"(?<={sibling}{_ANY}*?)"


PREFIX_SHARING = (
    # A prefixed token whose vendor abbreviation recurs, with another marker, elsewhere in the record.
    r"(?<![A-Za-z0-9_])(?P<a>[A-Za-z]{2,4})(?P<s>[_.-])(?:[A-Za-z0-9]{1,4}(?P=s))?[A-Za-z0-9]{16,}(?![A-Za-z0-9_])(?="
    + _ANY
    + r"*?(?<![A-Za-z0-9_])(?P=a)(?P=s))",
    r"(?<![A-Za-z0-9_])(?P<a>[A-Za-z]{2,4})(?P<s>[_.-])(?:[A-Za-z0-9]{1,4}(?P=s))?[A-Za-z0-9]{16,}(?![A-Za-z0-9_])(?<=(?<![A-Za-z0-9_])(?P=a)(?P=s)"
    + _ANY
    + r"*?(?P=a)(?P=s)[^\s\x00]*)",
)
"""Prefix-sharing atoms: tokens told apart by another token of the same vendor in the record."""


def mine(tasks: Sequence[tuple[Sequence[Record], Sequence[Record]]], min_tasks: int = 3) -> list[str]:
    """Candidate pieces from labelled train tasks: (shown, hidden) record pairs."""
    seen: dict[tuple[str, str, str], set[int]] = {}
    values: list[str] = []
    for n, (shown, hidden) in enumerate(tasks):
        for record in (*shown, *hidden):
            for span in record.secrets:
                value = record.value(span)
                values.append(value)
                right = _right(record.text, span.end)
                for left in _contexts(record.text, span.start):
                    seen.setdefault((f"(?<={left})", _VALUE, right), set()).add(n)
                # Sibling-key atoms: the value's key named again elsewhere in the record.
                for capture, sibling in _siblings(record.text, span.start):
                    if sibling.startswith("(?="):
                        seen.setdefault((capture, _VALUE, right + sibling), set()).add(n)
                    else:
                        seen.setdefault((capture + sibling, _VALUE, right), set()).add(n)
    floor = max(min_tasks, len(tasks) // 40)
    triples = [triple for triple, where in seen.items() if len(where) >= floor]
    triples += list(_prefix_shapes(values)) + list(GENERIC) + [("", atom, "") for atom in PREFIX_SHARING]
    out = [atom for atom in WORLD_KNOWLEDGE if len(atom) + 4 <= MAX_PATTERN_CHARS]
    for left, body, right in dict.fromkeys(triples):
        for guard in GUARDS:
            # Guards after the anchor: a guard scanning ahead from every position would be quadratic.
            candidate = left + guard + body + right + (_FAKE_TAIL if guard else "")
            if len(candidate) + 4 <= MAX_PATTERN_CHARS:
                out.append(candidate)
    return out
