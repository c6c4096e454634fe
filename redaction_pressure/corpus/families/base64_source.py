"""Source files that keep a base64-encoded `user:password` credential, in Python or JavaScript.

Dialect: the language, the variable names and how the credential is used (a Basic
header, a decode call); beside it, base64 look-alikes that are public: a pinned
subresource-integrity hash, an encoded public key, a vendored commit. Records parse
(`ast` or a JavaScript parser) and each secret is a string literal's exact value.
"""

from __future__ import annotations

from redaction_pressure.corpus import values as v
from redaction_pressure.corpus import words as w
from redaction_pressure.corpus.dialect import Builder, Family, FamilyDialect
from redaction_pressure.corpus.document import Writer

NAMES = (
    ("auth",),
    ("basic", "auth"),
    ("credentials",),
    ("legacy", "auth"),
    ("service", "creds"),
    ("api", "login"),
    ("upstream", "auth"),
)


def draw(b: Builder) -> FamilyDialect:
    d = b.d
    lang = d.pick(("python", "javascript"))
    case = d.pick(("upper_snake", "lower_snake")) if lang == "python" else d.pick(("upper_snake", "camel"))
    layout = {"lang": lang, "case": case, "quote": d.pick(('"', "'"))}
    for names in d.sample(NAMES, d.int(1, 2)):
        prefix = d.pick(("", "_")) if lang == "python" else ""
        b.entry(
            "credential",
            (b.secret_format("base64_credential"), True),
            name=prefix + w.spell(names, case),
            words=names,
            use=d.pick(("header", "decode")),
        )
    for look in d.sample(("integrity", "public", "commit", "hash"), d.int(1, 3)):
        if look == "integrity":
            b.entry("assign", (v.digest("sri"), False), name=w.spell(("bundle", "integrity"), case))
        elif look == "public":
            b.entry(
                "assign",
                (v.SPKI_BASE64, False),
                name=w.spell((d.pick(("verify", "signing", "upstream")), "public", "key"), case),
            )
        elif look == "hash":
            b.entry("assign", (v.digest("hex64"), False), name=w.spell(("auth", "sha256"), case))
        else:
            b.entry(
                "comment", (v.COMMIT_SHA, False), text=d.pick(("vendored from upstream commit ", "copied from commit "))
            )
    return b.done(layout, keep=0.7)


def write(wr: Writer) -> None:
    d, layout = wr.d, wr.layout
    q = layout["quote"]
    py = layout["lang"] == "python"
    c = "#" if py else "//"
    service = wr.service()
    url = f"https://{service}.{wr.world.domain}/api"
    wr.line("import base64\n\nimport requests\n" if py else 'const axios = require("axios");\n')
    uses = []
    for entry in d.shuffled(wr.entries):
        slot = entry.slots[0]
        if entry.form == "comment":
            wr.line(f"{c} {entry['text']}", wr.fresh(slot))
            continue
        name = entry["name"]
        if d.chance(0.4):
            wr.line(
                f"{c} {d.pick(('Basic auth for the legacy API (user:password, base64).', 'Kept encoded so it does not show up in grep.', 'Shared with the batch jobs.'))}"
            )
        wr.line(f"{name} = " if py else f"const {name} = ", q, wr.fresh(slot), q, "" if py else ";")
        if entry.form == "credential":
            uses.append(entry)
    wr.line()
    for entry in uses:
        name = entry["name"]
        fn = w.spell(("fetch", "with", *entry["words"]), "lower_snake" if py else "camel")
        if py and entry["use"] == "header":
            wr.line(
                f'def {fn}(path):\n    return requests.get(f"{url}/{{path}}", headers={{"Authorization": "Basic " + {name}}}, timeout=10).json()\n'
            )
        elif py:
            wr.line(
                f'def {fn}():\n    user, password = base64.b64decode({name}).decode().split(":", 1)\n    return requests.get("{url}", auth=(user, password), timeout=10)\n'
            )
        elif entry["use"] == "header":
            wr.line(
                f"async function {fn}(path) {{\n  return axios.get(`{url}/${{path}}`, {{ headers: {{ Authorization: `Basic ${{{name}}}` }} }});\n}}\n"
            )
        else:
            wr.line(
                f'function {fn}() {{\n  const [user, password] = Buffer.from({name}, "base64").toString("utf8").split(":");\n  return axios.get("{url}", {{ auth: {{ username: user, password }} }});\n}}\n'
            )


FAMILY = Family("base64_source", draw, write, syntax="python|javascript", filename="client")
