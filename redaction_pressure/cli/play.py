"""`play --taskset secrets-audit SPLIT INDEX`: work an audit task in the terminal as the agent would.

A person stands in for the model, so what they get is what the agent gets and nothing more:

- the repository is written into a fresh temporary workspace by the programs the taskset's
  `setup` runs (`audit.local.LocalWorkspace`), in the environment the subprocess runtime gives
  the agent (host variables less `*API_KEY*` names, the private secret masked, the agent's own
  toolchain first on PATH: python, pytest and git-filter-repo without this package,
  `audit.host_toolchain`);
- each line typed is one tool call, one step of the budget. A plain line is the bash harness's
  `bash` tool (verifiers' own `run_bash`: `bash -c` in the workspace, stdout then stderr, its
  timeout) and its output is cut by the harness's `truncate_tool_output`; `:name args` calls
  `edit` (verifiers' `run_edit`) or an audit tool (`toolcalls.AuditTools`, the host-side
  implementation the taskset's interceptor calls, on this workspace); paths are relative to the
  workspace, as the prompt says (`repo/config/.env`);
- findings an audit call reveals are appended to its result as in the taskset, and the status
  line after each step holds only what the conversation already told the agent (steps, budget,
  findings announced, how many are not yet visible);
- `submit`, `exit`, end of input or the spent step budget end the episode: `grading.grade` and
  the rubric score the workspace as `finalize` and the reward would, the score is printed with
  its parts and the grader's reasons, and the workspace is removed. Ctrl-C removes it unscored.

Only the public splits: a private_eval task would run its agent on the evaluator's host, which
the taskset refuses without an explicit opt-in that `vf-eval` records on the trace.
"""

from __future__ import annotations

import argparse
import asyncio
import contextlib
import inspect
import os
import shlex
import shutil
import sys
import tempfile
from collections.abc import Iterator

from rich.console import Console
from rich.text import Text

from redaction_pressure import splits
from redaction_pressure.cli import common
from redaction_pressure.cli.common import UsageError
from redaction_pressure.cli.graded import reasons, score_lines

ENDINGS = ("submit", "exit")
PROMPT = "audit> "


def add(commands) -> None:
    play = commands.add_parser(
        "play", help="work a secrets-audit task in the terminal as the agent would, then grade it",
        description="Write the task's repository into a temporary workspace, print the prompts, then read one tool call a "
                    "line: a shell command (the agent's bash tool) or :TOOL ARGS (edit and the audit tools; the session "
                    "prints the list). submit, exit, end of input or the spent step budget grade the repository as the "
                    "episode would; Ctrl-C ends without grading (exit 130). The workspace is removed either way.",
    )  # fmt: skip
    play.add_argument("--taskset", choices=(common.TASKSET, common.AUDIT_TASKSET), default=common.TASKSET,
                      help=f"which taskset's task; play supports only {common.AUDIT_TASKSET} for now, so pass it")  # fmt: skip
    play.add_argument(
        "split", choices=splits.SPLITS, help="train or dev (a private_eval task never runs its agent on this host)"
    )
    play.add_argument("index", type=int)
    common.difficulty(play)
    play.add_argument("--history", choices=("all", "seed"), default="all",
                      help="where git history counts: every secret (all, the default) or the seed's scenarios only")  # fmt: skip
    play.set_defaults(run=run)


def run(args: argparse.Namespace, out: Console, err: Console) -> int:
    plan = _plan(args)
    _audit_extra()
    try:
        with _agent_environment(), _workspace(plan) as workspace, _inside(str(workspace.root)):
            session = Session(plan, workspace)
            _introduce(session, out)
            ending = _loop(session, out)
            out.print(Text(f"\n{ending}: grading the repository as the episode's finalize would", style="bold"))
            _report(session, out)
        out.print(Text(f"workspace {workspace.root} removed"))
    except KeyboardInterrupt:
        print(f"{common.PROG}: interrupted: not graded; the workspace was removed", file=sys.stderr)
        return 130
    return 0


def _plan(args: argparse.Namespace):
    """The task's plan, or a usage error naming what is wrong (before anything heavy is imported)."""
    if args.taskset != common.AUDIT_TASKSET:
        raise UsageError(
            f"play supports only --taskset {common.AUDIT_TASKSET} for now ({args.taskset} is one reply: see show and score)"
        )
    from redaction_pressure.audit import splits as audit_splits

    if args.split == "private_eval":
        raise UsageError(
            "play works train and dev tasks: a private_eval task would run its agent on the evaluator's host"
        )
    level = common.audit_level(getattr(args, "difficulty", common.DEFAULT_DIFFICULTY))
    try:
        audit_splits.check_index(args.split, args.index, level)
    except splits.SplitError as exc:
        raise UsageError(str(exc)) from None
    return audit_splits.plan_for(args.split, args.index, getattr(args, "history", "all"), level)


def _audit_extra() -> None:
    """Import the grader now: without the `audit` extra this is the one line that names it."""
    import importlib

    try:
        importlib.import_module("redaction_pressure.audit.local")  # grading, repodata and dulwich with it
    except ImportError as exc:
        raise UsageError(str(exc)) from None


