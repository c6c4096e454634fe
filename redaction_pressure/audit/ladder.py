"""The secrets-audit ladder: non-LLM policies played on local workspaces, to show where the reward lands.

Why: a learned policy's reward means something only beside the ceiling, the floor and what cheap
tricks earn. The rungs: `oracle` (the gold fix as one command), `scripted` (the format-aware
scripted agent, `agent/`), `memoriser` (one script per scenario learned from train tasks
`memoriser.TRAIN_TASKS`: what recall alone earns; it never plays the tasks it learned from),
`generic` (the strongest program agent we wrote without a model: one bash call, `generic.sh`, written
from the expert level's prompt and train tasks alone; what a script earns without learning) and
`inaction` (no tool call). Every episode runs in its own `LocalWorkspace` (about 2 s to set up,
act and grade), at most `WORKERS` at once in spawned processes.
"""

from __future__ import annotations

from collections import defaultdict
from collections.abc import Callable, Sequence
from concurrent.futures import ProcessPoolExecutor, as_completed
from dataclasses import dataclass, field
from multiprocessing import get_context
from statistics import fmean

from redaction_pressure.audit import agent, memoriser
from redaction_pressure.audit.plan import RepoPlan

WORKERS = 2
POLICIES: dict[str, str] = {
    "oracle": "the gold remediation (programs.oracle_script) in one command: the ceiling",
    "scripted": "the scripted agent: scanner formats, environment lookups, filter-repo (agent.py)",
    "memoriser": f"one script per scenario learned from train tasks {memoriser.TRAIN_TASKS.start}..{memoriser.TRAIN_TASKS.stop - 1} (edits, files, history patterns), replayed",
    "generic": "a program agent in one bash call (generic.sh): finds secrets by format, encodings and names, fixes, rewrites history",
    "inaction": "no tool call: the floor",
}  # fmt: skip
GENERIC_TIMEOUT = 900
"""Seconds the generic agent's one call may run; past it the repository is graded as it was left."""


@dataclass(frozen=True)
class Outcome:
    """One scored episode."""

    index: int
    scenario: str
    policy: str
    total: float
    detection: float
    health: float
    steps: int


@dataclass(frozen=True)
class LadderRow:
    """One policy's means over the tasks it played (None when it played none)."""

    policy: str
    description: str
    tasks: int
    total: float | None = None
    detection: float | None = None
    health: float | None = None
    scenarios: dict[str, float] = field(default_factory=dict)
    """Scenario -> mean total."""
    note: str = ""


def eligible(split: str, indices: Sequence[int], policy: str) -> list[int]:
    """The tasks a policy plays: the memoriser skips the train tasks it learned from."""
    if policy == "memoriser" and split == "train":
        return [i for i in indices if i not in memoriser.TRAIN_TASKS]
    return list(indices)


def _scored(plan: RepoPlan, workspace, steps: int) -> agent.Episode:
    from redaction_pressure.audit.rubric import score

    facts = workspace.facts(steps)
    result = score(plan, facts)
    return agent.Episode(steps, facts, result.total, result.detection, result.health)


def _oracle(plan: RepoPlan, workspace, model: dict | None) -> agent.Episode:
    from redaction_pressure.audit.programs import oracle_script

    done = workspace.bash(oracle_script(plan))
    if done.returncode:
        raise RuntimeError(f"the oracle failed on {plan.scenario} seed {plan.seed}: {done.stderr.strip()[-300:]}")
    return _scored(plan, workspace, 1)


def _generic(plan: RepoPlan, workspace, model: dict | None) -> agent.Episode:
    import subprocess
    from importlib import resources

    script = resources.files("redaction_pressure.audit").joinpath("generic.sh").read_text()
    try:
        workspace.bash(script, timeout=GENERIC_TIMEOUT)
    except subprocess.TimeoutExpired:
        pass  # graded as it was left, like an agent whose call timed out
    return _scored(plan, workspace, 1)


PLAYERS: dict[str, Callable[[RepoPlan, object, dict | None], agent.Episode]] = {
    "oracle": _oracle,
    "scripted": lambda plan, workspace, model: agent.play(plan, workspace),
    "memoriser": lambda plan, workspace, model: memoriser.play(model, plan, workspace),
    "generic": _generic,
    "inaction": lambda plan, workspace, model: _scored(plan, workspace, 0),
}


def episode(split: str, index: int, policy: str, model: dict | None = None, level: str = "standard") -> Outcome:
    """Play one policy on one task of `level` in a fresh local workspace and score it."""
    from redaction_pressure.audit.local import LocalWorkspace
    from redaction_pressure.audit.splits import plan_for

    plan = plan_for(split, index, difficulty=level)
    with LocalWorkspace(plan) as workspace:
        played = PLAYERS[policy](plan, workspace, model)
    return Outcome(index, plan.scenario, policy, played.total, played.detection, played.health, played.steps)


def _play_all(
    jobs: list[tuple[str, int, str]],
    model: dict | None,
    advance: Callable[[], None] | None,
    workers: int,
    level: str = "standard",
) -> list[Outcome]:
    """Every job's outcome; in a pool of spawned processes (no inherited threads) when there are several."""
    outcomes = []
    if workers <= 1 or len(jobs) <= 1:
        for split, index, policy in jobs:
            outcomes.append(episode(split, index, policy, model, level))
            if advance:
                advance()
        return outcomes
    with ProcessPoolExecutor(max_workers=min(workers, len(jobs)), mp_context=get_context("spawn")) as pool:
        futures = [pool.submit(episode, split, index, policy, model, level) for split, index, policy in jobs]
        try:
            for future in as_completed(futures):
                outcomes.append(future.result())
                if advance:
                    advance()
        except BaseException:
            for future in futures:
                future.cancel()
            raise
    return outcomes


def _row(policy: str, outcomes: list[Outcome], note: str) -> LadderRow:
    if not outcomes:
        return LadderRow(policy, POLICIES[policy], 0, note=note)
    by_scenario: dict[str, list[float]] = defaultdict(list)
    for outcome in outcomes:
        by_scenario[outcome.scenario].append(outcome.total)
    return LadderRow(
        policy=policy,
        description=POLICIES[policy],
        tasks=len(outcomes),
        total=fmean(o.total for o in outcomes),
        detection=fmean(o.detection for o in outcomes),
        health=fmean(o.health for o in outcomes),
        scenarios={name: fmean(totals) for name, totals in sorted(by_scenario.items())},
        note=note,
    )


def run_ladder(
    split: str,
    indices: Sequence[int],
    policies: Sequence[str] = tuple(POLICIES),
    advance: Callable[[], None] | None = None,
    workers: int = WORKERS,
    level: str = "standard",
) -> list[LadderRow]:
    """Score every policy on the tasks of `split` at `level` at `indices`; `advance` is called once per episode."""
    unknown = sorted(set(policies) - set(POLICIES))
    if unknown:
        raise ValueError(f"unknown policy {', '.join(unknown)}; choose from {', '.join(POLICIES)}")
    plays = {policy: eligible(split, indices, policy) for policy in policies}
    model = memoriser.trained(level) if plays.get("memoriser") else None
    jobs = [(split, index, policy) for policy in policies for index in plays[policy]]
    outcomes = _play_all(jobs, model, advance, workers, level)
    rows = []
    for policy in policies:
        skipped = len(indices) - len(plays[policy])
        note = f"{skipped} train task(s) it learned from left out" if skipped else ""
        rows.append(_row(policy, sorted((o for o in outcomes if o.policy == policy), key=lambda o: o.index), note))
    return rows
