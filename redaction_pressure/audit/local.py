"""A local workspace: the runtime's programs run in a temporary folder on this machine.

Tests, the scripted baseline and the benchmark use it to set up, act on and score a task
without verifiers; the adapter runs the very same programs and the same `grading.grade`
through a verifiers runtime. `LocalRuntime` offers the three runtime calls grading uses. The
workspace's environment is the one the taskset gives the subprocess runtime: the agent's own
toolchain (`host_toolchain`) first on PATH.

A plan's repository is built once per process (`programs.MATERIALIZE` in a template folder,
kept for the process's life, at most `KEPT_TEMPLATES` of them) and copied into each new
workspace of that plan, its index then refreshed: the copy holds the bytes a fresh build writes
(fixed authors and dates make them deterministic: files, modes, objects, refs, reflogs' object
ids), but for the time stamp of a branch or tag's reflog entry, which is the template's build
time instead of the workspace's (nothing reads it; `git gc` expires such entries after 90 days).
"""

from __future__ import annotations

import asyncio
import atexit
import hashlib
import os
import shutil
import subprocess
import sys
import tempfile
import threading
from dataclasses import dataclass
from pathlib import Path

from redaction_pressure.audit import grading, host_toolchain, programs
from redaction_pressure.audit.plan import RepoPlan
from redaction_pressure.audit.rubric import AuditScore, score


@dataclass(frozen=True)
class Result:
    exit_code: int
    stdout: str
    stderr: str


class LocalRuntime:
    """`run`, `read` and `write` relative to a folder, like verifiers' subprocess runtime: a
    process gets this process's environment, then `env` (the runtime's), then its own values."""

    def __init__(self, root: Path, env: dict[str, str] | None = None) -> None:
        self.root = root
        self.env = dict(env or {})

    async def run(self, argv: list[str], env: dict[str, str]) -> Result:
        return await asyncio.to_thread(self._run, argv, env)

    def _run(self, argv: list[str], env: dict[str, str]) -> Result:
        full = {**os.environ, **self.env, **env}
        result = subprocess.run(argv, cwd=self.root, env=full, capture_output=True, start_new_session=True)
        return Result(result.returncode, result.stdout.decode(errors="replace"), result.stderr.decode(errors="replace"))

    async def read(self, path: str, max_bytes: int | None = None) -> bytes:
        def read() -> bytes:
            target = self.root / path
            import stat

            fd = os.open(target, os.O_RDONLY | os.O_NONBLOCK)
            with os.fdopen(fd, "rb") as f:
                if not stat.S_ISREG(os.fstat(f.fileno()).st_mode):
                    raise OSError(f"{path} is not a regular file")
                data = f.read(-1 if max_bytes is None else max_bytes + 1)
            if max_bytes is not None and len(data) > max_bytes:
                raise OSError(f"{path} is over {max_bytes} bytes")
            return data

        return await asyncio.to_thread(read)

    async def read_many(self, paths: list[str], max_bytes: int) -> dict[str, bytes]:
        """Regular files by absolute path, in one thread (a missing or special one is left out)."""

        def read_all() -> dict[str, bytes]:
            import stat

            out = {}
            for path in paths:
                try:
                    fd = os.open(path, os.O_RDONLY | os.O_NONBLOCK)
                except OSError:
                    continue
                with os.fdopen(fd, "rb") as f:
                    if stat.S_ISREG(os.fstat(f.fileno()).st_mode):
                        data = f.read(max_bytes + 1)
                        if len(data) <= max_bytes:
                            out[path] = data
            return out

        return await asyncio.to_thread(read_all)

    async def write(self, path: str, data: bytes) -> None:
        target = self.root / path
        target.parent.mkdir(parents=True, exist_ok=True)
        await asyncio.to_thread(target.write_bytes, data)


KEPT_TEMPLATES = 64
"""Plans whose built repository this process keeps (the oldest is dropped past this)."""
_TEMPLATES: dict[str, Path] = {}
_TEMPLATES_LOCK = threading.Lock()


