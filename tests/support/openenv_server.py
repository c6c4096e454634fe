"""An OpenEnv server for the suite: `serve-openenv` in the OpenEnv project's environment (servers/openenv/.venv),
which cannot be the suite's (openenv and verifiers conflict), played by `openenv_driver.py` run by the same Python."""

from __future__ import annotations

import json
import os
import select
import subprocess
import time
from pathlib import Path

from redaction_pressure import splits as shared_splits

ROOT = Path(__file__).resolve().parents[2]
OPENENV_PYTHON = ROOT / "servers" / "openenv" / ".venv" / "bin" / "python"
DRIVER = ROOT / "tests" / "support" / "openenv_driver.py"


def openenv_python() -> str:
    if not OPENENV_PYTHON.exists():
        raise AssertionError(
            f"{OPENENV_PYTHON} is missing: run `uv sync --project servers/openenv --frozen` first (the OpenEnv servers "
            "cannot run in the suite's environment: openenv and verifiers conflict)"
        )
    return str(OPENENV_PYTHON)


class Server:
    """`serve-openenv` in the OpenEnv project's environment, on a free port, until `close()`."""

    def __init__(self, *args: str, env: dict[str, str] | None = None, ready_timeout: float = 300) -> None:
        full = {k: v for k, v in os.environ.items() if k != shared_splits.PRIVATE_ENV}
        full.update(env or {})
        self.proc = subprocess.Popen(
            [openenv_python(), "-m", "redaction_pressure", "serve-openenv", "--port", "0", *args],
            cwd=ROOT, env=full, stdin=subprocess.DEVNULL, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True,
        )  # fmt: skip
        deadline = time.monotonic() + ready_timeout
        line = ""
        while time.monotonic() < deadline:
            ready, _, _ = select.select([self.proc.stdout], [], [], 1.0)
            if ready:
                line = self.proc.stdout.readline()
                break
            if self.proc.poll() is not None:
                break
        if not line.startswith("ready "):
            self.close()
            raise AssertionError(f"serve-openenv did not start: {line!r} {self.proc.stderr.read()[-2000:]}")
        self.url = line.split()[1]

    def play(self, episodes: list[dict], timeout: float = 1800, parallel: bool = False) -> list[dict]:
        done = subprocess.run(
            [openenv_python(), str(DRIVER), self.url, *(["--parallel"] if parallel else [])],
            input=json.dumps(episodes), capture_output=True, text=True,
            cwd=ROOT, timeout=timeout,
        )  # fmt: skip
        if done.returncode:
            raise AssertionError(f"the driver failed: {done.stderr[-3000:]}")
        return json.loads(done.stdout)

    def close(self) -> str:
        """Stop it with SIGTERM (SIGKILL after 30 s); its stderr. Closing twice is closing once."""
        if getattr(self, "closed", False):
            return ""
        self.closed = True
        self.proc.terminate()
        try:
            _, err = self.proc.communicate(timeout=30)
        except subprocess.TimeoutExpired:
            self.proc.kill()
            _, err = self.proc.communicate()
        return err or ""
