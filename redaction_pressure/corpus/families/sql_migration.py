"""SQL migrations that create or alter database users with a password literal.

Dialect: PostgreSQL or MySQL, 1 to 2 roles with their statement form (`CREATE USER ...
WITH PASSWORD '...'`, `ALTER ROLE ... PASSWORD '...'`, `IDENTIFIED BY '...'`), and
look-alikes in the same clause: a psql variable (`:'reader_password'`), a pre-hashed
SCRAM or md5 password, a commit in the header. The span is the literal's content.
"""

from __future__ import annotations

from redaction_pressure.corpus import values as v
from redaction_pressure.corpus import words as w
from redaction_pressure.corpus.dialect import Builder, Family, FamilyDialect
from redaction_pressure.corpus.document import Writer

ROLES = (
    "reporting",
    "etl_writer",
    "readonly",
    "metabase",
    "replicator",
    "app_rw",
    "analyst",
    "backup_agent",
    "grafana",
)
POSTGRES = (
    "CREATE USER {role} WITH PASSWORD ",
    "CREATE ROLE {role} WITH LOGIN PASSWORD ",
    "ALTER ROLE {role} WITH PASSWORD ",
    "ALTER USER {role} PASSWORD ",
)
MYSQL = (
    "CREATE USER '{role}'@'%' IDENTIFIED BY ",
    "ALTER USER '{role}'@'localhost' IDENTIFIED BY ",
    "CREATE USER IF NOT EXISTS '{role}'@'10.%' IDENTIFIED BY ",
)


def draw(b: Builder) -> FamilyDialect:
    d = b.d
    dialect = d.pick(("postgres", "mysql"))
    layout = {"dialect": dialect, "keyword_case": d.pick(("upper", "upper", "lower"))}
    statements = POSTGRES if dialect == "postgres" else MYSQL
    roles = d.sample(ROLES, 4)
    secret = b.secret_format("sql_password")
    for role in roles[: d.int(1, 2)]:
        b.entry("password", (secret, True), statement=d.pick(statements).format(role=role), role=role)
    role = roles[3]
    look = d.pick(("variable", "hash")) if dialect == "postgres" else "hash"
    if look == "variable":
        b.entry(
            "password",
            (v.placeholder(f":'{role}_password'", "psql_var"), False),
            statement=d.pick(statements).format(role=role),
            role=role,
            quoted=False,
        )
    elif dialect == "postgres":
        b.entry(
            "password",
            (v.digest(d.pick(("scram", "md5"))), False),
            statement=d.pick(statements).format(role=role),
            role=role,
        )
    else:
        b.entry(
            "mysql_hash",
            (
                v.Format(
                    "hash_digest",
                    "mysql_native",
                    lambda dd: "*" + dd.chars("0123456789ABCDEF", 40),
                    "0123456789ABCDEF*",
                ),
                False,
            ),
            role=role,
        )
    if d.chance(0.6):
        b.entry(
            "comment",
            (v.COMMIT_SHA, False),
            text=d.pick(("generated from commit ", "schema at commit ", "see commit ")),
        )
    return b.done(layout, keep=0.7)


def write(wr: Writer) -> None:
    d, layout = wr.d, wr.layout
    up = layout["keyword_case"] == "upper"
    kw = (lambda s: s) if up else str.lower
    wr.line(
        f"-- {d.int(1, 400):04d}_{d.pick(('create', 'rotate', 'grant'))}_{d.pick(('roles', 'users', 'access'))}.sql"
    )
    for entry in wr.entries:
        if entry.form == "comment":
            wr.line(f"-- {entry['text']}", wr.fresh(entry.slots[0]))
    wr.line(kw("BEGIN;") if layout["dialect"] == "postgres" else kw("START TRANSACTION;"))
    wr.line()
    db = d.pick(w.DATABASES)
    for entry in d.shuffled([e for e in wr.entries if e.form != "comment"]):
        role = entry["role"]
        if entry.form == "mysql_hash":
            wr.line(
                kw(f"CREATE USER '{role}'@'%' IDENTIFIED WITH mysql_native_password AS '"),
                wr.fresh(entry.slots[0]),
                "';",
            )
        else:
            q = "" if entry.words.get("quoted") is False else "'"
            statement = entry["statement"]
            wr.line(_keywords(statement, up), q, wr.fresh(entry.slots[0]), q, ";")
        if layout["dialect"] == "postgres":
            wr.line(kw(f"GRANT CONNECT ON DATABASE {db} TO {role};"))
            wr.line(kw(f"GRANT SELECT ON ALL TABLES IN SCHEMA public TO {role};"))
        else:
            wr.line(kw(f"GRANT SELECT, SHOW VIEW ON {db}.* TO '{role}'@'%';"))
        wr.line()
    wr.line(kw("COMMIT;"))


def _keywords(statement: str, upper: bool) -> str:
    if upper:
        return statement
    return " ".join(part if "'" in part or part.islower() else part.lower() for part in statement.split(" "))


FAMILY = Family("sql_migration", draw, write, syntax="sql", filename="migration.sql")
