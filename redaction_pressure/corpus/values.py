"""Value formats: fresh secrets in published and per-task house shapes, and their look-alikes.

A `Format` is one way of drawing values of one kind (`github_token` with prefix
`ghp_`, a per-task password policy, an invented vendor's token, a fake fixture shaped
like that token, ...). A slot of the dialect holds one format, so every value a slot
ever produces has the same shape; only the characters are fresh.

Secrets pass the checks real leaks pass: GitHub and npm tokens carry their CRC32
checksum, private keys load, JWT parts decode to JSON, base64 credentials decode to
`user:password`. Decoys are recognisably not secrets from their value (an `EXAMPLE`
suffix, a placeholder's syntax, a visibly fake body, a public key's header) or from the
key that marks them (`*_sha256`, `*_ttl`, `*_file`, `publishable_key`, `client_id`).
"""

from __future__ import annotations

import base64
import hashlib
import hmac
import json
import zlib
from collections.abc import Callable
from dataclasses import dataclass, field

from redaction_pressure.corpus import keys
from redaction_pressure.corpus.draw import ALNUM, BASE32, BASE62, DIGITS, HEX, LOWER, UPPER, URLSAFE, Draw

B64 = ALNUM + "+/="
PASSWORD_SYMBOLS = "!%*+-.=?@^_~"
"""Symbols a password policy may allow: none needs escaping in a quoted string of any family."""


@dataclass(frozen=True)
class Format:
    """How one slot's values are drawn."""

    kind: str
    label: str
    """Names the shape within the kind (`ghp`, `hex40`, `house`); part of the slot id."""
    make: Callable[[Draw], str] = field(compare=False, repr=False)
    charset: str = field(default=ALNUM, compare=False, repr=False)
    """Every character a value may contain (families quote values that need it)."""

    def draw(self, d: Draw) -> str:
        return self.make(d)


# -- checksums ---------------------------------------------------------------------------


def base62(n: int, width: int) -> str:
    out = ""
    while n:
        n, r = divmod(n, 62)
        out = BASE62[r] + out
    return out.rjust(width, "0")


def crc32_base62(body: str) -> str:
    """GitHub's token checksum: CRC32 of the random part, base62 (0-9A-Za-z), 6 characters."""
    return base62(zlib.crc32(body.encode()), 6)


def b64url(data: bytes) -> str:
    return base64.urlsafe_b64encode(data).rstrip(b"=").decode()


# -- published secret formats ----------------------------------------------------------------


def aws_access_key_id(prefix: str) -> Format:
    return Format("aws_access_key_id", prefix.lower(), lambda d: prefix + d.chars(BASE32, 16), BASE32)


AWS_SECRET = Format("aws_secret_access_key", "b64x40", lambda d: d.chars(ALNUM + "/+", 40), ALNUM + "/+")
AWS_SESSION_TOKEN = Format(
    "aws_session_token",
    "iqoj",
    lambda d: "IQoJb3JpZ2luX2Vj" + base64.b64encode(b"\x10" + d.randbytes(d.pick((170, 182, 194)))).decode(),
    B64,
)


def _checksummed(kind: str, label: str, prefix: str) -> Format:
    """`prefix`, 30 base62 characters, then their CRC32 in base62: GitHub's and npm's token layout."""

    def make(d: Draw) -> str:
        body = d.chars(BASE62, 30)
        return prefix + body + crc32_base62(body)

    return Format(kind, label, make)


def github_token(prefix: str) -> Format:
    return _checksummed("github_token", prefix.rstrip("_"), prefix)


def npm_token() -> Format:
    return _checksummed("npm_token", "npm", "npm_")


GITHUB_PAT = Format(
    "github_pat",
    "fine",
    lambda d: "github_pat_11" + d.chars(UPPER + DIGITS, 20) + "_" + d.chars(BASE62, 59),
    ALNUM + "_",
)
GITLAB_PAT = Format("gitlab_pat", "glpat", lambda d: "glpat-" + d.chars(URLSAFE, 20), URLSAFE)
GOOGLE_API_KEY = Format("google_api_key", "aizasy", lambda d: "AIzaSy" + d.chars(URLSAFE, 33), URLSAFE)
OPENAI_KEY = Format(
    "openai_key",
    "proj",
    lambda d: "sk-proj-" + d.chars(URLSAFE, 74) + "T3BlbkFJ" + d.chars(URLSAFE, 74),
    URLSAFE,
)


