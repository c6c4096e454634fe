"""secrets-audit splits: which scenario and seed each task uses.

Task i of every split plays scenario `SCENARIOS[i % 13]`, so any 13 consecutive tasks cover
the whole curriculum. Seeds:

- `dev` (52 tasks: 13 scenarios x 4 seeds): `DEV_SEED_BASE + i`;
- `train` (unbounded): `TRAIN_SEED_BASE + i`;
- `private_eval`: `redaction_pressure.splits.private_seed(PRIVATE_SEED_LABEL, i)`, an HMAC of
  the secret under this taskset's own domain label, so it shares no seed with
  redaction-pressure's private split. The secret is read only by `redaction_pressure.splits`.
"""

from __future__ import annotations

import hashlib

from redaction_pressure import splits as shared
from redaction_pressure.audit.plan import HISTORY_ALL, RepoPlan
from redaction_pressure.audit.scenarios import SCENARIOS, build

SPLITS = shared.SPLITS
DEV_SIZE = 13 * 4
DEV_SEED_BASE = 7_000
TRAIN_SEED_BASE = 7_000_000
PRIVATE_SEED_LABEL = b"redaction-pressure/secrets-audit/private_eval/seed/v1"
PUBLIC_COMMITMENT_LABEL = "redaction-pressure/secrets-audit/public-split/v1"


def check_index(split: str, index: int) -> None:
    if split == "dev":
        if isinstance(index, bool) or not isinstance(index, int) or not 0 <= index < DEV_SIZE:
            raise shared.SplitError(f"dev has tasks 0 to {DEV_SIZE - 1}; index {index!r} is outside")
        return
    shared.check_index(split, index)


def scenario_for(index: int) -> str:
    return SCENARIOS[index % len(SCENARIOS)].name


def seed_for(split: str, index: int) -> int:
    """The seed of task `index` of `split` (private_eval reads the secret)."""
    check_index(split, index)
    if split == "dev":
        return DEV_SEED_BASE + index
    if split == "train":
        return TRAIN_SEED_BASE + index
    return shared.private_seed(PRIVATE_SEED_LABEL, index)


def commitment(split: str) -> str:
    """The split's commitment: the secret's (shared with redaction-pressure) for private_eval."""
    if split == "private_eval":
        return shared.commitment(split)
    if split not in SPLITS:
        raise shared.SplitError(f"unknown split {split!r}; choose one of {', '.join(SPLITS)}")
    base = TRAIN_SEED_BASE if split == "train" else DEV_SEED_BASE
    return hashlib.sha256(f"{PUBLIC_COMMITMENT_LABEL}:{split}:{base}".encode()).hexdigest()


def plan_for(split: str, index: int, history: str = HISTORY_ALL) -> RepoPlan:
    """The plan of task `index` of `split`, built for history mode `history` (`plan.HISTORY_MODES`)."""
    return build(scenario_for(index), seed_for(split, index), history)


def spread(count: int, size: int = DEV_SIZE) -> list[int]:
    """The first `count` task indices of a split of `size` taken in turn from each difficulty (easy,
    medium, hard, easy, ...), in index order within each: a small sample plays every level."""
    levels: dict[str, list[int]] = {}
    for index in range(size):
        levels.setdefault(SCENARIOS[index % len(SCENARIOS)].difficulty, []).append(index)
    queues = [list(indices) for indices in levels.values()]
    order: list[int] = []
    while len(order) < min(count, size):
        for queue in queues:
            if queue and len(order) < count:
                order.append(queue.pop(0))
    return order
