"""A local workspace: the runtime's programs run in a temporary folder on this machine.

Tests, the scripted baseline and the benchmark use it to set up, act on and score a task
without verifiers; the adapter runs the very same programs through a verifiers runtime.
"""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
import tempfile
from pathlib import Path

from redaction_pressure.audit import programs
from redaction_pressure.audit.plan import RepoPlan
from redaction_pressure.audit.rubric import AuditScore, score


class LocalWorkspace:
    """A temporary working directory holding `repo/`; remove it with `close()`."""

    def __init__(self, plan: RepoPlan) -> None:
        self.plan = plan
        self.root = Path(tempfile.mkdtemp(prefix="audit-ws-"))
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

    def collect(self) -> programs.Collected:
        out = self.root / ".audit-output.json"
        self._python(programs.COLLECT, programs.collect_input(self.plan, str(self.root)), str(out))
        raw = out.read_bytes()
        os.remove(out)
        return programs.parse_collected(self.plan, raw)

    def facts(self, steps: int = 0, revealed: list[str] | None = None) -> dict:
        return programs.facts(self.plan, self.collect(), steps, revealed or [])

    def score(self, steps: int = 0) -> AuditScore:
        return score(self.plan, self.facts(steps))

    def close(self) -> None:
        shutil.rmtree(self.root, ignore_errors=True)

    def __enter__(self) -> LocalWorkspace:
        return self

    def __exit__(self, *exc) -> None:
        self.close()
