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
- a close budget verdict is checked again: an episode that ran out of its matching budget
  (`budget_exhausted`) although it had done at least `RECHECK_PROGRESS` of its (rule, record)
  calls runs again, up to `BUDGET_RUNS` runs in all, and the first run that finishes within
  the budget is the episode's (a budget verdict stands only if every run ran out: the
  fastest run decides). CPU time measured under load only grows, by tens of percent when
  other processes share the cores, so a single near-budget run could flip the reward;
- one start policy for every worker start (the pool's first workers, replacements, a slot
  retried after a failure): a start killed or stalled from outside is tried again, with a
  backoff up to `START_BACKOFF_SECONDS` and a full `START_TIMEOUT_SECONDS` for every
  attempt, for as long as the pool is open. Only a worker that fails by itself (a broken
  install, an import error, a memory cap too small to start in; each named) marks its
  slot broken, and a broken slot tries again after a pause. Episodes run on the workers
  that are ready; they fail (with that reason) only while every slot is broken;
- the constructor never fails on a start: with `wait=True` (the default) it returns once
  every slot is ready or broken, with `wait=False` at once (episodes then wait for the
  first ready worker), which is what `shared_pool` uses, so concurrent episodes create
  one pool per process however slow or often killed its first starts are;
- workers die with the process that owns the pool (`PR_SET_PDEATHSIG` on Linux; they are
  started from one long-lived thread of the pool for that), and `kill_all_workers()`
  stops every worker of every pool at once (the CLI and serve-env call it on SIGTERM and
  SIGINT);
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
import weakref
from collections import deque
from collections.abc import Sequence
from multiprocessing.connection import Connection

from redaction_pressure.redact.rules import Rule
from redaction_pressure.redact.scanner import DEFAULT_BUDGET, Budget, ScanResult
from redaction_pressure.redact.scoring import ScoreResult, records_for, score_records
from redaction_pressure.redact.worker import (
    MEMORY_EXIT,
    PROMPT_MISMATCH,
    READY,
    RESOURCE_EXHAUSTED,
    START_FAILED,
    exhausted,
)
from redaction_pressure.splits import PRIVATE_ENV


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
_OUTSIDE_SIGNALS = {-signal.SIGKILL, -signal.SIGTERM, -signal.SIGINT, -signal.SIGHUP}
START_TIMEOUT_SECONDS = 120.0
"""Wall-clock time one start attempt may take before it counts as stalled (killed, tried again).
Every attempt gets all of it: a killer that keeps striking never leaves a last attempt short."""
START_BACKOFF_SECONDS = 2.0
"""Longest pause between start attempts killed from outside (the pause doubles from 50 ms)."""
BROKEN_RETRY_SECONDS = 30.0
"""Pause before a slot whose worker failed to start by itself tries again."""
RECHECK_PROGRESS = 0.5
"""A `budget_exhausted` verdict reached after at least this share of the episode's (rule, record)
calls is close to the line, so the episode runs again (module docstring); a flood that runs out
early (a tenth of the way through) is far over and is not run twice."""
BUDGET_RUNS = 3
"""Runs a close budget verdict gets in all before it stands."""

__all__ = ["RESOURCE_EXHAUSTED", "PromptMismatch", "ScanPool", "available_cpus", "kill_all_workers", "shared_pool"]


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


