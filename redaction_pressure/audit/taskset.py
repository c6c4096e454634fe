"""secrets-audit as a Verifiers v1 taskset (a verifiers adapter, with `tools.py`).

Multi-turn. `setup` checks the runtime has git, git-filter-repo and a Python with pytest (on the
host, the agent's own toolchain, `host_toolchain.py`, which holds nothing of this package), then
writes the task's seeded repository into `repo/`. The agent works with the bash harness plus
the four audit tools, whose work is done here on the host (`toolcalls.py`): the harness lists
them from a stub in its box (`tools.py`), and the `audit_calls` interceptor puts each call's
result, with the findings it revealed, in the call's place. With a harness that gates its tool
calls (bash, the default) that happens at the gate, before the call would run, so no audit call
ever reaches the box; with one that does not, the stub's placeholder is replaced when the next
request carries it (and `tool_server_gone` ends the episode, scored, if the agent kills the
stub). A stop ends the episode when the step budget (10 / 20 / 30 tool calls) is spent. `finalize` checks the toolchain setup recorded, reads the working tree and the whole `.git` out
of the runtime as bytes, analyses them on the host (no git, no repository configuration) and
runs the pristine tests on a copy built from the same bytes (`grading.py`); the facts go to
`trace.info["audit"]`, with a reason whenever something could not be read.

The reward is one number, `min(1, detection x health + efficiency)` when anything was fixed,
else 0 (see `rubric.py`); its parts are metrics. Rewards and metrics read only
`trace.info` and the task data, so `vf-replay` re-scores offline and identically.

Task data carries split, index, scenario and the prompt, never a secret or a private seed;
the plan is rebuilt from (split, index) on the host. The private secret never reaches the
runtime: every process the runtime starts sees `REDACTION_PRESSURE_PRIVATE_SEED` empty.
"""

from __future__ import annotations

import asyncio
import itertools
import os
from collections.abc import Iterator
from dataclasses import dataclass
from typing import Literal

import verifiers.v1 as vf
from pydantic import Field, model_validator
from verifiers.v1.rollout import resolve_agent_runtime

from redaction_pressure import splits as shared_splits
from redaction_pressure.audit import grading, host_toolchain, programs, splits
from redaction_pressure.audit.plan import HISTORY_ALL, RepoPlan
from redaction_pressure.audit.prompt import prompt
from redaction_pressure.audit.rubric import AUDIT_REWARD_SCHEMA_VERSION, AuditScore, score_facts
from redaction_pressure.audit.scenarios import AUDIT_VERSION
from redaction_pressure.audit.tiers import AUDIT_TOOLS
from redaction_pressure.audit.toolcalls import AuditTools, clip
from redaction_pressure.audit.tools import box_toolset
from redaction_pressure.corpus import CORPUS_VERSION
from redaction_pressure.identity import block
from redaction_pressure.seal import scrub_initial_environ

ENVIRONMENT = "secrets-audit"
ISOLATING_RUNTIMES = "docker, apptainer, modal, e2b or prime"
FINALIZE_TIMEOUT = 600.0
"""Seconds `finalize` may take in all before the episode is scored 0 with a reason."""


def identity(split: str, level: str = splits.STANDARD) -> dict[str, str]:
    """The identity block recorded in task data and, recomputed, in `trace.info`."""
    versions = {
        "corpus_version": CORPUS_VERSION,
        "audit_version": AUDIT_VERSION,
        "reward_schema_version": AUDIT_REWARD_SCHEMA_VERSION,
    }
    return block(ENVIRONMENT, split, splits.commitment(split, level), versions)


def steps_taken(trace: vf.Trace) -> int:
    """Tool calls in the assistant messages (the last results may be missing after a stop)."""
    return sum(len(m.tool_calls or []) for m in trace.assistant_messages)


class SecretsAuditData(vf.TaskData):
    split: str
    """train, dev or private_eval."""
    index: int
    """The task's index within its split; with the split it determines scenario and seed."""
    scenario: str
    """Which scenario the repository plays (one of the 13, or an expert one)."""
    difficulty: str
    """easy, medium or hard (the standard level's scenarios), or expert."""
    history: str = HISTORY_ALL
    """The history mode the task was built for: `all` (every secret counts in git objects) or `seed`."""
    budget: int
    """Step budget: tool calls before the episode stops (10 / 20 / 30; expert 40)."""
    environment: dict[str, str]
    """The identity block at load time."""


