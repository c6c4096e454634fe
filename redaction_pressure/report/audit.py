"""secrets-audit runs in the report: what an agent fixed, what it broke, what it left, step by step.

`load_episode` reads one secrets-audit trace defensively (the grader's facts in
`trace.info["audit"]` are read by key, and a missing or reshaped key reads as empty):
rewards, the `parts` metrics (detection, health, efficiency, leaks, tests, steps), the
scenario, difficulty and step budget of the task, and the tool-call timeline (each
command, its output shortened, and the findings the taskset revealed after it).
`summarise` and `breakdown` aggregate over tasks (the rollouts of a task, `vf-eval -r N`,
are grouped first: the mean reward is the mean of task means, its interval resamples
tasks) and count leaks and tests over scored rollouts; errored ones are counted apart.
Leaks left are placed by tier with the task's plan, rebuilt from its public split and
index (never for private_eval, whose leaks read tier `private`).
"""

from __future__ import annotations

import json
from collections import Counter, defaultdict
from dataclasses import dataclass, field

from redaction_pressure.report import stats
from redaction_pressure.report.stats import Interval
from redaction_pressure.report.tasks import group_tasks

OUTPUT_CHARS = 600
"""A tool result is shown cut to its first and last characters, this many in all."""
REVEALED = "Newly revealed findings:"


@dataclass(frozen=True)
class Step:
    command: str
    output: str
    """Shortened (middle cut, labelled)."""
    revealed: tuple[str, ...] = ()


@dataclass(frozen=True)
class AuditEpisode:
    task_id: str
    split: str
    index: int
    scenario: str
    difficulty: str
    budget: int
    reward: float
    metrics: dict[str, float]
    facts: dict
    identity: dict[str, str]
    started: float | None
    steps: tuple[Step, ...] = ()
    answer: str = ""
    error: str = ""
    key: str = ""
    """The task's key as the trace records it; "" in traces without one."""

    @property
    def errored(self) -> bool:
        return bool(self.error)

    @property
    def private(self) -> bool:
        return self.split == "private_eval"

    def metric(self, name: str) -> float:
        return self.metrics.get(name, 0.0)

    @property
    def components(self) -> dict[str, float]:
        return {"audit": self.reward}

    @property
    def leaks(self) -> list[tuple[str, str, str]]:
        """(secret id, location `working tree` or `history`, where) of every leak left."""
        left = self.facts.get("left")
        found = []
        if isinstance(left, dict):
            for secret, where in left.items():
                if not isinstance(where, dict):
                    continue
                for path in where.get("tree") or ():
                    found.append((str(secret), "working tree", str(path)))
                for commit in where.get("history") or ():
                    found.append((str(secret), "history", str(commit)))
        return found


def load_episode(trace: dict, error: str) -> tuple[AuditEpisode, str]:
    data = trace["task"]["data"]
    rewards = trace.get("rewards") or {}
    info = trace.get("info") or {}
    facts = info.get("audit") if isinstance(info.get("audit"), dict) else {}
    steps, answer = timeline(trace.get("nodes") or [])
    episode = AuditEpisode(
        task_id=str(data.get("id") or f"{data['split']}-{int(data['index']):05d}"),
        split=str(data["split"]),
        index=int(data["index"]),
        scenario=str(data.get("scenario") or "?"),
        difficulty=str(data.get("difficulty") or "?"),
        budget=int(data.get("budget") or 0),
        reward=sum(float(value["score"]) * float(value["weight"]) for value in rewards.values()),
        metrics={name: float(value) for name, value in (trace.get("metrics") or {}).items() if _number(value)},
        facts=facts,
        identity={k: str(v) for k, v in (info.get("environment") or data.get("environment") or {}).items()},
        started=(trace.get("timing") or {}).get("start"),
        steps=steps,
        answer=answer,
        error=error,
        key=str(trace["task"].get("key") or ""),
    )
    model = ((trace.get("agent") or {}).get("config") or {}).get("model") or "unknown"
    return episode, str(model)


def _number(value) -> bool:
    return isinstance(value, int | float) and not isinstance(value, bool)


def _text(content) -> str:
    if isinstance(content, str):
        return content
    if isinstance(content, list):
        return "".join(part.get("text", "") for part in content if isinstance(part, dict))
    return ""


