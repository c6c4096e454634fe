"""secrets-audit as an OpenEnv environment: the seed's session, one tool call a step, the taskset's grade.

The OpenEnv adapter of the audit wing, over the same core as the verifiers taskset: the task's
repository is written by the taskset's own programs (`programs.MATERIALIZE`), the audit tools are
`toolcalls.AuditTools` (what the taskset's interceptor calls), and every grade is `grading.grade`
read by `rubric.score`, so the reward of the step that ends an episode is the reward verifiers
gives the same calls.

An action is one tool call: `command` (bash, run in the workspace as the agent; the repository
is ./repo), or `tool` with `args`: `inspect_file`, `inspect_git_history`, `inspect_encoded`,
`status`, `edit` (verifiers' edit tool: `path`, `old_str`, `new_str`, replace exactly once), or
`submit`, which ends the episode without a step. Each step's observation carries the seed's
session: `visible_secrets`, `hidden_count_hint`, `ranked_actions`, `top_blocker`, `step_budget`,
`steps_taken`, `steps_remaining`, `efficiency_bonus`, `conflict_map`, `security_score`
(detection), `health_score`, `reward`, `observation` (the call's result as the agent reads it),
`last_result` (`action`, `exit_code`, `stdout`, `stderr`, `timed_out`) and `done`. The scores
are those the `status` tool shows after the step (`status.observe` on a fresh grade): `reward`
is the score the episode would get if it ended now, not an increment; the step that ends the
episode (budget spent or `submit`) carries the final grade, as `finalize` makes it.

Sandboxes (`sandbox`): `podman` (the default) runs each session in its own container from the
audit image (no network, the agent the unprivileged user `agent`, the grader root inside the
box; `container.PodmanWorkspace`), so no session reaches another's files, the server's files or
its environment; `local` runs the agent's commands as this server's user in a temporary folder,
as `play` does: for trusted single-user work, refused for private_eval. Commands time out after
`COMMAND_TIMEOUT` s (their process group killed), outputs are cut to the level's stated cap, and
a session's box and workspace are removed at reset, close and server exit.
"""

from __future__ import annotations

import asyncio
import dataclasses
import os
import subprocess
import threading
from typing import Any

from openenv.core.client_types import StepResult
from openenv.core.env_client import EnvClient
from openenv.core.env_server.interfaces import Environment
from openenv.core.env_server.types import Action, EnvironmentMetadata, Observation, State
from pydantic import Field, model_validator

from redaction_pressure import splits as shared_splits
from redaction_pressure.audit import grading, programs
from redaction_pressure.audit import splits as audit_splits
from redaction_pressure.audit import status as audit_status
from redaction_pressure.audit.plan import RepoPlan
from redaction_pressure.audit.prompt import prompt
from redaction_pressure.audit.rubric import efficiency, score
from redaction_pressure.audit.tiers import AUDIT_TOOLS, Call
from redaction_pressure.audit.toolcalls import AuditTools, clip

COMMAND_TIMEOUT = 90
"""Seconds a bash command may run (the seed's figure); its process group is killed then."""
MAX_ACTION_CHARS = 65_536
TOOLS = (*AUDIT_TOOLS, "edit", "submit")
EDIT = r"""
import sys
from pathlib import Path
path, old, new = sys.argv[1:4]
def main():
    if not path:
        return "error: 'path' is required"
    if not old:
        return "error: 'old_str' must be a non-empty string"
    p = Path(path)
    if not p.exists():
        return f"error: {path} not found"
    try:
        text = p.read_text()
    except Exception as e:
        return f"error: could not read {path}: {e}"
    n = text.count(old)
    if n != 1:
        return f"error: old_str must appear exactly once in {path} (found {n})"
    try:
        p.write_text(text.replace(old, new, 1))
    except Exception as e:
        return f"error: could not write {path}: {e}"
    return f"Edited {path}"
sys.stdout.write(main())
"""
"""verifiers' `run_edit`, run as the agent in the workspace (so it writes only what the agent may)."""


