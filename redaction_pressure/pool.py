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
- a reward never depends on load or on faults from outside. The limit that ends an
  episode is its own CPU time in its worker (`cpu_seconds`, enforced by the kernel with
  `RLIMIT_CPU`) or its memory cap: only those end it as `resource_exhausted` (reward 0).
  A job that runs out of memory on a worker that served earlier episodes runs again on a
  fresh one, so the cap means the same for every episode. A worker that dies from outside
  (killed, crashed) or stalls past the wall-clock safety
  net (`deadline`, far above any CPU allowance) is replaced and the episode runs again on
  a fresh worker (up to `KILLED_ATTEMPTS` runs when killed by a signal from outside, up to
  `ATTEMPTS` when it crashed or stalled, since a crash may be the rules' own doing);
- a worker takes episodes only once it is ready (its imports done); replacements start in
  the background, and a start killed from outside is tried again (for up to
  `START_TIMEOUT_SECONDS`); a worker that cannot start fails the episode that waits for it
  with the reason, and its slot starts again for the next one;
- at most `workers` episodes run at once; further callers wait for a free worker.
"""

from __future__ import annotations

import atexit
import math
import os
import queue
import signal
import subprocess
import sys
import threading
import time
from collections.abc import Sequence
from multiprocessing.connection import Connection

from redaction_pressure.scoring import ScoreResult, records_for, score_records
from redaction_pressure.rules import Rule
from redaction_pressure.scanner import DEFAULT_BUDGET, Budget, ScanResult
from redaction_pressure.splits import PRIVATE_ENV
from redaction_pressure.worker import MEMORY_EXIT, PROMPT_MISMATCH, READY, RESOURCE_EXHAUSTED, exhausted


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
KILLED_ATTEMPTS = 12
"""Runs an episode gets when its worker is killed from outside (SIGKILL, SIGTERM, SIGINT,
SIGHUP): never the episode's doing, so only a pathological killer exhausts it."""
_OUTSIDE_SIGNALS = {-signal.SIGKILL, -signal.SIGTERM, -signal.SIGINT, -signal.SIGHUP}
START_TIMEOUT_SECONDS = 120.0

__all__ = ["RESOURCE_EXHAUSTED", "PromptMismatch", "ScanPool", "available_cpus", "shared_pool"]


class PromptMismatch(ValueError):
    """The task data's prompt is not the one its seed generates."""


class _Exhausted:
    """An episode that used up its own CPU allowance or memory, or whose attempts ran out."""

    def __init__(self, detail: str) -> None:
        self.detail = detail


class _Retry:
    """An attempt lost to the worker, not (or not surely) to the episode: killed, crashed, stalled."""

    def __init__(self, detail: str, killed: bool = False) -> None:
        self.detail, self.killed = detail, killed


class _Broken:
    """Stands in the idle queue for a worker that could not be started."""

    def __init__(self, detail: str) -> None:
        self.detail = detail


class _Worker:
    """One `python -m redaction_pressure.worker` process and its two pipe ends."""

    def __init__(self, memory_bytes: int, cpu_seconds: float) -> None:
        # A plain subprocess, not multiprocessing: it never re-runs the caller's
        # __main__ module and inherits no threads or locks. It needs no secret either.
        env = {key: value for key, value in os.environ.items() if key != PRIVATE_ENV}
        self.process = subprocess.Popen(
            [sys.executable, "-m", "redaction_pressure.worker", str(memory_bytes), repr(cpu_seconds)],
            stdin=subprocess.PIPE, stdout=subprocess.PIPE, env=env, close_fds=True,
        )  # fmt: skip
        self.jobs_done = 0
        self.jobs = Connection(os.dup(self.process.stdin.fileno()), readable=False)
        self.results = Connection(os.dup(self.process.stdout.fileno()), writable=False)
        self.process.stdin.close()
        self.process.stdout.close()

    def wait_ready(self, timeout: float) -> str | None:
        """None once the worker has announced it is ready, else why it is not."""
        try:
            if self.results.poll(timeout) and self.results.recv() == READY:
                return None
            return f"a scan worker did not start within {timeout:g} s"
        except (EOFError, OSError):
            return f"a scan worker exited while starting (status {self.process.wait()})"

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
    """`workers` single-threaded scanning processes with a memory cap and a CPU allowance per episode."""

    def __init__(
        self,
        workers: int = DEFAULT_WORKERS,
        memory_mb: int = DEFAULT_MEMORY_MB,
        deadline: float = DEFAULT_DEADLINE_SECONDS,
        cpu_seconds: float = DEFAULT_CPU_SECONDS,
    ) -> None:
        if workers < 1 or memory_mb < 64 or deadline <= 0 or cpu_seconds <= 0:
            raise ValueError(
                f"a scan pool needs workers >= 1, memory_mb >= 64, a positive deadline and positive "
                f"cpu_seconds (got {workers}, {memory_mb}, {deadline}, {cpu_seconds})"
            )
        self.workers, self.memory_mb, self.deadline, self.cpu_seconds = workers, memory_mb, deadline, cpu_seconds
        self._idle: queue.Queue[_Worker | _Broken] = queue.Queue()
        self._lock = threading.Lock()
        self._closed = False
        self.replaced = 0
        """Workers replaced so far (killed, crashed, stalled or over an episode's limit)."""
        self.retried = 0
        """Episode attempts run again because their worker died from outside or stalled."""
        starting = [self._spawn() for _ in range(workers)]
        for worker in starting:
            problem = worker.wait_ready(START_TIMEOUT_SECONDS)
            if problem:
                for started in starting:
                    started.stop(kill=True)
                raise RuntimeError(problem)
            self._idle.put(worker)

    def _spawn(self) -> _Worker:
        return _Worker(self.memory_mb * 1024 * 1024, self.cpu_seconds)

    def _replace(self, worker: _Worker) -> None:
        """Kill `worker` and start its replacement in the background; it joins the idle queue when ready."""
        worker.stop(kill=True)
        with self._lock:
            self.replaced += 1
        self._start_one()

    def _start_one(self) -> None:
        """Start a worker in the background; the idle queue gets it, or a `_Broken` saying why not.

        A start killed from outside (a signal) is tried again for up to `START_TIMEOUT_SECONDS`,
        however often that happens: on a loaded machine imports are slow and a killer that
        strikes at random hits starting workers too. A start that fails by itself (a broken
        install, a memory cap too small) is reported at once.
        """

        def start() -> None:
            deadline = time.monotonic() + START_TIMEOUT_SECONDS
            pause = 0.05
            while True:
                fresh = self._spawn()
                problem = fresh.wait_ready(max(1.0, deadline - time.monotonic()))
                if not problem:
                    self._idle.put(fresh)
                    return
                fresh.stop(kill=True)
                if fresh.process.returncode not in _OUTSIDE_SIGNALS or time.monotonic() >= deadline:
                    break
                time.sleep(pause)
                pause = min(2 * pause, 0.2)
            self._idle.put(_Broken(problem))

        threading.Thread(target=start, name="scan-worker-start", daemon=True).start()

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
        """Run a job on ready workers until it has an answer or its attempts run out."""
        killed = crashed = 0
        while True:
            outcome = self._attempt(job)
            if not isinstance(outcome, _Retry):
                return outcome
            killed, crashed = killed + outcome.killed, crashed + (not outcome.killed)
            if killed >= KILLED_ATTEMPTS or crashed >= ATTEMPTS:
                return _Exhausted(f"{outcome.detail}, on each of {killed + crashed} attempts")
            with self._lock:
                self.retried += 1

    def _take(self) -> _Worker:
        while True:
            if self._closed:
                raise RuntimeError("this scan pool is closed")
            worker = self._idle.get()
            if isinstance(worker, _Broken):
                # This episode fails, saying why; the slot tries again, so one bad start never
                # poisons a long-lived pool.
                self._start_one()
                raise RuntimeError(worker.detail)
            if worker.process.poll() is None:
                return worker
            self._replace(worker)  # died while idle (killed from outside): no episode's doing

    def _attempt(self, job: tuple):
        worker = self._take()
        try:
            worker.jobs.send(job)
            if worker.results.poll(self.deadline):
                answer = worker.results.recv()
            else:
                self._replace(worker)
                return _Retry(f"the worker stalled past the {self.deadline:g} s wall-clock safety net")
        except (EOFError, OSError):
            try:
                status = worker.process.wait(timeout=5)
            except subprocess.TimeoutExpired:
                status = None
            self._replace(worker)
            if status == -signal.SIGXCPU:
                return _Exhausted(f"the episode used more than its {math.ceil(self.cpu_seconds)} s of CPU")
            if status == MEMORY_EXIT:
                if worker.jobs_done == 0:  # a fresh worker: the episode's own doing
                    return _Exhausted("the rules ran out of the worker's memory cap")
                return _Retry("the worker ran out of memory after earlier episodes")
            return _Retry(f"the worker died while scanning (status {status})", killed=status in _OUTSIDE_SIGNALS)
        worker.jobs_done += 1
        self._idle.put(worker)
        if isinstance(answer, str) and answer.startswith(RESOURCE_EXHAUSTED + ": "):
            return _Exhausted(answer.removeprefix(RESOURCE_EXHAUSTED + ": "))
        return answer

    def close(self) -> None:
        """Stop every worker; the pool cannot be used afterwards."""
        self._closed = True
        for _ in range(self.workers):
            worker = self._idle.get()
            if isinstance(worker, _Worker):
                worker.stop(kill=False)

    def __enter__(self) -> ScanPool:
        return self

    def __exit__(self, *exc) -> None:
        self.close()


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
            pool = _SHARED[key] = ScanPool(workers, memory_mb, deadline, cpu_seconds)
        return pool


@atexit.register
def _close_shared() -> None:
    for pool in _SHARED.values():
        if not pool._closed:
            pool.close()
