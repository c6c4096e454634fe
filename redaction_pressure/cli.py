"""The command-line tool: evaluate, report, show a task, score a reply, run the ladder, serve.

    redaction-pressure eval [--policy NAME | --model M --base-url URL --api-key-var VAR]
    redaction-pressure report RUN_DIR [RUN_DIR ...] -o FILE.html
    redaction-pressure show SPLIT INDEX
    redaction-pressure score FILE --split dev [--index N] [--json]
    redaction-pressure baselines --split dev [--difficulty LEVEL] [--policy NAME ...] [--json]
    redaction-pressure export SPLIT --out PATH
    redaction-pressure serve --policy NAME [--port N]
    redaction-pressure serve-env [--port N] [--workers N | --elastic --max-workers N]

Results go to stdout, progress and errors to stderr. Exit codes: 0 done; 1 the command
could not complete (a missing file, the private secret unset, an existing output
folder); 2 the command line is wrong (unknown option, index outside the split, train
without --size, exporting private_eval). Every report names the split and its
commitment, so dev figures are never mistaken for private ones. This module does not
import verifiers (`eval` runs vf-eval as a subprocess; `serve-env` imports it on demand).
"""

from __future__ import annotations

import argparse
import contextlib
import json
import sys
from collections.abc import Sequence
from dataclasses import asdict
from pathlib import Path

from rich.console import Console
from rich.progress import Progress
from rich.table import Table
from rich.text import Text

from redaction_pressure import splits
from redaction_pressure.api import DEFAULT_HIDDEN, DEFAULT_SHOWN, RedactionTask, load_task, score_reply
from redaction_pressure.corpus import DEFAULT_DIFFICULTY, DIFFICULTIES
from redaction_pressure.spans import Record

PROG = "redaction-pressure"
TASKSET = "redaction-pressure"
AUDIT_TASKSET = "secrets-audit"
AUDIT_POLICIES = ("baseline",)
"""Built-in secrets-audit agents: the scripted baseline (`audit.agent`) answering as a tool-calling model."""


