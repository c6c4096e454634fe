"""What the report says about a run: summaries with bootstrap intervals, and each record's marks.

Summaries are over a run's tasks: a task played several times (`vf-eval -r N`) counts once,
by the mean of its scored rollouts, so the headline is the mean over tasks of per-task means
and its percentile bootstrap (10,000 resamples, a fixed seed, so a report is reproducible)
resamples tasks, not rollouts. With several rollouts per task the summary adds pass@k and
the spread of rewards within a task (`stats`). A comparison pairs two runs by task key and
bootstraps the mean of the per-task differences of task means.

Marks show what a public episode's rules removed from each hidden record. The task is
rebuilt from its (split, index, sizes) and checked against the prompt the trace holds;
the rules run again in the scan pool (they are untrusted input), and the rubric's own
`grade` counts the result, so the marks and the trace's metrics can be compared. An
invalid episode removes nothing, as in scoring. A private_eval episode is never
rebuilt: the report shows its scores, error codes and kinds, never text.
"""

from __future__ import annotations

import re
from collections import Counter
from dataclasses import dataclass, field

from redaction_pressure.redact.api import load_task
from redaction_pressure.redact.rubric import grade
from redaction_pressure.redact.rules import Rule, parse_reply
from redaction_pressure.report import stats
from redaction_pressure.report.runs import Episode, Run
from redaction_pressure.report.stats import Interval, bootstrap
from redaction_pressure.spans import Record

CHECKED_METRICS = ("secrets_removed", "decoys_touched", "chars_removed", "secrets_total", "decoys_total")


@dataclass(frozen=True)
class Summary:
    """One run's headline figures, over its tasks' scored rollouts (errored ones are counted apart)."""

    tasks: int
    reward: Interval
    """The mean over tasks of per-task mean rewards, with an interval resampling tasks."""
    recall: float
    precision: float
    clean_gate: float
    validity: float
    error_codes: dict[str, int]
    failures: dict[str, int]
    recall_by_kind: dict[str, float]
    """Recall of each kind over the run: sum(removed_<kind>) / sum(secrets_<kind>)."""
    kind_counts: dict[str, tuple[int, int]] = field(default_factory=dict)
    """(removed, total) secrets of each kind over the scored episodes."""
    errored: int = 0
    """Errored rollouts."""
    errored_reasons: dict[str, int] = field(default_factory=dict)
    rollouts: int = 0
    per_task: int = 1
    """The most rollouts a task has (vf-eval's -r)."""
    pass_at: dict[int, float] = field(default_factory=dict)
    """pass@k, k = 1 .. r, averaged over tasks (see `stats.pass_curve`)."""
    within_std: float | None = None
    """Mean over tasks of the std of their rollouts' rewards (None with one rollout each)."""
    scored_tasks: int = 0

    @property
    def scored(self) -> int:
        """Scored rollouts."""
        return self.rollouts - self.errored


@dataclass(frozen=True)
class Piece:
    """A stretch of record text: plain, or one secret or decoy span, with removed parts."""

    parts: tuple[tuple[str, bool], ...]
    """(text, removed) runs, in order."""
    role: str = ""
    """"" for other text, else `secret` or `decoy`."""
    status: str = ""
    """secret: removed, partial or missed; decoy: touched or intact."""
    kind: str = ""
    context: str = ""
    """For a secret: the words just before it on its line (its key or label), digits as #."""

    @property
    def mistake(self) -> bool:
        if self.role == "secret":
            return self.status != "removed"
        if self.role == "decoy":
            return self.status == "touched"
        return any(removed for _, removed in self.parts)


@dataclass(frozen=True)
class MarkedRecord:
    number: int
    family: str
    pieces: tuple[Piece, ...]

    @property
    def mistakes(self) -> int:
        return sum(piece.mistake for piece in self.pieces)

    def count(self, role: str, status: str) -> int:
        return sum(piece.role == role and piece.status == status for piece in self.pieces)

    @property
    def secret_removed(self) -> int:
        return self.count("secret", "removed")

    @property
    def decoy_intact(self) -> int:
        return self.count("decoy", "intact")

    @property
    def over_redacted(self) -> int:
        """Characters removed outside fully removed secrets (other text, decoys, partial secrets)."""
        return sum(
            len(text) for piece in self.pieces if not (piece.role == "secret" and piece.status == "removed")
            for text, removed in piece.parts if removed
        )  # fmt: skip