def _copy_repo(payload: bytes, dest: Path) -> None:
    """`dest` made as `programs.MATERIALIZE` makes the repository of `payload` (built once per process, then copied)."""
    key = hashlib.sha256(payload).hexdigest()
    with _TEMPLATES_LOCK:
        kept = _TEMPLATES.get(key)
    if kept is None:
        folder = Path(tempfile.mkdtemp(prefix="audit-template-"))
        inp = folder / ".audit-input.json"
        inp.write_bytes(payload)
        result = subprocess.run(
            [sys.executable, "-c", programs.MATERIALIZE, str(inp)], cwd=folder, capture_output=True, text=True
        )
        if result.returncode:
            shutil.rmtree(folder, ignore_errors=True)
            raise RuntimeError(f"runtime program failed: {result.stderr[-2000:]}")
    with _TEMPLATES_LOCK:  # copied under the lock, so that no other thread drops the template meanwhile
        if kept is None:
            if key in _TEMPLATES:  # another thread built it meanwhile
                shutil.rmtree(folder, ignore_errors=True)
            else:
                if len(_TEMPLATES) >= KEPT_TEMPLATES:
                    shutil.rmtree(_TEMPLATES.pop(next(iter(_TEMPLATES))), ignore_errors=True)
                _TEMPLATES[key] = folder
        template = _TEMPLATES[key] / programs.REPO_DIR
        shutil.copytree(template, dest, symlinks=True, copy_function=shutil.copy)
    # The copy's files have new inodes and times: refresh the index's stat data, as a fresh build leaves it.
    env = {**os.environ, "GIT_CONFIG_GLOBAL": os.devnull, "GIT_CONFIG_NOSYSTEM": "1"}
    subprocess.run(["git", "update-index", "-q", "--refresh"], cwd=dest, env=env, capture_output=True, check=False)


@atexit.register
def _drop_templates() -> None:
    with _TEMPLATES_LOCK:
        for folder in _TEMPLATES.values():
            shutil.rmtree(folder, ignore_errors=True)
        _TEMPLATES.clear()


@dataclass(frozen=True)
class Collected:
    facts: dict

    @property
    def tests(self) -> dict:
        return self.facts["tests"]


class LocalWorkspace:
    """A temporary working directory holding `repo/`; remove it with `close()`. Its runtime and
    `bash` give the agent's environment of the subprocess runtime: the agent's own toolchain first
    on PATH (`host_toolchain.agent_env`), nothing of this process's environment in reach of `python`."""

    def __init__(self, plan: RepoPlan) -> None:
        self.plan = plan
        self.root = Path(tempfile.mkdtemp(prefix="audit-ws-"))
        try:
            env = host_toolchain.agent_env(os.environ)
        except host_toolchain.ToolchainError as exc:
            shutil.rmtree(self.root, ignore_errors=True)
            raise RuntimeError(f"the local runtime has no agent toolchain: {exc}; run `uv sync --frozen`") from None
        self.runtime = LocalRuntime(self.root, env)
        probe = asyncio.run(grading.probe(self.runtime))
        if probe.toolchain is None:
            raise RuntimeError(f"the local runtime lacks {', '.join(probe.missing)}; run `uv sync --frozen`")
        self.toolchain = probe.toolchain
        if any(p.kind == "js" for p in plan.probes) and not self.toolchain.node:
            raise RuntimeError(
                "the local runtime lacks node, which the JavaScript probes run under (apt-get install nodejs)"
            )
        _copy_repo(programs.materialize_input(plan), self.repo)
        # Gold's probe runs, made before the agent acts: the first grade uses them, a later one makes its own.
        self.gold = asyncio.run(grading.prepare_gold(self.runtime, plan, self.toolchain))

    @property
    def repo(self) -> Path:
        return self.root / programs.REPO_DIR

    def bash(self, command: str, timeout: float = 60) -> subprocess.CompletedProcess:
        """`command` as the agent's bash tool runs it: in the workspace, in the agent's environment."""
        env = {**os.environ, **self.runtime.env}
        return subprocess.run(
            ["bash", "-c", command], cwd=self.root, env=env, capture_output=True, text=True, timeout=timeout
        )

    def collect(self, steps: int = 0) -> Collected:
        gold, self.gold = self.gold, None
        return Collected(asyncio.run(grading.grade(self.runtime, self.plan, self.toolchain, steps, gold=gold)))

    def facts(self, steps: int = 0, revealed: list[str] | None = None) -> dict:
        facts = self.collect(steps).facts
        facts["revealed"] = sorted(revealed or [])
        return facts

    def score(self, steps: int = 0) -> AuditScore:
        return score(self.plan, self.facts(steps))

    def tools(self, command_timeout: float = programs.TEST_TIMEOUT):
        """The episode's audit tools on this workspace (`toolcalls.AuditTools`, as the taskset runs them)."""
        from redaction_pressure.audit.toolcalls import AuditTools

        rt = self.runtime
        return AuditTools(self.plan, agent=rt, grader=rt, toolchain=self.toolchain, command_timeout=command_timeout)

    def close(self) -> None:
        shutil.rmtree(self.root, ignore_errors=True)

    def __enter__(self) -> LocalWorkspace:
        return self

    def __exit__(self, *exc) -> None:
        self.close()
