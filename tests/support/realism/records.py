"""The records the realism checks read: `dev_records(difficulty)` (every record of every dev task of a
level, shown and hidden, with where it sits: `Located`), and a span's line, key context and excerpt.
"""

from __future__ import annotations

import itertools
import re
from dataclasses import dataclass
from functools import cache

from redaction_pressure.corpus import stream
from redaction_pressure.spans import Record, Span
from redaction_pressure.splits import DEV_SIZE, seed_for

# -- the records --------------------------------------------------------------------------


@dataclass(frozen=True)
class Located:
    """A record with the dev task and stream position it came from."""

    task: int
    index: int
    record: Record
    difficulty: str = "standard"

    @property
    def where(self) -> str:
        part = "shown" if self.index < SHOWN else "hidden"
        level = "" if self.difficulty == "standard" else f"{self.difficulty} "
        return f"{level}dev task {self.task} record {self.index} ({part}, {self.record.family})"


SHOWN, HIDDEN = 8, 32


@cache
def dev_records(difficulty: str = "standard") -> tuple[Located, ...]:
    """Every record (shown and hidden) of every dev task of a level, through `load_task` when
    it works (on standard, the bare stream when it does not: the API may be mid-edit)."""
    from redaction_pressure.redact.api import load_task

    out: list[Located] = []
    for task in range(DEV_SIZE):
        try:
            loaded = load_task("dev", task, difficulty=difficulty)
            records = [*loaded.shown, *loaded.hidden]
        except Exception:
            if difficulty != "standard":
                raise
            records = list(itertools.islice(stream(seed_for("dev", task), SHOWN), SHOWN + HIDDEN))
        out.extend(Located(task, i, record, difficulty) for i, record in enumerate(records))
    return tuple(out)


def line_of(record: Record, span: Span) -> str:
    """The full text line(s) that hold `span`."""
    start = record.text.rfind("\n", 0, span.start) + 1
    end = record.text.find("\n", span.end)
    return record.text[start : len(record.text) if end < 0 else end]


def key_context(record: Record, span: Span) -> str:
    """The key a value sits under: the words before it on its line back to (and including) the
    nearest one that names something (digits as 0); for a YAML `value:` under `- name: KEY`, the
    name on the line above."""
    start = record.text.rfind("\n", 0, span.start) + 1
    tokens = record.text[start : span.start].split()
    picked: list[str] = []
    for token in reversed(tokens):
        picked.insert(0, token)
        if re.search(r"[A-Za-z]{2,}", re.sub(r"value", "", token)):
            break
    else:
        if start:
            above = record.text.rfind("\n", 0, start - 1) + 1
            picked = record.text[above : start - 1].split()[-1:] + ["|"] + picked
    return re.sub(r"\d+", "0", " ".join(picked))


def excerpt(value: str, n: int = 24) -> str:
    """A short, single-line excerpt of a value for failure messages."""
    flat = value.replace("\n", "\\n")
    return flat if len(flat) <= n else flat[:n] + "..."
