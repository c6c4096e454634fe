"""Isolated scanning: a small pool of single-threaded worker processes, started once and reused.

Why: the `regex` engine interrupts a call on the process's CPU clock, so a scan that
shares its process with other busy threads is cut off early and its reward depends on
load; and a hostile answer may escape the matching budget altogether (compile time,
memory). In a worker that runs one episode at a time on one thread, the process CPU
clock measures only that episode, so the shared episode budget means the same thing
however busy the machine is.

`ScanPool.score_episode(seed, shown, hidden, digest, reply, budget)` is the one scoring
entry of the taskset: every reply and every outcome (valid, invalid, over `MAX_REPLY_CHARS`,
out of budget, out of CPU or memory, a worker stalled or killed) comes back as the
`ScoreResult` of `scoring.score_episode`, run in a worker or (a reply refused before any
matching, an exhausted episode) here. `ScanPool.scan(rules, texts, budget)` returns exactly
what `scanner.scan` returns for the same arguments, computed in a worker. Both are blocking
calls (run them off the event loop); jobs cross the pipe as the types of `jobs`. Contract:
- a reward never depends on load or on faults from outside. The limit that ends an
  episode is its own CPU time in its worker (`cpu_seconds`, enforced by the kernel with
  `RLIMIT_CPU`) or its memory cap: only those end it as `resource_exhausted` (reward 0).
  A job that runs out of memory on a worker that served earlier episodes runs again on a
  fresh one, so the cap means the same for every episode. A worker that dies from outside
  (killed, crashed) or stalls past the wall-clock safety
  net (`deadline`, far above any CPU allowance) is replaced and the episode runs again on
  a fresh worker (up to `KILLED_ATTEMPTS` runs when killed by a signal from outside, up to
  `ATTEMPTS` when it crashed or stalled, since a crash may be the rules' own doing);
- a close budget verdict is checked again: an episode that ran out of its matching budget
  (`budget_exhausted`) although it had done at least `RECHECK_PROGRESS` of its (rule, record)
  calls runs again, up to `BUDGET_RUNS` runs in all, and the first run that finishes within
  the budget is the episode's (a budget verdict stands only if every run ran out: the
  fastest run decides). CPU time measured under load only grows, by tens of percent when
  other processes share the cores, so a single near-budget run could flip the reward;
- workers are started, replaced and handed out by `supervision.WorkerPool` (its start
  policy: starts killed from outside are tried again, a slot that fails by itself is broken
  and heals; episodes fail only while every slot is broken). The constructor never fails on
  a start: with `wait=True` (the default) it returns once every slot is ready or broken,
  with `wait=False` at once (episodes then wait for the first ready worker), which is what
  `shared_pool` uses, so concurrent episodes create one pool per process however slow or
  often killed its first starts are;
- workers die with the process that owns the pool, and `kill_all_workers()` stops every
  worker of every pool at once (the CLI and serve-env call it on SIGTERM and SIGINT);
- at most `workers` episodes run at once; further callers wait for a free worker.
"""

from __future__ import annotations

import atexit
import math
import os
import signal
import subprocess
import threading
import weakref
from collections.abc import Sequence
from dataclasses import dataclass

from redaction_pressure.redact.jobs import (
    MEMORY_EXIT,
    RESOURCE_EXHAUSTED,
    EpisodeJob,
    Exhausted,
    Job,
    PromptMismatch,
    ScanJob,
)
from redaction_pressure.redact.rules import MAX_REPLY_CHARS, Rule
from redaction_pressure.redact.scanner import DEFAULT_BUDGET, Budget, ScanResult
from redaction_pressure.redact.scoring import ScoreResult, score_episode
from redaction_pressure.redact.supervision import OUTSIDE_SIGNALS, WorkerPool


def available_cpus() -> int:
    """The CPUs this process may run on (its affinity mask), not the machine's count."""
    try:
        return len(os.sched_getaffinity(0))
    except (AttributeError, OSError):
        return os.cpu_count() or 1


