"""The report's charts, drawn by matplotlib offline and returned as inline SVG text.

Figures are built without pyplot (no global state, no display) and saved with text as
SVG text and a fixed hash salt and no date, so the same runs give the same bytes. A task
played several times (`vf-eval -r N`) is one bar entry or point: the mean of its scored rollouts.
"""

from __future__ import annotations

import io
import math

import matplotlib
from matplotlib.figure import Figure
from matplotlib.ticker import MaxNLocator

from redaction_pressure.report.analysis import Summary
from redaction_pressure.report.runs import Run

COLOURS = ("#1f77b4", "#d62728", "#2ca02c", "#9467bd", "#ff7f0e", "#8c564b", "#17becf", "#7f7f7f")
_RC = {"svg.fonttype": "none", "svg.hashsalt": "redaction-pressure-report", "font.size": 10}


def colour(position: int) -> str:
    return COLOURS[position % len(COLOURS)]


def reward_distribution(runs: list[Run]) -> str:
    """A histogram of per-task (mean) rewards, one outline per run."""
    figure, axes = _figure(4.2, 2.8)
    bins = [step / 20 for step in range(21)]
    for position, run in enumerate(runs):
        rewards = [task.reward for task in run.tasks if not task.errored]
        axes.hist(rewards, bins=bins, histtype="step" if len(runs) > 1 else "bar", linewidth=1.6,
                  color=colour(position), label=_text(run.label), alpha=1.0 if len(runs) > 1 else 0.85)  # fmt: skip
    axes.set_xlim(0, 1)
    axes.yaxis.set_major_locator(MaxNLocator(integer=True))
    axes.set_xlabel("reward")
    axes.set_ylabel("tasks")
    axes.set_title("Reward per task")
    _legend(axes, runs)
    return _svg(figure)


def recall_by_kind(runs: list[Run], summaries: list[Summary]) -> str:
    """Mean per-task recall of each secret kind, one bar per run."""
    kinds = sorted({kind for summary in summaries for kind in summary.recall_by_kind})
    height = max(2.2, 0.22 * len(kinds) * max(1, len(runs)) + 1.0)
    figure, axes = _figure(4.2, height)
    width = 0.8 / max(1, len(runs))
    for position, (run, summary) in enumerate(zip(runs, summaries, strict=True)):
        ys = [row + position * width for row in range(len(kinds))]
        # A kind the run never met gets no bar and says so; a recall of 0 is a real result.
        values = [summary.recall_by_kind.get(kind, math.nan) for kind in kinds]
        axes.barh(ys, values, height=width, color=colour(position), label=_text(run.label))
        for y, value in zip(ys, values, strict=True):
            if math.isnan(value):
                axes.text(0.01, y, "not in this run", va="center", fontsize=7, color="#868e96")
            elif value == 0.0:
                axes.text(0.01, y, "0", va="center", fontsize=7, color=colour(position))
    axes.set_yticks([row + 0.4 - width / 2 for row in range(len(kinds))], [_text(kind) for kind in kinds])
    axes.invert_yaxis()
    axes.set_xlim(0, 1)
    axes.set_xlabel("recall: secrets removed / secrets")
    axes.set_title("Recall per secret kind")
    _legend(axes, runs)
    return _svg(figure)


def precision_against_recall(runs: list[Run]) -> str:
    """One point per task (its rollouts' means): recall across, precision up."""
    figure, axes = _figure(4.2, 3.6)
    for position, run in enumerate(runs):
        scored = [task for task in run.tasks if not task.errored]
        axes.scatter([task.component("recall") for task in scored],
                     [task.component("precision") for task in scored],
                     s=18, alpha=0.7, color=colour(position), label=_text(run.label))  # fmt: skip
    axes.set_xlim(-0.03, 1.03)
    axes.set_ylim(-0.03, 1.03)
    axes.set_xlabel("recall")
    axes.set_ylabel("precision")
    axes.set_title("Precision against recall")
    _legend(axes, runs)
    return _svg(figure)


def audit_parts(runs: list[Run]) -> str:
    """secrets-audit: mean detection, health and efficiency per difficulty, one bar group per run."""
    order = ["easy", "medium", "hard"]
    parts = ("detection", "health", "efficiency")
    figure, axes = _figure(4.2, 2.9)
    width = 0.8 / (len(parts) * max(1, len(runs)))
    for position, run in enumerate(runs):
        scored = [episode for episode in run.episodes if not episode.errored]
        for offset, part in enumerate(parts):
            xs, values = [], []
            for slot, difficulty in enumerate(order):
                group = [episode.metric(part) for episode in scored if episode.difficulty == difficulty]
                if group:
                    xs.append(slot + (position * len(parts) + offset) * width)
                    values.append(sum(group) / len(group))
            axes.bar(xs, values, width=width, color=colour(offset + 3 * position), alpha=1.0 - 0.35 * position,
                     label=_text(part if len(runs) == 1 else f"{part} ({run.label})"))  # fmt: skip
    axes.set_xticks([slot + 0.4 - width / 2 for slot in range(len(order))], order)
    axes.set_ylim(0, 1.05)
    axes.set_ylabel("mean")
    axes.set_title("Detection, health, efficiency")
    axes.legend(fontsize=8, loc="upper right")
    return _svg(figure)


def _figure(width: float, height: float):
    with matplotlib.rc_context(_RC):
        figure = Figure(figsize=(width, height), layout="constrained")
        axes = figure.add_subplot()
        axes.grid(alpha=0.3)
    return figure, axes


def _legend(axes, runs: list[Run]) -> None:
    if len(runs) > 1:
        axes.legend(fontsize=8, loc="best")


def _svg(figure: Figure) -> str:
    buffer = io.StringIO()
    with matplotlib.rc_context(_RC):
        figure.savefig(buffer, format="svg", metadata={"Date": None})
    text = buffer.getvalue()
    return text[text.index("<svg") :]


def _text(label: str) -> str:
    # Labels are folder and kind names: keep matplotlib from reading `$...$` as mathtext.
    return label.replace("$", r"\$")