class AuditAction(Action):
    """One tool call: a bash `command`, or a `tool` with its `args`."""

    command: str | None = Field(default=None, max_length=MAX_ACTION_CHARS, description="a bash command")
    tool: str | None = Field(default=None, description=f"one of {', '.join(TOOLS)}")
    args: dict[str, Any] = Field(default_factory=dict, description="the tool's arguments")

    @model_validator(mode="after")
    def _one_call(self) -> AuditAction:
        if (self.command is None) == (self.tool is None):
            raise ValueError("an action is a bash `command` or a `tool` with `args`, exactly one of them")
        if self.command is not None and not self.command.strip():
            raise ValueError("the command is empty")
        if self.tool is not None and self.tool not in TOOLS:
            raise ValueError(f"unknown tool {self.tool!r}; the tools are {', '.join(TOOLS)} (or a bash `command`)")
        if len(repr(self.args)) > MAX_ACTION_CHARS:
            raise ValueError(f"the action's args are over {MAX_ACTION_CHARS} characters")
        return self


class AuditObservation(Observation):
    """The seed's session after a step (or the prompt, at reset)."""

    system_prompt: str = ""
    observation: str = ""
    task: dict[str, Any] = Field(default_factory=dict)
    visible_secrets: list[dict[str, Any]] = Field(default_factory=list)
    hidden_count_hint: int = 0
    ranked_actions: list[str] = Field(default_factory=list)
    top_blocker: str | None = None
    step_budget: int = 0
    steps_taken: int = 0
    steps_remaining: int = 0
    efficiency_bonus: float = 0.0
    conflict_map: dict[str, Any] = Field(default_factory=dict)
    security_score: float = 0.0
    health_score: float = 0.0
    last_result: dict[str, Any] | None = None
    grade: dict[str, Any] | None = Field(
        default=None, description="at the end: the rubric's parts and the grader's facts"
    )


class AuditState(State):
    split: str | None = None
    index: int | None = None
    difficulty: str | None = None
    scenario: str | None = None
    done: bool = False


@dataclasses.dataclass
class Ran:
    exit_code: int
    stdout: str
    stderr: str
    timed_out: bool


class LocalBox:
    """The task in a temporary folder on this host; the agent is this server's user (trusted work only)."""

    def __init__(self, plan: RepoPlan) -> None:
        from redaction_pressure.audit.local import LocalWorkspace

        # NOTE: not under a folder of the session's own: the process keeps each plan's built
        # repository as a template in the temporary folder (`local._copy_repo`) for later sessions.
        self.workspace = LocalWorkspace(plan)
        self.agent = self.grader = self.workspace.runtime
        self.toolchain = self.workspace.toolchain
        self.gold = self.workspace.gold

    def run(self, argv: list[str], timeout: float) -> Ran:
        env = {**os.environ, **self.agent.env, "HOME": str(self.workspace.root)}
        env[shared_splits.PRIVATE_ENV] = ""
        proc = subprocess.Popen(argv, cwd=self.workspace.root, env=env, stdin=subprocess.DEVNULL,
                                stdout=subprocess.PIPE, stderr=subprocess.PIPE, start_new_session=True)  # fmt: skip
        out, err, timed_out = _capture(proc, timeout, lambda: _kill_group(proc.pid))
        _kill_group(proc.pid)  # what it left running in the background goes with it
        return Ran(proc.returncode, out.decode(errors="replace"), err.decode(errors="replace"), timed_out)

    def close(self) -> None:
        self.workspace.close()


class SandboxUnavailable(RuntimeError):
    """The podman sandbox cannot run here (podman or its image is missing); the message says what to do."""