class _Worker:
    """One `python -m redaction_pressure.redact.worker` process and its two pipe ends."""

    def __init__(self, memory_bytes: int, cpu_seconds: float) -> None:
        # A plain subprocess, not multiprocessing: it never re-runs the caller's
        # __main__ module and inherits no threads or locks. It needs no secret either.
        env = {key: value for key, value in os.environ.items() if key != PRIVATE_ENV}
        self.process = subprocess.Popen(
            [sys.executable, "-m", "redaction_pressure.redact.worker", str(memory_bytes), repr(cpu_seconds), str(os.getpid())],
            stdin=subprocess.PIPE, stdout=subprocess.PIPE, env=env, close_fds=True,
        )  # fmt: skip
        self.jobs_done = 0
        self.jobs = Connection(os.dup(self.process.stdin.fileno()), readable=False)
        self.results = Connection(os.dup(self.process.stdout.fileno()), writable=False)
        self.process.stdin.close()
        self.process.stdout.close()

    def wait_ready(self, timeout: float) -> tuple[str, bool] | None:
        """None once the worker has announced it is ready, else (why not, whether it failed by itself)."""
        try:
            if not self.results.poll(timeout):
                return f"a scan worker did not start within {timeout:g} s", False
            message = self.results.recv()
            if message == READY:
                return None
            if isinstance(message, tuple) and message[:1] == (START_FAILED,):
                self.process.wait(timeout=5)
                return f"a scan worker could not start: {message[1]}", True
            return f"a scan worker sent {message!r:.80} instead of announcing it was ready", True
        except (EOFError, OSError):
            status = self.process.wait()
            if status in _OUTSIDE_SIGNALS:
                return f"a scan worker was killed while starting (status {status})", False
            if status == MEMORY_EXIT:
                return "a scan worker exited while starting: its memory cap is too small to load the scanner", True
            if status < 0:
                return f"a scan worker exited while starting (signal {signal.Signals(-status).name})", True
            return (
                f"a scan worker exited while starting (status {status}): a broken install or an import "
                "error (its standard error says which)"
            ), True
        except subprocess.TimeoutExpired:
            return "a scan worker reported a failed start and did not exit", True

    def stop(self, kill: bool) -> None:
        if not kill:
            try:
                self.jobs.send(None)
                self.process.wait(timeout=5)
            except (OSError, subprocess.TimeoutExpired):
                kill = True
        if kill:
            try:
                self.process.kill()
                self.process.wait(timeout=5)
            except (OSError, subprocess.TimeoutExpired):
                pass
        self.jobs.close()
        self.results.close()


class _Idle:
    """The ready workers, oldest first (`queue`, as `queue.Queue` names it)."""

    def __init__(self) -> None:
        self.queue: deque[_Worker] = deque()


