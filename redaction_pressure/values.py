"""Fresh secret and decoy values in the shapes real scanners look for.

`Values` draws every value from one seeded `random.Random` handed to it, so a stream
is reproducible byte for byte. Secret shapes follow the published formats (prefix,
alphabet, length); decoys are the look-alikes that must survive a redaction: example
keys ending in EXAMPLE, commit SHAs, UUIDs, digests, public keys, test fixtures.

Nothing here knows about documents: the corpus module places these values in text.
"""

from __future__ import annotations

import base64
import json
import random

UPPER = "ABCDEFGHIJKLMNOPQRSTUVWXYZ"
LOWER = "abcdefghijklmnopqrstuvwxyz"
DIGITS = "0123456789"
ALNUM = UPPER + LOWER + DIGITS
HEX = "0123456789abcdef"
BASE32 = UPPER + "234567"
URLSAFE = ALNUM + "-_"

# DER prefixes that make generated PEM bodies open the way real keys do
# ("MIIEpAIBAAKCAQEA", "MHcCAQEEI", "MIIEvgIBADANBgkqhkiG9w0BAQEFAASC", "b3BlbnNzaC1rZXktdjE").
_RSA_PKCS1 = bytes.fromhex("308204a40201000282010100")
_RSA_PKCS8 = bytes.fromhex("308204be020100300d06092a864886f70d0101010500048204a8")
_EC_HEAD = bytes.fromhex("30770201010420")
_EC_MID = bytes.fromhex("a00a06082a8648ce3d030107a144034200")
_OPENSSH_HEAD = (
    b"openssh-key-v1\x00\x00\x00\x00\x04none\x00\x00\x00\x04none\x00\x00\x00\x00"
    b"\x00\x00\x00\x01\x00\x00\x00\x33\x00\x00\x00\x0bssh-ed25519\x00\x00\x00\x20"
)
_SSH_ED25519_BLOB = b"\x00\x00\x00\x0bssh-ed25519\x00\x00\x00\x20"
_SPKI_EC = bytes.fromhex("3059301306072a8648ce3d020106082a8648ce3d030107034200")


