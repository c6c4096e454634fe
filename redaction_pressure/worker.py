"""A scanning worker process: `python -m redaction_pressure.worker MEMORY_BYTES`.

Started by `pool.ScanPool`, never by hand. It caps its own address space, then serves
jobs over its standard input and output (pickled `(rules, texts, budget)` in, a
`ScanResult` out, framed by `multiprocessing.connection`) one at a time on one thread,
so the process CPU clock that `regex` timeouts use measures only the current episode.
Anything the job itself prints goes to standard error, never into the channel.
"""

from __future__ import annotations

import os
import resource
import sys
from multiprocessing.connection import Connection

from redaction_pressure.rules import RedactionError
from redaction_pressure.scanner import ScanResult, scan

RESOURCE_EXHAUSTED = "resource_exhausted"


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
        rules, texts, budget = job
        try:
            result = scan(rules, texts, budget)
        except MemoryError:
            result = exhausted("the rules ran out of the worker's memory cap", texts)
        except RecursionError:
            result = exhausted("the rules exhausted the worker's recursion limit", texts)
        results.send(result)


def main() -> None:
    memory = int(sys.argv[1])
    resource.setrlimit(resource.RLIMIT_AS, (memory, memory))
    channel_out = os.dup(1)
    os.dup2(2, 1)  # stray output goes to stderr, not into the result channel
    serve(Connection(os.dup(0), writable=False), Connection(channel_out, readable=False))


if __name__ == "__main__":
    main()