@dataclass(frozen=True)
class Marks:
    """A public episode's records with what was removed, or why they cannot be shown."""

    records: tuple[MarkedRecord, ...] = ()
    rules: tuple[Rule, ...] = ()
    counts: dict[str, float] = field(default_factory=dict)
    """The rubric's counts for these marks (compare with the trace's metrics)."""
    mismatched: tuple[str, ...] = ()
    """Metric names whose count here differs from the trace's."""
    problem: str = ""
    """Why the records are not shown (the task no longer rebuilds as the model saw it)."""


def kind_counts(episodes) -> dict[str, tuple[int, int]]:
    """(removed, total) secrets per kind, summed from the `secrets_<kind>`/`removed_<kind>` metrics."""
    totals: Counter[str] = Counter()
    removed: Counter[str] = Counter()
    for episode in episodes:
        for name, value in episode.metrics.items():
            if name.startswith("secrets_") and name not in ("secrets_total", "secrets_removed"):
                kind = name.removeprefix("secrets_")
                totals[kind] += int(value)
                removed[kind] += int(episode.metrics.get(f"removed_{kind}", 0))
    return {kind: (removed[kind], totals[kind]) for kind in sorted(totals) if totals[kind]}


def summarise(run: Run) -> Summary:
    """The run's headline: rates are means over tasks of per-task means; counts are over scored rollouts."""
    errored = [episode for episode in run.episodes if episode.errored]
    episodes = [episode for episode in run.episodes if not episode.errored]
    tasks = [task for task in run.tasks if not task.errored]
    rewards = [task.rewards for task in run.tasks]
    codes = Counter(error.get("code", "unknown") for episode in episodes for error in episode.errors)
    failures = Counter(failure for episode in run.episodes for failure in episode.failures)
    counts = kind_counts(episodes)
    kinds: dict[str, list[float]] = {kind: [removed / total] for kind, (removed, total) in counts.items()}
    if not counts:  # traces of reward schema 3 and older carry recall_<kind> on the tasks having the kind
        for episode in episodes:
            for name, value in episode.metrics.items():
                if name.startswith("recall_"):
                    kinds.setdefault(name.removeprefix("recall_"), []).append(value)

    def over_tasks(value) -> float:
        return stats.mean(task.mean_of(value) for task in tasks)

    return Summary(
        tasks=len(run.tasks),
        reward=stats.task_bootstrap(rewards),  # scored rollouts only
        recall=over_tasks(lambda episode: episode.components.get("recall", 0.0)),
        precision=over_tasks(lambda episode: episode.components.get("precision", 0.0)),
        clean_gate=over_tasks(lambda episode: episode.components.get("clean_gate", 0.0)),
        validity=over_tasks(lambda episode: episode.metric("validity")),
        error_codes=dict(sorted(codes.items())),
        failures=dict(sorted(failures.items())),
        recall_by_kind={kind: stats.mean(values) for kind, values in sorted(kinds.items())},
        kind_counts=counts,
        errored=len(errored),
        errored_reasons=dict(Counter(episode.error for episode in errored).most_common()),
        rollouts=len(run.episodes),
        per_task=run.rollouts_per_task,
        pass_at=stats.pass_curve(rewards),
        within_std=stats.mean_within_std(rewards),
        scored_tasks=len(tasks),
    )


@dataclass(frozen=True)
class Difference:
    """Run B against run A on the tasks both ran."""

    baseline: str
    other: str
    tasks: int
    mean: Interval
    """Mean of reward(B) − reward(A) per task (task means), with its paired bootstrap interval."""
    per_task: tuple[tuple[str, float, float], ...]
    """(task id, mean reward A, mean reward B), largest change first."""
    comparable: bool
    """False when the runs' splits or commitments differ."""
    rollouts: bool = False
    """True when either run played a task more than once (the rewards are task means)."""


