"""Decoys, recognisably not secrets: `recognisably_not_secret(kind, value, line)`, one documented rule
per decoy kind (`DECOY_RULES`), meant to hold for every decoy and for no secret; the task's shown
convention (`shown_convention`) for public keys.
"""

from __future__ import annotations

import base64
import binascii
import itertools
import math
import re
from collections.abc import Callable
from dataclasses import dataclass

from cryptography.exceptions import UnsupportedAlgorithm
from cryptography.hazmat.primitives import serialization

from redaction_pressure.spans import Record

from .entropy import has_high_entropy_run, shannon_entropy
from .records import key_context
from .values import jwt_parts

# -- decoys: recognisably not secrets ------------------------------------------------------


def key_before(value: str, line: str) -> str:
    """The key name a value sits under: the last identifier before it on its line.

    `STRIPE_PK="pk_..."` -> `STRIPE_PK`; `"clientId": "..."` -> `clientId`;
    `...&client_id=...` -> `client_id`; `- name: X\\n  value: "..."` -> `value`.
    """
    head = line[: max(line.find(value), 0)]
    m = re.search(r"([A-Za-z_][A-Za-z0-9_.-]*)[^A-Za-z0-9_]*$", head)
    return m.group(1) if m else ""


def key_words(key: str) -> list[str]:
    """`stripePublishableKey` / `STRIPE_PUBLISHABLE_KEY` / `stripe-publishable-key` -> words, lower case."""
    return [w.lower() for w in re.findall(r"[A-Z]+(?![a-z])|[A-Z]?[a-z]+|\d+", key)]


