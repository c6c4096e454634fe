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
from redaction_pressure.corpus.families.common import yaml_quote

KINDS = ("stripe_key", "openai_key", "google_api_key", "generic_secret", "slack_token") + ("house_token",) * 10 + ("generic_secret", "jwt")


def draw(b: Builder) -> FamilyDialect:
    d = b.d
    case = d.pick(("lower_snake", "camel", "kebab"))
    layout = {"indent": d.pick((2, 4)), "quote": d.pick(("", '"', "'")), "case": case, "header": d.pick(("services", "clients", "integrations"))}
    kind = d.pick(KINDS)
    fmt = b.secret_format(kind)
    subject = b.subject(kind, fmt)
    role = b.role(kind, fmt)
    b.entry("shared", (fmt, True), key=w.spell((subject, *role), case), quote=yaml_quote(fmt.charset, layout["quote"]))
    for look in d.sample(("id", "setting", "reference", "public"), d.int(1, 3)):
        if look == "id":
            b.entry("kv", (v.UUID, False), key=w.spell(("service", "id"), case))
        elif look == "setting":
            suffix, decoy = b.setting()
            b.entry("kv", (decoy, False), key=w.spell((subject, *role, *suffix), case))
        elif look == "reference":
            suffix, decoy = b.reference(subject, (subject, *role))
            b.entry("kv", (decoy, False), key=w.spell((subject, *role, *suffix), case))
        elif kind in ("house_token", "stripe_key", "generic_secret"):
            for public, prole in b.publics(fmt) or [(b.public_like(fmt), b.public_role(fmt))]:
                # A public id is shared by the services as the secret is: one value, repeated.
                b.entry("shared", (public, False), key=w.spell((subject, *prole), case), quote=yaml_quote(public.charset, layout["quote"]))
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
    for n, service in enumerate(services):
        wr.line(f"{pad}{service}:")
        wr.line(f"{pad}{pad}endpoint: https://{service}.{wr.world.domain}/v{d.int(1, 3)}")
        for entry in shared:
            q = entry["quote"]
            wr.line(f"{pad}{pad}{entry['key']}: {q}", Mark(values[id(entry)], entry.slots[0]), q)
        for entry in others:
            if n == 0 or d.chance(0.5):
                q = '"' if entry.slots[0].kind in ("secret_reference",) else ""
                wr.line(f"{pad}{pad}{entry['key']}: {q}", wr.fresh(entry.slots[0]), q)
        wr.line(f"{pad}{pad}timeout_ms: {d.pick((500, 1000, 2500))}")


FAMILY = Family("repeated_key", draw, write, syntax="yaml", filename="services.yaml")
