"""`eval`: the real vf-eval on a split against a built-in policy or an endpoint, then the run's report."""

from __future__ import annotations

import argparse
import contextlib
import sys
from dataclasses import dataclass
from pathlib import Path

from rich.console import Console
from rich.progress import Progress

from redaction_pressure import splits
from redaction_pressure.cli import common, serve

AUDIT_POLICIES = ("baseline",)
"""Built-in secrets-audit agents: the scripted baseline (`audit.agent`) answering as a tool-calling model."""


def add(commands) -> None:
    evaluate = commands.add_parser(
        "eval",
        help="run vf-eval on a split (built-in policy model or a real endpoint) and render its report",
        description="Run the real vf-eval on the split's tasks and write the run folder plus report.html. "
        "Without --base-url the model is a prompt-only policy served on 127.0.0.1 by this command "
        "(no key, no network); with --model/--base-url/--api-key-var it evaluates that endpoint.",
    )
    evaluate.add_argument("--taskset", choices=(common.TASKSET, common.AUDIT_TASKSET), default=common.TASKSET,
                          help=f"the taskset to run (default {common.TASKSET}; {common.AUDIT_TASKSET} is the multi-turn repository audit)")  # fmt: skip
    evaluate.add_argument("--policy", metavar="NAME",
                          help="built-in model: one of " + ", ".join(common.prompt_policy_names()) + " (default induction); "
                          f"for {common.AUDIT_TASKSET} one of " + ", ".join(AUDIT_POLICIES) + " (default baseline)")  # fmt: skip
    evaluate.add_argument("--model", help="model name sent to --base-url (default: the policy's name)")
    evaluate.add_argument("--base-url", help="an OpenAI-compatible endpoint, e.g. http://127.0.0.1:8000/v1")
    evaluate.add_argument("--api-key-var", help="environment variable holding the endpoint's key")
    evaluate.add_argument("--split", choices=splits.SPLITS, default="dev")
    common.difficulty(evaluate)
    evaluate.add_argument(
        "-n", "--num-tasks", type=int, help="tasks to run (default: all 64 of dev; required for train)"
    )
    evaluate.add_argument(
        "-c", "--max-concurrent", type=int, help="episodes in flight (vf-eval's -c; default vf-eval's)"
    )
    evaluate.add_argument(
        "-o", "--output", type=Path, default=Path("outputs"), help="folder of runs, as vf-eval's -o (default ./outputs)"
    )
    # Read as text and checked in `sampling`, so a bad value is one line, like every other usage error.
    evaluate.add_argument("-r", "--num-rollouts", "--rollouts-per-example", dest="rollouts", metavar="N",
                          help="rollouts per task (vf-eval's -r; default 1); the report groups them by task")  # fmt: skip
    evaluate.add_argument(
        "--temperature", metavar="T", help="sampling temperature sent to the model (vf-eval's --sampling.temperature)"
    )
    evaluate.add_argument(
        "--max-tokens", metavar="N", help="most tokens per model reply (vf-eval's --sampling.max-tokens)"
    )
    evaluate.add_argument("vf_args", nargs="*", metavar="-- VF_EVAL_ARG",
                          help="after --: further vf-eval arguments, passed as given (e.g. -- --sampling.top-p 0.9)")  # fmt: skip
    evaluate.set_defaults(run=run)


OWNED_FLAGS = {
    "-m": "--model", "--model": "--model", "--client.base-url": "--base-url", "--client.api-key-var": "--api-key-var",
    "-n": "-n", "--select.limit": "-n", "-r": "-r", "--num-rollouts": "-r", "--group-size": "-r",
    "--rollouts-per-example": "-r", "-c": "-c", "--max-concurrent": "-c", "-o": "-o", "--output-dir": "-o",
    "--sampling.temperature": "--temperature", "--sampling.max-tokens": "--max-tokens",
    "--env.taskset.split": "--split", "--env.taskset.difficulty": "--difficulty", "--env.taskset.id": "--taskset",
    "--run.name": "", "--run.dir": "", "--resume": "", "--dry-run": "", "--clean": "", "--push": "", "--no-push": "",
    "--rich": "", "--no-rich": "", "-h": "", "--help": "",
}  # fmt: skip
"""vf-eval options `eval` sets itself (-> the eval option that sets it, or "" when eval owns it outright).
Passed again after `--`, they would move the run folder eval reads or contradict its own options."""