DEFAULT_WORKERS = available_cpus()
DEFAULT_MEMORY_MB = 1024
DEFAULT_CPU_SECONDS = 5.0
"""CPU seconds an episode may use in its worker: five times the 1 s matching budget, so only
an episode that escapes the budget (compiling, grading a flood of matches) reaches it."""
DEFAULT_DEADLINE_SECONDS = 120.0
"""Wall-clock safety net: a worker that holds an episode this long without using up its CPU
allowance is stalled from outside (stopped, starved, swapping); it is replaced and the
episode runs again."""
ATTEMPTS = 3
"""Runs an episode gets when its worker crashes (a signal such as SIGSEGV, or an unexpected
exit) or stalls: a crash may be the rules' doing, so after this many it is exhausted."""
KILLED_ATTEMPTS = 24
"""Runs an episode gets when its worker is killed from outside (SIGKILL, SIGTERM, SIGINT,
SIGHUP): never the episode's doing, so only a pathological killer exhausts it. (12 was too
few: a killer striking every second on a 2-core machine running three times its cores' work
hit one budget-hungry episode, which needs two full 1 s scans, on 12 runs in a row.)"""
RECHECK_PROGRESS = 0.5
"""A `budget_exhausted` verdict reached after at least this share of the episode's (rule, record)
calls is close to the line, so the episode runs again (module docstring); a flood that runs out
early (a tenth of the way through) is far over and is not run twice."""
BUDGET_RUNS = 3
"""Runs a close budget verdict gets in all before it stands."""

__all__ = ["RESOURCE_EXHAUSTED", "PromptMismatch", "ScanPool", "available_cpus", "kill_all_workers", "shared_pool"]


@dataclass(frozen=True)
class _Retry:
    """An attempt lost to the worker, not (or not surely) to the episode: killed, crashed, stalled."""

    detail: str
    killed: bool = False


class ScanPool(WorkerPool):
    """`workers` single-threaded scanning processes with a memory cap and a CPU allowance per episode."""

    def __init__(
        self,
        workers: int = DEFAULT_WORKERS,
        memory_mb: int = DEFAULT_MEMORY_MB,
        deadline: float = DEFAULT_DEADLINE_SECONDS,
        cpu_seconds: float = DEFAULT_CPU_SECONDS,
        *,
        wait: bool = True,
        budget_runs: int = BUDGET_RUNS,
        rerun_fresh: bool = False,
    ) -> None:
        if workers < 1 or memory_mb < 64 or deadline <= 0 or cpu_seconds <= 0 or budget_runs < 1:
            raise ValueError(
                f"a scan pool needs workers >= 1, memory_mb >= 64, a positive deadline, positive "
                f"cpu_seconds and budget_runs >= 1 (got {workers}, {memory_mb}, {deadline}, {cpu_seconds}, {budget_runs})"
            )
        super().__init__(workers, memory_mb, cpu_seconds)
        self.deadline, self.budget_runs, self.rerun_fresh = deadline, budget_runs, rerun_fresh
        """`budget_runs` 1 turns the recheck off; `rerun_fresh` runs each recheck on a worker that has
        run no job yet (measured worse under load: a fresh process's first scan is slower)."""
        self.retried = 0
        """Episode attempts run again because their worker died from outside or stalled."""
        self.rechecked = 0
        """Runs of close budget verdicts beyond the first."""
        self.served = 0
        """Jobs (scans and episodes) this pool has answered, whatever the outcome."""
        _POOLS.add(self)
        self._open(wait)

    # -- scanning ----------------------------------------------------------------------------

    def scan(self, rules: Sequence[Rule], texts: Sequence[str], budget: Budget = DEFAULT_BUDGET) -> ScanResult:
        """Scan in a worker (blocking); see the module docstring for the contract."""
        job = ScanJob(tuple(rules), tuple(texts), budget)
        outcome = self._run(job)
        return outcome.scan_result(job.texts) if isinstance(outcome, Exhausted) else outcome

    def score_episode(
        self, seed: int, shown: int, hidden: int, digest: str, reply: str, budget: Budget = DEFAULT_BUDGET
    ) -> ScoreResult:
        """Score a whole episode, whatever its outcome (module docstring): the taskset's one scoring call.

        Raises `PromptMismatch` when the records rebuilt from the seed do not give the prompt
        with SHA-256 `digest` (the task data and this package disagree about the task).
        """
        if len(reply) > MAX_REPLY_CHARS:
            reply = reply.strip()  # what parsing reads first: padding never goes through a pipe
        job = EpisodeJob(seed, shown, hidden, digest, reply, budget)
        if len(reply) > MAX_REPLY_CHARS:
            # Refused by parsing before any matching: no worker needed, and no megabytes through its pipe.
            return score_episode(job, scanner=_never)
        outcome = self._run(job)
        if isinstance(outcome, PromptMismatch):
            raise outcome
        if isinstance(outcome, Exhausted):
            # The rare path: grade the failure here, so metrics keep their usual keys.
            return score_episode(job, scanner=lambda rules, texts, budget: outcome.scan_result(texts))
        return outcome

    def _run(self, job: Job):
        """Run a job on ready workers until it has an answer or its attempts run out; recheck a close budget verdict."""
        outcome = self._run_once(job, fresh=False)
        runs = 1
        while runs < self.budget_runs and _near_budget(outcome, job):
            with self._changed:
                self.rechecked += 1
            outcome = self._run_once(job, fresh=self.rerun_fresh)
            runs += 1
        with self._changed:
            self.served += 1
        return outcome

    def _run_once(self, job: Job, fresh: bool):
        killed = crashed = 0
        while True:
            outcome = self._attempt(job, fresh)
            if not isinstance(outcome, _Retry):
                return outcome
            killed, crashed = killed + outcome.killed, crashed + (not outcome.killed)
            if killed >= KILLED_ATTEMPTS or crashed >= ATTEMPTS:
                return Exhausted(f"{outcome.detail}, on each of {killed + crashed} attempts")
            with self._changed:
                self.retried += 1

    def _attempt(self, job: Job, fresh: bool = False):
        worker = self._take(fresh)
        try:
            worker.jobs.send(job)
            if worker.results.poll(self.deadline):
                answer = worker.results.recv()
            else:
                self._release()
                self._replace(worker)
                return _Retry(f"the worker stalled past the {self.deadline:g} s wall-clock safety net")
        except (EOFError, OSError):
            try:
                status = worker.process.wait(timeout=5)
            except subprocess.TimeoutExpired:
                status = None
            self._release()
            if self._closed:
                self._discard(worker)
                raise RuntimeError("this scan pool is closed") from None
            self._replace(worker)
            if status == -signal.SIGXCPU:
                return Exhausted(f"the episode used more than its {math.ceil(self.cpu_seconds)} s of CPU")
            if status == MEMORY_EXIT:
                if worker.jobs_done == 0:  # a fresh worker: the episode's own doing
                    return Exhausted("the rules ran out of the worker's memory cap")
                return _Retry("the worker ran out of memory after earlier episodes")
            return _Retry(f"the worker died while scanning (status {status})", killed=status in OUTSIDE_SIGNALS)
        worker.jobs_done += 1
        self._release(worker)
        return answer