class UsageError(Exception):
    """The command line asks for something that does not exist or is not allowed."""


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
        pool = sys.modules.get("redaction_pressure.pool")
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
    parser.add_argument("--version", action="version", version=f"{PROG} {_version()}")
    commands = parser.add_subparsers(dest="command", required=True, metavar="COMMAND")

    show = commands.add_parser("show", help="print a task's prompt and, for public splits, its hidden records")
    show.add_argument("split", choices=splits.SPLITS)
    show.add_argument("index", type=int)
    _sizes(show)
    show.add_argument("--json", action="store_true", help="print the task as JSON")
    show.set_defaults(run=_show)

    score = commands.add_parser("score", help="score a reply (or rules file) against one task or a whole split")
    score.add_argument("file", help="the reply exactly as a model would send it; '-' reads standard input")
    score.add_argument("--split", choices=splits.SPLITS, required=True)
    score.add_argument("--index", type=int, help="one task (default: every task of the split)")
    score.add_argument("--size", type=int, help="tasks of the split to score (required for train)")
    _sizes(score)
    score.add_argument("--json", action="store_true", help="print results as JSON")
    score.set_defaults(run=_score)

    ladder = commands.add_parser("baselines", help="score the ladder of non-LLM policies over a split")
    ladder.add_argument("--split", choices=splits.SPLITS, default="dev")
    ladder.add_argument("--size", type=int, help="tasks of the split (required for train)")
    ladder.add_argument("--policy", action="append", help="run only this policy (repeatable)")
    _sizes(ladder)
    ladder.add_argument("--json", action="store_true", help="print the ladder as JSON")
    ladder.set_defaults(run=_baselines)

    export = commands.add_parser("export", help="save a public split as a Hugging Face dataset and JSONL")
    export.add_argument("split", choices=splits.SPLITS)
    export.add_argument("--out", type=Path, required=True, help="a new folder to write")
    export.add_argument("--size", type=int, help="tasks of the split (required for train)")
    _sizes(export)
    export.set_defaults(run=_export)

    policy = commands.add_parser(
        "serve",
        help="serve a non-LLM policy as an OpenAI-compatible model endpoint on 127.0.0.1",
        description="Answer every chat-completions request (streaming or not) with the rules a "
        "prompt-only policy writes for the request's last user message; GET /v1/models lists it. "
        "Prints 'serving POLICY at URL' once listening; SIGTERM or Ctrl-C stop it.",
    )
    policy.add_argument("--policy", required=True, metavar="NAME", help="one of: " + ", ".join(_prompt_policy_names()))
    policy.add_argument("--port", type=_port, default=8000, help="TCP port on 127.0.0.1 (0 picks a free one; default 8000)")
    policy.set_defaults(run=_serve_policy)

    served = commands.add_parser(
        "serve-env",
        help="serve the taskset for a trainer: verifiers' env server on 127.0.0.1, ready when it says so",
        description="Serve the taskset with verifiers' env server (a static or elastic pool of worker "
        "processes) on tcp://127.0.0.1:PORT. Prints 'ready ADDRESS workers=N' once every pre-spawned "
        "worker has scored a warm-up episode; SIGTERM or Ctrl-C shut it down cleanly.",
    )
    served.add_argument("--port", type=_port, default=5000, help="TCP port on 127.0.0.1 (0 picks a free one; default 5000)")
    served.add_argument("--workers", type=int, default=2, help="env-server worker processes of a static pool (default 2)")
    served.add_argument("--elastic", action="store_true", help="start one worker and add more under load")
    served.add_argument("--max-workers", type=int, help="upper bound of an elastic pool (default: none)")
    served.add_argument("--scan-workers", type=int, help="scan worker processes per env-server worker (default: the CPUs it may use)")
    served.add_argument("--ready-timeout", type=float, default=300.0, help="seconds to wait for the workers (default 300)")
    served.set_defaults(run=_serve_env)

    evaluate = commands.add_parser(
        "eval",
        help="run vf-eval on a split (built-in policy model or a real endpoint) and render its report",
        description="Run the real vf-eval on the split's tasks and write the run folder plus report.html. "
        "Without --base-url the model is a prompt-only policy served on 127.0.0.1 by this command "
        "(no key, no network); with --model/--base-url/--api-key-var it evaluates that endpoint.",
    )
    evaluate.add_argument("--taskset", choices=(TASKSET, AUDIT_TASKSET), default=TASKSET,
                          help=f"the taskset to run (default {TASKSET}; {AUDIT_TASKSET} is the multi-turn repository audit)")  # fmt: skip
    evaluate.add_argument("--policy", metavar="NAME",
                          help="built-in model: one of " + ", ".join(_prompt_policy_names()) + " (default induction); "
                          f"for {AUDIT_TASKSET} one of " + ", ".join(AUDIT_POLICIES) + " (default baseline)")  # fmt: skip
    evaluate.add_argument("--model", help="model name sent to --base-url (default: the policy's name)")
    evaluate.add_argument("--base-url", help="an OpenAI-compatible endpoint, e.g. http://127.0.0.1:8000/v1")
    evaluate.add_argument("--api-key-var", help="environment variable holding the endpoint's key")
    evaluate.add_argument("--split", choices=splits.SPLITS, default="dev")
    _difficulty(evaluate)
    evaluate.add_argument("-n", "--num-tasks", type=int, help="tasks to run (default: all 64 of dev; required for train)")
    evaluate.add_argument("-c", "--max-concurrent", type=int, help="episodes in flight (vf-eval's -c; default vf-eval's)")
    evaluate.add_argument("-o", "--output", type=Path, default=Path("outputs"), help="folder of runs, as vf-eval's -o (default ./outputs)")
    evaluate.set_defaults(run=_eval)

    report = commands.add_parser(
        "report",
        help="render vf-eval or vf-replay runs as one self-contained HTML page",
        description="Read each RUN_DIR's traces.jsonl and write one HTML file: summary with bootstrap "
        "intervals, charts, and every public task's rules and hidden records marked with what was "
        "removed. Two or more runs are compared task by task against the first.",
    )
    report.add_argument("runs", nargs="+", type=Path, metavar="RUN_DIR", help="a vf-eval or vf-replay output folder")
    report.add_argument("-o", "--output", type=Path, required=True, metavar="FILE.html", help="the HTML file to write")
    report.set_defaults(run=_report)
    return parser


