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
2. **Greedy selection** on the exact rubric: every candidate's removed characters are
   computed once per task (as bitsets); pieces are added one at a time, each time the one
   that raises the mean reward over the train tasks most, until none helps or the rule
   limit is reached. The chosen pieces are packed into at most 24 rules.

The fitted answer is committed as `constant_rules.json` next to this module;
`benchmarks/fit_constant.py` refits it and prints its scores on train and dev.
"""

from __future__ import annotations

import heapq
import json
import time
from collections import Counter
from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass
from functools import lru_cache
from pathlib import Path

import regex

from redaction_pressure.redact.rubric import WEIGHTS
from redaction_pressure.redact.rules import MAX_PATTERN_CHARS, MAX_RULES, Rule
from redaction_pressure.redact.scanner import REDACTED, scan
from redaction_pressure.spans import Record

RULES_FILE = Path(__file__).with_name("constant_rules.json")
"""The standard level's fitted answer; another level's is `constant_rules_<level>.json`."""


def rules_file(difficulty: str = "standard") -> Path:
    """Where the answer fitted on `difficulty`'s train tasks is committed."""
    return RULES_FILE if difficulty == "standard" else RULES_FILE.with_name(f"constant_rules_{difficulty}.json")


PRECISION_FLOORS = (0.0, 0.5, 0.8, 0.9, 0.95)
COST_LIMIT = 0.2
"""Mean CPU seconds of matching per task the chosen pieces may spend together: a fifth of the
episode budget, so that the slowest tasks stay well inside it."""

_FAKE = r"(?!\S*?(?P<run>\S)(?P=run){5})(?!\S*?(?i:fake|dummy|test|sample|notreal|example|mock|xxxx|0123456789))"
_ALLOWLISTED = r"(?![^\n]*(?:allowlist secret|gitleaks:allow|trufflehog:ignore|nosec|noqa))"
_PUBLIC_MARK = r"(?![A-Za-z]{1,8}[_.-]?(?i:pub|pk|id|client|public)[_.-])"
GUARDS = ("", _FAKE, _FAKE + _ALLOWLISTED, _FAKE + _ALLOWLISTED + _PUBLIC_MARK)
"""No guard; visibly fake values; also allowlisted lines; also values with a public marker in their prefix."""
_VALUE = r"""[^\s"'`$<>{}\[\]]+"""
_FAKE_TAIL = r"(?<!EXAMPLE)(?<!EXAMPLEKEY)"


@lru_cache(maxsize=4)
def constant_rules(difficulty: str = "standard") -> list[Rule]:
    """The committed answer fitted on `difficulty`'s train tasks."""
    data = json.loads(rules_file(difficulty).read_text())
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


def _siblings(text: str, start: int) -> Iterable[str]:
    """Cross-record pieces for a value at `start`: the key name before it, captured, and each
    other place of the record that names the same key (`os.environ.get("KEY")`, `KEY_ID = `,
    a `[REDACTED]` field of the same name), as a backreference before or after the value."""
    line = text.rfind("\n", 0, start) + 1
    units = _units(text[line:start])
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
        before = _units(text[text.rfind("\n", 0, match.start()) + 1 : match.start()])[:2]
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


@dataclass
class _Piece:
    """A candidate piece and the characters it removes, only for the tasks it touches."""

    pattern: str
    bits: dict[int, int]
    precision: float
    cost: float
    """Mean CPU seconds the piece spends matching one task's hidden records."""


class _Selection:
    """The chosen pieces, the union of what they remove per task, and each task's reward."""

    def __init__(self, tasks: Sequence[_Task]) -> None:
        self.tasks = tasks
        self.chosen: list[_Piece] = []
        self.union = [0] * len(tasks)
        self.rewards = [0.0] * len(tasks)
        self.chars = 0
        self.cost = 0.0

    def gain(self, piece: _Piece) -> float:
        """How much adding `piece` changes the summed reward (only its tasks can change)."""
        return sum(_reward(self.union[t] | b, self.tasks[t]) - self.rewards[t] for t, b in piece.bits.items())

    def add(self, piece: _Piece) -> None:
        self.chosen.append(piece)
        self.chars += len(piece.pattern) + 1
        self.cost += piece.cost
        for t, b in piece.bits.items():
            self.union[t] |= b
            self.rewards[t] = _reward(self.union[t], self.tasks[t])

    def loss(self, n: int) -> float:
        """How much removing chosen piece `n` changes the summed reward."""
        delta = 0.0
        for t in self.chosen[n].bits:
            rest = 0
            for m, other in enumerate(self.chosen):
                if m != n:
                    rest |= other.bits.get(t, 0)
            delta += _reward(rest, self.tasks[t]) - self.rewards[t]
        return delta

    def remove(self, n: int) -> None:
        piece = self.chosen.pop(n)
        self.chars -= len(piece.pattern) + 1
        self.cost -= piece.cost
        for t in piece.bits:
            self.union[t] = 0
            for other in self.chosen:
                self.union[t] |= other.bits.get(t, 0)
            self.rewards[t] = _reward(self.union[t], self.tasks[t])

    @property
    def mean(self) -> float:
        return sum(self.rewards) / len(self.tasks)


