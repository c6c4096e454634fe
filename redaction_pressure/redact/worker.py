"""A scanning worker process: `python -m redaction_pressure.redact.worker MEMORY_BYTES CPU_SECONDS [PARENT_PID]`.

Started by `pool.ScanPool` (through `supervision`), never by hand. It asks the kernel to kill
it when its parent goes (`PR_SET_PDEATHSIG`, Linux), caps its own address space, imports what
an episode needs, announces `READY` on its channel (or `StartFailed(reason)`: an import error,
or a memory cap too small to import in, so the pool can say why without retrying), then serves
jobs over its standard input and output (pickled, framed by `multiprocessing.connection`; the
types are in `jobs`) one at a time on one thread, so the process CPU clock that `regex`
timeouts use measures only the current episode. Before each job it sets its CPU limit
(`RLIMIT_CPU`) to the CPU it has used so far plus CPU_SECONDS: a job that runs past that is
killed by the kernel with `SIGXCPU`, which the pool reads as the episode's own doing.
Wall-clock time and other processes' load never count against an episode. Two kinds of job:

- `ScanJob` -> `ScanResult`;
- `EpisodeJob` -> `ScoreResult` (`scoring.score_episode`), or the `PromptMismatch` it raised
  when the records it rebuilds from the seed do not give the prompt the model saw. The worker
  regenerates (and caches) records itself, so the parent sends a few hundred bytes and does no
  CPU work; it never sends the private secret, only seeds.

A job that fails otherwise inside the worker (recursion, an unexpected error) is answered with
`Exhausted`. A job that runs out of the memory cap (or is too large to receive under it) ends
the process with `MEMORY_EXIT`: the pool runs it again on a fresh worker, and only a fresh
worker's failure ends the episode, so the outcome never depends on the worker's history.
Anything a job prints goes to standard error, never into the channel.
"""

from __future__ import annotations

import math
import os
import resource
import signal
import sys
from multiprocessing.connection import Connection

# Only the standard library (and `jobs`, which needs no more) at the top: what an episode needs
# is imported by `main` under the memory cap, so a broken install or a cap too small is
# reported by name (StartFailed).
from redaction_pressure.redact.jobs import MEMORY_EXIT, READY, Exhausted, Job, ScanJob, StartFailed


def serve(jobs: Connection, results: Connection, cpu_seconds: float) -> None:
    results.send(READY)
    while True:
        try:
            job = jobs.recv()
        except (EOFError, OSError):
            return
        except MemoryError:
            sys.exit(MEMORY_EXIT)
        if job is None:
            return
        _limit_cpu(cpu_seconds)
        try:
            result = run(job)
        except MemoryError:
            # Whether the cap was reached may depend on what this process did before
            # (caches, a fragmented heap): exit, and let the pool decide on a fresh worker.
            sys.exit(MEMORY_EXIT)
        except RecursionError:
            result = Exhausted("the rules exhausted the worker's recursion limit")
        except Exception as exc:  # noqa: BLE001 - a job never ends the worker; parsing and scanning raise nothing
            result = Exhausted(f"the worker could not run the episode ({type(exc).__name__})")
        results.send(result)


def _limit_cpu(cpu_seconds: float) -> None:
    """Allow the next job `cpu_seconds` of this process's CPU time (whole seconds, rounded up)."""
    usage = resource.getrusage(resource.RUSAGE_SELF)
    soft = math.ceil(usage.ru_utime + usage.ru_stime + cpu_seconds)
    resource.setrlimit(resource.RLIMIT_CPU, (soft, resource.RLIM_INFINITY))


def run(job: Job):
    """The answer to one job (module docstring)."""
    from redaction_pressure.redact.jobs import PromptMismatch
    from redaction_pressure.redact.scanner import scan
    from redaction_pressure.redact.scoring import score_episode

    if isinstance(job, ScanJob):
        return scan(job.rules, job.texts, job.budget)
    try:
        return score_episode(job)
    except PromptMismatch as mismatch:
        return mismatch


def _die_with_parent(parent: int) -> None:
    """Ask the kernel to SIGKILL this worker when the thread that started it ends (Linux only)."""
    try:
        import ctypes

        libc = ctypes.CDLL(None, use_errno=True)
        libc.prctl(1, signal.SIGKILL, 0, 0, 0)  # PR_SET_PDEATHSIG
    except (OSError, AttributeError):
        return
    if parent and os.getppid() != parent:  # the parent went before the request took effect
        os._exit(0)


def main() -> None:
    memory, cpu_seconds = int(sys.argv[1]), float(sys.argv[2])
    _die_with_parent(int(sys.argv[3]) if len(sys.argv) > 3 else 0)
    resource.setrlimit(resource.RLIMIT_AS, (memory, memory))
    resource.setrlimit(resource.RLIMIT_CORE, (0, 0))
    channel_out = os.dup(1)
    os.dup2(2, 1)  # stray output goes to stderr, not into the result channel
    results = Connection(channel_out, readable=False)
    try:
        # Everything an episode needs, loaded before announcing READY (and cached for every job).
        run.__globals__["_loaded"] = _load()
    except MemoryError:
        results.send(StartFailed(f"its memory cap of {memory // (1024 * 1024)} MiB is too small to load the scanner"))
        sys.exit(MEMORY_EXIT)
    except Exception as exc:  # noqa: BLE001 - ImportError above all: a broken install
        results.send(StartFailed(f"an import error or a broken install ({type(exc).__name__}: {exc})"))
        sys.exit(1)
    serve(Connection(os.dup(0), writable=False), results, cpu_seconds)


def _load() -> tuple:
    from redaction_pressure.redact import prompt, scanner, scoring

    return prompt, scanner, scoring


if __name__ == "__main__":
    main()
