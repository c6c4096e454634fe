"""A task's dialect: its world, its families and, for each family, the slots its records fill.

The dialect is drawn once per task from `Draw.derived(seed, "dialect")`:

- a `World`: the organisation, its services, one or two invented vendors with house
  token formats (`House`), password policies and user names, shared by every family;
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
from redaction_pressure.corpus.values import Format, House, PasswordPolicy


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
class World:
    """What every family of one task shares: names, vendors, password rules."""

    org: str
    env: str
    services: tuple[str, ...]
    houses: tuple[House, ...]
    password: PasswordPolicy
    url_password: PasswordPolicy
    users: tuple[str, ...]

    @property
    def domain(self) -> str:
        return f"{self.org}.internal"


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


_HOUSE_PREFIXES = (
    ("{a}_live_", "{a}_pub_"), ("{a}_sk_", "{a}_pk_"), ("{A}-SEC-", "{A}-PUB-"), ("{a}-", "{a}-pub-"),
    ("{a}.", "{a}.id."), ("{A}K", "{A}PK"), ("{a}_prod_", "{a}_client_"), ("{a}-key-", "{a}-id-"),
    ("{a}_", "{a}_app_"), ("{a}srv_", "{a}cli_"), ("{a}_", "{a}_v1_"), ("{a}_x_", "{a}_"),
    ("{a}_app_", "{a}_"), ("{a}-", "{a}-web-"), ("{a}_cli_", "{a}_web_"), ("{a}_v2_", "{a}_v1_"),
    ("{a}.s.", "{a}.w."), ("{a}_live_", "{a}_app_"),
)  # fmt: skip
"""(secret, public) prefix pairs. Half the public prefixes carry a public marker (pub, pk, id,
client); the others an ambiguous one (`app`, `cli`, `web`, `v1` mark secrets for other
vendors) or none: what tells a vendor's public identifier is its prefix as the task's shown
records establish it."""


def _house_roles(d: Draw) -> tuple[tuple[str, ...], tuple[str, ...]]:
    """A vendor's naming convention. Most vendors name at least one credential ambiguously
    (`api key`, `token`, `access key`), so the key words alone rarely say which is secret."""
    secret = d.pick(w.AMBIGUOUS_ROLES) if d.chance(0.85) else d.pick(w.SECRET_ONLY_ROLES)
    while True:
        public = d.pick(w.AMBIGUOUS_ROLES) if d.chance(0.7) else d.pick(w.PUBLIC_ONLY_ROLES)
        if public != secret:
            return secret, public


def draw_house(d: Draw, taken: set[str]) -> House:
    while True:
        vendor = w.vendor_name(d)
        abbr = vendor[: d.int(2, 4)]
        if vendor not in taken and abbr not in {t[: len(abbr)] for t in taken}:
            break
    secret, public = d.pick(_HOUSE_PREFIXES)
    secret_role, public_role = _house_roles(d)
    alphabet = d.pick(sorted(v.HOUSE_ALPHABETS))
    group = d.pick((0, 0, 0, 4, 5, 6, 8))
    return House(
        vendor=vendor,
        secret_prefix=secret.format(a=abbr, A=abbr.upper()),
        public_prefix=public.format(a=abbr, A=abbr.upper()),
        secret_role=secret_role,
        public_role=public_role,
        alphabet=alphabet,
        length=d.pick((20, 24, 28, 32, 36, 40, 48)),
        group=group,
        sep=d.pick(("-", ".")) if group else "",
        checksum=alphabet in ("base62", "hex", "lower") and d.chance(0.4),
    )


def draw_world(d: Draw) -> World:
    taken: set[str] = set()
    houses = []
    for _ in range(d.int(1, 2)):
        house = draw_house(d, taken)
        taken.add(house.vendor)
        houses.append(house)
    symbols = "".join(d.sample(v.PASSWORD_SYMBOLS, d.int(0, 5)))
    low = d.int(10, 18)
    return World(
        org=d.pick(w.ORGS),
        env=d.pick(w.ENVIRONMENTS),
        services=tuple(d.sample(w.SERVICES, 5)),
        houses=tuple(houses),
        password=PasswordPolicy(low, low + d.int(0, 12), symbols),
        url_password=PasswordPolicy(d.int(12, 20), d.int(20, 32), "".join(d.sample("-._~", d.int(0, 2)))),
        users=tuple(d.sample(w.USERS, 3)) + tuple(f"{s}_{d.pick(('app', 'svc', 'rw', 'api'))}" for s in d.sample(w.SERVICES, 2)),
    )


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

    def entry(self, form: str, *slots: tuple[Format, bool], **words: Any) -> Entry:
        """Add an entry whose slots are (format, is_secret) pairs."""
        made = tuple(self._slot(fmt, secret, n) for n, (fmt, secret) in enumerate(slots))
        entry = Entry(form=form, slots=made, words=words)
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
            return v.jwt(d.pick(("service_role", "service_role", "worker", "admin")))
        if kind == "generic_secret":
            encoding = d.pick(v.GENERIC_ENCODINGS)
            return v.generic_secret(encoding, d.pick((24, 32, 40, 48)) if encoding in ("base62", "urlsafe") else d.pick((24, 32, 48)))
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
        if kind in ("generic_secret", "jwt"):
            # Internal services name their secrets like vendors do, often ambiguously.
            return self.d.pick(w.AMBIGUOUS_ROLES) if self.d.chance(0.6) else self.d.pick(w.SECRET_ROLES + w.TOKEN_ROLES[:3])
        if kind in ("stripe_key", "openai_key", "google_api_key"):
            return self.d.pick(w.KEY_ROLES + w.SECRET_ROLES[:3])
        return self.d.pick(w.TOKEN_ROLES + w.KEY_ROLES)

    def house_for(self, fmt: Format) -> House | None:
        return next((h for h in self.world.houses if h.vendor == fmt.label and fmt.kind in ("house_token", "public_key")), None)

    def public_role(self, secret: Format) -> tuple[str, ...]:
        """Role words for the public look-alike of `secret`."""
        house = self.house_for(secret)
        return house.public_role if house else self.d.pick(w.PUBLIC_ROLES)

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
            return v.jwt("anon", kind="public_key")
        return v.SPKI_BASE64

    def fixture_like(self, secret: Format) -> Format:
        house = self.house_for(secret)
        prefix = house.secret_prefix if house else _published_prefix(secret)
        return v.fixture_like(secret, self.d.pick(v.FAKE_STYLES), prefix)

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
            value = d.pick((f"/run/secrets/{snake}", f"/etc/{self.world.org}/secrets/{snake}", f"/var/run/secrets/{snake}.txt"))
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
    for prefix in ("sk_live_", "rk_live_", "sk_test_", "ghp_", "gho_", "npm_", "glpat-", "xoxb-", "xoxp-", "AIzaSy", "sk-proj-", "AKIA", "github_pat_"):
        probe = fmt.draw(Draw.derived(0, "probe"))
        if probe.startswith(prefix):
            return prefix
    return ""
