"""Process supervision for the scan pool: start, replace, hand out and stop worker processes.

`WorkerPool` keeps `workers` slots, each holding one `python -m redaction_pressure.redact.worker`
process (`WorkerProcess`); `pool.ScanPool` builds on it to run jobs. Its contract:
- one start policy for every worker start (the pool's first workers, replacements, a slot
  retried after a failure): a start killed or stalled from outside is tried again, with a
  backoff up to `START_BACKOFF_SECONDS` and a full `START_TIMEOUT_SECONDS` for every
  attempt, for as long as the pool is open. Only a worker that fails by itself (a broken
  install, an import error, a memory cap too small to start in; each named) marks its
  slot broken, and a broken slot tries again after a pause. Jobs run on the workers
  that are ready; taking a worker fails (with that reason) only while every slot is broken;
- opening never fails on a start: with `wait=True` it returns once every slot is ready or
  broken, with `wait=False` at once (takers then wait for the first ready worker);
- workers die with the process that owns the pool (`PR_SET_PDEATHSIG` on Linux; they are
  started from one long-lived thread of the pool for that);
- a worker found dead while idle is replaced before anyone takes it.
"""

from __future__ import annotations

import os
import queue
import signal
import subprocess
import sys
import threading
import time
from collections import deque
from multiprocessing.connection import Connection
from typing import Self

from redaction_pressure.redact.jobs import MEMORY_EXIT, READY, StartFailed
from redaction_pressure.splits import PRIVATE_ENV

OUTSIDE_SIGNALS = {-signal.SIGKILL, -signal.SIGTERM, -signal.SIGINT, -signal.SIGHUP}
"""Exit statuses of a worker killed from outside: never the episode's doing."""
START_TIMEOUT_SECONDS = 120.0
"""Wall-clock time one start attempt may take before it counts as stalled (killed, tried again).
Every attempt gets all of it: a killer that keeps striking never leaves a last attempt short."""
START_BACKOFF_SECONDS = 2.0
"""Longest pause between start attempts killed from outside (the pause doubles from 50 ms)."""
BROKEN_RETRY_SECONDS = 30.0
"""Pause before a slot whose worker failed to start by itself tries again."""


class WorkerProcess:
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
            if isinstance(message, StartFailed):
                self.process.wait(timeout=5)
                return f"a scan worker could not start: {message.reason}", True
            return f"a scan worker sent {message!r:.80} instead of announcing it was ready", True
        except (EOFError, OSError):
            status = self.process.wait()
            if status in OUTSIDE_SIGNALS:
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
        self.queue: deque[WorkerProcess] = deque()


class WorkerPool:
    """`workers` slots of worker processes with a memory cap and a CPU allowance per job (module docstring)."""

    def __init__(self, workers: int, memory_mb: int, cpu_seconds: float) -> None:
        """The pool's state and its spawner thread; no worker starts before `_open`."""
        self.workers, self.memory_mb, self.cpu_seconds = workers, memory_mb, cpu_seconds
        self._idle = _Idle()
        self._changed = threading.Condition()
        self._busy = 0
        self._starting = 0
        self._broken: list[str] = []  # one reason per broken slot
        self._all: set[WorkerProcess] = set()
        self._closed = False
        self.replaced = 0
        """Workers replaced so far (killed, crashed, stalled or over an episode's limit)."""
        self.killed_starts = 0
        """Starts killed or stalled from outside and tried again."""
        self._spawns: queue.Queue = queue.Queue()
        threading.Thread(target=self._spawner, name="scan-worker-spawner", daemon=True).start()

    def _open(self, wait: bool) -> None:
        """Start every slot; with `wait`, return once each is ready or broken."""
        for _ in range(self.workers):
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

    def _spawn(self) -> WorkerProcess:
        return WorkerProcess(self.memory_mb * 1024 * 1024, self.cpu_seconds)

    def _spawn_here(self) -> WorkerProcess:
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

    def _discard(self, worker: WorkerProcess) -> None:
        worker.stop(kill=True)
        with self._changed:
            self._all.discard(worker)

    def _replace(self, worker: WorkerProcess) -> None:
        """Kill `worker` and start its replacement in the background; it joins the idle workers when ready."""
        self._discard(worker)
        with self._changed:
            self.replaced += 1
        self._start_slot()

    # -- handing out -------------------------------------------------------------------------

    def _take(self, fresh: bool = False) -> WorkerProcess:
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

    def _release(self, worker: WorkerProcess | None = None) -> None:
        with self._changed:
            self._busy -= 1
            if worker is not None:
                if self._closed:
                    self._all.discard(worker)
                    worker.stop(kill=False)
                else:
                    self._idle.queue.append(worker)
            self._changed.notify_all()

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

    def __enter__(self) -> Self:
        return self

    def __exit__(self, *exc) -> None:
        self.close()
