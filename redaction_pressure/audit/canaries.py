"""Canaries: fresh values in each secret's own format, which the probes put in its variable.

A probe fills a secret's variable with a canary and compares what the repository then does
with what the gold fix does. The code under probe must not be able to tell a canary from the
real value by any test it can make without holding the secret itself, so a canary is drawn,
at grading time from a fresh random source (never from the task's seed: a seeded canary would
be computable from the public splits), in the secret's own format:

- the published formats keep their fixed vendor prefix and structure: AWS key ids, GitHub and
  npm tokens (with a valid CRC32 checksum), Slack's numbered segments, Stripe, Google, GitLab;
- a private key is a fresh key of the same style (EC SEC1 or PKCS#8, Ed25519 PKCS#8 or
  OpenSSH) that loads;
- a base64 `user:password` credential keeps its user and gets a fresh password of the same shape;
- every other value (passwords, generic high-entropy secrets, an invented vendor's house token)
  keeps its prefix, its length, every separator and symbol at its place, and draws the rest from
  the smallest alphabet that holds the original's characters (hex stays hex, base32 stays
  base32); a trailing CRC32 checksum (base62 or hex, as the house formats carry one) is
  recomputed; a base64 value is fresh bytes of the same length, encoded alike.

`canary_env` gives one set of canaries for a plan's variables (a DSN or a basic credential
wrapped as the variable holds it); `original_env` what the variables held in the original
repository's terms.
"""

from __future__ import annotations

import base64
import binascii
import random
import re
import zlib

from redaction_pressure.audit.plan import RepoPlan, Secret
from redaction_pressure.corpus import keys
from redaction_pressure.corpus.draw import BASE32, BASE62, DIGITS, HEX, LOWER, UPPER, URLSAFE, Draw
from redaction_pressure.corpus.values import base62, crc32_base62

PREFIXES = (
    "github_pat_",
    "sk_live_",
    "sk_test_",
    "rk_live_",
    "rk_test_",
    "django-insecure-",
    "base64:",
    "glpat-",
    "AIzaSy",
    "AKIA",
    "ASIA",
    "ghp_",
    "gho_",
    "ghu_",
    "ghs_",
    "ghr_",
    "npm_",
    "xoxb-",
    "xoxp-",
    "xoxa-",
    "xoxs-",
)
"""Fixed vendor prefixes a canary keeps (longest first where one is another's start)."""
RUN = re.compile(r"[A-Za-z0-9]+")
HOUSE_PREFIX = re.compile(r"^x?[a-z]{3}(?:_sk_|-live-|_|-)|^[A-Z]{3}S")
"""An invented vendor's secret prefix (`scenarios.parts.Builder.house`): its three-letter stem
with `_sk_`, `-live-`, `_` or `-` (or `x` before it), or the stem in capitals and an `S`."""
ALPHABETS = (
    DIGITS,
    HEX,
    HEX.upper(),
    "0123456789ABCDEFGHJKMNPQRSTVWXYZ",  # Crockford
    BASE32,
    LOWER + DIGITS,
    UPPER + DIGITS,
    BASE62,
    URLSAFE,
    BASE62 + "+/",
)
"""Candidate alphabets for a value's random characters, smallest first."""
PEM_STYLES = {
    "-----BEGIN EC PRIVATE KEY-----": ("ec_sec1",),
    "-----BEGIN OPENSSH PRIVATE KEY-----": ("ed25519_openssh",),
    "-----BEGIN PRIVATE KEY-----": ("ec_pkcs8", "ed25519_pkcs8"),
}


def twin(value: str, rng: random.Random, kind: str = "") -> str:
    """A fresh value in the format of `value` (see the module docstring); never `value` itself."""
    for _ in range(8):
        out = _twin(value, rng, kind)
        if out != value:
            return out
    raise ValueError("no fresh value in this format")


