"""A run's episodes grouped by task: one task, its rollouts (several when vf-eval ran with -r).

Shared by both tasksets' reports (`runs` for redaction-pressure, `audit` for secrets-audit) and
by `eval`'s closing line; it imports neither, so neither imports the other through it.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass

__all__ = ["TaskRollouts", "group_tasks"]


@dataclass(frozen=True)
class TaskRollouts:
    """One task of a run with its rollouts (one unless vf-eval ran with -r), in file order."""

    key: str
    rollouts: tuple
    """`Episode`s or `audit.AuditEpisode`s of the same task."""

    @property
    def first(self):
        return self.rollouts[0]

    @property
    def task_id(self) -> str:
        return self.first.task_id

    @property
    def scored(self) -> tuple:
        return tuple(episode for episode in self.rollouts if not episode.errored)

    @property
    def rewards(self) -> list[float]:
        """The scored rollouts' rewards (an errored rollout is not a score)."""
        return [episode.reward for episode in self.scored]

    @property
    def errored(self) -> bool:
        """True when no rollout of the task was scored."""
        return not self.scored

    @property
    def reward(self) -> float:
        """The task's mean reward over its scored rollouts (0.0 when none was scored)."""
        return self.mean_of(lambda episode: episode.reward)

    @property
    def std(self) -> float | None:
        """The sample std of the scored rollouts' rewards (None for fewer than two)."""
        # stats needs numpy, which `eval` does without when it reads a run for its summary.
        from redaction_pressure.report.stats import std

        return std(self.rewards)

    @property
    def passes(self) -> int:
        """Scored rollouts at the full score (`stats.passed`)."""
        from redaction_pressure.report.stats import passed

        return sum(map(passed, self.rewards))

    def mean_of(self, value: Callable) -> float:
        """The mean of `value(rollout)` over the scored rollouts (0.0 when none was scored)."""
        scored = self.scored
        return sum(value(episode) for episode in scored) / len(scored) if scored else 0.0

    def component(self, name: str) -> float:
        """A reward component's mean over the scored rollouts."""
        return self.mean_of(lambda episode: episode.components.get(name, 0.0))

    def metric(self, name: str) -> float:
        """A metric's mean over the scored rollouts."""
        return self.mean_of(lambda episode: episode.metric(name))


def group_tasks(episodes) -> tuple[TaskRollouts, ...]:
    """The episodes grouped by task key, tasks in order of first appearance."""
    groups: dict[str, list] = {}
    for episode in episodes:
        groups.setdefault(episode.key or episode.task_id, []).append(episode)
    return tuple(TaskRollouts(key, tuple(rollouts)) for key, rollouts in groups.items())
