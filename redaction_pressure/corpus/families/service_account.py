"""JSON credential files: a service account with an escaped PEM key, or a vendor's key pair.

Dialect: the document shape (a Google-style service account, an OAuth client, a vendor
credential with a public key id and a secret), the key order and indentation. The PEM's
newlines are JSON escapes (`\\n`), so its span runs from `-----BEGIN` to the closing
dashes in the escaped text. Look-alikes: the private key's id (public), the client id,
the vendor's public id. Records parse as JSON and each secret is a string's value.
"""

from __future__ import annotations

from redaction_pressure.corpus import values as v
from redaction_pressure.corpus import words as w
from redaction_pressure.corpus.dialect import Builder, Family, FamilyDialect
from redaction_pressure.corpus.document import Writer
from redaction_pressure.corpus.draw import HEX

KEY_ID = v.Format("identifier", "hex40", lambda d: d.chars(HEX, 40), HEX)
CLIENT_ID = v.Format(
    "identifier",
    "oauth_client",
    lambda d: f"{d.digits(12)}-{d.chars('abcdefghijklmnopqrstuvwxyz0123456789', 32)}.apps.googleusercontent.com",
    HEX,
)


def draw(b: Builder) -> FamilyDialect:
    d = b.d
    shape = d.pick(("service_account", "service_account", "oauth", "vendor"))
    layout = {
        "shape": shape,
        "indent": d.pick((2, 4)),
        "project": f"{b.world.org}-{d.pick(b.world.services)}-{d.digits(6)}",
    }
    if shape == "service_account":
        style = d.pick(("ec_pkcs8", "ed25519_pkcs8"))
        b.entry("kv", (KEY_ID, False), key="private_key_id")
        b.entry("kv", (v.private_key(style, escaped=True), True), key="private_key", tail="\\n")
    elif shape == "oauth":
        b.entry("kv", (CLIENT_ID, False), key="client_id")
        secret = d.pick(("generic_secret", "house_token"))
        b.entry("kv", (b.secret_format(secret), True), key="client_secret")
    else:
        house = d.pick(b.world.houses)
        case = d.pick(("lower_snake", "camel"))
        for n, role in enumerate(house.public_roles):
            b.entry("kv", (v.house_public(house, n), False), key=w.spell(role, case))
        b.entry("kv", (v.house_token(house), True), key=w.spell(house.secret_role, case))
        layout["vendor"] = house.vendor
    return b.done(layout, keep=1.0)


def write(wr: Writer) -> None:
    d, layout = wr.d, wr.layout
    pad = " " * layout["indent"]
    project = layout["project"]
    shape = layout["shape"]
    if shape == "service_account":
        account = f"{d.pick(('ci-deployer', 'exporter', 'backup', 'terraform'))}@{project}.iam.gserviceaccount.com"
        fields: list[tuple] = [("type", '"service_account"'), ("project_id", f'"{project}"'), ("client_email", f'"{account}"'),
                               ("client_id", f'"{d.digits(21)}"'), ("token_uri", '"https://oauth2.googleapis.com/token"')]  # fmt: skip
    elif shape == "oauth":
        fields = [
            ("project_id", f'"{project}"'),
            ("auth_uri", '"https://accounts.google.com/o/oauth2/auth"'),
            ("redirect_uris", '["http://localhost"]'),
        ]
    else:
        fields = [
            ("vendor", f'"{layout["vendor"]}"'),
            ("environment", f'"{wr.world.env}"'),
            ("created", f'"2026-{d.int(1, 12):02d}-{d.int(1, 28):02d}"'),
        ]
    for entry in wr.entries:
        fields.append((entry["key"], '"', wr.fresh(entry.slots[0]), entry.words.get("tail", "") + '"'))
    fields = fields[:2] + d.shuffled(fields[2:])
    wrap = shape == "oauth"
    inner = pad * (2 if wrap else 1)
    wr.line("{")
    if wrap:
        wr.line(f'{pad}"{d.pick(("installed", "web"))}": {{')
    for n, (key, *value) in enumerate(fields):
        wr.line(f'{inner}"{key}": ', *value, "," if n < len(fields) - 1 else "")
    if wrap:
        wr.line(f"{pad}}}")
    wr.line("}")


FAMILY = Family("service_account", draw, write, syntax="json", filename="credentials.json")
