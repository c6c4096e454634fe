"""vf-eval runs as the tests start and read them: `eval_environment` (a fresh HOME, no host key,
stand-in key variables) and `traces(run_dir)` (every trace of a run's traces.jsonl).
"""

from __future__ import annotations

import json
import os
from pathlib import Path

from .cases import PRIVATE_ENV


def eval_environment(folder: str) -> dict[str, str]:
    """The environment of an `eval` subprocess: a fresh HOME, no key of the host, stand-in key variables."""
    env = {k: v for k, v in os.environ.items() if k != PRIVATE_ENV and "API_KEY" not in k}
    env.setdefault("UV_CACHE_DIR", str(Path.home() / ".cache" / "uv"))
    env.update(HOME=folder, UV_PYTHON_DOWNLOADS="never", DEAD_KEY="not-a-real-key", STANDIN_KEY="not-a-real-key")
    return env


def traces(run_dir: Path) -> list[dict]:
    path = run_dir / "traces.jsonl"
    return [trace for line in path.read_text().splitlines() if line.strip() for trace in json.loads(line)["traces"]]