def _messages(nodes: list[dict]) -> list[dict]:
    """Every message of the trace's nodes in order, each once (a node may repeat its prompt)."""
    seen, ordered = set(), []
    for node in nodes:
        candidates = []
        for key in ("prompt", "messages", "completion"):
            value = node.get(key)
            if isinstance(value, list):
                candidates.extend(value)
        if isinstance(node.get("message"), dict):
            candidates.append(node["message"])
        for message in candidates:
            if not isinstance(message, dict):
                continue
            key = json.dumps(message, sort_keys=True, default=str)
            if key not in seen:
                seen.add(key)
                ordered.append(message)
    return ordered


def timeline(nodes: list[dict]) -> tuple[tuple[Step, ...], str]:
    """(tool-call steps, final text answer) from a trace's messages."""
    steps: list[list] = []
    pending: dict[str, int] = {}
    answer = ""
    for message in _messages(nodes):
        role = message.get("role")
        if role == "assistant":
            calls = message.get("tool_calls") or []
            for call in calls:
                function = call.get("function") or call
                arguments = function.get("arguments")
                if isinstance(arguments, str):
                    try:
                        arguments = json.loads(arguments)
                    except ValueError:
                        arguments = {"command": arguments}
                command = arguments.get("command") if isinstance(arguments, dict) else None
                command = command if isinstance(command, str) else json.dumps(arguments)
                name = str(function.get("name") or "tool")
                pending[str(call.get("id") or len(steps))] = len(steps)
                steps.append([command if name == "bash" else f"{name} {command}", "", ()])
            if not calls and _text(message.get("content")):
                answer = _text(message.get("content"))
        elif role == "tool":
            at = pending.get(str(message.get("tool_call_id")), len(steps) - 1)
            if 0 <= at < len(steps):
                text = _text(message.get("content"))
                output, _, notes = text.partition("\n\n" + REVEALED)
                revealed = tuple(line.removeprefix("- ").strip() for line in notes.splitlines() if line.strip())
                steps[at][1], steps[at][2] = shorten(output), revealed
    return tuple(Step(command, output, revealed) for command, output, revealed in steps), answer


def shorten(text: str, limit: int = OUTPUT_CHARS) -> str:
    if len(text) <= limit:
        return text
    half = limit // 2
    return f"{text[:half]}\n[… {len(text) - 2 * half} characters …]\n{text[-half:]}"


@dataclass(frozen=True)
class AuditSummary:
    """Figures of a run or a group of its tasks: rewards over tasks, counts over scored rollouts."""

    tasks: int
    reward: Interval
    """The mean over tasks of per-task mean rewards, its interval resampling tasks."""
    detection: float
    health: float
    efficiency: float
    leaks_initial: int
    leaks_left: int
    tests_passed: int
    tests_total: int
    steps: float
    """Mean share of the step budget used."""
    errored: int = 0
    """Errored rollouts."""
    errored_reasons: dict[str, int] = field(default_factory=dict)
    rollouts: int = 0
    per_task: int = 1
    """The most rollouts a task has (vf-eval's -r)."""
    pass_at: dict[int, float] = field(default_factory=dict)
    """pass@k (k = 1 .. r) over tasks; shown when a task has several rollouts."""
    within_std: float | None = None
    """Mean over tasks of the std of their rollouts' rewards (None with one rollout each)."""
    scored_tasks: int = 0

    @property
    def scored(self) -> int:
        """Scored rollouts."""
        return self.rollouts - self.errored


def summarise(episodes) -> AuditSummary:
    """Task-level figures of these episodes (rollouts grouped by task first)."""
    tasks = group_tasks(episodes)
    scored = [e for e in episodes if not e.errored]
    errored = [e for e in episodes if e.errored]
    rewards = [task.rewards for task in tasks]

    def over_tasks(metric) -> float:
        return stats.mean(task.mean_of(metric) for task in tasks if not task.errored)

    return AuditSummary(
        tasks=len(tasks),
        reward=stats.task_bootstrap(rewards),
        detection=over_tasks(lambda e: e.metric("detection")),
        health=over_tasks(lambda e: e.metric("health")),
        efficiency=over_tasks(lambda e: e.metric("efficiency")),
        leaks_initial=int(sum(e.metric("leaks_initial") for e in scored)),
        leaks_left=int(sum(e.metric("leaks_left") for e in scored)),
        tests_passed=int(sum(e.metric("tests_passed") for e in scored)),
        tests_total=int(sum(e.metric("tests_total") for e in scored)),
        steps=stats.mean(e.metric("steps") / e.budget for e in scored if e.budget),
        errored=len(errored),
        errored_reasons=dict(Counter(e.error for e in errored).most_common()),
        rollouts=len(episodes),
        per_task=max((len(task.rollouts) for task in tasks), default=1),
        pass_at=stats.pass_curve(rewards),
        within_std=stats.mean_within_std(rewards),
        scored_tasks=sum(not task.errored for task in tasks),
    )