@dataclass(frozen=True)
class Sampling:
    """How many times each task is played and how the model samples, as vf-eval arguments."""

    rollouts: int = 1
    temperature: float | None = None
    max_tokens: int | None = None
    extra: tuple[str, ...] = ()
    """Further vf-eval arguments from after `--`, as given."""

    def arguments(self) -> list[str]:
        """The vf-eval arguments for these choices (nothing for a default)."""
        made = ["-r", str(self.rollouts)] if self.rollouts != 1 else []
        if self.temperature is not None:
            made += ["--sampling.temperature", repr(self.temperature)]
        if self.max_tokens is not None:
            made += ["--sampling.max-tokens", str(self.max_tokens)]
        return made + list(self.extra)


def sampling(args: argparse.Namespace) -> Sampling:
    """The checked -r, --temperature, --max-tokens and `--` arguments; a bad one is a one-line UsageError."""
    return Sampling(
        rollouts=_number(args.rollouts, int, "-r/--num-rollouts", low=1) if args.rollouts is not None else 1,
        temperature=_number(args.temperature, float, "--temperature", low=0) if args.temperature is not None else None,
        max_tokens=_number(args.max_tokens, int, "--max-tokens", low=1) if args.max_tokens is not None else None,
        extra=passthrough(args.vf_args),
    )


def _number(text: str, kind: type, option: str, low: float):
    try:
        value = kind(text)
    except ValueError:
        value = None
    # NaN fails every comparison, and infinity is not a temperature either.
    if value is None or not low <= value < float("inf"):
        described = "a whole number" if kind is int else "a number"
        raise common.UsageError(f"{option} must be {described} of at least {low:g}; got {text!r}")
    return value


def passthrough(extra: list[str]) -> tuple[str, ...]:
    """vf-eval arguments given after `--`: they must start with an option, and not one eval sets itself."""
    if extra and not extra[0].startswith("-"):
        raise common.UsageError(f"unexpected argument {extra[0]!r}; give vf-eval's own options after --")
    for word in extra:
        flag = word.split("=", 1)[0]
        if flag in OWNED_FLAGS:
            instead = OWNED_FLAGS[flag]
            raise common.UsageError(f"{flag} after -- is set by eval itself; "
                                    + (f"use eval's {instead}" if instead else "it cannot be passed to vf-eval here"))  # fmt: skip
    return tuple(extra)


def audit_answer(name: str):
    """A tool-calling endpoint's answer function: the built-in secrets-audit agent `name`."""
    from redaction_pressure.audit import agent

    if name not in AUDIT_POLICIES:
        raise common.UsageError(
            f"unknown {common.AUDIT_TASKSET} policy {name!r}; choose one of {', '.join(AUDIT_POLICIES)}"
        )
    return agent.answer