def _version() -> str:
    """The installed distribution's version (the core distribution, or the environment wheel)."""
    from importlib.metadata import PackageNotFoundError, version

    for name in ("redaction-pressure-core", "redaction-pressure"):
        try:
            return version(name)
        except PackageNotFoundError:
            continue
    return "unknown"


def check_port_free(port: int) -> None:
    """Fail with one line naming the port when something already listens on 127.0.0.1:port."""
    import errno
    import socket

    if port == 0:
        return
    probe = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
    probe.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
    try:
        probe.bind(("127.0.0.1", port))
    except OSError as exc:
        if exc.errno == errno.EADDRINUSE:
            raise OSError(f"port {port} on 127.0.0.1 is already in use; choose another with --port (0 picks a free one)") from None
        raise OSError(f"cannot listen on 127.0.0.1:{port}: {exc.strerror or exc}") from None
    finally:
        probe.close()


def _port(text: str) -> int:
    """A TCP port on 127.0.0.1: 0 (any free one) to 65535."""
    port = int(text)
    if not 0 <= port <= 65535:
        raise argparse.ArgumentTypeError(f"must be between 0 and 65535 (got {port})")
    return port


def _prompt_policy_names() -> list[str]:
    from redaction_pressure.policies.prompted import PROMPT_POLICIES

    return list(PROMPT_POLICIES)


def _policy_answer(name: str):
    """A chat endpoint's answer function: the rules prompt-only policy `name` writes."""
    from redaction_pressure.endpoint import last_user_text
    from redaction_pressure.policies import reply
    from redaction_pressure.policies.prompted import PROMPT_POLICIES

    if name not in PROMPT_POLICIES:
        raise UsageError(f"unknown policy {name!r}; choose one of {', '.join(PROMPT_POLICIES)}")
    rules_for = PROMPT_POLICIES[name]
    try:
        rules_for("")  # fail now, not per request, if the policy cannot run here (the scanner extra)
    except RuntimeError as exc:
        raise ValueError(str(exc)) from None
    return lambda body: reply(rules_for(last_user_text(body)))


def _audit_answer(name: str):
    """A tool-calling endpoint's answer function: the built-in secrets-audit agent `name`."""
    from redaction_pressure.audit import agent

    if name not in AUDIT_POLICIES:
        raise UsageError(f"unknown {AUDIT_TASKSET} policy {name!r}; choose one of {', '.join(AUDIT_POLICIES)}")
    return agent.answer


def _serve_policy(args: argparse.Namespace, out: Console, err: Console) -> int:
    import signal
    import threading

    from redaction_pressure.endpoint import ChatServer

    answer = _policy_answer(args.policy)
    check_port_free(args.port)
    stop = threading.Event()
    for signum in (signal.SIGTERM, signal.SIGINT):
        signal.signal(signum, lambda *_: stop.set())
    with ChatServer(answer, port=args.port, model=args.policy) as server:
        print(f"serving {args.policy} at {server.url}", flush=True)
        while not stop.wait(0.5):
            pass
    return 0


def _serve_env(args: argparse.Namespace, out: Console, err: Console) -> int:
    if args.workers < 1 or (args.max_workers is not None and args.max_workers < 1):
        raise UsageError("--workers and --max-workers must be at least 1")
    if args.scan_workers is not None and args.scan_workers < 1:
        raise UsageError("--scan-workers must be at least 1")
    check_port_free(args.port)
    from redaction_pressure import serving  # imports verifiers (about 5 s)

    taskset = {"task": {"scan_workers": args.scan_workers}} if args.scan_workers else {}
    return serving.serve(
        port=args.port, workers=args.workers, elastic=args.elastic, max_workers=args.max_workers,
        taskset=taskset, ready_timeout=args.ready_timeout,
    )  # fmt: skip


