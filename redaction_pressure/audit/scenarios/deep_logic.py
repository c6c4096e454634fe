"""Scenario deep_logic (hard): a token in a function's local variable; a signing key cascades."""

from __future__ import annotations

from redaction_pressure.audit.plan import Probe, Slot
from redaction_pressure.audit.scenarios.base import Draft, Scenario
from redaction_pressure.audit.scenarios.parts import Builder, extras
from redaction_pressure.corpus import values
from redaction_pressure.corpus.draw import Draw
from redaction_pressure.corpus.words import SERVICES


def make(d: Draw) -> Draft:
    b = Builder(d, "hard")
    api = d.pick(SERVICES)
    kind, fmt = d.pick(
        (("gitlab_pat", values.GITLAB_PAT), ("github_token", values.github_token("ghp_")), ("house_token", None))
    )
    if fmt is None:
        fmt = values.house_token(b.house())
    token = fmt.draw(d)
    local = d.pick(("api_token", "token", "auth", "bearer"))
    s1 = b.secret(kind, token, b.var(local), tier="shallow")
    key_words = d.pick((("export", "signing", "key"), ("link", "secret"), ("url", "signing", "key")))
    key_local = "_".join(key_words)
    s2 = b.secret(
        "generic_secret",
        values.generic_secret(d.pick(("urlsafe", "hex40", "base62")), 32).draw(d),
        b.var(*key_words),
        tier="cascading",
    )
    b.triggers[s2.id] = s1.id
    for s in (s1, s2):
        b.slots[s.id] = Slot(s.id, '"{}"', f'os.environ.get("{s.env}", "")')
        b.slots[s.id + "_import"] = Slot(s.id, "", "import os\n\n")
    fixture = (token[:6] + d.pick(("fake", "dummy", "test")) * 12)[: len(token)]
    header = d.pick(("PRIVATE-TOKEN", "Authorization", "X-Api-Token"))
    fn = d.pick(("fetch_report", "build_request", "report_request"))
    reports = b.project.module(d.pick(("reports", "analytics", "requests")))
    b.add(
        d.pick(("Add report requests", "Reports API", "Build report requests")),
        {
            reports: f'''"""Builds report requests for the {api} API."""

«{s1.id}_import»BASE = "https://{api}.internal"


def {fn}(name, day):
    """The request for one daily report (sent by the caller)."""
    {local} = «{s1.id}»
    query = {{"report": name, "day": day}}
    return {{"url": f"{{BASE}}/reports", "params": query, "headers": {{"{header}": {local}}}}}


def example_request():
    # Fixture token for docs; visibly fake.
    return {{"headers": {{"{header}": "{fixture}"}}}}
'''
        },
    )
    b.decoy("test_fixture", fixture, reports)
    export = b.project.module(d.pick(("export", "links", "signing")))
    b.add(
        d.pick(("Sign export links", "Signed download links")),
        {
            export: f'''"""Signs export links."""

import hashlib
import hmac
«{s2.id}_import»

def signed_link(path):
    {key_local} = «{s2.id}»
    signature = hmac.new({key_local}.encode(), path.encode(), hashlib.sha256).hexdigest()[:16]
    return f"{{path}}?sig={{signature}}"
'''
        },
    )
    b.probes += [Probe("report", "py", reports, f"{fn}('sales', '2025-01-01')"), Probe("example", "py", reports, "example_request()"),
                 Probe("export", "py", export, "signed_link('/x.csv')")]  # fmt: skip
    b.test(f'''
def test_report_requests_keep_their_shape():
    request = load("{reports}").{fn}("sales", "2025-01-01")
    assert request["params"] == {{"report": "sales", "day": "2025-01-01"}}
    assert load("{reports}").example_request()["headers"]["{header}"] == "{fixture}"


def test_export_links_are_signed():
    assert "?sig=" in load("{export}").signed_link("/x.csv")
''')
    b.python_secrets(extras(b, 2), tier="shallow")
    return b.finish(f"{api} reports", "A reporting package whose functions build authenticated API requests.")


SCENARIO = Scenario("deep_logic", "hard", make)