def slack_token(prefix: str) -> Format:
    def make(d: Draw) -> str:
        if prefix == "xoxb-":
            return f"xoxb-{d.digits(d.int(10, 13))}-{d.digits(13)}-{d.chars(ALNUM, 24)}"
        return f"xoxp-{d.digits(d.int(10, 13))}-{d.digits(12)}-{d.digits(13)}-{d.chars(HEX, 32)}"

    return Format("slack_token", prefix.rstrip("-"), make, ALNUM + "-")


def stripe_key(prefix: str) -> Format:
    return Format("stripe_key", prefix.rstrip("_"), lambda d: prefix + "51" + d.chars(ALNUM, 97), ALNUM + "_")


def stripe_publishable(prefix: str) -> Format:
    return Format("public_key", prefix.rstrip("_"), lambda d: prefix + "51" + d.chars(ALNUM, 97), ALNUM + "_")


@dataclass(frozen=True)
class JwtStyle:
    """A task's token issuer: its `iss`, the order its claims come in, and its header."""

    issuer: str
    order: tuple[str, ...]
    header: str


def jwt(role: str, style: JwtStyle, kind: str = "jwt") -> Format:
    """An HS256 JWT whose claims carry `role` (`service_role` secret, `anon` public key).

    The claims' order and issuer are the task's, so where `"role":"anon"` lands in the
    base64 differs from task to task: only decoding, or the task's names, tell anon keys apart.
    """

    def make(d: Draw) -> str:
        issued = 1_760_000_000 + d.int(0, 20_000_000)
        values: dict[str, object] = {
            "iss": style.issuer,
            "role": role,
            "iat": issued,
            "exp": issued + d.pick((3600, 86400, 31_536_000, 315_360_000)),
            "ref": d.chars(LOWER, 20),
        }
        if role != "anon":
            values["sub"] = (
                f"{d.chars(HEX, 8)}-{d.chars(HEX, 4)}-4{d.chars(HEX, 3)}-a{d.chars(HEX, 3)}-{d.chars(HEX, 12)}"
            )
        claims = {name: values[name] for name in style.order if name in values}
        signing_input = b64url(style.header.encode()) + "." + b64url(json.dumps(claims, separators=(",", ":")).encode())
        signature = hmac.new(d.randbytes(32), signing_input.encode(), hashlib.sha256).digest()
        return signing_input + "." + b64url(signature)

    return Format(kind, role, make, URLSAFE + ".")


JWT_CLAIMS = ("iss", "role", "iat", "exp", "ref", "sub")
JWT_HEADERS = ('{"alg":"HS256","typ":"JWT"}', '{"typ":"JWT","alg":"HS256"}', '{"alg":"HS256","kid":"k1","typ":"JWT"}')


def private_key(style: str, escaped: bool = False) -> Format:
    def make(d: Draw) -> str:
        pem = keys.private_key_pem(d, style)
        return pem.replace("\n", "\\n") if escaped else pem

    return Format("private_key", style + ("_escaped" if escaped else ""), make, B64 + "- \n\\")


# -- per-task secret formats -----------------------------------------------------------------


@dataclass(frozen=True)
class PasswordPolicy:
    """A task's password rules: a length range and the symbols allowed beside letters and digits."""

    low: int
    high: int
    symbols: str

    def draw(self, d: Draw) -> str:
        n = d.int(self.low, self.high)
        pool = ALNUM + self.symbols
        chars = [d.pick(UPPER), d.pick(LOWER), d.pick(DIGITS)]
        if self.symbols:
            chars.append(d.pick(self.symbols))
        chars += d.chars(pool, n - len(chars))
        return "".join(d.shuffled(chars))


def password(kind: str, policy: PasswordPolicy, label: str = "pw") -> Format:
    return Format(kind, f"{label}{policy.low}-{policy.high}", policy.draw, ALNUM + policy.symbols)


