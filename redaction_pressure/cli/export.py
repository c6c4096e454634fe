"""`export SPLIT --out PATH`: a public split as a Hugging Face dataset and JSONL."""

from __future__ import annotations

import argparse
import json
from pathlib import Path

from rich.console import Console
from rich.progress import Progress

from redaction_pressure import splits
from redaction_pressure.cli import common
from redaction_pressure.corpus import DEFAULT_DIFFICULTY
from redaction_pressure.redact.api import RedactionTask


def add(commands) -> None:
    export = commands.add_parser("export", help="save a public split as a Hugging Face dataset and JSONL")
    export.add_argument("split", choices=splits.SPLITS)
    export.add_argument("--out", type=Path, required=True, help="a new folder to write")
    export.add_argument("--size", type=int, help="tasks of the split (required for train)")
    common.sizes(export)
    export.set_defaults(run=run)


def run(args: argparse.Namespace, out: Console, err: Console) -> int:
    if args.split == "private_eval":
        raise common.UsageError("private_eval cannot be exported: its tasks stay with the evaluator")
    try:
        import datasets  # slow to import: only here, and checked before any task is built
    except ImportError as exc:
        raise common.UsageError(
            f"export needs the 'export' extra ({exc.name} is missing): "
            "pip install 'redaction-pressure[export]' or uv sync --extra export"
        ) from None
    if args.out.exists() and any(args.out.iterdir()):
        raise OSError(f"{args.out} exists and is not empty; choose a new folder")
    indices = common.indices(args.split, args.size)
    rows = []
    with Progress(console=err, transient=True, disable=not err.is_terminal) as bar:
        job = bar.add_task(f"building {args.split} tasks", total=len(indices))
        for index in indices:
            rows.append(task_row(common.task(args.split, index, args)))
            bar.advance(job)
    err.print(f"saving {len(rows)} tasks to {args.out}")

    datasets.disable_progress_bars()
    datasets.Dataset.from_list(rows).save_to_disk(str(args.out))
    jsonl = args.out / f"{args.split}.jsonl"
    with jsonl.open("w", encoding="utf-8") as handle:
        for row in rows:
            handle.write(json.dumps(row) + "\n")
    err.print(f"wrote {len(rows)} {args.split} tasks to {args.out} (Hugging Face dataset) and {jsonl}")
    return 0


def task_row(task: RedactionTask) -> dict:
    return {
        "id": f"{task.split}-{task.index:05d}"
        if task.difficulty == DEFAULT_DIFFICULTY
        else f"{task.split}-{task.difficulty}-{task.index:05d}",
        "split": task.split,
        "index": task.index,
        "seed": splits.seed_for(
            task.split, task.index
        ),  # the split's seed; `difficulty` adds the level (an int64 column)
        "difficulty": task.difficulty,
        "prompt": [  # the chat format TRL's GRPOTrainer reads (`redaction_pressure.trl.reward_function` scores it)
            {"role": "system", "content": task.prompt.system},
            {"role": "user", "content": task.prompt.user},
        ],
        "system_prompt": task.prompt.system,
        "user_prompt": task.prompt.user,
        "shown": [record.model_dump() for record in task.shown],
        "hidden": [record.model_dump() for record in task.hidden],
        **{key: task.identity[key] for key in ("corpus_version", "reward_schema_version", "split_commitment")},
    }
