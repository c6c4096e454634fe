"""The stream: a task's records, the first `shown` of them covering every slot of its dialect.

- The dialect (world, families, entries, slots) comes from `Draw.derived(seed, "dialect")`,
  and so does the tour: which family each shown record belongs to, every family at least
  once. A family's first shown record writes all its entries, so every slot appears in
  the prompt; every other record writes a random subset (at least one secret entry).
- Record i is written from `Draw.derived(seed, "record", i)` alone. Hidden records pick
  their family from that generator and use only the dialect's slots, with fresh values.
- A ledger keeps the stream's promises: no secret value repeats across records (a
  repeated-key record repeats its own value), no secret occurs inside a decoy or the
  other way round, every occurrence of a secret value is labelled, and no record holds
  the prompt's record delimiters. A record that breaks one is redrawn from
  `Draw.derived(seed, "record", i, "retry", k)`.
"""

from __future__ import annotations

from collections.abc import Iterator
from itertools import islice

from redaction_pressure.corpus.dialect import Builder, Dialect, FamilyDialect
from redaction_pressure.corpus.document import Writer
from redaction_pressure.corpus.draw import Draw
from redaction_pressure.corpus.families import FAMILIES, LEVEL_ONLY
from redaction_pressure.corpus.levels import level_of
from redaction_pressure.corpus.world import draw_world
from redaction_pressure.spans import Record

CONVENTIONAL = (
    "dotenv", "python_settings", "toml_config", "compose_env", "repeated_key", "ci_workflow", "app_log",
    "function_local", "access_log",
)  # fmt: skip
SECTIONED = ("toml_config", "repeated_key")
"""Families where, at the hard level, one key holds a secret in one section and a public id in another."""
_MAX_ATTEMPTS = 32
"""Redraws allowed for one record before the generator reports a bug."""


def draw_dialect(seed: int, shown: int) -> tuple[Dialect, list[int]]:
    """The task's dialect and its tour (the family index of each shown record).

    At a level with a `prompt_budget`, a dialect whose shown records run longer than the budget
    is redrawn from `Draw.derived(seed, "dialect", "retry", k)`; the first that fits is the task's.
    """
    level = level_of(seed)
    if not level.prompt_budget:
        return _draw_dialect(seed, shown, Draw.derived(seed, "dialect"))
    for attempt in range(_MAX_ATTEMPTS):
        d = Draw.derived(seed, "dialect", "retry", attempt) if attempt else Draw.derived(seed, "dialect")
        dialect, tour = _draw_dialect(seed, shown, d)
        size = 0
        for record in islice(_records(seed, shown, dialect, tour), shown):
            size += len(record.text) + sum(len(record.value(s)) + 32 for s in record.secrets) + 64
            if size > level.prompt_budget:
                break
        if size <= level.prompt_budget:
            return dialect, tour
    raise RuntimeError(f"seed {seed} drew no dialect whose shown records fit {level.prompt_budget} characters")


def _draw_dialect(seed: int, shown: int, d: Draw) -> tuple[Dialect, list[int]]:
    level = level_of(seed)
    world = draw_world(d, level)
    count = min(shown, d.int(*level.families))
    # At least two families (at the hard level four) whose documents follow the task's own naming
    # conventions, so no task is made only of shapes that general knowledge finds (PEM blocks,
    # DSNs, SQL).
    conventional = d.sample(CONVENTIONAL, min(count, level.conventional))
    if level.sections and not set(conventional) & set(SECTIONED):
        # A hard task always has a family whose sections decide what a key holds.
        conventional[0] = d.pick(SECTIONED)
    # Families a level's knob adds (the expert level's credential inventory) are the task's
    # whenever the level has the knob, and never drawn otherwise.
    extra = [name for name, knob in sorted(LEVEL_ONLY.items()) if getattr(level, knob)]
    if extra:
        conventional[-len(extra) :] = extra
    pool = [n for n in sorted(FAMILIES) if n not in conventional and n not in LEVEL_ONLY]
    names = conventional + d.sample(pool, count - len(conventional))
    names = d.shuffled(names)
    families = tuple(FAMILIES[name].draw(Builder(name, d, world)) for name in names)
    order = [i % len(families) for i in range(shown)]
    if level.siblings and "credential_list" in names and shown > len(families):
        # The inventory is shown twice (its first record lists every pair, the second confirms
        # some): a pair's meaning is read from more than one item. The last duplicate slot of
        # the round-robin gives way; every family is still shown at least once.
        order[-1] = names.index("credential_list")
    tour = d.shuffled(order)
    return Dialect(world, families), tour


_TOKEN_LENGTH = 8
"""Values this long count as tokens for the ledger's cross-record checks."""