GENERIC_ENCODINGS = ("hex32", "hex40", "hex64", "base62", "base64", "urlsafe", "laravel", "django")


def generic_secret(encoding: str, length: int) -> Format:
    """A high-entropy secret: hex, base62, base64, URL-safe, or a framework's own shape."""

    def make(d: Draw) -> str:
        if encoding.startswith("hex"):
            return d.chars(HEX, int(encoding[3:]))
        if encoding == "base62":
            return d.chars(BASE62, length)
        if encoding == "base64":
            return base64.b64encode(d.randbytes(length)).decode()
        if encoding == "urlsafe":
            return b64url(d.randbytes(length))
        if encoding == "laravel":
            return "base64:" + base64.b64encode(d.randbytes(32)).decode()
        return "django-insecure-" + d.chars(LOWER + DIGITS + "!@%^*(-_=+)", 50)

    charset = {"laravel": B64 + ":", "django": LOWER + DIGITS + "!@%^*(-_=+)-", "urlsafe": URLSAFE}.get(encoding, B64)
    return Format(
        "generic_secret", encoding if encoding[:3] in ("hex", "lar", "dja") else f"{encoding}{length}", make, charset
    )


def base64_credential(users: tuple[str, ...], policy: PasswordPolicy) -> Format:
    def make(d: Draw) -> str:
        return base64.b64encode(f"{d.pick(users)}:{policy.draw(d)}".encode()).decode()

    return Format("base64_credential", "basic", make, B64)


HOUSE_ALPHABETS = {
    "base62": BASE62,
    "lower": LOWER + DIGITS,
    "upper": UPPER + DIGITS,
    "hex": HEX,
    "base32": BASE32,
    "crockford": "0123456789ABCDEFGHJKMNPQRSTVWXYZ",
    "urlsafe": URLSAFE,
    "base64": ALNUM + "+/",
}


@dataclass(frozen=True)
class House:
    """An invented vendor's token format, drawn per task: prefix, alphabet, length, grouping, checksum.

    `public_prefixes` mark the vendor's public identifiers (one each), drawn in the same
    alphabet and length. Vendors name their credentials differently (`api key` is public for one, the
    secret for another), so only the prefix and the vendor's convention, as the task's
    shown records establish it, tell the two apart.
    """

    vendor: str
    secret_prefix: str
    public_prefixes: tuple[str, ...]
    secret_role: tuple[str, ...]
    """The words the vendor's secret goes by (`api key` for one vendor, `api secret` for another)."""
    public_roles: tuple[tuple[str, ...], ...]
    """The words its public identifiers go by (as many as the level draws): `api key` may be
    public for one vendor, secret for the next."""
    alphabet: str
    length: int
    group: int
    sep: str
    checksum: bool

    def body(self, d: Draw, fake: str = "") -> str:
        if fake:
            raw = (fake * self.length)[: self.length]
        else:
            raw = d.chars(HOUSE_ALPHABETS[self.alphabet], self.length)
        if self.checksum:
            raw += (
                base62(zlib.crc32(raw.encode()), 6)
                if self.alphabet == "base62"
                else format(zlib.crc32(raw.encode()), "08x")
            )
        if self.group:
            raw = self.sep.join(raw[i : i + self.group] for i in range(0, len(raw), self.group))
        return raw

    def prefix_of(self, fmt: Format) -> str:
        """The prefix of this vendor's secret or n-th public id format."""
        if fmt.kind == "public_key" and fmt.label.startswith(self.vendor + ":"):
            return self.public_prefixes[int(fmt.label.rsplit(":", 1)[1]) % len(self.public_prefixes)]
        return self.secret_prefix

    def charset(self) -> str:
        return (
            HOUSE_ALPHABETS[self.alphabet]
            + HEX
            + BASE62 * self.checksum
            + self.sep
            + self.secret_prefix
            + "".join(self.public_prefixes)
        )


def house_token(house: House, kind: str = "house_token") -> Format:
    return Format(kind, house.vendor, lambda d: house.secret_prefix + house.body(d), house.charset())


