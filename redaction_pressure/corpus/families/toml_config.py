"""TOML configuration where visibly fake fixture values sit beside real secrets.

Dialect: table names, the key case, 1 to 2 credential tables, a fixtures table whose
values keep the secrets' prefixes and lengths with fake bodies (or carry an allowlist
comment), and settings, references and tenant ids under secret-sounding keys.
Records parse with `tomllib` and each secret is a string value's exact value.
"""

from __future__ import annotations

from redaction_pressure.corpus import values as v
from redaction_pressure.corpus import words as w
from redaction_pressure.corpus.dialect import Builder, Family, FamilyDialect
from redaction_pressure.corpus.document import Writer
from redaction_pressure.corpus.families.common import ALLOW_MARKERS, SECTIONS, cluster, kinds, note

KINDS = (
    ("generic_secret", "generic_secret", "stripe_key", "password", "slack_token", "openai_key")
    + ("house_token",) * 10
    + ("generic_secret", "jwt")
)


def draw(b: Builder) -> FamilyDialect:
    d = b.d
    case = d.pick(("lower_snake", "kebab"))
    layout = {
        "case": case,
        "fixtures": d.pick(("tests.fixtures", "fixtures", "dev.seed", "testing")),
        "pragma": d.chance(0.6),
        "marker": d.pick(ALLOW_MARKERS),
    }
    tables: set[str] = set()
    fixture_keys: set[str] = set()
    for kind in kinds(b, KINDS, 1, 2):
        table = d.pick([t for t in (b.subject(kind), "secrets", "vendors", "integrations") if t not in tables])
        tables.add(table)
        entries = cluster(
            b, kind, case, looks=("setting", "reference", "hash", "public", "id", "allowlisted"), count=(1, 2)
        )
        for entry in entries:
            entry.words["table"] = table
        # The fixtures table repeats the key of the secret or of one of its vendor's public ids.
        house = b.house_for(entries[0].slots[0].fmt)
        models = [
            e
            for e in entries
            if e.slots[0].secret
            or (house and e.slots[0].kind == "public_key" and e.slots[0].fmt.label.startswith(house.vendor))
        ]
        model = d.pick(models)
        key = model["key"]
        if key in fixture_keys:
            continue
        fixture_keys.add(key)
        prefix = b.secret_prefix(model.slots[0].fmt) if model.slots[0].secret else house.prefix_of(model.slots[0].fmt)
        fixture = v.fixture_like(model.slots[0].fmt, d.pick(v.FAKE_STYLES), prefix)
        b.entry("kv", (fixture, False), table=layout["fixtures"], key=key)
    if b.world.level.sections:
        # The same key, in the same shape, is the vendor's secret in one table and a public
        # id in its twin table: only the table (shown both ways) says which.
        secret = next(e for e in b.entries if e.slots[0].kind == "house_token")
        house = b.house_for(secret.slots[0].fmt)
        private, public = d.sample([s for s in SECTIONS if s not in tables], 2)
        secret.words["table"] = f"{private}.{house.vendor}"
        b.entry(
            "kv", (v.house_twin(house), False), table=f"{public}.{house.vendor}", key=secret["key"], group=secret.group
        )
    if d.chance(0.5):
        b.entry("kv", (v.UUID, False), table="tenant", key=w.spell(("tenant", "id"), case))
    return b.done(layout, keep=0.7)


def write(wr: Writer) -> None:
    d, layout = wr.d, wr.layout
    wr.line(f"# {wr.service()}.toml ({wr.world.env})")
    wr.line(f'[server]\nhost = "0.0.0.0"\nport = {d.pick((8000, 8080, 9000))}\nworkers = {d.int(2, 16)}\n')
    tables: dict[str, list] = {}
    for entry in wr.entries:
        tables.setdefault(entry["table"], []).append(entry)
    for table in d.shuffled(sorted(tables)):
        if table == layout["fixtures"]:
            wr.line(
                f"[{table}]\n# {d.pick(('Dummy values for the test suite; not real credentials.', 'Fake values used by tests only.', 'Seed data for local runs; nothing here is real.'))}"
            )
        else:
            wr.line(f"[{table}]")
        for entry in d.shuffled(tables[table]):
            wr.line(f'{entry["key"]} = "', wr.fresh(entry.slots[0]), '"' + note(entry, layout))
        wr.line()


FAMILY = Family("toml_config", draw, write, syntax="toml", filename="config.toml")