class Values:
    """Draws fresh values from a seeded generator."""

    def __init__(self, rng: random.Random) -> None:
        self.rng = rng

    # -- primitives ---------------------------------------------------------------

    def chars(self, alphabet: str, n: int) -> str:
        return "".join(self.rng.choices(alphabet, k=n))

    def digits(self, n: int) -> str:
        return self.rng.choice("123456789") + self.chars(DIGITS, n - 1)

    def randbytes(self, n: int) -> bytes:
        return self.rng.getrandbits(8 * n).to_bytes(n, "little") if n else b""

    def pick(self, options):
        return self.rng.choice(options)

    # -- secrets ------------------------------------------------------------------

    def secret(self, kind: str) -> str:
        return getattr(self, f"_s_{kind}")()

    def _s_aws_access_key_id(self) -> str:
        return self.pick(("AKIA", "AKIA", "AKIA", "ASIA")) + self.chars(BASE32, 16)

    def _s_aws_secret_access_key(self) -> str:
        return self.chars(ALNUM + "/+", 40)

    def _s_github_token(self) -> str:
        return self.pick(("ghp_", "ghp_", "gho_")) + self.chars(ALNUM, 36)

    def _s_github_pat(self) -> str:
        return "github_pat_11" + self.chars(BASE32, 20) + "_" + self.chars(ALNUM, 59)

    def _s_gitlab_pat(self) -> str:
        return "glpat-" + self.chars(URLSAFE, 20)

    def _s_slack_token(self) -> str:
        if self.rng.random() < 0.5:
            return f"xoxb-{self.digits(12)}-{self.digits(13)}-{self.chars(ALNUM, 24)}"
        return (
            f"xoxp-{self.digits(12)}-{self.digits(12)}-{self.digits(13)}-"
            f"{self.chars(HEX, 32)}"
        )

    def _s_stripe_key(self) -> str:
        prefix = self.pick(("sk_live_", "sk_live_", "rk_live_", "sk_test_"))
        if self.rng.random() < 0.5:
            return prefix + self.chars(ALNUM, 24)
        return prefix + "51" + self.chars(ALNUM, 97)

    def _s_google_api_key(self) -> str:
        return "AIza" + self.chars(URLSAFE, 35)

    def _s_openai_key(self) -> str:
        return "sk-proj-" + self.chars(URLSAFE, 74) + "T3BlbkFJ" + self.chars(URLSAFE, 74)

    def _s_npm_token(self) -> str:
        return "npm_" + self.chars(ALNUM, 36)

    def _s_jwt(self) -> str:
        alg = self.pick(("HS256", "HS256", "RS256"))
        issued = 1_760_000_000 + self.rng.randrange(20_000_000)
        claims = {
            "sub": self.uuid() if self.rng.random() < 0.5 else f"user_{self.digits(7)}",
            "iat": issued,
            "exp": issued + self.pick((900, 3600, 86400)),
            "scope": self.pick(("read", "read write", "admin", "orders:read")),
        }
        sig = self.randbytes(32 if alg == "HS256" else 256)
        return ".".join(
            _b64url(part)
            for part in (
                json.dumps({"alg": alg, "typ": "JWT"}, separators=(",", ":")).encode(),
                json.dumps(claims, separators=(",", ":")).encode(),
                sig,
            )
        )

    def _s_private_key(self) -> str:
        return self.pem_private_key()

    def _s_dsn_password(self) -> str:
        return self.chars(ALNUM + "-_.~", self.rng.randint(14, 28))

    def _s_sql_password(self) -> str:
        return self.chars(ALNUM + "!#$%^&*()-_=+", self.rng.randint(12, 24))

    def _s_generic_secret(self) -> str:
        style = self.rng.randrange(4)
        if style == 0:
            return self.chars(HEX, self.pick((32, 40, 64)))
        if style == 1:
            return self.chars(ALNUM, self.rng.randint(24, 40))
        if style == 2:
            return base64.b64encode(self.randbytes(self.pick((24, 32, 48)))).decode()
        return self.chars(ALNUM + "!@#%^&*-_", self.rng.randint(18, 30))

    def _s_base64_credential(self) -> str:
        inner = self.pick(
            (
                f"{self.pick(('svc', 'deploy', 'billing', 'ci'))}:{self._s_sql_password()}",
                self._s_github_token(),
                f"api:{self._s_stripe_key()}",
            )
        )
        return base64.b64encode(inner.encode()).decode()

    def pem_private_key(self, escaped_newlines: bool = False, label: str | None = None) -> str:
        label = label or self.pick(
            ("RSA PRIVATE KEY", "EC PRIVATE KEY", "PRIVATE KEY", "OPENSSH PRIVATE KEY")
        )
        if label == "RSA PRIVATE KEY":
            der, width = _RSA_PKCS1 + self.randbytes(1184), 64
        elif label == "PRIVATE KEY":
            der, width = _RSA_PKCS8 + self.randbytes(1190), 64
        elif label == "EC PRIVATE KEY":
            der = _EC_HEAD + self.randbytes(32) + _EC_MID + b"\x04" + self.randbytes(64)
            width = 64
        else:
            der = _OPENSSH_HEAD + self.randbytes(32) + b"\x00\x00\x00\x88" + self.randbytes(136)
            der += _SSH_ED25519_BLOB + self.randbytes(96) + b"\x01\x02\x03\x04\x05"
            width = 70
        body = base64.b64encode(der).decode()
        lines = [body[i : i + width] for i in range(0, len(body), width)]
        newline = "\\n" if escaped_newlines else "\n"
        return newline.join([f"-----BEGIN {label}-----", *lines, f"-----END {label}-----"])

    # -- decoys -------------------------------------------------------------------

    def uuid(self) -> str:
        h = self.chars(HEX, 32)
        variant = self.pick("89ab")
        return f"{h[:8]}-{h[8:12]}-4{h[13:16]}-{variant}{h[17:20]}-{h[20:]}"

    def commit_sha(self) -> str:
        return self.chars(HEX, 40)

    def example_aws_key_id(self) -> str:
        if self.rng.random() < 0.3:
            return "AKIAIOSFODNN7EXAMPLE"
        return "AKIA" + self.chars(UPPER + "234567", 9) + "EXAMPLE"

    def example_aws_secret(self) -> str:
        if self.rng.random() < 0.3:
            return "wJalrXUtnFEMI/K7MDENG/bPxRfiCYEXAMPLEKEY"
        return self.chars(ALNUM + "/+", 30) + "EXAMPLEKEY"

    def example_token(self) -> str:
        return self.pick(("ghp_", "sk_live_", "npm_")) + self.chars(ALNUM, 29) + "EXAMPLE"

    def digest(self) -> str:
        style = self.rng.randrange(3)
        if style == 0:
            return self.chars(HEX, 64)
        if style == 1:
            return "sha256:" + self.chars(HEX, 64)
        return "sha512-" + base64.b64encode(self.randbytes(64)).decode()

    def ssh_public_key(self) -> str:
        blob = base64.b64encode(_SSH_ED25519_BLOB + self.randbytes(32)).decode()
        return f"ssh-ed25519 {blob}"

    def pem_public_key(self) -> str:
        body = base64.b64encode(_SPKI_EC + b"\x04" + self.randbytes(64)).decode()
        lines = [body[i : i + 64] for i in range(0, len(body), 64)]
        return "\n".join(["-----BEGIN PUBLIC KEY-----", *lines, "-----END PUBLIC KEY-----"])

    def fixture(self) -> str:
        if self.rng.random() < 0.5:
            return self.chars(HEX, self.pick((32, 40)))
        return self.chars(ALNUM, self.rng.randint(24, 36))


def _b64url(data: bytes) -> str:
    return base64.urlsafe_b64encode(data).rstrip(b"=").decode()
