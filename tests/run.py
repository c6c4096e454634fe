"""Run the whole suite once, its modules spread over parallel unittest processes.

    uv run python tests/run.py            # modules one more at a time than the machine has cores
    uv run python tests/run.py -j 1       # one module at a time
    uv run python tests/run.py test_api test_rules   # only these modules (by name)
    uv run python tests/run.py redact audit.test_audit_rubric   # a folder's modules, a module by dotted name

Test modules are every `test_*.py` under tests/, in folders that mirror the code (the layout is
tests/README.md): `floor/`, `redact/`, `audit/`, `report/`, `cli/`, `e2e/`; `support/` holds the
helpers and no test. A module is run as `python -m unittest discover -s tests` names it (its dotted
name from tests/, e.g. `redact.test_rules`); its plain name (`test_rules`) is unique in the suite
and is what COSTS and ALONE list.

Each module runs whole in its own unittest process, so its class fixtures are shared as usual.
Modules in ALONE run first, one at a time with nothing beside them; the others are then taken
heaviest first (by the rough costs below, each module's wall seconds in a quiet `.ci/run`; a
module missing from the table counts as light) by JOBS slots, each slot starting the next module
as soon as its last one ends. One slot more than there are cores: several modules spend much of
their time waiting (podman, killed workers being replaced, timeouts, served episodes), and the
extra process fills a core that would idle. Each process's lines are printed as they come,
prefixed with its slot's number, and the exit status is non-zero when any test failed or
errored or any process died. A line starting `==` follows each module's end (modules done out of
all, time elapsed), and the run ends with the slowest modules' wall and CPU time, then each
failed module with its failed tests. Each process ends by naming its module's slowest classes.
The suite's load and fault tests are built to hold on a busy machine, so running beside each
other is part of what they check.
"""

from __future__ import annotations

import argparse
import os
import subprocess
import sys
import threading
import time
from pathlib import Path

TESTS = Path(__file__).resolve().parent
COSTS = {
    "test_openenv": 1075, "test_audit_attacks": 215, "test_openenv_examples": 100, "test_openenv_agent": 60, "test_openenv_web": 40, "test_audit_e2e": 200, "test_eval": 195, "test_audit_attacks_e2e": 150,
    "test_audit_grading": 140, "test_policies": 140, "test_pool": 80, "test_audit_container": 80, "test_packaging": 75,
    "test_levels": 70, "test_taskset_load": 55, "test_report_real_runs": 50, "test_serving": 45, "test_harness": 45,
    "test_audit_scenarios": 40, "test_audit_agent": 40, "test_audit_ladder": 40, "test_taskset": 30, "test_play": 30,
    "test_report_rollouts": 25, "test_audit_inflate": 25, "test_api": 25, "test_audit_leakscan": 20, "test_cli": 20,
    "test_cli_commands": 20, "test_readme": 20, "test_corpus": 20, "test_realism": 15, "test_audit_generator": 15, "test_audit_tools": 35, "test_audit_expert": 930,
}  # fmt: skip
"""Each module's wall seconds in a quiet `.ci/run` (before the suite moved into folders; a module
since split shares its old figure by where its time goes: test_audit_core 225 = grading 140,
scenarios 40, inflate 25, leakscan 20; test_report 80 = real_runs 50, rollouts 25, runs 5;
test_taskset 85 = load 55, taskset 30; test_cli 40 = cli 20, commands 20)."""
LIGHT = 5
JOBS = len(os.sched_getaffinity(0)) + 1 if hasattr(os, "sched_getaffinity") else (os.cpu_count() or 1) + 1
"""Processes by default: the cores this process may run on (a container's limit, not the host's), plus one."""
ALONE = ("test_audit_attacks_outside",)
"""Modules whose tests change what every process on the machine runs: these attacks write a
sitecustomize.py and a .pth file into the interpreter's site-packages and a `git` onto PATH, and
leave processes running that look for the grader's health copies (as an agent with the
subprocess runtime can). Beside them, other modules' vf-eval, vf-validate and tool servers would
start with the attacker's code."""
CHILD_ENV = {"PYTHONUNBUFFERED": "1", "UV_COMPILE_BYTECODE": os.environ.get("UV_COMPILE_BYTECODE", "1")}
"""UV_COMPILE_BYTECODE: the chat program's environment that verifiers' subprocess runtime
syncs once per vf-eval run (`uv sync --script`) is compiled when it is made, so each episode's
chat program starts from bytecode (~1.6 CPU-s instead of ~3.1 where nothing writes bytecode at
import time). The README's sync before the suite compiles the root environment (`uv sync
--compile-bytecode`), which every vf-eval, worker and tool server imports verifiers from."""
MODULE_MARK = "module done: "
"""A child prints one line so marked when a module has run (its name, wall seconds, CPU seconds and
tests run); the runner counts them for its progress line and ranks them at the end."""
FAILURE_MARK = "failed test: "
"""A child prints one line so marked per failed or errored test (its id and the traceback's last
line); the runner repeats them after the summary, where a truncated log still shows them."""
SLOWEST = 12
"""How many of a process's slowest test classes it names when it ends (with their wall time,
class fixtures included), to see where the suite's time goes."""


