"""Scenario microservices (hard): one key in five services; a payments key cascades."""

from __future__ import annotations

from redaction_pressure.audit.plan import Probe, Secret
from redaction_pressure.audit.scenarios.base import (
    TEST_HEADER,
    Draft,
    Scenario,
    py_default,
)
from redaction_pressure.corpus import values
from redaction_pressure.corpus.draw import Draw
from redaction_pressure.corpus.words import SERVICES


def make(d: Draw) -> Draft:
    shared = values.generic_secret("hex40", 20).draw(d)
    stripe = values.stripe_key("rk_live_").draw(d)
    names = d.sample(SERVICES, 5)
    service = '''"""Settings of the «name» service."""

import os

SERVICE_NAME = "«name»"
INTERNAL_API_KEY = os.environ.get("INTERNAL_API_KEY", «key»)


def auth_headers():
    return {"X-Internal-Key": os.environ.get("INTERNAL_API_KEY", INTERNAL_API_KEY), "X-Service": SERVICE_NAME}
'''
    files = {f"services/{n}/config.py": service.replace("«name»", n) for n in names}
    billing = names[1]
    payments = f'''"""Payment provider settings of the {billing} service."""

import os

PROVIDER_KEY = os.environ.get("PAYMENTS_RESTRICTED_KEY", «stripe»)


def provider_headers():
    return {{"Authorization": "Bearer " + os.environ.get("PAYMENTS_RESTRICTED_KEY", PROVIDER_KEY)}}
'''
    tests = TEST_HEADER + f'''
SERVICES = {names!r}


@pytest.mark.parametrize("name", SERVICES)
def test_each_service_reads_the_shared_key(monkeypatch, name):
    monkeypatch.setenv("INTERNAL_API_KEY", "test-key")
    headers = load(f"services/{{name}}/config.py").auth_headers()
    assert headers == {{"X-Internal-Key": "test-key", "X-Service": name}}


def test_payments_read_the_environment(monkeypatch):
    monkeypatch.setenv("PAYMENTS_RESTRICTED_KEY", "rk_test_x")
    assert load("services/{billing}/payments.py").provider_headers() == {{"Authorization": "Bearer rk_test_x"}}
'''
    path_tiers = {("s1", f"services/{n}/config.py"): "shallow" for n in names[1:]}
    return Draft(
        title="service mesh",
        brief=f"Five services ({', '.join(names)}) that call each other with one shared internal key.",
        secrets=(Secret("s1", "generic_secret", shared, "INTERNAL_API_KEY"), Secret("s2", "stripe_key", stripe, "PAYMENTS_RESTRICTED_KEY")),
        slots={"key": py_default("s1"), "stripe": py_default("s2")},
        commits=(
            ("Add the services", files),
            (f"Add payments to {billing}", {f"services/{billing}/payments.py": payments}),
        ),
        tests={"tests/test_services.py": tests},
        tiers={"s1": "surface", "s2": "cascading"},
        triggers={"s2": "s1"},
        path_tiers=path_tiers,
        probes=(
            *(Probe(f"{n}_headers", "py", f"services/{n}/config.py", "auth_headers()") for n in names),
            Probe("payments", "py", f"services/{billing}/payments.py", "provider_headers()"),
        ),
    )


SCENARIO = Scenario("microservices", "hard", make)