def run(args: argparse.Namespace, out: Console, err: Console) -> int:
    import os

    from redaction_pressure.cli import evaluate
    from redaction_pressure.report import runs

    audit = args.taskset == common.AUDIT_TASKSET
    if args.policy is None:
        args.policy = "baseline" if audit else "induction"
    if audit and args.policy not in AUDIT_POLICIES and args.base_url is None:
        raise common.UsageError(
            f"unknown {common.AUDIT_TASKSET} policy {args.policy!r}; choose one of {', '.join(AUDIT_POLICIES)}"
        )
    if audit:
        common.audit_level(args.difficulty)
    if args.split == "train" and args.num_tasks is None:
        raise common.UsageError("train is unbounded: give -n/--num-tasks")
    size = split_size(args.split, args.taskset, args.difficulty)
    tasks = args.num_tasks if args.num_tasks is not None else split_size("dev", args.taskset, args.difficulty)
    if tasks < 1:
        raise common.UsageError("-n/--num-tasks must be at least 1")
    if size is not None and tasks > size:
        raise common.UsageError(f"{args.split} has {size} tasks; -n {tasks} is more than the split holds")
    if args.base_url is None and (args.model or args.api_key_var):
        raise common.UsageError("--model and --api-key-var name a real endpoint: give --base-url too")
    if args.base_url is not None and not (args.model and args.api_key_var):
        raise common.UsageError("--base-url needs --model and --api-key-var")
    sampled = sampling(args)
    if args.split == "private_eval":
        splits.commitment(args.split)  # fail now, by name, when the secret is missing
    # Evaluating needs no report libraries: without the extra, the run is scored and summarised
    # and the report is named as not written. (Imported once the usage is checked: a usage error
    # needs no matplotlib.)
    render, missing = common.optional_renderer()
    env = dict(os.environ)
    # verifiers syncs each episode's chat program environment with `uv sync --script`: compiled
    # once, every episode starts it from bytecode, also where nothing writes bytecode at import
    # time (docs/performance.md). A value the user set is kept.
    env.setdefault("UV_COMPILE_BYTECODE", "1")
    with model_endpoint(args, env) as endpoint:
        times = f" × {sampled.rollouts} rollouts" if sampled.rollouts > 1 else ""
        err.print(
            f"vf-eval {args.taskset}: {tasks} {args.split} task(s){times}, model {endpoint.model} at {endpoint.base_url}"
        )
        with Progress(console=err, transient=False) as bar:
            # "finished", not "scored": an errored episode ends too, and is not a score.
            job = bar.add_task("episodes finished", total=tasks * sampled.rollouts)
            try:
                run_dir = evaluate.run_eval(
                    endpoint, split=args.split, tasks=tasks, output=args.output,
                    concurrency=args.max_concurrent, progress=lambda done, _: bar.update(job, completed=done), env=env,
                    taskset=args.taskset, difficulty=args.difficulty, extra=sampled.arguments(),
                )  # fmt: skip
            except evaluate.Interrupted as stopped:
                bar.stop()
                return _interrupted(stopped.run_dir, tasks * sampled.rollouts, render, missing, runs, err)
            run = runs.load_run(run_dir / runs.TRACES_FILE)
            errored = sum(1 for episode in run.episodes if episode.errored)
            scored = len(run.episodes) - errored
            bar.update(job, description=f"episodes finished: {scored} scored, {errored} errored")
    print(f"run folder: {run_dir}")
    if render is None:
        print(f"report: not written ({missing})")
    else:
        print(f"report: {common.write_report(render, [run], run_dir / evaluate.REPORT_FILE, err)}")
    line, failed = eval_summary(run, args.split)
    print(line)
    if failed:
        print(f"{common.PROG}: error: {failed}", file=sys.stderr)
        return 1
    return 0


def _interrupted(run_dir, tasks: int, render, missing: str, runs, err: Console) -> int:
    """Ctrl-C: say so, name the partial run and report what it finished; exit 130."""
    from redaction_pressure.cli import evaluate

    done = evaluate.episodes_in(run_dir)
    print(f"{common.PROG}: interrupted after {done} of {tasks} episodes", file=sys.stderr)
    if run_dir is None or done == 0:
        print(f"{common.PROG}: nothing finished; no run folder was kept" if run_dir is None
              else f"{common.PROG}: partial run folder (no episode finished): {run_dir}", file=sys.stderr)  # fmt: skip
        return 130
    if render is None:
        print(f"{common.PROG}: partial run folder: {run_dir} (no report: {missing})", file=sys.stderr)
        return 130
    try:
        run = runs.load_run(run_dir / runs.TRACES_FILE)
        report = common.write_report(render, [run], run_dir / evaluate.REPORT_FILE, err)
    except Exception as exc:  # noqa: BLE001 - a half-written last line must not hide the folder
        print(f"{common.PROG}: partial run folder: {run_dir} (no report: {exc})", file=sys.stderr)
        return 130
    print(f"{common.PROG}: partial run folder: {run_dir}", file=sys.stderr)
    print(f"{common.PROG}: report of the finished episodes: {report}", file=sys.stderr)
    return 130


