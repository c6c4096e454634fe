"""Python settings modules holding cloud keys: constants, a dict, or a settings class.

Dialect: the layout (module constants, a credentials dict, a settings class), the quote
character, the key case, an AWS credentials entry (an `AKIA` pair, or an `ASIA` key with
its session token), and 1 to 3 credential clusters. Placeholders are code
(`os.environ["NAME"]`), not strings. Records parse with `ast`, and each secret is a
string constant's exact value.
"""

from __future__ import annotations

from redaction_pressure.corpus import values as v
from redaction_pressure.corpus import words as w
from redaction_pressure.corpus.dialect import Builder, Family, FamilyDialect
from redaction_pressure.corpus.document import Writer
from redaction_pressure.corpus.families.common import ALLOW_MARKERS, cluster, kinds, note

KINDS = (
    ("google_api_key", "stripe_key", "openai_key", "generic_secret", "generic_secret")
    + ("house_token",) * 10
    + ("generic_secret", "jwt")
)
AWS_WORDS = {
    "id": ("aws", "access", "key", "id"),
    "secret": ("aws", "secret", "access", "key"),
    "session": ("aws", "session", "token"),
}


def draw(b: Builder) -> FamilyDialect:
    d = b.d
    style = d.pick(("constants", "dict", "class"))
    case = "upper_snake" if style == "constants" else d.pick(("lower_snake", "upper_snake"))
    layout = {
        "style": style,
        "quote": d.pick(('"', "'")),
        "name": d.pick(("SETTINGS", "CONFIG", "CREDENTIALS", "Settings")),
        "pragma": d.chance(0.6),
        "marker": d.pick(ALLOW_MARKERS),
    }
    share = b.world.level.house_share
    # At a level with a house share, as often as it says, the module holds no AWS pair.
    if d.chance(0.75) and not (share and d.chance(share)):
        session = d.chance(0.35)
        slots = [(v.aws_access_key_id("ASIA" if session else "AKIA"), True), (v.AWS_SECRET, True)]
        if session:
            slots.append((v.AWS_SESSION_TOKEN, True))
        b.entry("aws", *slots, keys=[w.spell(AWS_WORDS[k], case) for k in ("id", "secret", "session")[: len(slots)]])
        if d.chance(0.5):
            b.entry("comment", (d.pick((v.AWS_EXAMPLE_KEY_ID, v.AWS_EXAMPLE_SECRET)), False),
                    text=d.pick(("# Shape of the credentials, from the AWS docs: ", "# e.g. ", "# example value: ")))  # fmt: skip
    for kind in kinds(b, KINDS, *(2, 3) if not b.entries else (1, 3)):
        cluster(b, kind, case, placeholder='os.environ["{name}"]')
    return b.done(layout)


def write(wr: Writer) -> None:
    d, layout = wr.d, wr.layout
    q = layout["quote"]
    style = layout["style"]
    service = wr.service()
    wr.line(f'"""{d.pick(("Settings", "Configuration", "Runtime settings"))} for the {service} service."""')
    wr.line()
    wr.line("import os")
    wr.line()
    items: list[tuple] = [
        (_key(layout, "debug"), ("False", "True")[d.int(0, 1)]),
        (_key(layout, "region"), f"{q}{d.pick(w.REGIONS)}{q}"),
        (_key(layout, "timeout_seconds"), str(d.pick((5, 10, 30)))),
        (_key(layout, "bucket"), f"{q}{wr.world.org}-{service}-{d.pick(('exports', 'backups', 'media'))}{q}"),
    ]
    items = d.sample(items, d.int(2, 4))
    comments = []
    for entry in wr.entries:
        if entry.form == "comment":
            comments.append((entry["text"], wr.fresh(entry.slots[0])))
        elif entry.form == "aws":
            for key, slot in zip(entry["keys"], entry.slots, strict=True):
                items.append((_key(layout, key), q, wr.fresh(slot), q))
        else:
            slot = entry.slots[0]
            if slot.kind == "placeholder":
                items.append((_key(layout, entry["key"]), wr.fresh(slot)))
            else:
                comment = note(entry, layout)
                items.append(
                    (
                        _key(layout, entry["key"]),
                        q,
                        wr.fresh(slot),
                        q,
                        ("," if style == "dict" else "") + comment if comment else "",
                    )
                )
    items = d.shuffled(items)
    for comment in comments:
        wr.line(*comment)
    if style == "dict":
        wr.line(f"{layout['name'].upper()} = {{")
        for key, *value in items:
            wr.line(f"    {key}: ", *value, "" if isinstance(value[-1], str) and "#" in value[-1] else ",")
        wr.line("}")
    elif style == "class":
        wr.line(f"class {layout['name'].capitalize()}:")
        for key, *value in items:
            wr.line(f"    {key} = ", *value)
    else:
        for key, *value in items:
            wr.line(f"{key} = ", *value)


def _key(layout: dict, name: str) -> str:
    if layout["style"] == "dict":
        return f"{layout['quote']}{name.lower() if name.isupper() else name}{layout['quote']}"
    if layout["style"] == "constants":
        return name.upper()
    return name


FAMILY = Family("python_settings", draw, write, syntax="python", filename="settings.py")