class PodmanBox:
    """The task in a container of its own: the agent `agent`, the grader root (`container.PodmanWorkspace`)."""

    def __init__(self, plan: RepoPlan) -> None:
        from redaction_pressure.audit import container

        reason = container.available()
        if reason:
            raise SandboxUnavailable(f"the podman sandbox is not available: {reason} (or serve with --sandbox local)")
        if not container.has_image():
            raise SandboxUnavailable(
                f"the podman sandbox needs the image {container.IMAGE}: build it once with "
                "python -c 'from redaction_pressure.audit import container; container.build_image()'"
            )
        self.workspace = container.PodmanWorkspace(plan)
        self.killed = 0
        """Calls into the box whose `podman` process on this host was killed by a signal: nothing in the
        box can do that (the agent is unprivileged there), so a grade with one is void, not the agent's loss."""
        exec_ = self.workspace.runtime._exec

        def watched(*args, **kwargs):
            done = exec_(*args, **kwargs)
            if done.returncode < 0:
                self.killed += 1
            return done

        self.workspace.runtime._exec = watched
        self.grader = self.workspace.runtime
        self.agent = _AsAgent(self.workspace)
        self.toolchain = self.workspace.toolchain
        self.gold = None  # the final grade makes gold's runs itself, before running any of the agent's code

    def run(self, argv: list[str], timeout: float) -> Ran:
        from redaction_pressure.audit import container

        ws = self.workspace
        env = {"HOME": f"/home/{ws.agent}"}
        flags = [f"--env={k}={v}" for k, v in {"PATH": container.PATH, **env}.items()]
        argv = ["podman", "exec", "--tty=false", "--user", ws.agent, "--workdir", container.WORKDIR, *flags,
                ws.container, "timeout", "-k", "2", str(int(timeout)), *argv]  # fmt: skip
        proc = subprocess.Popen(argv, env={**os.environ, "CONTAINERS_CONF": container.containers_conf()},
                                stdin=subprocess.DEVNULL, stdout=subprocess.PIPE, stderr=subprocess.PIPE)  # fmt: skip
        out, err, late = _capture(proc, timeout + 30, proc.kill)  # `timeout` in the box ends it first
        done = subprocess.CompletedProcess(argv, proc.returncode, out, err)
        timed_out = late or done.returncode in (124, 137)
        # What the command left running goes with it, as in the local box: no process of the agent
        # outlives its step to race the grade that follows (`kill -9 -1` as the agent: all of its own).
        ws.runtime._exec(["bash", "-c", "kill -9 -1"], env, ws.agent, timeout=60)
        return Ran(
            done.returncode, done.stdout.decode(errors="replace"), done.stderr.decode(errors="replace"), timed_out
        )

    def close(self) -> None:
        self.workspace.close()


class _AsAgent:
    """The container's runtime calls as the agent user (what the audit tools read as the agent)."""

    def __init__(self, workspace) -> None:
        self.workspace = workspace

    async def run(self, argv: list[str], env: dict[str, str]):
        from redaction_pressure.audit.container import Result

        ws = self.workspace
        done = await asyncio.to_thread(ws.runtime._exec, argv, env, ws.agent)
        return Result(done.returncode, done.stdout.decode(errors="replace"), done.stderr.decode(errors="replace"))


KEPT_BYTES = 262_144
"""Bytes of each of a command's streams the server keeps (the agent reads at most the level's cap
of them): the rest is read and dropped, so a command printing without end costs no memory."""


def _capture(proc: subprocess.Popen, timeout: float, stop) -> tuple[bytes, bytes, bool]:
    """(stdout, stderr, timed out) of `proc`: each stream's first `KEPT_BYTES`, the rest drained and
    dropped; past `timeout` s `stop()` is called and what is left is drained for at most 10 s more."""
    import selectors
    import time

    kept = {proc.stdout: bytearray(), proc.stderr: bytearray()}
    with selectors.DefaultSelector() as sel:
        for stream in kept:
            sel.register(stream, selectors.EVENT_READ)
        deadline, timed_out = time.monotonic() + timeout, False
        while sel.get_map():
            left = deadline - time.monotonic()
            if left <= 0:
                if timed_out:
                    break  # something still holds the pipes after the stop: give up on them
                timed_out = True
                stop()
                deadline = time.monotonic() + 10
                continue
            for key, _ in sel.select(timeout=min(left, 1.0)):
                chunk = os.read(key.fileobj.fileno(), 65_536)
                if not chunk:
                    sel.unregister(key.fileobj)
                    continue
                buf = kept[key.fileobj]
                if len(buf) < KEPT_BYTES:
                    buf += chunk[: KEPT_BYTES - len(buf)]
    for stream in kept:
        stream.close()
    try:
        proc.wait(timeout=30)
    except subprocess.TimeoutExpired:
        proc.kill()
        proc.wait()
    return bytes(kept[proc.stdout]), bytes(kept[proc.stderr]), timed_out


def _kill_group(pid: int) -> None:
    import signal

    try:
        os.killpg(pid, signal.SIGKILL)
    except (ProcessLookupError, PermissionError):
        pass


BOXES = {"podman": PodmanBox, "local": LocalBox}
_OPEN: set = set()
"""The boxes of this process's live sessions (`close_all` removes them when the server stops)."""
_OPEN_LOCK = threading.Lock()


def close_all() -> None:
    """Remove every live session's box: the server calls it on its way out (SIGTERM, Ctrl-C), so no
    container or workspace outlives it, whatever its clients did."""
    with _OPEN_LOCK:
        boxes = list(_OPEN)
        _OPEN.clear()
    for box in boxes:
        box.close()


