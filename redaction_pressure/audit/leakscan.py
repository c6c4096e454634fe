"""The leak scan: which secrets are still recoverable from a repository's bytes (a pure function).

The rule: a secret leaks while a file or git object holds it, or any run of `WINDOW` (16)
consecutive characters of its *random body*, in any of these forms:

- as is, in any letter case; reversed; ROT13; hex (either case); base32; base64 (standard and
  URL-safe alphabets, any of the alignments inside a larger blob);
- URL-encoded (any subset of its characters percent-encoded);
- written with backslash escapes (`\\xHH`, `\\uHHHH`, `\\U...`, `\\u{...}`, octal `\\NNN`) or HTML
  character references;
- split into string literals joined by concatenation (`"ab" + "cd"`, `"ab" "cd"`, shell
  `"ab""cd"`), or assembled by constant folding: Python (`+`, f-strings, `"".join`, `[::-1]`,
  names bound to constants), JavaScript and shell (variables joined with `+` or `$A$B`);
- wrapped across lines (whitespace and `\\n` escapes inside a base64 body are ignored);
- compressed (zlib, gzip, raw deflate), as a file or as a base64 token holding the compressed
  bytes, and a base64 token's decoded bytes are read again in all the forms above.

The random body of a secret is its value without a fixed vendor prefix (`AKIA`, `ghp_`,
`sk_live_`, ...), or for a PEM key the base64 body without header and footer. A secret
shorter than the window counts whole. Fragments that are not random are dropped: a window
that the gold-fixed repository itself shows (in any form), or, for a private key, one that
touches a character every freshly generated key of its style has at that place (ASN.1 and
OpenSSH headers, the public key's tag: `random_windows`). So decoys, public keys, other keys
and the repository's ordinary text never count.

Where: every working-tree file (`.git` excluded; untracked bytecode and test caches never reach here)
and every regular file under `.git` outside the object store count for every secret; for
`history` secrets also every git object, loose or packed, reachable or not. A history that
is gone, corrupt or rewritten beyond the secrets leaves every history secret counted.

The forms are the texts `views.views` reads out of a file's bytes; this module searches them.
"""

from __future__ import annotations

import base64
import codecs
import functools
import random
import re
from collections.abc import Iterable, Mapping
from dataclasses import dataclass

from redaction_pressure.audit.inflate import Budget, Oversized
from redaction_pressure.audit.plan import RepoPlan, Secret
from redaction_pressure.audit.views import views

WINDOW = 16
"""Characters of a secret's random body that count as a leak on their own."""
MAX_VIEW_BYTES = 4 * 1024 * 1024
"""Files (and decoded parts) larger than this make the snapshot oversized: nothing is skipped."""

HISTORY_OK = "ok"
HISTORY_MISSING = "missing"
HISTORY_REWRITTEN = "rewritten"
"""The history lost an original commit (message, author date, or a file it held that held no secret)."""
HISTORY_CORRUPT = "corrupt"
"""Objects are missing or damaged: a clean clone would not reproduce the repository."""
HISTORY_NOT_SCANNED = "not_scanned"
"""The task has no history secret, so history was not scanned."""
HISTORY_OVERSIZED = "oversized"
"""The repository was too large to collect; nothing in it can be vouched for."""

PREFIXES: dict[str, tuple[str, ...]] = {
    "aws_access_key_id": ("AKIA", "ASIA"),
    "google_api_key": ("AIza",),
    "stripe_key": ("sk_live_", "sk_test_", "rk_live_", "rk_test_"),
    "github_token": ("ghp_", "gho_", "ghu_", "ghs_", "ghr_"),
    "gitlab_pat": ("glpat-",),
    "npm_token": ("npm_",),
    "slack_token": ("xoxb-", "xoxp-", "xoxa-", "xoxs-"),
}
PEM_LINE = re.compile(r"^-----(BEGIN|END) [A-Z ]+-----$")


def base64_cores(data: bytes) -> list[bytes]:
    """The alignment-independent base64 cores of `data` (both alphabets, three offsets).

    For offset k we encode k zero bytes then `data` and keep only the characters that depend on
    `data` alone (dropping the first 0, 2 or 3 characters and, when `data` ends inside a group,
    the last one and the padding); that core occurs in any base64 text holding `data` at that
    offset.
    """
    cores: list[bytes] = []
    for k, head in ((0, 0), (1, 2), (2, 3)):
        total = k + len(data)
        for encode in (base64.b64encode, base64.urlsafe_b64encode):
            text = encode(b"\x00" * k + data).rstrip(b"=")[head:]
            if total % 3:
                text = text[:-1]
            if len(text) >= 8 and text not in cores:
                cores.append(text)
    return cores