def discovered() -> dict[str, str]:
    """Every test module under tests/: its name (`test_rules`) to its dotted name (`redact.test_rules`).
    A module in a folder without `__init__.py` is refused: unittest's discovery would not see it."""
    found: dict[str, str] = {}
    for path in sorted(TESTS.rglob("test_*.py")):
        relative = path.relative_to(TESTS)
        for depth in range(1, len(relative.parts)):
            if not (TESTS.joinpath(*relative.parts[:depth]) / "__init__.py").is_file():
                raise SystemExit(f"{path}: its folder has no __init__.py, so `unittest discover` would skip it")
        if path.stem in found:
            raise SystemExit(f"two test modules named {path.stem}: {found[path.stem]} and {relative}")
        found[path.stem] = ".".join(relative.with_suffix("").parts)
    return found


def modules(selected: list[str]) -> list[str]:
    """The dotted names of the modules `selected` names (each a module's name, its dotted name or a
    folder), in order and once each; every module when none is named."""
    found = discovered()
    if not selected:
        return sorted(found.values())
    chosen: list[str] = []
    for name in selected:
        key = name.removesuffix(".py").replace("/", ".").strip(".")
        matches = [found[key]] if key in found else [d for d in found.values() if d == key or d.startswith(key + ".")]
        if not matches:
            raise SystemExit(f"no test module or folder {name} in {TESTS}")
        chosen += [dotted for dotted in sorted(matches) if dotted not in chosen]
    return chosen


def short(dotted: str) -> str:
    """A module's name without its folder (`redact.test_rules` -> `test_rules`), as COSTS and ALONE list it."""
    return dotted.rsplit(".", 1)[-1]


def heaviest_first(names: list[str]) -> list[str]:
    return sorted(names, key=lambda n: -COSTS.get(short(n), LIGHT))


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument(
        "modules",
        nargs="*",
        help="test modules (test_rules, redact.test_rules) or folders (redact) to run (default: all)",
    )
    parser.add_argument(
        "-j",
        "--jobs",
        type=int,
        default=JOBS,
        help=f"modules run at once, each in its own process (default {JOBS}: the cores plus one)",
    )
    parser.add_argument("--child", action="store_true", help=argparse.SUPPRESS)
    args = parser.parse_args()
    if args.child:
        return run_modules(args.modules)
    if args.jobs < 1:
        parser.error("--jobs must be at least 1")
    names = modules(args.modules)
    progress = Progress(len(names))
    results = run_pool([name for name in names if short(name) in ALONE], 1, progress)
    results += run_pool(heaviest_first([name for name in names if short(name) not in ALONE]), args.jobs, progress)
    print(progress.summary())
    failed = [(name, code, failures) for name, code, failures in results if code]
    print(f"== passed: {len(results) - len(failed)} of {len(results)} modules")
    for name, code, failures in failed:
        print(f"== FAILED (exit {code}): {name}")
        for failure in failures:  # last, so that a log's tail says which test failed and why
            print(f"==   {failure}")
    return 1 if failed else 0


class Progress:
    """Modules done out of all, and the time since the run began; the slowest modules at the end."""

    def __init__(self, total: int) -> None:
        self.total, self.started = total, time.monotonic()
        self.done: list[tuple[str, float, float, int]] = []  # name, wall s, CPU s, tests

    def module_done(self, line: str) -> str:
        name, wall, cpu, tests = line.split()
        self.done.append((name, float(wall), float(cpu), int(tests)))
        return (
            f"== {len(self.done)}/{self.total} modules done, {self.elapsed()} elapsed ({name}: {float(wall):.0f} s)\n"
        )

    def elapsed(self) -> str:
        minutes, seconds = divmod(int(time.monotonic() - self.started), 60)
        return f"{minutes} min {seconds:02d} s"

    def summary(self) -> str:
        ranked = sorted(self.done, key=lambda module: -module[1])[:SLOWEST]
        slowest = ", ".join(f"{name} {wall:.0f} s ({cpu:.0f} CPU-s)" for name, wall, cpu, _ in ranked)
        tests = sum(module[3] for module in self.done)
        return f"== {len(self.done)}/{self.total} modules, {tests} tests, in {self.elapsed()}; slowest: {slowest}"