_PLACEHOLDER = re.compile(
    r"""\$\{[A-Za-z_][A-Za-z0-9_]*\}"""  # ${DB_PASSWORD}, ${CI_NAME}
    r"""|\$\{\{\s*secrets\.[A-Za-z_][A-Za-z0-9_]*\s*\}\}"""  # ${{ secrets.NAME }}
    r"""|<[A-Za-z_][A-Za-z0-9_ -]*>"""  # <YOUR_TOKEN>
    r"""|os\.environ\[(["'])[A-Za-z_][A-Za-z0-9_]*\1\]"""  # os.environ["NAME"]
    r"""|os\.(?:getenv|environ\.get)\((["'])[A-Za-z_][A-Za-z0-9_]*\2(?:,[^)]*)?\)"""  # os.getenv("NAME")
    r"""|process\.env\.[A-Za-z_][A-Za-z0-9_]*"""
    r"""|import\.meta\.env\.[A-Za-z_][A-Za-z0-9_]*"""
    r"""|:'[A-Za-z_][A-Za-z0-9_]*'"""  # psql :'var'
    r"""|%\([A-Za-z_][A-Za-z0-9_]*\)s"""  # %(password)s
    r"""|"\$\{?[A-Za-z_][A-Za-z0-9_]*\}?\""""  # "$VAR", "${VAR}"
)
_COMMIT_WORDS = re.compile(r"commit|checkout|\bref\b|_ref\b|\bsha\b|_sha\b|\bsha_|revision|\brev\b|uses:", re.I)
_DIGEST = re.compile(
    r"sha256:[0-9a-f]{64}"
    r"|sha(?:256|384|512)-[A-Za-z0-9+/]+={0,2}"  # subresource integrity
    r"|SHA256:[A-Za-z0-9+/]{43}=?"  # ssh host key fingerprint
    r"|SCRAM-SHA-256\$\d+:[A-Za-z0-9+/=]+\$[A-Za-z0-9+/=]+:[A-Za-z0-9+/=]+"
    r"|md5[0-9a-f]{32}"
    r"|\*[0-9A-F]{40}"  # MySQL native password hash
)
_DIGEST_WORDS = re.compile(r"sha-?256|sha-?1|hash|digest|checksum|integrity|fingerprint", re.I)
_UUID4 = re.compile(r"[0-9a-f]{8}-[0-9a-f]{4}-4[0-9a-f]{3}-[89ab][0-9a-f]{3}-[0-9a-f]{12}", re.I)
_SSH_PUBLIC = re.compile(r"(?:ssh-ed25519|ssh-rsa|ecdsa-sha2-nistp(?:256|384|521)) AAAA[A-Za-z0-9+/]+={0,2}(?: \S+)?")
_PEM_PUBLIC = re.compile(r"-----BEGIN PUBLIC KEY-----\n[A-Za-z0-9+/=\n]+\n-----END PUBLIC KEY-----")
_PUBLIC_WORDS = {"public", "publishable", "site", "search", "anon", "pub", "browser"}
"""Words that make a key name public whatever the vendor (`app key` and `client token` do not:
Pusher's app key is public, an app key elsewhere is the secret)."""
_PUBLIC_IDS = {("client", "id"), ("app", "id"), ("account", "id")}
_ALLOWLIST = re.compile(r"pragma:\s*allowlist[ -]secret|gitleaks:allow|trufflehog:ignore|#\s*nosec\b|noqa:\s*S10[5-7]")
"""Allowlist comments of detect-secrets, gitleaks, trufflehog, bandit and ruff."""
_ID_WORDS = {"id", "trace", "span", "request"}
_ID_VALUE = re.compile(r"[0-9a-f]{8,64}|[0-9]+|[0-9]+-[a-z0-9]+\.apps\.googleusercontent\.com")
_SETTING = re.compile(
    r"\d+"  # a TTL, a max age, key bits
    r"|\d+(?:ms|s|m|h|d)"  # a duration
    r"|(?:HS|RS|ES|PS)(?:256|384|512)|EdDSA|AES-(?:128|192|256)-(?:GCM|CBC|CTR)"  # an algorithm
    r"|Authorization|X(?:-[A-Za-z0-9]+)+"  # a header name
    r"|v?\d+(?:\.\d+){1,3}|\d{4}-\d{2}-\d{2}"  # a version or an API date
)
_REFERENCE = re.compile(
    r"/[a-z0-9][a-z0-9_.-]*(?:/[a-z0-9][a-z0-9_.-]*)*"  # a file path of lower-case words
    r"|[A-Z]{2,}[0-9]*(?:_[A-Z]{2,}[0-9]*)+"  # an environment variable's name (words, not a token body)
    r"|arn:aws:secretsmanager:[a-z0-9-]+:\d{12}:secret:[\w/+=.@-]+"
    r"|vault:secret/[\w/.-]+(?:#\w+)?"
    r"|[a-z]+(?:[-/][a-z]+)+"  # a secret's name in words (k8s Secret, secrets-manager path)
)
_FAKE_WORDS = re.compile(r"fake|dummy|test|notreal|sample|example|mock")
_KNOWN_PREFIXES = sorted(
    ("ghp_", "gho_", "npm_", "github_pat_", "glpat-", "xoxb-", "xoxp-", "sk_live_", "rk_live_", "sk_test_",
     "pk_live_", "pk_test_", "AIzaSy", "sk-proj-", "AKIA", "ASIA", "django-insecure-", "base64:"),
    key=len, reverse=True,
)  # fmt: skip
_HOUSE_PREFIX = re.compile(r"[A-Za-z]{2,8}[-_.](?:[A-Za-z]{2,6}[-_.])?")
"""A vendor-style prefix: a short word and a separator, maybe twice (`zorv_live_`, `ZORV-SEC-`)."""
FIXTURE_BITS = 2.5
_SEQUENCES = (
    "0123456789abcdefghijklmnopqrstuvwxyz",
    "0123456789ABCDEFGHIJKLMNOPQRSTUVWXYZ",
    "abcdefghijklmnopqrstuvwxyz",
)


def fixture_body(value: str) -> str:
    """The part of a value after a published or vendor-style prefix (if at least 12 characters and half remain)."""
    prefix = next((p for p in _KNOWN_PREFIXES if value.startswith(p)), None)
    if prefix is None:
        m = _HOUSE_PREFIX.match(value)
        prefix = m.group() if m else ""
    body = value[len(prefix) :]
    return body if len(body) >= 12 and 2 * len(body) >= len(value) else value


