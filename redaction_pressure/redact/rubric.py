"""The reward: recall, precision and a clean gate over the hidden records' characters.

With S the labelled secret spans and R the removed source characters (the union of
all match spans over all hidden records):

- recall = |secrets whose every character is in R| / |S|; a partial edit earns nothing;
- precision = |R ∩ characters of fully removed secrets| / |R|, 0 when R is empty, so
  partial damage to a secret stays in the denominator;
- clean gate = 1 iff every secret is fully removed, R is exactly the secret characters
  (decoys and all other text survive) and there were no errors;
- validity = 0 on any error, else 1; on an invalid episode nothing counts (R = ∅);
- reward = validity × (0.35 recall + 0.35 precision + 0.30 clean gate).

The per-kind metric is on every episode, for every secret kind of the corpus, so that its
mean over episodes (what vf-eval and trainer dashboards print, reading a missing metric
as 0) means what it says: `all_removed_<kind>` is 1 when the episode leaves no secret of
the kind (also when it has none), so its mean is the share of episodes that missed none:
1.0 on an exact run, lower exactly when some episode left one. The per-kind counts,
(removed, total) for each kind the episode has, are `Grade.kinds`, kept beside the metrics
(trace info): a kind's recall over a run is sum(removed) / sum(total).

Bump `REWARD_SCHEMA_VERSION` whenever any of this, the weights or the metric names
change (4: per-kind `recall_<kind>` became counts; 5: the counts left the metrics for
`kinds`, and `all_removed_<kind>` came).
"""

from __future__ import annotations

from bisect import bisect_left, bisect_right
from collections import Counter
from collections.abc import Sequence
from dataclasses import dataclass, field

from redaction_pressure.corpus import SECRET_KINDS
from redaction_pressure.spans import Record

REWARD_SCHEMA_VERSION = "5"
WEIGHTS = {"recall": 0.35, "precision": 0.35, "clean_gate": 0.30}


@dataclass(frozen=True)
class Grade:
    """The three reward components, validity, the weighted total, and metrics."""

    recall: float
    precision: float
    clean_gate: float
    valid: bool
    reward: float
    metrics: dict[str, float] = field(default_factory=dict)
    kinds: dict[str, tuple[int, int]] = field(default_factory=dict)
    """(removed, total) secrets of each kind the records hold."""


def grade(
    records: Sequence[Record],
    removed: Sequence[Sequence[tuple[int, int]]],
    valid: bool,
) -> Grade:
    """Grade the maximal removed runs of each record (as the scanner returns them)."""
    if not valid:
        removed = [() for _ in records]
    total = Counter[str]()
    gone = Counter[str]()
    removed_chars = secret_chars = clean_chars = 0
    decoys = touched = 0
    for record, runs in zip(records, removed, strict=True):
        removed_chars += sum(end - begin for begin, end in runs)
        # The runs are sorted and disjoint: the only run that can hold or touch a span is
        # the last one starting at (or, for touching, before the end of) that span.
        starts = [begin for begin, _ in runs]
        for span in record.secrets:
            total[span.kind] += 1
            secret_chars += len(span)
            at = bisect_right(starts, span.start) - 1
            if at >= 0 and span.end <= runs[at][1]:
                gone[span.kind] += 1
                clean_chars += len(span)
        for span in record.decoys:
            decoys += 1
            at = bisect_left(starts, span.end) - 1
            touched += at >= 0 and span.start < runs[at][1]
    secrets, removed_secrets = sum(total.values()), sum(gone.values())
    recall = removed_secrets / secrets if secrets else 0.0
    precision = clean_chars / removed_chars if removed_chars else 0.0
    clean = valid and secrets > 0 and removed_secrets == secrets and removed_chars == secret_chars
    gate = 1.0 if clean else 0.0
    if not valid:
        recall = precision = 0.0
    reward = WEIGHTS["recall"] * recall + WEIGHTS["precision"] * precision + WEIGHTS["clean_gate"] * gate
    metrics: dict[str, float] = {
        "validity": 1.0 if valid else 0.0,
        "secrets_total": float(secrets),
        "secrets_removed": float(removed_secrets),
        "secret_chars": float(secret_chars),
        "chars_removed": float(removed_chars),
        "decoys_total": float(decoys),
        "decoys_touched": float(touched),
    }
    for kind in sorted(set(SECRET_KINDS) | set(total)):
        metrics[f"all_removed_{kind}"] = 1.0 if gone[kind] == total[kind] else 0.0
    kinds = {kind: (gone[kind], total[kind]) for kind in sorted(total)}
    return Grade(recall, precision, gate, valid, reward, metrics, kinds)
