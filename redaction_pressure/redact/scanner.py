r"""Budgeted matching: run every rule over every hidden record and collect what it removes.

`scan(rules, texts, budget)` is a pure function of its arguments (plus CPU time), so it
can run in a thread or another process. Every rule is matched against the original
text of every record; the removed set is the union of all match spans, so rule order
does not matter. Matching stops at the first error:

- `invalid_regex`: a pattern fails the static check or does not compile (nothing runs), or
  the engine raises anything but a timeout while matching;
- `empty_match`: a match of zero length, or an inverted one (`\K` in a lookahead), which
  removes nothing;
- `excessive_matches`: more than `budget.max_matches` matches in the episode;
- `timeout`: one (rule, record) call ran into the per-call cap;
- `budget_exhausted`: a call ran into what was left of the shared episode budget.

Each call's timeout is min(per-call cap, episode budget left). The `regex` engine
interrupts a call on its own CPU clock, so hostile patterns are cut off, never waited
out. The budget is charged with this thread's CPU time (`time.thread_time`).
"""

from __future__ import annotations

import time
from collections.abc import Sequence
from dataclasses import dataclass

from redaction_pressure.redact.rules import RedactionError, Rule, compile_rules

EPISODE_BUDGET_SECONDS = 1.0
CALL_CAP_SECONDS = 0.25
MAX_MATCHES = 10_000
REDACTED = "[REDACTED]"


@dataclass(frozen=True)
class Budget:
    """Limits of one episode's matching."""

    episode: float = EPISODE_BUDGET_SECONDS
    call: float = CALL_CAP_SECONDS
    max_matches: int = MAX_MATCHES


DEFAULT_BUDGET = Budget()


@dataclass(frozen=True)
class ScanResult:
    """What the rules removed from each record, and any error that stopped matching."""

    removed: tuple[tuple[tuple[int, int], ...], ...]
    """Per record, the maximal removed runs `(start, end)`, sorted and disjoint."""
    redacted: tuple[str, ...]
    """Per record, the text with each removed run replaced."""
    matches: int
    errors: tuple[RedactionError, ...]
    seconds: float
    """CPU seconds spent matching, charged against the episode budget."""


def scan(rules: Sequence[Rule], texts: Sequence[str], budget: Budget = DEFAULT_BUDGET) -> ScanResult:
    """Match `rules` over `texts` within `budget`."""
    compiled, errors = compile_rules(rules)
    empty = tuple(() for _ in texts)
    if errors:
        return ScanResult(empty, tuple(texts), 0, tuple(errors), 0.0)
    spans: list[list[tuple[int, int, bool]]] = [[] for _ in texts]
    matches, used = 0, 0.0
    error: RedactionError | None = None
    for r, (rule, pattern) in enumerate(zip(rules, compiled, strict=True)):
        keep = rule.replacement == REDACTED
        for t, text in enumerate(texts):
            left = budget.episode - used
            if left <= 0:
                error = RedactionError("budget_exhausted", r, t, _budget_detail(r, t, budget))
                break
            limit = min(budget.call, left)
            start = time.thread_time()
            try:
                for m in pattern.finditer(text, timeout=limit):
                    begin, end = m.span()
                    # NOTE: `\K` inside a lookahead makes `regex` report a span that ends before
                    # it starts; counting it would subtract from the removed characters and
                    # lift precision above 1. An inverted span removes nothing: an error too.
                    if end <= begin:
                        what = "the empty string" if begin == end else f"an inverted span ({begin}, {end})"
                        error = RedactionError(
                            "empty_match", r, t,
                            f"rule {r}: matched {what} at offset {begin} of hidden record {t}; "
                            "a redaction rule must remove at least one character",
                        )  # fmt: skip
                        break
                    matches += 1
                    if matches > budget.max_matches:
                        error = RedactionError(
                            "excessive_matches", r, t,
                            f"rule {r}: the rules matched more than {budget.max_matches} times "
                            "in this episode",
                        )  # fmt: skip
                        break
                    spans[t].append((begin, end, keep))
            except TimeoutError:
                if limit < budget.call:
                    error = RedactionError("budget_exhausted", r, t, _budget_detail(r, t, budget))
                else:
                    error = RedactionError(
                        "timeout", r, t,
                        f"rule {r}: matching hidden record {t} ran past the per-call cap of "
                        f"{budget.call:g} s",
                    )  # fmt: skip
            except (MemoryError, RecursionError):
                raise  # the worker's memory cap or stack: `worker.py` decides on a fresh process
            except Exception as exc:  # noqa: BLE001 - whatever the engine raises ends in a code
                error = RedactionError(
                    "invalid_regex", r, t,
                    f"rule {r}: matching hidden record {t} failed ({type(exc).__name__}: {exc})",
                )  # fmt: skip
            finally:
                used += time.thread_time() - start
            if error is not None:
                break
        if error is not None:
            break
    if error is not None:
        return ScanResult(empty, tuple(texts), matches, (error,), used)
    runs = [_merge(s) for s in spans]
    removed = tuple(tuple((a, b) for a, b, _ in record) for record in runs)
    redacted = tuple(_redact(text, record) for text, record in zip(texts, runs, strict=True))
    return ScanResult(removed, redacted, matches, (), used)


def _budget_detail(rule: int, record: int, budget: Budget) -> str:
    return f"rule {rule}: the episode's matching budget of {budget.episode:g} s ran out on hidden record {record}"


def _merge(spans: list[tuple[int, int, bool]]) -> list[tuple[int, int, bool]]:
    """Maximal runs of removed characters; a run keeps a marker if any match asked for one."""
    runs: list[tuple[int, int, bool]] = []
    for begin, end, keep in sorted(spans):
        if runs and begin <= runs[-1][1]:
            last = runs[-1]
            runs[-1] = (last[0], max(last[1], end), last[2] or keep)
        else:
            runs.append((begin, end, keep))
    return runs


def _redact(text: str, runs: list[tuple[int, int, bool]]) -> str:
    out, cursor = [], 0
    for begin, end, keep in runs:
        out.append(text[cursor:begin])
        if keep:
            out.append(REDACTED)
        cursor = end
    out.append(text[cursor:])
    return "".join(out)
