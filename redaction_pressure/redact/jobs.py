"""What crosses the pipe between the scan pool and its worker processes: jobs, answers, signals.

Every value here is picklable and named field by field, never read by position. The pool
sends a `ScanJob` or an `EpisodeJob` (or `None`: stop); the worker answers with what the job
returns (`ScanResult`, `ScoreResult`), a `PromptMismatch` (the episode's records do not give
the prompt the model saw), or `Exhausted` (the episode escaped its budget: recursion, an
error while running it). Before any job a worker announces `READY`, or `StartFailed` with
the reason it could not load what an episode needs; it exits with `MEMORY_EXIT` when a job
does not fit in its memory cap.

Only the standard library is imported at the top: the worker imports this module before
its memory cap and before loading the scanner, so a broken install is still reported by name.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from redaction_pressure.redact.rules import Rule
    from redaction_pressure.redact.scanner import Budget, ScanResult

RESOURCE_EXHAUSTED = "resource_exhausted"
"""The error code of an episode that escaped its budget in an isolated worker."""
READY = "ready"
"""A worker's first message once it has loaded everything an episode needs."""
MEMORY_EXIT = 3
"""Exit status of a worker whose job did not fit in its memory cap."""


@dataclass(frozen=True)
class ScanJob:
    """Run `rules` over `texts` within `budget`; answered with a `ScanResult`."""

    rules: tuple[Rule, ...]
    texts: tuple[str, ...]
    budget: Budget


@dataclass(frozen=True)
class EpisodeJob:
    """Score `reply` against the hidden records of the stream for `seed`; answered with a `ScoreResult`.

    The records are rebuilt from the seed (never sent, never the private secret) and checked
    against `digest`, the SHA-256 of the user prompt the model saw (`scoring.prompt_digest`).
    """

    seed: int
    shown: int
    hidden: int
    digest: str
    reply: str
    budget: Budget


Job = ScanJob | EpisodeJob


@dataclass(frozen=True)
class StartFailed:
    """A worker that could not load what an episode needs (an import error, a memory cap too small)."""

    reason: str


@dataclass(frozen=True)
class Exhausted:
    """An episode that used up its own CPU allowance or memory, or whose attempts ran out."""

    detail: str

    def scan_result(self, texts: Sequence[str]) -> ScanResult:
        """The `ScanResult` of this episode: nothing removed, one `resource_exhausted` error."""
        from redaction_pressure.redact.rules import RedactionError
        from redaction_pressure.redact.scanner import ScanResult

        error = RedactionError(RESOURCE_EXHAUSTED, None, None, self.detail)
        return ScanResult(tuple(() for _ in texts), tuple(texts), 0, (error,), 0.0)


class PromptMismatch(ValueError):
    """The task data's prompt is not the one its seed generates."""
