"""`show SPLIT INDEX`: a task's prompts and, for public splits, its hidden records marked.

`show --taskset secrets-audit SPLIT INDEX` prints what the audit agent starts with: the
prompts, the repository's files at its last commit and its history (commits, tags, branches).
"""

from __future__ import annotations

import argparse
import json

from rich.console import Console
from rich.text import Text

from redaction_pressure import splits
from redaction_pressure.cli import common
from redaction_pressure.spans import Record


def add(commands) -> None:
    show = commands.add_parser(
        "show", help="print a task's prompt and, for public splits, its hidden records (or an audit task's repository)"
    )
    show.add_argument("--taskset", choices=(common.TASKSET, common.AUDIT_TASKSET), default=common.TASKSET,
                      help=f"which taskset's task (default {common.TASKSET}; {common.AUDIT_TASKSET} shows the repository the agent starts with)")  # fmt: skip
    show.add_argument("split", choices=splits.SPLITS)
    show.add_argument("index", type=int)
    common.sizes(show)
    show.add_argument("--json", action="store_true", help="print the task as JSON")
    show.set_defaults(run=run)


def run(args: argparse.Namespace, out: Console, err: Console) -> int:
    if args.taskset == common.AUDIT_TASKSET:
        return run_audit(args, out)
    task = common.task(args.split, args.index, args)
    public = task.split != "private_eval"
    if args.json:
        print(json.dumps(task.model_dump(exclude=None if public else {"hidden"}), indent=2))
        return 0
    out.rule(f"{task.split} task {task.index}")
    out.print(common.banner(task.split, 1, task.difficulty), markup=False)
    out.print(Text("System prompt", style="bold"))
    out.print(task.prompt.system, markup=False)
    out.print(Text("\nUser prompt", style="bold"))
    out.print(task.prompt.user, markup=False)
    if not public:
        out.print(Text("\nHidden records of private_eval tasks are not shown.", style="italic"))
        return 0
    out.print(Text("\nHidden records, secrets marked [[S:kind]]...[[/S]], decoys [[D:kind]]...[[/D]]", style="bold"))
    for number, record in enumerate(task.hidden):
        out.rule(f"hidden record {number} ({record.family})")
        out.print(marked(record))
    return 0


def marked(record: Record) -> Text:
    text, cursor = Text(), 0
    labelled = [(s, "S", "bold red") for s in record.secrets] + [(d, "D", "green") for d in record.decoys]
    for span, tag, style in sorted(labelled, key=lambda item: item[0].start):
        text.append(record.text[cursor : span.start])
        text.append(f"[[{tag}:{span.kind}]]", style="dim")
        text.append(record.value(span), style=style)
        text.append(f"[[/{tag}]]", style="dim")
        cursor = span.end
    text.append(record.text[cursor:])
    return text


def run_audit(args: argparse.Namespace, out: Console) -> int:
    from redaction_pressure.audit import splits as audit_splits
    from redaction_pressure.audit.prompt import prompt
    from redaction_pressure.redact.api import DEFAULT_HIDDEN, DEFAULT_SHOWN

    if (args.shown, args.hidden) != (DEFAULT_SHOWN, DEFAULT_HIDDEN):
        raise common.UsageError(
            f"--shown and --hidden are {common.TASKSET} options; a {common.AUDIT_TASKSET} task is its level and index"
        )
    level = common.audit_level(args.difficulty)
    try:
        audit_splits.check_index(args.split, args.index, level)
    except splits.SplitError as exc:  # an index outside the split is a wrong command line, as for one-turn tasks
        raise common.UsageError(str(exc)) from None
    plan = audit_splits.plan_for(args.split, args.index, difficulty=level)
    shown = prompt(plan)
    public = args.split != "private_eval"
    files = plan.tree() if public else {}
    history = [{"message": c.message, "changed": [path for path, _ in c.files]} for c in plan.commits] if public else []
    refs = [{"name": name, "commits": count} for name, count in plan.refs] if public else []
    if args.json:
        document = {"split": args.split, "index": args.index, "level": level, "scenario": plan.scenario, "difficulty": plan.difficulty,
                    "system_prompt": shown.system, "prompt": shown.user}  # fmt: skip
        if public:
            document.update(files=files, history=history, refs=refs)
        print(json.dumps(document, indent=2))
        return 0
    out.rule(f"{common.AUDIT_TASKSET} {args.split} task {args.index}: {plan.scenario} ({plan.difficulty})")
    out.print(Text("System prompt", style="bold"))
    out.print(shown.system, markup=False)
    out.print(Text("\nUser prompt", style="bold"))
    out.print(shown.user, markup=False)
    if not public:
        out.print(Text("\nThe repositories of private_eval tasks are not shown.", style="italic"))
        return 0
    out.print(
        Text(
            f"\nThe repository the agent starts with: {len(files)} files at the last of {len(history)} commits",
            style="bold",
        )
    )
    for path in sorted(files):
        out.rule(path)
        out.print(files[path], markup=False, highlight=False)
    out.rule("history, oldest first")
    for number, commit in enumerate(history, 1):
        out.print(f"{number:>3}. {commit['message']}  ({', '.join(commit['changed'])})", markup=False, highlight=False)
    for ref in refs:
        out.print(f"     {ref['name']} -> commit {ref['commits']}", markup=False, highlight=False)
    return 0
