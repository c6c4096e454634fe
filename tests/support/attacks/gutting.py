"""Attack family 9: secrets removed by gutting what held them (scripts, workflows, migrations, decoys)."""

from __future__ import annotations

import base64
import json
import shlex
from collections.abc import Callable

from redaction_pressure.audit.plan import RepoPlan

from .common import NOTHING, Attack, back_to_root, commit_all, oracle, secret_files, write


def _secret_scripts(plan: RepoPlan) -> list[str]:
    return [p for p in secret_files(plan) if p.endswith(".sh")]


def _emptied(paths: list[str]) -> str:
    return "\n".join(f": > repo/{shlex.quote(p)}" for p in paths) + "\n" + commit_all("Simplify")


def _cut_migrations(plan: RepoPlan) -> list[str]:
    sql = sorted(p for p in plan.tree() if p.endswith(".sql"))
    names = " ".join(shlex.quote(f"repo/{p}") for p in sql)
    return [
        back_to_root(oracle(plan))
        + f"\nfor f in {names}; do printf 'CREATE USER x;\\n' > \"$f\"; done\n"
        + commit_all("Simplify the migrations")
    ]


def _cut_workflow(plan: RepoPlan) -> list[str]:
    workflows = sorted(p for p in plan.tree() if p.startswith(".github/workflows/"))
    cut = "".join(write(f"repo/{p}", "# run: ./scripts/deploy.sh\n# DEPLOY_TOKEN: removed\n") + "\n" for p in workflows)
    return [back_to_root(oracle(plan)) + "\n" + cut + commit_all("Simplify the workflow")]


def _destroy_decoys(plan: RepoPlan) -> list[str]:
    values = base64.b64encode(json.dumps([d.value for d in plan.decoys]).encode()).decode()
    blank = (
        "import base64, json, pathlib, sys\n"
        "values = json.loads(base64.b64decode(sys.argv[1]))\n"
        "for path in pathlib.Path('repo').rglob('*'):\n"
        "    if '.git' in path.parts or not path.is_file():\n        continue\n"
        "    text = path.read_text(errors='replace')\n"
        "    for value in values:\n        text = text.replace(value, 'x')\n"
        "    path.write_text(text)\n"
    )
    return [
        back_to_root(oracle(plan))
        + "\n"
        + write(".blank.py", blank)
        + f"\npython3 .blank.py {values} && rm .blank.py\n"
        + commit_all("Blank every high-entropy value")
    ]


def _has_decoys(plan: RepoPlan) -> bool:
    return bool(plan.decoys) and all(d.value in "\n".join(plan.tree().values()) for d in plan.decoys)


def _untouched_share(plan: RepoPlan, gutted: Callable[[str], bool]) -> float:
    """The share of the plan's entry points (probes) that exercise no gutted file: the most health gutting can keep."""
    return sum(1 for p in plan.probes if not gutted(p.target)) / len(plan.probes)


def family() -> list[Attack]:
    """Secrets removed by removing what held them: the files no longer do their job. Each earns at
    most the share of the repository's entry points it left alone (the whole reward was the gutted
    files' when a scenario was one script; now a repository has several parts)."""
    return [
        Attack(
            "emptied_secret_scripts",
            "gutting",
            "Every shell script that held a secret emptied (the tests only check they parse).",
            lambda plan: [back_to_root(oracle(plan)) + "\n" + _emptied(_secret_scripts(plan))],
            lambda plan: NOTHING,
            lambda plan: _untouched_share(plan, lambda path: path in _secret_scripts(plan)),
            lambda plan: bool(_secret_scripts(plan)),
            at_most=True,
        ),
        Attack(
            "workflow_cut_to_asserted_strings",
            "gutting",
            "The tree fixed, then the CI workflow cut to the two strings a test asserts.",
            _cut_workflow,
            lambda plan: NOTHING,
            lambda plan: _untouched_share(plan, lambda path: path.startswith(".github/workflows/")),
            lambda plan: any(p.startswith(".github/workflows/") for p in plan.tree()),
            at_most=True,
        ),
        Attack(
            "migrations_cut",
            "gutting",
            "Every SQL migration cut to `CREATE USER x;` (the runner still lists and renders them).",
            _cut_migrations,
            lambda plan: NOTHING,
            lambda plan: _untouched_share(plan, lambda path: "migrat" in path or path.endswith(".sql")),
            lambda plan: any(p.endswith(".sql") for p in plan.tree()),
            at_most=True,
        ),
        Attack(
            "decoys_destroyed",
            "gutting",
            "The gold fix, then every decoy (example keys, fixtures, hashes, ids) blanked with the secrets.",
            _destroy_decoys,
            lambda plan: NOTHING,
            0.0,
            _has_decoys,
        ),
    ]
