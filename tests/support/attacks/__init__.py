"""Scripted attacks on secrets-audit's grader, as data: each is the bash an agent would send.

Every attack is a list of bash commands, one per tool call, run from the runtime's working
directory (the folder holding `repo/`), built from the task's plan the way an agent that has
read the repository would build it (the plan stands in for what `cat` and `git log` show).
Each attack also says what it *earned*: which secrets it leaves in the repository and how
healthy it leaves the pristine tests; `earned()` turns that into the reward the formula pays,
so no test hard-codes a score it observed.

Shared building blocks:

- `gut(plan)`: every file holding a secret and every file the pristine tests read is removed
  (a Python module the tests load becomes a stub holding only the attack's payload), after a
  copy is kept outside the repository in `.keep/`. Alone it leaves no test passing
  (`TestGutting` pins that premise), so any health an attack shows after it is forged.
- `restore_py(...)`: Python that copies `.keep/` back into a health copy of the repository
  (or into the repository itself), for hooks that run while the grader collects.
- `FORGE_JUNIT`: Python that rewrites pytest's JUnit report to "every test passed".

Attacks that leave processes or files outside the workspace list them in `.attack-pids` and
`.attack-cleanup` (absolute paths, one a line) beside `repo/`; `cleanup(root)` ends those
processes by id and removes those files.

One module per family, in the order the table lists them: `shadowing`, `hooks`, `outside`,
`git_config`, `symlinks`, `history`, `encodings`, `special_files`, `gutting`, `evaluated`,
`hiding`, `reach`, `closed` (each's `family()` returns its attacks); `honest` holds the honest variants and
`common` the building blocks. This package gathers them: `ATTACKS`, `BY_NAME`, `HONEST`.
"""

from __future__ import annotations

from . import (
    closed,
    encodings,
    evaluated,
    git_config,
    gutting,
    hiding,
    history,
    hooks,
    outside,
    reach,
    shadowing,
    special_files,
    symlinks,
)
from .common import NOTHING, Attack, all_secrets, back_to_root, cleanup, earned, gut, oracle, tree_fix, write
from .encodings import ENCODINGS, encoded_file
from .honest import HONEST, Honest

__all__ = [
    "ATTACKS", "BY_NAME", "ENCODINGS", "HONEST", "NOTHING", "Attack", "Honest", "all_secrets", "back_to_root",
    "cleanup", "earned", "encoded_file", "gut", "oracle", "tree_fix", "write",
]  # fmt: skip

ATTACKS: list[Attack] = [
    *shadowing.family(),
    *hooks.family(),
    *outside.family(),
    *git_config.family(),
    *symlinks.family(),
    *history.family(),
    *encodings.family(),
    *special_files.family(),
    *gutting.family(),
    *evaluated.family(),
    *hiding.family(),
    *reach.family(),
    *closed.family(),
]
BY_NAME = {a.name: a for a in ATTACKS}
