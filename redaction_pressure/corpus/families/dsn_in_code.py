"""Connection strings in Python or JavaScript code; the span is the password alone.

Dialect: the language, and 1 to 2 connection entries, each with its own client call
(SQLAlchemy, redis, pymongo, pika; pg, ioredis, mongoose, knex), scheme, user, port and
query string, plus look-alikes: the same URL built from a placeholder, a test database
with a visibly fake password, a password-file reference, a pinned commit.
"""

from __future__ import annotations

from redaction_pressure.corpus import values as v
from redaction_pressure.corpus import words as w
from redaction_pressure.corpus.dialect import Builder, Family, FamilyDialect
from redaction_pressure.corpus.document import Writer

CLIENTS = {
    "python": (
        ("postgresql+psycopg", 5432, 'engine = create_engine(\n    "{url}",\n    pool_pre_ping=True,\n)'),
        ("postgresql", 5432, 'conn = psycopg.connect("{url}")'),
        ("redis", 6379, 'cache = redis.Redis.from_url("{url}", decode_responses=True)'),
        ("mongodb+srv", 0, 'client = MongoClient("{url}")'),
        ("amqp", 5672, 'params = pika.URLParameters("{url}")'),
        ("mysql+pymysql", 3306, 'engine = create_engine("{url}", pool_size=5)'),
    ),
    "javascript": (
        ("postgres", 5432, 'const pool = new Pool({{ connectionString: "{url}" }});'),
        ("redis", 6379, 'const redis = new Redis("{url}");'),
        ("mongodb+srv", 0, 'mongoose.connect("{url}");'),
        ("mysql", 3306, 'const db = knex({{ client: "mysql2", connection: "{url}" }});'),
    ),
}
PREAMBLE = {
    "python": "import os\n\nimport psycopg\nimport redis\nfrom pymongo import MongoClient\nfrom sqlalchemy import create_engine\n",
    "javascript": 'const { Pool } = require("pg");\nconst Redis = require("ioredis");\nconst mongoose = require("mongoose");\nconst knex = require("knex");\n',
}


def draw(b: Builder) -> FamilyDialect:
    d = b.d
    lang = d.pick(("python", "javascript"))
    comment = "#" if lang == "python" else "//"
    layout = {"lang": lang, "comment": comment}
    secret = b.secret_format("dsn_password")
    for client in d.sample(CLIENTS[lang], d.int(1, 2)):
        scheme, port, call = client
        user = d.pick(b.world.users)
        host = (
            f"{d.pick(b.world.services)}-{d.pick(('db', 'primary', 'cache', 'mq'))}.{b.world.domain}"
            if port
            else f"cluster0.{d.pick(w.ORGS)}{d.digits(3)}.mongodb.net"
        )
        tail = f"{host}{f':{port}' if port else ''}/{d.pick(w.DATABASES)}{d.pick(('', '?sslmode=require', '?retryWrites=true&w=majority', '?connect_timeout=10'))}"
        before, after = call.replace("{{", "{").replace("}}", "}").split("{url}")
        b.entry("dsn", (secret, True), before=before + f"{scheme}://{user}:", after="@" + tail + after)
        look = d.pick(("placeholder", "fixture", "reference", "commit"))
        if look == "placeholder":
            text = "${DB_PASSWORD}" if lang == "javascript" else "%(password)s"
            b.entry(
                "dsn",
                (v.placeholder(text, "template"), False),
                before=f"{comment} template: {scheme}://{user}:",
                after="@" + tail,
            )
        elif look == "fixture":
            b.entry(
                "dsn",
                (b.fixture_like(secret), False),
                before=f"{comment} the test suite uses {scheme}://test:",
                after=f"@localhost/test_{d.pick(w.DATABASES)}",
            )
        elif look == "reference":
            suffix, ref = b.reference(user, (user, "password"))
            b.entry("ref", (ref, False), key=w.spell((user, "password", *suffix), "upper_snake"))
        else:
            b.entry(
                "commit",
                (v.COMMIT_SHA, False),
                text=d.pick(("schema pinned to commit ", "migrations at commit ", "generated from commit ")),
            )
    return b.done(layout, keep=0.75)


def write(wr: Writer) -> None:
    d, layout = wr.d, wr.layout
    wr.line(PREAMBLE[layout["lang"]])
    c = layout["comment"]
    for entry in d.shuffled(wr.entries):
        slot = entry.slots[0]
        if entry.form == "commit":
            wr.line(f"{c} {entry['text']}", wr.fresh(slot))
        elif entry.form == "ref":
            if layout["lang"] == "python":
                wr.line(f'{entry["key"].lower()} = os.environ.get("{entry["key"]}", "', wr.fresh(slot), '")')
            else:
                wr.line(
                    f'const {w.spell(entry["key"].lower().split("_"), "camel")} = process.env.{entry["key"]} || "',
                    wr.fresh(slot),
                    '";',
                )
        else:
            wr.line(entry["before"], wr.fresh(slot), entry["after"])
        wr.line()
    if layout["lang"] == "javascript":
        wr.line("module.exports = { ready: true };")


FAMILY = Family("dsn_in_code", draw, write, syntax="python|javascript", filename="db")
