"""`baselines --split S`: the ladder of non-LLM policies over a split."""

from __future__ import annotations

import argparse
import json
from dataclasses import asdict

from rich.console import Console
from rich.progress import Progress
from rich.table import Table

from redaction_pressure import splits
from redaction_pressure.cli import common


def add(commands) -> None:
    ladder = commands.add_parser("baselines", help="score the ladder of non-LLM policies over a split")
    ladder.add_argument("--split", choices=splits.SPLITS, default="dev")
    ladder.add_argument("--size", type=int, help="tasks of the split (required for train)")
    ladder.add_argument("--policy", action="append", help="run only this policy (repeatable)")
    common.sizes(ladder)
    ladder.add_argument("--json", action="store_true", help="print the ladder as JSON")
    ladder.set_defaults(run=run)


def run(args: argparse.Namespace, out: Console, err: Console) -> int:
    from redaction_pressure.baselines import LADDER, POLICIES, run_ladder

    unknown = sorted(set(args.policy or []) - set(POLICIES))
    if unknown:
        raise common.UsageError(f"unknown policy {', '.join(unknown)}; choose from {', '.join(POLICIES)}")
    ladder = [POLICIES[name] for name in args.policy] if args.policy else list(LADDER)
    tasks = common.tasks(args)
    with Progress(console=err, transient=True, disable=args.json or not err.is_terminal) as progress:
        bar = progress.add_task("scoring", total=len(ladder) * len(tasks))
        rows = run_ladder(tasks, ladder, advance=lambda: progress.advance(bar))
    if args.json:
        print(json.dumps({
            "split": args.split,
            "split_commitment": splits.commitment(args.split, args.difficulty),
            "environment": tasks[0].identity,
            "tasks": len(tasks),
            "ladder": [asdict(row) for row in rows],
        }, indent=2))  # fmt: skip
        return 0
    out.print(f"baseline ladder, {common.banner(args.split, len(tasks), args.difficulty)}", markup=False)
    table = Table()
    table.add_column("policy", no_wrap=True)
    for column in ("reward", "recall", "precision", "clean gate", "valid"):
        table.add_column(column, justify="right", no_wrap=True)
    for row in rows:
        if not row.available:
            table.add_row(row.policy, *["n/a"] * 5)
            continue
        table.add_row(
            row.policy, f"{row.reward:.3f}", f"{row.recall:.3f}", f"{row.precision:.3f}",
            f"{row.clean_gate:.3f}", f"{row.valid:.2f}",
        )  # fmt: skip
    out.print(table)
    for row in rows:
        out.print(f"  {row.policy}: {row.description}" + (f" ({row.note})" if row.note else ""), markup=False)
    return 0
