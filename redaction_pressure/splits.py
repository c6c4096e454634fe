"""Splits: which seed each task uses, and the commitment that names a split on every trace.

- `train` task i uses seed `TRAIN_SEED_BASE + i` (0 <= i < `TRAIN_MAX_INDEX`): unbounded
  in practice, streamed lazily.
- `dev` task i uses seed `DEV_SEED_BASE + i` (0 <= i < 64).
- `private_eval` task i uses the first 8 bytes of
  HMAC-SHA256(key=secret, msg=PRIVATE_SEED_LABEL + b"\\x00" + decimal(i)), big-endian,
  with the top bit of 64 set, so a private seed can never equal a public one.

Each difficulty level has its own seeds (the level's code above bit 64, see
`corpus.levels`) and commitments (the level's name appended to what is hashed); the
standard level's are the split's own.

This module is the only reader of the secret (`REDACTION_PRESSURE_PRIVATE_SEED`). It
never returns, logs or quotes it: callers see only derived seeds and the commitment
SHA-256(COMMITMENT_LABEL + b"\\x00" + secret). A missing or short secret is an error
that names the variable; there is no fallback to a public split.
"""

from __future__ import annotations

import hashlib
import hmac
import os

from redaction_pressure.corpus.levels import DEFAULT as DEFAULT_DIFFICULTY
from redaction_pressure.corpus.levels import LEVELS, level_seed

SPLITS = ("train", "dev", "private_eval")
DEV_SIZE = 64
DEV_SEED_BASE = 1_000
TRAIN_SEED_BASE = 1_000_000
TRAIN_MAX_INDEX = 2**40
PRIVATE_MAX_INDEX = 2**32
PRIVATE_ENV = "REDACTION_PRESSURE_PRIVATE_SEED"
MIN_SECRET_CHARS = 32
PRIVATE_SEED_LABEL = b"redaction-pressure/private_eval/seed/v1"
COMMITMENT_LABEL = b"redaction-pressure/private_eval/commitment/v1"
PUBLIC_COMMITMENT_LABEL = "redaction-pressure/public-split/v1"


class SplitError(ValueError):
    """A split, index or private secret that cannot name a task."""


def _secret() -> bytes:
    # NOTE: the value is read here and handed only to HMAC and SHA-256; no message,
    # repr or return value of this module ever contains it.
    value = os.environ.get(PRIVATE_ENV)
    if value is None or value == "":
        raise SplitError(
            f"private_eval needs the environment variable {PRIVATE_ENV} "
            f"(at least {MIN_SECRET_CHARS} characters); it is not set"
        )
    if len(value) < MIN_SECRET_CHARS:
        raise SplitError(f"{PRIVATE_ENV} has {len(value)} characters; private_eval needs at least {MIN_SECRET_CHARS}")
    # The environment is bytes: a value that is not UTF-8 reached us surrogate-escaped, and
    # os.fsencode gives back exactly those bytes (never an error that quotes a character).
    return os.fsencode(value)


def check_index(split: str, index: int) -> None:
    """Raise `SplitError` unless `index` names a task of `split`."""
    if split not in SPLITS:
        raise SplitError(f"unknown split {split!r}; choose one of {', '.join(SPLITS)}")
    if isinstance(index, bool) or not isinstance(index, int):
        raise SplitError(f"task index must be an integer, got {type(index).__name__}")
    limit = {"train": TRAIN_MAX_INDEX, "dev": DEV_SIZE, "private_eval": PRIVATE_MAX_INDEX}[split]
    if not 0 <= index < limit:
        raise SplitError(f"{split} has tasks 0 to {limit - 1}; index {index} is outside")


def reset_target(split: str | None, index: int | None, seed: int | None) -> tuple[str | None, int | None]:
    """The (split, index) an OpenEnv reset names: `seed` is train task SEED; ValueError with one line otherwise."""
    if seed is None:
        return split, index
    if split not in (None, "train") or index is not None:
        raise ValueError("reset takes a seed or a split and index, not both (a seed is train task SEED)")
    if isinstance(seed, bool) or not isinstance(seed, int) or not 0 <= seed < TRAIN_MAX_INDEX:
        raise ValueError(f"seed {seed!r} names no task: a seed is train task SEED, 0 to {TRAIN_MAX_INDEX - 1}")
    return "train", seed


def seed_for(split: str, index: int, difficulty: str = DEFAULT_DIFFICULTY) -> int:
    """The corpus seed of task `index` of `split` at `difficulty` (private_eval reads the secret).

    A level's seed is the split's seed with the level's code above bit 64 (`corpus.levels`),
    so the standard level's seeds are the split's own.
    """
    check_index(split, index)
    if split == "train":
        base = TRAIN_SEED_BASE + index
    elif split == "dev":
        base = DEV_SEED_BASE + index
    else:
        base = private_seed(PRIVATE_SEED_LABEL, index)
    return level_seed(base, difficulty)


def private_seed(label: bytes, index: int) -> int:
    """The private seed of task `index` under a taskset's own domain `label` (reads the secret).

    Each taskset derives its private_eval seeds under a label of its own, so one secret
    never gives two tasksets related seeds.
    """
    message = label + b"\x00" + str(index).encode("ascii")
    digest = hmac.new(_secret(), message, hashlib.sha256).digest()
    return int.from_bytes(digest[:8], "big") | (1 << 63)


def commitment(split: str, difficulty: str = DEFAULT_DIFFICULTY) -> str:
    """SHA-256 hex naming the split's seed source at `difficulty`: the secret's for private_eval.

    The standard level's commitments are the split's own; another level's add its name.
    """
    if split not in SPLITS:
        raise SplitError(f"unknown split {split!r}; choose one of {', '.join(SPLITS)}")
    if difficulty not in LEVELS:
        raise SplitError(f"unknown difficulty {difficulty!r}; choose one of {', '.join(LEVELS)}")
    suffix = "" if difficulty == DEFAULT_DIFFICULTY else f":{difficulty}"
    if split == "private_eval":
        return hashlib.sha256(COMMITMENT_LABEL + b"\x00" + _secret() + suffix.encode()).hexdigest()
    base = TRAIN_SEED_BASE if split == "train" else DEV_SEED_BASE
    return hashlib.sha256(f"{PUBLIC_COMMITMENT_LABEL}:{split}:{base}{suffix}".encode()).hexdigest()
