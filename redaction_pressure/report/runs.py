"""Read vf-eval and vf-replay output: the episodes of one run, as the report needs them.

A run is one `traces.jsonl` (vf-eval writes it under `OUT/<taskset>--<model>--...`,
vf-replay straight under its `-o` folder). Every line is an episode holding traces; each
redaction-pressure trace becomes one `Episode` with what the trace itself says: the task
data (split, index, sizes, prompt), the model's reply, rewards, metrics and the
identity block scoring wrote. Nothing here rebuilds a task or reads the private secret.

With `vf-eval -r N` a task is played N times, each rollout its own line. `Run.tasks` groups
the rollouts by the task's key (`trace.task.key`, the taskset's durable id; the task id for
traces without one), so a report counts, links and resamples tasks, not rollouts.

A file that is not such output fails with `ReportError` naming the file and line.
"""

from __future__ import annotations

import json
from dataclasses import dataclass
from datetime import UTC, datetime
from functools import cached_property
from pathlib import Path

from redaction_pressure.corpus import DEFAULT_DIFFICULTY
from redaction_pressure.report.tasks import TaskRollouts, group_tasks

TASKSET_ID = "redaction-pressure"
AUDIT_TASKSET_ID = "secrets-audit"
TRACES_FILE = "traces.jsonl"


class ReportError(ValueError):
    """Input the report cannot read: a missing folder, a foreign or broken traces file."""


@dataclass(frozen=True)
class Episode:
    """One scored trace of a run."""

    task_id: str
    split: str
    index: int
    shown: int
    hidden: int
    prompt: str
    """The user prompt the model saw (the shown records)."""
    reply: str | None
    """The model's last answer, or None when it never answered."""
    reward: float
    components: dict[str, float]
    metrics: dict[str, float]
    errors: tuple[dict, ...]
    """The redaction errors scoring recorded (code, rule, record, detail)."""
    failures: tuple[str, ...]
    """Errors of the episode itself (timeouts, crashes) as verifiers recorded them."""
    identity: dict[str, str]
    started: float | None
    error: str = ""
    """Why the episode errored ("ProviderError: ...", "agent_timeout"), or "" when it was scored.
    An errored episode's reward is not a score: it is left out of every mean."""
    key: str = ""
    """The task's key as the trace records it (`dev-00003-k4-m8`); "" in traces without one."""
    difficulty: str = DEFAULT_DIFFICULTY
    """The corpus level the task was built at (traces before levels existed hold none: standard)."""

    @property
    def errored(self) -> bool:
        return bool(self.error)

    @property
    def private(self) -> bool:
        return self.split == "private_eval"

    def metric(self, name: str) -> float:
        return self.metrics.get(name, 0.0)


@dataclass(frozen=True)
class Run:
    """The episodes of one traces file, in task order."""

    path: Path
    label: str
    model: str
    episodes: tuple
    """`Episode`s, or `audit.AuditEpisode`s for a secrets-audit run."""
    taskset: str = TASKSET_ID

    @cached_property
    def tasks(self) -> tuple[TaskRollouts, ...]:
        """The run's tasks, each with its rollouts."""
        return group_tasks(self.episodes)

    @property
    def rollouts_per_task(self) -> int:
        """The most rollouts any task has (vf-eval's -r; 1 for an ordinary run)."""
        return max((len(task.rollouts) for task in self.tasks), default=0)

    @property
    def splits(self) -> tuple[str, ...]:
        return tuple(sorted({episode.split for episode in self.episodes}))

    @property
    def private(self) -> bool:
        return any(episode.private for episode in self.episodes)

    @property
    def identity(self) -> dict[str, str]:
        """The identity block shared by every episode (fields that differ read `(varies)`)."""
        keys = dict.fromkeys(key for episode in self.episodes for key in episode.identity)
        block = {}
        for key in keys:
            values = {episode.identity.get(key, "") for episode in self.episodes}
            block[key] = values.pop() if len(values) == 1 else "(varies)"
        return block

    @property
    def date(self) -> str:
        starts = [episode.started for episode in self.episodes if episode.started]
        if not starts:
            return "unknown"
        return datetime.fromtimestamp(min(starts), UTC).strftime("%Y-%m-%d %H:%M UTC")


def find_runs(paths: list[Path]) -> list[Run]:
    """Every run under the given folders (or traces files), in the order given."""
    runs: list[Run] = []
    for path in paths:
        if path.is_file():
            files = [path]
        elif path.is_dir():
            files = sorted(path.rglob(TRACES_FILE))
            if not files:
                raise ReportError(f"{path}: no {TRACES_FILE} in this folder (is it a vf-eval or vf-replay output?)")
        else:
            raise ReportError(f"{path}: no such file or folder")
        runs.extend(load_run(file) for file in files)
    labels: dict[str, int] = {}
    named = []
    for run in runs:
        seen = labels[run.label] = labels.get(run.label, 0) + 1
        named.append(run if seen == 1 else Run(run.path, f"{run.label} ({seen})", run.model, run.episodes, run.taskset))
    return named


