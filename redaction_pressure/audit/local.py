"""A local workspace: the runtime's programs run in a temporary folder on this machine.

Tests, the scripted baseline and the benchmark use it to set up, act on and score a task
without verifiers; the adapter runs the very same programs and the same `grading.grade`
through a verifiers runtime. `LocalRuntime` offers the three runtime calls grading uses.
"""

from __future__ import annotations

import asyncio
import os
import shutil
import subprocess
import sys
import tempfile
from dataclasses import dataclass
from pathlib import Path

from redaction_pressure.audit import grading, programs
from redaction_pressure.audit.plan import RepoPlan
from redaction_pressure.audit.rubric import AuditScore, score


@dataclass(frozen=True)
class Result:
    exit_code: int
    stdout: str
    stderr: str


class LocalRuntime:
    """`run`, `read` and `write` relative to a folder, like verifiers' subprocess runtime."""

    def __init__(self, root: Path) -> None:
        self.root = root

    async def run(self, argv: list[str], env: dict[str, str]) -> Result:
        return await asyncio.to_thread(self._run, argv, env)

    def _run(self, argv: list[str], env: dict[str, str]) -> Result:
        full = {**os.environ, **env}
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


@dataclass(frozen=True)
class Collected:
    facts: dict

    @property
    def tests(self) -> dict:
        return self.facts["tests"]


class LocalWorkspace:
    """A temporary working directory holding `repo/`; remove it with `close()`."""

    def __init__(self, plan: RepoPlan) -> None:
        self.plan = plan
        self.root = Path(tempfile.mkdtemp(prefix="audit-ws-"))
        self.runtime = LocalRuntime(self.root)
        probe = asyncio.run(grading.probe(self.runtime))
        if probe.toolchain is None:
            raise RuntimeError(f"the local runtime lacks {', '.join(probe.missing)}; run `uv sync --frozen`")
        self.toolchain = probe.toolchain
        self._python(programs.MATERIALIZE, programs.materialize_input(plan))

    @property
    def repo(self) -> Path:
        return self.root / programs.REPO_DIR

    def _python(self, program: str, payload: bytes, *extra: str) -> subprocess.CompletedProcess:
        inp = self.root / ".audit-input.json"
        inp.write_bytes(payload)
        result = subprocess.run(
            [sys.executable, "-c", program, str(inp), *extra], cwd=self.root, capture_output=True, text=True
        )
        if result.returncode:
            raise RuntimeError(f"runtime program failed: {result.stderr[-2000:]}")
        return result

    def bash(self, command: str, timeout: float = 60) -> subprocess.CompletedProcess:
        return subprocess.run(["bash", "-c", command], cwd=self.root, capture_output=True, text=True, timeout=timeout)

    def collect(self, steps: int = 0) -> Collected:
        return Collected(asyncio.run(grading.grade(self.runtime, self.plan, self.toolchain, steps)))

    def facts(self, steps: int = 0, revealed: list[str] | None = None) -> dict:
        facts = self.collect(steps).facts
        facts["revealed"] = sorted(revealed or [])
        return facts

    def score(self, steps: int = 0) -> AuditScore:
        return score(self.plan, self.facts(steps))

    def close(self) -> None:
        shutil.rmtree(self.root, ignore_errors=True)

    def __enter__(self) -> LocalWorkspace:
        return self

    def __exit__(self, *exc) -> None:
        self.close()
