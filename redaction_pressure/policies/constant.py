"""The constant answer: one rule set fitted on train tasks, then used unchanged on every task.

It is the strongest memoriser we could build automatically, and the proof that the
corpus rewards reading the prompt: whatever it scores on dev is what a model can earn
without looking at a task's shown records.

Fitting (`fit`) has two steps:

1. **Mining** candidate pieces from the train tasks' labelled records:
   - contexts: for every secret, the last k units of text before it (as the induction
     policy sees them), literally, with digit runs generalised, with word units
     generalised to `\\w+`, and as key-name suffixes (`(?i)\\w*api_key=`), each followed
     by a broad value class up to the character that ended the secret;
   - value shapes: literal prefixes shared by secrets of several tasks, with the union of
     their character classes and their length range; JWTs; PEM blocks;
   - generic heuristics: long mixed tokens, values after `=` or `: `;
   - each with guarded variants that skip visibly fake values (`EXAMPLE`, six equal
     characters, fake-sounding words, counting sequences) and placeholders.
2. **Greedy selection** on the exact rubric: every candidate's removed characters are
   computed once per task (as bitsets); pieces are added one at a time, each time the one
   that raises the mean reward over the train tasks most, until none helps or the rule
   limit is reached. The chosen pieces are packed into at most 24 rules.

The fitted answer is committed as `constant_rules.json` next to this module;
`benchmarks/fit_constant.py` refits it and prints its scores on train and dev.
"""

from __future__ import annotations

import json
import statistics
from collections import Counter
from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass
from functools import lru_cache
from pathlib import Path

import regex

from redaction_pressure.policies.reference import pack
from redaction_pressure.rubric import WEIGHTS
from redaction_pressure.rules import MAX_PATTERN_CHARS, MAX_RULES, Rule
from redaction_pressure.scanner import REDACTED
from redaction_pressure.spans import Record

RULES_FILE = Path(__file__).with_name("constant_rules.json")
PRECISION_FLOORS = (0.5, 0.8, 0.9, 0.95)

GUARDS = (
    "",
    r"(?!\S*?(\S)\1{5})(?!\S*?(?i:fake|dummy|test|sample|notreal|example|mock|xxxx|0123456789))",
)
_VALUE = r"""[^\s"'`$<>{}\[\]]+"""
_FAKE_TAIL = r"(?<!EXAMPLE)(?<!EXAMPLEKEY)"


@lru_cache(maxsize=1)
def constant_rules() -> list[Rule]:
    """The committed fitted answer."""
    data = json.loads(RULES_FILE.read_text())
    return [Rule(rule["pattern"], rule["replacement"]) for rule in data["rules"]]


# -- mining ------------------------------------------------------------------------------------


def _units(before: str) -> list[str]:
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
    units = _units(text[previous:start])
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
        classes = "".join(c for c, test in (("a-z", str.islower), ("A-Z", str.isupper), ("0-9", str.isdigit)) if any(test(ch) for ch in rest))
        classes += "".join(sorted({regex.escape(ch) for ch in rest if not ch.isalnum() and ch not in "\n\\"}))
        low = min(len(v) for v in group) - len(prefix)
        high = max(len(v) for v in group) - len(prefix)
        if high > 1000 or not classes:
            continue
        yield rf"(?<![A-Za-z0-9_]){regex.escape(prefix)}", f"[{classes}]{{{max(low, 1)},{high}}}", "(?![A-Za-z0-9_])"