def plan_for(
    split: str | None, index: int | None, seed: int | None, difficulty: str, history: str
) -> tuple[str, int, RepoPlan]:
    """(split, index, plan) of the task a reset names; ValueError with one line when it names none."""
    split, index = shared_splits.reset_target(split, index, seed)
    split = split or "dev"
    index = 0 if index is None else index
    if difficulty not in audit_splits.LEVELS:
        raise ValueError(f"unknown difficulty {difficulty!r}; secrets-audit has {', '.join(audit_splits.LEVELS)}")
    if history not in ("all", "seed"):
        raise ValueError(f"unknown history mode {history!r}; choose all or seed")
    audit_splits.check_index(split, index, difficulty)
    return split, index, audit_splits.plan_for(split, index, history, difficulty)


class SecretsAuditEnvironment(Environment[AuditAction, AuditObservation, AuditState]):
    """One audit episode a session, in a sandbox of its own (`SANDBOX`)."""

    SUPPORTS_CONCURRENT_SESSIONS = True
    SANDBOX = "podman"

    def __init__(self) -> None:
        super().__init__()
        self._box: LocalBox | PodmanBox | None = None
        self._plan: RepoPlan | None = None
        self._tools: AuditTools | None = None
        self._calls: list[Call] = []
        self._done = False
        self._state = AuditState()
        self._task: dict[str, Any] = {}

    # -- the episode -----------------------------------------------------------------------------

    def reset(
        self,
        seed: int | None = None,
        episode_id: str | None = None,
        split: str | None = None,
        index: int | None = None,
        difficulty: str = audit_splits.STANDARD,
        history: str = "all",
        **_: Any,
    ) -> AuditObservation:
        if split == "private_eval" and self.SANDBOX == "local":
            raise ValueError(
                "private_eval runs only in the podman sandbox: --sandbox local puts the agent on this host"
            )
        split, index, plan = plan_for(split, index, seed, difficulty, history)
        self._close_box()
        try:
            self._box = BOXES[self.SANDBOX](plan)
        except SandboxUnavailable:
            raise  # podman or its image is missing: the message says what to do
        except Exception as exc:  # noqa: BLE001 - one line the client reads, never a task's bytes
            # NOTE: only the exception's type: a setup program's output could quote the task's files.
            raise RuntimeError(f"setting up the task's box failed ({type(exc).__name__}); reset again") from None
        with _OPEN_LOCK:
            _OPEN.add(self._box)
        self._plan, self._calls, self._done = plan, [], False
        self._tools = AuditTools(plan, agent=self._box.agent, grader=self._box.grader, toolchain=self._box.toolchain,
                                 command_timeout=COMMAND_TIMEOUT)  # fmt: skip
        self._task = {"split": split, "index": index, "difficulty": plan.difficulty, "scenario": plan.scenario,
                      "level": difficulty, "commitment": audit_splits.commitment(split, difficulty)}  # fmt: skip
        self._state = AuditState(episode_id=episode_id, split=split, index=index, difficulty=plan.difficulty,
                                 scenario=plan.scenario)  # fmt: skip
        shown = prompt(plan)
        return AuditObservation(
            system_prompt=shown.system,
            observation=shown.user,
            task=dict(self._task),
            visible_secrets=[_finding(f) for f in plan.findings if f.tier == "surface"],
            hidden_count_hint=sum(1 for f in plan.findings if f.tier != "surface"),
            step_budget=plan.budget,
            steps_remaining=plan.budget,
            efficiency_bonus=efficiency(0, plan.budget),
        )

    def step(self, action: AuditAction, timeout_s: float | None = None, **_: Any) -> AuditObservation:
        if self._done:
            raise RuntimeError("the episode is over: reset for the next task")
        if self._plan is None or self._box is None:
            raise RuntimeError("step before reset: reset the environment to get a task first")
        plan = self._plan
        if action.tool == "submit":
            return self._finish(None, "submitted: the repository is graded as the episode's end would grade it")
        self._calls.append(
            Call(action.tool or "bash", dict(action.args) if action.tool else {"command": action.command})
        )
        steps = len(self._calls)
        self._state.step_count = steps
        result = self._act(action, steps)
        if steps >= plan.budget:
            return self._finish(result, f"the step budget ({plan.budget} tool calls) is spent")
        return self._observe(result, steps)

    def _act(self, action: AuditAction, steps: int) -> dict[str, Any]:
        plan, box = self._plan, self._box
        if action.command is not None:
            ran = box.run(["bash", "-c", action.command], COMMAND_TIMEOUT)
            text = ran.stdout + ran.stderr + (f"\n[timed out after {COMMAND_TIMEOUT} s]" if ran.timed_out else "")
            return _result("bash", ran, clip(text, plan.output_cap), plan.output_cap)
        if action.tool == "edit":
            args = {k: action.args.get(k) for k in ("path", "old_str", "new_str")}
            if not all(isinstance(v, str) for v in args.values()):
                text = "error: edit needs 'path', 'old_str' and 'new_str' as strings"
                return _result("edit", Ran(2, "", text, False), text, plan.output_cap)
            ran = box.run(["python3", "-c", EDIT, args["path"], args["old_str"], args["new_str"]], COMMAND_TIMEOUT)
            text = clip(ran.stdout + ran.stderr, plan.output_cap)
            return _result("edit", ran, text, plan.output_cap)
        text = asyncio.run(self._tools.call(action.tool, action.args, steps))
        code = 1 if text.startswith("error:") else 0
        return _result(action.tool, Ran(code, text, "", False), text, plan.output_cap)

    def _observe(self, result: dict[str, Any], steps: int) -> AuditObservation:
        """The session after a step: the `status` tool's grade and heuristics, on the repository as it is now."""
        plan, box, tools = self._plan, self._box, self._tools
        graded = self._grade(lambda: grading.grade(box.grader, plan, box.toolchain, 0, programs.TEST_TIMEOUT))
        facts = {**graded, "steps": steps}
        seen = audit_status.observe(plan, tools.announced, self._calls, facts)
        return self._session(seen, result, done=False, reward=seen.score.total)

    def _finish(self, result: dict[str, Any] | None, why: str) -> AuditObservation:
        """The episode's end: the final grade, as `finalize` records it and the reward reads it."""
        plan, box, tools = self._plan, self._box, self._tools
        steps = len(self._calls)
        facts = self._grade(lambda: grading.grade(box.grader, plan, box.toolchain, steps, gold=box.gold))
        facts["revealed"] = sorted(set(tools.announced) & {f.id for f in plan.findings})
        final = score(plan, facts)
        seen = audit_status.observe(plan, tools.announced, self._calls, facts)
        self._done = True
        self._state.done = True
        result = result or {"action": "submit", "exit_code": 0, "stdout": why, "stderr": "", "timed_out": False}
        obs = self._session(seen, result, done=True, reward=final.total)
        obs.grade = {"total": final.total, "detection": final.detection, "health": final.health,
                     "efficiency": final.efficiency, "steps": steps, "why_ended": why,
                     "facts": _public_facts(facts)}  # fmt: skip
        self._close_box()
        return obs

    def _grade(self, grade) -> dict:
        """`grade()`'s facts; a RuntimeError, ending the episode unscored, when a call of it into the box was
        killed from this host (the grader fails closed on what it could not observe, which is right
        against the agent and wrong for a fault outside the box: the trainer gets an error to discard)."""
        box = self._box
        before = getattr(box, "killed", 0)
        facts = asyncio.run(grade())
        if getattr(box, "killed", 0) > before:
            self._done = True
            self._state.done = True
            self._close_box()
            raise RuntimeError("a grader call into the session's box was killed from outside it: the grade is void "
                               "and the episode ends unscored; reset for the next one")  # fmt: skip
        return facts

    def _session(
        self, seen: audit_status.Status, result: dict[str, Any], done: bool, reward: float
    ) -> AuditObservation:
        plan = self._plan
        return AuditObservation(
            observation=result["text"] if "text" in result else result.get("stdout", ""),
            task=dict(self._task),
            visible_secrets=list(seen.visible),
            hidden_count_hint=seen.hidden,
            ranked_actions=[a.text for a in seen.actions],
            top_blocker=seen.blocker,
            step_budget=plan.budget,
            steps_taken=seen.steps,
            steps_remaining=seen.remaining,
            efficiency_bonus=seen.score.efficiency,
            conflict_map=dict(seen.conflicts),
            security_score=seen.score.detection,
            health_score=seen.score.health,
            last_result={k: v for k, v in result.items() if k != "text"},
            done=done,
            reward=reward,
        )

    @property
    def state(self) -> AuditState:
        return self._state

    def close(self) -> None:
        self._close_box()

    def _close_box(self) -> None:
        box, self._box = self._box, None
        if box is not None:
            with _OPEN_LOCK:
                _OPEN.discard(box)
            box.close()

    def get_metadata(self) -> EnvironmentMetadata:
        from redaction_pressure import identity

        return EnvironmentMetadata(
            name="secrets-audit",
            description="Remediate leaked secrets in a seeded git repository with bash and inspection tools. Reward: "
            "min(1, detection x health + efficiency) when any leak is fixed, else 0.",
            version=identity.version(),
        )

    # -- OpenEnv's task provider ------------------------------------------------------------------

    def list_splits(self) -> list[dict[str, Any]]:
        return [{"name": s, "type": "train" if s == "train" else "eval"} for s in audit_splits.SPLITS]

    def num_tasks(self, split: str) -> int:
        return _size(split)

    def list_tasks(self, split: str) -> list[dict[str, Any]]:
        return [self.get_task(split, i) for i in range(min(_size(split), 64))]

    def get_task(self, split: str, index: int) -> dict[str, Any]:
        if not 0 <= index < _size(split):
            raise IndexError(f"{split} has tasks 0 to {_size(split) - 1}")
        levels = {}
        for level in audit_splits.LEVELS:
            if split != "dev" or index < audit_splits.dev_size(level):
                levels[level] = audit_splits.scenario_for(index, level)
        return {"id": f"{split}-{index}", "split": split, "index": index, "scenarios": levels}

    def get_task_range(self, split: str, start: int | None = None, stop: int | None = None) -> list[dict[str, Any]]:
        return [self.get_task(split, i) for i in range(_size(split))[slice(start, stop)][:64]]


