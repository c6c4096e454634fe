"""`baselines --split S`: the ladder of non-LLM policies over a split, of either taskset.

`--taskset redaction-pressure` (the default) scores rule policies on redaction tasks;
`--taskset secrets-audit` plays the audit ladder (`redaction_pressure.audit.ladder`) on local
workspaces, one episode per task and policy, and adds a per-scenario table."""

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
    ladder.add_argument("--taskset", choices=(common.TASKSET, common.AUDIT_TASKSET), default=common.TASKSET,
                        help=f"which taskset's ladder (default {common.TASKSET})")  # fmt: skip
    ladder.add_argument("--split", choices=splits.SPLITS, default="dev")
    ladder.add_argument("--size", type=int, help="tasks of the split (required for train)")
    ladder.add_argument("--start", type=int, default=0, help="first task index (secrets-audit only; default 0)")
    ladder.add_argument("--policy", action="append", help="run only this policy (repeatable)")
    common.sizes(ladder)
    ladder.add_argument("--json", action="store_true", help="print the ladder as JSON")
    ladder.set_defaults(run=run)


def run(args: argparse.Namespace, out: Console, err: Console) -> int:
    if args.taskset == common.AUDIT_TASKSET:
        return run_audit(args, out, err)
    if args.start:
        raise common.UsageError(f"--start applies to --taskset {common.AUDIT_TASKSET} only")
    from redaction_pressure.redact.baselines import LADDER, POLICIES, run_ladder

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


def audit_indices(split: str, size: int | None, start: int, level: str = "standard") -> range:
    """The secrets-audit tasks `start` .. `start + size - 1` of `level` (dev: to its end by default)."""
    from redaction_pressure.audit import splits as audit_splits

    if start < 0:
        raise common.UsageError(f"--start must be 0 or more, got {start}")
    if size is not None and size < 1:
        raise common.UsageError(f"--size must be positive, got {size}")
    if split == "train" and size is None:
        raise common.UsageError("train is unbounded: pass --size N")
    dev = audit_splits.dev_size(level)
    if split == "dev" and start + (size or 1) > dev:
        raise common.UsageError(
            f"dev has {dev} secrets-audit {level} tasks; --start {start} --size {size} runs past them"
        )
    return range(start, start + size if size is not None else dev)


def run_audit(args: argparse.Namespace, out: Console, err: Console) -> int:
    from redaction_pressure.audit import ladder
    from redaction_pressure.audit import splits as audit_splits

    unknown = sorted(set(args.policy or []) - set(ladder.POLICIES))
    if unknown:
        raise common.UsageError(f"unknown policy {', '.join(unknown)}; choose from {', '.join(ladder.POLICIES)}")
    policies = list(dict.fromkeys(args.policy)) if args.policy else list(ladder.POLICIES)
    level = common.audit_level(args.difficulty)
    indices = audit_indices(args.split, args.size, args.start, level)
    commitment = audit_splits.commitment(args.split, level)
    episodes = sum(len(ladder.eligible(args.split, indices, policy)) for policy in policies)
    with Progress(console=err, transient=True, disable=args.json or not err.is_terminal) as progress:
        bar = progress.add_task("playing", total=episodes)
        rows = ladder.run_ladder(args.split, indices, policies, advance=lambda: progress.advance(bar), level=level)
    if args.json:
        from redaction_pressure.audit.scenarios import AUDIT_VERSION

        print(json.dumps({
            "taskset": common.AUDIT_TASKSET,
            "audit_version": AUDIT_VERSION,
            "split": args.split,
            "level": level,
            "split_commitment": commitment,
            "tasks": len(indices),
            "indices": [indices.start, indices.stop],
            "ladder": [asdict(row) for row in rows],
        }, indent=2))  # fmt: skip
        return 0
    out.print(f"{common.AUDIT_TASKSET} ladder, split {args.split}{'' if level == 'standard' else f' ({level})'}, commitment {commitment}, "
              f"tasks {indices.start}..{indices.stop - 1} ({len(indices)})", markup=False)  # fmt: skip
    out.print(_audit_table(rows))
    out.print(_scenario_table(rows))
    for row in rows:
        out.print(f"  {row.policy}: {row.description}" + (f" ({row.note})" if row.note else ""), markup=False)
    return 0


def _mean(value: float | None) -> str:
    return "n/a" if value is None else f"{value:.3f}"


def _audit_table(rows: list) -> Table:
    table = Table()
    table.add_column("policy", no_wrap=True)
    for column in ("reward", "detection", "health", "tasks"):
        table.add_column(column, justify="right", no_wrap=True)
    for row in rows:
        table.add_row(row.policy, _mean(row.total), _mean(row.detection), _mean(row.health), str(row.tasks))
    return table


def _scenario_table(rows: list) -> Table:
    """Mean reward per scenario (rows) and policy (columns)."""
    table = Table()
    table.add_column("scenario", no_wrap=True)
    for row in rows:
        table.add_column(row.policy, justify="right", no_wrap=True)
    for name in sorted({name for row in rows for name in row.scenarios}):
        table.add_row(name, *[_mean(row.scenarios.get(name)) for row in rows])
    return table
