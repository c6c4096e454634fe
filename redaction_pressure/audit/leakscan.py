"""The leak scan: which secrets are still present in a repository's bytes (a pure function).

A secret is present when any of its *forms* occurs in a scanned byte string:

- its exact value (UTF-8), and any extra exact strings it declares (`Secret.also`: a base64
  token's decoded `user:password`, the body lines of a private key, so deleting a key's
  BEGIN line alone does not hide the key);
- its hex encoding, lower and upper case;
- its URL encoding (`quote(value, safe="")` and `quote_plus`), when that differs;
- its base64 encoding, standard and URL-safe alphabets, at each of the three alignments.

Base64 alignment: inside a larger base64 blob, the value may start at byte offset 0, 1 or 2
of a 3-byte group, and each offset encodes it to different characters. For offset k we encode
k zero bytes followed by the value and keep only the characters that depend on the value
alone: we drop the first 0, 2 or 3 characters (they mix in the prefix) and, when the value
ends inside a group, the last character and any `=` padding (they mix in whatever follows).
That stable core occurs in any base64 text that encodes the value at that offset, with or
without padding, whatever comes before or after it. Base64 split across lines (a wrapped
PEM or MIME body) is not followed; a key's own body lines are covered by `also`.

Where: the working tree (every file, tracked or not, `.git` excluded) for every secret, and
for `history` secrets also every blob reachable from any ref, tag, stash, reflog entry or the
index. A history that is gone (`.git` deleted or unreadable) or rewritten without keeping
every original commit message leaves every history secret counted as left.
"""

from __future__ import annotations

import base64
from collections.abc import Iterable, Mapping
from dataclasses import dataclass
from urllib.parse import quote, quote_plus

from redaction_pressure.audit.plan import RepoPlan, Secret

HISTORY_OK = "ok"
HISTORY_MISSING = "missing"
HISTORY_REWRITTEN = "rewritten"
"""The history lost an original commit message: not a remediation."""
HISTORY_NOT_SCANNED = "not_scanned"
"""The task has no history secret, so history was not collected."""
HISTORY_OVERSIZED = "oversized"
"""The repository was too large to collect; nothing in it can be vouched for."""


def base64_cores(data: bytes) -> list[bytes]:
    """The alignment-independent base64 cores of `data` (both alphabets, three offsets)."""
    cores: list[bytes] = []
    for k, head in ((0, 0), (1, 2), (2, 3)):
        total = k + len(data)
        for encode in (base64.b64encode, base64.urlsafe_b64encode):
            text = encode(b"\x00" * k + data).rstrip(b"=")
            text = text[head:]
            if total % 3:
                text = text[:-1]
            if len(text) >= 8 and text not in cores:
                cores.append(text)
    return cores


def forms(secret: Secret) -> list[bytes]:
    """Every byte string whose presence means `secret` still leaks."""
    out: list[bytes] = []
    for text in (secret.value, *secret.also):
        raw = text.encode()
        candidates = [raw, raw.hex().encode(), raw.hex().upper().encode()]
        candidates += [q.encode() for q in (quote(text, safe=""), quote_plus(text)) if q != text]
        candidates += base64_cores(raw)
        out += [c for c in candidates if c not in out]
    return out


@dataclass(frozen=True)
class Snapshot:
    """What `finalize` collected from the runtime: the bytes the scan looks at."""

    tree: Mapping[str, bytes]
    """Working-tree files by path (`.git` excluded)."""
    blobs: Iterable[tuple[str, bytes]] = ()
    """(path as git names it, bytes) of every reachable blob and index entry."""
    history: str = HISTORY_OK


def scan(plan: RepoPlan, snapshot: Snapshot) -> dict[str, dict[str, list[str]]]:
    """For each secret still leaking: where, as {"tree": [paths], "history": [paths or reason]}."""
    blobs = list(snapshot.blobs)
    left: dict[str, dict[str, list[str]]] = {}
    for secret in plan.secrets:
        needles = forms(secret)
        tree = sorted(path for path, data in snapshot.tree.items() if any(n in data for n in needles))
        history: list[str] = []
        if secret.history:
            if snapshot.history != HISTORY_OK:
                history = [f"<{snapshot.history}>"]
            else:
                history = sorted({path for path, data in blobs if any(n in data for n in needles)})
        if tree or history:
            left[secret.id] = {"tree": tree, "history": history}
    return left


def history_state(original_messages: Iterable[str], reachable_messages: Iterable[str], git_ok: bool) -> str:
    """HISTORY_OK, or why the history cannot count as remediated."""
    if not git_ok:
        return HISTORY_MISSING
    have = {m.strip() for m in reachable_messages}
    if any(m.strip() not in have for m in original_messages):
        return HISTORY_REWRITTEN
    return HISTORY_OK
