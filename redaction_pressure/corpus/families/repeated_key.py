"""One vendor key repeated across several service configs in a YAML file.

Dialect: the shared key's kind and name, the quote, the indentation, and per-service
look-alikes under the same words: a service id, a TTL or rotation setting, a reference
to where the key should live. A record repeats one fresh value in 2 to 4 services, each
occurrence labelled. Records parse as YAML.
"""

from __future__ import annotations

from redaction_pressure.corpus import values as v
from redaction_pressure.corpus import words as w
from redaction_pressure.corpus.dialect import Builder, Family, FamilyDialect
from redaction_pressure.corpus.document import Mark, Writer
from redaction_pressure.corpus.families.common import housed, yaml_quote

KINDS = ("stripe_key", "generic_secret", "generic_secret", "jwt") + ("house_token",) * 10
"""Only kinds with a public counterpart: every dialect repeats a public id beside the secret."""


def draw(b: Builder) -> FamilyDialect:
    d = b.d
    case = d.pick(("lower_snake", "camel", "kebab"))
    layout = {
        "indent": d.pick((2, 4)),
        "quote": d.pick(("", '"', "'")),
        "case": case,
        "header": d.pick(("services", "clients", "integrations")),
    }
    kind = housed(b, d.pick(KINDS))
    fmt = b.secret_format(kind)
    subject = b.subject(kind, fmt)
    role = b.role(kind, fmt)
    first = b.entry(
        "shared", (fmt, True), key=w.spell((subject, *role), case), quote=yaml_quote(fmt.charset, layout["quote"])
    )
    # A public id is shared by the services as the secret is: one value, repeated, in every dialect.
    members = [(subject, *role)]
    for public, prole in b.publics(fmt) + b.anon(fmt) or [(b.public_like(fmt), b.public_role(fmt))]:
        b.entry(
            "shared",
            (public, False),
            key=w.spell((subject, *prole), case),
            quote=yaml_quote(public.charset, layout["quote"]),
            group=first.group,
        )
        members.append((subject, *prole))
    house = b.house_for(fmt)
    if b.world.level.sections and house:
        # One service holds, under the secret's very key and in its shape, a public id instead
        # (a browser-side client of the vendor): the service decides, and the first shown
        # record of the family shows that service.
        b.entry("twin", (v.house_twin(house), False), key=first["key"], quote=first["quote"], group=first.group)
        layout["twin"] = d.pick(b.world.services)
    for look in d.sample(("id", "setting", "reference"), d.int(0, 2)):
        words = d.pick(members)
        if look == "id":
            b.entry("kv", (v.UUID, False), key=w.spell(("service", "id"), case))
        elif look == "setting":
            suffix, decoy = b.setting()
            b.entry("kv", (decoy, False), key=w.spell((*words, *suffix), case))
        else:
            suffix, decoy = b.reference(subject, words)
            b.entry("kv", (decoy, False), key=w.spell((*words, *suffix), case))
    return b.done(layout, keep=0.8)


def write(wr: Writer) -> None:
    d, layout = wr.d, wr.layout
    pad = " " * layout["indent"]
    shared = d.shuffled([e for e in wr.entries if e.form == "shared"])
    values = {id(e): e.slots[0].fmt.draw(d) for e in shared}
    others = [e for e in wr.entries if e.form == "kv"]
    wr.line(f"# {layout['header']}.yaml: vendor credentials shared by several services")
    wr.line(f"{layout['header']}:")
    services = d.sample(wr.world.services, d.int(2, 4))
    twin = next((e for e in wr.entries if e.form == "twin"), None)
    if twin and (len(wr.entries) == len(wr.family_entries) or d.chance(0.5)) and layout["twin"] not in services:
        services[d.rng.randrange(len(services))] = layout["twin"]
    twin_value = twin.slots[0].fmt.draw(d) if twin else ""
    for n, service in enumerate(services):
        wr.line(f"{pad}{service}:")
        wr.line(f"{pad}{pad}endpoint: https://{service}.{wr.world.domain}/v{d.int(1, 3)}")
        for entry in shared:
            q = entry["quote"]
            if twin and service == layout["twin"] and entry.slots[0].secret:
                wr.line(f"{pad}{pad}{entry['key']}: {q}", Mark(twin_value, twin.slots[0]), q)
            else:
                wr.line(f"{pad}{pad}{entry['key']}: {q}", Mark(values[id(entry)], entry.slots[0]), q)
        for entry in others:
            if n == 0 or d.chance(0.5):
                q = '"' if entry.slots[0].kind in ("secret_reference",) else ""
                wr.line(f"{pad}{pad}{entry['key']}: {q}", wr.fresh(entry.slots[0]), q)
        wr.line(f"{pad}{pad}timeout_ms: {d.pick((500, 1000, 2500))}")


FAMILY = Family("repeated_key", draw, write, syntax="yaml", filename="services.yaml")
