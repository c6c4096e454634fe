"""`report RUN_DIR [RUN_DIR ...] -o FILE.html`: one self-contained HTML page of vf-eval or vf-replay runs."""

from __future__ import annotations

import argparse
from pathlib import Path

from rich.console import Console

from redaction_pressure.cli import common


def add(commands) -> None:
    report = commands.add_parser(
        "report",
        help="render vf-eval or vf-replay runs as one self-contained HTML page",
        description="Read each RUN_DIR's traces.jsonl and write one HTML file: summary with bootstrap "
        "intervals, charts, and every public task's rules and hidden records marked with what was "
        "removed. Two or more runs are compared task by task against the first.",
    )
    report.add_argument("runs", nargs="+", type=Path, metavar="RUN_DIR", help="a vf-eval or vf-replay output folder")
    report.add_argument("-o", "--output", type=Path, required=True, metavar="FILE.html", help="the HTML file to write")
    report.set_defaults(run=run)


def run(args: argparse.Namespace, out: Console, err: Console) -> int:
    render, runs = common.report_modules()
    if args.output.is_dir():
        raise common.UsageError(f"{args.output} is a folder; give the HTML file to write")
    try:
        found = runs.find_runs(args.runs)
    except runs.ReportError as exc:
        raise common.UsageError(str(exc)) from None
    common.write_report(render, found, args.output, err)
    episodes, tasks = sum(len(run.episodes) for run in found), sum(len(run.tasks) for run in found)
    counted = f"{episodes} episode(s)" if episodes == tasks else f"{tasks} task(s), {episodes} rollouts"
    print(f"report of {len(found)} run(s), {counted}: {args.output}")
    return 0