def _size(split: str) -> int:
    sizes = {"train": shared_splits.TRAIN_MAX_INDEX, "dev": audit_splits.DEV_SIZE, "private_eval": shared_splits.PRIVATE_MAX_INDEX}  # fmt: skip
    if split not in sizes:
        raise ValueError(f"unknown split {split!r}; the splits are {', '.join(audit_splits.SPLITS)}")
    return sizes[split]


def _finding(f) -> dict[str, Any]:
    """A surface finding as `status.observe` lists a visible one, before anything is fixed."""
    return {"id": f.id, "path": f.path, "line": f.line, "kind": f.kind, "tier": f.tier, "fixed": False, "left": ""}


def _result(action: str, ran: Ran, text: str, cap: int | None) -> dict[str, Any]:
    """`last_result` (each stream cut to the level's cap) with `text`, what the agent reads."""
    return {"action": action, "exit_code": ran.exit_code, "stdout": clip(ran.stdout, cap), "stderr": clip(ran.stderr, cap),
            "timed_out": ran.timed_out, "text": text}  # fmt: skip


def _public_facts(facts: dict) -> dict:
    """The grade's facts that name no secret value (ids, counts, reasons); private_eval's derived seed
    is not among them (the task's commitment is)."""
    keep = (
        "left",
        "tests",
        "probes",
        "preservation",
        "history",
        "history_kept",
        "tampering",
        "reason",
        "steps",
        "revealed",
    )
    return {k: facts[k] for k in keep if k in facts}


