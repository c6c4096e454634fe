"""Isolated scanning: a small pool of single-threaded worker processes, started once and reused.

Why: the `regex` engine interrupts a call on the process's CPU clock, so a scan that
shares its process with other busy threads is cut off early and its reward depends on
load; and a hostile answer may escape the matching budget altogether (compile time,
memory). In a worker that runs one episode at a time on one thread, the process CPU
clock measures only that episode, so the shared episode budget means the same thing
however busy the machine is.

Contract of `ScanPool.scan(rules, texts, budget)` (a blocking call; run it off the
event loop):
- it returns exactly what `scanner.scan` returns for the same arguments, computed in a
  worker;
- a worker that runs past the wall-clock deadline is killed and replaced; one that dies
  or runs out of its memory cap is replaced; either way the episode ends with a single
  `resource_exhausted` error (reward 0) and the pool stays usable;
- at most `workers` episodes run at once; further callers wait for a free worker, and
  the deadline counts only from when a worker takes the episode.
"""

from __future__ import annotations

import atexit
import os
import queue
import subprocess
import sys
import threading
from collections.abc import Sequence
from multiprocessing.connection import Connection

from redaction_pressure.api import ScoreResult, records_for, score_records
from redaction_pressure.rules import Rule
from redaction_pressure.scanner import DEFAULT_BUDGET, Budget, ScanResult
from redaction_pressure.splits import PRIVATE_ENV
from redaction_pressure.worker import PROMPT_MISMATCH, RESOURCE_EXHAUSTED, exhausted

DEFAULT_WORKERS = 2
DEFAULT_MEMORY_MB = 1024
DEFAULT_DEADLINE_SECONDS = 10.0
"""Wall-clock seconds an episode may hold a worker: far above the 1 s CPU budget, so only
an episode that escapes the budget (or a machine stalled for seconds) reaches it."""

__all__ = ["RESOURCE_EXHAUSTED", "PromptMismatch", "ScanPool", "shared_pool"]


class PromptMismatch(ValueError):
    """The task data's prompt is not the one its seed generates."""


class _Exhausted:
    """A job whose worker had to be killed or ran out of memory."""

    def __init__(self, detail: str) -> None:
        self.detail = detail


class _Worker:
    """One `python -m redaction_pressure.worker` process and its two pipe ends."""

    def __init__(self, memory_bytes: int) -> None:
        # A plain subprocess, not multiprocessing: it never re-runs the caller's
        # __main__ module and inherits no threads or locks. It needs no secret either.
        env = {key: value for key, value in os.environ.items() if key != PRIVATE_ENV}
        self.process = subprocess.Popen(
            [sys.executable, "-m", "redaction_pressure.worker", str(memory_bytes)],
            stdin=subprocess.PIPE, stdout=subprocess.PIPE, env=env, close_fds=True,
        )  # fmt: skip
        self.jobs = Connection(os.dup(self.process.stdin.fileno()), readable=False)
        self.results = Connection(os.dup(self.process.stdout.fileno()), writable=False)
        self.process.stdin.close()
        self.process.stdout.close()

    def stop(self, kill: bool) -> None:
        if not kill:
            try:
                self.jobs.send(None)
                self.process.wait(timeout=5)
            except (OSError, subprocess.TimeoutExpired):
                kill = True
        if kill:
            self.process.kill()
            self.process.wait(timeout=5)
        self.jobs.close()
        self.results.close()