def _greedy(pieces: Sequence[_Piece], tasks: Sequence[_Task], max_chars: int) -> _Selection:
    """Lazy forward selection by summed reward, then backward elimination of pieces that no longer help.

    Gains are re-evaluated lazily: a piece's last known gain is an estimate, and the piece
    with the best estimate is re-scored until the best stays best (the usual lazy-greedy
    shortcut; the reward is not exactly submodular, so it is a heuristic, not a bound).
    """
    selection = _Selection(tasks)
    heap = [(-float("inf"), n) for n in range(len(pieces))]
    heapq.heapify(heap)
    taken: set[int] = set()
    while heap:
        _, n = heapq.heappop(heap)
        piece = pieces[n]
        if (
            n in taken
            or selection.chars + len(piece.pattern) + 1 > max_chars
            or selection.cost + piece.cost > COST_LIMIT
        ):
            continue
        gain = selection.gain(piece)
        if heap and gain < -heap[0][0] - 1e-12:
            heapq.heappush(heap, (-gain, n))
            continue
        if gain <= 1e-9:
            break
        selection.add(piece)
        taken.add(n)
        dropped = True
        while dropped and len(selection.chosen) > 1:
            dropped = False
            for m in range(len(selection.chosen)):
                if selection.loss(m) > 1e-9:
                    selection.remove(m)
                    dropped = True
                    break
    return selection


def select(
    candidates: Sequence[str],
    hidden: Sequence[Sequence[Record]],
    max_chars: int = MAX_RULES * (MAX_PATTERN_CHARS - 8),
    progress: Callable[[str], None] | None = None,
) -> list[str]:
    """The best greedy selection of pieces by mean reward over `hidden` (one entry per task).

    Greedy selection starting from broad pieces gets stuck (a broad piece's recall keeps
    precise pieces from ever helping), so it runs once per precision floor (pieces less
    precise than the floor on train are left out), chooses the floor whose run scores best on
    the last quarter of the train tasks (held back from that run), and refits it on all of
    them. The run without a
    floor is where broad world-knowledge atoms compete (every key=value with its filters: the
    plateau a hand-fitting red team reaches).
    """
    tasks = [_task(h) for h in hidden]
    pieces: list[_Piece] = []
    for pattern_text in candidates:
        try:
            pattern = regex.compile(pattern_text)
        except regex.error:
            continue
        bits = {}
        started = time.thread_time()
        for t, task in enumerate(tasks):
            b = _removed(pattern, task)
            if b == -1:
                bits = {}
                break
            if b:
                bits[t] = b
        if bits:
            removed = sum(b.bit_count() for b in bits.values())
            clean = sum(n for t, b in bits.items() for mask, n in tasks[t].secrets if b & mask == mask)
            cost = (time.thread_time() - started) / len(tasks)
            pieces.append(_Piece(pattern_text, bits, clean / removed if removed else 0.0, cost))
    # The floor is chosen on train tasks the greedy run did not see (the last quarter): in
    # sample, the most precise pieces always look best, and they generalise worst.
    held = len(tasks) // 4 if len(tasks) >= 8 else 0
    fitting = len(tasks) - held
    best: tuple[float, float] | None = None
    for floor in PRECISION_FLOORS:
        allowed = [p for p in pieces if p.precision >= floor]
        part = [
            _Piece(p.pattern, {t: b for t, b in p.bits.items() if t < fitting}, p.precision, p.cost) for p in allowed
        ]
        selection = _greedy([p for p in part if p.bits], tasks[:fitting], max_chars)
        out_of_sample = selection.mean
        if held:
            chosen = {p.pattern for p in selection.chosen}
            unions = [0] * len(tasks)
            for p in allowed:
                if p.pattern in chosen:
                    for t, b in p.bits.items():
                        unions[t] |= b
            out_of_sample = sum(_reward(unions[t], tasks[t]) for t in range(fitting, len(tasks))) / held
        if progress:
            progress(f"precision floor {floor:.2f}: {len(allowed)} pieces allowed, {len(selection.chosen)} chosen, "
                     f"reward {selection.mean:.4f} on {fitting} train tasks, {out_of_sample:.4f} on the {held} held back")  # fmt: skip
        if best is None or out_of_sample > best[1]:
            best = (floor, out_of_sample)
    if best is None:
        return []
    final = _greedy([p for p in pieces if p.precision >= best[0]], tasks, max_chars)
    if progress:
        progress(
            f"chose precision floor {best[0]:.2f}: refitted on all {len(tasks)} train tasks, reward {final.mean:.4f}"
        )
    return list(final.chosen)