class SecretsAuditTaskConfig(vf.TaskConfig):
    command_timeout: float = Field(60.0, gt=0)
    """Seconds each audit-tool command and the pristine test run may take."""
    allow_unsealed: bool = False
    """Accept private_eval on the subprocess runtime (the agent shares the evaluator's host); every
    trace then records `sealed: false`."""


@dataclass
class LiveEpisode:
    """What the task keeps in host memory for one live episode, out of the agent's reach."""

    tools: AuditTools
    """The episode's audit tools, on its runtime and the toolchain setup recorded."""
    gated: bool
    """Whether the harness asks the tool gate before each call (audit calls are answered there)."""


class SecretsAuditTask(vf.Task[SecretsAuditData, vf.State, SecretsAuditTaskConfig]):
    _plan: RepoPlan | None = None
    _toolchains: dict[str, grading.Toolchain] | None = None
    _golds: dict[str, grading.Gold | None] | None = None
    """Per runtime name, what `setup` recorded: host memory, out of the agent's reach."""
    _live: dict[str, LiveEpisode] | None = None
    """Each live episode by trace id (set in `setup`, dropped in `finalize`)."""

    @property
    def level(self) -> str:
        return splits.level_of(self.data.difficulty)

    @property
    def key(self) -> str:
        return task_id(self.data.split, self.data.index, self.level)

    @property
    def plan(self) -> RepoPlan:
        if self._plan is None:
            data = self.data
            if data.environment.get("split_commitment") != splits.commitment(data.split, self.level):
                raise vf.TaskError(f"task {self.key} was built under another {data.split} split commitment")
            plan = splits.plan_for(data.split, data.index, data.history, self.level)
            if plan.scenario != data.scenario or prompt(plan).user != data.prompt:
                raise vf.TaskError(f"task {self.key}: the regenerated repository differs from the task data")
            self._plan = plan
        return self._plan

    def runtime_env(self) -> dict[str, str]:
        # NOTE: the subprocess runtime hands the host environment to every process it starts;
        # an empty value masks the private secret from the agent's shell and the tools.
        return {shared_splits.PRIVATE_ENV: ""}

    @classmethod
    def toolsets(cls, config: SecretsAuditTaskConfig) -> list[vf.Toolset]:
        # Only the stub that lists the tools runs in the box; their work is `audit_calls`'.
        return [box_toolset()]

    async def setup(self, trace: vf.Trace, runtime: vf.Runtime) -> None:
        sealed = self._check_sealed(runtime)
        if not sealed:
            await self._own_toolchain(runtime)
        toolchain = await self._requirements(runtime)
        plan = self.plan
        if needs_node(plan) and not toolchain.node:
            raise vf.TaskError(
                "the runtime lacks node, which secrets-audit's JavaScript probes run under (Debian: apt-get install "
                "nodejs; containers: see docs/secrets-audit.md)"
            )
        await runtime.write(".audit-setup.json", programs.materialize_input(plan))
        result = await runtime.run([toolchain.python, "-c", programs.MATERIALIZE, ".audit-setup.json"], {})
        if result.exit_code:
            raise vf.TaskError(f"task {self.key}: writing the repository failed: {result.stderr.strip()[-500:]}")
        user = self.data.agent_user
        if user:
            # The agent owns its workspace and nothing of the toolchain (root's): it cannot write
            # the interpreter, its libraries, pytest or git, which the grader's programs run on.
            made = await runtime.run(
                [
                    "sh",
                    "-c",
                    'id "$1" >/dev/null 2>&1 || useradd -m "$1"; chown -R "$1": . && chown "$1": "$(pwd)"',
                    "sh",
                    user,
                ],
                {},
            )
            if made.exit_code:
                raise vf.TaskError(
                    f"task {self.key}: giving the workspace to {user!r} failed: {made.stderr.strip()[-300:]}"
                )
        if self._toolchains is None:
            self._toolchains = {}
        self._toolchains[runtime.name] = toolchain
        if self._golds is None:
            self._golds = {}
        # Gold's probe runs, before the agent acts (finalize's grade compares the agent's with them).
        self._golds[runtime.name] = await grading.prepare_gold(runtime, plan, toolchain)
        if self._live is None:
            self._live = {}
        # The inspect tools read and run git as the agent would: as its user where it has one.
        agent = await resolve_agent_runtime(runtime, user) if user else runtime
        # A root agent in a sealed box could copy gold's probe replica while status grades; on the
        # subprocess runtime (unsealed) the agent reaches the host anyway.
        tools = AuditTools(
            plan,
            agent=agent,
            grader=runtime,
            toolchain=toolchain,
            command_timeout=self.config.command_timeout,
            probes_in_status=bool(user) or not sealed,
        )
        self._live[trace.id] = LiveEpisode(tools, gates_tool_calls(trace))
        if not sealed:
            trace.info["sealed"] = False

    async def _own_toolchain(self, runtime: vf.Runtime) -> None:
        try:
            await own_toolchain_first(runtime)
        except host_toolchain.ToolchainError as exc:
            raise vf.TaskError(f"the agent's toolchain could not be built: {exc}") from None

    def _check_sealed(self, runtime: vf.Runtime) -> bool:
        """private_eval needs a runtime that isolates the agent from the evaluator's host."""
        if getattr(runtime, "type", "") != "subprocess" and type(runtime).__name__ != "SubprocessRuntime":
            return True
        if self.data.split == "private_eval" and not self.config.allow_unsealed:
            raise vf.TaskError(
                f"task {self.key}: private_eval refuses the subprocess runtime (the agent would share the evaluator's "
                f"host and user); use an isolating runtime ({ISOLATING_RUNTIMES}) or pass "
                "--env.taskset.task.allow-unsealed true to record sealed: false"
            )
        return False

    async def _requirements(self, runtime: vf.Runtime) -> grading.Toolchain:
        probe = await grading.probe(runtime)
        if probe.toolchain is None:
            # The same for every task of the run (the runtime's, not the task's): no task key, so
            # a run's summary names it once.
            raise vf.TaskError(
                f"the runtime lacks {', '.join(probe.missing)}, which secrets-audit needs where the agent runs "
                "(locally: install the audit extra, `uv sync --extra audit`; containers and sandboxes: "
                "see docs/secrets-audit.md)"
            )
        return probe.toolchain

    @vf.stop
    async def step_budget(self, trace: vf.Trace) -> bool:
        return steps_taken(trace) >= self.data.budget

    @vf.stop
    async def tool_server_gone(self, trace: vf.Trace) -> bool:
        """End the episode (it is then scored) once the agent has killed the tool server in its box,
        when the harness has no tool gate: its audit calls still reach the stub, and the harness
        exits on a refused tool connection, which is never finalized. (A kill and an audit call
        in one turn still fail such a harness.) With a gate no audit call reaches the box after
        the harness listed the tools, and a killed server changes nothing."""
        live = (self._live or {}).get(trace.id)
        if live is None or live.gated or steps_taken(trace) == 0:
            return False
        try:
            probe = await live.tools.grader.run(["sh", "-c", programs.TOOL_SERVER_ALIVE], {})
        except Exception:  # noqa: BLE001 - a runtime that cannot answer is finalize's to judge
            return False
        return probe.exit_code == 1

    @vf.intercept
    async def audit_calls(self, request: vf.Request, trace: vf.Trace) -> vf.Request | None:
        """Put each audit call's result, computed on the host, in the call's place.

        With a gated harness verifiers shows this interceptor each call first with an empty result,
        before it runs: the result returned then is the call's verdict, and the harness records it
        without calling the box. Otherwise the stub's placeholder arrives with the next request and
        is replaced then. Either way verifiers pins the result for the rest of the rollout."""
        live = (self._live or {}).get(trace.id)
        last = request.messages[-1] if request.messages else None
        if live is None or not isinstance(last, vf.ToolMessage):
            return None
        found = _audit_call(request.messages, last.tool_call_id)
        if found is None:
            return self._capped(request, last)
        if not last.content and not live.gated:
            return None  # without a gate, a rewrite now would end the rollout: let the stub answer
        name, arguments, steps, turn = found
        # One turn's audit calls see one repository: gated, they are all answered before any call
        # of the turn runs; otherwise, all after it ran.
        text = await live.tools.call(name, arguments, steps, turn)
        messages = [*request.messages[:-1], last.model_copy(update={"content": text})]
        return request.model_copy(update={"messages": messages})

    def _capped(self, request: vf.Request, last: vf.ToolMessage) -> vf.Request | None:
        """A bash or edit result cut to the level's stated output cap (`plan.output_cap`), as the
        audit tools cut theirs. An empty result is the gate's look before the call runs: left alone
        (changing it would refuse the call). verifiers pins the cut text for the rest of the rollout,
        so the model and the trace both read it."""
        cap = self.plan.output_cap
        content = last.content
        if cap is None or not isinstance(content, str) or len(content) <= cap:
            return None
        messages = [*request.messages[:-1], last.model_copy(update={"content": clip(content, cap)})]
        return request.model_copy(update={"messages": messages})

    async def finalize(self, trace: vf.Trace, runtime: vf.Runtime) -> None:
        plan = self.plan
        toolchain = (self._toolchains or {}).pop(runtime.name, None)
        gold = (self._golds or {}).pop(runtime.name, None)
        live = (self._live or {}).pop(trace.id, None)
        facts = await self._facts(runtime, toolchain, steps_taken(trace), gold)
        announced = live.tools.announced if live else []
        facts["revealed"] = sorted(set(announced) & {f.id for f in plan.findings})
        if "sealed" in trace.info:
            facts["sealed"] = trace.info["sealed"]
        trace.info["audit"] = facts
        trace.info["environment"] = identity(self.data.split, self.level)
        trace.info["task_seed"] = plan.seed

    async def _facts(
        self, runtime: vf.Runtime, toolchain: grading.Toolchain | None, steps: int, gold: grading.Gold | None = None
    ) -> dict:
        plan = self.plan
        try:
            return await asyncio.wait_for(
                grading.grade(runtime, plan, toolchain, steps, self.config.command_timeout, gold), FINALIZE_TIMEOUT
            )
        except TimeoutError:
            facts = {
                "secrets": [s.id for s in plan.secrets],
                "steps": steps,
                "tests": {"status": "timeout", "passed": 0, "total": 0},
            }
            facts["left"] = {s.id: {"tree": ["<unread>"], "history": []} for s in plan.secrets}
            facts["reason"] = f"grading took longer than {FINALIZE_TIMEOUT:g} s"
            return facts

    def _score(self, trace: vf.Trace) -> AuditScore:
        facts = trace.info.get("audit")
        if not facts:
            raise vf.TaskError(f"task {self.key}: the trace has no audit facts (finalize did not run)")
        return score_facts(facts, self.data.budget)

    @vf.reward(weight=1.0)
    async def audit(self, trace: vf.Trace) -> float:
        return self._score(trace).total

    @vf.metric
    async def parts(self, trace: vf.Trace) -> dict[str, float]:
        return self._score(trace).metrics()

    async def validate(self, runtime: vf.Runtime) -> bool | None:
        """The gold check: the oracle remediation, in one step, reaches exactly 1.0."""
        result = await runtime.run(["bash", "-c", programs.oracle_script(self.plan)], {})
        if result.exit_code:
            raise vf.TaskError(f"task {self.key}: the oracle remediation failed: {result.stderr.strip()[-500:]}")
        facts = await self._facts(runtime, await self._requirements(runtime), steps=1)
        return score_facts(facts, self.data.budget).total == 1.0