def compare(baseline: Run, other: Run) -> Difference:
    """Run B against run A, paired by task key (never by rollout order), on task means."""
    a = {task.key: task for task in baseline.tasks if not task.errored}
    b = {task.key: task for task in other.tasks if not task.errored}
    common = [key for key in a if key in b]
    rows = sorted(
        ((a[key].task_id, a[key].reward, b[key].reward) for key in common),
        key=lambda row: (-abs(row[2] - row[1]), row[0]),
    )
    same = {key: (baseline.identity.get(key), other.identity.get(key)) for key in ("split", "split_commitment")}
    return Difference(
        baseline=baseline.label,
        other=other.label,
        tasks=len(common),
        mean=bootstrap([b[key].reward - a[key].reward for key in common]),
        per_task=tuple(rows),
        comparable=all(left == right and left not in (None, "(varies)") for left, right in same.values()),
        rollouts=max(baseline.rollouts_per_task, other.rollouts_per_task) > 1,
    )


def mark(episode: Episode, scanner) -> Marks:
    """The hidden records of a public episode, marked with what its rules removed.

    `scanner(rules, texts)` returns a `ScanResult` (the scan pool's `scan`).
    """
    if episode.private:
        raise ValueError("private_eval episodes are never rebuilt for a report")
    try:
        task = load_task(
            episode.split, episode.index, shown=episode.shown, hidden=episode.hidden, difficulty=episode.difficulty
        )
    except ValueError as exc:
        return Marks(problem=f"the task cannot be rebuilt here: {exc}")
    if task.prompt.user != episode.prompt:
        return Marks(
            problem="this package builds a different task from the trace's split and index "
            f"(the trace has corpus version {episode.identity.get('corpus_version', '?')}); "
            "its records are not shown"
        )
    marks = mark_reply(task, episode.reply or "", scanner, valid=episode.metric("validity") == 1.0)
    mismatched = tuple(
        name for name in CHECKED_METRICS if name in episode.metrics and episode.metrics[name] != marks.counts[name]
    )
    return Marks(records=marks.records, rules=marks.rules, counts=marks.counts, mismatched=mismatched)


def mark_reply(task, reply: str, scanner, valid: bool = True) -> Marks:
    """A public task's hidden records marked with what `reply`'s rules removed (nothing, when the reply is
    invalid or its rules fail: `problem` says which), with the rubric's counts for those marks."""
    answer = parse_reply(reply)
    hidden = task.hidden
    removed = [() for _ in hidden]
    problem = ""
    if answer.errors:
        problem = f"the reply is invalid ({answer.errors[0].code}): it removes nothing"
    elif valid:
        result = scanner(answer.rules, [record.text for record in hidden])
        if result.errors:
            problem = f"the rules failed ({result.errors[0].code}): they remove nothing"
        else:
            removed = result.removed
    graded = grade(hidden, removed, valid and not problem)
    records = tuple(
        MarkedRecord(number=len(task.shown) + offset + 1, family=record.family, pieces=pieces(record, runs))
        for offset, (record, runs) in enumerate(zip(hidden, removed, strict=True))
    )
    counts = {name: graded.metrics[name] for name in CHECKED_METRICS}
    return Marks(records=records, rules=answer.rules, counts=counts, problem=problem)


def pieces(record: Record, runs) -> tuple[Piece, ...]:
    """Cut a record into plain stretches and labelled spans, each split at removal edges."""
    text = record.text
    spans = sorted(
        [("secret", span) for span in record.secrets] + [("decoy", span) for span in record.decoys],
        key=lambda item: item[1].start,
    )
    pieces: list[Piece] = []
    position = 0
    for role, span in spans:
        if position < span.start:
            pieces.append(Piece(parts=_parts(text, position, span.start, runs)))
        parts = _parts(text, span.start, span.end, runs)
        gone = sum(len(part) for part, removed in parts if removed)
        if role == "secret":
            status = "removed" if gone == len(span) else "partial" if gone else "missed"
        else:
            status = "touched" if gone else "intact"
        context = _context(text, span.start) if role == "secret" else ""
        pieces.append(Piece(parts=parts, role=role, status=status, kind=span.kind, context=context))
        position = span.end
    if position < len(text):
        pieces.append(Piece(parts=_parts(text, position, len(text), runs)))
    return tuple(pieces)


_LABEL = re.compile(r"""([A-Za-z_][\w.\-]*["']?\s*(?:[:=]|=>|:=)\s*["']?|[A-Za-z_][\w\-]*\s*)$""")