def _never(rules: Sequence[Rule], texts: Sequence[str], budget: Budget) -> ScanResult:
    raise AssertionError("a reply over MAX_REPLY_CHARS never parses, so it is never scanned")


def _near_budget(outcome, job: Job) -> bool:
    """Whether `outcome` is a budget verdict reached after most of the job's calls (see `RECHECK_PROGRESS`)."""
    errors = getattr(outcome, "errors", ())
    if not errors or errors[0].code != "budget_exhausted" or errors[0].rule is None or errors[0].record is None:
        return False
    if isinstance(job, ScanJob):
        records = len(job.texts)
        calls = len(job.rules) * records
    else:  # an episode: the worker parsed the reply, the result says how many rules
        records = job.hidden
        calls = outcome.rules * records
    if calls <= 0:
        return False
    done = errors[0].rule * records + errors[0].record
    return done >= RECHECK_PROGRESS * calls


_POOLS: weakref.WeakSet[ScanPool] = weakref.WeakSet()


def kill_all_workers() -> None:
    """Kill every worker of every pool in this process at once (on SIGTERM/SIGINT); the pools are closed."""
    for pool in list(_POOLS):
        pool.close(kill=True)


_SHARED: dict[tuple, ScanPool] = {}
_SHARED_LOCK = threading.Lock()


def shared_pool(
    workers: int = DEFAULT_WORKERS,
    memory_mb: int = DEFAULT_MEMORY_MB,
    deadline: float = DEFAULT_DEADLINE_SECONDS,
    cpu_seconds: float = DEFAULT_CPU_SECONDS,
) -> ScanPool:
    """The process-wide pool for these settings, started on first use and reused."""
    key = (workers, memory_mb, deadline, cpu_seconds)
    with _SHARED_LOCK:
        pool = _SHARED.get(key)
        if pool is None:
            # Never waits for a start: episodes that arrive together share this one pool and
            # wait for its first ready worker, however slow or often killed its starts are.
            pool = _SHARED[key] = ScanPool(workers, memory_mb, deadline, cpu_seconds, wait=False)
        return pool


@atexit.register
def _close_shared() -> None:
    for pool in _SHARED.values():
        if not pool._closed:
            pool.close()