def _arguments(raw: str) -> dict:
    import json

    try:
        value = json.loads(raw or "{}")
    except ValueError:
        return {}
    return value if isinstance(value, dict) else {}


def _audit_call(messages: list, call_id: str) -> tuple[str, dict, int, tuple] | None:
    """(tool, arguments, tool calls up to and including it, its turn's key) of the audit call a
    tool message answers, or None when it answers another tool."""
    found = None
    count = 0
    for turn, message in enumerate(messages):
        if isinstance(message, vf.AssistantMessage):
            calls = message.tool_calls or []
            for call in calls:
                count += 1
                if call.id == call_id:
                    found = (call.name, _arguments(call.arguments), count, (turn, *(c.id for c in calls)))
    return found if found is not None and found[0] in AUDIT_TOOLS else None


def gates_tool_calls(trace: vf.Trace) -> bool:
    """Whether the episode's harness asks verifiers' tool gate before running each call."""
    from verifiers.v1.utils.loaders import harness_class

    agent = getattr(trace, "agent", None)
    harness = getattr(getattr(agent, "config", None), "harness", None)
    try:
        # No harness configured: the taskset's default, bash (this module exports no Harness).
        return bool(harness_class(harness.id if harness is not None else "bash").SUPPORTS_TOOL_INTERCEPTION)
    except Exception:  # noqa: BLE001 - unknown: answer after the stub, which works with any harness
        return False


