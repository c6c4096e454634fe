"""Render runs as one self-contained HTML page (Jinja2 with autoescape, inline SVG charts).

The page needs no network: styles, the small table-sorting script and the charts are
inline. Its Content-Security-Policy allows only that script (by hash), inline styles and
nothing else, so text from a trace can never run even if it were not escaped; and it
is escaped, since every value passes through Jinja2's autoescape.

A private_eval run is shown by its scores, error codes and secret kinds only: no
prompt, rules, records, error details or task seeds, and nothing is rebuilt.
"""

from __future__ import annotations

import base64
import hashlib
from collections import Counter
from dataclasses import dataclass
from datetime import UTC, datetime
from pathlib import Path

import jinja2
from markupsafe import Markup

from redaction_pressure.report import analysis, audit, charts
from redaction_pressure.report.runs import AUDIT_TASKSET_ID, Run

TEMPLATES = Path(__file__).resolve().parent / "templates"


@dataclass(frozen=True)
class Cut:
    """Unmarked characters left out of a shown record."""

    hidden_chars: int


CLIP = 320
"""Unmarked text longer than this in a shown record is cut to its ends (the cut is labelled)."""


def render(runs: list[Run], scanner=None, progress=lambda: None) -> str:
    """The report of `runs` as HTML text; the first run is the baseline of comparisons.

    `scanner(rules, texts)` re-runs a public episode's rules (default: the shared scan pool);
    `progress()` is called once per episode marked.
    """
    if not runs:
        raise ValueError("a report needs at least one run")
    tasksets = sorted({run.taskset for run in runs})
    if len(tasksets) > 1:
        raise ValueError(f"one report shows one taskset; these runs are {' and '.join(tasksets)}: report them apart")
    if tasksets == [AUDIT_TASKSET_ID]:
        return render_audit(runs, progress)
    if scanner is None and any(not run.private for run in runs):
        from redaction_pressure.redact.pool import shared_pool

        scanner = shared_pool().scan
    summaries = [analysis.summarise(run) for run in runs]
    remarks = _memo(scanner)
    views = []
    for position, (run, summary) in enumerate(zip(runs, summaries, strict=True)):
        marked: list = []
        tasks = [_task_view(task, position + 1, remarks, marked, progress) for task in run.tasks]
        views.append({"run": run, "summary": summary, "colour": charts.colour(position), "tasks": tasks,
                      "number": position + 1, "mistakes": analysis.mistakes(summary, marked),
                      "many": summary.per_task > 1, **_formats(summary.per_task)})  # fmt: skip
    environment, script, script_hash = _environment()
    return environment.get_template("report.html.j2").render(
        generated=datetime.now(UTC).strftime("%Y-%m-%d %H:%M UTC"),
        runs=views,
        comparisons=[analysis.compare(runs[0], other) for other in runs[1:]],
        charts={
            "rewards": Markup(charts.reward_distribution(runs)),
            "kinds": Markup(charts.recall_by_kind(runs, summaries)),
            "scatter": Markup(charts.precision_against_recall(runs)),
        },
        script=script,
        script_hash=script_hash,
    )


def _formats(per_task: int) -> dict[str, str]:
    """Cell formats: a rate or count of one rollout is whole; a mean over rollouts is not."""
    if per_task > 1:
        return {"whole": "%.2f", "count": "%.1f"}
    return {"whole": "%.0f", "count": "%d"}


def _memo(scanner):
    """`analysis.mark`, done once per distinct (task, reply): identical rollouts (a deterministic
    policy, temperature 0) are re-scanned once."""
    done: dict[tuple, analysis.Marks] = {}

    def marks(episode):
        key = (episode.split, episode.index, episode.shown, episode.hidden, episode.prompt, episode.reply,
               episode.metric("validity"))  # fmt: skip
        if key not in done:
            done[key] = analysis.mark(episode, scanner)
        return done[key]

    return marks