def _report_modules():
    try:
        from redaction_pressure.report import render, runs
    except ImportError as exc:
        raise UsageError(
            f"the report needs the 'report' extra ({exc.name} is missing): "
            "pip install 'redaction-pressure[report]' or uv sync --extra report"
        ) from None
    return render, runs


def _report(args: argparse.Namespace, out: Console, err: Console) -> int:
    render, runs = _report_modules()
    if args.output.is_dir():
        raise UsageError(f"{args.output} is a folder; give the HTML file to write")
    try:
        found = runs.find_runs(args.runs)
    except runs.ReportError as exc:
        raise UsageError(str(exc)) from None
    _write_report(render, found, args.output, err)
    total = sum(len(run.episodes) for run in found)
    print(f"report of {len(found)} run(s), {total} episode(s): {args.output}")
    return 0


def _eval(args: argparse.Namespace, out: Console, err: Console) -> int:
    import os

    from redaction_pressure import evaluate

    render, runs = _report_modules()
    audit = args.taskset == AUDIT_TASKSET
    if args.policy is None:
        args.policy = "baseline" if audit else "induction"
    if audit and args.policy not in AUDIT_POLICIES and args.base_url is None:
        raise UsageError(f"unknown {AUDIT_TASKSET} policy {args.policy!r}; choose one of {', '.join(AUDIT_POLICIES)}")
    if audit and args.difficulty != DEFAULT_DIFFICULTY:
        raise UsageError(f"--difficulty is a {TASKSET} option; {AUDIT_TASKSET} has one level")
    if args.split == "train" and args.num_tasks is None:
        raise UsageError("train is unbounded: give -n/--num-tasks")
    size = _split_size(args.split, args.taskset)
    tasks = args.num_tasks if args.num_tasks is not None else _split_size("dev", args.taskset)
    if tasks < 1:
        raise UsageError("-n/--num-tasks must be at least 1")
    if size is not None and tasks > size:
        raise UsageError(f"{args.split} has {size} tasks; -n {tasks} is more than the split holds")
    if args.base_url is None and (args.model or args.api_key_var):
        raise UsageError("--model and --api-key-var name a real endpoint: give --base-url too")
    if args.base_url is not None and not (args.model and args.api_key_var):
        raise UsageError("--base-url needs --model and --api-key-var")
    if args.split == "private_eval":
        splits.commitment(args.split)  # fail now, by name, when the secret is missing
    env = dict(os.environ)
    with _model_endpoint(args, env) as endpoint:
        err.print(f"vf-eval {args.taskset}: {tasks} {args.split} task(s), model {endpoint.model} at {endpoint.base_url}")
        with Progress(console=err, transient=False) as bar:
            job = bar.add_task("episodes scored", total=tasks)
            run_dir = evaluate.run_eval(
                endpoint, split=args.split, tasks=tasks, output=args.output,
                concurrency=args.max_concurrent, progress=lambda done, _: bar.update(job, completed=done), env=env,
                taskset=args.taskset, difficulty=args.difficulty,
            )  # fmt: skip
    run = runs.load_run(run_dir / runs.TRACES_FILE)
    report = _write_report(render, [run], run_dir / evaluate.REPORT_FILE, err)
    print(f"run folder: {run_dir}")
    print(f"report: {report}")
    line, failed = eval_summary(run, args.split)
    print(line)
    if failed:
        print(f"{PROG}: error: {failed}", file=sys.stderr)
        return 1
    return 0


