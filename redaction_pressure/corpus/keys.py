"""Private and public key material that loads: EC P-256 and Ed25519, derived from a seed.

Keys come from the record's generator (an EC scalar or an Ed25519 seed), so they are
deterministic, and `cryptography` serialises them, so every PEM block is a real key.
OpenSSH private keys are assembled here because `cryptography` draws their check
integers from `os.urandom`; `cryptography` still loads them (the realism tests do).
RSA is left out: deterministic RSA means a prime search per key, tens of milliseconds
each, for no extra realism the reward can see.
"""

from __future__ import annotations

import base64
import struct

from cryptography.hazmat.primitives import serialization
from cryptography.hazmat.primitives.asymmetric import ec, ed25519

from redaction_pressure.corpus.draw import Draw

_P256_ORDER = 0xFFFFFFFF00000000FFFFFFFFFFFFFFFFBCE6FAADA7179E84F3B9CAC2FC632551

PRIVATE_KEY_STYLES = ("ec_sec1", "ec_pkcs8", "ed25519_pkcs8", "ed25519_openssh")
_NONE = serialization.NoEncryption()
_PEM = serialization.Encoding.PEM


def _ec(d: Draw) -> ec.EllipticCurvePrivateKey:
    return ec.derive_private_key(1 + d.rng.getrandbits(256) % (_P256_ORDER - 1), ec.SECP256R1())


def _ed25519(d: Draw) -> ed25519.Ed25519PrivateKey:
    return ed25519.Ed25519PrivateKey.from_private_bytes(d.randbytes(32))


def private_key_pem(d: Draw, style: str) -> str:
    """A PEM private key block (no trailing newline) in one of PRIVATE_KEY_STYLES."""
    if style == "ec_sec1":
        pem = _ec(d).private_bytes(_PEM, serialization.PrivateFormat.TraditionalOpenSSL, _NONE)
    elif style == "ec_pkcs8":
        pem = _ec(d).private_bytes(_PEM, serialization.PrivateFormat.PKCS8, _NONE)
    elif style == "ed25519_pkcs8":
        pem = _ed25519(d).private_bytes(_PEM, serialization.PrivateFormat.PKCS8, _NONE)
    elif style == "ed25519_openssh":
        return _openssh_ed25519(d)
    else:
        raise ValueError(f"unknown private key style {style!r}")
    return pem.decode().strip()


def _sshstr(data: bytes) -> bytes:
    return struct.pack(">I", len(data)) + data


def _openssh_ed25519(d: Draw) -> str:
    key = _ed25519(d)
    seed = key.private_bytes(serialization.Encoding.Raw, serialization.PrivateFormat.Raw, _NONE)
    public = key.public_key().public_bytes(serialization.Encoding.Raw, serialization.PublicFormat.Raw)
    blob = _sshstr(b"ssh-ed25519") + _sshstr(public)
    check = d.randbytes(4)
    comment = f"deploy@{d.pick(('ci', 'build', 'release', 'ops'))}-{d.digits(3)}".encode()
    private = check + check + blob + _sshstr(seed + public) + _sshstr(comment)
    private += bytes(range(1, 1 + (-len(private) % 8)))
    body = (
        b"openssh-key-v1\x00" + _sshstr(b"none") + _sshstr(b"none") + _sshstr(b"")
        + struct.pack(">I", 1) + _sshstr(blob) + _sshstr(private)
    )  # fmt: skip
    text = base64.b64encode(body).decode()
    lines = [text[i : i + 70] for i in range(0, len(text), 70)]
    return "\n".join(["-----BEGIN OPENSSH PRIVATE KEY-----", *lines, "-----END OPENSSH PRIVATE KEY-----"])


def ssh_public_key(d: Draw) -> str:
    """An `ssh-ed25519 AAAA...` public key (no comment)."""
    key = _ed25519(d).public_key()
    return key.public_bytes(serialization.Encoding.OpenSSH, serialization.PublicFormat.OpenSSH).decode()


def pem_public_key(d: Draw) -> str:
    """An EC P-256 SubjectPublicKeyInfo PEM block (no trailing newline)."""
    key = _ec(d).public_key()
    return key.public_bytes(_PEM, serialization.PublicFormat.SubjectPublicKeyInfo).decode().strip()


def spki_base64(d: Draw) -> str:
    """The base64 DER of an EC public key (`MFkwEwYHKoZIzj0CAQYIKoZIzj0DAQcDQgAE...`)."""
    key = _ec(d).public_key()
    der = key.public_bytes(serialization.Encoding.DER, serialization.PublicFormat.SubjectPublicKeyInfo)
    return base64.b64encode(der).decode()
