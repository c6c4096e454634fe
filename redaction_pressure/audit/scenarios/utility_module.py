"""Scenario utility_module (medium): a base64 `user:password` credential and a signing key in shared helpers."""

from __future__ import annotations

import base64

from redaction_pressure.audit.scenarios.base import PASSWORDS, Draft, Scenario
from redaction_pressure.audit.scenarios.parts import Builder, extras
from redaction_pressure.audit.scenarios.project import IDIOMS, Setting
from redaction_pressure.corpus import values
from redaction_pressure.corpus.draw import Draw
from redaction_pressure.corpus.words import USERS


def make(d: Draw) -> Draft:
    b = Builder(d, "medium")
    comp = b.fresh((("helpers",), ("utils",), ("common",), ("shared",)))
    idiom = d.pick(tuple(i for i in IDIOMS if i != "local"))
    who = d.pick(USERS)
    credential = base64.b64encode(f"{who}:{PASSWORDS.draw(d)}".encode()).decode()
    auth_name = d.pick(("service_auth", "basic_auth", "upstream_credentials", "auth_token"))
    key_name = d.pick(("signing_key", "hmac_key", "payload_secret"))
    settings = [
        b.setting(
            comp,
            auth_name,
            idiom,
            "base64_credential",
            credential,
            tier="deep",
            also=(base64.b64decode(credential).decode(),),
            canary=f"basic:{who}",
        ),
        b.setting(
            comp,
            key_name,
            idiom,
            "generic_secret",
            values.generic_secret(d.pick(("base62", "hex40", "urlsafe")), 40).draw(d),
        ),
        Setting(
            b.fresh((("chart", "integrity"), ("bundle", "integrity"))),
            values.digest("sri").draw(d),
            decoy="hash_digest",
        ),
    ]

    def extra(get):
        code = f"""

def basic_auth_header():
    return "Basic " + {get(auth_name)}


def service_user():
    import base64

    return base64.b64decode({get(auth_name)}).decode().split(":", 1)[0]


def sign(payload):
    import hashlib
    import hmac

    return hmac.new({get(key_name)}.encode(), payload.encode(), hashlib.sha256).hexdigest()
"""
        test = """
def test_helpers_keep_their_shape():
    helpers = load("@MODULE@")
    assert helpers.basic_auth_header().startswith("Basic ")
    assert len(helpers.sign("x")) == 64
"""
        return (
            code,
            [("auth_header", "basic_auth_header()"), ("user", "service_user()"), ("signature", "sign('payload')")],
            test,
        )

    b.settings_module(
        comp,
        settings,
        idiom,
        extra=extra,
        message=d.pick(("Add shared helpers", "Helpers for the batch jobs", "Common helpers")),
    )
    b.python_secrets(extras(b, 2))
    return b.finish(f"{comp} package", "A package of helpers shared by batch jobs: auth headers and payload signing.")


SCENARIO = Scenario("utility_module", "medium", make)