# -- the agent's surroundings ---------------------------------------------------------------------


@contextlib.contextmanager
def _agent_environment() -> Iterator[None]:
    """This process's environment, for the session, as the subprocess runtime hands it to the agent
    and to the grader's programs; restored afterwards (main() may be called in-process)."""
    from redaction_pressure.audit import host_toolchain

    saved = dict(os.environ)
    # verifiers' subprocess runtime drops every inherited name holding API_KEY.
    env = {k: v for k, v in os.environ.items() if "API_KEY" not in k.upper()}
    try:
        env.update(host_toolchain.agent_env(env))
    except host_toolchain.ToolchainError as exc:
        raise UsageError(str(exc)) from None
    # NOTE: as SecretsAuditTask.runtime_env: the private secret is masked for every program started.
    env[splits.PRIVATE_ENV] = ""
    os.environ.clear()
    os.environ.update(env)
    try:
        yield
    finally:
        os.environ.clear()
        os.environ.update(saved)


@contextlib.contextmanager
def _workspace(plan):
    """A LocalWorkspace inside a folder of our own, so that nothing is left behind even when
    materialising is interrupted before the workspace could be closed."""
    from redaction_pressure.audit.local import LocalWorkspace

    parent = tempfile.mkdtemp(prefix="redaction-pressure-play-")
    saved, tempfile.tempdir = tempfile.tempdir, parent
    try:
        try:
            workspace = LocalWorkspace(plan)
        finally:
            tempfile.tempdir = saved
        with workspace:
            yield workspace
    finally:
        shutil.rmtree(parent, ignore_errors=True)


@contextlib.contextmanager
def _inside(folder: str) -> Iterator[None]:
    """The agent's tools work relative to the runtime's folder (`repo/` in it), as does run_bash."""
    before = os.getcwd()
    os.chdir(folder)
    try:
        yield
    finally:
        os.chdir(before)


@contextlib.contextmanager
def _no_input() -> Iterator[None]:
    """A tool call reads no input: the session's own lines must not be swallowed by a command."""
    saved = os.dup(0)
    null = os.open(os.devnull, os.O_RDONLY)
    os.dup2(null, 0)
    os.close(null)
    try:
        yield
    finally:
        os.dup2(saved, 0)
        os.close(saved)


# -- one episode ------------------------------------------------------------------------------------


class Session:
    """One episode on a local workspace: the tools' state, the calls so far, what the agent was shown."""

    def __init__(self, plan, workspace) -> None:
        self.plan = plan
        self.workspace = workspace
        self.tools = workspace.tools()
        self.calls: list = []

    @property
    def steps(self) -> int:
        return len(self.calls)

    @property
    def spent(self) -> bool:
        return self.steps >= self.plan.budget

    def signatures(self) -> dict:
        """The tools a `:name` line may call, by name: edit, then the audit tools."""
        from verifiers.v1.harnesses.utils.core import run_edit

        from redaction_pressure.audit.tiers import AUDIT_TOOLS

        return {"edit": run_edit, **{name: getattr(self.tools, name) for name in AUDIT_TOOLS}}

    def call(self, name: str, args: dict) -> str:
        """Run one tool call; return its result as the agent reads it (cut, with any reveals)."""
        from verifiers.v1.harnesses.utils.compaction import truncate_tool_output

        from redaction_pressure.audit.tiers import Call
        from redaction_pressure.audit.toolcalls import clip

        self.calls.append(Call(name, args))
        with _no_input():
            result = self._run(name, args)
        if name in ("bash", "edit"):
            # The level's stated cap, as the taskset's interceptor applies it (the audit tools cut their own).
            result = clip(result, self.plan.output_cap) if self.plan.output_cap else result
        return truncate_tool_output(result)

    def _run(self, name: str, args: dict) -> str:
        from verifiers.v1.harnesses.utils.core import run_bash, run_edit

        if name == "bash":
            return run_bash(args["command"])
        if name == "edit":
            return run_edit(**args)
        # The audit tools' own result, with the findings the call revealed, as the taskset's interceptor gives it.
        return asyncio.run(self.tools.call(name, args, self.steps))

    def status(self) -> str:
        """What the conversation has told the agent so far, in one line (the `status` tool tells more, for a step)."""
        from redaction_pressure.audit.rubric import efficiency

        steps, budget, shown = self.steps, self.plan.budget, self.tools.announced
        return (f"status: step {steps} of {budget} ({budget - steps} left, efficiency bonus now {efficiency(steps, budget):.3f}); "
                f"findings shown {len(shown)} ({', '.join(shown) or 'none'}), not yet visible {len(self.plan.findings) - len(shown)}")  # fmt: skip

    def grade(self) -> tuple[dict, object]:
        """(facts, score) as `finalize` records them and the reward reads them."""
        from redaction_pressure.audit.rubric import score

        facts = self.workspace.facts(self.steps, self.tools.announced)
        facts["revealed"] = sorted(set(facts["revealed"]) & {f.id for f in self.plan.findings})
        return facts, score(self.plan, facts)


