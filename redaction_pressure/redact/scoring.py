"""Scoring one reply against bare hidden records: what the API and the scan workers share.

`score_records(hidden, reply)` parses the reply strictly, runs its rules over the hidden
records within the episode budget (with any scanner: in this thread, or a pool's) and
grades the removal. It never raises on a hostile reply: every failure is an error value
with a code. It lives below both `api` (the public face) and `pool`/`worker` (isolated
scanning), so neither of those imports the other's caller.
"""

from __future__ import annotations

import hashlib
import itertools
from collections.abc import Callable, Sequence
from functools import lru_cache

from pydantic import BaseModel, ConfigDict

from redaction_pressure.corpus import stream
from redaction_pressure.redact.rubric import grade
from redaction_pressure.redact.rules import RedactionError, Rule, parse_reply
from redaction_pressure.redact.scanner import DEFAULT_BUDGET, Budget, ScanResult, scan
from redaction_pressure.spans import Record

Scanner = Callable[[Sequence[Rule], Sequence[str], Budget], ScanResult]


class ScoreResult(BaseModel):
    """The outcome of scoring one reply against one task."""

    model_config = ConfigDict(frozen=True)

    reward: float
    recall: float
    precision: float
    clean_gate: float
    valid: bool
    errors: tuple[RedactionError, ...]
    metrics: dict[str, float]
    kinds: dict[str, tuple[int, int]] = {}
    """(removed, total) secrets of each kind the hidden records hold: a kind's recall over a
    run is sum(removed) / sum(total) (the per-kind metric is `all_removed_<kind>`)."""


@lru_cache(maxsize=128)
def records_for(seed: int, shown: int, hidden: int) -> tuple[Record, ...]:
    """The first shown + hidden records of the stream for `seed` (cached)."""
    return tuple(itertools.islice(stream(seed, shown), shown + hidden))


def prompt_digest(user_prompt_text: str) -> str:
    """SHA-256 of a user prompt: how a worker checks it rebuilt the task the model saw."""
    return hashlib.sha256(user_prompt_text.encode("utf-8", "surrogatepass")).hexdigest()


def score_records(
    hidden: Sequence[Record], reply: str, *, budget: Budget = DEFAULT_BUDGET, scanner: Scanner = scan
) -> ScoreResult:
    """`api.score_reply` on bare hidden records (what a pool worker runs for an episode)."""
    answer = parse_reply(reply)
    if answer.errors:
        result = None
        errors = answer.errors
    else:
        result = scanner(answer.rules, [record.text for record in hidden], budget)
        errors = result.errors
    valid = not errors
    graded = grade(hidden, result.removed if result else [() for _ in hidden], valid)
    metrics = dict(graded.metrics)
    metrics["rules"] = float(len(answer.rules))
    metrics["matches"] = float(result.matches if result else 0)
    metrics["budget_used"] = (result.seconds if result else 0.0) / budget.episode
    return ScoreResult(
        reward=graded.reward,
        recall=graded.recall,
        precision=graded.precision,
        clean_gate=graded.clean_gate,
        valid=valid,
        errors=errors,
        metrics=metrics,
        kinds=graded.kinds,
    )
