"""A task's dialect: its world, its families and, for each family, the slots its records fill.

The dialect is drawn once per task from `Draw.derived(seed, "dialect")`:

- a `World`: the organisation, its services, its invented vendors with house token
  formats (`House`; as many as the level draws), password policies and user names,
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
from dataclasses import dataclass, field, replace
from typing import Any

from redaction_pressure.corpus import values as v
from redaction_pressure.corpus import words as w
from redaction_pressure.corpus.draw import Draw
from redaction_pressure.corpus.levels import LEVELS, Level
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
class World:
    """What every family of one task shares: names, vendors, password rules."""

    org: str
    env: str
    services: tuple[str, ...]
    houses: tuple[House, ...]
    internal: House
    """How the organisation's own services name and shape their credentials."""
    jwt: v.JwtStyle
    password: PasswordPolicy
    url_password: PasswordPolicy
    users: tuple[str, ...]
    level: Level = LEVELS["standard"]
    """The task's difficulty level (see `levels.py`)."""
    secret_roles: tuple[tuple[str, ...], ...] = ()
    """At a level with `task_roles`: the names that, in this task, name secrets (else empty)."""
    public_roles: tuple[tuple[str, ...], ...] = ()
    """At a level with `task_roles`: the names that, in this task, name public ids."""

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


MARKERS = (
    "app",
    "cli",
    "web",
    "srv",
    "api",
    "v1",
    "v2",
    "x",
    "s",
    "k",
    "m",
    "live",
    "prod",
    "key",
    "tok",
    "acc",
    "u",
    "",
)
"""Prefix markers. Each marks a secret for some vendors and a public id for others."""


def _house_roles(
    d: Draw, level: Level, pools: tuple[tuple, tuple] | None = None
) -> tuple[tuple[str, ...], tuple[tuple[str, ...], ...]]:
    """A vendor's naming convention for its secret and its public identifiers. The names are
    ambiguous (`api key`, `token`, `access key`): secret for one vendor, public for another. With
    `pools` (the easy level: the task's secret names and public names) the secret is named from
    the first and the public ids from the second, so a name means one thing within the task."""
    wanted = d.pick(level.publics)
    secrets, publics_pool = pools if pools else (w.AMBIGUOUS_ROLES, w.AMBIGUOUS_ROLES)
    secret = d.pick(secrets)
    candidates = [role for role in publics_pool if role != secret]
    publics = d.sample(candidates, min(wanted, len(candidates)))
    return secret, tuple(publics)


def _prefixes(d: Draw, abbr: str, publics: int) -> tuple[str, tuple[str, ...]]:
    """The vendor's secret prefix and one prefix per public id: its abbreviation and a marker
    each, all different and all drawn from one pool, so a marker says nothing by itself (`app`
    marks the secret for one vendor, a public id for the next) and no prefix repeats within a
    credential set more than its value does; the task's shown records say which is which."""
    sep = d.pick(("_", "-", ".", "_"))
    upper = d.chance(0.2)
    made = []
    for marker in d.sample(MARKERS, 1 + publics):
        text = f"{abbr}{sep}{marker}{sep}" if marker else f"{abbr}{sep}"
        made.append(text.upper() if upper else text)
    return made[0], tuple(made[1:])


def draw_house(
    d: Draw, taken: set[str], level: Level, internal: str | None = None, pools: tuple[tuple, tuple] | None = None
) -> House:
    """An invented vendor's token format and naming convention; with `internal`, the format an
    internal service uses for its credentials (no prefix: a generic alphabet and length)."""
    secret_role, public_roles = _house_roles(d, level, pools)
    if internal:
        vendor, secret, publics = internal, "", ("",) * len(public_roles)
        alphabet = d.pick(("hex", "base62", "base64", "urlsafe", "lower"))
    else:
        while True:
            vendor = w.vendor_name(d)
            abbr = vendor[: d.int(2, 4)]
            if vendor not in taken and abbr not in {t[: len(abbr)] for t in taken}:
                break
        secret, publics = _prefixes(d, abbr, len(public_roles))
        alphabet = d.pick(sorted(v.HOUSE_ALPHABETS))
    group = 0 if internal else d.pick((0, 0, 0, 4, 5, 6, 8))
    return House(
        vendor=vendor,
        secret_prefix=secret,
        public_prefixes=publics,
        secret_role=secret_role,
        public_roles=public_roles,
        alphabet=alphabet,
        length=d.pick((20, 24, 28, 32, 36, 40, 48)) if not internal else d.pick((24, 32, 40, 48, 64)),
        group=group,
        sep=d.pick(("-", ".")) if group else "",
        checksum=not internal and alphabet in ("base62", "hex", "lower") and d.chance(0.4),
    )


def draw_world(d: Draw, level: Level = LEVELS["standard"]) -> World:
    taken: set[str] = set()
    houses = []
    pools: tuple[tuple, tuple] | None = None
    if level.task_roles:
        # The task's one split of the ambiguous names: two or three name secrets, the rest public ids.
        names = d.shuffled(w.AMBIGUOUS_ROLES)
        split = d.int(2, 3)
        pools = (tuple(names[:split]), tuple(names[split:]))
    for _ in range(d.int(*level.vendors)):
        house = draw_house(d, taken, level, pools=pools)
        taken.add(house.vendor)
        houses.append(house)
    if level.shared_prefixes and len(houses) > 1:
        # Each vendor's last public id starts with the previous vendor's secret prefix (a cycle),
        # so a prefix says what a value is only together with the body's shape and its key. (The
        # first public id, the one a stand-alone look-alike uses, keeps its own prefix.)
        houses = [
            replace(house, public_prefixes=(*house.public_prefixes[:-1], houses[n - 1].secret_prefix))
            for n, house in enumerate(houses)
        ]
    symbols = "".join(d.sample(v.PASSWORD_SYMBOLS, d.int(0, 5)))
    low = d.int(10, 18)
    return World(
        org=d.pick(w.ORGS),
        env=d.pick(w.ENVIRONMENTS),
        services=tuple(d.sample(w.SERVICES, 5)),
        houses=tuple(houses),
        internal=draw_house(d, taken, level, internal=d.pick(w.SERVICES), pools=pools),
        jwt=v.JwtStyle(
            issuer=d.pick(
                (
                    f"https://{d.chars('abcdefghijklmnopqrstuvwxyz', 20)}.supabase.co/auth/v1",
                    "supabase",
                    "auth",
                    f"{d.pick(w.ORGS)}-sso",
                    "https://id.example.internal",
                )
            ),
            order=tuple(d.shuffled(v.JWT_CLAIMS)),
            header=d.pick(v.JWT_HEADERS),
        ),
        password=PasswordPolicy(low, low + d.int(0, 12), symbols),
        url_password=PasswordPolicy(d.int(12, 20), d.int(20, 32), "".join(d.sample("-._~", d.int(0, 2)))),
        users=tuple(d.sample(w.USERS, 3))
        + tuple(f"{s}_{d.pick(('app', 'svc', 'rw', 'api'))}" for s in d.sample(w.SERVICES, 2)),
        level=level,
        secret_roles=pools[0] if pools else (),
        public_roles=pools[1] if pools else (),
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