class ScanPool:
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
        self.workers, self.memory_mb, self.deadline, self.cpu_seconds = workers, memory_mb, deadline, cpu_seconds
        self.budget_runs, self.rerun_fresh = budget_runs, rerun_fresh
        """`budget_runs` 1 turns the recheck off; `rerun_fresh` runs each recheck on a worker that has
        run no job yet (measured worse under load: a fresh process's first scan is slower)."""
        self._idle = _Idle()
        self._changed = threading.Condition()
        self._busy = 0
        self._starting = 0
        self._broken: list[str] = []  # one reason per broken slot
        self._all: set[_Worker] = set()
        self._closed = False
        self.replaced = 0
        """Workers replaced so far (killed, crashed, stalled or over an episode's limit)."""
        self.retried = 0
        """Episode attempts run again because their worker died from outside or stalled."""
        self.rechecked = 0
        """Runs of close budget verdicts beyond the first."""
        self.served = 0
        """Jobs (scans and episodes) this pool has answered, whatever the outcome."""
        self.killed_starts = 0
        """Starts killed or stalled from outside and tried again."""
        self._spawns: queue.Queue = queue.Queue()
        threading.Thread(target=self._spawner, name="scan-worker-spawner", daemon=True).start()
        _POOLS.add(self)
        for _ in range(workers):
            self._start_slot()
        if wait:
            with self._changed:
                self._changed.wait_for(lambda: self._starting == 0 or self._closed)

    # -- starting ----------------------------------------------------------------------------

    def _spawner(self) -> None:
        """Start every worker process from this one thread, which lives as long as the pool.

        Linux sends a worker `PR_SET_PDEATHSIG` when the thread that started it ends, so
        starting from short-lived threads would kill workers; this one ends with the process.
        """
        while True:
            reply = self._spawns.get()
            if reply is None:
                return
            try:
                reply.put(self._spawn())
            except Exception as exc:  # noqa: BLE001 - e.g. too many processes: the caller decides
                reply.put(exc)

    def _spawn(self) -> _Worker:
        return _Worker(self.memory_mb * 1024 * 1024, self.cpu_seconds)

    def _spawn_here(self) -> _Worker:
        answer: queue.Queue = queue.Queue()
        self._spawns.put(answer)
        while True:
            try:
                worker = answer.get(timeout=1.0)
                break
            except queue.Empty:
                if self._closed:
                    raise OSError("the pool closed while a worker was being started") from None
        if isinstance(worker, Exception):
            raise worker
        return worker

    def _start_slot(self, pause: float = 0.0) -> None:
        """Start one slot's worker in the background with the start policy (module docstring)."""
        with self._changed:
            self._starting += 1
        threading.Thread(target=self._start, args=(pause,), name="scan-worker-start", daemon=True).start()

    def _start(self, pause: float) -> None:
        backoff = 0.05
        if pause:
            time.sleep(pause)
        while not self._closed:
            try:
                fresh = self._spawn_here()
            except OSError as exc:  # no process could be created now (limits, memory): try again
                problem, by_itself, fresh = f"a scan worker could not be created: {exc}", False, None
            else:
                with self._changed:
                    self._all.add(fresh)
                problem_and_kind = fresh.wait_ready(START_TIMEOUT_SECONDS)
                if problem_and_kind is None:
                    with self._changed:
                        self._starting -= 1
                        if self._closed:
                            self._all.discard(fresh)
                            fresh.stop(kill=True)
                        else:
                            self._idle.queue.append(fresh)
                        self._changed.notify_all()
                    return
                problem, by_itself = problem_and_kind
                self._discard(fresh)
            if by_itself:
                with self._changed:
                    self._starting -= 1
                    self._broken.append(problem)
                    self._changed.notify_all()
                # The slot tries again later: one bad start never poisons a long-lived pool.
                threading.Thread(target=self._heal, args=(problem,), name="scan-worker-heal", daemon=True).start()
                return
            with self._changed:
                self.killed_starts += 1
            time.sleep(backoff)
            backoff = min(2 * backoff, START_BACKOFF_SECONDS)
        with self._changed:
            self._starting -= 1
            self._changed.notify_all()

    def _heal(self, problem: str) -> None:
        time.sleep(BROKEN_RETRY_SECONDS)
        with self._changed:
            if self._closed or problem not in self._broken:
                return
            self._broken.remove(problem)
        self._start_slot()

    def _discard(self, worker: _Worker) -> None:
        worker.stop(kill=True)
        with self._changed:
            self._all.discard(worker)

    def _replace(self, worker: _Worker) -> None:
        """Kill `worker` and start its replacement in the background; it joins the idle workers when ready."""
        self._discard(worker)
        with self._changed:
            self.replaced += 1
        self._start_slot()

    # -- scanning ----------------------------------------------------------------------------

    def scan(self, rules: Sequence[Rule], texts: Sequence[str], budget: Budget = DEFAULT_BUDGET) -> ScanResult:
        """Scan in a worker (blocking); see the module docstring for the contract."""
        rules, texts = list(rules), list(texts)
        outcome = self._run(("scan", rules, texts, budget), calls=len(rules) * len(texts))
        return exhausted(outcome.detail, texts) if isinstance(outcome, _Exhausted) else outcome

    def score_episode(
        self, seed: int, shown: int, hidden: int, digest: str, reply: str, budget: Budget = DEFAULT_BUDGET
    ) -> ScoreResult:
        """Score a whole episode in a worker, which rebuilds the records from the seed.

        Raises `PromptMismatch` when those records do not give the prompt with SHA-256
        `digest` (the task data and this package disagree about the task).
        """
        outcome = self._run(("episode", seed, shown, hidden, digest, reply, budget), calls=None)
        if outcome == PROMPT_MISMATCH:
            raise PromptMismatch("the records rebuilt from the task's seed do not give the prompt the model saw")
        if isinstance(outcome, _Exhausted):
            # The rare path: grade the failure here, so metrics keep their usual keys.
            records = records_for(seed, shown, hidden)[shown:]
            fail = lambda rules, texts, budget: exhausted(outcome.detail, texts)  # noqa: E731
            return score_records(records, reply, budget=budget, scanner=fail)
        return outcome

    def _run(self, job: tuple, calls: int | None):
        """Run a job on ready workers until it has an answer or its attempts run out; recheck a close budget verdict."""
        outcome = self._run_once(job, fresh=False)
        runs = 1
        while runs < self.budget_runs and _near_budget(outcome, job, calls):
            with self._changed:
                self.rechecked += 1
            outcome = self._run_once(job, fresh=self.rerun_fresh)
            runs += 1
        with self._changed:
            self.served += 1
        return outcome

    def _run_once(self, job: tuple, fresh: bool):
        killed = crashed = 0
        while True:
            outcome = self._attempt(job, fresh)
            if not isinstance(outcome, _Retry):
                return outcome
            killed, crashed = killed + outcome.killed, crashed + (not outcome.killed)
            if killed >= KILLED_ATTEMPTS or crashed >= ATTEMPTS:
                return _Exhausted(f"{outcome.detail}, on each of {killed + crashed} attempts")
            with self._changed:
                self.retried += 1

    def _take(self, fresh: bool = False) -> _Worker:
        """A ready worker (one that has run no job yet if `fresh`, as far as the pool can give one)."""
        swaps = 0
        while True:
            with self._changed:
                while True:
                    if self._closed:
                        raise RuntimeError("this scan pool is closed")
                    if self._idle.queue:
                        worker = self._idle.queue.popleft()
                        self._busy += 1
                        break
                    if self._starting == 0 and self._busy == 0 and self._broken:
                        # Every slot is broken: fail now, saying why, rather than wait; one slot
                        # starts again at once, so the next episode finds a worker if the cause is gone.
                        reason = self._broken.pop()
                        self._starting += 1
                        threading.Thread(target=self._start, args=(0.0,), name="scan-worker-start", daemon=True).start()
                        raise RuntimeError(reason)
                    self._changed.wait(1.0)
            if worker.process.poll() is not None:
                self._release()
                self._replace(worker)  # died while idle (killed from outside): no episode's doing
                continue
            if fresh and worker.jobs_done and swaps <= self.workers:
                # Retire it (cleanly; not a fault): the recheck runs where no earlier job left a trace.
                swaps += 1
                self._release()
                worker.stop(kill=False)
                with self._changed:
                    self._all.discard(worker)
                self._start_slot()
                continue
            return worker

    def _release(self, worker: _Worker | None = None) -> None:
        with self._changed:
            self._busy -= 1
            if worker is not None:
                if self._closed:
                    self._all.discard(worker)
                    worker.stop(kill=False)
                else:
                    self._idle.queue.append(worker)
            self._changed.notify_all()

    def _attempt(self, job: tuple, fresh: bool = False):
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
                return _Exhausted(f"the episode used more than its {math.ceil(self.cpu_seconds)} s of CPU")
            if status == MEMORY_EXIT:
                if worker.jobs_done == 0:  # a fresh worker: the episode's own doing
                    return _Exhausted("the rules ran out of the worker's memory cap")
                return _Retry("the worker ran out of memory after earlier episodes")
            return _Retry(f"the worker died while scanning (status {status})", killed=status in _OUTSIDE_SIGNALS)
        worker.jobs_done += 1
        self._release(worker)
        if isinstance(answer, str) and answer.startswith(RESOURCE_EXHAUSTED + ": "):
            return _Exhausted(answer.removeprefix(RESOURCE_EXHAUSTED + ": "))
        return answer

    # -- inspecting and stopping -------------------------------------------------------------

    def pids(self) -> list[int]:
        """Process ids of this pool's workers (ready, busy or starting)."""
        with self._changed:
            return [worker.process.pid for worker in self._all]

    def broken(self) -> list[str]:
        """Why each broken slot could not start (empty when every slot is ready, busy or starting)."""
        with self._changed:
            return list(self._broken)

    def close(self, kill: bool = False) -> None:
        """Stop every worker (at once with `kill`, else idle ones cleanly); the pool cannot be used afterwards.

        A busy worker is stopped when its episode returns (or at once with `kill`); starting
        workers are stopped as soon as they are ready.
        """
        with self._changed:
            self._closed = True
            idle = list(self._idle.queue)
            self._idle.queue.clear()
            everyone = list(self._all)
            self._changed.notify_all()
        self._spawns.put(None)
        for worker in everyone if kill else idle:
            worker.stop(kill=kill)
            with self._changed:
                self._all.discard(worker)

    def __enter__(self) -> ScanPool:
        return self

    def __exit__(self, *exc) -> None:
        self.close()


def _near_budget(outcome, job: tuple, calls: int | None) -> bool:
    """Whether `outcome` is a budget verdict reached after most of the episode's calls (see `RECHECK_PROGRESS`)."""
    errors = getattr(outcome, "errors", ())
    if not errors or errors[0].code != "budget_exhausted" or errors[0].rule is None or errors[0].record is None:
        return False
    if calls is None:  # an episode: the worker parsed the reply, the metrics say how many rules
        records = job[3]
        calls = int(getattr(outcome, "metrics", {}).get("rules", 0)) * records
    else:
        records = len(job[2])
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
