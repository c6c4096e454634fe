"""Client-side web configuration: a Firebase-style object with an `apiKey`, and public keys beside it.

Dialect: the object's name and export form, the key case, the quote, the secret entries
(the Google `apiKey`, and sometimes a server key bundled by mistake) and the public
values that belong in a browser bundle and share their shapes: a publishable key, a
Sentry DSN's public key, a reCAPTCHA site key, an env placeholder.
"""

from __future__ import annotations

from redaction_pressure.corpus import values as v
from redaction_pressure.corpus import words as w
from redaction_pressure.corpus.dialect import Builder, Family, FamilyDialect
from redaction_pressure.corpus.document import Writer
from redaction_pressure.corpus.draw import HEX, URLSAFE
from redaction_pressure.corpus.families.common import housed

SENTRY_KEY = v.Format("public_key", "sentry_dsn", lambda d: d.chars(HEX, 32), HEX)
RECAPTCHA_SITE_KEY = v.Format("public_key", "recaptcha", lambda d: "6L" + d.chars(URLSAFE, 38), URLSAFE)


def draw(b: Builder) -> FamilyDialect:
    d = b.d
    case = d.pick(("camel", "lower_snake"))
    layout = {
        "name": d.pick(("firebaseConfig", "appConfig", "clientConfig", "publicRuntimeConfig")),
        "export": d.pick(("const", "export const", "window.__CONFIG__ =")),
        "quote": d.pick(('"', "'")),
        "case": case,
    }
    b.entry("kv", (v.GOOGLE_API_KEY, True), key=w.spell(("api", "key"), case))
    for _ in range(d.int(1, 2)):
        kind = housed(b, d.pick(("house_token", "stripe_key", "generic_secret", "house_token", "house_token")))
        fmt = b.secret_format(kind)
        subject = b.subject(kind, fmt)
        first = b.entry("kv", (fmt, True), key=b.claim((subject, *b.role(kind, fmt)), case))
        for public, role in b.publics(fmt) or [(b.public_like(fmt), b.public_role(fmt))]:
            b.entry("kv", (public, False), key=b.claim((subject, *role), case), group=first.group)
    for look in d.sample(("sentry", "recaptcha", "placeholder", "publishable"), d.int(1, 3)):
        if look == "sentry":
            b.entry(
                "sentry",
                (SENTRY_KEY, False),
                key=w.spell(("sentry", "dsn"), case),
                project=d.digits(7),
                org=d.digits(6),
            )
        elif look == "recaptcha":
            b.entry("kv", (RECAPTCHA_SITE_KEY, False), key=w.spell(("recaptcha", "site", "key"), case))
        elif look == "publishable":
            b.entry(
                "kv", (v.stripe_publishable("pk_live_"), False), key=w.spell(("stripe", "publishable", "key"), case)
            )
        else:
            name = d.pick(("NEXT_PUBLIC_MAPS_KEY", "VITE_ANALYTICS_KEY", "REACT_APP_PUSH_KEY"))
            text = f"process.env.{name}" if not name.startswith("VITE") else f"import.meta.env.{name}"
            b.entry("raw", (v.placeholder(text, "env"), False), key=w.spell(tuple(name.lower().split("_")[-2:]), case))
    return b.done(layout, keep=0.7)


def write(wr: Writer) -> None:
    d, layout = wr.d, wr.layout
    q = layout["quote"]
    project = f"{wr.world.org}-{wr.service()}-{d.digits(4)}"
    sender = d.digits(12)
    items: list[tuple] = [
        (w.spell(("auth", "domain"), layout["case"]), f"{q}{project}.firebaseapp.com{q}"),
        (w.spell(("project", "id"), layout["case"]), f"{q}{project}{q}"),
        (w.spell(("app", "id"), layout["case"]), f"{q}1:{sender}:web:{d.chars(HEX, 22)}{q}"),
        (w.spell(("storage", "bucket"), layout["case"]), f"{q}{project}.appspot.com{q}"),
    ]
    items = d.sample(items, d.int(2, 4))
    for entry in wr.entries:
        slot = entry.slots[0]
        if entry.form == "sentry":
            items.append(
                (
                    entry["key"],
                    f"{q}https://",
                    wr.fresh(slot),
                    f"@o{entry['org']}.ingest.sentry.io/{entry['project']}{q}",
                )
            )
        elif entry.form == "raw":
            items.append((entry["key"], wr.fresh(slot)))
        else:
            items.append((entry["key"], q, wr.fresh(slot), q))
    if d.chance(0.5):
        wr.line(
            f"// {d.pick(('Public client configuration', 'Injected at build time', 'Browser bundle settings'))} for {wr.world.org}."
        )
    wr.line(
        f"{layout['export']} {layout['name']} = {{"
        if layout["export"] != "window.__CONFIG__ ="
        else "window.__CONFIG__ = {"
    )
    for key, *value in d.shuffled(items):
        wr.line(f"  {key}: ", *value, ",")
    wr.line("};")


FAMILY = Family("web_config", draw, write, syntax="javascript", filename="config.js")
