"""What the report says about a run: summaries with bootstrap intervals, and each record's marks.

Summaries are means over a run's episodes. The interval is a percentile bootstrap over
tasks (10,000 resamples, a fixed seed, so a report is reproducible). A comparison
pairs two runs by task id and bootstraps the mean of the per-task differences.

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


from redaction_pressure.api import load_task
from redaction_pressure.report.runs import Episode, Run
from redaction_pressure.report.stats import Interval, bootstrap
from redaction_pressure.rubric import grade
from redaction_pressure.rules import Rule, parse_reply
from redaction_pressure.spans import Record

CHECKED_METRICS = ("secrets_removed", "decoys_touched", "chars_removed", "secrets_total", "decoys_total")


@dataclass(frozen=True)
class Summary:
    """One run's headline figures, over its scored episodes (errored ones are counted apart)."""

    tasks: int
    reward: Interval
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
    errored_reasons: dict[str, int] = field(default_factory=dict)

    @property
    def scored(self) -> int:
        return self.tasks - self.errored


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
    errored = [episode for episode in run.episodes if episode.errored]
    episodes = [episode for episode in run.episodes if not episode.errored]
    count = len(run.episodes)
    codes = Counter(error.get("code", "unknown") for episode in episodes for error in episode.errors)
    failures = Counter(failure for episode in run.episodes for failure in episode.failures)
    counts = kind_counts(episodes)
    kinds: dict[str, list[float]] = {kind: [removed / total] for kind, (removed, total) in counts.items()}
    if not counts:  # traces of reward schema 3 and older carry recall_<kind> on the tasks having the kind
        for episode in episodes:
            for name, value in episode.metrics.items():
                if name.startswith("recall_"):
                    kinds.setdefault(name.removeprefix("recall_"), []).append(value)

    def mean(values) -> float:
        values = list(values)
        return sum(values) / len(values) if values else 0.0

    return Summary(
        tasks=count,
        reward=bootstrap([episode.reward for episode in episodes]),  # scored episodes only
        recall=mean(episode.components.get("recall", 0.0) for episode in episodes),
        precision=mean(episode.components.get("precision", 0.0) for episode in episodes),
        clean_gate=mean(episode.components.get("clean_gate", 0.0) for episode in episodes),
        validity=mean(episode.metric("validity") for episode in episodes),
        error_codes=dict(sorted(codes.items())),
        failures=dict(sorted(failures.items())),
        recall_by_kind={kind: mean(values) for kind, values in sorted(kinds.items())},
        kind_counts=counts,
        errored=len(errored),
        errored_reasons=dict(Counter(episode.error for episode in errored).most_common()),
    )


@dataclass(frozen=True)
class Difference:
    """Run B against run A on the tasks both ran."""

    baseline: str
    other: str
    tasks: int
    mean: Interval
    """Mean of reward(B) − reward(A) per task, with its paired bootstrap interval."""
    per_task: tuple[tuple[str, float, float], ...]
    """(task id, reward A, reward B), largest change first."""
    comparable: bool
    """False when the runs' splits or commitments differ."""


def compare(baseline: Run, other: Run) -> Difference:
    a = {episode.task_id: episode for episode in baseline.episodes if not episode.errored}
    b = {episode.task_id: episode for episode in other.episodes if not episode.errored}
    common = [task for task in a if task in b]
    rows = sorted(
        ((task, a[task].reward, b[task].reward) for task in common), key=lambda row: (-abs(row[2] - row[1]), row[0])
    )
    same = {
        key: (baseline.identity.get(key), other.identity.get(key)) for key in ("split", "split_commitment")
    }
    return Difference(
        baseline=baseline.label,
        other=other.label,
        tasks=len(common),
        mean=bootstrap([b[task].reward - a[task].reward for task in common]),
        per_task=tuple(rows),
        comparable=all(left == right and left not in (None, "(varies)") for left, right in same.values()),
    )


def mark(episode: Episode, scanner) -> Marks:
    """The hidden records of a public episode, marked with what its rules removed.

    `scanner(rules, texts)` returns a `ScanResult` (the scan pool's `scan`).
    """
    if episode.private:
        raise ValueError("private_eval episodes are never rebuilt for a report")
    try:
        task = load_task(episode.split, episode.index, shown=episode.shown, hidden=episode.hidden)
    except ValueError as exc:
        return Marks(problem=f"the task cannot be rebuilt here: {exc}")
    if task.prompt.user != episode.prompt:
        return Marks(
            problem="this package builds a different task from the trace's split and index "
            f"(the trace has corpus version {episode.identity.get('corpus_version', '?')}); "
            "its records are not shown"
        )
    answer = parse_reply(episode.reply or "")
    valid = episode.metric("validity") == 1.0 and not answer.errors
    hidden = task.hidden
    if valid:
        result = scanner(answer.rules, [record.text for record in hidden])
        valid = not result.errors
        removed = result.removed if valid else [() for _ in hidden]
    else:
        removed = [() for _ in hidden]
    graded = grade(hidden, removed, valid)
    counts = {name: graded.metrics[name] for name in CHECKED_METRICS}
    mismatched = tuple(
        name for name in CHECKED_METRICS if name in episode.metrics and episode.metrics[name] != counts[name]
    )
    records = tuple(
        MarkedRecord(number=episode.shown + offset + 1, family=record.family, pieces=_pieces(record, runs))
        for offset, (record, runs) in enumerate(zip(hidden, removed, strict=True))
    )
    return Marks(records=records, rules=answer.rules, counts=counts, mismatched=mismatched)


def _pieces(record: Record, runs) -> tuple[Piece, ...]:
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
        made = [MistakeRow(key, wrong, total, tuple(examples)) for key, (wrong, total, examples) in groups[group].items()]
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
