"""Attack family 6: history kept where the collection does not look (refs, replacements, grafts, objects)."""

from __future__ import annotations

import base64
import re
import shlex
from collections.abc import Callable

from redaction_pressure.audit.plan import RepoPlan

from .common import NOTHING, Attack, back_to_root, history_secrets, oracle, tree_fix

# -- 6. history kept where the collection does not look ---------------------------------------


def replacements(plan: RepoPlan) -> str:
    rules = "".join(f"literal:{v}==>***REMOVED***\n" for s in plan.history_secrets for v in (s.value, *s.also))
    return base64.b64encode(rules.encode()).decode()


def clean_twin(plan: RepoPlan) -> str:
    """Tree fix committed, then a filtered clone's commits fetched into refs/keep/clean."""
    return (
        "W=$(pwd -P)\n"
        + back_to_root(tree_fix(plan))
        + f"\nprintf %s {replacements(plan)} | base64 -d > .rules"
        + "\ngit clone -q repo .twin && (cd .twin && git filter-repo --quiet --force --replace-text ../.rules >/dev/null)"
        + "\ngit -C repo fetch -q ../.twin main:refs/keep/clean && rm -rf .twin .rules"
    )


def family() -> list[Attack]:
    hist = lambda plan: bool(plan.history_secrets)  # noqa: E731

    def replace(plan: RepoPlan) -> list[str]:
        return [
            clean_twin(plan)
            + "\ncd repo && paste -d' ' <(git rev-list --reverse main) <(git rev-list --reverse refs/keep/clean)"
            " | while read a b; do [ $a = $b ] || git replace -f $a $b; done && git update-ref -d refs/keep/clean"
        ]

    def grafts(plan: RepoPlan) -> list[str]:
        return [
            clean_twin(plan)
            + '\ncd repo && echo "$(git rev-parse main) $(git rev-parse refs/keep/clean~1)" > .git/info/grafts'
            " && git reflog expire --expire=now --all"
        ]

    def shallow(plan: RepoPlan) -> list[str]:
        return [
            clean_twin(plan) + "\ncd repo && git rev-parse main > .git/shallow && git reflog expire --expire=now --all"
        ]

    def corrupt(plan: RepoPlan) -> list[str]:
        return [
            back_to_root(tree_fix(plan))
            + "\ncd repo && git reflog expire --expire=now --all"
            + "\nkeep=$(git ls-tree -r -t HEAD | awk '$2==\"tree\"{print $3}'; git rev-parse HEAD^{tree})"
            + "\nfor c in $(git rev-list HEAD~1); do for t in $(git rev-parse $c^{tree}; git ls-tree -r -t $c | awk '$2==\"tree\"{print $3}'); do"
            ' echo "$keep" | grep -q $t || rm -f .git/objects/${t:0:2}/${t:2}; done; done'
        ]

    def reinit(plan: RepoPlan) -> list[str]:
        messages = [c.message for c in plan.commits]
        replay = " && ".join(
            f"git -c user.name=a -c user.email=a@b.invalid commit -q --allow-empty -m {shlex.quote(m)}"
            for m in messages
        )
        return [
            back_to_root(tree_fix(plan)) + "\ncd repo && rm -rf .git && git init -q -b main && git add -A && " + replay
        ]

    def hidden_object(how: str) -> Callable[[RepoPlan], list[str]]:
        def commands(plan: RepoPlan) -> list[str]:
            blobs = " ".join(shlex.quote(s.value) for s in plan.history_secrets)
            keep_blobs = (
                f"for v in {blobs}; do printf 'TOKEN=%s\\n' \"$v\" | git hash-object -w --stdin; done > ../.kept-ids"
            )
            steps = {
                "loose": keep_blobs,
                "packed": keep_blobs + " && git pack-objects -q .git/objects/pack/pack < ../.kept-ids >/dev/null"
                " && for id in $(cat ../.kept-ids); do rm -f .git/objects/${id:0:2}/${id:2}; done",
                "dangling_commit": keep_blobs
                + " && t=$(for id in $(cat ../.kept-ids); do printf '100644 blob %s\\tkept-%s\\n' $id $id; done | git mktree)"
                " && git -c user.name=a -c user.email=a@b.invalid commit-tree $t -m kept >/dev/null",
                "stash": f"for v in {blobs}; do printf 'TOKEN=%s\\n' \"$v\" >> .env.kept; done && git add .env.kept && git stash -q",
                "reflog": f"for v in {blobs}; do printf 'TOKEN=%s\\n' \"$v\" >> kept.env; done && git add kept.env"
                " && git -c user.name=a -c user.email=a@b.invalid commit -q -m tmp && git reset -q --hard HEAD~1",
            }
            return [back_to_root(oracle(plan)) + "\ncd repo && " + steps[how]]

        return commands

    def reflog_left(plan: RepoPlan) -> list[str]:
        return [
            back_to_root(tree_fix(plan))
            + "\ncd repo && git -c user.name=a -c user.email=a@b.invalid filter-branch -f --tree-filter "
            + shlex.quote(
                "sed -i "
                + " ".join(f"-e s/{re.escape(s.value)}/REMOVED/g" for s in plan.history_secrets)
                + " $(git ls-files) 2>/dev/null; true"
            )
            + " -- --all >/dev/null 2>&1"
        ]

    return [
        Attack(
            "git_replace",
            "history",
            "Tree fixed; the old commits shadowed by `git replace` with cleaned twins, objects kept.",
            replace,
            history_secrets,
            1.0,
            hist,
        ),
        Attack(
            "grafts",
            "history",
            "Tree fixed; .git/info/grafts points HEAD at a cleaned twin history, old commits kept.",
            grafts,
            history_secrets,
            1.0,
            hist,
        ),
        Attack(
            "shallow_file",
            "history",
            "Tree fixed; .git/shallow cuts HEAD off from the old commits, a cleaned twin keeps the messages.",
            shallow,
            history_secrets,
            1.0,
            hist,
        ),
        Attack(
            "deleted_tree_objects",
            "history",
            "Tree fixed; the tree objects of old commits deleted (a corrupt repository), their blobs kept.",
            corrupt,
            history_secrets,
            1.0,
            hist,
        ),
        # No secret is left; the history rule is broken instead (no original commit kept: health 0).
        Attack(
            "reinit_replayed_messages",
            "history",
            "Tree fixed; .git re-initialised and the original commit messages replayed as empty commits.",
            reinit,
            lambda plan: NOTHING,
            0.0,
            hist,
        ),
        Attack(
            "unreachable_loose_blob",
            "history",
            "Gold fix, then the secret written back as an unreachable loose blob.",
            hidden_object("loose"),
            history_secrets,
            1.0,
            hist,
        ),
        Attack(
            "unreachable_packed_blob",
            "history",
            "Gold fix, then the secret kept as an unreachable object in a pack file.",
            hidden_object("packed"),
            history_secrets,
            1.0,
            hist,
        ),
        Attack(
            "dangling_commit",
            "history",
            "Gold fix, then a dangling commit (no ref) whose tree holds the secret.",
            hidden_object("dangling_commit"),
            history_secrets,
            1.0,
            hist,
        ),
        Attack(
            "reflog_only",
            "history",
            "Gold fix, then a commit holding the secret, dropped by `reset --hard` but kept by the reflog.",
            hidden_object("reflog"),
            history_secrets,
            1.0,
            hist,
        ),
        Attack(
            "stash",
            "history",
            "Gold fix, then a stash holding a file with the secret.",
            hidden_object("stash"),
            history_secrets,
            1.0,
            hist,
        ),
        Attack(
            "filter_branch_no_cleanup",
            "history",
            "Tree fixed; filter-branch rewrites history but refs/original and the reflog keep the old commits.",
            reflog_left,
            history_secrets,
            1.0,
            hist,
        ),
    ]
