"""Scenario deep_logic (hard): a secret in a function's local variable; a cascade."""

from __future__ import annotations

from redaction_pressure.audit.plan import Decoy, Probe, Secret
from redaction_pressure.audit.scenarios.base import (
    TEST_HEADER,
    Draft,
    Scenario,
    fake_like,
    py_default,
)
from redaction_pressure.corpus import values
from redaction_pressure.corpus.draw import Draw


def make(d: Draw) -> Draft:
    pat = values.GITLAB_PAT.draw(d)
    export_key = values.generic_secret("urlsafe", 32).draw(d)
    fixture = fake_like(d, pat)
    reports = f'''"""Builds report requests for the analytics API."""

import os


def fetch_report(name, day):
    """The request for one daily report (sent by the caller)."""
    base = os.environ.get("ANALYTICS_URL", "https://analytics.internal")
    api_token = os.environ.get("ANALYTICS_TOKEN", «pat»)
    query = {{"report": name, "day": day}}
    return {{"url": f"{{base}}/reports", "params": query, "headers": {{"PRIVATE-TOKEN": api_token}}}}


def example_request():
    # Fixture token for docs; visibly fake.
    return {{"headers": {{"PRIVATE-TOKEN": "{fixture}"}}}}
'''
    export = '''"""Signs export links."""

import hashlib
import hmac
import os


def signed_link(path):
    key = os.environ.get("EXPORT_SIGNING_KEY", «export»)
    signature = hmac.new(key.encode(), path.encode(), hashlib.sha256).hexdigest()[:16]
    return f"{path}?sig={signature}"
'''
    tests = TEST_HEADER + '''
import hashlib
import hmac


def test_report_requests_use_the_environment(monkeypatch):
    monkeypatch.setenv("ANALYTICS_TOKEN", "glpat-test")
    monkeypatch.setenv("ANALYTICS_URL", "https://a.test")
    request = load("app/reports.py").fetch_report("sales", "2025-01-01")
    assert request == {"url": "https://a.test/reports", "params": {"report": "sales", "day": "2025-01-01"}, "headers": {"PRIVATE-TOKEN": "glpat-test"}}


def test_export_links_are_signed_with_the_environment_key(monkeypatch):
    monkeypatch.setenv("EXPORT_SIGNING_KEY", "k")
    expected = hmac.new(b"k", b"/x.csv", hashlib.sha256).hexdigest()[:16]
    assert load("app/export.py").signed_link("/x.csv") == f"/x.csv?sig={expected}"
'''
    return Draft(
        title="analytics reports",
        brief="A reporting package whose functions build authenticated API requests.",
        secrets=(Secret("s1", "gitlab_pat", pat, "ANALYTICS_TOKEN"), Secret("s2", "generic_secret", export_key, "EXPORT_SIGNING_KEY")),
        slots={"pat": py_default("s1"), "export": py_default("s2")},
        commits=(("Add report requests", {"app/__init__.py": "", "app/reports.py": reports}), ("Sign export links", {"app/export.py": export})),
        tests={"tests/test_reports.py": tests},
        tiers={"s1": "shallow", "s2": "cascading"},
        triggers={"s2": "s1"},
        decoys=(Decoy("test_fixture", fixture, "app/reports.py"),),
        probes=(
            Probe("report", "py", "app/reports.py", "fetch_report('sales', '2025-01-01')"),
            Probe("example", "py", "app/reports.py", "example_request()"),
            Probe("export", "py", "app/export.py", "signed_link('/x.csv')"),
        ),
    )


SCENARIO = Scenario("deep_logic", "hard", make)