def breakdown(episodes) -> list[tuple[str, str, AuditSummary]]:
    """(scenario, difficulty, summary) of each group of scored and errored episodes."""
    groups: dict[tuple[str, str], list] = defaultdict(list)
    for episode in episodes:
        groups[(episode.scenario, episode.difficulty)].append(episode)
    order = {"easy": 0, "medium": 1, "hard": 2}
    return [
        (s, d, summarise(group))
        for (s, d), group in sorted(groups.items(), key=lambda i: (i[0][0], order.get(i[0][1], 9)))
    ]


def leaks_by_tier(episodes) -> dict[tuple[str, str], int]:
    """Leaks left over the scored episodes, counted by (tier, location)."""
    counts: Counter[tuple[str, str]] = Counter()
    for episode in episodes:
        if episode.errored:
            continue
        tiers = _tiers(episode)
        for secret, location, where in episode.leaks:
            tier = tiers.get((secret, where)) or tiers.get((secret, "")) or "unknown"
            counts[(tier, location)] += 1
    return dict(sorted(counts.items()))


def _tiers(episode) -> dict[tuple[str, str], str]:
    if episode.private:
        return {}
    try:
        from redaction_pressure.audit.splits import level_of, plan_for

        plan = plan_for(episode.split, episode.index, difficulty=level_of(episode.difficulty))
    except Exception:  # noqa: BLE001 - another corpus version or a missing extra: tiers read unknown
        return {}
    tiers: dict[tuple[str, str], str] = {}
    for finding in plan.findings:
        tiers.setdefault((finding.secret, finding.path), finding.tier)
        tiers.setdefault((finding.secret, ""), finding.tier)
    return tiers


LADDERS = {"standard": "ladder_dev.json", "expert": "ladder_dev_expert.json"}
"""The secrets-audit ladder on each level's dev tasks (`baselines --taskset secrets-audit [--difficulty
expert] --json`), shipped with the package."""


@dataclass(frozen=True)
class Ladder:
    """The reference policies' dev means at one level beside a run's: per scenario and overall."""

    level: str
    policies: tuple[str, ...]
    overall: dict[str, float]
    scenarios: list[tuple[str, dict[str, float]]]
    note: str


def ladders(episodes) -> list[Ladder]:
    """The dev ladder of each level this run's tasks are at (an unknown difficulty counts as standard),
    beside this run's means there; a level whose shipped ladder cannot be read is left out."""
    from redaction_pressure.audit.splits import level_of

    levels = sorted({level_of(e.difficulty) for e in episodes}, key=list(LADDERS).index)
    shown = [ladder(episodes, level) for level in levels or ["standard"]]
    return [one for one in shown if one is not None]


def ladder(episodes, level: str = "standard") -> Ladder | None:
    """The dev ladder at `level` beside this run's means on that level's tasks, or None when the
    shipped ladder cannot be read."""
    from importlib import resources

    from redaction_pressure.audit.splits import level_of

    try:
        data = json.loads(resources.files("redaction_pressure.audit").joinpath(LADDERS[level]).read_text())
    except (OSError, ValueError):
        return None
    rows = {row["policy"]: row for row in data.get("ladder", [])}
    policies = tuple(rows)
    episodes = [e for e in episodes if level_of(e.difficulty) == level]
    scored = [e for e in episodes if not e.errored]
    tasks = [task for task in group_tasks(episodes) if not task.errored]
    mine: dict[str, list[float]] = {}
    for task in tasks:
        mine.setdefault(task.first.scenario, []).append(task.reward)
    scenarios = []
    for name in sorted({s for row in rows.values() for s in row.get("scenarios", {})}):
        means = {p: rows[p]["scenarios"].get(name) for p in policies}
        if name in mine:
            means["this run"] = sum(mine[name]) / len(mine[name])
        scenarios.append((name, means))
    overall = {p: rows[p]["total"] for p in policies}
    if tasks:
        overall["this run"] = stats.mean(task.reward for task in tasks)
    versions = {e.identity.get("audit_version") for e in scored} - {None, ""}
    note = f"{level} level, dev, {data.get('tasks')} tasks, audit version {data.get('audit_version')}"
    if versions and versions != {data.get("audit_version")}:
        note += (
            f"; this run's repositories are audit version {', '.join(sorted(versions))}, so the ladder is not theirs"
        )
    return Ladder(level, ("this run", *policies), overall, scenarios, note)
