"""A task's world: what every family of one task shares, drawn once per task.

`draw_world` draws the organisation, its services, its invented vendors with house token
formats (`House`, as many as the level draws, each with its prefix marker and role words),
the organisation's own internal house, the JWT style, password policies and user names.
At a level with `shared_prefixes`, vendors' public ids wear each other's secret prefixes.
The families' dialects (`dialect.py`) are drawn on top of it.
"""

from __future__ import annotations

from dataclasses import dataclass, replace

from redaction_pressure.corpus import values as v
from redaction_pressure.corpus import words as w
from redaction_pressure.corpus.draw import Draw
from redaction_pressure.corpus.levels import LEVELS, Level
from redaction_pressure.corpus.values import House, PasswordPolicy


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