def fixture_entropy_limit(n: int) -> float:
    """Below this many bits per character an n-character body is visibly repetitive.

    2.5 bits, but never above log2(n) - 1.5: n random characters cannot exceed log2(n)
    bits, so a flat 3.0 would call a short random password (10 characters, two
    repeats: 2.9 bits) a fixture.
    """
    return min(FIXTURE_BITS, math.log2(max(n, 2)) - 1.5)


def _sequential_run(body: str, n: int = 8) -> bool:
    """`body` holds n consecutive characters of 0-9a-z (either case): a counting fake."""
    return any(seq[i : i + n] in body for seq in _SEQUENCES for i in range(len(seq) - n + 1))


def _visibly_fake(value: str, line: str) -> bool:
    """A test fixture: an allowlist pragma on the line, or a body that is fake by eye.

    The body (`fixture_body`) is fake when it holds a lower-case fake word (fake, dummy,
    test, notreal, sample, example, mock), counts (8 characters of `0123456789abcdef...`),
    or its entropy is below `fixture_entropy_limit` (2.5 bits per character for 16+).
    """
    if _ALLOWLIST.search(line):
        return True
    body = fixture_body(value)
    return (
        # A fake word repeated, or opening the body: a random token may hold one by chance.
        len(_FAKE_WORDS.findall(body)) >= 2
        or bool(_FAKE_WORDS.match(body))
        or _sequential_run(body)
        or shannon_entropy(body) < fixture_entropy_limit(len(body))
    )


@dataclass(frozen=True)
class Convention:
    """What a task's shown records establish about its vendors' public identifiers."""

    prefixes: tuple[tuple[str, str], ...] = ()
    """(public, secret) prefix pairs: values with the public prefix are never listed as secrets."""
    keys: frozenset[str] = frozenset()
    """Key contexts (`key_context`) whose values the prompt never lists as secrets."""


def _public_key(value: str, line: str, convention: Convention = Convention(), context: str = "") -> bool:
    """A public key by its shape, a value under an unambiguously public name (`*_publishable_key`,
    `client_id`, `pk`), or a vendor's public identifier by the convention the task's shown records
    establish: one of its public prefixes, or a key whose values the prompt never lists."""
    if context and context in convention.keys:
        return True
    for public, secret in convention.prefixes:
        # The longest matching prefix decides: a vendor's secret prefix may extend its public one.
        if value.startswith(public) and not (len(secret) > len(public) and value.startswith(secret)):
            return True
    if _SSH_PUBLIC.fullmatch(value) or _PEM_PUBLIC.fullmatch(value):
        return True
    if value.startswith(("MFkw", "MCow", "MIIB", "MIIC")):
        try:
            serialization.load_der_public_key(base64.b64decode(value, validate=True))
            return True
        except (ValueError, binascii.Error, UnsupportedAlgorithm):
            pass
    if re.fullmatch(r"pk_(?:live|test)_[A-Za-z0-9]+", value) or re.fullmatch(r"6L[A-Za-z0-9_-]{38}", value):
        return True
    try:
        if jwt_parts(value)[1].get("role") == "anon":
            return True
    except (ValueError, UnicodeDecodeError):
        pass
    if re.fullmatch(r"[0-9a-f]{32}", value) and re.search(rf"https://{value}@o\d+\.ingest\.sentry\.io/\d+", line):
        return True
    words = key_words(key_before(value, line))
    pairs = set(itertools.pairwise(words))
    return (
        words == ["pk"]
        or bool(pairs & _PUBLIC_IDS)
        or any(a in _PUBLIC_WORDS and b in ("key", "id", "token") for a, b in pairs)
    )