def run_pool(names: list[str], slots: int, progress: Progress) -> list[tuple[str, int, list[str]]]:
    """Run `names` in that order, each module in its own unittest process, `slots` at a time: a
    slot takes the next module as soon as its last one ends, so the run ends with every slot busy
    until the last modules. Each process's lines are printed as they come, prefixed with its
    slot's number; a progress line follows each module; each module's FAILURE_MARK lines are kept
    to repeat at the end."""
    lock = threading.Lock()
    queue = list(names)
    results: list[tuple[str, int, list[str]]] = []
    running: list[subprocess.Popen] = []

    def slot(number: int) -> None:
        while True:
            with lock:
                if not queue:
                    return
                name = queue.pop(0)
                sys.stdout.write(f"[{number}] {name}\n")
                sys.stdout.flush()
                process = subprocess.Popen(
                    [sys.executable, str(Path(__file__).resolve()), "--child", name],
                    cwd=TESTS.parent, stdin=subprocess.DEVNULL, stdout=subprocess.PIPE, stderr=subprocess.STDOUT,
                    text=True, errors="replace", env={**os.environ, **CHILD_ENV},
                )  # fmt: skip
                running.append(process)
            failures: list[str] = []
            for line in process.stdout:
                if line.startswith(FAILURE_MARK):
                    failures.append(line[len(FAILURE_MARK) :].rstrip())
                with lock:
                    if line.startswith(MODULE_MARK):
                        sys.stdout.write(progress.module_done(line[len(MODULE_MARK) :]))
                    else:
                        sys.stdout.write(f"[{number}] {line}")
                    sys.stdout.flush()
            code = process.wait()
            with lock:
                results.append((name, code, failures))

    threads = [threading.Thread(target=slot, args=(n,), daemon=True) for n in range(1, min(slots, len(names)) + 1)]
    for thread in threads:
        thread.start()
    try:
        for thread in threads:
            while thread.is_alive():
                thread.join(0.5)
    except KeyboardInterrupt:
        with lock:
            queue.clear()
            for process in running:
                process.terminate()
        raise
    order = {name: i for i, name in enumerate(names)}
    return sorted(results, key=lambda result: order[result[0]])


def run_modules(names: list[str]) -> int:
    """One unittest process, as `python -m unittest discover -s tests` run from the repository's
    root sets things up (the tests folder first on the path, then the root, which is the working
    folder, so that `tests.support` imports; only CHILD_ENV added to the environment children
    inherit); it ends by naming its slowest test classes."""
    import resource
    import unittest

    sys.path[:0] = [str(TESTS), str(TESTS.parent)]
    spent: dict[str, float] = {}

    def cpu_seconds() -> float:
        """This process's CPU time and that of every child it (or they) waited for."""
        own, children = resource.getrusage(resource.RUSAGE_SELF), resource.getrusage(resource.RUSAGE_CHILDREN)
        return own.ru_utime + own.ru_stime + children.ru_utime + children.ru_stime

    class Timed(unittest.TextTestResult):
        mark = time.monotonic()

        def stopTest(self, test: unittest.TestCase) -> None:
            super().stopTest(test)
            now = time.monotonic()  # since the last test ended: fixtures count too
            name = f"{type(test).__module__}.{type(test).__qualname__}"
            spent[name] = spent.get(name, 0.0) + now - Timed.mark
            Timed.mark = now

    failed: list[tuple[unittest.TestCase, str]] = []
    for name in names:  # one run per module, so the runner hears when each ends
        started, cpu_started = time.monotonic(), cpu_seconds()
        result = unittest.TextTestRunner(verbosity=2, resultclass=Timed).run(
            unittest.defaultTestLoader.loadTestsFromName(name)
        )
        failed += result.failures + result.errors
        print(
            f"{MODULE_MARK}{name} {time.monotonic() - started:.1f} {cpu_seconds() - cpu_started:.1f} {result.testsRun}",
            flush=True,
        )
    slowest = sorted(spent.items(), key=lambda item: -item[1])[:SLOWEST]
    print("slowest classes: " + ", ".join(f"{name} {seconds:.0f} s" for name, seconds in slowest), flush=True)
    for test, trace in failed:
        last = next((line for line in reversed(trace.splitlines()) if line.strip()), "")
        print(f"{FAILURE_MARK}{test.id()}: {last.strip()[:300]}", flush=True)
    return 0 if not failed else 1


if __name__ == "__main__":
    sys.exit(main())
