"""The processes a load benchmark watches and disturbs, read from /proc (Linux only).

`descendants(root)` (PID -> command line of every process below `root`), `role(command)` (scan
worker, env-server worker or other), `rss_mib(pid)`, `scan_worker_state(pid)` (starting, scanning
or idle); `Killer` (SIGKILLs a random scan worker below a process every few seconds, the first
at once) and `Burners` (CPU-burning processes for the length of a block). Shared by `load.py`
and `bench_throughput.py`.
"""

from __future__ import annotations

import os
import random
import signal
import subprocess
import sys
import threading
from pathlib import Path


def descendants(root: int) -> dict[int, str]:
    """PID -> command line of every process below `root`."""
    parents: dict[int, int] = {}
    commands: dict[int, str] = {}
    for entry in Path("/proc").iterdir():
        if not entry.name.isdigit():
            continue
        try:
            stat = (entry / "stat").read_text()
            parents[int(entry.name)] = int(stat.rsplit(")", 1)[1].split()[1])
            commands[int(entry.name)] = (entry / "cmdline").read_bytes().replace(b"\0", b" ").decode(errors="replace")
        except (OSError, ValueError, IndexError):
            continue
    found, frontier = {}, [root]
    while frontier:
        parent = frontier.pop()
        for pid, ppid in parents.items():
            if ppid == parent and pid not in found:
                found[pid] = commands.get(pid, "")
                frontier.append(pid)
    return found


def role(command: str) -> str:
    if "redaction_pressure.redact.worker" in command:
        return "scan worker"
    if "resource_tracker" in command:  # multiprocessing's helper, not an env-server worker
        return "other (chat programs, helpers)"
    if "multiprocessing" in command or "spawn_main" in command:
        return "env-server worker"
    return "other (chat programs, helpers)"


def rss_mib(pid: int, field: str = "VmRSS") -> float:
    try:
        for line in Path(f"/proc/{pid}/status").read_text().splitlines():
            if line.startswith(field + ":"):
                return int(line.split()[1]) / 1024
    except OSError:
        pass
    return 0.0


def scan_worker_state(pid: int) -> str:
    """'starting' (the scanner not loaded yet), 'scanning' (running) or 'idle', read from /proc."""
    try:
        if "_regex" not in Path(f"/proc/{pid}/maps").read_text():
            return "starting"
        state = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()[0]
    except OSError:
        return "gone"
    return "scanning" if state == "R" else "idle"


class Killer(threading.Thread):
    """SIGKILL a random scan worker below `root` every `every` seconds (0: never), the first one at once."""

    def __init__(self, root: int, every: float, seed: int = 1) -> None:
        super().__init__(daemon=True)
        self.root, self.every, self.rng = root, every, random.Random(seed)
        self.stop, self.kills = threading.Event(), 0
        self.by_state: dict[str, int] = {"starting": 0, "scanning": 0, "idle": 0}

    def strike(self) -> bool:
        workers = [pid for pid, cmd in descendants(self.root).items() if role(cmd) == "scan worker"]
        if not workers:
            return False
        victim = self.rng.choice(workers)
        state = scan_worker_state(victim)
        try:
            os.kill(victim, signal.SIGKILL)
        except ProcessLookupError:
            return False
        self.kills += 1
        self.by_state[state if state in self.by_state else "idle"] += 1
        return True

    def run(self) -> None:
        if self.every <= 0:
            return
        while not self.stop.wait(0.05) and not self.strike():  # the pool's first start
            pass
        while not self.stop.wait(self.rng.uniform(0.5 * self.every, 1.5 * self.every)):
            self.strike()

    def summary(self) -> str:
        return (
            f"{self.kills} scan workers killed ({self.by_state['starting']} while starting, "
            f"{self.by_state['scanning']} while scanning, {self.by_state['idle']} while idle)"
        )


class Burners:
    """`count` processes that burn CPU until the block ends."""

    def __init__(self, count: int) -> None:
        self.count, self.processes = count, []

    def __enter__(self) -> Burners:
        # Each burner dies with this script (PR_SET_PDEATHSIG), even when the script is killed.
        burn = "import ctypes, signal; ctypes.CDLL(None).prctl(1, signal.SIGKILL, 0, 0, 0)\nwhile True: pass"
        self.processes = [subprocess.Popen([sys.executable, "-c", burn]) for _ in range(self.count)]
        return self

    def __exit__(self, *exc) -> None:
        for process in self.processes:
            process.kill()
            process.wait()
