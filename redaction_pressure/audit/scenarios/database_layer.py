"""Scenario database_layer (easy): a password inside a database DSN, read by the database layer."""

from __future__ import annotations

from redaction_pressure.audit.scenarios.base import PASSWORDS, Draft, Scenario
from redaction_pressure.audit.scenarios.parts import Builder, extras
from redaction_pressure.audit.scenarios.project import IDIOMS, Setting
from redaction_pressure.corpus import values
from redaction_pressure.corpus.draw import HEX, Draw
from redaction_pressure.corpus.words import DATABASES, USERS


def make(d: Draw) -> Draft:
    b = Builder(d, "easy")
    comp = b.fresh((("database",), ("db",), ("storage",), ("postgres",)))
    idiom = d.pick(IDIOMS)
    db, who = d.pick(DATABASES), d.pick(USERS)
    scheme, port = d.pick((("postgresql", 5432), ("mysql", 3306), ("postgres", 5432)))
    host = f"{db}-{d.pick(('db', 'primary', 'rds'))}.internal"
    dsn = f"{scheme}://{who}:{{}}@{host}:{port}/{db}"
    name = d.pick(("database_url", "dsn", "db_url", "connection_url"))
    setting = b.setting(comp, name, idiom, "dsn_password", PASSWORDS.draw(d), wrap=dsn, canary=dsn)
    settings = [
        setting,
        Setting("pool_size", str(d.int(2, 20))),
        Setting(b.fresh((("schema", "sha256"), ("dump", "digest"))), d.chars(HEX, 64), decoy="hash_digest"),
    ]
    if d.chance(0.5):
        settings.append(Setting("replica_id", values.UUID.draw(d), decoy="uuid"))

    def extra(get):
        fn = d.pick(("connection_params", "driver_kwargs", "connect_args"))
        code = f'''

def {fn}():
    """The parts of the DSN a driver needs."""
    from urllib.parse import urlsplit

    url = urlsplit({get(name)})
    return {{"host": url.hostname, "port": url.port or {port}, "user": url.username, "password": url.password, "dbname": url.path.lstrip("/")}}
'''
        test = f"""
def test_{fn}_parse_the_dsn():
    params = load("@MODULE@").{fn}()
    assert set(params) == {{"host", "port", "user", "password", "dbname"}}
"""
        return code, [(fn, f"{fn}()")], test

    b.settings_module(
        comp,
        settings,
        idiom,
        extra=extra,
        message=d.pick(("Add the database layer", "Connect to the database", "Database settings")),
    )
    placeholder = d.pick(("${DB_PASSWORD}", "<db-password>", "%DB_PASSWORD%"))
    b.decoy("placeholder", placeholder, "docs/database.md")
    b.add(
        "Explain local database setup",
        {
            "docs/database.md": f"Point the service at a local database, e.g. `{scheme}://user:{placeholder}@localhost/{db}`.\n"
        },
    )
    b.python_secrets(extras(b, 1))
    return b.finish(f"{db} service", "A service whose database layer builds its connection from a DSN.")


SCENARIO = Scenario("database_layer", "easy", make)
