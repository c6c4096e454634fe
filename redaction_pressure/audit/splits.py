"""secrets-audit splits: which scenario and seed each task uses, per level.

Two levels, each with its own splits:

- `standard` (the default; the seed's curriculum): task i of every split plays scenario
  `SCENARIOS[i % 13]` at that scenario's own difficulty (easy, medium or hard), so any 13
  consecutive tasks cover the whole curriculum. Seeds: `dev` (52 tasks: 13 scenarios x 4 seeds)
  `DEV_SEED_BASE + i`; `train` (unbounded) `TRAIN_SEED_BASE + i`.
- `expert`: task i plays `EXPERT_SCENARIOS[i % len(EXPERT_SCENARIOS)]`; seeds
  `EXPERT_DEV_SEED_BASE + i` (`EXPERT_DEV_SIZE` dev tasks) and `EXPERT_TRAIN_SEED_BASE + i`.

`private_eval`: `redaction_pressure.splits.private_seed(label, i)`, an HMAC of the secret under
this taskset's own domain label (one per level), so it shares no seed with redaction-pressure's
private split. The secret is read only by `redaction_pressure.splits`.
"""

from __future__ import annotations

import hashlib

from redaction_pressure import splits as shared
from redaction_pressure.audit.plan import HISTORY_ALL, RepoPlan
from redaction_pressure.audit.scenarios import EXPERT_SCENARIOS, SCENARIOS, build
from redaction_pressure.audit.scenarios.base import Scenario

SPLITS = shared.SPLITS
STANDARD = "standard"
"""The curriculum: the 13 scenarios at their own difficulties (easy, medium, hard)."""
EXPERT = "expert"
LEVELS = (STANDARD, EXPERT)
DEV_SIZE = 13 * 4
DEV_SEED_BASE = 7_000
TRAIN_SEED_BASE = 7_000_000
EXPERT_DEV_SIZE = 24
EXPERT_DEV_SEED_BASE = 9_000
EXPERT_TRAIN_SEED_BASE = 9_000_000
PRIVATE_SEED_LABEL = b"redaction-pressure/secrets-audit/private_eval/seed/v1"
EXPERT_PRIVATE_SEED_LABEL = b"redaction-pressure/secrets-audit/expert/private_eval/seed/v1"
PUBLIC_COMMITMENT_LABEL = "redaction-pressure/secrets-audit/public-split/v1"


def check_level(level: str) -> None:
    if level not in LEVELS:
        raise shared.SplitError(
            f"secrets-audit has the levels {' and '.join(LEVELS)} (standard mixes its easy, medium and hard "
            f"scenarios); {level!r} is not one"
        )


def dev_size(level: str = STANDARD) -> int:
    check_level(level)
    return EXPERT_DEV_SIZE if level == EXPERT else DEV_SIZE


def scenarios(level: str = STANDARD) -> list[Scenario]:
    check_level(level)
    return EXPERT_SCENARIOS if level == EXPERT else SCENARIOS


def check_index(split: str, index: int, level: str = STANDARD) -> None:
    if split == "dev":
        size = dev_size(level)
        if isinstance(index, bool) or not isinstance(index, int) or not 0 <= index < size:
            at = "" if level == STANDARD else f" at level {level}"
            raise shared.SplitError(f"dev has tasks 0 to {size - 1}{at}; index {index!r} is outside")
        return
    check_level(level)
    shared.check_index(split, index)


def scenario_for(index: int, level: str = STANDARD) -> str:
    chosen = scenarios(level)
    return chosen[index % len(chosen)].name


def seed_for(split: str, index: int, level: str = STANDARD) -> int:
    """The seed of task `index` of `split` at `level` (private_eval reads the secret)."""
    check_index(split, index, level)
    expert = level == EXPERT
    if split == "dev":
        return (EXPERT_DEV_SEED_BASE if expert else DEV_SEED_BASE) + index
    if split == "train":
        return (EXPERT_TRAIN_SEED_BASE if expert else TRAIN_SEED_BASE) + index
    return shared.private_seed(EXPERT_PRIVATE_SEED_LABEL if expert else PRIVATE_SEED_LABEL, index)


def commitment(split: str, level: str = STANDARD) -> str:
    """The split's commitment at `level`: the secret's (shared with redaction-pressure) for private_eval.
    The standard level's are the split's own; expert's add the level's name, as the one-turn levels do."""
    check_level(level)
    if split == "private_eval":
        return shared.commitment(split, EXPERT if level == EXPERT else shared.DEFAULT_DIFFICULTY)
    if split not in SPLITS:
        raise shared.SplitError(f"unknown split {split!r}; choose one of {', '.join(SPLITS)}")
    if level == EXPERT:
        base = EXPERT_TRAIN_SEED_BASE if split == "train" else EXPERT_DEV_SEED_BASE
    else:
        base = TRAIN_SEED_BASE if split == "train" else DEV_SEED_BASE
    suffix = "" if level == STANDARD else f":{level}"
    return hashlib.sha256(f"{PUBLIC_COMMITMENT_LABEL}:{split}:{base}{suffix}".encode()).hexdigest()


def plan_for(split: str, index: int, history: str = HISTORY_ALL, difficulty: str = STANDARD) -> RepoPlan:
    """The plan of task `index` of `split` at level `difficulty` (standard or expert), built for history
    mode `history` (`plan.HISTORY_MODES`)."""
    return build(scenario_for(index, difficulty), seed_for(split, index, difficulty), history)


def level_of(difficulty: str) -> str:
    """The level a plan's difficulty belongs to (easy, medium and hard are the standard level's)."""
    return EXPERT if difficulty == EXPERT else STANDARD


def spread(count: int, size: int = DEV_SIZE, level: str = STANDARD) -> list[int]:
    """The first `count` task indices of a split of `size` taken in turn from each difficulty (easy,
    medium, hard, easy, ...), in index order within each: a small sample plays every level."""
    chosen = scenarios(level)
    levels: dict[str, list[int]] = {}
    for index in range(size):
        levels.setdefault(chosen[index % len(chosen)].difficulty, []).append(index)
    queues = [list(indices) for indices in levels.values()]
    order: list[int] = []
    while len(order) < min(count, size):
        for queue in queues:
            if queue and len(order) < count:
                order.append(queue.pop(0))
    return order
