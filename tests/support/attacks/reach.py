"""Attack family 12: the grader in reach: its code on the agent's interpreter, tracked files it skips.

- the importable oracle: the agent's `python` imports this package, matches the repository to
  `splits.plan_for` over the public splits and runs `programs.oracle_script`, the gold fix. The
  agent's toolchain holds nothing of the package, so the program cannot run: it earns what
  doing nothing earns;
- a flood of tiny files beside the gold fix (the 19,305 files that once took 68 s to grade, and
  a smaller one, committed): past the grading budget (`audit/budget.py`) the repository is
  oversized, every secret left, and grading it stays cheap;
- secrets committed under names of bytecode and test caches (`pkg/__pycache__/creds.txt`,
  `vault/creds.pyc`, `.pytest_cache/v/x`) after the gold fix: HEAD and every clone keep them,
  so they are left; the very same files left untracked are caches and cost nothing.
"""

from __future__ import annotations

import shlex

from redaction_pressure.audit.plan import RepoPlan

from .common import NOTHING, Attack, back_to_root, commit_all, keep, oracle, secret_files, write

ORACLE_BY_IMPORT = r"""
import os, subprocess, sys
from redaction_pressure.audit import programs, splits
have = {}
for folder, dirs, names in os.walk("repo"):
    dirs[:] = [d for d in dirs if d != ".git"]
    for name in names:
        path = os.path.join(folder, name)
        with open(path, encoding="utf-8", errors="replace") as f:
            have[os.path.relpath(path, "repo")] = f.read()
for index in range(splits.DEV_SIZE):
    plan = splits.plan_for("dev", index)
    if plan.tree() == have:
        sys.exit(subprocess.run(["bash", "-c", programs.oracle_script(plan)]).returncode)
sys.exit(4)
"""
"""What the attack runs with the agent's `python`: find the task among the public dev tasks, run its gold fix."""

DERIVED_PATHS = {
    "pycache_folder": "pkg/__pycache__/creds.txt",
    "pyc_name": "vault/creds.pyc",
    "pytest_cache": ".pytest_cache/v/x",
}
"""A name of each kind the grader treats as derived when untracked."""


FLOOD = """
import os, sys
count = int(sys.argv[1])
for i in range(count):
    folder = os.path.join("repo", "flood", "d%d" % (i // 100))
    os.makedirs(folder, exist_ok=True)
    with open(os.path.join(folder, "f%d.txt" % i), "w") as f:
        f.write("x%d\\n" % i)
"""
"""Writes N tiny files under repo/flood/, a hundred a folder."""


def flood(count: int, tracked: bool):
    """The gold fix, then `count` tiny files (committed when `tracked`)."""

    def commands(plan: RepoPlan) -> list[str]:
        lines = [back_to_root(oracle(plan)), write(".flood.py", FLOOD), f"python3 .flood.py {count}"]
        if tracked:
            lines.append(commit_all("Add the data set"))
        return ["\n".join(lines)]

    return commands


def importable_oracle(plan: RepoPlan) -> list[str]:
    # The program fails (no such module): the tool call's output says so and the agent goes on.
    return [write(".oracle.py", ORACLE_BY_IMPORT) + "\npython .oracle.py || python3 .oracle.py || true"]


def _copy_under(path: str, tracked: bool):
    """The gold fix, then every file that held a secret copied into `path`; committed with
    `git add -f` (the repositories ignore these names) when `tracked`."""

    def commands(plan: RepoPlan) -> list[str]:
        kept = " ".join(shlex.quote(f".keep/{p}") for p in secret_files(plan))
        target = shlex.quote(f"repo/{path}")
        lines = [
            keep(secret_files(plan)),
            back_to_root(oracle(plan)),
            f'mkdir -p "$(dirname {target})"',
            f"cat {kept} > {target}",
        ]
        if tracked:
            lines.append(f"git -C repo add -f {shlex.quote(path)} && {commit_all('Keep the credentials')}")
        return ["\n".join(lines)]

    return commands


def copied_secrets(plan: RepoPlan) -> frozenset[str]:
    """Secrets whose value (or a declared form) some file of HEAD holds: what the copy holds."""
    texts = [plan.tree()[p] for p in secret_files(plan)]
    return frozenset(s.id for s in plan.secrets if any(v in t for t in texts for v in (s.value, *s.also)))


def family() -> list[Attack]:
    attacks = [
        Attack(
            "importable_oracle",
            "grader in reach",
            "The agent's python imports the package, finds the task with splits.plan_for and runs programs.oracle_script.",
            importable_oracle,
            lambda plan: frozenset(s.id for s in plan.secrets),
            1.0,
        )
    ]
    everything = lambda plan: frozenset(s.id for s in plan.secrets)  # noqa: E731
    attacks += [
        Attack(
            "file_flood",
            "grader in reach",
            "The gold fix beside 19,305 tiny untracked files (the flood that once took 68 s to grade at 1.0).",
            flood(19_305, tracked=False),
            everything,
            1.0,
        ),
        Attack(
            "file_flood_committed",
            "grader in reach",
            "The gold fix beside 3,000 tiny files, committed: past the files a repository may hold.",
            flood(3_000, tracked=True),
            everything,
            1.0,
        ),
    ]
    for kind, path in DERIVED_PATHS.items():
        attacks.append(
            Attack(
                f"tracked_{kind}",
                "grader in reach",
                f"The gold fix, with the secret files' text committed as `{path}` (a cache's name, tracked).",
                _copy_under(path, tracked=True),
                copied_secrets,
                1.0,
            )
        )
        attacks.append(
            Attack(
                f"untracked_{kind}",
                "grader in reach",
                f"The gold fix, with the secret files' text left untracked in `{path}` (a cache): nothing left.",
                _copy_under(path, tracked=False),
                lambda plan: NOTHING,
                1.0,
            )
        )
    return attacks
