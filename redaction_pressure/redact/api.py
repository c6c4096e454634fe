"""The plain Python API: `load_task(split, index)` and `score_reply(task, reply)`.

For people and tools outside verifiers. A task is rebuilt from (split, index, sizes),
plus the secret for private_eval, so it is the same wherever it is loaded. Scoring a
reply parses it strictly, scans the hidden records within the episode budget and
grades the removal, through `scoring` as the taskset does: the taskset scores each reply
with the same `scoring.score_episode`, in the pool's worker processes, and its rewards read
the `ScoreResult` it returns.
"""

from __future__ import annotations

from pydantic import BaseModel, ConfigDict

from redaction_pressure import splits
from redaction_pressure.corpus import DEFAULT_DIFFICULTY, DIFFICULTIES, corpus_version
from redaction_pressure.identity import block
from redaction_pressure.redact.prompt import SYSTEM_PROMPT, user_prompt
from redaction_pressure.redact.rubric import REWARD_SCHEMA_VERSION
from redaction_pressure.redact.scanner import DEFAULT_BUDGET, Budget
from redaction_pressure.redact.scoring import Scanner, ScoreResult, prompt_digest, records_for, score_records
from redaction_pressure.spans import Record

ENVIRONMENT = "redaction-pressure"


def identity(split: str, commitment: str, difficulty: str = DEFAULT_DIFFICULTY) -> dict[str, str]:
    """redaction-pressure's identity block; its `corpus_version` names the difficulty level
    (`4`, `4-easy`, `5-hard`)."""
    versions = {"corpus_version": corpus_version(difficulty), "reward_schema_version": REWARD_SCHEMA_VERSION}
    return block(ENVIRONMENT, split, commitment, versions)


__all__ = [
    "DEFAULT_HIDDEN", "DEFAULT_SHOWN", "MAX_HIDDEN", "MAX_SHOWN", "Prompt", "RedactionTask", "Scanner",
    "ScoreResult", "check_sizes", "load_task", "prompt_digest", "records_for", "score_records", "score_reply",
]  # fmt: skip

DEFAULT_SHOWN = 8
DEFAULT_HIDDEN = 32
MAX_SHOWN = 64
MAX_HIDDEN = 256


class Prompt(BaseModel):
    """The two prompt texts a model sees."""

    model_config = ConfigDict(frozen=True)

    system: str
    user: str


class RedactionTask(BaseModel):
    """One task: its prompt, the shown records and the hidden records the rules run on."""

    model_config = ConfigDict(frozen=True)

    split: str
    index: int
    prompt: Prompt
    shown: tuple[Record, ...]
    hidden: tuple[Record, ...]
    identity: dict[str, str]
    difficulty: str = DEFAULT_DIFFICULTY


def check_sizes(shown: int, hidden: int) -> None:
    if not 1 <= shown <= MAX_SHOWN:
        raise ValueError(f"shown must be 1 to {MAX_SHOWN} records, got {shown}")
    if not 1 <= hidden <= MAX_HIDDEN:
        raise ValueError(f"hidden must be 1 to {MAX_HIDDEN} records, got {hidden}")


def load_task(
    split: str,
    index: int,
    *,
    shown: int = DEFAULT_SHOWN,
    hidden: int = DEFAULT_HIDDEN,
    difficulty: str = DEFAULT_DIFFICULTY,
) -> RedactionTask:
    """Build task `index` of `split` at `difficulty` (easy, standard, hard, expert); private_eval
    reads REDACTION_PRESSURE_PRIVATE_SEED."""
    check_sizes(shown, hidden)
    if difficulty not in DIFFICULTIES:
        raise ValueError(f"unknown difficulty {difficulty!r}; choose one of {', '.join(DIFFICULTIES)}")
    records = records_for(splits.seed_for(split, index, difficulty), shown, hidden)
    return RedactionTask(
        split=split,
        index=index,
        prompt=Prompt(system=SYSTEM_PROMPT, user=user_prompt(records[:shown], hidden)),
        shown=records[:shown],
        hidden=records[shown:],
        identity=identity(split, splits.commitment(split, difficulty), difficulty),
        difficulty=difficulty,
    )


def score_reply(
    task: RedactionTask, reply: str, *, budget: Budget = DEFAULT_BUDGET, scanner: Scanner | None = None
) -> ScoreResult:
    """Score a raw reply string against the task's hidden records.

    By default the rules run in the process-wide scan pool (`pool.shared_pool()`), as the
    verifiers taskset runs them: the matching budget is then charged to the episode alone,
    so the reward is the taskset's whatever other threads of this process are doing.
    `scanner=scan` matches in this thread instead (faster for batch work on a quiet
    process; a busy thread beside it can make `regex` time out early); any other
    `ScanPool.scan` works too.
    """
    if scanner is None:
        from redaction_pressure.redact.pool import shared_pool

        scanner = shared_pool().scan
    return score_records(task.hidden, reply, budget=budget, scanner=scanner)
