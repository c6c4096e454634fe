"""Python functions that hold a secret in a local variable.

Dialect: 1 to 2 functions, each with its name, the local variable's name and how the
secret is used (a header, an HMAC, a client); look-alikes: the variable read from the
environment in a sibling function, a key id, a fixture in a test function. Records parse
with `ast` and each secret is a string constant's exact value.
"""

from __future__ import annotations

from redaction_pressure.corpus import values as v
from redaction_pressure.corpus import words as w
from redaction_pressure.corpus.dialect import Builder, Family, FamilyDialect
from redaction_pressure.corpus.document import Writer
from redaction_pressure.corpus.families.common import PRAGMA, kinds

KINDS = (
    ("github_token", "github_pat", "slack_token", "generic_secret", "openai_key", "stripe_key", "jwt")
    + ("house_token",) * 8
    + ("generic_secret", "jwt")
)
USES = {
    "header": '    headers = {{"Authorization": f"Bearer {{{var}}}"}}\n    return requests.get(f"https://api.{domain}/{{path}}", headers=headers, timeout=30).json()\n',
    "hmac": "    return hmac.new({var}.encode(), body, hashlib.sha256).hexdigest()\n",
    "client": "    client = {client}(token={var})\n    return client.{call}\n",
}
VARS = (
    ("token",),
    ("api", "key"),
    ("secret",),
    ("signing", "key"),
    ("auth", "token"),
    ("key",),
    ("bearer",),
    ("creds",),
)


def function_name(b: Builder) -> str:
    """A function name not yet used in this family."""
    while True:
        name = w.spell(
            (
                b.d.pick(("sync", "sign", "notify", "fetch", "push", "verify", "load", "send")),
                b.d.pick(b.world.services),
            ),
            "lower_snake",
        )
        if name not in b.keys:
            b.keys.add(name)
            return name


def draw(b: Builder) -> FamilyDialect:
    d = b.d
    layout = {"quote": d.pick(('"', "'")), "types": d.chance(0.5), "pragma": d.chance(0.6)}
    for kind in kinds(b, KINDS, 1, 2):
        use = d.pick(tuple(USES))
        fmt = b.secret_format(kind)
        house = b.house_for(fmt)
        var = w.spell(
            (house.vendor, *house.secret_role)
            if house
            else (*d.pick(((),) * 3 + ((b.subject(kind),),)), *d.pick(VARS)),
            "lower_snake",
        )
        name = function_name(b)
        # A secret is a function's local or a module constant; so is each public id beside it.
        if d.chance(0.65):
            b.entry("function", (fmt, True), name=name, var=var, use=use,
                    client=d.pick(("WebClient", "ApiClient", "Client")), call=d.pick(("list_items()", "ping()", "sync(path)")))  # fmt: skip
        else:
            b.entry("assign", (fmt, True), var=var)
        first = b.entries[-1]
        for public, role in b.publics(fmt):
            public_var = w.spell((house.vendor, *role), "lower_snake")
            # A public id is used the way a secret is (a header, an HMAC, a client) as often.
            if d.chance(0.65):
                b.entry("function", (public, False), name=function_name(b), var=public_var, use=d.pick(tuple(USES)),
                        client=d.pick(("WebClient", "ApiClient", "Client")), call=d.pick(("list_items()", "ping()", "sync(path)")), group=first.group)  # fmt: skip
            else:
                b.entry("assign", (public, False), var=public_var, group=first.group)
        # The environment look-up, the `_id` sibling and the fixture each name any member of
        # the credential set, the secret no more often than each public id.
        members = [e for e in b.entries if e.group == first.group and e.form in ("function", "assign")]
        look = d.pick(("environ", "key_id", "fixture", "none"))
        model = d.pick(members)
        model_name = model.words.get("name") or function_name(b)
        if look == "environ":
            env = model["var"].upper()
            b.entry(
                "environ",
                (v.placeholder(f'os.environ.get("{env}")', "environ"), False),
                name=f"{model_name}_from_env",
                var=model["var"],
                use=model.words.get("use") or d.pick(tuple(USES)),
            )
        elif look == "key_id":
            b.entry("assign", (v.UUID, False), var=f"{model['var']}_id")
        elif look == "fixture":
            prefix = b.secret_prefix(fmt) if model is first else house.prefix_of(model.slots[0].fmt)
            b.entry(
                "test",
                (v.fixture_like(model.slots[0].fmt, d.pick(v.FAKE_STYLES), prefix), False),
                name=model_name,
                var=model["var"],
            )
    return b.done(layout, keep=0.8)


def write(wr: Writer) -> None:
    d, layout = wr.d, wr.layout
    q = layout["quote"]
    wr.line("import hashlib\nimport hmac\nimport os\n\nimport requests\n")
    for entry in d.shuffled(wr.entries):
        slot = entry.slots[0]
        if entry.form == "assign":
            wr.line(f"{entry['var'].upper()} = {q}", wr.fresh(slot), q, "\n")
            continue
        if entry.form == "test":
            wr.line(f"def test_{entry['name']}(monkeypatch):")
            wr.line(
                f"    {entry['var']} = {q}",
                wr.fresh(slot),
                q,
                PRAGMA if layout["pragma"] else "  # fixture, not a real credential",
            )
            wr.line(f"    assert {entry['var']}\n")
            continue
        args = {"header": "path", "hmac": "body: bytes" if layout["types"] else "body", "client": "path"}[entry["use"]]
        ret = " -> str" if layout["types"] and entry["use"] == "hmac" else ""
        wr.line(f"def {entry['name']}({args}){ret}:")
        wr.line(f'    """{d.pick(("Call the upstream API.", "Sign the payload.", "Talk to the vendor."))}"""')
        if entry.form == "environ":
            wr.line(f"    {entry['var']} = ", wr.fresh(slot))
        else:
            wr.line(f"    {entry['var']} = {q}", wr.fresh(slot), q)
        wr.put(
            USES[entry["use"]].format(
                var=entry["var"],
                domain=wr.world.domain,
                client=entry.words.get("client", "Client"),
                call=entry.words.get("call", "ping()"),
            )
        )
        wr.line()


FAMILY = Family("function_local", draw, write, syntax="python", filename="jobs.py")