def task_id(split: str, index: int, level: str = splits.STANDARD) -> str:
    """A task's id: `audit-dev-00003`; an expert task's `audit-expert-dev-00003`."""
    return f"audit-{split}-{index:05d}" if level == splits.STANDARD else f"audit-{level}-{split}-{index:05d}"


class SecretsAuditConfig(vf.TasksetConfig):
    split: Literal["train", "dev", "private_eval"] = "dev"
    """Which split to load: train (unbounded), dev (52 tasks; expert 24) or private_eval (needs the secret)."""
    difficulty: Literal["standard", "expert"] = "standard"
    """Which level: `standard` (the 13 scenarios of the curriculum, each at its own difficulty: easy,
    medium or hard) or `expert` (large repositories, a stated output cap, 40 steps)."""
    history: Literal["all", "seed"] = "all"
    """Where git history counts: `all` (every secret, until every object is clean) or `seed` (only the
    scenarios whose point it is, git_basics and legacy_audit, as the seed's curriculum had it)."""
    size: int | None = None
    """Number of tasks; default the dev size (52; expert 24) for dev and private_eval, unbounded for train."""
    task: SecretsAuditTaskConfig = SecretsAuditTaskConfig()
    """Per-task knobs under `--env.taskset.task.*`."""
    agent_user: str | None = None
    """Run the agent (harness, shell, tools) as this unprivileged user, created by setup when the
    image lacks it, owning the workspace; setup and grading stay root. Needs a runtime that runs
    commands as another user (docker, podman, prime); the subprocess runtime cannot."""

    @model_validator(mode="after")
    def _check(self) -> SecretsAuditConfig:
        if self.size is not None and self.size < 1:
            raise ValueError(f"size must be positive, got {self.size}")
        dev = splits.dev_size(self.difficulty)
        if self.split == "dev" and self.size is not None and self.size > dev:
            raise ValueError(f"dev has {dev} {self.difficulty} tasks; size {self.size} is too large")
        return self