def eval_summary(run, split: str) -> tuple[str, str]:
    """The closing line of `eval`, and the error when episodes errored ("" when none did).

    Errored episodes (provider errors, timeouts, harness errors) are not scores: the mean
    is over the scored ones, and the errored ones are counted and named."""
    scored = [episode.reward for episode in run.episodes if not episode.errored]
    errored = [episode for episode in run.episodes if episode.errored]
    commitment = run.identity.get("split_commitment", "unknown")
    total = len(run.episodes)
    if scored:
        line = (f"{len(scored)} episode(s) scored, mean reward {sum(scored) / len(scored):.3f} on {split} "
                f"(commitment {commitment})")  # fmt: skip
    else:
        line = f"no episode scored on {split} (commitment {commitment})"
    if not errored:
        return line, ""
    reasons: dict[str, int] = {}
    for episode in errored:
        reasons[episode.error] = reasons.get(episode.error, 0) + 1
    named = "; ".join(reason + (f" (× {count})" if count > 1 else "") for reason, count in reasons.items())
    return line, f"{len(errored)} of {total} episodes errored: {named}"


def _split_size(split: str, taskset: str = TASKSET) -> int | None:
    """How many tasks the split holds (None: as many as anyone asks for)."""
    if split == "dev":
        if taskset == AUDIT_TASKSET:
            from redaction_pressure.audit import splits as audit_splits

            return audit_splits.DEV_SIZE
        return splits.DEV_SIZE
    if taskset == AUDIT_TASKSET:
        return None  # the audit taskset's loader checks its own train and private_eval bounds
    limit = {"train": splits.TRAIN_MAX_INDEX, "private_eval": splits.PRIVATE_MAX_INDEX}.get(split)
    return limit


def _write_report(render, found: list, output: Path, err: Console) -> Path:
    """Render the report with a progress bar over the episodes it marks."""
    total = sum(len(run.episodes) for run in found)
    with Progress(console=err, transient=True, disable=not err.is_terminal) as bar:
        job = bar.add_task("marking episodes for the report", total=total)
        return render.write(found, output, progress=lambda: bar.advance(job))


@contextlib.contextmanager
def _model_endpoint(args: argparse.Namespace, env: dict[str, str]):
    """The endpoint to evaluate: the given one, or a policy served here for the run's length."""
    from redaction_pressure.evaluate import LOCAL_KEY_VAR, Endpoint

    if args.base_url is not None:
        yield Endpoint(model=args.model, base_url=args.base_url, api_key_var=args.api_key_var)
        return
    from redaction_pressure.endpoint import ChatServer

    answer = _audit_answer(args.policy) if args.taskset == AUDIT_TASKSET else _policy_answer(args.policy)
    with ChatServer(answer, port=0, model=args.policy) as server:
        env[LOCAL_KEY_VAR] = "local-endpoint-needs-no-key"
        yield Endpoint(model=args.policy, base_url=server.url, api_key_var=LOCAL_KEY_VAR)


