"""Difficulty levels: `easy`, `standard` (the default), `hard` and `expert`, and how a seed names its level.

A level is a fixed set of knobs of the dialect draw (how many vendors and families, which
role words, how many look-alikes, whether conventions vary with the section a value sits
in, how values are escaped, how much of a task general knowledge finds). Every level keeps the stream's promises: every
hidden slot is shown, hidden values are fresh, every hidden decoy is told apart by what
the shown records establish.

A corpus seed carries its level: `seed >> 64` is the level's `code` (0 for standard), so
`stream(seed)` needs nothing else and a scoring worker that rebuilds records from a seed
rebuilds the right level. Public and private seeds are below 2**64, so the standard
level's seeds, and its records, are those of the levels-free corpus.
"""

from __future__ import annotations

from dataclasses import dataclass

DEFAULT = "standard"


@dataclass(frozen=True)
class Level:
    name: str
    code: int
    vendors: tuple[int, int]
    """How many invented vendors (house token formats) the world has."""
    families: tuple[int, int]
    """How many document families a task draws."""
    task_roles: bool
    """Role words mean one thing across the task: the task splits the ambiguous names once into
    secret names and public names, which every vendor and internal service then follows (which
    names are secret is drawn per task, so nothing holds across tasks)."""
    publics: tuple[int, ...]
    """How many public ids a vendor (and the internal convention) has, one drawn per vendor: each
    in the secret's alphabet and length, written wherever the secret is. Their share of the
    secret-shaped text is what keeps "redact every key=value" from paying."""
    lone_publics: float
    """Chance that a later record writes a vendor's public ids where it leaves out their secret."""
    lookalikes: int
    """Look-alike entries a credential cluster draws beyond (or short of) the family's usual number."""
    sections: bool
    """A vendor's key is secret in one section of a document and, same shape and same key name,
    public in another; the task's shown records show it both ways."""
    escaped: bool
    """Credentials may sit inside an escaped JSON string of a JSON log line, or percent-encoded in
    a URL's query string (the span is the text as written). Not yet: values wrapped across lines."""
    conventional: int
    """How many of a task's families at least follow the task's own naming conventions; the
    others may be shapes general knowledge finds (PEM blocks, DSNs, SQL, base64 credentials)."""
    house_share: float
    """Chance that a credential a family would draw in a format general knowledge finds (a
    published vendor token, a JWT, a password) is a house token of one of the task's vendors
    instead; a settings module's AWS pair and a `.env`'s database URL are left out as often.
    With `conventional` it sets how much of a task a prompt-blind answer finds by general
    knowledge alone; the rest only the task's shown records teach."""
    siblings: bool = False
    """A task keeps a credential inventory (`credential_list`) where a sibling field decides what a
    value is: each vendor's secret sits under its own scope word and, same key and same shape, a
    public twin under the others; scope words are shared by the vendors, so neither the scope
    alone nor the vendor alone decides, only the pair (shown for every pair)."""
    shared_prefixes: bool = False
    """One vendor's public ids start with another vendor's secret prefix (their bodies keep their
    own vendor's alphabet and length): a prefix alone does not say what a value is."""
    prompt_budget: int = 0
    """When above 0, the most characters a task's shown records (with their listed secrets) may
    take: a dialect whose shown records run longer is redrawn (`stream.draw_dialect`)."""


LEVELS: dict[str, Level] = {
    "easy": Level(
        "easy",
        1,
        vendors=(1, 2),
        families=(2, 3),
        task_roles=True,
        publics=(2, 3, 3),
        lone_publics=0.0,
        lookalikes=-1,
        sections=False,
        escaped=False,
        conventional=2,
        house_share=0.0,
    ),
    "standard": Level(
        "standard",
        0,
        vendors=(2, 3),
        families=(3, 5),
        task_roles=False,
        publics=(4, 4, 5),
        lone_publics=0.6,
        lookalikes=0,
        sections=False,
        escaped=False,
        conventional=2,
        house_share=0.0,
    ),
    "hard": Level(
        "hard",
        2,
        vendors=(3, 4),
        families=(5, 6),
        task_roles=False,
        publics=(8, 9, 10),
        lone_publics=0.9,
        lookalikes=1,
        sections=True,
        escaped=True,
        conventional=4,
        house_share=0.6,
    ),
    "expert": Level(
        "expert",
        3,
        vendors=(3, 4),
        families=(6, 7),
        task_roles=False,
        publics=(3, 4, 5),
        lone_publics=0.9,
        lookalikes=1,
        sections=True,
        escaped=True,
        conventional=5,
        house_share=0.7,
        siblings=True,
        shared_prefixes=True,
        prompt_budget=21_000,
    ),
}
_BY_CODE = {level.code: level for level in LEVELS.values()}


def level(name: str) -> Level:
    """The level called `name`; a clear error for an unknown one."""
    if name not in LEVELS:
        raise ValueError(f"unknown difficulty {name!r}; choose one of {', '.join(LEVELS)}")
    return LEVELS[name]


def level_seed(seed: int, name: str) -> int:
    """The corpus seed of `seed` at level `name` (standard: `seed` itself)."""
    if not 0 <= seed < 2**64:
        raise ValueError(f"a task seed is below 2**64, got {seed}")
    return (level(name).code << 64) | seed


def level_of(seed: int) -> Level:
    """The level a corpus seed names."""
    code = seed >> 64
    if code not in _BY_CODE:
        raise ValueError(f"seed {seed} names no difficulty level")
    return _BY_CODE[code]
