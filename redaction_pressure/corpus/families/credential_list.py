"""A credential inventory in YAML where a sibling field decides what a value is (expert level only).

Dialect: the list's name, the sibling field's name (`scope`, `audience`, ...) and the task's two
scope words, and for each of three or four of the task's vendors the scope its secret is
issued for. Every item names a scope, then a vendor, then holds a `value` in the vendor's secret
shape (its prefix, alphabet and length): the vendor's secret under the vendor's own secret scope,
a public twin (a browser or mobile build's key) under every other scope. Vendors do not share a
secret scope when the task has enough scope words, so neither `scope: server` nor the vendor's
prefix decides alone; only the pair does, and a family's first shown record lists every pair.
Records parse as YAML and each secret is an item's `value`.
"""

from __future__ import annotations

from redaction_pressure.corpus import values as v
from redaction_pressure.corpus.dialect import Builder, Family, FamilyDialect
from redaction_pressure.corpus.document import Writer
from redaction_pressure.corpus.families.common import yaml_quote

SCOPE_FIELDS = ("scope", "audience", "exposure", "surface", "used_by")
SCOPE_WORDS = ("server", "browser", "mobile", "backend", "frontend", "worker", "widget", "edge", "signing", "embed")
LIST_NAMES = ("credentials", "keys", "issued_keys", "vendor_keys", "api_credentials")


def draw(b: Builder) -> FamilyDialect:
    d = b.d
    houses = d.sample(b.world.houses, min(len(b.world.houses), d.int(3, 4)))
    scopes = d.sample(SCOPE_WORDS, 3)
    layout = {
        "list": d.pick(LIST_NAMES),
        "field": d.pick(SCOPE_FIELDS),
        "quote": d.pick(("", '"', "'")),
        "indent": d.pick((2, 4)),
    }
    # Each vendor's secret scope; vendors take different ones while the scope words last, so
    # that one scope word holds a secret for one vendor and a public twin for the next.
    secret_scopes = d.shuffled(scopes)
    for n, house in enumerate(houses):
        own = secret_scopes[n % len(secret_scopes)]
        for scope in scopes:
            fmt = v.house_token(house) if scope == own else v.house_twin(house)
            quote = yaml_quote(fmt.charset, layout["quote"])
            b.entry("item", (fmt, scope == own), scope=scope, vendor=house.vendor, quote=quote)
    return b.done(layout, keep=0.6)


def write(wr: Writer) -> None:
    d, layout = wr.d, wr.layout
    pad = " " * layout["indent"]
    wr.line(f"# {layout['list']}.yaml: keys issued to {wr.world.org} ({wr.world.env}); rotate every 90 days")
    wr.line(f"{layout['list']}:")
    for entry in d.shuffled(list(wr.entries)):
        q = entry["quote"]
        wr.line(f"{pad}- {layout['field']}: {entry['scope']}")
        wr.line(f"{pad}  vendor: {entry['vendor']}")
        wr.line(f"{pad}  value: {q}", wr.fresh(entry.slots[0]), q)
        wr.line(f"{pad}  rotated: 2026-{d.int(1, 12):02d}-{d.int(1, 28):02d}")


FAMILY = Family("credential_list", draw, write, syntax="yaml", filename="credentials.yaml")
