"""Run the whole suite once, its modules spread over parallel unittest processes.

    uv run python tests/run.py            # two processes (one per core here)
    uv run python tests/run.py -j 1       # one process, as `python -m unittest discover -s tests -v`
    uv run python tests/run.py test_api test_rules   # only these modules

Each module runs whole inside one process, so its class fixtures are shared as usual. Modules
in ALONE run first, one at a time with nothing beside them; the others are then dealt to the
processes heaviest first (by the rough costs below: each module's seconds as a
two-process run of `.ci/run` printed them; a module missing from the table counts as light), each process's lines
are printed as they come, prefixed with its number, and the exit status is non-zero when any
test failed or errored or any process died. Each process ends by naming its slowest classes
and every module's time (what COSTS is updated from). The suite's load and fault tests are built to
hold on a busy machine, so running beside each other is part of what they check.
"""

from __future__ import annotations

import argparse
import os
import subprocess
import sys
import threading
from pathlib import Path

TESTS = Path(__file__).resolve().parent
COSTS = {
    "test_audit_e2e": 360, "test_eval": 290, "test_audit_attacks": 175, "test_audit_attacks_e2e": 165,
    "test_policies": 115, "test_report": 100, "test_audit_core": 95, "test_taskset": 90, "test_audit_agent": 90,
    "test_pool": 70, "test_serving": 70, "test_cli": 60, "test_levels": 60, "test_readme": 35, "test_packaging": 35,
    "test_api": 15, "test_corpus": 15,
}  # fmt: skip
LIGHT = 5
ALONE = ("test_audit_attacks_outside",)
"""Modules whose tests change what every process on the machine runs: these attacks write a
sitecustomize.py and a .pth file into the interpreter's site-packages and a `git` onto PATH, and
leave processes running that look for the grader's health copies (as an agent with the
subprocess runtime can). Beside them, other modules' vf-eval, vf-validate and tool servers would
start with the attacker's code."""
FAILURE_MARK = "failed test: "
"""A child prints one line so marked per failed or errored test (its id and the traceback's last
line); the runner repeats them after the summary, where a truncated log still shows them."""
SLOWEST = 12
"""How many of a process's slowest test classes it names when it ends (with their wall time,
class fixtures included), to see where the suite's time goes."""


def modules(selected: list[str]) -> list[str]:
    found = sorted(path.stem for path in TESTS.glob("test_*.py"))
    if not selected:
        return found
    unknown = [name for name in selected if name not in found]
    if unknown:
        raise SystemExit(f"no test module {', '.join(unknown)} in {TESTS}")
    return selected


def deal(names: list[str], jobs: int) -> list[list[str]]:
    """Longest first, each module to the process with the least work so far."""
    shards: list[list[str]] = [[] for _ in range(jobs)]
    loads = [0] * jobs
    for name in sorted(names, key=lambda n: -COSTS.get(n, LIGHT)):
        least = loads.index(min(loads))
        shards[least].append(name)
        loads[least] += COSTS.get(name, LIGHT)
    return [shard for shard in shards if shard]


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("modules", nargs="*", help="test modules to run (default: every tests/test_*.py)")
    parser.add_argument("-j", "--jobs", type=int, default=2, help="parallel unittest processes (default 2)")
    parser.add_argument("--child", action="store_true", help=argparse.SUPPRESS)
    args = parser.parse_args()
    if args.child:
        return run_modules(args.modules)
    if args.jobs < 1:
        parser.error("--jobs must be at least 1")
    names = modules(args.modules)
    phases = [[[name]] for name in names if name in ALONE]
    phases.append(deal([name for name in names if name not in ALONE], args.jobs))
    results: list[tuple[list[str], int, list[str]]] = []
    number = 0
    for shards in phases:
        results += run_together(shards, number)
        number += len(shards)
    for number, (shard, code, failures) in enumerate(results, 1):
        print(f"[{number}] {'passed' if code == 0 else f'FAILED (exit {code})'}: {' '.join(shard)}")
        for failure in failures:  # last, so that a log's tail says which test failed and why
            print(f"[{number}]   {failure}")
    return 0 if all(code == 0 for _, code, _ in results) else 1


def run_together(shards: list[list[str]], first: int) -> list[tuple[list[str], int, list[str]]]:
    """Run each shard in its own unittest process at once; print their lines as they come, and
    keep each process's FAILURE_MARK lines to repeat at the end."""
    lock = threading.Lock()
    failures: list[list[str]] = [[] for _ in shards]
    processes = []
    for number, shard in enumerate(shards, first + 1):
        print(f"[{number}] {' '.join(shard)}", flush=True)
        processes.append(
            subprocess.Popen(
                [sys.executable, str(Path(__file__).resolve()), "--child", *shard],
                cwd=TESTS.parent, stdin=subprocess.DEVNULL, stdout=subprocess.PIPE, stderr=subprocess.STDOUT,
                text=True, errors="replace", env={**os.environ, "PYTHONUNBUFFERED": "1"},
            )  # fmt: skip
        )

    def relay(number: int, process: subprocess.Popen) -> None:
        for line in process.stdout:
            if line.startswith(FAILURE_MARK):
                failures[number - first - 1].append(line[len(FAILURE_MARK) :].rstrip())
            with lock:
                sys.stdout.write(f"[{number}] {line}")
                sys.stdout.flush()

    relays = [threading.Thread(target=relay, args=(n, p)) for n, p in enumerate(processes, first + 1)]
    for thread in relays:
        thread.start()
    try:
        codes = [process.wait() for process in processes]
    except KeyboardInterrupt:
        for process in processes:
            process.terminate()
        raise
    for thread in relays:
        thread.join()
    return list(zip(shards, codes, failures, strict=True))


def run_modules(names: list[str]) -> int:
    """One unittest process, as `python -m unittest discover -s tests` sets things up (the tests
    folder first on the path, the repository's root the working folder, nothing added to the
    environment children inherit); it ends by naming its slowest test classes."""
    import time
    import unittest

    sys.path.insert(0, str(TESTS))
    spent: dict[str, float] = {}

    class Timed(unittest.TextTestResult):
        mark = time.monotonic()

        def stopTest(self, test: unittest.TestCase) -> None:
            super().stopTest(test)
            now = time.monotonic()  # since the last test ended: the class's fixtures count too
            name = f"{type(test).__module__}.{type(test).__qualname__}"
            spent[name] = spent.get(name, 0.0) + now - Timed.mark
            Timed.mark = now

    suite = unittest.defaultTestLoader.loadTestsFromNames(names)
    result = unittest.TextTestRunner(verbosity=2, resultclass=Timed).run(suite)
    slowest = sorted(spent.items(), key=lambda item: -item[1])[:SLOWEST]
    print("slowest classes: " + ", ".join(f"{name} {seconds:.0f} s" for name, seconds in slowest), flush=True)
    per_module: dict[str, float] = {}
    for name, seconds in spent.items():
        per_module[name.split(".")[0]] = per_module.get(name.split(".")[0], 0.0) + seconds
    print("modules: " + ", ".join(f"{name} {seconds:.0f} s" for name, seconds in sorted(per_module.items(), key=lambda item: -item[1])), flush=True)
    for test, trace in result.failures + result.errors:
        last = next((line for line in reversed(trace.splitlines()) if line.strip()), "")
        print(f"{FAILURE_MARK}{test.id()}: {last.strip()[:300]}", flush=True)
    return 0 if result.wasSuccessful() else 1


if __name__ == "__main__":
    sys.exit(main())
