"""The command-line tool: evaluate, report, show a task, play one, score a reply, run the ladder, serve.

One module per subcommand, named after it, each with `add(commands)` registering its parser
and the function it runs; `common.py` holds what several share.

    redaction-pressure eval [--policy NAME | --model M --base-url URL --api-key-var VAR]
    redaction-pressure report RUN_DIR [RUN_DIR ...] -o FILE.html
    redaction-pressure show SPLIT INDEX
    redaction-pressure play --taskset secrets-audit SPLIT INDEX
    redaction-pressure score FILE --split dev [--index N] [--json]
    redaction-pressure baselines --split dev [--difficulty LEVEL] [--policy NAME ...] [--json]
    redaction-pressure export SPLIT --out PATH
    redaction-pressure serve --policy NAME [--port N]
    redaction-pressure serve-env [--port N] [--workers N | --elastic --max-workers N]

Results go to stdout, progress and errors to stderr. Exit codes: 0 done; 1 the command
could not complete (a missing file, the private secret unset, an existing output
folder); 2 the command line is wrong (unknown option, index outside the split, train
without --size, exporting private_eval). Every report names the split and its
commitment, so dev figures are never mistaken for private ones. The tool does not
import verifiers (`eval` runs vf-eval as a subprocess; `serve-env` imports it on demand).
"""

from __future__ import annotations

import argparse
import sys
from collections.abc import Sequence

from rich.console import Console

from redaction_pressure import identity, splits
from redaction_pressure.cli import (
    agent,
    baselines,
    eval,
    export,
    play,
    report,
    score,
    serve,
    serve_openenv,
    show,
)
from redaction_pressure.cli.common import PROG, UsageError

__all__ = ["main"]


def main(argv: Sequence[str] | None = None) -> int:
    parser = _parser()
    args = parser.parse_args(argv)
    _stop_scan_workers_on_signals()
    out = Console(file=sys.stdout, highlight=False, soft_wrap=True)
    err = Console(file=sys.stderr, highlight=False)
    try:
        return args.run(args, out, err)
    except UsageError as exc:
        print(f"{PROG}: error: {exc}", file=sys.stderr)
        return 2
    except (splits.SplitError, OSError, ValueError, RuntimeError) as exc:
        print(f"{PROG}: error: {exc}", file=sys.stderr)
        return 1
    except KeyboardInterrupt:
        return 130


def _stop_scan_workers_on_signals() -> None:
    """SIGTERM and SIGINT kill this process's scan workers at once, then end the command (143 / 130).

    Commands that serve (serve, serve-env) install their own handlers over these.
    """
    import signal
    import threading

    if threading.current_thread() is not threading.main_thread():
        return  # main() called from a thread (tests, embedding): signals are not ours to take

    def stop(signum: int, frame: object) -> None:
        pool = sys.modules.get("redaction_pressure.redact.pool")
        if pool is not None:
            pool.kill_all_workers()
        if signum == signal.SIGINT:
            raise KeyboardInterrupt
        raise SystemExit(128 + signum)

    for signum in (signal.SIGTERM, signal.SIGINT):
        signal.signal(signum, stop)


def _parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(
        prog=PROG,
        description="Inspect, score and benchmark redaction-pressure tasks without a model.",
    )
    parser.add_argument("--version", action="version", version=f"{PROG} {identity.version()}")
    commands = parser.add_subparsers(dest="command", required=True, metavar="COMMAND")
    for command in (show, play, score, baselines, export, serve, serve_openenv, agent, eval, report):
        command.add(commands)
    for name, sub in commands.choices.items():
        sub.epilog = "examples:\n" + "\n".join(f"  {PROG} {line}" for line in EXAMPLES[name])
        sub.formatter_class = _ExamplesLast
    return parser


EXAMPLES = {
    "show": ["show dev 3 --difficulty hard --shown 4", "show --taskset secrets-audit dev 7 --json"],
    "play": ["play --taskset secrets-audit dev 3", "play --taskset secrets-audit train 40"],
    "score": ["score --split dev --index 0 answer.json", "score --split dev --size 64 answer.json --json"],
    "baselines": [
        "baselines --difficulty easy",
        "baselines --taskset secrets-audit --split train --start 260 --size 26",
    ],
    "export": ["export dev --out exports/dev", "export train --size 1000 --difficulty hard --out exports/train-hard"],
    "serve": ["serve --policy induction --port 8000"],
    "serve-env": [
        "serve-env --port 5000 --workers 2",
        "serve-env --host 0.0.0.0 --port 5000 --elastic --max-workers 8",
    ],
    "serve-openenv": [
        "serve-openenv --taskset redaction-pressure --port 8000",
        "serve-openenv --taskset secrets-audit --max-sessions 4",
    ],
    "agent": [
        "agent --env-url http://127.0.0.1:8001 --model MODEL --base-url http://127.0.0.1:8000/v1 --split dev --index 3",
        "agent --env-url http://127.0.0.1:8000 --model MODEL --base-url URL --api-key-var OPENAI_API_KEY --seed 12",
    ],
    "eval": ["eval -n 8 -r 3", "eval --model MODEL --base-url http://127.0.0.1:8000/v1 --api-key-var OPENAI_API_KEY"],
    "report": [
        "report outputs/RUN_DIR -o outputs/report.html",
        "report outputs/RUN_A outputs/RUN_B -o outputs/compare.html",
    ],
}
"""One or two command lines per command, printed at the end of its --help."""


class _ExamplesLast(argparse.HelpFormatter):
    """Wrap descriptions as usual; keep the examples epilog's lines as written."""

    def _fill_text(self, text: str, width: int, indent: str) -> str:
        if text.startswith("examples:"):
            return text
        return super()._fill_text(text, width, indent)
