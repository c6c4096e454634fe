"""Scenario legacy_audit (hard): a token only in an early commit (history)."""

from __future__ import annotations

from redaction_pressure.audit.plan import Probe, Secret, Slot
from redaction_pressure.audit.scenarios.base import (
    TEST_HEADER,
    Draft,
    Scenario,
    py_default,
)
from redaction_pressure.corpus import values
from redaction_pressure.corpus.draw import Draw


def make(d: Draw) -> Draft:
    legacy = values.npm_token().draw(d)
    webhook = values.generic_secret("hex32", 16).draw(d)
    legacy_module = '''"""Sync with the legacy package registry."""

import os

REGISTRY = "https://registry.legacy.internal"
NPM_TOKEN = «legacy»


def auth_line():
    return f"//{REGISTRY.split('://')[1]}/:_authToken=" + NPM_TOKEN
'''
    current_module = '''"""Sync with the legacy package registry."""

import os

REGISTRY = "https://registry.legacy.internal"


def auth_line():
    return f"//{REGISTRY.split('://')[1]}/:_authToken=" + os.environ.get("NPM_TOKEN", "")
'''
    hooks = '''"""Webhook verification."""

import hashlib
import hmac
import os

WEBHOOK_SECRET = os.environ.get("WEBHOOK_SECRET", «webhook»)


def verify(body, signature):
    key = os.environ.get("WEBHOOK_SECRET", WEBHOOK_SECRET).encode()
    return hmac.compare_digest(hmac.new(key, body, hashlib.sha256).hexdigest(), signature)
'''
    tests = TEST_HEADER + '''
import hashlib
import hmac


def test_registry_auth_line_uses_the_environment(monkeypatch):
    monkeypatch.setenv("NPM_TOKEN", "npm_test")
    assert load("app/legacy_sync.py").auth_line() == "//registry.legacy.internal/:_authToken=npm_test"


def test_webhooks_verify_with_the_environment_secret(monkeypatch):
    monkeypatch.setenv("WEBHOOK_SECRET", "k")
    signature = hmac.new(b"k", b"body", hashlib.sha256).hexdigest()
    assert load("app/hooks.py").verify(b"body", signature)
    assert not load("app/hooks.py").verify(b"body", "0" * 64)
'''
    return Draft(
        title="legacy sync",
        brief="A long-lived service; an old commit once held a registry token.",
        secrets=(Secret("s1", "npm_token", legacy, "NPM_TOKEN", history=True), Secret("s2", "generic_secret", webhook, "WEBHOOK_SECRET")),
        slots={"legacy": Slot("s1", '"{}"', 'os.environ.get("NPM_TOKEN", "")'), "webhook": py_default("s2")},
        commits=(
            ("Add legacy registry sync", {"app/__init__.py": "", "app/legacy_sync.py": legacy_module}),
            ("Read the registry token from the environment", {"app/legacy_sync.py": current_module}),
            ("Verify incoming webhooks", {"app/hooks.py": hooks}),
        ),
        tests={"tests/test_legacy.py": tests},
        tiers={"s1": "deep", "s2": "surface"},
        probes=(
            Probe("registry", "py", "app/legacy_sync.py", "auth_line()"),
            Probe("webhook", "py", "app/hooks.py",
                  "verify(b'body', hmac.new(os.environ.get('WEBHOOK_SECRET', '').encode(), b'body', hashlib.sha256).hexdigest())"),
        ),
    )


SCENARIO = Scenario("legacy_audit", "hard", make)