GENERIC = (
    ("", r"-----BEGIN (?:[A-Z0-9]+ )*PRIVATE KEY-----[\s\S]*?-----END (?:[A-Z0-9]+ )*PRIVATE KEY-----", ""),
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
    triples = [triple for triple, where in seen.items() if len(where) >= min_tasks]
    triples += list(_prefix_shapes(values)) + list(GENERIC)
    out = []
    for left, body, right in dict.fromkeys(triples):
        for guard in GUARDS:
            # Guards after the anchor: a guard scanning ahead from every position would be quadratic.
            candidate = left + guard + body + right + (_FAKE_TAIL if guard else "")
            if len(candidate) + 4 <= MAX_PATTERN_CHARS:
                out.append(candidate)
    return out


# -- selection ------------------------------------------------------------------------------------


@dataclass(frozen=True)
class _Task:
    """One task's hidden records as bitsets over their concatenated characters."""

    secrets: tuple[tuple[int, int], ...]  # (mask, length)
    secret_chars: int
    text: str


def _task(hidden: Sequence[Record]) -> _Task:
    secrets, offset, parts = [], 0, []
    for record in hidden:
        for span in record.secrets:
            mask = ((1 << len(span)) - 1) << (offset + span.start)
            secrets.append((mask, len(span)))
        parts.append(record.text)
        offset += len(record.text) + 1
    return _Task(tuple(secrets), sum(n for _, n in secrets), "\x00".join(parts))


def _removed(pattern: regex.Pattern, task: _Task) -> int:
    bits = 0
    try:
        for match in pattern.finditer(task.text, timeout=1.0):
            if match.end() > match.start():
                bits |= ((1 << (match.end() - match.start())) - 1) << match.start()
    except TimeoutError:
        return -1
    return bits


def _reward(bits: int, task: _Task) -> float:
    if not task.secrets:
        return 0.0
    removed = bits.bit_count()
    if not removed:
        return 0.0
    gone = clean = 0
    for mask, length in task.secrets:
        if bits & mask == mask:
            gone += 1
            clean += length
    recall = gone / len(task.secrets)
    precision = clean / removed
    gate = 1.0 if gone == len(task.secrets) and removed == task.secret_chars else 0.0
    return WEIGHTS["recall"] * recall + WEIGHTS["precision"] * precision + WEIGHTS["clean_gate"] * gate


def _mean(current: Sequence[int], tasks: Sequence[_Task]) -> float:
    return statistics.fmean(_reward(c, t) for c, t in zip(current, tasks, strict=True))


def _precision(bits: Sequence[int], tasks: Sequence[_Task]) -> float:
    """The share of a piece's removed characters that belong to secrets it removes whole."""
    removed = clean = 0
    for b, task in zip(bits, tasks, strict=True):
        removed += b.bit_count()
        clean += sum(n for mask, n in task.secrets if b & mask == mask)
    return clean / removed if removed else 0.0


def _greedy(table: list[tuple[str, list[int]]], tasks: Sequence[_Task], max_chars: int) -> tuple[float, list[str]]:
    """Forward selection by mean reward, then backward elimination of pieces that no longer help."""
    current = [0] * len(tasks)
    chosen: list[tuple[str, list[int]]] = []
    best, used = 0.0, 0
    while True:
        top, top_score = None, best
        for piece, bits in table:
            if used + len(piece) + 1 > max_chars or any(piece == c for c, _ in chosen):
                continue
            score = _mean([c | b for c, b in zip(current, bits, strict=True)], tasks)
            if score > top_score + 1e-9:
                top, top_score = (piece, bits), score
        if top is None:
            break
        chosen.append(top)
        used += len(top[0]) + 1
        current = [c | b for c, b in zip(current, top[1], strict=True)]
        best = top_score
        # Backward: drop any earlier piece whose removal now raises the reward.
        improved = True
        while improved and len(chosen) > 1:
            improved = False
            for n in range(len(chosen)):
                rest = chosen[:n] + chosen[n + 1 :]
                union = [0] * len(tasks)
                for _, bits in rest:
                    union = [u | b for u, b in zip(union, bits, strict=True)]
                score = _mean(union, tasks)
                if score > best + 1e-9:
                    chosen, current, best = rest, union, score
                    used = sum(len(p) + 1 for p, _ in chosen)
                    improved = True
                    break
    return best, [piece for piece, _ in chosen]


def select(
    candidates: Sequence[str],
    hidden: Sequence[Sequence[Record]],
    max_chars: int = MAX_RULES * (MAX_PATTERN_CHARS - 8),
    progress: Callable[[str], None] | None = None,
) -> list[str]:
    """The best greedy selection of pieces by mean reward over `hidden` (one entry per task).

    Greedy selection starting from broad pieces gets stuck (a broad piece's recall keeps
    precise pieces from ever helping), so it runs once per precision floor (pieces less
    precise than the floor on train are left out) and keeps the best run.
    """
    tasks = [_task(h) for h in hidden]
    table: list[tuple[str, list[int], float]] = []
    for piece in candidates:
        try:
            pattern = regex.compile(piece)
        except regex.error:
            continue
        bits = [_removed(pattern, task) for task in tasks]
        if -1 not in bits and any(bits):
            table.append((piece, bits, _precision(bits, tasks)))
    best_score, best = -1.0, []
    for floor in PRECISION_FLOORS:
        allowed = [(p, b) for p, b, precision in table if precision >= floor]
        score, chosen = _greedy(allowed, tasks, max_chars)
        if progress:
            progress(f"precision floor {floor:.2f}: {len(allowed)} pieces allowed, {len(chosen)} chosen, train reward {score:.4f}")
        if score > best_score:
            best_score, best = score, chosen
    return best


def fit(
    train: Sequence[tuple[Sequence[Record], Sequence[Record]]],
    progress: Callable[[str], None] | None = None,
) -> list[Rule]:
    """Mine candidates from `train` and select the best constant answer for it."""
    candidates = mine(train)
    if progress:
        progress(f"{len(candidates)} candidate pieces mined from {len(train)} train tasks")
    chosen = select(candidates, [hidden for _, hidden in train], progress=progress)
    return pack(chosen, strict=False)


def frequencies(train: Sequence[tuple[Sequence[Record], Sequence[Record]]]) -> Counter[str]:
    """How many train tasks each mined context appears in (for reports)."""
    counts: Counter[str] = Counter()
    for n, (shown, hidden) in enumerate(train):
        found = set()
        for record in (*shown, *hidden):
            for span in record.secrets:
                found.update(_contexts(record.text, span.start))
        counts.update(found)
    return counts


def save(rules: Sequence[Rule], note: dict) -> None:
    data = {"note": note, "rules": [{"pattern": r.pattern, "replacement": r.replacement} for r in rules]}
    RULES_FILE.write_text(json.dumps(data, indent=1) + "\n")


__all__ = ["REDACTED", "constant_rules", "fit", "mine", "select", "save"]
