"""redaction-pressure's taskset as the tests drive it: `tasks(split)`, `make_trace` (a trace as a
rollout leaves it), `scored` (that trace scored by its task) and `oracle_reply`.
"""

from __future__ import annotations

import asyncio

import verifiers.v1 as vf

from redaction_pressure.redact import policies
from redaction_pressure.redact.api import load_task
from redaction_pressure.redact.taskset import (
    RedactionPressureConfig,
    RedactionPressureTask,
    RedactionPressureTaskset,
)


def tasks(split: str = "dev", **config) -> list[RedactionPressureTask]:
    return list(RedactionPressureTaskset(RedactionPressureConfig(split=split, **config)))


def make_trace(task: RedactionPressureTask, reply: str | None) -> vf.Trace:
    """A trace as a rollout leaves it: the prompt, then the model's reply (if any)."""
    nodes = [vf.MessageNode(message=vf.UserMessage(content=task.data.prompt))]
    if reply is not None:
        nodes.append(vf.MessageNode(parent=0, message=vf.AssistantMessage(content=reply), sampled=True))
    return vf.Trace(
        task=vf.TraceTask(type=type(task).__name__, data=task.data, key=task.key, hash=task.hash),
        agent=vf.AgentInfo(config=vf.AgentConfig(runtime=vf.SubprocessConfig()), name="test"),
        nodes=nodes,
    )


def scored(task: RedactionPressureTask, reply: str | None) -> vf.Trace:
    trace = make_trace(task, reply)
    asyncio.run(task.score(trace))
    return trace


def oracle_reply(task: RedactionPressureTask) -> str:
    hidden = load_task(
        task.data.split, task.data.index, shown=task.data.shown_count, hidden=task.data.hidden_count
    ).hidden
    return policies.reply(policies.oracle_rules(hidden))
