"""The parts bin's project level: how big a repository is per level, its name, layout and conventions.

`LEVELS` (secrets, filler files and commits, refs, decoys per level), the Python setting idioms
(`IDIOMS`, `FILE_IDIOMS`), the word lists project and component names come from, the naming
helpers (`snake`, `camel`, `split_camel`), `new_project(d, level)` (a seeded `Project`: name,
package layout, the documented environment-variable convention) and `Setting` (one entry of a
settings module). Pure data and functions of the draw.
"""

from __future__ import annotations

import re
from dataclasses import dataclass

from redaction_pressure.audit.plan import Secret
from redaction_pressure.corpus.draw import Draw
from redaction_pressure.corpus.words import ORGS, SERVICES

LEVELS = {
    # secrets in all, filler files, filler commits, chance of a tag (of a branch: half), literal decoys per module
    "easy": {"secrets": (1, 3), "fillers": (1, 3), "commits": (0, 2), "refs": 0.3, "decoys": (1, 2)},
    "medium": {"secrets": (2, 4), "fillers": (2, 5), "commits": (1, 3), "refs": 0.5, "decoys": (1, 3)},
    "hard": {"secrets": (3, 6), "fillers": (3, 7), "commits": (2, 5), "refs": 0.7, "decoys": (2, 3)},
    "expert": {"secrets": (4, 7), "fillers": (0, 0), "commits": (3, 8), "refs": 0.9, "decoys": (2, 3)},
}
IDIOMS = ("constants", "settings_class", "dataclass", "factory", "local", "ini", "toml", "json")
FILE_IDIOMS = ("ini", "toml", "json")
NOUNS = ("sync", "hub", "core", "api", "worker", "portal", "bridge", "relay", "engine", "desk", "agent", "kit")
COMPONENTS = ("billing", "mailer", "storage", "search", "queue", "metrics", "payments", "crm", "cache", "ledger",
              "export", "notify", "geo", "media", "partner", "vault", "upload", "webhooks")  # fmt: skip
SETTING_ROLES = {
    "token": (("api", "token"), ("access", "token"), ("service", "token"), ("auth", "token"), ("token",)),
    "key": (("api", "key"), ("secret", "key"), ("private", "key"), ("write", "key")),
    "password": (("password",), ("db", "password"), ("passphrase",), ("login", "password")),
    "secret": (("client", "secret"), ("signing", "secret"), ("webhook", "secret"), ("shared", "secret")),
}
PUBLIC_ROLES = (
    ("public", "id"),
    ("client", "id"),
    ("account", "id"),
    ("project", "key"),
    ("site", "key"),
    ("app", "id"),
)


def snake(*words: str) -> str:
    return "_".join(w.lower() for w in words if w)


def split_camel(name: str) -> tuple[str, ...]:
    """`apiKey` -> ("api", "key")."""
    return tuple(w.lower() for w in re.findall(r"[a-z0-9]+|[A-Z][a-z0-9]*", name))


def camel(name: str) -> str:
    return "".join(w.title() for w in name.split("_"))


@dataclass
class Project:
    """Names and layout: `code` is the folder the Python package lives in (e.g. `src/ledger_hub`)."""

    name: str
    package: str
    code: str
    prefix: str
    """Every variable of the convention starts with it (`LEDGER_`); the README (or the doc it points to) says so."""
    docs: str
    """Where the convention is written: `README.md` or a file under `docs/`."""
    listed: bool
    """Whether the documentation also lists each secret's variable by name (easy levels)."""

    def module(self, name: str) -> str:
        return f"{self.code}/{name}.py"


def new_project(d: Draw, level: str) -> Project:
    service, noun = d.pick(SERVICES), d.pick(NOUNS)
    package = f"{service}_{noun}" if d.chance(0.6) else service
    layout = d.pick(("src", "flat", "app", "nested"))
    code = {
        "src": f"src/{package}",
        "flat": package,
        "app": "app",
        "nested": f"{package}/{d.pick(('core', 'lib', 'config'))}",
    }[layout]
    prefix = d.pick((service, package, d.pick(ORGS), noun)).upper() + "_"
    docs = (
        "README.md"
        if level == "easy" or d.chance(0.4)
        else d.pick(("docs/configuration.md", "docs/settings.md", "CONFIGURATION.md"))
    )
    return Project(
        f"{d.pick(ORGS)}-{service}-{noun}",
        package,
        code,
        prefix,
        docs,
        listed=level == "easy" or (level == "medium" and d.chance(0.3)),
    )


@dataclass
class Setting:
    """One entry of a Python settings module: a secret (`secret` set) or a literal value."""

    name: str
    value: str = ""
    secret: Secret | None = None
    decoy: str = ""
    """The decoy kind of a literal that must survive (`hash_digest`, `public_key`...), or ""."""
    wrap: str = "{}"
    """The leaky value around the secret (`{}`): a DSN around a password."""