def load_run(path: Path) -> Run:
    """The run saved in one traces file."""
    episodes: list = []
    models: set[str] = set()
    tasksets: set[str] = set()
    try:
        lines = path.read_text(encoding="utf-8").splitlines()
    except (OSError, UnicodeDecodeError) as exc:
        raise ReportError(f"{path}: cannot read it ({exc})") from None
    for number, line in enumerate(lines, start=1):
        if not line.strip():
            continue
        try:
            saved = json.loads(line)
            traces = saved["traces"]
        except (ValueError, KeyError, TypeError):
            raise ReportError(f"{path}, line {number}: not a saved episode (no JSON object with traces)") from None
        for trace in traces:
            episode, model, taskset = _episode(trace, f"{path}, line {number}")
            episodes.append(episode)
            models.add(model)
            tasksets.add(taskset)
    if not episodes:
        raise ReportError(f"{path}: holds no episodes")
    if len(tasksets) > 1:
        raise ReportError(f"{path}: mixes {' and '.join(sorted(tasksets))} episodes")
    episodes.sort(key=lambda episode: (episode.split, episode.index))
    model = ", ".join(sorted(models)) or "unknown"
    # A run is named by its model (a built-in policy's name, or the endpoint's model); the folder is provenance.
    label = model if model != "unknown" else path.parent.name if path.parent.name not in ("", ".") else path.name
    return Run(path=path, label=label, model=model, episodes=tuple(episodes), taskset=tasksets.pop())


def _episode(trace: dict, where: str) -> tuple[Episode, str, str]:
    try:
        task = trace["task"]
        data = task["data"]
        if task.get("type") == "SecretsAuditTask":
            from redaction_pressure.report import audit

            episode, model = audit.load_episode(trace, episode_error(trace))
            return episode, model, AUDIT_TASKSET_ID
        if task.get("type") != "RedactionPressureTask":
            raise ReportError(
                f"{where}: a {task.get('type')!r} trace; the report reads {TASKSET_ID} and {AUDIT_TASKSET_ID} runs"
            )
        rewards = trace.get("rewards") or {}
        components = {name: float(value["score"]) for name, value in rewards.items()}
        reward = sum(float(value["score"]) * float(value["weight"]) for value in rewards.values())
        info = trace.get("info") or {}
        episode = Episode(
            task_id=str(data.get("id") or f"{data['split']}-{data['index']:05d}"),
            split=str(data["split"]),
            index=int(data["index"]),
            shown=int(data["shown_count"]),
            hidden=int(data["hidden_count"]),
            prompt=str(data.get("prompt") or ""),
            reply=_reply(trace.get("nodes") or []),
            reward=reward,
            components=components,
            metrics=_metrics(trace.get("metrics") or {}, info.get("secret_kinds") or {}),
            errors=tuple(info.get("redaction_errors") or ()),
            failures=tuple(_failure(error) for error in trace.get("errors") or ()),
            identity={k: str(v) for k, v in (info.get("environment") or data.get("environment") or {}).items()},
            started=(trace.get("timing") or {}).get("start"),
            error=episode_error(trace),
            key=str(task.get("key") or ""),
            difficulty=str(data.get("difficulty") or DEFAULT_DIFFICULTY),
        )
        model = ((trace.get("agent") or {}).get("config") or {}).get("model") or "unknown"
    except (KeyError, TypeError, ValueError) as exc:
        if isinstance(exc, ReportError):
            raise
        raise ReportError(f"{where}: a trace without the expected fields ({exc!r})") from None
    return episode, str(model), TASKSET_ID


ERROR_CHARS = 400
"""Longest error a run names per episode; a longer one ends at its last whole word, marked."""


def _clipped(message: str) -> str:
    if len(message) <= ERROR_CHARS:
        return message
    return message[:ERROR_CHARS].rsplit(" ", 1)[0] + " [...]"


def episode_error(trace: dict) -> str:
    """What made vf-eval give up on a trace ("" when it ran to scoring): the last recorded
    error (`type: message`, as verifiers records provider, harness and setup errors) or an
    expired stage deadline (`is_timeout`, its stop condition)."""
    errors = [error for error in trace.get("errors") or () if error]
    if errors:
        last = errors[-1]
        if isinstance(last, dict):
            kind = str(last.get("type") or "error")
            message = " ".join(str(last.get("message") or "").split())
            return f"{kind}: {_clipped(message)}" if message else kind
        return _clipped(str(last))
    if trace.get("is_timeout"):
        return str(trace.get("stop_condition") or "timeout")
    return ""


def _reply(nodes: list[dict]) -> str | None:
    for node in reversed(nodes):
        message = node.get("message") or {}
        if message.get("role") != "assistant":
            continue
        content = message.get("content")
        if isinstance(content, list):
            content = "".join(part.get("text", "") for part in content if isinstance(part, dict))
        return content if isinstance(content, str) else None
    return None


def _failure(error) -> str:
    if isinstance(error, dict):
        return str(error.get("type") or error.get("code") or error.get("message") or "error")
    return str(error)


def _metrics(metrics: dict, kinds: dict) -> dict[str, float]:
    """The trace's metrics, with the per-kind counts of its info (reward schema 5) as the
    `secrets_<kind>` / `removed_<kind>` entries schema 4 carried among the metrics."""
    merged = {name: float(value) for name, value in metrics.items()}
    for kind, counts in kinds.items():
        if isinstance(counts, dict):
            merged[f"secrets_{kind}"] = float(counts.get("total", 0))
            merged[f"removed_{kind}"] = float(counts.get("removed", 0))
    return merged
