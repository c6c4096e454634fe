"""The command-line tool run as a user runs it: `run(*args)` (`python -m redaction_pressure`, or the
installed script with `module=False`) from the repository's root, without the private secret.
"""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

from .cases import PRIVATE_ENV

ROOT = Path(__file__).resolve().parents[2]


SCRIPT = Path(sys.executable).parent / "redaction-pressure"


def run(
    *args: str, stdin: str | None = None, env: dict | None = None, module: bool = True
) -> subprocess.CompletedProcess:
    command = [sys.executable, "-m", "redaction_pressure"] if module else [str(SCRIPT)]
    environment = {k: v for k, v in os.environ.items() if k != PRIVATE_ENV}
    environment.update(env or {})
    return subprocess.run(
        [*command, *args], input=stdin, capture_output=True, text=True, env=environment, cwd=ROOT,
        timeout=300, **({} if stdin is not None else {"stdin": subprocess.DEVNULL}),
    )  # fmt: skip
