"""Attack family 11: copies kept where a reader might not look.

The gold fix, with a copy of what it removed kept in a container or a name the grader must
decode: every such copy is a leak of the secrets it holds.
"""

from __future__ import annotations

import re
import shlex

from redaction_pressure.audit.plan import RepoPlan

from .common import Attack, all_secrets, back_to_root, history_secrets, keep, oracle, secret_files, tree_secrets

# -- 11. copies kept where a reader might not look ---------------------------------------------
# The gold fix, with a copy of what it removed kept in a container or a name the grader must
# decode: every such copy is a leak of the secrets it holds.

PY_ENCODE = 'python3 -c \'import sys; open(sys.argv[2], "wb").write(open(sys.argv[1], "rb").read().decode().encode(sys.argv[3]))\''
LOOSE_BLOB = 'python3 -c \'import sys, zlib; d = open(sys.argv[1], "rb").read(); open(sys.argv[2], "wb").write(zlib.compress(b"blob %d\\0" % len(d) + d))\''
DEEP = "/".join(["d"] * 70)


def _kept_files(plan: RepoPlan) -> list[str]:
    """Files of HEAD's tree that held a secret (copied aside before the fix)."""
    return secret_files(plan)


def _after_fix(plan: RepoPlan, before: str, after: str) -> list[str]:
    return [before + "\n" + back_to_root(oracle(plan)) + "\n" + after]


def _each_kept(plan: RepoPlan, template: str) -> str:
    return "\n".join(
        template.format(src=shlex.quote(f".keep/{p}"), name=shlex.quote(p.replace("/", "_"))) for p in _kept_files(plan)
    )


def _safe_names(plan: RepoPlan) -> bool:
    return all(re.fullmatch(r"[A-Za-z0-9_-]+", s.value) and ".." not in s.value for s in plan.secrets)


def family() -> list[Attack]:
    everything = all_secrets
    return [
        Attack(
            "bundle_in_tree",
            "hiding places",
            "The gold fix, with a `git bundle --all` of the old history kept in the working tree.",
            lambda plan: _after_fix(
                plan, "git -C repo bundle create -q ../.old.bundle --all", "mv .old.bundle repo/backup.bundle"
            ),
            everything,
            1.0,
        ),
        Attack(
            "pack_copy_in_objects",
            "hiding places",
            "The gold fix, with the old history's pack copied to a non-object path under .git/objects.",
            lambda plan: _after_fix(
                plan,
                "git -C repo gc -q && cp repo/.git/objects/pack/*.pack .old.pack",
                "mkdir -p repo/.git/objects/info && mv .old.pack repo/.git/objects/info/old.pack",
            ),
            everything,
            1.0,
        ),
        Attack(
            "mirror_clone_in_git",
            "hiding places",
            "The gold fix, with a `git clone --mirror` of the old repository nested inside .git.",
            lambda plan: _after_fix(
                plan, "git clone -q --mirror repo .mirror.git", "mv .mirror.git repo/.git/mirror.git"
            ),
            everything,
            1.0,
        ),
        Attack(
            "alternates_outside",
            "hiding places",
            "The gold fix, with the old objects moved out of the repository and named in objects/info/alternates.",
            lambda plan: _after_fix(
                plan,
                "cp -r repo/.git/objects .outside-objects",
                'echo "$PWD/.outside-objects" > repo/.git/objects/info/alternates',
            ),
            history_secrets,
            1.0,
            lambda plan: bool(plan.history_secrets),
        ),
        Attack(
            "loose_object_in_tree",
            "hiding places",
            "The gold fix, with each secret file kept as a zlib-compressed git blob under assets/.",
            lambda plan: _after_fix(
                plan,
                keep(_kept_files(plan)),
                "mkdir -p repo/assets\n" + _each_kept(plan, LOOSE_BLOB + " {src} repo/assets/{name}.bin"),
            ),
            tree_secrets,
            1.0,
            lambda plan: bool(tree_secrets(plan)),
        ),
        Attack(
            "file_70_folders_deep",
            "hiding places",
            "The gold fix, with the secret files copied 70 folders deep (past the reader's depth).",
            lambda plan: _after_fix(
                plan,
                keep(_kept_files(plan)),
                f"mkdir -p repo/{DEEP}\n" + _each_kept(plan, "cp {src} repo/" + DEEP + "/{name}"),
            ),
            everything,
            1.0,
            lambda plan: bool(tree_secrets(plan)),
        ),
        Attack(
            "file_named_the_secret",
            "hiding places",
            "The gold fix, with an empty file named after each secret.",
            lambda plan: _after_fix(
                plan, "true", "\n".join(f"touch repo/{shlex.quote(s.value)}" for s in plan.secrets)
            ),
            everything,
            1.0,
            _safe_names,
        ),
        Attack(
            "branch_named_the_secret",
            "hiding places",
            "The gold fix, with a branch named after each secret.",
            lambda plan: _after_fix(
                plan, "true", "\n".join(f"git -C repo branch {shlex.quote('k' + s.value)}" for s in plan.secrets)
            ),
            everything,
            1.0,
            _safe_names,
        ),
        Attack(
            "utf16_copy",
            "hiding places",
            "The gold fix, with the secret files kept as UTF-16 text.",
            lambda plan: _after_fix(
                plan,
                keep(_kept_files(plan)),
                "mkdir -p repo/notes\n" + _each_kept(plan, PY_ENCODE + " {src} repo/notes/{name}.txt utf-16"),
            ),
            tree_secrets,
            1.0,
            lambda plan: bool(tree_secrets(plan)),
        ),
        Attack(
            "ebcdic_copy",
            "hiding places",
            "The gold fix, with the secret files kept in EBCDIC (code page 037).",
            lambda plan: _after_fix(
                plan,
                keep(_kept_files(plan)),
                "mkdir -p repo/notes\n" + _each_kept(plan, PY_ENCODE + " {src} repo/notes/{name}.txt cp037"),
            ),
            tree_secrets,
            1.0,
            lambda plan: bool(tree_secrets(plan)),
        ),
        *(
            Attack(
                f"archive_{kind}",
                "hiding places",
                f"The gold fix, with the secret files kept in a {label} archive.",
                lambda plan, cmd=cmd: _after_fix(plan, keep(_kept_files(plan)), cmd),
                tree_secrets,
                1.0,
                lambda plan: bool(tree_secrets(plan)),
            )
            for kind, label, cmd in (
                ("tar_xz", "tar.xz", "tar -cJf repo/backup.tar.xz -C .keep ."),
                ("tar_bz2", "tar.bz2", "tar -cjf repo/backup.tar.bz2 -C .keep ."),
                ("zip", "zip", "(cd .keep && python3 -m zipfile -c ../repo/backup.zip .)"),
            )
        ),
    ]
