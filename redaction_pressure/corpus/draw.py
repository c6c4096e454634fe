"""Hash-derived generators: every random choice of the corpus comes from one of these.

`Draw.derived(seed, *labels)` seeds a fresh `random.Random` with SHA-256 of a domain
label, the task seed and the labels, so a task's dialect (`"dialect"`) and each of its
records (`"record", i`) have generators of their own: no state is shared between
records, and shown values say nothing about hidden ones. Only `random.Random` methods
whose output is fixed across Python 3.11-3.14 for an integer seed are used.
"""

from __future__ import annotations

import hashlib
import random
from collections.abc import Sequence
from typing import TypeVar

T = TypeVar("T")

DOMAIN = "redaction-pressure/corpus/v2"

UPPER = "ABCDEFGHIJKLMNOPQRSTUVWXYZ"
LOWER = "abcdefghijklmnopqrstuvwxyz"
DIGITS = "0123456789"
BASE62 = DIGITS + UPPER + LOWER
ALNUM = UPPER + LOWER + DIGITS
HEX = "0123456789abcdef"
BASE32 = UPPER + "234567"
URLSAFE = ALNUM + "-_"


class Draw:
    """A seeded generator with the few helpers the corpus needs."""

    def __init__(self, rng: random.Random) -> None:
        self.rng = rng

    @classmethod
    def derived(cls, seed: int, *labels: str | int) -> Draw:
        material = "\x00".join([DOMAIN, str(seed), *map(str, labels)]).encode()
        return cls(random.Random(int.from_bytes(hashlib.sha256(material).digest(), "big")))

    def chars(self, alphabet: str, n: int) -> str:
        return "".join(self.rng.choices(alphabet, k=n))

    def digits(self, n: int) -> str:
        return self.rng.choice("123456789") + self.chars(DIGITS, n - 1)

    def randbytes(self, n: int) -> bytes:
        return self.rng.getrandbits(8 * n).to_bytes(n, "little") if n else b""

    def pick(self, options: Sequence[T]) -> T:
        return options[self.rng.randrange(len(options))]

    def chance(self, p: float) -> bool:
        return self.rng.random() < p

    def int(self, low: int, high: int) -> int:
        """An integer in [low, high]."""
        return self.rng.randint(low, high)

    def sample(self, options: Sequence[T], k: int) -> list[T]:
        return self.rng.sample(list(options), k)

    def shuffled(self, items: Sequence[T]) -> list[T]:
        out = list(items)
        self.rng.shuffle(out)
        return out
