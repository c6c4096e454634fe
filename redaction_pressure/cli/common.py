"""What several subcommands share: names, usage errors, task selection, ports, the report's rendering."""

from __future__ import annotations

import argparse
from pathlib import Path

from rich.console import Console
from rich.progress import Progress

from redaction_pressure import splits
from redaction_pressure.corpus import DEFAULT_DIFFICULTY, DIFFICULTIES
from redaction_pressure.redact.api import (
    DEFAULT_HIDDEN,
    DEFAULT_SHOWN,
    MAX_HIDDEN,
    MAX_SHOWN,
    RedactionTask,
    load_task,
)

PROG = "redaction-pressure"
TASKSET = "redaction-pressure"
AUDIT_TASKSET = "secrets-audit"


class UsageError(Exception):
    """The command line asks for something that does not exist or is not allowed."""


def needs_openenv(command: str) -> UsageError:
    """The error of a command run where `openenv` is not installed (it cannot share an environment with verifiers)."""
    return UsageError(
        f"{command} needs the openenv package, which cannot share an environment with verifiers: run it from "
        f"the OpenEnv project (uv run --project servers/openenv {PROG} {command} ...)"
    )


def check_port_free(port: int, host: str = "127.0.0.1") -> None:
    """Fail with one line naming the address when something already listens on host:port."""
    import errno
    import socket

    if port == 0:
        return
    probe = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
    probe.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
    try:
        probe.bind((host, port))
    except OSError as exc:
        if exc.errno == errno.EADDRINUSE:
            raise OSError(
                f"port {port} on {host} is already in use; choose another with --port (0 picks a free one)"
            ) from None
        raise OSError(f"cannot listen on {host}:{port}: {exc.strerror or exc}") from None
    finally:
        probe.close()


def host(text: str) -> str:
    """An IPv4 address of this machine to listen on: 127.0.0.1 (loopback), 0.0.0.0 (every interface) or one interface's."""
    import ipaddress

    try:
        return str(ipaddress.IPv4Address(text))
    except ValueError:
        raise argparse.ArgumentTypeError(
            f"must be an IPv4 address such as 127.0.0.1 or 0.0.0.0 (got {text!r})"
        ) from None


def port(text: str) -> int:
    """A TCP port on 127.0.0.1: 0 (any free one) to 65535."""
    port = int(text)
    if not 0 <= port <= 65535:
        raise argparse.ArgumentTypeError(f"must be between 0 and 65535 (got {port})")
    return port


def prompt_policy_names() -> list[str]:
    from redaction_pressure.redact.policies.prompted import PROMPT_POLICIES

    return list(PROMPT_POLICIES)


def report_modules():
    render, missing = optional_renderer()
    if render is None:
        raise UsageError(missing)
    from redaction_pressure.report import runs

    return render, runs


def optional_renderer():
    """(the report renderer, "") or (None, why not): the renderer needs the `report` extra; reading runs does not."""
    try:
        from redaction_pressure.report import render
    except ImportError as exc:
        return None, (f"the report needs the 'report' extra ({(exc.name or 'jinja2').split('.')[0]} is missing): "
                      "pip install 'redaction-pressure[report]' or uv sync --extra report")  # fmt: skip
    return render, ""


def write_report(render, found: list, output: Path, err: Console) -> Path:
    """Render the report with a progress bar over the episodes it marks."""
    total = sum(len(run.episodes) for run in found)
    with Progress(console=err, transient=True, disable=not err.is_terminal) as bar:
        job = bar.add_task("marking episodes for the report", total=total)
        return render.write(found, output, progress=lambda: bar.advance(job))


def sizes(parser: argparse.ArgumentParser) -> None:
    parser.add_argument(
        "--shown",
        type=records(MAX_SHOWN),
        default=DEFAULT_SHOWN,
        help=f"records shown in the prompt, 1 to {MAX_SHOWN} (default {DEFAULT_SHOWN})",
    )
    parser.add_argument(
        "--hidden",
        type=records(MAX_HIDDEN),
        default=DEFAULT_HIDDEN,
        help=f"unseen records scored, 1 to {MAX_HIDDEN} (default {DEFAULT_HIDDEN})",
    )
    difficulty(parser)


def records(limit: int):
    """An argparse type: a count of records from 1 to `limit` (out of range is a usage error, exit 2)."""

    def parse(text: str) -> int:
        try:
            count = int(text)
        except ValueError:
            raise argparse.ArgumentTypeError(f"must be a whole number of records (got {text!r})") from None
        if not 1 <= count <= limit:
            raise argparse.ArgumentTypeError(f"must be 1 to {limit} records (got {count})")
        return count

    return parse


def difficulty(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("--difficulty", choices=DIFFICULTIES, default=DEFAULT_DIFFICULTY, metavar="LEVEL",
                        help=f"level: {', '.join(DIFFICULTIES)} (default {DEFAULT_DIFFICULTY}); "
                             f"{AUDIT_TASKSET} has standard and expert")  # fmt: skip


def audit_level(difficulty: str) -> str:
    """The secrets-audit level `--difficulty` names: standard (its curriculum, the default) or expert."""
    if difficulty not in ("standard", "expert"):
        raise UsageError(
            f"{AUDIT_TASKSET} has the levels standard (its curriculum of easy, medium and hard scenarios, the default) "
            f"and expert; --difficulty {difficulty} is a {TASKSET} level"
        )
    return difficulty


def indices(split: str, size: int | None) -> range:
    if size is not None and size < 1:
        raise UsageError(f"--size must be positive, got {size}")
    if split == "train" and size is None:
        raise UsageError("train is unbounded: pass --size N")
    if split == "dev" and size is not None and size > splits.DEV_SIZE:
        raise UsageError(f"dev has {splits.DEV_SIZE} tasks; --size {size} is too large")
    return range(size if size is not None else splits.DEV_SIZE)


def task(split: str, index: int, args: argparse.Namespace) -> RedactionTask:
    try:
        splits.check_index(split, index)
    except splits.SplitError as exc:
        raise UsageError(str(exc)) from None
    return load_task(split, index, shown=args.shown, hidden=args.hidden, difficulty=args.difficulty)


def tasks(args: argparse.Namespace) -> list[RedactionTask]:
    chosen = [args.index] if getattr(args, "index", None) is not None else indices(args.split, args.size)
    return [task(args.split, index, args) for index in chosen]


def banner(split: str, count: int, difficulty: str = DEFAULT_DIFFICULTY) -> str:
    level = "" if difficulty == DEFAULT_DIFFICULTY else f" ({difficulty})"
    return f"split {split}{level}, commitment {splits.commitment(split, difficulty)}, {count} task(s)"
