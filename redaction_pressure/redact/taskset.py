"""redaction-pressure as a Verifiers v1 taskset (a verifiers adapter, with `serving.py`).

One turn. The model sees the first `shown` records of a seeded stream with their
secrets listed and answers with JSON regex rules; the rules run on the next `hidden`
records. The reward is three weighted parts, recall (0.35), precision (0.35) and a
clean gate (0.30), all zero on any invalid answer; see `rubric.py`.

Task data carries only what rebuilds the task (split, index, sizes) plus the prompt
and the identity block, never the hidden records or a private seed. Scoring rebuilds
the records from (split, index) (and the secret for private_eval), checks they match
the prompt the model saw, and scores off the event loop. Rewards are pure functions
of the trace and the task data, so `vf-replay` re-scores offline.
"""

from __future__ import annotations

import asyncio
import hashlib
import itertools
from collections import OrderedDict
from collections.abc import Iterator
from typing import Literal

import verifiers.v1 as vf
from pydantic import Field, model_validator

from redaction_pressure import splits
from redaction_pressure.corpus import DEFAULT_DIFFICULTY, corpus_version
from redaction_pressure.redact import policies
from redaction_pressure.redact.api import (
    DEFAULT_HIDDEN,
    DEFAULT_SHOWN,
    MAX_HIDDEN,
    MAX_SHOWN,
    RedactionTask,
    ScoreResult,
    identity,
    load_task,
    prompt_digest,
    score_reply,
)
from redaction_pressure.redact.harness import OneTurnHarness
from redaction_pressure.redact.pool import (
    DEFAULT_CPU_SECONDS,
    DEFAULT_DEADLINE_SECONDS,
    DEFAULT_MEMORY_MB,
    DEFAULT_WORKERS,
    PromptMismatch,
    ScanPool,
    shared_pool,
)
from redaction_pressure.redact.rubric import WEIGHTS
from redaction_pressure.redact.rules import MAX_REPLY_CHARS
from redaction_pressure.seal import scrub_initial_environ

_MEMO_SIZE = 256


class RedactionPressureData(vf.TaskData):
    split: str
    """Which split the task belongs to: train, dev or private_eval."""
    index: int
    """The task's index within its split; with the split it determines the seed."""
    shown_count: int
    """How many records the prompt shows (K)."""
    hidden_count: int
    """How many unseen records the rules are scored on (M)."""
    environment: dict[str, str]
    """The identity block at load time: versions, split commitment, source digest."""
    difficulty: str = DEFAULT_DIFFICULTY
    """The corpus level the task was built at: easy, standard, hard or expert."""


class RedactionPressureTaskConfig(vf.TaskConfig):
    scan_workers: int = Field(DEFAULT_WORKERS, ge=1)
    """Worker processes that run the rules, one episode at a time each (per scoring process);
    by default the number of CPUs this process may use."""
    scan_memory_mb: int = Field(DEFAULT_MEMORY_MB, ge=64)
    """Address-space cap of each scanning worker, in MiB."""
    scan_cpu_seconds: float = Field(DEFAULT_CPU_SECONDS, gt=0)
    """CPU seconds an episode may use in its worker; past them it ends resource_exhausted."""
    scan_deadline: float = Field(DEFAULT_DEADLINE_SECONDS, gt=0)
    """Wall-clock safety net: a worker stalled this long is replaced and the episode runs again."""


