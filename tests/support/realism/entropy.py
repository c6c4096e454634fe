"""Shannon entropy and the high-entropy runs a secret scanner flags (`has_high_entropy_run`)."""

from __future__ import annotations

import math
import re
from collections import Counter

# -- entropy ------------------------------------------------------------------------------


def shannon_entropy(text: str) -> float:
    """Shannon entropy of the character distribution of `text`, in bits per character."""
    if not text:
        return 0.0
    counts = Counter(text)
    return -sum(c / len(text) * math.log2(c / len(text)) for c in counts.values())


HIGH_ENTROPY_RUN = re.compile(r"[A-Za-z0-9+]{16,}")
HIGH_ENTROPY_BITS = 3.5
HIGH_ENTROPY_HEX_BITS = 3.0


def has_high_entropy_run(value: str) -> bool:
    """A run of 16+ characters from [A-Za-z0-9+] above 3.5 bits per character (3.0 if all hex).

    Two departures from a plain "[A-Za-z0-9+/] above 3.5 bits" rule, both forced by the
    data: `/` ends a run, because a path's words strung together (`/var/run/secrets/
    notify`) reach 3.5 bits like any English text; and an all-hex run needs only 3.0
    bits, because 32 random hex digits average about 3.6 and often fall below 3.5.
    """
    for m in HIGH_ENTROPY_RUN.finditer(value):
        run = m.group()
        limit = HIGH_ENTROPY_HEX_BITS if re.fullmatch(r"[0-9a-fA-F]+", run) else HIGH_ENTROPY_BITS
        if shannon_entropy(run) > limit:
            return True
    return False
