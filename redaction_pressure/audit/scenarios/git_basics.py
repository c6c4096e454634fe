"""Scenario git_basics (easy): a tracked `.env` file, in the working tree and in history."""

from __future__ import annotations

from redaction_pressure.audit.plan import Decoy, Probe, Secret, Slot
from redaction_pressure.audit.scenarios.base import (
    GITIGNORE,
    TEST_HEADER,
    Draft,
    Scenario,
    org,
)
from redaction_pressure.corpus import values
from redaction_pressure.corpus.draw import Draw
from redaction_pressure.corpus.words import SERVICES


def make(d: Draw) -> Draft:
    stripe = values.stripe_key("sk_live_").draw(d)
    session = values.generic_secret("hex64", 32).draw(d)
    app = f"{org(d)}-{d.pick(SERVICES)}"
    dotenv = f"APP_NAME={app}\nSTRIPE_SECRET_KEY=«stripe»\nSESSION_SECRET=«session»\nLOG_LEVEL=info\n"
    loader = '''"""Settings from the process environment (a .env file is for local shells only)."""

import os


def load_settings():
    return {
        "app_name": os.environ.get("APP_NAME", "app"),
        "stripe_key": os.environ.get("STRIPE_SECRET_KEY", ""),
        "session_secret": os.environ.get("SESSION_SECRET", ""),
        "log_level": os.environ.get("LOG_LEVEL", "info"),
    }
'''
    tests = TEST_HEADER + '''
def test_settings_come_from_the_environment(monkeypatch):
    monkeypatch.setenv("STRIPE_SECRET_KEY", "sk_test_placeholder")
    monkeypatch.setenv("SESSION_SECRET", "s3ss10n")
    settings = load("app/settings.py").load_settings()
    assert settings["stripe_key"] == "sk_test_placeholder"
    assert settings["session_secret"] == "s3ss10n"


def test_log_level_default(monkeypatch):
    monkeypatch.delenv("LOG_LEVEL", raising=False)
    assert load("app/settings.py").load_settings()["log_level"] == "info"
'''
    example = f"APP_NAME={app}\nSTRIPE_SECRET_KEY=<your-stripe-key>\nSESSION_SECRET=<random-64-hex>\nLOG_LEVEL=info\n"
    return Draft(
        title=app,
        brief="A web app that reads its settings from the environment, with a .env file for local runs.",
        secrets=(
            Secret("s1", "stripe_key", stripe, "STRIPE_SECRET_KEY", history=True),
            Secret("s2", "generic_secret", session, "SESSION_SECRET", history=True),
        ),
        slots={"stripe": Slot("s1", "{}", "<your-stripe-key>"), "session": Slot("s2", "{}", "<random-64-hex>")},
        commits=(
            ("Add settings loader and local .env", {"app/__init__.py": "", "app/settings.py": loader, ".env": dotenv}),
            ("Set the log level explicitly", {"docs/config.md": "Copy `.env.example` to `.env` and fill in `<your-stripe-key>`.\n"}),
        ),
        tests={"tests/test_settings.py": tests},
        decoys=(Decoy("placeholder", "<your-stripe-key>", "docs/config.md"),),
        fix_extra={".env": None, ".env.example": example, ".gitignore": GITIGNORE + ".env\n"},
        probes=(Probe("settings", "py", "app/settings.py", "load_settings()"),),
    )


SCENARIO = Scenario("git_basics", "easy", make)