class _Ledger:
    """Values already placed in one stream, to keep secrets fresh and apart from decoys."""

    def __init__(self) -> None:
        self.secrets: set[str] = set()
        self.decoys: set[str] = set()

    def admits(self, record: Record) -> bool:
        if "<record" in record.text or "</record>" in record.text:
            return False
        secrets = {record.value(s) for s in record.secrets}
        decoys = {record.value(d) for d in record.decoys}
        if secrets & self.secrets:
            return False
        for value in secrets:
            occurrences = sum(1 for s in record.secrets if record.value(s) == value)
            if record.text.count(value) != occurrences:
                return False
        # Inside a record no secret and decoy overlap at all. Across records only values of
        # token length must not: a short decoy (`2048`, `3600`, `HS256`) inside some earlier
        # random secret is chance, not a shared value, and a fixed setting would otherwise
        # make a family's first record impossible to draw.
        if any(s in d or d in s for s in secrets for d in decoys):
            return False
        older_decoys = [d for d in self.decoys if len(d) >= _TOKEN_LENGTH]
        older_secrets = [s for s in self.secrets if len(s) >= _TOKEN_LENGTH]
        return not any(s in d or d in s for s in secrets for d in older_decoys) and not any(
            s in d or d in s for d in decoys if len(d) >= _TOKEN_LENGTH for s in older_secrets
        )

    def admit(self, record: Record) -> None:
        self.secrets.update(record.value(s) for s in record.secrets)
        self.decoys.update(record.value(d) for d in record.decoys)


def _write(dialect: Dialect, family: FamilyDialect, d: Draw, full: bool) -> Record:
    if full:
        entries = family.entries
    else:
        groups = sorted({e.group for e in family.entries})
        kept = {g for g in groups if d.chance(family.keep)}
        if not any(e.has_secret and e.group in kept for e in family.entries):
            kept.add(d.pick([e for e in family.entries if e.has_secret]).group)
        # A vendor's public ids also travel without its secret (a client's config, a log line
        # naming only the app): as often as the level says, an unkept group writes its public ids.
        lone = dialect.world.level.lone_publics
        alone = {g for g in groups if g not in kept and lone and d.chance(lone)}
        entries = tuple(e for e in family.entries if e.group in kept or (e.group in alone and not e.has_secret))
    writer = Writer(d, dialect.world, family, entries)
    FAMILIES[family.family].write(writer)
    return writer.record(family.family)


def first_draft(seed: int, shown: int, i: int) -> Record:
    """Record i as written from `Draw.derived(seed, "record", i)` alone, before any ledger check.

    In a stream, record i is this draft unless the ledger refused it (a redraw); the corpus
    tests use it to show that a record depends on nothing but its own seed.
    """
    dialect, tour = draw_dialect(seed, shown)
    d = Draw.derived(seed, "record", i)
    if i < shown:
        return _write(dialect, dialect.families[tour[i]], d, tour[i] not in tour[:i])
    return _write(dialect, dialect.families[d.rng.randrange(len(dialect.families))], d, False)


def stream(seed: int, shown: int = 8) -> Iterator[Record]:
    """Yield the records of the stream for `seed`; the first `shown` cover every slot."""
    if shown < 1:
        raise ValueError(f"shown must be at least 1 (got {shown}): hidden slots must be shown first")
    dialect, tour = draw_dialect(seed, shown)
    yield from _records(seed, shown, dialect, tour)


SIBLING_SHARE = 0.6
"""At a level with `siblings`, the share of hidden records that are the credential inventory."""


def _hidden_family(dialect: Dialect, d: Draw) -> int:
    """The family a hidden record belongs to: uniform, except that at a level with `siblings` the
    credential inventory (where only a sibling field and the vendor together decide) takes
    `SIBLING_SHARE` of the hidden records."""
    names = [f.family for f in dialect.families]
    if dialect.world.level.siblings and "credential_list" in names and d.chance(SIBLING_SHARE):
        return names.index("credential_list")
    return d.rng.randrange(len(dialect.families))


def _records(seed: int, shown: int, dialect: Dialect, tour: list[int]) -> Iterator[Record]:
    ledger = _Ledger()
    seen: set[int] = set()
    i = 0
    while True:
        for attempt in range(_MAX_ATTEMPTS):
            d = Draw.derived(seed, "record", i, "retry", attempt) if attempt else Draw.derived(seed, "record", i)
            if i < shown:
                index, full = tour[i], tour[i] not in seen
            else:
                index, full = _hidden_family(dialect, d), False
            record = _write(dialect, dialect.families[index], d, full)
            if ledger.admits(record):
                break
        else:
            raise RuntimeError(f"record {i} of seed {seed} drew no admissible record in {_MAX_ATTEMPTS} attempts")
        ledger.admit(record)
        seen.add(index)
        yield record
        i += 1
