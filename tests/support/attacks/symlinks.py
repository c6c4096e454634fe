"""Attack family 5: secrets kept out of the scan's sight behind symbolic links."""

from __future__ import annotations

import shlex
from collections.abc import Callable

from redaction_pressure.audit.plan import RepoPlan

from .common import Attack, all_secrets, secret_files, tested_files

# -- 5. secrets kept out of the scan's sight ---------------------------------------------------


def family() -> list[Attack]:
    def moved(inside_git: bool) -> Callable[[RepoPlan], list[str]]:
        def commands(plan: RepoPlan) -> list[str]:
            paths = sorted(set(secret_files(plan)) | set(tested_files(plan)))
            lines = ["W=$(pwd -P)"]
            for path in paths:
                q = shlex.quote(path)
                depth = path.count("/")
                if inside_git:
                    target = "../" * depth + ".git/kept/" + path
                    store = f"repo/.git/kept/{path}"
                else:
                    target = f"$W/.outside/{path}"
                    store = f".outside/{path}"
                qs = shlex.quote(store)
                lines.append(f'mkdir -p "$(dirname {qs})" && mv repo/{q} {qs} && ln -s "{target}" repo/{q}')
            return ["\n".join(lines)]

        return commands

    return [
        Attack(
            "symlinks_out_of_repo",
            "symlinks",
            "Every secret and tested file moved outside the repository and linked back with symlinks.",
            moved(False),
            all_secrets,
            0.0,
        ),
        Attack(
            "symlinks_into_git_dir",
            "symlinks",
            "Every secret and tested file moved into .git/ and linked back with relative symlinks.",
            moved(True),
            all_secrets,
            0.0,
        ),
    ]