def parse(line: str, signatures: dict) -> tuple[str, dict]:
    """A typed line as one tool call: `:name ARGS` (shell-quoted) calls a tool, anything else is bash.

    Raises ValueError, naming the usage, for a `:` line that is no valid call (it costs no step)."""
    if not line.startswith(":"):
        return "bash", {"command": line}
    try:
        name, *words = shlex.split(line[1:]) or [""]
    except ValueError as exc:
        raise ValueError(f"cannot split {line!r}: {exc}") from None
    if name not in signatures:
        raise ValueError(f"no tool {name!r}; the tools are {', '.join(':' + n for n in signatures)} (help lists them)")
    return name, _bind(name, signatures[name], words)


def _bind(name: str, fn, words: list[str]) -> dict:
    params = list(inspect.signature(fn, eval_str=True).parameters.values())
    required = sum(p.default is inspect.Parameter.empty for p in params)
    if not required <= len(words) <= len(params):
        raise ValueError(f"usage: {usage(name, fn)}")
    args = {}
    for param, word in zip(params, words):
        try:
            args[param.name] = param.annotation(word) if param.annotation in (int, float) else word
        except ValueError:
            raise ValueError(f"usage: {usage(name, fn)} ({param.name.upper()} must be a number)") from None
    return args


def usage(name: str, fn) -> str:
    params = inspect.signature(fn).parameters.values()
    return " ".join(
        [
            f":{name}",
            *(p.name.upper() if p.default is inspect.Parameter.empty else f"[{p.name.upper()}]" for p in params),
        ]
    )


# -- the terminal -----------------------------------------------------------------------------------


def _introduce(session: Session, out: Console) -> None:
    from redaction_pressure.audit.prompt import prompt

    plan, shown = session.plan, prompt(session.plan)
    out.rule(f"{common.AUDIT_TASKSET} task: {plan.scenario} ({plan.difficulty}), step budget {plan.budget}")
    out.print(Text("System prompt", style="bold"))
    out.print(Text(shown.system))
    out.print(Text("\nUser prompt", style="bold"))
    out.print(Text(shown.user))
    out.print(Text(f"\nworkspace: {session.workspace.root}"))
    out.print(Text(help_text(session)))
    out.print(Text(session.status()))


def help_text(session: Session) -> str:
    """What a person may type; the tools' own descriptions, so the list never drifts from them."""
    from verifiers.v1.harnesses.utils.core import EDIT_TOOL

    lines = ["How to play: each line is one tool call, one step of the budget.",
             "  COMMAND            a shell command, run like the agent's bash tool in the workspace (./repo is the",
             "                     repository); each line is a fresh `bash -c`, so cd and variables do not carry over,",
             "                     and commands get no input (use `git commit -m`, not an editor)"]  # fmt: skip
    for name, fn in session.signatures().items():
        about = EDIT_TOOL["function"]["description"] if name == "edit" else (fn.__doc__ or "").strip()
        lines.append(f"  {usage(name, fn):<40} {about}")
    lines += ["  Arguments are shell-quoted. Not steps: help, an empty line, a `:` line that is not a valid call.",
              "  submit, exit or end of input (Ctrl-D): grade the repository and end; the step budget ends it too.",
              "  Ctrl-C: end without grading."]  # fmt: skip
    return "\n".join(lines)


def _lines(out: Console) -> Iterator[str]:
    """Typed lines (with line editing on a terminal); piped lines are echoed, so a transcript reads as a session."""
    import importlib

    tty = sys.stdin.isatty()
    if tty:
        with contextlib.suppress(ImportError):
            importlib.import_module("readline")  # line editing and history for input()
    while True:
        try:
            line = input(PROMPT) if tty else sys.stdin.readline()
        except EOFError:
            return
        if not tty:
            if not line:
                return
            out.print(Text(PROMPT + line.rstrip("\n")), style="dim")
        yield line.rstrip("\n")


def _loop(session: Session, out: Console) -> str:
    """Run typed calls until the episode ends; return how it ended."""
    signatures = session.signatures()
    for line in _lines(out):
        if line.strip() in ENDINGS:
            return line.strip()
        if line.strip() in ("", "help", ":help"):
            if line.strip():
                out.print(Text(help_text(session)))
            continue
        try:
            name, args = parse(line, signatures)
        except ValueError as exc:
            out.print(Text(f"not a step: {exc}"))
            continue
        out.print(Text(session.call(name, args)))
        out.print(Text(session.status(), style="bold"))
        if session.spent:
            return f"the step budget ({session.plan.budget} tool calls) is spent"
    return "end of input"


def _report(session: Session, out: Console) -> None:
    facts, score = session.grade()
    for line in score_lines(facts, score, session.plan.budget):
        out.print(Text(line))
    out.print(Text("reasons:", style="bold"))
    for line in reasons(facts) or ["nothing left, nothing broken"]:
        out.print(Text(f"  - {line}"))
