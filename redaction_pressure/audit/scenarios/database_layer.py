"""Scenario database_layer (easy): a password inside a database DSN."""

from __future__ import annotations

from redaction_pressure.audit.plan import Decoy, Probe, Secret, Slot
from redaction_pressure.audit.scenarios.base import (
    PASSWORDS,
    TEST_HEADER,
    Draft,
    Scenario,
)
from redaction_pressure.corpus.draw import HEX, Draw
from redaction_pressure.corpus.words import USERS


def make(d: Draw) -> Draft:
    password = PASSWORDS.draw(d)
    user, db = d.pick(USERS), d.pick(("orders", "ledger", "inventory", "billing"))
    host = f"{db}-db.internal"
    migration_sha = d.chars(HEX, 64)
    module = f'''"""Database layer: the connection settings and a tiny parser."""

import os
from urllib.parse import urlsplit

DATABASE_URL = os.environ.get("DATABASE_URL", «dsn»)
# Integrity of the schema dump shipped with the image (sha256).
SCHEMA_SHA256 = "{migration_sha}"


def connection_params():
    """The parts of DATABASE_URL a driver needs."""
    url = urlsplit(DATABASE_URL)
    return {{
        "host": url.hostname,
        "port": url.port or 5432,
        "user": url.username,
        "password": url.password,
        "dbname": url.path.lstrip("/"),
    }}
'''
    tests = TEST_HEADER + '''
def test_connection_parameters_come_from_the_environment(monkeypatch):
    monkeypatch.setenv("DATABASE_URL", "postgresql://tester:pw@localhost:5433/testdb")
    params = load("app/db.py").connection_params()
    assert params == {"host": "localhost", "port": 5433, "user": "tester", "password": "pw", "dbname": "testdb"}


def test_default_port(monkeypatch):
    monkeypatch.setenv("DATABASE_URL", "postgresql://tester@db/x")
    assert load("app/db.py").connection_params()["port"] == 5432
'''
    return Draft(
        title=f"{db} service",
        brief="A service whose database layer builds its connection from a DSN.",
        secrets=(Secret("s1", "dsn_password", password, "DATABASE_URL", canary=f"postgresql://{user}:{{}}@{host}:5432/{db}"),),
        slots={"dsn": Slot("s1", f'"postgresql://{user}:{{}}@{host}:5432/{db}"', f'"postgresql://{user}@{host}:5432/{db}"')},
        commits=(
            ("Add the database layer", {"app/__init__.py": "", "app/db.py": module}),
            ("Explain local setup", {"docs/setup.md": "Set DATABASE_URL, e.g. `postgresql://user:${DB_PASSWORD}@localhost/app`.\n"}),
        ),
        tests={"tests/test_db.py": tests},
        decoys=(Decoy("placeholder", "${DB_PASSWORD}", "docs/setup.md"), Decoy("hash_digest", migration_sha, "app/db.py")),
        probes=(Probe("connection", "py", "app/db.py", "connection_params()"),),
    )


SCENARIO = Scenario("database_layer", "easy", make)
