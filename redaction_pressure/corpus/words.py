"""Vocabularies for key names and filler, and how a key name is spelled in each case style.

A key name is a subject (a vendor, a service, an invented vendor) followed by the words
of a role (`api token`, `client secret`, `password`), optionally with a suffix that turns
it into a look-alike (`ttl`, `sha256`, `file`, `id`), spelled in one case style. The
same role words sit under secrets and under look-alikes, so a key word alone never
says which is which; the shown records do.
"""

from __future__ import annotations

from collections.abc import Sequence

from redaction_pressure.corpus.draw import Draw

CASES = ("upper_snake", "lower_snake", "camel", "kebab", "dot")


def spell(words: Sequence[str], case: str) -> str:
    """Spell `words` as one key name in `case`."""
    words = [w for w in words if w]
    if case == "upper_snake":
        return "_".join(w.upper() for w in words)
    if case == "lower_snake":
        return "_".join(w.lower() for w in words)
    if case == "camel":
        return words[0].lower() + "".join(w[:1].upper() + w[1:].lower() for w in words[1:])
    if case == "kebab":
        return "-".join(w.lower() for w in words)
    if case == "dot":
        return ".".join(w.lower() for w in words)
    raise ValueError(f"unknown case {case!r}")


# Role words under which a credential is stored. Each kind lists the roles it may take.
TOKEN_ROLES = (
    ("api", "token"), ("access", "token"), ("auth", "token"), ("token",), ("bot", "token"),
    ("deploy", "token"), ("service", "token"), ("private", "token"), ("bearer",), ("pat",),
)  # fmt: skip
KEY_ROLES = (
    ("api", "key"), ("secret", "key"), ("access", "key"), ("master", "key"), ("admin", "key"),
    ("service", "key"), ("server", "key"), ("write", "key"), ("key",), ("live", "key"),
)  # fmt: skip
SECRET_ROLES = (
    ("secret",), ("client", "secret"), ("api", "secret"), ("app", "secret"), ("signing", "secret"),
    ("webhook", "secret"), ("shared", "secret"), ("session", "secret"), ("jwt", "secret"),
    ("hmac", "key"), ("signing", "key"), ("encryption", "key"), ("cookie", "secret"), ("salt",),
)  # fmt: skip
PASSWORD_ROLES = (
    ("password",), ("passwd",), ("pass",), ("pwd",), ("db", "password"), ("admin", "password"),
    ("root", "password"), ("user", "password"), ("smtp", "password"),
)  # fmt: skip
CREDENTIAL_ROLES = (("credentials",), ("creds",), ("auth",), ("basic", "auth"), ("cred",), ("login",))

# Roles of public values that share the role words above.
PUBLIC_ROLES = (
    ("publishable", "key"), ("public", "key"), ("site", "key"), ("search", "key"), ("anon", "key"),
    ("app", "key"), ("client", "key"), ("pub", "key"), ("browser", "key"),
)  # fmt: skip
ID_ROLES = (("key", "id"), ("client", "id"), ("app", "id"), ("account", "id"), ("token", "id"), ("access", "key", "id"))

# A vendor's credentials, the secret and its public ids, are named from these. Every name is
# secret for some vendors and public for others (PostHog's project API key and Pusher's app key
# are public, SendGrid's API key is secret), so a name alone says nothing; the task's shown
# records say which is which. At the easy level a task splits the pool once (`World.secret_roles`,
# `World.public_roles`): each name then means one thing across the task, but which is drawn anew.
AMBIGUOUS_ROLES = (
    ("api", "key"), ("key",), ("access", "key"), ("app", "key"), ("token",), ("client", "token"),
    ("write", "key"), ("api", "token"), ("project", "key"), ("ingest", "key"), ("sdk", "key"),
    ("client", "key"), ("service", "token"), ("access", "token"), ("env", "key"), ("license", "key"),
)  # fmt: skip

# Suffixes that turn a credential's key name into a look-alike's.
HASH_SUFFIXES = (("sha256",), ("hash",), ("digest",), ("checksum",), ("fingerprint",))
SETTING_SUFFIXES = (
    ("ttl",), ("ttl", "seconds"), ("expiry", "seconds"), ("max", "age"), ("rotation", "interval"),
    ("algorithm",), ("header",), ("version",), ("bits",),
)  # fmt: skip
REFERENCE_SUFFIXES = (("file",), ("path",), ("env",), ("ref",), ("secret", "name"), ("arn",), ("name",))

PUBLISHED_SUBJECTS = {
    "aws_access_key_id": ("aws", "s3", "ses", "backup"),
    "github_token": ("github", "gh", "repo"),
    "github_pat": ("github", "gh", "actions"),
    "gitlab_pat": ("gitlab", "gl", "registry"),
    "slack_token": ("slack", "notify", "alerts"),
    "stripe_key": ("stripe", "payments", "billing"),
    "google_api_key": ("google", "maps", "firebase", "places"),
    "openai_key": ("openai", "llm", "ai"),
    "npm_token": ("npm", "registry", "publish"),
}

SERVICES = (
    "billing", "ledger", "orders", "quotes", "notify", "inventory", "payments", "reporting",
    "shipping", "catalog", "analytics", "checkout", "profiles", "webhooks", "auth", "media",
    "exports", "pricing", "fraud", "gateway", "metrics", "mailer", "sync", "audit",
)  # fmt: skip
ORGS = (
    "acme", "globex", "initech", "umbrella", "hooli", "vandelay", "tyrell", "soylent", "wayne",
    "stark", "wonka", "cyberdyne", "aperture", "massive", "gringotts", "oscorp",
)  # fmt: skip
REGIONS = ("us-east-1", "us-west-2", "eu-west-1", "eu-central-1", "ap-southeast-2", "ca-central-1")
USERS = (
    "alice", "bob", "carol", "dave", "erin", "frank", "grace", "heidi", "ivan", "judy", "mallory",
    "oscar", "peggy", "trent", "victor", "walter", "yuki", "zane", "priya", "omar",
)  # fmt: skip
DATABASES = ("orders", "ledger", "users", "inventory", "analytics", "events", "billing", "core", "app")
ENVIRONMENTS = ("production", "staging", "prod", "live", "eu-prod")

_ONSETS = (
    "b",
    "c",
    "d",
    "f",
    "g",
    "k",
    "l",
    "m",
    "n",
    "p",
    "qu",
    "r",
    "s",
    "t",
    "v",
    "z",
    "br",
    "kr",
    "tr",
    "pl",
    "st",
    "zh",
    "x",
)
_VOWELS = ("a", "e", "i", "o", "u", "y", "ai", "eo", "ia")
_CODAS = ("", "", "n", "r", "x", "l", "s", "k", "th", "m")


def vendor_name(d: Draw) -> str:
    """An invented vendor name of two or three syllables (`zorvex`, `plimora`)."""
    syllables = [d.pick(_ONSETS) + d.pick(_VOWELS) + d.pick(_CODAS) for _ in range(d.int(2, 3))]
    return "".join(syllables)[:10]