class RedactionPressureTask(vf.Task[RedactionPressureData, vf.State, RedactionPressureTaskConfig]):
    def __init__(self, data: RedactionPressureData, config: RedactionPressureTaskConfig | None = None) -> None:
        super().__init__(data, config)
        self._outcomes: OrderedDict[tuple, asyncio.Future] = OrderedDict()

    @property
    def pool(self) -> ScanPool:
        config = self.config
        return shared_pool(config.scan_workers, config.scan_memory_mb, config.scan_deadline, config.scan_cpu_seconds)

    @property
    def key(self) -> str:
        level = "" if self.data.difficulty == DEFAULT_DIFFICULTY else f"{self.data.difficulty}-"
        return f"{self.data.split}-{level}{self.data.index:05d}-k{self.data.shown_count}-m{self.data.hidden_count}"

    def runtime_env(self) -> dict[str, str]:
        # NOTE: the subprocess runtime hands the host environment to every process it starts
        # (the chat program, and any shell a non-default harness gives the model): mask the secret.
        return {splits.PRIVATE_ENV: ""}

    @vf.stop
    async def single_turn(self, trace: vf.Trace) -> bool:
        return trace.num_turns >= 1

    # Priorities fix the order verifiers sums rewards in: 0.35 + 0.35 + 0.30 is exactly
    # 1.0 in floating point, while 0.30 + 0.35 + 0.35 (name order) is 0.9999999999999999.
    @vf.reward(weight=WEIGHTS["recall"], priority=2)
    async def recall(self, trace: vf.Trace) -> float:
        return (await self._outcome(trace)).recall

    @vf.reward(weight=WEIGHTS["precision"], priority=1)
    async def precision(self, trace: vf.Trace) -> float:
        return (await self._outcome(trace)).precision

    @vf.reward(weight=WEIGHTS["clean_gate"])
    async def clean_gate(self, trace: vf.Trace) -> float:
        return (await self._outcome(trace)).clean_gate

    @vf.metric
    async def redaction(self, trace: vf.Trace) -> dict[str, float]:
        return (await self._outcome(trace)).metrics

    async def validate(self, runtime: vf.Runtime) -> bool | None:
        """The gold check: the oracle's rules score exactly 1.0."""

        def run() -> bool:
            task = self._rebuild()
            reply = policies.reply(policies.oracle_rules(task.hidden))
            return score_reply(task, reply, scanner=self.pool.scan).reward == 1.0

        return await asyncio.to_thread(run)

    async def _outcome(self, trace: vf.Trace) -> ScoreResult:
        """Score the trace's reply once, however many rewards and metrics ask."""
        reply = trace.last_reply
        if len(reply) > MAX_REPLY_CHARS:
            memo = (trace.id, "over the limit", len(reply))  # every such reply scores alike; never hash megabytes
        else:
            memo = (trace.id, hashlib.sha256(reply.encode("utf-8", "surrogatepass")).hexdigest())
        future = self._outcomes.get(memo)
        if future is None:
            future = asyncio.ensure_future(self._score(trace, reply))
            self._outcomes[memo] = future
            # A failure (say, a missing secret) is reported, not remembered.
            future.add_done_callback(lambda f: f.exception() and self._outcomes.pop(memo, None))
            while len(self._outcomes) > _MEMO_SIZE:
                self._outcomes.popitem(last=False)
        return await asyncio.shield(future)

    async def _score(self, trace: vf.Trace, reply: str) -> ScoreResult:
        data = self.data
        self._check_versions()
        seed = splits.seed_for(data.split, data.index, data.difficulty)
        digest = prompt_digest(data.prompt_text)

        try:
            # Every reply, whatever its outcome, through the pool's one scoring entry (in a worker
            # as a rule; this thread only waits on a pipe).
            result = await asyncio.to_thread(
                self.pool.score_episode, seed, data.shown_count, data.hidden_count, digest, reply
            )
        except PromptMismatch as exc:
            raise vf.TaskError(f"task {self.key}: {exc}") from None
        trace.info["environment"] = identity(
            data.split, splits.commitment(data.split, data.difficulty), data.difficulty
        )
        trace.info["redaction_errors"] = [error.to_dict() for error in result.errors]
        trace.info["secret_kinds"] = {
            kind: {"removed": gone, "total": total} for kind, (gone, total) in result.kinds.items()
        }
        trace.info["task_seed"] = seed
        return result

    def _check_versions(self) -> None:
        data = self.data
        loaded = data.environment.get("corpus_version")
        expected = corpus_version(data.difficulty)
        if loaded != expected:
            raise vf.TaskError(
                f"task {self.key} was built with corpus version {loaded}; this package "
                f"generates corpus version {expected}, so its hidden records differ"
            )
        if data.environment.get("split_commitment") != splits.commitment(data.split, data.difficulty):
            raise vf.TaskError(
                f"task {self.key} was built under another {data.split} split commitment "
                "(for private_eval: another secret); it cannot be scored here"
            )

    def _rebuild(self) -> RedactionTask:
        """The task behind this data, checked against what the model was shown."""
        self._check_versions()
        data = self.data
        task = load_task(
            data.split, data.index, shown=data.shown_count, hidden=data.hidden_count, difficulty=data.difficulty
        )
        if task.prompt.user != data.prompt_text:
            raise vf.TaskError(f"task {self.key}: the regenerated prompt differs from the task data")
        return task


