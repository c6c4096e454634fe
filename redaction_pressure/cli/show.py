"""`show SPLIT INDEX`: a task's prompts and, for public splits, its hidden records marked."""

from __future__ import annotations

import argparse
import json

from rich.console import Console
from rich.text import Text

from redaction_pressure import splits
from redaction_pressure.cli import common
from redaction_pressure.spans import Record


def add(commands) -> None:
    show = commands.add_parser("show", help="print a task's prompt and, for public splits, its hidden records")
    show.add_argument("split", choices=splits.SPLITS)
    show.add_argument("index", type=int)
    common.sizes(show)
    show.add_argument("--json", action="store_true", help="print the task as JSON")
    show.set_defaults(run=run)


def run(args: argparse.Namespace, out: Console, err: Console) -> int:
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