def _task_view(task, number: int, marks, marked: list, progress) -> dict:
    """One task's entry: its anchor, its rollouts (each with its marks and records), its error codes.

    One rollout keeps the task's anchor (`run1-dev-00003`); with several, each rollout gets
    `<task anchor>-rollout<i>`, so a record link opens the rollout it is about. Marked rollouts
    are appended to `marked` for the mistakes section."""
    anchor = f"run{number}-{task.task_id}"
    single = len(task.rollouts) == 1
    rollouts = []
    for turn, episode in enumerate(task.rollouts, start=1):
        here = anchor if single else f"{anchor}-rollout{turn}"
        found = None if episode.private or episode.errored else marks(episode)
        progress()
        if found is not None and not found.problem:
            marked.append((here, task.task_id if single else f"{task.task_id} rollout {turn}", found))
        records = [] if found is None else [
            {"record": record, "anchor": f"{here}-r{record.number}", "pieces": _clipped(record.pieces)}
            for record in found.records
        ]  # fmt: skip
        rollouts.append({"episode": episode, "marks": found, "anchor": here, "records": records, "number": turn,
                         "mistakes": sum(record.mistakes for record in found.records) if found else 0})  # fmt: skip
    codes = Counter(error.get("code", "unknown") for episode in task.scored for error in episode.errors)
    return {"task": task, "anchor": anchor, "rollouts": rollouts, "codes": sorted(codes.items()),
            "linked": any(rollout["marks"] is not None for rollout in rollouts),
            "kinds": analysis.kind_counts(task.scored), "mistakes": sum(rollout["mistakes"] for rollout in rollouts)}  # fmt: skip


def _environment() -> tuple[jinja2.Environment, Markup, str]:
    script = (TEMPLATES / "report.js").read_text(encoding="utf-8")
    digest = base64.b64encode(hashlib.sha256(script.encode("utf-8")).digest()).decode("ascii")
    environment = jinja2.Environment(
        loader=jinja2.FileSystemLoader(TEMPLATES), autoescape=True, undefined=jinja2.StrictUndefined,
        trim_blocks=True, lstrip_blocks=True,
    )  # fmt: skip
    return environment, Markup(script), f"sha256-{digest}"


def render_audit(runs: list[Run], progress=lambda: None) -> str:
    """The report of secrets-audit runs: per scenario and difficulty, leaks by tier, timelines."""
    views = []
    for position, run in enumerate(runs):
        for _ in run.episodes:
            progress()
        anchor = f"run{position + 1}-"
        views.append({
            "run": run, "number": position + 1, "colour": charts.colour(position),
            "summary": audit.summarise(run.episodes), "groups": audit.breakdown(run.episodes),
            "leaks": audit.leaks_by_tier(run.episodes), "ladders": audit.ladders(run.episodes),
            "tasks": [{"task": task, "anchor": anchor + task.task_id, "rollouts": [
                {"episode": e, "number": turn, "anchor": f"{anchor}{task.task_id}-rollout{turn}"}
                for turn, e in enumerate(task.rollouts, start=1)]} for task in run.tasks],
        })  # fmt: skip
    environment, script, script_hash = _environment()
    return environment.get_template("audit.html.j2").render(
        generated=datetime.now(UTC).strftime("%Y-%m-%d %H:%M UTC"),
        runs=views,
        charts={"rewards": Markup(charts.reward_distribution(runs)), "parts": Markup(charts.audit_parts(runs))},
        script=script,
        script_hash=script_hash,
    )


def _clipped(pieces) -> list:
    """Pieces with long unmarked stretches cut to their ends: ("cut", n) stands for n hidden characters."""
    shown = []
    for piece in pieces:
        text = "".join(part for part, _ in piece.parts)
        if piece.role or any(removed for _, removed in piece.parts) or len(text) <= CLIP:
            shown.append(piece)
            continue
        keep = CLIP // 2
        shown.append(analysis.Piece(parts=((text[:keep], False),)))
        shown.append(Cut(len(text) - 2 * keep))
        shown.append(analysis.Piece(parts=((text[-keep:], False),)))
    return shown


def write(runs: list[Run], output: Path, scanner=None, progress=lambda: None) -> Path:
    """Render `runs` into `output` (UTF-8) and return its path."""
    output.write_text(render(runs, scanner, progress), encoding="utf-8")
    return output
