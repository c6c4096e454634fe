"""`redaction-pressure eval`: the main job on any machine, with the built-in model or a real one.

It runs the real `vf-eval` (a subprocess, exactly the command the README documents)
on a split, then renders the run's report into the run folder. Without `--base-url`
the model is a prompt-only policy answering from a local chat endpoint
(`endpoint.ChatServer`, on 127.0.0.1, in this process), so no key and no network are
needed. Progress is read from the run's `traces.jsonl`, which vf-eval appends to as
each episode is scored (one line per rollout: `-r N` plays every task N times). Rollouts,
sampling and any further vf-eval options reach vf-eval as extra arguments after the ones
this module sets. This module does not import verifiers.
"""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
import time
import uuid
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path

from redaction_pressure.report.runs import AUDIT_TASKSET_ID, TASKSET_ID, TRACES_FILE

LOCAL_KEY_VAR = "REDACTION_PRESSURE_LOCAL_KEY"
LOG_FILE = "vf-eval.log"
REPORT_FILE = "report.html"
AUDIT_CONCURRENCY = 4
"""secrets-audit episodes in flight by default: each starts a tool server (a Python process
importing verifiers, about 5 s of CPU) that verifiers waits 180 s for; vf-eval's default of 128
on 2 cores misses that deadline for every episode."""


class EvalError(RuntimeError):
    """vf-eval is missing or failed; the message says where its log is."""


class Interrupted(KeyboardInterrupt):
    """Ctrl-C (or SIGTERM) during a run: vf-eval was stopped; `run_dir` holds what it finished (None if nothing)."""

    def __init__(self, run_dir: Path | None) -> None:
        super().__init__()
        self.run_dir = run_dir


@dataclass(frozen=True)
class Endpoint:
    """The model vf-eval talks to."""

    model: str
    base_url: str
    api_key_var: str


def run_name(taskset: str, model: str) -> str:
    """`<environment>--<model>--<short id>`: vf-eval's own default also names the harness,
    which for a taskset that bundles its harness repeats the environment id."""
    return f"{taskset}--{model.replace('/', '--')}--{uuid.uuid4().hex[:8]}".lower()


def vf_eval_command(
    endpoint: Endpoint,
    split: str,
    tasks: int,
    output: Path,
    concurrency: int | None,
    taskset: str = TASKSET_ID,
    difficulty: str = "standard",
    extra: list[str] | tuple[str, ...] = (),
) -> list[str]:
    """The vf-eval command line the README documents, for this endpoint, split, taskset
    and difficulty (a level of either taskset), then `extra` (rollouts, sampling, options after `--`)."""
    if concurrency is None and taskset == AUDIT_TASKSET_ID:
        concurrency = AUDIT_CONCURRENCY
    selection = ["-n", str(tasks)]
    if taskset == AUDIT_TASKSET_ID and split == "dev":
        from redaction_pressure.audit.splits import dev_size, spread

        size = dev_size(difficulty)
        if tasks < size:
            # The first dev tasks are all easy scenarios: a small sample takes each level in turn.
            selection = ["--select.include.idx", *map(str, spread(tasks, size, difficulty))]
    command = [
        _tool("vf-eval"), taskset, *selection, "-m", endpoint.model,
        "--client.base-url", endpoint.base_url, "--client.api-key-var", endpoint.api_key_var,
        "--env.agent.runtime.type", "subprocess", "--env.taskset.split", split,
        "--no-push", "--no-rich", "-o", str(output), "--run.name", run_name(taskset, endpoint.model),
    ]  # fmt: skip
    if concurrency is not None:
        command += ["-c", str(concurrency)]
    if difficulty != "standard":
        command += ["--env.taskset.difficulty", difficulty]
    return command + list(extra)


def run_eval(
    endpoint: Endpoint,
    *,
    split: str,
    tasks: int,
    output: Path,
    concurrency: int | None = None,
    progress: Callable[[int, int], None] = lambda done, total: None,
    env: dict[str, str] | None = None,
    taskset: str = TASKSET_ID,
    difficulty: str = "standard",
    extra: list[str] | tuple[str, ...] = (),
) -> Path:
    """Run vf-eval and return the new run folder; `progress(done, total)` is called as it goes
    (`total` is the tasks given: the caller counts rollouts)."""
    output.mkdir(parents=True, exist_ok=True)
    before = set(output.glob(f"*/{TRACES_FILE}"))
    log_path = output / f".{LOG_FILE}.{os.getpid()}"
    command = vf_eval_command(endpoint, split, tasks, output, concurrency, taskset, difficulty, extra)
    run_dir: Path | None = None
    with log_path.open("wb") as log:
        process = subprocess.Popen(command, stdout=log, stderr=subprocess.STDOUT, stdin=subprocess.DEVNULL,
                                   env=env if env is not None else dict(os.environ))  # fmt: skip
        try:
            while process.poll() is None:
                time.sleep(0.5)
                run_dir = run_dir or _new_run(output, before)
                progress(_episodes(run_dir), tasks)
        except BaseException as stopped:
            process.terminate()
            try:
                process.wait(30)
            except subprocess.TimeoutExpired:
                process.kill()
                process.wait()
            run_dir = run_dir or _new_run(output, before)
            # The log goes with the partial run (or away): no temporary file is left behind.
            if run_dir is not None:
                log_path.replace(run_dir / LOG_FILE)
            else:
                log_path.unlink(missing_ok=True)
            if isinstance(stopped, KeyboardInterrupt):
                raise Interrupted(run_dir) from None
            raise
    run_dir = run_dir or _new_run(output, before)
    final_log = (run_dir / LOG_FILE) if run_dir else output / LOG_FILE
    log_path.replace(final_log)
    if process.returncode != 0 or run_dir is None:
        tail = final_log.read_text(encoding="utf-8", errors="replace").strip().splitlines()[-15:]
        raise EvalError(
            f"vf-eval exited with status {process.returncode}; its output is in {final_log}. Last lines:\n"
            + "\n".join(tail)
        )
    progress(_episodes(run_dir), tasks)
    return run_dir


def _tool(name: str) -> str:
    beside = Path(sys.executable).parent / name
    found = str(beside) if beside.exists() else shutil.which(name)
    if not found:
        raise EvalError(f"{name} is not installed in this environment (it comes with verifiers)")
    return found


def _new_run(output: Path, before: set[Path]) -> Path | None:
    fresh = sorted(set(output.glob(f"*/{TRACES_FILE}")) - before, key=lambda path: path.stat().st_mtime)
    return fresh[-1].parent if fresh else None


def episodes_in(run_dir: Path | None) -> int:
    """Episodes a run folder's traces file holds (0 for none)."""
    return _episodes(run_dir)


def _episodes(run_dir: Path | None) -> int:
    if run_dir is None:
        return 0
    try:
        with (run_dir / TRACES_FILE).open("rb") as traces:
            return sum(1 for line in traces if line.strip())
    except OSError:
        return 0
