"""Keep the private secret out of what a same-user agent can read about this process.

The subprocess runtime is not a sandbox: the agent's shell runs as the same user as
`vf-eval`, so besides the environment it inherits (masked by the task's `runtime_env`), it can
read `/proc/<pid>/environ` of every ancestor, which shows each process's environment *as it
was at exec*. Changing `os.environ` does not change that block.

`scrub_initial_environ(name)` overwrites the value of `name` in this process's initial
environment block (Linux: the bytes between `env_start` and `env_end` of `/proc/self/stat`) with
NUL bytes, in place, then sets the variable again at C level (`putenv` stores a fresh copy
outside that block). So this process still reads the secret, and children spawned without an
explicit environment still inherit it, as served-env workers must to rebuild private tasks
(each scrubs its own block when it loads a taskset); `/proc/<pid>/environ` shows it zeroed.
Elsewhere (no `/proc`) it does nothing and says so.

What it cannot do: scrub other processes. A shell or `uv run` that launched `vf-eval` with the
variable in *its own* initial environment still shows it; launch with
`env REDACTION_PRESSURE_PRIVATE_SEED=... .venv/bin/vf-eval ...` (exec, no lingering parent
holding it), or use a container runtime for private evaluation.
"""

from __future__ import annotations

import ctypes
import os
from pathlib import Path


def _env_bounds() -> tuple[int, int] | None:
    try:
        stat = Path("/proc/self/stat").read_text()
    except OSError:
        return None
    fields = stat[stat.rindex(")") + 2 :].split()
    # Fields after the command name start at field 3; env_start and env_end are fields 50 and 51.
    try:
        return int(fields[50 - 3]), int(fields[51 - 3])
    except (IndexError, ValueError):
        return None


def scrub_initial_environ(name: str) -> bool:
    """Zero `name`'s value in this process's initial environment block; True if it was there."""
    bounds = _env_bounds()
    if bounds is None:
        return False
    start, end = bounds
    try:
        block = Path("/proc/self/environ").read_bytes()
    except OSError:
        return False
    prefix = os.fsencode(name) + b"="
    found = False
    offset = 0
    for entry in block.split(b"\x00"):
        if entry.startswith(prefix) and len(entry) > len(prefix):
            address = start + offset + len(prefix)
            if address + len(entry) - len(prefix) <= end:
                ctypes.memset(address, 0, len(entry) - len(prefix))
                found = True
        offset += len(entry) + 1
    value = os.environ.get(name)
    if found and value is not None:
        os.putenv(name, value)
    return found