def _twin(value: str, rng: random.Random, kind: str) -> str:
    if value.startswith("-----BEGIN"):
        return _pem(value, rng)
    if kind == "base64_credential":
        decoded = _b64(value)
        if decoded is not None and b":" in decoded:
            user, _, password = decoded.decode("utf-8", "replace").partition(":")
            return base64.b64encode(f"{user}:{_shaped(password, rng)}".encode()).decode()
    prefix = next((p for p in PREFIXES if value.startswith(p)), "")
    rest = value[len(prefix) :]
    if prefix in ("ghp_", "gho_", "ghu_", "ghs_", "ghr_", "npm_") and len(rest) == 36:
        body = "".join(rng.choice(BASE62) for _ in range(30))
        return prefix + body + crc32_base62(body)
    if kind == "aws_secret_access_key" and len(value) == 40:
        return "".join(rng.choice(BASE62 + "+/") for _ in range(40))
    if prefix.startswith(("sk_", "rk_")) and rest.startswith("51"):
        prefix, rest = prefix + "51", rest[2:]
    if prefix == "base64:" or (kind == "generic_secret" and _is_base64(rest)):
        raw = _b64(rest) or b""
        fresh = rng.getrandbits(8 * len(raw)).to_bytes(len(raw), "little") if raw else b""
        return prefix + base64.b64encode(fresh).decode()
    if not prefix and kind in ("house_token", "") and (m := HOUSE_PREFIX.match(value)) and m.end() < len(value):
        prefix, rest = value[: m.end()], value[m.end() :]
    return prefix + _shaped(rest, rng)


def _shaped(text: str, rng: random.Random) -> str:
    """`text` with its alphanumeric characters drawn afresh, separators and symbols in place: each
    run between separators from the smallest alphabet holding it, or, when the last characters
    are a CRC32 checksum of the rest, the whole from one alphabet and the checksum recomputed."""
    raw = "".join(c for c in text if c.isalnum())
    checksum = _checksum(raw)
    if checksum:
        make, width = checksum
        alphabet = _alphabet(raw[:-width])
        body = "".join(rng.choice(alphabet) for _ in range(len(raw) - width))
        fresh = iter(body + make(body))
        return "".join(next(fresh) if c.isalnum() else c for c in text)
    return RUN.sub(lambda m: "".join(rng.choice(_alphabet(m.group())) for _ in m.group()), text)


def _alphabet(run: str) -> str:
    return next((a for a in ALPHABETS if all(c in a for c in run)), BASE62)


def _checksum(raw: list[str]):
    """(make, width) when the last characters are the CRC32 of the rest (base62 or hex)."""
    text = "".join(raw)
    if len(text) > 12 and text[-6:] == base62(zlib.crc32(text[:-6].encode()), 6):
        return (lambda body: base62(zlib.crc32(body.encode()), 6)), 6
    if len(text) > 14 and text[-8:] == format(zlib.crc32(text[:-8].encode()), "08x"):
        return (lambda body: format(zlib.crc32(body.encode()), "08x")), 8
    return None


def _b64(text: str) -> bytes | None:
    try:
        return base64.b64decode(text, validate=True)
    except (binascii.Error, ValueError):
        return None


def _is_base64(text: str) -> bool:
    return len(text) % 4 == 0 and len(text) >= 16 and any(c in "+/=" for c in text) and _b64(text) is not None


def _pem(value: str, rng: random.Random) -> str:
    text = value.replace("\\n", "\n")
    header = text.strip().splitlines()[0].strip()
    styles = PEM_STYLES.get(header)
    if styles is None:
        raise ValueError(f"no fresh key for a {header!r} block")
    style = styles[0]
    if len(styles) > 1:  # both PKCS#8: an Ed25519 key's body is much shorter than an EC key's
        style = "ed25519_pkcs8" if len(text) < 180 else "ec_pkcs8"
    pem = keys.private_key_pem(Draw(rng), style)
    if value.endswith("\n") and not pem.endswith("\n"):
        pem += "\n"
    return pem.replace("\n", "\\n") if "\\n" in value else pem


def variable_value(secret: Secret, value: str) -> str:
    """What the secret's variable holds when the secret's value is `value` (a DSN around a
    password; a basic credential holds itself)."""
    if "{}" in secret.canary and not secret.canary.startswith("basic:"):
        return secret.canary.replace("{}", value)
    return value


def canary_env(plan: RepoPlan, rng: random.Random) -> dict[str, str]:
    """One set of canaries: every secret's variable, holding a fresh value of its format."""
    out: dict[str, str] = {}
    for s in plan.secrets:
        out.setdefault(s.env, variable_value(s, twin(s.value, rng, s.kind)))
    return out


def original_env(plan: RepoPlan) -> dict[str, str]:
    """What each variable held in the original repository's terms (the secret in its DSN or token)."""
    out: dict[str, str] = {}
    for s in plan.secrets:
        out.setdefault(s.env, variable_value(s, s.value))
    return out