def needs_node(plan: RepoPlan) -> bool:
    """Whether the plan has a probe that runs under node (a client-side JavaScript module)."""
    return any(p.kind == "js" for p in plan.probes)


async def own_toolchain_first(runtime: vf.Runtime) -> None:
    """On the host (the subprocess runtime), give the runtime the agent's own toolchain
    (`host_toolchain`: python, pytest and git-filter-repo without this package or anything else
    of the evaluator's environment), built or checked now, first on its PATH. The agent's shell,
    its tools and the grader's programs all start from the runtime's environment."""
    env = {**os.environ, **runtime.env}
    runtime.env.update(await asyncio.to_thread(host_toolchain.agent_env, env))


class SecretsAuditTaskset(vf.Taskset[SecretsAuditTask, SecretsAuditConfig]):
    def __init__(self, config: SecretsAuditConfig) -> None:
        super().__init__(config)
        self.INFINITE = config.split == "train" and config.size is None
        splits.commitment(config.split, config.difficulty)  # private_eval without its secret fails here, by name
        # NOTE: the agent's shell can read /proc/<pid>/environ of this process; see redaction_pressure/seal.py.
        scrub_initial_environ(shared_splits.PRIVATE_ENV)

    def load(self) -> Iterator[SecretsAuditTask]:
        config = self.config
        size = config.size
        level = config.difficulty
        if size is None and config.split != "train":
            size = splits.dev_size(level)
        for index in itertools.count() if size is None else range(size):
            plan = splits.plan_for(config.split, index, config.history, level)
            text = prompt(plan)
            yield SecretsAuditTask(
                SecretsAuditData(
                    id=task_id(config.split, index, level),
                    name=f"{plan.scenario} ({config.split} {index})",
                    prompt=text.user,
                    system_prompt=text.system,
                    split=config.split,
                    index=index,
                    scenario=plan.scenario,
                    difficulty=plan.difficulty,
                    budget=plan.budget,
                    environment=identity(config.split, level),
                    agent_user=config.agent_user,
                    history=config.history,
                ),
                config.task,
            )


__all__ = ["SecretsAuditTaskset"]