def _sizes(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("--shown", type=int, default=DEFAULT_SHOWN, help=f"records shown in the prompt (default {DEFAULT_SHOWN})")
    parser.add_argument("--hidden", type=int, default=DEFAULT_HIDDEN, help=f"unseen records scored (default {DEFAULT_HIDDEN})")
    _difficulty(parser)


def _difficulty(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("--difficulty", choices=DIFFICULTIES, default=DEFAULT_DIFFICULTY, metavar="LEVEL",
                        help=f"corpus level: {', '.join(DIFFICULTIES)} (default {DEFAULT_DIFFICULTY})")  # fmt: skip


def _indices(split: str, size: int | None) -> range:
    if size is not None and size < 1:
        raise UsageError(f"--size must be positive, got {size}")
    if split == "train" and size is None:
        raise UsageError("train is unbounded: pass --size N")
    if split == "dev" and size is not None and size > splits.DEV_SIZE:
        raise UsageError(f"dev has {splits.DEV_SIZE} tasks; --size {size} is too large")
    return range(size if size is not None else splits.DEV_SIZE)


def _task(split: str, index: int, args: argparse.Namespace) -> RedactionTask:
    try:
        splits.check_index(split, index)
    except splits.SplitError as exc:
        raise UsageError(str(exc)) from None
    return load_task(split, index, shown=args.shown, hidden=args.hidden, difficulty=args.difficulty)


def _tasks(args: argparse.Namespace) -> list[RedactionTask]:
    indices = [args.index] if getattr(args, "index", None) is not None else _indices(args.split, args.size)
    return [_task(args.split, index, args) for index in indices]


def _banner(split: str, count: int, difficulty: str = DEFAULT_DIFFICULTY) -> str:
    level = "" if difficulty == DEFAULT_DIFFICULTY else f" ({difficulty})"
    return f"split {split}{level}, commitment {splits.commitment(split, difficulty)}, {count} task(s)"


# -- show -------------------------------------------------------------------------------


def _show(args: argparse.Namespace, out: Console, err: Console) -> int:
    task = _task(args.split, args.index, args)
    public = task.split != "private_eval"
    if args.json:
        print(json.dumps(task.model_dump(exclude=None if public else {"hidden"}), indent=2))
        return 0
    out.rule(f"{task.split} task {task.index}")
    out.print(_banner(task.split, 1, task.difficulty), markup=False)
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
        out.print(_marked(record))
    return 0


def _marked(record: Record) -> Text:
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


# -- score ------------------------------------------------------------------------------


def _score(args: argparse.Namespace, out: Console, err: Console) -> int:
    reply = _read_reply(args.file)
    indices = [args.index] if args.index is not None else _indices(args.split, args.size)
    results = []
    with Progress(console=err, transient=True, disable=len(indices) < 2 or not err.is_terminal) as bar:
        job = bar.add_task("scoring tasks", total=len(indices))
        for index in indices:
            task = _task(args.split, index, args)
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
    out.print(_banner(args.split, len(tasks), args.difficulty), markup=False)
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


def _read_reply(name: str) -> str:
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


# -- baselines --------------------------------------------------------------------------


def _baselines(args: argparse.Namespace, out: Console, err: Console) -> int:
    from redaction_pressure.baselines import LADDER, POLICIES, run_ladder

    unknown = sorted(set(args.policy or []) - set(POLICIES))
    if unknown:
        raise UsageError(f"unknown policy {', '.join(unknown)}; choose from {', '.join(POLICIES)}")
    ladder = [POLICIES[name] for name in args.policy] if args.policy else list(LADDER)
    tasks = _tasks(args)
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
    out.print(f"baseline ladder, {_banner(args.split, len(tasks), args.difficulty)}", markup=False)
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


# -- export -----------------------------------------------------------------------------


def _export(args: argparse.Namespace, out: Console, err: Console) -> int:
    if args.split == "private_eval":
        raise UsageError("private_eval cannot be exported: its tasks stay with the evaluator")
    if args.out.exists() and any(args.out.iterdir()):
        raise OSError(f"{args.out} exists and is not empty; choose a new folder")
    indices = _indices(args.split, args.size)
    rows = []
    with Progress(console=err, transient=True, disable=not err.is_terminal) as bar:
        job = bar.add_task(f"building {args.split} tasks", total=len(indices))
        for index in indices:
            rows.append(_row(_task(args.split, index, args)))
            bar.advance(job)
    err.print(f"saving {len(rows)} tasks to {args.out}")
    import datasets  # slow to import: only here

    datasets.disable_progress_bars()
    datasets.Dataset.from_list(rows).save_to_disk(str(args.out))
    jsonl = args.out / f"{args.split}.jsonl"
    with jsonl.open("w", encoding="utf-8") as handle:
        for row in rows:
            handle.write(json.dumps(row) + "\n")
    err.print(f"wrote {len(rows)} {args.split} tasks to {args.out} (Hugging Face dataset) and {jsonl}")
    return 0


def _row(task: RedactionTask) -> dict:
    return {
        "id": f"{task.split}-{task.index:05d}" if task.difficulty == DEFAULT_DIFFICULTY else f"{task.split}-{task.difficulty}-{task.index:05d}",
        "split": task.split,
        "index": task.index,
        "seed": splits.seed_for(task.split, task.index),
        "difficulty": task.difficulty,
        "system_prompt": task.prompt.system,
        "user_prompt": task.prompt.user,
        "shown": [record.model_dump() for record in task.shown],
        "hidden": [record.model_dump() for record in task.hidden],
        **{key: task.identity[key] for key in ("corpus_version", "reward_schema_version", "split_commitment")},
    }
