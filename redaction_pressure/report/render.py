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
from datetime import UTC, datetime
from pathlib import Path

import jinja2
from markupsafe import Markup

from redaction_pressure.report import analysis, charts
from redaction_pressure.report.runs import Run

TEMPLATES = Path(__file__).resolve().parent / "templates"


def render(runs: list[Run], scanner=None) -> str:
    """The report of `runs` as HTML text; the first run is the baseline of comparisons.

    `scanner(rules, texts)` re-runs a public episode's rules (default: the shared scan pool).
    """
    if not runs:
        raise ValueError("a report needs at least one run")
    if scanner is None and any(not run.private for run in runs):
        from redaction_pressure.pool import shared_pool

        scanner = shared_pool().scan
    summaries = [analysis.summarise(run) for run in runs]
    views = []
    for position, (run, summary) in enumerate(zip(runs, summaries, strict=True)):
        episodes = []
        for episode in run.episodes:
            marks = None if episode.private else analysis.mark(episode, scanner)
            episodes.append({"episode": episode, "marks": marks, "anchor": f"run{position + 1}-{episode.task_id}"})
        views.append({"run": run, "summary": summary, "colour": charts.colour(position), "episodes": episodes,
                      "number": position + 1})  # fmt: skip
    script = (TEMPLATES / "report.js").read_text(encoding="utf-8")
    digest = base64.b64encode(hashlib.sha256(script.encode("utf-8")).digest()).decode("ascii")
    environment = jinja2.Environment(
        loader=jinja2.FileSystemLoader(TEMPLATES), autoescape=True, undefined=jinja2.StrictUndefined
    )
    return environment.get_template("report.html.j2").render(
        generated=datetime.now(UTC).strftime("%Y-%m-%d %H:%M UTC"),
        runs=views,
        comparisons=[analysis.compare(runs[0], other) for other in runs[1:]],
        charts={
            "rewards": Markup(charts.reward_distribution(runs)),
            "kinds": Markup(charts.recall_by_kind(runs, summaries)),
            "scatter": Markup(charts.precision_against_recall(runs)),
        },
        script=Markup(script),
        script_hash=f"sha256-{digest}",
    )


def write(runs: list[Run], output: Path, scanner=None) -> Path:
    """Render `runs` into `output` (UTF-8) and return its path."""
    output.write_text(render(runs, scanner), encoding="utf-8")
    return output