DECOY_RULES: dict[str, Callable[[str, str], bool]] = {
    # A documented example: ends in AWS's EXAMPLE / EXAMPLEKEY marker.
    "example_key": lambda value, line: value.endswith(("EXAMPLE", "EXAMPLEKEY")),
    # Placeholder syntax, the whole value: ${X}, ${{ secrets.X }}, <X>, os.environ[...],
    # os.getenv(...), os.environ.get(...), process.env.X, import.meta.env.X, psql :'var',
    # %(x)s, "$VAR".
    "placeholder": lambda value, line: bool(_PLACEHOLDER.fullmatch(value)),
    # 40 lower-case hex on a line that names a commit, checkout, ref, sha, revision or an
    # action pin (`uses: x@sha`).
    "commit_sha": lambda value, line: bool(
        re.fullmatch(r"[0-9a-f]{40}", value)
        and _COMMIT_WORDS.search(line[max(0, line.find(value) - 40) : line.find(value)])
    ),
    "uuid": lambda value, line: bool(_UUID4.fullmatch(value)),
    # A digest by its self-describing shape (sha256:, sha384-, SHA256:, SCRAM-SHA-256$,
    # md5 + 32 hex, MySQL * + 40 hex); bare hex64 only on a line that names a digest,
    # since a bare hex64 is also a generic secret's shape.
    "hash_digest": lambda value, line: bool(
        _DIGEST.fullmatch(value) or (re.fullmatch(r"[0-9a-f]{64}", value) and _DIGEST_WORDS.search(line))
    ),
    "public_key": _public_key,
    # An id-shaped value (lower-case hex, digits, an OAuth client id) under an id-ish name
    # (id, *_id, *Id, trace, span, request).
    "identifier": lambda value, line: bool(
        _ID_VALUE.fullmatch(value) and _ID_WORDS & set(key_words(key_before(value, line)))
    ),
    # A reference by name (a path, an env var's name, an ARN, a vault path, a secret's
    # name) with no high-entropy run in it.
    "secret_reference": lambda value, line: bool(_REFERENCE.fullmatch(value)) and not has_high_entropy_run(value),
    # A setting (a number, a duration, an algorithm, a header name, a version) with no
    # high-entropy run in it.
    "secret_setting": lambda value, line: bool(_SETTING.fullmatch(value)) and not has_high_entropy_run(value),
    "test_fixture": _visibly_fake,
    "redacted_marker": lambda value, line: value == "[REDACTED]",
}


def recognisably_not_secret(
    kind: str, value: str, line: str, convention: Convention = Convention(), context: str = ""
) -> bool:
    """Whether a value of decoy `kind` on `line` is recognisably not a secret, by that kind's rule.

    `line` is the full text line(s) holding the value. Unknown kinds (secret kinds) are
    never recognisably not secrets; to ask whether *any* rule would pass a value off as
    harmless, use `decoy_rules_accepting`.
    """
    if kind == "public_key":
        return _public_key(value, line, convention, context)
    rule = DECOY_RULES.get(kind)
    return rule is not None and rule(value, line)


def decoy_rules_accepting(value: str, line: str, convention: Convention = Convention(), context: str = "") -> list[str]:
    """The decoy kinds whose rule accepts `value` on `line`: [] for a value that looks like a secret."""
    return [kind for kind in DECOY_RULES if recognisably_not_secret(kind, value, line, convention, context)]


def shown_convention(task_seed: int, shown: list[Record]) -> Convention:
    """The vendor conventions a task's shown records establish (see `Convention`)."""
    listed = {key_context(r, s) for r in shown for s in r.secrets}
    unlisted = {key_context(r, d) for r in shown for d in r.decoys if d.kind == "public_key"}
    return Convention(_shown_public_prefixes(task_seed, shown), frozenset(unlisted - listed))


def _shown_public_prefixes(task_seed: int, shown: list[Record]) -> tuple[tuple[str, str], ...]:
    """The (public, secret) prefix pairs of the task's vendors that its shown records establish:
    the public prefix starts a value the prompt does not list as a secret, and no listed secret
    starts with it unless it starts with the (longer) secret prefix too."""
    from redaction_pressure.corpus import draw_dialect

    dialect, _ = draw_dialect(task_seed, len(shown))
    listed = [r.value(s) for r in shown for s in r.secrets]
    prefixes = []
    for house in dialect.world.houses:
        sec = house.secret_prefix
        for pub in house.public_prefixes:
            if not pub:
                continue
            unlisted = any(r.value(d).startswith(pub) for r in shown for d in r.decoys)
            longer = len(sec) > len(pub) and sec.startswith(pub)
            if unlisted and not any(v.startswith(pub) and not (longer and v.startswith(sec)) for v in listed):
                prefixes.append((pub, sec))
    return tuple(prefixes)