def environment_factory(sandbox: str) -> type[SecretsAuditEnvironment]:
    """The environment class `create_app` instantiates per session, in `sandbox`."""
    if sandbox not in BOXES:
        raise ValueError(f"unknown sandbox {sandbox!r}; choose {', '.join(BOXES)}")
    return type(f"SecretsAuditEnvironment_{sandbox}", (SecretsAuditEnvironment,), {"SANDBOX": sandbox})


# -- the client ------------------------------------------------------------------------------------


class SecretsAuditEnv(EnvClient):
    """OpenEnv's WebSocket client for secrets-audit: `reset(split=, index=, difficulty=)`, then
    `step(AuditAction(command=...))` or `step(AuditAction(tool="inspect_file", args={"path": ...}))`;
    results are `StepResult[AuditObservation]`. A step runs a command and a grade (seconds, more on
    expert and on a busy machine), so replies are awaited `message_timeout_s` (900 s by default;
    OpenEnv's is 60)."""

    def __init__(self, base_url: str | None = None, message_timeout_s: float = 900.0, **kwargs: Any) -> None:
        super().__init__(base_url=base_url, message_timeout_s=message_timeout_s, **kwargs)

    def _step_payload(self, action: AuditAction) -> dict[str, Any]:
        return action.model_dump(exclude={"metadata"}, exclude_none=True)

    def _parse_result(self, payload: dict[str, Any]):
        fields = dict(payload.get("observation") or {})
        fields.update(done=payload.get("done", False), reward=payload.get("reward"))
        return StepResult(
            observation=AuditObservation.model_validate(fields),
            reward=payload.get("reward"),
            done=payload.get("done", False),
        )

    def _parse_state(self, payload: dict[str, Any]) -> AuditState:
        return AuditState.model_validate(payload)
