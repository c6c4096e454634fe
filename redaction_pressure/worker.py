"""A scanning worker process: `python -m redaction_pressure.worker MEMORY_BYTES`.

Started by `pool.ScanPool`, never by hand. It caps its own address space, then serves
jobs over its standard input and output (pickled, framed by `multiprocessing.connection`)
one at a time on one thread, so the process CPU clock that `regex` timeouts use measures
only the current episode. Two kinds of job:

- `("scan", rules, texts, budget)` -> `ScanResult`;
- `("episode", seed, shown, hidden, prompt_sha256, reply, budget)` -> `ScoreResult`, or
  `PROMPT_MISMATCH` when the records it rebuilds from the seed do not give the prompt the
  model saw. The worker regenerates (and caches) records itself, so the parent sends a
  few hundred bytes and does no CPU work; it never sends the private secret, only seeds.

Anything a job prints goes to standard error, never into the channel.
"""

from __future__ import annotations

import os
import resource
import sys
from multiprocessing.connection import Connection

from redaction_pressure.rules import RedactionError
from redaction_pressure.scanner import ScanResult, scan

RESOURCE_EXHAUSTED = "resource_exhausted"
PROMPT_MISMATCH = "prompt_mismatch"


def exhausted(detail: str, texts) -> ScanResult:
    """The result of an episode that escaped its budget: nothing removed, one error."""
    error = RedactionError(RESOURCE_EXHAUSTED, None, None, detail)
    return ScanResult(tuple(() for _ in texts), tuple(texts), 0, (error,), 0.0)


def serve(jobs: Connection, results: Connection) -> None:
    while True:
        try:
            job = jobs.recv()
        except (EOFError, OSError):
            return
        except MemoryError:
            return  # the job itself exceeds the cap: exit; the pool reports and replaces us
        if job is None:
            return
        try:
            result = run(job)
        except MemoryError:
            result = RESOURCE_EXHAUSTED + ": the rules ran out of the worker's memory cap"
        except RecursionError:
            result = RESOURCE_EXHAUSTED + ": the rules exhausted the worker's recursion limit"
        results.send(result)


def run(job: tuple):
    if job[0] == "scan":
        _, rules, texts, budget = job
        return scan(rules, texts, budget)
    from redaction_pressure.api import prompt_digest, records_for, score_records
    from redaction_pressure.prompt import user_prompt

    _, seed, shown, hidden, digest, reply, budget = job
    records = records_for(seed, shown, hidden)
    if prompt_digest(user_prompt(records[:shown], hidden)) != digest:
        return PROMPT_MISMATCH
    return score_records(records[shown:], reply, budget=budget)


def main() -> None:
    memory = int(sys.argv[1])
    resource.setrlimit(resource.RLIMIT_AS, (memory, memory))
    channel_out = os.dup(1)
    os.dup2(2, 1)  # stray output goes to stderr, not into the result channel
    serve(Connection(os.dup(0), writable=False), Connection(channel_out, readable=False))


if __name__ == "__main__":
    main()