def house_public(house: House, n: int = 0) -> Format:
    """The vendor's n-th public identifier: its own prefix and the secret's alphabet and length."""
    prefix = house.public_prefixes[n % len(house.public_prefixes)] if house.public_prefixes else ""
    return Format("public_key", f"{house.vendor}:{n}", lambda d: prefix + house.body(d), house.charset())


def house_twin(house: House) -> Format:
    """A public value in exactly the shape of the vendor's secret (its prefix, alphabet and
    length): only where it sits (a section, a service) says that it is public."""
    return Format("public_key", f"{house.vendor}:twin", lambda d: house.secret_prefix + house.body(d), house.charset())


# -- decoys ----------------------------------------------------------------------------------


def uuid4(d: Draw) -> str:
    h = d.chars(HEX, 32)
    return f"{h[:8]}-{h[8:12]}-4{h[13:16]}-{d.pick('89ab')}{h[17:20]}-{h[20:]}"


UUID = Format("uuid", "v4", uuid4, HEX + "-")
COMMIT_SHA = Format("commit_sha", "sha1", lambda d: d.chars(HEX, 40), HEX)


def digest(style: str) -> Format:
    def make(d: Draw) -> str:
        if style == "hex64":
            return d.chars(HEX, 64)
        if style == "sha256_prefixed":
            return "sha256:" + d.chars(HEX, 64)
        if style == "sri":
            return "sha384-" + base64.b64encode(d.randbytes(48)).decode()
        if style == "scram":
            salt, stored, server = (base64.b64encode(d.randbytes(n)).decode() for n in (16, 32, 32))
            return f"SCRAM-SHA-256$4096:{salt}${stored}:{server}"
        if style == "md5":
            return "md5" + d.chars(HEX, 32)
        if style == "fingerprint":
            return "SHA256:" + base64.b64encode(d.randbytes(32)).decode().rstrip("=")
        raise ValueError(style)

    return Format("hash_digest", style, make, B64 + ":$-")


SSH_PUBLIC_KEY = Format("public_key", "ssh_ed25519", keys.ssh_public_key, B64 + "- ")
PEM_PUBLIC_KEY = Format("public_key", "pem_spki", keys.pem_public_key, B64 + "- \n")
SPKI_BASE64 = Format("public_key", "spki_b64", keys.spki_base64, B64)

AWS_EXAMPLE_KEY_ID = Format("example_key", "aws_id", lambda d: "AKIAIOSFODNN7EXAMPLE", ALNUM)
AWS_EXAMPLE_SECRET = Format(
    "example_key", "aws_secret", lambda d: "wJalrXUtnFEMI/K7MDENG/bPxRfiCYEXAMPLEKEY", ALNUM + "/"
)


def example_like(secret: Format) -> Format:
    """A documented example shaped like `secret`: its prefix and length, ending in EXAMPLE."""

    def make(d: Draw) -> str:
        value = secret.draw(d)
        cut = len(value) - 7
        return value[:cut] + "EXAMPLE"

    return Format("example_key", secret.label, make, secret.charset)


FAKE_STYLES = ("repeat", "word", "sequence")
_FAKE_WORDS = ("fake", "dummy", "test", "notreal", "sample")


def fixture_like(secret: Format, style: str, prefix: str = "") -> Format:
    """A test fixture with `secret`'s prefix and length but a visibly fake body."""

    def make(d: Draw) -> str:
        value = secret.draw(d)
        n = len(value) - len(prefix)
        if style == "repeat":
            body = d.pick(("x", "0", "a", "X")) * n
        elif style == "word":
            word = d.pick(_FAKE_WORDS)
            body = (word + d.pick(("0", "x", "_"))) * (n // (len(word) + 1) + 1)
        else:
            body = ("0123456789abcdef" if secret.charset != UPPER + DIGITS else "0123456789ABCDEF") * (n // 16 + 1)
        return prefix + body[:n]

    return Format("test_fixture", f"{secret.label}:{style}", make, secret.charset + "x_")


def placeholder(text: str, label: str) -> Format:
    return Format("placeholder", label, lambda d: text, ALNUM + "_${}<>()[]\"'.: ")


REDACTED_MARKER = Format("redacted_marker", "redacted", lambda d: "[REDACTED]", "[]REDACT")
