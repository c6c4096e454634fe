"""secrets-audit as a Verifiers v1 taskset (a verifiers adapter, with `tools.py`).

Multi-turn. `setup` checks the runtime has git, git-filter-repo and a Python with pytest, then
writes the task's seeded repository into `repo/`. The agent works with the bash harness plus
the colocated audit tools; an interceptor appends newly revealed findings to the tool result
that revealed them, and a stop ends the episode when the step budget (10 / 20 / 30 tool calls)
is spent. `finalize` collects the working tree, every reachable git blob and a pristine test
run from the runtime and scans them on the host; the facts go to `trace.info["audit"]`.

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
from collections.abc import Iterator
from typing import Literal

import verifiers.v1 as vf
from pydantic import Field, model_validator

from redaction_pressure import splits as shared_splits
from redaction_pressure.audit import programs, splits
from redaction_pressure.audit.plan import RepoPlan, plan_to_json
from redaction_pressure.audit.prompt import prompt
from redaction_pressure.audit.rubric import AUDIT_REWARD_SCHEMA_VERSION, AuditScore, score_facts
from redaction_pressure.audit.scenarios import AUDIT_VERSION
from redaction_pressure.seal import scrub_initial_environ
from redaction_pressure.audit.tiers import AUDIT_TOOLS, Call, visible
from redaction_pressure.audit.tools import AuditState, AuditTools, AuditToolsConfig
from redaction_pressure.corpus import CORPUS_VERSION
from redaction_pressure.identity import source_digest, version

ENVIRONMENT = "secrets-audit"
MAX_COLLECT_READ = programs.MAX_COLLECT_BYTES * 2 + 1_000_000  # base64 and JSON overhead


def identity(split: str) -> dict[str, str]:
    """The identity block recorded in task data and, recomputed, in `trace.info`."""
    return {
        "name": ENVIRONMENT,
        "version": version(),
        "corpus_version": CORPUS_VERSION,
        "audit_version": AUDIT_VERSION,
        "reward_schema_version": AUDIT_REWARD_SCHEMA_VERSION,
        "split": split,
        "split_commitment": splits.commitment(split),
        "source_digest": source_digest(),
    }


def steps_taken(trace: vf.Trace) -> int:
    """Tool calls in the assistant messages (the last results may be missing after a stop)."""
    return sum(len(m.tool_calls or []) for m in trace.assistant_messages)


class SecretsAuditData(vf.TaskData):
    split: str
    """train, dev or private_eval."""
    index: int
    """The task's index within its split; with the split it determines scenario and seed."""
    scenario: str
    """Which of the 13 scenarios the repository plays."""
    difficulty: str
    """easy, medium or hard."""
    budget: int
    """Step budget: tool calls before the episode stops (10 / 20 / 30)."""
    environment: dict[str, str]
    """The identity block at load time."""


class SecretsAuditTaskConfig(vf.TaskConfig):
    command_timeout: float = Field(60.0, gt=0)
    """Seconds each audit-tool command and the pristine test run may take."""