def eval_summary(run, split: str) -> tuple[str, str]:
    """The closing line of `eval`, and the error when episodes errored ("" when none did).

    Errored episodes (provider errors, timeouts, harness errors) are not scores: the mean
    is over the scored ones, and the errored ones are counted and named."""
    from redaction_pressure.report.tasks import group_tasks  # not stats: eval runs without numpy

    scored = [episode.reward for episode in run.episodes if not episode.errored]
    errored = [episode for episode in run.episodes if episode.errored]
    commitment = run.identity.get("split_commitment", "unknown")
    total = len(run.episodes)
    groups = group_tasks(run.episodes)
    tasks = [task.reward for task in groups if not task.errored]
    if scored and len(groups) == total:
        line = (f"{len(scored)} episode(s) scored, mean reward {sum(scored) / len(scored):.3f} on {split} "
                f"(commitment {commitment})")  # fmt: skip
    elif scored:
        # Several rollouts per task: the mean is over tasks, each by its rollouts' mean (as in the report).
        line = (f"{len(scored)} episode(s) scored ({len(groups)} task{'s' if len(groups) != 1 else ''}), mean reward over tasks "
                f"{sum(tasks) / len(tasks):.3f} on {split} (commitment {commitment})")  # fmt: skip
    else:
        line = f"no episode scored on {split} (commitment {commitment})"
    if not errored:
        return line, ""
    reasons: dict[str, int] = {}
    for episode in errored:
        reasons[episode.error] = reasons.get(episode.error, 0) + 1
    named = "; ".join(reason + (f" (× {count})" if count > 1 else "") for reason, count in reasons.items())
    return line, f"{len(errored)} of {total} episodes errored: {named}"


def split_size(split: str, taskset: str = common.TASKSET, difficulty: str = common.DEFAULT_DIFFICULTY) -> int | None:
    """How many tasks the split holds at `difficulty` (None: as many as anyone asks for)."""
    if split == "dev":
        if taskset == common.AUDIT_TASKSET:
            from redaction_pressure.audit import splits as audit_splits

            return audit_splits.dev_size(common.audit_level(difficulty))
        return splits.DEV_SIZE
    if taskset == common.AUDIT_TASKSET:
        return None  # the audit taskset's loader checks its own train and private_eval bounds
    limit = {"train": splits.TRAIN_MAX_INDEX, "private_eval": splits.PRIVATE_MAX_INDEX}.get(split)
    return limit


@contextlib.contextmanager
def model_endpoint(args: argparse.Namespace, env: dict[str, str]):
    """The endpoint to evaluate: the given one, or a policy served here for the run's length."""
    from redaction_pressure.cli.evaluate import LOCAL_KEY_VAR, Endpoint

    if args.base_url is not None:
        yield Endpoint(model=args.model, base_url=args.base_url, api_key_var=args.api_key_var)
        return
    from redaction_pressure.cli.endpoint import ChatServer

    answer = audit_answer(args.policy) if args.taskset == common.AUDIT_TASKSET else serve.policy_answer(args.policy)
    with ChatServer(answer, port=0, model=args.policy) as server:
        env[LOCAL_KEY_VAR] = "local-endpoint-needs-no-key"
        yield Endpoint(model=args.policy, base_url=server.url, api_key_var=LOCAL_KEY_VAR)
