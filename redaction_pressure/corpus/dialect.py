"""A task's dialect: its world, its families and, for each family, the slots its records fill.

The dialect is drawn once per task from `Draw.derived(seed, "dialect")`:

- a `World` (`world.py`): the organisation, its services, its invented vendors with house
  token formats (`House`; as many as the level draws), password policies and user names,
  shared by every family;
- 3 to 5 families, and for each a `FamilyDialect`: layout choices (quoting, case style,
  comment syntax, ...) and its entries. An entry is one structural unit of a document
  (a `KEY=value` line, an AWS credentials block, a connection string) with its wording
  fixed (key names) and the slots it fills.

A **slot** is one (family, context, value format) of a secret or decoy; its id is carried
on every span it produces. A family's first shown record writes every entry, so the
prompt covers every slot; later records write subsets, with fresh values.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from typing import Any

from redaction_pressure.corpus import values as v
from redaction_pressure.corpus import words as w
from redaction_pressure.corpus.draw import Draw
from redaction_pressure.corpus.values import Format, House
from redaction_pressure.corpus.world import World


@dataclass(frozen=True)
class Slot:
    """One (family, context, value format) of a secret or decoy."""

    id: str
    secret: bool
    fmt: Format

    @property
    def kind(self) -> str:
        return self.fmt.kind


@dataclass(frozen=True)
class Entry:
    """A structural unit of a family's documents, with its wording fixed for the task."""

    form: str
    slots: tuple[Slot, ...]
    words: dict[str, Any] = field(default_factory=dict)
    group: int = 0
    """Entries of one group (a vendor's secret and its public ids) appear in a record together."""

    @property
    def has_secret(self) -> bool:
        return any(slot.secret for slot in self.slots)

    def __getitem__(self, name: str) -> Any:
        return self.words[name]


@dataclass(frozen=True)
class FamilyDialect:
    family: str
    layout: dict[str, Any]
    entries: tuple[Entry, ...]
    keep: float = 0.6
    """Chance that a later record writes a given entry."""


@dataclass(frozen=True)
class Family:
    """A kind of document: how its dialect is drawn and how one record is written."""

    name: str
    draw: Callable[[Builder], FamilyDialect]
    write: Callable[..., None]
    syntax: str
    """How a record parses: python, javascript, json, yaml, toml, shell, dotenv, sql, log."""
    filename: str


@dataclass(frozen=True)
class Dialect:
    world: World
    families: tuple[FamilyDialect, ...]