class SecretsAuditTask(vf.Task[SecretsAuditData, AuditState, SecretsAuditTaskConfig]):
    _plan: RepoPlan | None = None

    @property
    def key(self) -> str:
        return f"audit-{self.data.split}-{self.data.index:05d}"

    @property
    def plan(self) -> RepoPlan:
        if self._plan is None:
            data = self.data
            if data.environment.get("split_commitment") != splits.commitment(data.split):
                raise vf.TaskError(f"task {self.key} was built under another {data.split} split commitment")
            plan = splits.plan_for(data.split, data.index)
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
        return [AuditTools(AuditToolsConfig(command_timeout=config.command_timeout))]

    async def setup(self, trace: vf.Trace, runtime: vf.Runtime) -> None:
        python = await self._requirements(runtime)
        plan = self.plan
        await runtime.write(".audit-setup.json", programs.materialize_input(plan))
        result = await runtime.run([python, "-c", programs.MATERIALIZE, ".audit-setup.json"], {})
        if result.exit_code:
            raise vf.TaskError(f"task {self.key}: writing the repository failed: {result.stderr.strip()[-500:]}")
        state = trace.state
        state.plan = plan_to_json(plan)
        state.python = python
        state.announced = [f.id for f in plan.findings if f.tier == "surface"]

    async def _requirements(self, runtime: vf.Runtime) -> str:
        probe = await runtime.run(["sh", "-c", programs.PROBE], {})
        missing = programs.missing_requirements(probe.stdout)
        if missing:
            raise vf.TaskError(
                f"task {self.key}: the runtime lacks {', '.join(missing)}; secrets-audit needs git, "
                "git-filter-repo and a Python with pytest where the agent runs (locally: "
                "`uv sync --extra audit`; remote sandboxes: see the README)"
            )
        return programs.probe_python(probe.stdout)

    @vf.stop
    async def step_budget(self, trace: vf.Trace) -> bool:
        return steps_taken(trace) >= self.data.budget

    @vf.intercept
    async def reveal(self, request: vf.Request, trace: vf.Trace) -> vf.Request | None:
        """Append the findings a tool call just revealed to its result."""
        state = trace.state
        if not state.plan:
            return None
        calls = [
            Call(call.name, _arguments(call.arguments))
            for message in request.messages
            if isinstance(message, vf.AssistantMessage)
            for call in message.tool_calls or []
        ]
        state.steps = len(calls)
        last = request.messages[-1] if request.messages else None
        if not isinstance(last, vf.ToolMessage) or not isinstance(last.content, str) or not last.content:
            return None  # an empty result is the pre-call probe: rewriting it would deny the call
        plan = self.plan
        audit_calls = [c for c in calls if c.tool in AUDIT_TOOLS]
        new = [f for f in visible(plan, audit_calls, state.fixed) if f not in state.announced]
        if not new:
            return None
        state.announced = [*state.announced, *new]
        by_id = {f.id: f for f in plan.findings}
        notes = [f"- {i}: {by_id[i].kind} at {by_id[i].path}:{by_id[i].line} ({by_id[i].tier})" for i in new]
        text = last.content + "\n\nNewly revealed findings:\n" + "\n".join(notes)
        messages = [*request.messages[:-1], last.model_copy(update={"content": text})]
        return request.model_copy(update={"messages": messages})

    async def finalize(self, trace: vf.Trace, runtime: vf.Runtime) -> None:
        plan = self.plan
        facts = await self._facts(runtime, trace.state.python, steps_taken(trace))
        facts["revealed"] = sorted(set(trace.state.announced))
        trace.info["audit"] = facts
        trace.info["environment"] = identity(self.data.split)
        trace.info["task_seed"] = plan.seed

    async def _facts(self, runtime: vf.Runtime, python: str, steps: int) -> dict:
        plan = self.plan
        python = python or await self._requirements(runtime)
        await runtime.write(".audit-collect.json", programs.collect_input(plan, ".", self.config.command_timeout))
        result = await runtime.run([python, "-c", programs.COLLECT, ".audit-collect.json", ".audit-facts.json"], {})
        if result.exit_code:
            raise vf.TaskError(f"task {self.key}: collecting the repository failed: {result.stderr.strip()[-500:]}")
        raw = await runtime.read(".audit-facts.json", max_bytes=MAX_COLLECT_READ)
        await runtime.run(["rm", "-f", ".audit-facts.json"], {})
        collected = await asyncio.to_thread(programs.parse_collected, plan, raw)
        return await asyncio.to_thread(programs.facts, plan, collected, steps, [])

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
        facts = await self._facts(runtime, "", steps=1)
        return score_facts(facts, self.data.budget).total == 1.0


def _arguments(raw: str) -> dict:
    import json

    try:
        value = json.loads(raw or "{}")
    except ValueError:
        return {}
    return value if isinstance(value, dict) else {}


class SecretsAuditConfig(vf.TasksetConfig):
    split: Literal["train", "dev", "private_eval"] = "dev"
    """Which split to load: train (unbounded), dev (52 tasks) or private_eval (needs the secret)."""
    size: int | None = None
    """Number of tasks; default 52 for dev and private_eval, unbounded for train."""
    task: SecretsAuditTaskConfig = SecretsAuditTaskConfig()
    """Per-task knobs under `--env.taskset.task.*`."""

    @model_validator(mode="after")
    def _check(self) -> SecretsAuditConfig:
        if self.size is not None and self.size < 1:
            raise ValueError(f"size must be positive, got {self.size}")
        if self.split == "dev" and self.size is not None and self.size > splits.DEV_SIZE:
            raise ValueError(f"dev has {splits.DEV_SIZE} tasks; size {self.size} is too large")
        return self


class SecretsAuditTaskset(vf.Taskset[SecretsAuditTask, SecretsAuditConfig]):
    def __init__(self, config: SecretsAuditConfig) -> None:
        super().__init__(config)
        self.INFINITE = config.split == "train" and config.size is None
        splits.commitment(config.split)  # private_eval without its secret fails here, by name
        # NOTE: the agent's shell can read /proc/<pid>/environ of this process; see redaction_pressure/seal.py.
        scrub_initial_environ(shared_splits.PRIVATE_ENV)

    def load(self) -> Iterator[SecretsAuditTask]:
        config = self.config
        size = config.size
        if size is None and config.split != "train":
            size = splits.DEV_SIZE
        for index in itertools.count() if size is None else range(size):
            plan = splits.plan_for(config.split, index)
            text = prompt(plan)
            yield SecretsAuditTask(
                SecretsAuditData(
                    id=f"audit-{config.split}-{index:05d}",
                    name=f"{plan.scenario} ({config.split} {index})",
                    prompt=text.user,
                    system_prompt=text.system,
                    split=config.split,
                    index=index,
                    scenario=plan.scenario,
                    difficulty=plan.difficulty,
                    budget=plan.budget,
                    environment=identity(config.split),
                ),
                config.task,
            )


__all__ = ["SecretsAuditTaskset"]