def pack_apart(pieces: Sequence[_Piece]) -> list[Rule]:
    """Pack pieces into at most 24 rules, keeping pieces whose matches overlap in different rules.

    Within one rule an alternation takes the first alternative that matches and resumes after
    it, so two overlapping pieces in one rule do not remove their union; in different rules they
    do. Pieces that fit nowhere without an overlap go where they overlap least.
    """
    bins: list[list[_Piece]] = []

    def size(group: list[_Piece]) -> int:
        return sum(len(q.pattern) + 1 for q in group) + 3

    def clashes(piece: _Piece, group: list[_Piece]) -> int:
        return sum(1 for q in group for t, b in piece.bits.items() if b & q.bits.get(t, 0) and b != q.bits[t])

    for piece in sorted(pieces, key=lambda p: -len(p.pattern)):
        fitting = [g for g in bins if size(g) + len(piece.pattern) + 1 <= MAX_PATTERN_CHARS]
        clean = [g for g in fitting if not clashes(piece, g)]
        if clean:
            min(clean, key=size).append(piece)
        elif len(bins) < MAX_RULES:
            bins.append([piece])
        elif fitting:
            min(fitting, key=lambda g: clashes(piece, g)).append(piece)
    return [Rule(g[0].pattern if len(g) == 1 else "(?:" + "|".join(q.pattern for q in g) + ")", REDACTED) for g in bins]


def fit(
    train: Sequence[tuple[Sequence[Record], Sequence[Record]]],
    progress: Callable[[str], None] | None = None,
) -> list[Rule]:
    """Mine candidates from `train` and select the best constant answer for it."""
    candidates = mine(train)
    if progress:
        progress(f"{len(candidates)} candidate pieces mined from {len(train)} train tasks")
    chosen = select(candidates, [hidden for _, hidden in train], progress=progress)
    # The packed answer must be valid on every train task: drop the piece that costs the
    # failing tasks most until it is.
    while True:
        rules = pack_apart(chosen)
        failing = [hidden for _, hidden in train if scan(rules, [r.text for r in hidden]).errors]
        if not failing or not chosen:
            return rules
        if progress:
            progress(f"packed answer fails on {len(failing)} train tasks: dropping the piece costliest on them")
        chosen.remove(max(chosen, key=lambda piece: _cost_on(piece, failing)))


def _cost_on(piece: _Piece, tasks: Sequence[Sequence[Record]]) -> float:
    """CPU seconds `piece` takes to match over the records of `tasks`."""
    pattern = regex.compile(piece.pattern)
    started = time.thread_time()
    for hidden in tasks:
        for record in hidden:
            for _ in pattern.finditer(record.text, timeout=5.0):
                pass
    return time.thread_time() - started


def frequencies(train: Sequence[tuple[Sequence[Record], Sequence[Record]]]) -> Counter[str]:
    """How many train tasks each mined context appears in (for reports)."""
    counts: Counter[str] = Counter()
    for shown, hidden in train:
        found = set()
        for record in (*shown, *hidden):
            for span in record.secrets:
                found.update(_contexts(record.text, span.start))
        counts.update(found)
    return counts


def save(rules: Sequence[Rule], note: dict, difficulty: str = "standard") -> None:
    data = {"note": note, "rules": [{"pattern": r.pattern, "replacement": r.replacement} for r in rules]}
    rules_file(difficulty).write_text(json.dumps(data, indent=1) + "\n")


__all__ = ["REDACTED", "constant_rules", "fit", "mine", "select", "save"]
