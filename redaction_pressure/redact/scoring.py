"""Scoring one reply: what the API, the scan pool and its workers share.

`score_records(hidden, reply)` parses the reply strictly, runs its rules over the hidden
records within the episode budget (with any scanner: in this thread, or a pool's) and
grades the removal. `score_episode(job)` first rebuilds those records from the job's seed
and checks them against the prompt the model saw (`PromptMismatch` when they differ): the
one scoring path of the taskset, run in a pool worker or, when no worker is needed, by the
pool itself. Neither raises on a hostile reply: every failure is an error value with a code.
This module lives below both `api` (the public face) and `pool`/`worker` (isolated
scanning), so neither of those imports the other's caller.
"""

from __future__ import annotations

import hashlib
import itertools
from collections.abc import Callable, Sequence
from functools import lru_cache
from typing import Any

from pydantic import BaseModel, ConfigDict, Field, SerializerFunctionWrapHandler, computed_field, model_serializer

from redaction_pressure.corpus import stream
from redaction_pressure.redact.jobs import EpisodeJob, PromptMismatch
from redaction_pressure.redact.prompt import user_prompt
from redaction_pressure.redact.rubric import Grade, grade
from redaction_pressure.redact.rules import RedactionError, Rule, parse_reply
from redaction_pressure.redact.scanner import DEFAULT_BUDGET, Budget, ScanResult, scan
from redaction_pressure.spans import Record

Scanner = Callable[[Sequence[Rule], Sequence[str], Budget], ScanResult]


class ScoreResult(BaseModel):
    """The outcome of scoring one reply against one task: its `Grade`, its errors and what the scan did.

    The grade's parts read as attributes (`reward`, `recall`, `precision`, `clean_gate`,
    `valid`, `kinds`); `metrics` is the grade's metrics followed by the scan's (`rules`,
    `matches`, `budget_used`). Dumped (`model_dump`, `model_dump_json`) it is one flat
    object of those names, in `_DUMPED` order; the grade and the scan's counts are not dumped
    apart.
    """

    model_config = ConfigDict(frozen=True)

    grade: Grade = Field(exclude=True)
    errors: tuple[RedactionError, ...]
    rules: int = Field(exclude=True)
    """Rules in the reply (0 when it did not parse)."""
    matches: int = Field(exclude=True)
    """Matches the rules made on the hidden records."""
    budget_used: float = Field(exclude=True)
    """Share of the episode's matching budget the scan used."""

    @computed_field(repr=False)
    @property
    def reward(self) -> float:
        return self.grade.reward

    @computed_field(repr=False)
    @property
    def recall(self) -> float:
        return self.grade.recall

    @computed_field(repr=False)
    @property
    def precision(self) -> float:
        return self.grade.precision

    @computed_field(repr=False)
    @property
    def clean_gate(self) -> float:
        return self.grade.clean_gate

    @computed_field(repr=False)
    @property
    def valid(self) -> bool:
        return self.grade.valid

    @computed_field(repr=False)
    @property
    def metrics(self) -> dict[str, float]:
        scanned = {"rules": float(self.rules), "matches": float(self.matches), "budget_used": self.budget_used}
        return {**self.grade.metrics, **scanned}

    @computed_field(repr=False)
    @property
    def kinds(self) -> dict[str, tuple[int, int]]:
        """(removed, total) secrets of each kind the hidden records hold: a kind's recall over a
        run is sum(removed) / sum(total) (the per-kind metric is `all_removed_<kind>`)."""
        return self.grade.kinds

    @model_serializer(mode="wrap")
    def _in_order(self, handler: SerializerFunctionWrapHandler) -> dict[str, Any]:
        dumped = handler(self)
        return {name: dumped[name] for name in _DUMPED if name in dumped}


_DUMPED = ("reward", "recall", "precision", "clean_gate", "valid", "errors", "metrics", "kinds")
"""The order of a dumped `ScoreResult`'s keys (as when they were its fields)."""


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
    return ScoreResult(
        grade=graded,
        errors=errors,
        rules=len(answer.rules),
        matches=result.matches if result else 0,
        budget_used=(result.seconds if result else 0.0) / budget.episode,
    )


def score_episode(job: EpisodeJob, scanner: Scanner = scan) -> ScoreResult:
    """Score the job's reply on the records rebuilt from its seed, once they give the prompt the model saw.

    Raises `PromptMismatch` when they do not (the task data and this package disagree about
    the task). What a pool worker runs for every episode; the pool runs it too, with a scanner
    that is never called (a reply over `MAX_REPLY_CHARS` fails to parse) or one that reports
    the episode exhausted.
    """
    records = records_for(job.seed, job.shown, job.hidden)
    if prompt_digest(user_prompt(records[: job.shown], job.hidden)) != job.digest:
        raise PromptMismatch("the records rebuilt from the task's seed do not give the prompt the model saw")
    return score_records(records[job.shown :], job.reply, budget=job.budget, scanner=scanner)
