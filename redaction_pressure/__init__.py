"""redaction-pressure: write regex redaction rules that generalise to unseen secrets.

The package root re-exports the public face: the Verifiers taskset and its default
harness, which sends the one chat request in-process (so `vf-eval redaction-pressure` finds
them), and the plain API `load_task` / `score_reply`. Names are resolved on first use, so importing the
framework-free modules (or `load_task`) does not import verifiers.
"""

from __future__ import annotations

import importlib

__all__ = [
    "RedactionPressureTaskset",
    "OneTurnHarness",
    "load_task",
    "score_reply",
    "RedactionTask",
    "ScoreResult",
]

_HOMES = {
    "RedactionPressureTaskset": "redaction_pressure.redact.taskset",
    "OneTurnHarness": "redaction_pressure.redact.harness",
    "load_task": "redaction_pressure.redact.api",
    "score_reply": "redaction_pressure.redact.api",
    "RedactionTask": "redaction_pressure.redact.api",
    "ScoreResult": "redaction_pressure.redact.api",
}


def __getattr__(name: str):
    home = _HOMES.get(name)
    if home is None:
        raise AttributeError(f"module 'redaction_pressure' has no attribute {name!r}")
    value = getattr(importlib.import_module(home), name)
    globals()[name] = value
    return value


def __dir__() -> list[str]:
    return sorted(set(globals()) | set(__all__))