def _context(text: str, start: int) -> str:
    """The key or label a secret follows on its line (`OPENAI_API_KEY=`, `password:`), digits as #.

    This is what a rule writer sees around the secret; the span's slot id is never shown."""
    line = text[text.rfind("\n", 0, start) + 1 : start]
    found = _LABEL.search(line[-48:])
    label = (found.group(1) if found else line[-16:]).strip() or "(start of line)"
    return re.sub(r"\d", "#", " ".join(label.split()))[:40]


def _parts(text: str, start: int, end: int, runs) -> tuple[tuple[str, bool], ...]:
    """text[start:end] as alternating (text, removed) runs."""
    parts: list[tuple[str, bool]] = []
    position = start
    for begin, finish in runs:
        if finish <= position or begin >= end:
            continue
        begin, finish = max(begin, position), min(finish, end)
        if position < begin:
            parts.append((text[position:begin], False))
        parts.append((text[begin:finish], True))
        position = finish
    if position < end:
        parts.append((text[position:end], False))
    return tuple(parts)


@dataclass(frozen=True)
class MistakeRow:
    """One line of the mistakes section: a group, its mistakes out of its total, and examples."""

    name: str
    mistakes: int
    total: int
    examples: tuple[tuple[str, str], ...] = ()
    """(anchor, task id) of up to three records showing the mistake."""

    @property
    def share(self) -> float:
        return self.mistakes / self.total if self.total else 0.0


@dataclass(frozen=True)
class Mistakes:
    """What a run's rules got wrong, across its scored public episodes."""

    kinds: tuple[MistakeRow, ...]
    families: tuple[MistakeRow, ...]
    contexts: tuple[MistakeRow, ...]
    decoys: tuple[MistakeRow, ...]
    over_redacted: int
    chars_removed: int
    over_examples: tuple[tuple[str, str], ...]
    """(anchor, task id) of the records with the most characters over-redacted."""
    marked: bool
    """False when no record was rebuilt (private runs): only the kind counts are known."""


EXAMPLES = 3


def mistakes(summary: Summary, marked: list[tuple[str, str, Marks]]) -> Mistakes:
    """The mistakes section from the marks of a run's episodes: (anchor prefix, task id, marks)."""
    groups: dict[str, dict[str, list]] = {name: {} for name in ("kinds", "families", "contexts", "decoys")}

    def add(group: str, key: str, wrong: bool, example: tuple[str, str]) -> None:
        row = groups[group].setdefault(key, [0, 0, []])
        row[1] += 1
        if wrong:
            row[0] += 1
            if len(row[2]) < EXAMPLES and example not in row[2]:
                row[2].append(example)

    over = removed = 0
    worst: list[tuple[int, str, str]] = []
    for anchor, task_id, marks in marked:
        for record in marks.records:
            example = (f"{anchor}-r{record.number}", f"{task_id} record {record.number}")
            for piece in record.pieces:
                if piece.role == "secret":
                    wrong = piece.status != "removed"
                    add("kinds", piece.kind, wrong, example)
                    add("families", record.family, wrong, example)
                    add("contexts", piece.context, wrong, example)
                elif piece.role == "decoy":
                    add("decoys", piece.kind, piece.status == "touched", example)
                removed += sum(len(text) for text, gone in piece.parts if gone)
            if record.over_redacted:
                over += record.over_redacted
                worst.append((record.over_redacted, *example))

    def rows(group: str) -> tuple[MistakeRow, ...]:
        made = [
            MistakeRow(key, wrong, total, tuple(examples)) for key, (wrong, total, examples) in groups[group].items()
        ]
        return tuple(sorted(made, key=lambda row: (-row.mistakes, -row.share, row.name)))

    if not marked:  # private: the kind counts of the traces' metrics only
        kinds = tuple(sorted((MistakeRow(kind, total - gone, total) for kind, (gone, total) in summary.kind_counts.items()),
                             key=lambda row: (-row.mistakes, row.name)))  # fmt: skip
    else:
        kinds = rows("kinds")
    worst.sort(key=lambda item: -item[0])
    return Mistakes(
        kinds=kinds, families=rows("families"), contexts=rows("contexts"), decoys=rows("decoys"),
        over_redacted=over, chars_removed=removed, over_examples=tuple((a, t) for _, a, t in worst[:EXAMPLES]),
        marked=bool(marked),
    )  # fmt: skip