class ScanPool:
    """`workers` single-threaded scanning processes with a memory cap and a wall deadline."""

    def __init__(
        self,
        workers: int = DEFAULT_WORKERS,
        memory_mb: int = DEFAULT_MEMORY_MB,
        deadline: float = DEFAULT_DEADLINE_SECONDS,
    ) -> None:
        if workers < 1 or memory_mb < 64 or deadline <= 0:
            raise ValueError(
                f"a scan pool needs workers >= 1, memory_mb >= 64 and a positive deadline "
                f"(got {workers}, {memory_mb}, {deadline})"
            )
        self.workers, self.memory_mb, self.deadline = workers, memory_mb, deadline
        self._idle: queue.Queue[_Worker] = queue.Queue()
        self._lock = threading.Lock()
        self._closed = False
        self.replaced = 0
        for _ in range(workers):
            self._idle.put(self._start())

    def _start(self) -> _Worker:
        return _Worker(self.memory_mb * 1024 * 1024)

    def scan(self, rules: Sequence[Rule], texts: Sequence[str], budget: Budget = DEFAULT_BUDGET) -> ScanResult:
        """Scan in a worker (blocking); see the module docstring for the contract."""
        outcome = self._run(("scan", list(rules), list(texts), budget))
        return exhausted(outcome.detail, texts) if isinstance(outcome, _Exhausted) else outcome

    def score_episode(
        self, seed: int, shown: int, hidden: int, digest: str, reply: str, budget: Budget = DEFAULT_BUDGET
    ) -> ScoreResult:
        """Score a whole episode in a worker, which rebuilds the records from the seed.

        Raises `PromptMismatch` when those records do not give the prompt with SHA-256
        `digest` (the task data and this package disagree about the task).
        """
        outcome = self._run(("episode", seed, shown, hidden, digest, reply, budget))
        if outcome == PROMPT_MISMATCH:
            raise PromptMismatch("the records rebuilt from the task's seed do not give the prompt the model saw")
        if isinstance(outcome, _Exhausted):
            # The rare path: grade the failure here, so metrics keep their usual keys.
            records = records_for(seed, shown, hidden)[shown:]
            fail = lambda rules, texts, budget: exhausted(outcome.detail, texts)  # noqa: E731
            return score_records(records, reply, budget=budget, scanner=fail)
        return outcome

    def _run(self, job: tuple):
        """Run a job on a free worker: its answer, or `_Exhausted` if the worker had to go."""
        if self._closed:
            raise RuntimeError("this scan pool is closed")
        worker = self._idle.get()
        if worker.process.poll() is not None:
            # Died while idle (killed from outside): not this episode's doing.
            worker.stop(kill=True)
            worker = self._start()
            with self._lock:
                self.replaced += 1
        answer, detail = None, "the worker died while scanning (out of memory or killed)"
        try:
            worker.jobs.send(job)
            if worker.results.poll(self.deadline):
                answer = worker.results.recv()
            else:
                detail = f"the episode held its worker past the {self.deadline:g} s wall-clock deadline"
        except (EOFError, OSError):
            pass
        finally:
            if answer is None:
                worker.stop(kill=True)
                worker = self._start()
                with self._lock:
                    self.replaced += 1
            self._idle.put(worker)
        if answer is None:
            return _Exhausted(detail)
        if isinstance(answer, str) and answer.startswith(RESOURCE_EXHAUSTED + ": "):
            return _Exhausted(answer.removeprefix(RESOURCE_EXHAUSTED + ": "))
        return answer

    def close(self) -> None:
        """Stop every worker; the pool cannot be used afterwards."""
        self._closed = True
        for _ in range(self.workers):
            self._idle.get().stop(kill=False)

    def __enter__(self) -> ScanPool:
        return self

    def __exit__(self, *exc) -> None:
        self.close()


_SHARED: dict[tuple[int, int, float], ScanPool] = {}
_SHARED_LOCK = threading.Lock()


def shared_pool(
    workers: int = DEFAULT_WORKERS,
    memory_mb: int = DEFAULT_MEMORY_MB,
    deadline: float = DEFAULT_DEADLINE_SECONDS,
) -> ScanPool:
    """The process-wide pool for these settings, started on first use and reused."""
    key = (workers, memory_mb, deadline)
    with _SHARED_LOCK:
        pool = _SHARED.get(key)
        if pool is None:
            pool = _SHARED[key] = ScanPool(workers, memory_mb, deadline)
        return pool


@atexit.register
def _close_shared() -> None:
    for pool in _SHARED.values():
        if not pool._closed:
            pool.close()
