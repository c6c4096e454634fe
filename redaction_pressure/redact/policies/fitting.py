"""Fitting the constant answer: greedy selection of mined pieces on the exact rubric (offline).

`fit` takes labelled train tasks, mines candidate pieces (`mining.mine`) and selects among
them: every candidate's removed characters are computed once per task (as bitsets); pieces
are added one at a time, each time the one that raises the mean reward over the train tasks
most, until none helps or the rule limit is reached. The chosen pieces are packed into at
most 24 rules, valid on every train task. Used by `benchmarks/fit_constant.py`, which saves
the answer with `constant.save`; nothing at run time imports this module.
"""

from __future__ import annotations

import heapq
import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass

import regex

from redaction_pressure.redact.policies.mining import mine
from redaction_pressure.redact.rubric import WEIGHTS
from redaction_pressure.redact.rules import MAX_PATTERN_CHARS, MAX_RULES, Rule
from redaction_pressure.redact.scanner import REDACTED, scan
from redaction_pressure.spans import Record

PRECISION_FLOORS = (0.0, 0.5, 0.8, 0.9, 0.95)
COST_LIMIT = 0.2
"""Mean CPU seconds of matching per task the chosen pieces may spend together: a fifth of the
episode budget, so that the slowest tasks stay well inside it."""


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


__all__ = ["fit", "pack_apart", "select"]
