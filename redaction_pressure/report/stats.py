"""Run statistics shared by both tasksets' reports: task means, their bootstrap interval, pass@k.

A task is the unit of a run: with several rollouts per task (`vf-eval -r N`), the rollouts of
one task are not independent samples of the model's skill, so every figure here is computed
over tasks. The headline mean is the mean over tasks of each task's mean reward; its interval
is a 95% percentile bootstrap that resamples tasks (never rollouts), with a fixed seed, so a
report of the same traces always shows the same figures and more rollouts of the same tasks
cannot narrow it by pretending to be more tasks.

pass@k is the chance that at least one of k rollouts drawn without replacement from a task's
n passes, estimated without bias from its c passing rollouts as 1 - C(n-c, k) / C(n, k)
(Chen et al. 2021), then averaged over tasks. A rollout passes when its reward is the
taskset's full score, `PASS_REWARD` (1.0), up to float rounding.

Everything here is a pure function of the numbers it is given.
"""

from __future__ import annotations

import math
from dataclasses import dataclass

import numpy as np

BOOTSTRAP_RESAMPLES = 10_000
BOOTSTRAP_SEED = 20_261_130
PASS_REWARD = 1.0
"""A rollout passes when its reward reaches this (the full score)."""
PASS_TOLERANCE = 1e-9
"""Rewards are sums of weighted parts: a full score may read 0.9999999999."""


@dataclass(frozen=True)
class Interval:
    """A mean and its 95% bootstrap interval."""

    mean: float
    low: float
    high: float


def bootstrap(values: list[float]) -> Interval:
    """The mean of `values` with a 95% percentile bootstrap interval (each value one unit)."""
    data = np.asarray(values, dtype=float)
    if data.size == 0:
        return Interval(0.0, 0.0, 0.0)
    rng = np.random.default_rng(BOOTSTRAP_SEED)
    means = data[rng.integers(0, data.size, size=(BOOTSTRAP_RESAMPLES, data.size))].mean(axis=1)
    low, high = np.percentile(means, [2.5, 97.5])
    return Interval(float(data.mean()), float(low), float(high))


def mean(values) -> float:
    """The plain mean (0.0 of nothing: callers say "none scored" themselves)."""
    values = list(values)
    return sum(values) / len(values) if values else 0.0


def task_means(tasks: list[list[float]]) -> list[float]:
    """Each task's mean reward over its rollouts; a task with none is left out."""
    return [mean(rewards) for rewards in tasks if rewards]


def task_bootstrap(tasks: list[list[float]]) -> Interval:
    """The mean over tasks of per-task mean rewards, with an interval resampling tasks.

    A task is resampled whole (its mean stands for all its rollouts), so r rollouts of one
    task weigh as much as one rollout of another and never count as r tasks."""
    return bootstrap(task_means(tasks))


def std(values: list[float]) -> float | None:
    """The sample standard deviation (n - 1), or None for fewer than two values."""
    if len(values) < 2:
        return None
    return float(np.std(np.asarray(values, dtype=float), ddof=1))


def mean_within_std(tasks: list[list[float]]) -> float | None:
    """The mean over tasks (with at least two rollouts) of each task's reward std; None if none has two."""
    spreads = [spread for spread in map(std, tasks) if spread is not None]
    return mean(spreads) if spreads else None


def passed(reward: float) -> bool:
    """Whether a rollout's reward is the full score."""
    return reward >= PASS_REWARD - PASS_TOLERANCE


def pass_at_k(n: int, c: int, k: int) -> float:
    """The unbiased pass@k of one task with n rollouts of which c passed: 1 - C(n-c, k) / C(n, k)."""
    if not 0 <= c <= n or not 1 <= k <= n:
        raise ValueError(f"pass@k needs 0 <= c <= n and 1 <= k <= n; got n={n}, c={c}, k={k}")
    if n - c < k:
        return 1.0
    return 1.0 - math.comb(n - c, k) / math.comb(n, k)


def pass_curve(tasks: list[list[float]]) -> dict[int, float]:
    """pass@k averaged over tasks, for k = 1 .. the fewest rollouts any scored task has.

    Empty when no task has a rollout. A task whose rollouts partly errored has fewer
    scored rollouts, and k stops where every task can still be drawn k times."""
    scored = [rewards for rewards in tasks if rewards]
    if not scored:
        return {}
    counts = [(len(rewards), sum(map(passed, rewards))) for rewards in scored]
    top = min(n for n, _ in counts)
    return {k: mean(pass_at_k(n, c, k) for n, c in counts) for k in range(1, top + 1)}
