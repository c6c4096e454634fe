"""HTTP access logs (combined format) with `Authorization` headers or tokens in query strings.

Dialect: where the credential is logged (an appended header field, a query parameter)
with its field or parameter name and scheme, and look-alikes in the same place: the
header already `[REDACTED]`, a public key in another parameter, request ids.
"""

from __future__ import annotations

from urllib.parse import quote

from redaction_pressure.corpus import values as v
from redaction_pressure.corpus import words as w
from redaction_pressure.corpus.dialect import Builder, Family, FamilyDialect
from redaction_pressure.corpus.document import Writer
from redaction_pressure.corpus.families.common import kinds

KINDS = (
    ("jwt", "base64_credential", "generic_secret", "github_token", "stripe_key")
    + ("house_token",) * 8
    + ("generic_secret", "jwt")
)
SCHEMES = ("Bearer ", "Token ", "")
AGENTS = ("curl/8.5.0", "python-requests/2.32.3", "okhttp/4.12.0", "Go-http-client/2.0", "axios/1.7.2")


def draw(b: Builder) -> FamilyDialect:
    d = b.d
    layout = {
        "month": d.pick(("Mar", "Apr", "Oct", "Nov")),
        "field": d.pick(("auth", "authorization", "hdr_auth", "http_authorization")),
    }
    for kind in kinds(b, KINDS, 1, 2):
        fmt = b.secret_format(kind)
        house = b.house_for(fmt)
        if kind == "base64_credential" or d.chance(0.6):
            scheme = "Basic " if kind == "base64_credential" else d.pick(SCHEMES)
            b.entry("header", (fmt, True), scheme=scheme)
            first = b.entries[-1]
        else:
            param = (
                w.spell(house.secret_role, "lower_snake")
                if house
                else d.pick(("access_token", "api_key", "token", "key", "sig", "auth"))
            )
            b.entry("query", (fmt, True), param=param, path=f"/api/v{d.int(1, 3)}/{d.pick(b.world.services)}")
            first = b.entries[-1]
            # At the hard level a query value is percent-encoded, as a client sends it.
            first.words["encoded"] = b.world.level.escaped and d.chance(0.7)
        # A vendor's public ids travel in query strings or, like a browser key, in the auth
        # header with any scheme the secret may use (only where a prefix tells them apart:
        # the header has no name to go by).
        secret_prefixes = {h.secret_prefix for h in b.world.houses}
        for public, role in b.publics(fmt):
            # (Not a public id that starts with another vendor's secret prefix, as at the expert
            # level: only its body's shape would tell it apart there.)
            if house.secret_prefix and d.chance(0.6) and house.prefix_of(public) not in secret_prefixes:
                b.entry("header", (public, False), scheme=d.pick(SCHEMES), group=first.group)
            else:
                param, path = w.spell(role, "lower_snake"), f"/api/v1/{d.pick(b.world.services)}"
                if b.world.level.siblings and any(
                    e.form == "query" and e.has_secret and e["param"] == param and e["path"][8:] == path[8:]
                    for e in b.entries
                ):
                    # At the expert level a public id never sits at a secret's very path and
                    # parameter (a role word is secret for one vendor, public for another).
                    path = f"/api/v1/public/{path[8:]}"
                b.entry("query", (public, False), param=param, path=path, group=first.group)
        if first.form == "query":
            if not house and kind == "stripe_key" and d.chance(0.6):
                b.entry(
                    "query",
                    (b.public_like(fmt), False),
                    param=d.pick(("client_id", "pk", "publishable_key")),
                    path=f"/api/v1/{d.pick(b.world.services)}",
                )
        # An already redacted header, in the scheme of any header of the set.
        headers = [e for e in b.entries if e.group == first.group and e.form == "header"]
        if headers and d.chance(0.6):
            b.entry("header", (v.REDACTED_MARKER, False), scheme=d.pick(headers)["scheme"])
    if d.chance(0.6):
        b.entry("rid", (v.UUID, False), name=d.pick(("rid", "request_id", "x_request_id")))
    return b.done(layout, keep=0.7)


def write(wr: Writer) -> None:
    d, layout = wr.d, wr.layout
    labelled = [e for e in wr.entries if e.form in ("header", "query")]
    rid = next((e for e in wr.entries if e.form == "rid"), None)
    lines = [(e, False) for e in labelled] + [(None, False)] * d.int(1, 3)
    for entry, _ in d.shuffled(lines):
        ts = f"{d.int(1, 28):02d}/{layout['month']}/2026:{d.int(0, 23):02d}:{d.int(0, 59):02d}:{d.int(0, 59):02d} +0000"
        method = d.pick(("GET", "POST", "PUT"))
        wr.put(f'{wr.ip()} - - [{ts}] "{method} ')
        if entry is not None and entry.form == "query":
            page = d.int(1, 9)
            mark = wr.fresh(entry.slots[0])
            if entry.words.get("encoded"):
                mark = mark._replace(value=quote(mark.value, safe=""))
            wr.put(f"{entry['path']}?page={page}&{entry['param']}=", mark)
        else:
            wr.put(f"/api/v{d.int(1, 3)}/{wr.service()}?page={d.int(1, 9)}")
        wr.put(f' HTTP/1.1" {d.pick((200, 200, 201, 401, 403))} {d.int(120, 9000)} "-" "{d.pick(AGENTS)}"')
        if rid and (entry is None or d.chance(0.7)):
            wr.put(f" {rid['name']}=", wr.fresh(rid.slots[0]))
        if entry is not None and entry.form == "header":
            wr.put(f' {layout["field"]}="{entry["scheme"]}', wr.fresh(entry.slots[0]), '"')
        wr.line()


FAMILY = Family("access_log", draw, write, syntax="log", filename="access.log")