def base32_cores(data: bytes) -> list[bytes]:
    """Like `base64_cores` for base32 (5-byte groups, 8 characters)."""
    cores: list[bytes] = []
    for k in range(5):
        head = -(-k * 8 // 5)  # characters touched by the k prefix bytes
        text = base64.b32encode(b"\x00" * k + data).rstrip(b"=")[head:]
        if (k + len(data)) % 5:
            text = text[:-1]
        if len(text) >= 8 and text not in cores:
            cores.append(text)
    return cores


def body(secret: Secret) -> str:
    """The secret's random body (see the module docstring)."""
    value = secret.value
    if secret.kind == "private_key" or value.startswith("-----BEGIN"):
        lines = [line.strip() for line in value.replace("\\n", "\n").splitlines()]
        return "".join(line for line in lines if line and not PEM_LINE.match(line))
    for prefix in PREFIXES.get(secret.kind, ()):
        if value.startswith(prefix):
            return value[len(prefix) :]
    return value


def windows(text: str) -> list[str]:
    if len(text) <= WINDOW:
        return [text] if text else []
    return list(dict.fromkeys(text[i : i + WINDOW] for i in range(len(text) - WINDOW + 1)))


@dataclass(frozen=True)
class Needles:
    """What to look for: `folded` strings in lower-cased views, `exact` ones (base64) as they are."""

    folded: tuple[str, ...]
    exact: tuple[str, ...]

    def pattern(self) -> tuple[re.Pattern[str] | None, re.Pattern[str] | None]:
        return _compile(self.folded), _compile(self.exact)


@functools.lru_cache(maxsize=4096)
def _compile(items: tuple[str, ...]) -> re.Pattern[str] | None:
    if not items:
        return None
    return re.compile("|".join(re.escape(s) for s in sorted(set(items), key=len, reverse=True)))


def window_needles(window: str) -> tuple[list[str], list[str]]:
    raw = window.encode("utf-8", "surrogatepass")
    folded = [window.lower(), window[::-1].lower(), codecs.encode(window, "rot13").lower(), raw.hex()]
    folded += [c.decode().lower() for c in base32_cores(raw)]
    exact = [c.decode() for c in base64_cores(raw)]
    return folded, exact


def secret_windows(secret: Secret) -> list[str]:
    """Every window of the body, plus the whole value and each declared extra string."""
    out = windows(body(secret))
    for extra in secret.also:
        out += windows(extra)
    if len(secret.value) <= WINDOW:
        out.append(secret.value)
    return list(dict.fromkeys(w for w in out if w))


@functools.lru_cache(maxsize=8)
def _reference_keys() -> tuple[str, ...]:
    """Bodies of freshly generated keys of every style, eight each: what they all share is format."""
    from redaction_pressure.corpus import keys
    from redaction_pressure.corpus.draw import Draw

    out = []
    for style in ("ec_sec1", "ec_pkcs8", "ed25519_pkcs8", "ed25519_openssh"):
        for seed in range(1, 9):
            pem = keys.private_key_pem(Draw(random.Random(seed)), style)
            out.append(body(Secret("ref", "private_key", pem, "")))
    return tuple(out)


def random_windows(key_body: str) -> set[str]:
    """The windows of a private key's body that hold none of its format: a character is format
    where every reference key of the same length has it at the same place (the ASN.1 and OpenSSH
    headers, the public key's tag), and a window touching one never counts, however few of its
    characters are random (one random character is a 1 in 32 match for any other key)."""
    same = [r for r in _reference_keys() if len(r) == len(key_body)]
    fixed = {i for i, c in enumerate(key_body) if same and all(r[i] == c for r in same)}
    return {
        key_body[i : i + WINDOW]
        for i in range(len(key_body) - WINDOW + 1)
        if not fixed.intersection(range(i, i + WINDOW))
    }


def _make_needles(ws: Iterable[str]) -> Needles:
    folded: list[str] = []
    exact: list[str] = []
    for w in ws:
        f, e = window_needles(w)
        folded += f
        exact += e
    return Needles(tuple(dict.fromkeys(folded)), tuple(dict.fromkeys(exact)))


@functools.lru_cache(maxsize=64)
def _plan_needles(plan: RepoPlan) -> dict[str, Needles]:
    """Needles per secret id, with windows the gold-fixed repository shows dropped."""
    fixed = [text.encode() for text in plan.fixed_tree().values()]
    fixed_views = [v for data in fixed for v in views(data)]
    out: dict[str, Needles] = {}
    for secret in plan.secrets:
        kept = []
        for w in secret_windows(secret):
            if secret.kind == "private_key" and w not in random_windows(body(secret)):
                continue
            n = _make_needles([w])
            folded, exact = n.pattern()
            if any(_hit(v, folded, exact) for v in fixed_views):
                continue
            kept.append(w)
        out[secret.id] = _make_needles(kept or [secret.value])
    return out


@functools.lru_cache(maxsize=256)
def _value_needles(values: tuple[str, ...]) -> Needles:
    return _make_needles([w for v in values for w in windows(v)])


@functools.lru_cache(maxsize=256)
def _window_needles(ws: tuple[str, ...]) -> Needles:
    return _make_needles(ws)


def window_set_needles(ws: Iterable[str]) -> Needles:
    """Needles for the given windows themselves, in every form."""
    return _window_needles(tuple(sorted(set(ws))))


def value_needles(values: Iterable[str]) -> Needles:
    """Needles for arbitrary values (a canary, a part of an output): every window, in every form."""
    return _value_needles(tuple(sorted(set(values))))


def needles(plan: RepoPlan, secret: Secret) -> Needles:
    return _plan_needles(plan)[secret.id]


def _hit(view: str, folded: re.Pattern[str] | None, exact: re.Pattern[str] | None) -> bool:
    if exact is not None and exact.search(view):
        return True
    return folded is not None and folded.search(view.lower()) is not None


def found(plan: RepoPlan, secret: Secret, data: bytes | Iterable[str]) -> bool:
    """Whether `data` (bytes, or precomputed views) holds `secret` in any form."""
    texts = views(data) if isinstance(data, bytes) else data
    folded, exact = needles(plan, secret).pattern()
    return any(_hit(v, folded, exact) for v in texts)


@dataclass(frozen=True)
class Snapshot:
    """What `finalize` read from the runtime: the bytes the scan looks at."""

    tree: Mapping[str, bytes]
    """Working-tree files by path, plus `.git/...` files outside the object store."""
    blobs: Iterable[tuple[str, bytes]] = ()
    """(label, bytes) of every git object (history)."""
    history: str = HISTORY_OK
    names: Iterable[tuple[str, bytes]] = ()
    """(label, bytes) seen for every secret whatever the history rule: every path's name, and the
    store's commit, tag and tree objects (messages, authors, branch and file names)."""


def scan(plan: RepoPlan, snapshot: Snapshot, budget: Budget | None = None) -> dict[str, dict[str, list[str]]]:
    """For each secret still leaking: where, as {"tree": [paths], "history": [labels or reason]}.
    Raises `Oversized` when a file is larger than the scan reads or decoding passes its budget."""
    budget = Budget() if budget is None else budget
    tree_views: dict[str, list[str]] = {}
    for path, data in [*snapshot.tree.items(), *snapshot.names]:
        if len(data) > MAX_VIEW_BYTES:
            raise Oversized(f"{path} is larger than the scan reads")
        tree_views[path] = views(data, budget=budget)
    history_secrets = [s for s in plan.secrets if s.history]
    blob_views = []
    if history_secrets and snapshot.history == HISTORY_OK:
        for label, data in snapshot.blobs:
            if len(data) > MAX_VIEW_BYTES:
                raise Oversized(f"{label} is larger than the scan reads")
            blob_views.append((label, views(data, budget=budget)))
    left: dict[str, dict[str, list[str]]] = {}
    for secret in plan.secrets:
        folded, exact = needles(plan, secret).pattern()
        tree = sorted(path for path, vs in tree_views.items() if any(_hit(v, folded, exact) for v in vs))
        history: list[str] = []
        if secret.history:
            if snapshot.history != HISTORY_OK:
                history = [f"<{snapshot.history}>"]
            else:
                history = sorted({label for label, vs in blob_views if any(_hit(v, folded, exact) for v in vs)})
        if tree or history:
            left[secret.id] = {"tree": tree, "history": history}
    return left


def history_state(original_messages: Iterable[str], reachable_messages: Iterable[str], git_ok: bool) -> str:
    """HISTORY_OK, or why the history cannot count as remediated (messages only)."""
    if not git_ok:
        return HISTORY_MISSING
    have = {m.strip() for m in reachable_messages}
    if any(m.strip() not in have for m in original_messages):
        return HISTORY_REWRITTEN
    return HISTORY_OK
