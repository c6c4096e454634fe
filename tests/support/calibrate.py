"""Answers and workloads sized to this machine, measured when a test starts.

A test that needs an answer to land somewhere relative to a CPU-time limit (exhaust the episode
budget, stay clear of the per-call cap, run a call at a given share of the cap) must not carry a
pattern tuned on one machine: a faster machine finishes it within the budget, a slower one runs
into the cap. These helpers measure the costs on the machine running the test, on the thread's
CPU clock (a scan worker runs one thread, so its process clock is the same measure), and pick
the answer that lands where the test needs it with the widest margin they can. Each returns the
margin it reached, so a test states it and fails with a clear message if the machine cannot give
the margin the test relies on (it never silently passes).

CPU time measured on a busy machine grows by tens of percent (shared caches, sibling threads);
the margins asked for here are larger than that, so a calibration made on a quiet moment still
holds under two CPU burners, and one made under load still holds when the machine is quiet.
"""

from __future__ import annotations

import os
import time
from collections.abc import Sequence
from dataclasses import dataclass

import regex

from redaction_pressure.redact.scanner import DEFAULT_BUDGET, Budget

TRIES = 3
"""Measurements of one call; the least is kept (interference only ever adds CPU time)."""


def linear_pattern(width: int) -> str:
    """A pattern that matches nothing (a NUL is never in the corpus) and costs CPU in proportion to
    the text's length times a factor that grows with `width`: no call on a long record is much
    dearer than its share of the text, unlike `.*.*`, which is quadratic per record."""
    return rf"(?s).{{0,{width}}}.{{0,{width}}}.{{0,{width}}}(?<=\x00)"


def call_cost(pattern: str, text: str, tries: int = TRIES) -> float:
    """CPU seconds of one `finditer` pass of `pattern` over `text` on this machine."""
    compiled = regex.compile(pattern)
    best = float("inf")
    for _ in range(tries):
        start = time.thread_time()
        for _ in compiled.finditer(text):
            pass
        best = min(best, time.thread_time() - start)
    return best


@dataclass(frozen=True)
class Exhausting:
    """Copies of `pattern` (24 by default) run out of the episode budget on every task given."""

    pattern: str
    slowest_call: float
    """CPU seconds of the dearest single (rule, record) call over the tasks."""
    least_total: float
    """CPU seconds the copies need on the cheapest task."""
    margin: float
    """The smaller of (per-call cap / slowest call) and (least total / episode budget)."""


def exhausting_rule(
    tasks_texts: Sequence[Sequence[str]], budget: Budget = DEFAULT_BUDGET, copies: int = 24
) -> Exhausting:
    """The linear pattern whose `copies` copies exhaust `budget.episode` on every task while no single
    call comes near `budget.call`, by the widest margin on both sides this machine gives.

    A linear pattern's cost grows with the text's length and with its width, so the dearest call
    is on the longest record and the least total on the task with the least text: only those are
    measured. Widening the pattern raises the total's margin and lowers the call's; the cost is
    not smooth in the width (the engine's work per position jumps at some widths), so widths are
    tried from narrow to wide on a grid, the widest margin measured is kept, and the search stops
    once the total's margin has passed the call's (wider only narrows the call's side)."""
    longest = sorted((text for texts in tasks_texts for text in texts), key=len)[-3:]
    leanest = sorted(tasks_texts, key=lambda texts: sum(map(len, texts)))[:2]

    def measure(width: int) -> Exhausting:
        pattern = linear_pattern(width)
        slowest = max(call_cost(pattern, text) for text in longest)
        least = copies * min(sum(call_cost(pattern, text, tries=1) for text in texts) for texts in leanest)
        return Exhausting(pattern, slowest, least, min(budget.call / slowest, least / budget.episode))

    best = None
    for width in WIDTHS:
        found = measure(width)
        if best is None or found.margin > best.margin:
            best = found
        if found.least_total / budget.episode > budget.call / found.slowest_call:
            break
    return best


WIDTHS = (4, 6, 8, 10, 12, 14, 16, 18, 20, 23, 26, 30, 35, 40, 48, 56, 64)
"""Widths `exhausting_rule` tries, narrow to wide (each a fraction of a second to measure)."""


@dataclass(frozen=True)
class Spending:
    """`copies` copies of `pattern` spend about `share` of the episode budget in all."""

    pattern: str
    copies: int
    cost: float
    """CPU seconds of one copy over all the texts."""
    slowest_call: float


def spending_rules(texts: Sequence[str], share: float, budget: Budget = DEFAULT_BUDGET, most: int = 20) -> Spending:
    """Copies of one linear pattern that together cost about `share` of the episode budget over
    `texts`, each call a small part of the per-call cap: the narrowest width that needs no more
    than `most` copies, so the total is made of many small calls."""
    for width in (1, 2, 3, 4, 6, 8, 12, 16, 24, 32, 48, 64):
        pattern = linear_pattern(width)
        costs = [call_cost(pattern, text) for text in texts]
        copies = round(share * budget.episode / sum(costs))
        if copies <= most:
            return Spending(pattern, max(1, copies), sum(costs), max(costs))
    raise AssertionError(f"no linear pattern spends {share:.0%} of the budget in {most} copies here")


def slow_call_pattern(texts: Sequence[str], seconds: float) -> tuple[str, float]:
    """A pattern whose dearest call over `texts` costs about `seconds` of CPU here, and that cost.

    `(?:[A-Za-z0-9]{1,b}){1,2}(?<=Q{3})` matches nothing on the corpus (no `QQQ`) and backtracks
    over every alphanumeric run; its cost grows about as b², so b is scaled by the square root of
    the ratio of wanted to measured cost until it lands within 5%."""

    dearest = max(texts, key=lambda text: call_cost(_slow(40), text, tries=1))
    bound, spent = 40, call_cost(_slow(40), dearest)
    for _ in range(4):  # scale by the square root of the ratio, then correct with what was measured
        if abs(spent - seconds) <= 0.05 * seconds:
            break
        bound = max(2, round(bound * (seconds / max(spent, 1e-4)) ** 0.5))
        spent = call_cost(_slow(bound), dearest)
    return _slow(bound), max(spent, *(call_cost(_slow(bound), text, tries=1) for text in texts if text is not dearest))


def _slow(bound: int) -> str:
    return rf"(?:[A-Za-z0-9]{{1,{bound}}}){{1,2}}(?<=Q{{3}})"


def quadratic_length(seconds: float, pattern: str = r"(?s).*.*(?<=\x00)", char: str = "a") -> int:
    """The length of a run of `char` over which one call of the quadratic `pattern` costs about
    `seconds` of CPU here (measured at a guess, scaled by the square root, measured again)."""
    length = 4_000
    for _ in range(3):
        spent = call_cost(pattern, char * length)
        length = max(100, int(length * (seconds / max(spent, 1e-4)) ** 0.5))
    return length


def cpu_seconds_of(pid: int) -> float:
    """A process's user plus system CPU seconds so far (from /proc; 0.0 once it is gone)."""
    try:
        with open(f"/proc/{pid}/stat") as stat:
            fields = stat.read().rsplit(")", 1)[1].split()
    except OSError:
        return 0.0
    return (int(fields[11]) + int(fields[12])) / os.sysconf("SC_CLK_TCK")
