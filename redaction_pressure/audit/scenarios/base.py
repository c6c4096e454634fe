"""What every secrets-audit scenario shares: the `Draft` a scenario writes, the skeleton, helpers.

A scenario module defines `make(d: Draw) -> Draft` and `SCENARIO = Scenario(name,
difficulty, make)`, composing its Draft with `parts.Builder`. A `Draft` lists the secrets
(values from the corpus formats), the templates of each commit (`«slot»` marks where a secret
sits; see `plan.py`), the pytest suite, the decoys, which tier each secret starts in, the
README's configuration text and the tags and branches.

Every repository shares one skeleton: a README, a `.gitignore`, `pytest.ini`, a first
commit with the tests, then the commits the scenario composes. Tests load modules by path
and check behaviour that does not depend on a secret (shapes, keys, the decoys' values), so
they pass before a fix and after one that reads the environment; they never compare a
secret value.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field

from redaction_pressure.audit.plan import DIFFICULTIES, Decoy, PlanError, Probe, Secret, Slot
from redaction_pressure.corpus import values
from redaction_pressure.corpus.draw import Draw

PASSWORDS = values.PasswordPolicy(16, 24, "-_.")
"""Passwords safe inside URLs, SQL quotes and shell strings alike."""


@dataclass(frozen=True)
class Draft:
    title: str
    brief: str
    secrets: tuple[Secret, ...]
    slots: dict[str, Slot]
    commits: tuple[tuple[str, dict[str, str | None]], ...]
    """(message, {path: template or None to delete}) after the skeleton commit."""
    tests: dict[str, str]
    decoys: tuple[Decoy, ...] = ()
    tiers: dict[str, str] = field(default_factory=dict)
    triggers: dict[str, str] = field(default_factory=dict)
    path_tiers: dict[tuple[str, str], str] = field(default_factory=dict)
    fix_extra: dict[str, str | None] = field(default_factory=dict)
    """What the oracle adds or deletes beyond re-rendering slots fixed (e.g. `.env.example`)."""
    probes: tuple[Probe, ...] = ()
    """The entry points a user exercises (`plan.Probe`): what the grader compares with gold."""
    readme: str = ""
    """The README's configuration text (the builder's convention); empty: list the variables read."""
    refs: tuple[tuple[str, int], ...] = ()
    """Tags and branches at older commits (`plan.RepoPlan.refs`), counted in the draft's commits."""
    tags: tuple[tuple[str, int, str], ...] = ()
    """Annotated tags (`plan.RepoPlan.tags`): (name, commit index as in `refs`, message)."""
    notes: tuple[tuple[int, str], ...] = ()
    """Git notes (`plan.RepoPlan.notes`): (commit index as in `refs`, text)."""
    stashes: tuple[tuple[str, dict[str, str]], ...] = ()
    """Stash entries over the last commit (`plan.RepoPlan.stashes`): (message, {path: template})."""


@dataclass(frozen=True)
class Scenario:
    name: str
    difficulty: str
    make: Callable[[Draw], Draft] = field(repr=False)

    def __post_init__(self) -> None:
        if self.difficulty not in DIFFICULTIES:
            raise PlanError(f"scenario {self.name}: unknown difficulty {self.difficulty!r}")


GITIGNORE = "__pycache__/\n*.pyc\n.pytest_cache/\n.venv/\n"
PYTEST_INI = "[pytest]\ntestpaths = tests\naddopts = -p no:cacheprovider\n"
TEST_HEADER = '''"""Behaviour tests: configuration comes from the environment, functions still work."""

import importlib.util
import pathlib
import subprocess

import pytest

ROOT = pathlib.Path(__file__).resolve().parents[1]


def load(relative):
    """Import a module of the repository by its path, fresh each time."""
    name = relative.replace("/", "_").removesuffix(".py")
    spec = importlib.util.spec_from_file_location(name, ROOT / relative)
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module

'''
