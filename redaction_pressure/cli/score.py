"""`score FILE --split S [--index N]`: a reply scored exactly as a model's, against one task or a split."""

from __future__ import annotations

import argparse
import json
import sys
from pathlib import Path

from rich.console import Console
from rich.progress import Progress
from rich.table import Table

from redaction_pressure import splits
from redaction_pressure.cli import common
from redaction_pressure.redact.api import score_reply


def add(commands) -> None:
    score = commands.add_parser("score", help="score a reply (or rules file) against one task or a whole split")
    score.add_argument("file", help="the reply exactly as a model would send it; '-' reads standard input")
    score.add_argument("--split", choices=splits.SPLITS, required=True)
    score.add_argument("--index", type=int, help="one task (default: every task of the split)")
    score.add_argument("--size", type=int, help="tasks of the split to score (required for train)")
    common.sizes(score)
    score.add_argument("--json", action="store_true", help="print results as JSON")
    score.set_defaults(run=run)


def run(args: argparse.Namespace, out: Console, err: Console) -> int:
    reply = read_reply(args.file)
    indices = [args.index] if args.index is not None else common.indices(args.split, args.size)
    results = []
    with Progress(console=err, transient=True, disable=len(indices) < 2 or not err.is_terminal) as bar:
        job = bar.add_task("scoring tasks", total=len(indices))
        for index in indices:
            task = common.task(args.split, index, args)
            results.append((task, score_reply(task, reply)))
            bar.advance(job)
    tasks = [task for task, _ in results]
    mean = {
        key: sum(getattr(result, key) for _, result in results) / len(results)
        for key in ("reward", "recall", "precision", "clean_gate")
    }
    if args.json:
        print(json.dumps({
            "split": args.split,
            "split_commitment": splits.commitment(args.split, args.difficulty),
            "environment": tasks[0].identity,
            "mean": mean,
            "tasks": [
                {"index": task.index, **result.model_dump(), "errors": [e.to_dict() for e in result.errors]}
                for task, result in results
            ],
        }, indent=2))  # fmt: skip
        return 0
    out.print(common.banner(args.split, len(tasks), args.difficulty), markup=False)
    table = Table()
    for column in ("task", "reward", "recall", "precision", "clean gate", "valid", "errors"):
        table.add_column(column, justify="left" if column in ("task", "errors") else "right")
    for task, result in results:
        codes = ", ".join(error.code for error in result.errors) or "-"
        table.add_row(
            f"{task.split}-{task.index:05d}", f"{result.reward:.3f}", f"{result.recall:.3f}",
            f"{result.precision:.3f}", f"{result.clean_gate:.0f}", "yes" if result.valid else "no", codes,
        )  # fmt: skip
    if len(results) > 1:
        table.add_row("mean", *(f"{mean[k]:.3f}" for k in ("reward", "recall", "precision", "clean_gate")), "", "")
    out.print(table)
    if len(results) == 1:
        for error in results[0][1].errors:
            out.print(f"{error.code}: {error.detail}", markup=False)
    return 0


def read_reply(name: str) -> str:
    """The file (or standard input for '-') as text, with an error naming what is wrong with it."""
    what = "standard input" if name == "-" else name
    if name != "-" and Path(name).is_dir():
        raise ValueError(f"{name} is a folder, not a reply file")
    data = sys.stdin.buffer.read() if name == "-" else Path(name).read_bytes()
    try:
        return data.decode("utf-8")
    except UnicodeDecodeError as exc:
        raise ValueError(
            f"{what} is not UTF-8 text (byte 0x{data[exc.start]:02x} at offset {exc.start} cannot be decoded); "
            "a reply is the model's text, exactly as it would send it"
        ) from None