class Builder:
    """What a family's `draw` uses to create entries and slots with task-unique ids."""

    def __init__(self, family: str, d: Draw, world: World) -> None:
        self.family = family
        self.d = d
        self.world = world
        self.entries: list[Entry] = []
        self.keys: set[str] = set()

    # -- slots and entries --------------------------------------------------------------

    def _slot(self, fmt: Format, secret: bool, n: int) -> Slot:
        return Slot(id=f"{self.family}/{len(self.entries)}.{n}/{fmt.kind}/{fmt.label}", secret=secret, fmt=fmt)

    def entry(self, form: str, *slots: tuple[Format, bool], group: int | None = None, **words: Any) -> Entry:
        """Add an entry whose slots are (format, is_secret) pairs; `group` ties it to an earlier entry."""
        made = tuple(self._slot(fmt, secret, n) for n, (fmt, secret) in enumerate(slots))
        entry = Entry(form=form, slots=made, words=words, group=len(self.entries) if group is None else group)
        self.entries.append(entry)
        return entry

    def done(self, layout: dict[str, Any], keep: float = 0.6) -> FamilyDialect:
        if not any(e.has_secret for e in self.entries):
            raise RuntimeError(f"family {self.family} drew no secret entry")
        return FamilyDialect(self.family, layout, tuple(self.entries), keep)

    # -- value formats ----------------------------------------------------------------------

    def secret_format(self, kind: str) -> Format:
        d, world = self.d, self.world
        if kind == "aws_access_key_id":
            return v.aws_access_key_id("AKIA")
        if kind == "github_token":
            return v.github_token(d.pick(("ghp_", "ghp_", "gho_")))
        if kind == "slack_token":
            return v.slack_token(d.pick(("xoxb-", "xoxp-")))
        if kind == "stripe_key":
            return v.stripe_key(d.pick(("sk_live_", "rk_live_", "sk_test_")))
        if kind == "npm_token":
            return v.npm_token()
        if kind == "jwt":
            return v.jwt(d.pick(("service_role", "service_role", "worker", "admin")), world.jwt)
        if kind == "generic_secret" and d.chance(0.8):
            return v.house_token(world.internal, kind="generic_secret")
        if kind == "generic_secret":
            encoding = d.pick(v.GENERIC_ENCODINGS)
            return v.generic_secret(
                encoding, d.pick((24, 32, 40, 48)) if encoding in ("base62", "urlsafe") else d.pick((24, 32, 48))
            )
        if kind == "house_token":
            return v.house_token(d.pick(world.houses))
        if kind in ("sql_password", "password"):
            return v.password("sql_password" if kind == "sql_password" else "generic_secret", world.password)
        if kind == "dsn_password":
            return v.password("dsn_password", world.url_password, "url")
        if kind == "base64_credential":
            return v.base64_credential(world.users, world.password)
        if kind == "private_key":
            return v.private_key(d.pick(("ec_sec1", "ec_pkcs8", "ed25519_pkcs8", "ed25519_openssh")))
        fixed = {
            "github_pat": v.GITHUB_PAT,
            "gitlab_pat": v.GITLAB_PAT,
            "google_api_key": v.GOOGLE_API_KEY,
            "openai_key": v.OPENAI_KEY,
            "aws_secret_access_key": v.AWS_SECRET,
            "aws_session_token": v.AWS_SESSION_TOKEN,
        }
        return fixed[kind]

    def subject(self, kind: str, fmt: Format | None = None) -> str:
        """The key-name subject a credential of `kind` sits under: vendor, service or house."""
        house = self.house_for(fmt) if fmt else None
        if house:
            return house.vendor
        if kind == "house_token":
            return self.d.pick(self.world.houses).vendor
        if kind in w.PUBLISHED_SUBJECTS and self.d.chance(0.7):
            return self.d.pick(w.PUBLISHED_SUBJECTS[kind])
        return self.d.pick(self.world.services)

    def role(self, kind: str, fmt: Format | None = None) -> tuple[str, ...]:
        """Role words for a credential of `kind` (a house token goes by its vendor's convention)."""
        house = self.house_for(fmt) if fmt else None
        if house:
            return house.secret_role
        if kind in ("sql_password", "dsn_password", "password"):
            return self.d.pick(w.PASSWORD_ROLES)
        if kind == "base64_credential":
            return self.d.pick(w.CREDENTIAL_ROLES)
        if self.world.secret_roles:
            # A name means one thing across the task: every other credential goes by a secret name.
            return self.d.pick(self.world.secret_roles)
        if kind in ("generic_secret", "jwt"):
            # Internal services name their secrets like vendors do, ambiguously.
            return self.d.pick(w.AMBIGUOUS_ROLES)
        if kind in ("stripe_key", "openai_key", "google_api_key"):
            return self.d.pick(w.KEY_ROLES + w.SECRET_ROLES[:3])
        return self.d.pick(w.TOKEN_ROLES + w.KEY_ROLES)

    def house_for(self, fmt: Format) -> House | None:
        """The vendor (or the internal convention) whose credential `fmt` draws, if any."""
        for house in (*self.world.houses, self.world.internal):
            if fmt.label.split(":")[0] == house.vendor and fmt.kind in ("house_token", "generic_secret", "public_key"):
                return house
        return None

    def public_role(self, secret: Format) -> tuple[str, ...]:
        """Role words for the (first) public look-alike of `secret`."""
        house = self.house_for(secret)
        if house:
            return house.public_roles[0]
        return self.d.pick(self.world.public_roles or w.PUBLIC_ROLES)

    def anon(self, secret: Format) -> list[tuple[Format, tuple[str, ...]]]:
        """For a JWT secret, the task's public anon JWT and its (often ambiguous) role words."""
        if secret.kind != "jwt":
            return []
        while True:
            role = self.d.pick(self.world.public_roles or w.AMBIGUOUS_ROLES)
            return [(v.jwt("anon", self.world.jwt, kind="public_key"), role)]

    def publics(self, secret: Format) -> list[tuple[Format, tuple[str, ...]]]:
        """The public identifiers that go with a vendor's (or internal) secret, with their role words."""
        house = self.house_for(secret)
        if not house:
            return []
        return [(v.house_public(house, n), role) for n, role in enumerate(house.public_roles)]

    def claim(self, words: Sequence[str], case: str) -> str:
        """A key name for `words` not yet used by this family (a second one gets a qualifier)."""
        for qualifier in ((), ("legacy",), ("backup",), ("secondary",), ("v2",), ("old",)):
            key = w.spell((*qualifier, *words), case)
            if key not in self.keys:
                self.keys.add(key)
                return key
        raise RuntimeError(f"family {self.family} ran out of key names for {words}")

    # -- look-alikes ----------------------------------------------------------------------------

    def public_like(self, secret: Format) -> Format:
        """A public value in the secret's shape: a house public id, a publishable key, an anon JWT."""
        house = self.house_for(secret)
        if house:
            return v.house_public(house)
        if secret.kind == "stripe_key":
            return v.stripe_publishable("pk_live_" if "live" in secret.label else "pk_test_")
        if secret.kind == "jwt":
            return v.jwt("anon", self.world.jwt, kind="public_key")
        return v.SPKI_BASE64

    def secret_prefix(self, secret: Format) -> str:
        """The prefix every value of `secret`'s format starts with ('' when there is none)."""
        house = self.house_for(secret)
        return house.secret_prefix if house else _published_prefix(secret)

    def fixture_like(self, secret: Format) -> Format:
        return v.fixture_like(secret, self.d.pick(v.FAKE_STYLES), self.secret_prefix(secret))

    def setting(self) -> tuple[tuple[str, ...], Format]:
        suffix = self.d.pick(w.SETTING_SUFFIXES)
        d = self.d
        if suffix[0] == "algorithm":
            value = d.pick(("HS256", "HS512", "ES256", "AES-256-GCM"))
        elif suffix[0] == "header":
            value = d.pick(("X-Api-Key", "Authorization", "X-Auth-Token"))
        elif suffix[0] == "version":
            value = d.pick(("2024-06-01", "2025-01-15", "v2.1.0"))
        elif suffix[0] == "rotation":
            value = d.pick(("720h", "2160h", "8760h"))
        elif suffix[0] == "bits":
            value = d.pick(("2048", "4096"))
        else:
            value = str(d.pick((1800, 3600, 7200, 43200, 86400, 604800)))
        return suffix, v.Format("secret_setting", suffix[0], lambda _d, value=value: value, value)

    def reference(self, name: str, secret_words: Sequence[str]) -> tuple[tuple[str, ...], Format]:
        """A reference to a secret by name: a file path, an env var, a vault path, an ARN."""
        suffix = self.d.pick(w.REFERENCE_SUFFIXES)
        snake = w.spell(secret_words, "lower_snake")
        d = self.d
        if suffix[0] in ("file", "path"):
            value = d.pick(
                (f"/run/secrets/{snake}", f"/etc/{self.world.org}/secrets/{snake}", f"/var/run/secrets/{snake}.txt")
            )
        elif suffix[0] == "env":
            value = w.spell(secret_words, "upper_snake")
        elif suffix[0] == "arn":
            value = f"arn:aws:secretsmanager:{d.pick(w.REGIONS)}:{d.digits(12)}:secret:{self.world.env}/{snake}"
        elif suffix[0] == "ref":
            value = f"vault:secret/data/{self.world.env}/{name}#{snake}"
        else:
            value = f"{self.world.env}/{name}/{snake}".replace("_", "-")
        return suffix, v.Format("secret_reference", suffix[0], lambda _d, value=value: value, value)


def _published_prefix(fmt: Format) -> str:
    for prefix in (
        "sk_live_",
        "rk_live_",
        "sk_test_",
        "ghp_",
        "gho_",
        "npm_",
        "glpat-",
        "xoxb-",
        "xoxp-",
        "AIzaSy",
        "sk-proj-",
        "AKIA",
        "github_pat_",
    ):
        probe = fmt.draw(Draw.derived(0, "probe"))
        if probe.startswith(prefix):
            return prefix
    return ""