class RedactionPressureConfig(vf.TasksetConfig):
    split: Literal["train", "dev", "private_eval"] = "dev"
    """Which split to load: train (unbounded), dev (64 tasks) or private_eval (needs the secret)."""
    shown: int = DEFAULT_SHOWN
    """Records shown in the prompt (K)."""
    hidden: int = DEFAULT_HIDDEN
    """Unseen records the rules are scored on (M)."""
    size: int | None = None
    """Number of tasks; default 64 for dev and private_eval, unbounded for train."""
    difficulty: Literal["easy", "standard", "hard", "expert"] = DEFAULT_DIFFICULTY
    """Corpus level: easy (a start for small models), standard, hard (conventions that vary by section) or expert (conventions that combine a sibling field and a vendor)."""
    task: RedactionPressureTaskConfig = RedactionPressureTaskConfig()
    """Scoring knobs passed to each task, under `--env.taskset.task.*` (the scan pool)."""

    @model_validator(mode="after")
    def _check(self) -> RedactionPressureConfig:
        if not 1 <= self.shown <= MAX_SHOWN:
            raise ValueError(f"shown must be 1 to {MAX_SHOWN}, got {self.shown}")
        if not 1 <= self.hidden <= MAX_HIDDEN:
            raise ValueError(f"hidden must be 1 to {MAX_HIDDEN}, got {self.hidden}")
        if self.size is not None and self.size < 1:
            raise ValueError(f"size must be positive, got {self.size}")
        if self.split == "dev" and self.size is not None and self.size > splits.DEV_SIZE:
            raise ValueError(f"dev has {splits.DEV_SIZE} tasks; size {self.size} is too large")
        return self


class RedactionPressureTaskset(vf.Taskset[RedactionPressureTask, RedactionPressureConfig]):
    def __init__(self, config: RedactionPressureConfig) -> None:
        super().__init__(config)
        self.INFINITE = config.split == "train" and config.size is None
        splits.commitment(config.split, config.difficulty)  # private_eval without its secret fails here, by name
        # NOTE: a non-default harness (bash) gives the model a shell that can read
        # /proc/<pid>/environ of this process; see redaction_pressure/seal.py.
        scrub_initial_environ(splits.PRIVATE_ENV)

    def load(self) -> Iterator[RedactionPressureTask]:
        config = self.config
        size = config.size
        if size is None and config.split != "train":
            size = splits.DEV_SIZE
        indices = itertools.count() if size is None else range(size)
        for index in indices:
            task = load_task(
                config.split, index, shown=config.shown, hidden=config.hidden, difficulty=config.difficulty
            )
            name = (
                f"{task.split}-{index:05d}"
                if config.difficulty == DEFAULT_DIFFICULTY
                else f"{task.split}-{config.difficulty}-{index:05d}"
            )
            yield RedactionPressureTask(
                RedactionPressureData(
                    id=name,
                    name=name,
                    prompt=task.prompt.user,
                    system_prompt=task.prompt.system,
                    split=task.split,
                    index=index,
                    shown_count=config.shown,
                    hidden_count=config.hidden,
                    environment=task.identity,
                    difficulty=config.difficulty,
                ),
                config.task,
            )


__all__ = ["RedactionPressureTaskset", "OneTurnHarness"]
