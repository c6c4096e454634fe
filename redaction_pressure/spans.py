"""Value types shared by every layer: labelled spans and the records that carry them.

A `Span` is a half-open interval `[start, end)` over a record's `text` with a `kind`
and the `slot` it fills: the task-level (family, context, value format) it was drawn
from. The slot is for tests and analysis; prompts never show it.
A `Record` is one generated document: its text, the secret spans that must disappear,
the decoy spans that must survive, and its document `family`. Everything here is
frozen and imports nothing else from the package, so any layer may depend on it.

Invariants that `Record` checks on construction: every span lies inside the text and
is non-empty, and no two labelled spans (secret or decoy) overlap.
"""

from __future__ import annotations

from pydantic import BaseModel, ConfigDict, model_validator


class Span(BaseModel):
    """A labelled, half-open character interval of a record's text."""

    model_config = ConfigDict(frozen=True)

    start: int
    end: int
    kind: str
    slot: str = ""

    def __len__(self) -> int:
        return self.end - self.start


class Record(BaseModel):
    """One document of a task's stream, with its secrets and decoys labelled."""

    model_config = ConfigDict(frozen=True)

    text: str
    secrets: tuple[Span, ...]
    decoys: tuple[Span, ...]
    family: str

    @model_validator(mode="after")
    def _spans_fit(self) -> Record:
        spans = sorted(self.secrets + self.decoys, key=lambda s: s.start)
        for span in spans:
            if not 0 <= span.start < span.end <= len(self.text):
                raise ValueError(
                    f"span {span.kind} [{span.start}, {span.end}) is empty or outside "
                    f"the {len(self.text)}-character text"
                )
        for left, right in zip(spans, spans[1:], strict=False):
            if right.start < left.end:
                raise ValueError(f"spans {left.kind} and {right.kind} overlap")
        return self

    def value(self, span: Span) -> str:
        """The text a span covers."""
        return self.text[span.start : span.end]
