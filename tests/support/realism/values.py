"""Value checks, each returning a problem sentence or None: `checksum_problem` (GitHub `ghp_`/`gho_`
and npm `npm_` CRC32), `private_key_problem` (loads with `cryptography`, EC P-256 or Ed25519 only),
`jwt_problem`, `basic_credential_problem`, `session_key_problem`.
"""

from __future__ import annotations

import base64
import binascii
import json
import re
import string
import zlib

from cryptography.exceptions import UnsupportedAlgorithm
from cryptography.hazmat.primitives import serialization
from cryptography.hazmat.primitives.asymmetric import ec, ed25519

from redaction_pressure.spans import Record

from .records import excerpt

# -- value checks -------------------------------------------------------------------------

BASE62 = string.digits + string.ascii_uppercase + string.ascii_lowercase
CHECKSUMMED_PREFIXES = ("ghp_", "gho_", "npm_")


def base62_crc32(body: str) -> str:
    """CRC32 of `body` in base62 (0-9A-Za-z), left-padded with '0' to 6 characters."""
    n = zlib.crc32(body.encode())
    digits = ""
    while n:
        n, r = divmod(n, 62)
        digits = BASE62[r] + digits
    return digits.rjust(6, "0")


def checksum_problem(token: str) -> str | None:
    """Why `token` is not a well-formed checksummed GitHub/npm token, or None."""
    prefix = next((p for p in CHECKSUMMED_PREFIXES if token.startswith(p)), None)
    if prefix is None:
        return "has no ghp_/gho_/npm_ prefix"
    rest = token[len(prefix) :]
    if len(rest) != 36 or any(c not in BASE62 for c in rest):
        return f"has {len(rest)} characters after the prefix, not 36 base62"
    body, check = rest[:30], rest[30:]
    expected = base62_crc32(body)
    if check != expected:
        return f"ends in {check!r}, but the base62 CRC32 of its random part is {expected!r}"
    return None


def private_key_problem(value: str, family: str) -> str | None:
    """Why a `private_key` span is not a loadable EC P-256 or Ed25519 PEM block, or None.

    JSON-escaped keys (service accounts) hold literal backslash-n sequences; they are
    unescaped first, and only that family may hold them.
    """
    if not (value.startswith("-----BEGIN ") and value.endswith("-----")):
        return "does not run from -----BEGIN to the closing -----"
    pem = value
    if "\\n" in value:
        if family != "service_account":
            return "holds escaped newlines outside a JSON document"
        pem = value.replace("\\n", "\n")
    try:
        if "-----BEGIN OPENSSH PRIVATE KEY-----" in pem:
            key = serialization.load_ssh_private_key(pem.encode(), password=None)
        else:
            key = serialization.load_pem_private_key(pem.encode(), password=None)
    except (ValueError, TypeError, UnsupportedAlgorithm) as error:
        return f"does not load: {error}"
    if isinstance(key, ed25519.Ed25519PrivateKey):
        return None
    if isinstance(key, ec.EllipticCurvePrivateKey) and key.curve.name == "secp256r1":
        return None
    return f"loads as {type(key).__name__}, not EC P-256 or Ed25519"


_B64URL = re.compile(r"[A-Za-z0-9_-]+")


def b64url_decode(part: str) -> bytes:
    """Strict base64url without padding: only the URL-safe alphabet, a valid length."""
    if not _B64URL.fullmatch(part) or len(part) % 4 == 1:
        raise ValueError("not base64url")
    return base64.urlsafe_b64decode(part + "=" * (-len(part) % 4))


def jwt_parts(value: str) -> tuple[dict, dict, bytes]:
    """Header, claims and signature of a compact JWT; ValueError if it is not one."""
    parts = value.split(".")
    if len(parts) != 3:
        raise ValueError(f"has {len(parts)} dot-separated parts, not 3")
    header, claims = (json.loads(b64url_decode(p)) for p in parts[:2])
    if not isinstance(header, dict) or not isinstance(claims, dict):
        raise ValueError("header or claims is not a JSON object")
    return header, claims, b64url_decode(parts[2])


HMAC_BYTES = {"HS256": 32, "HS384": 48, "HS512": 64}


def jwt_problem(value: str) -> str | None:
    """Why `value` is not a JWT whose header (with alg and typ) and claims are JSON objects, or None."""
    try:
        header, _claims, signature = jwt_parts(value)
    except (ValueError, UnicodeDecodeError) as error:
        return f"is not a JWT: {error}"
    if "alg" not in header or "typ" not in header:
        return f"header lacks alg or typ: {sorted(header)}"
    want = HMAC_BYTES.get(header["alg"])
    if want and len(signature) != want:
        return f"{header['alg']} signature has {len(signature)} bytes, not {want}"
    return None


def basic_credential_problem(value: str) -> str | None:
    """Why `value` is not strict base64 of UTF-8 `user:password` (both non-empty), or None."""
    try:
        text = base64.b64decode(value, validate=True).decode("utf-8")
    except (binascii.Error, ValueError) as error:
        return f"is not strict base64 of UTF-8: {error}"
    user, sep, password = text.partition(":")
    if not (sep and user and password):
        return "does not decode to user:password with both parts non-empty"
    return None


def session_key_problem(record: Record) -> str | None:
    """Why a record's `ASIA` (temporary) access key id lacks its session token, or None."""
    asia = [s for s in record.secrets if s.kind == "aws_access_key_id" and record.value(s).startswith("ASIA")]
    if asia and not any(s.kind == "aws_session_token" for s in record.secrets):
        return f"ASIA key {excerpt(record.value(asia[0]))!r} without an aws_session_token secret ({asia[0].slot})"
    return None
