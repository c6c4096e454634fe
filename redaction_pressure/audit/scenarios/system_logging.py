"""Scenario system_logging (medium): a token in committed debug logs and in the client that logged it."""

from __future__ import annotations

from redaction_pressure.audit.scenarios.base import Draft, Scenario
from redaction_pressure.audit.scenarios.parts import Builder, extras
from redaction_pressure.audit.scenarios.project import IDIOMS, Setting
from redaction_pressure.corpus import values
from redaction_pressure.corpus.draw import Draw
from redaction_pressure.corpus.words import SERVICES


def make(d: Draw) -> Draft:
    b = Builder(d, "medium")
    service = d.pick(SERVICES)
    comp = b.fresh(((service,), (service, "api"), (service, "client")))
    idiom = d.pick(IDIOMS)
    kind, fmt = d.pick(
        (
            ("github_token", values.github_token("ghp_")),
            ("gitlab_pat", values.GITLAB_PAT),
            ("slack_token", values.slack_token("xoxb-")),
        )
    )
    name = d.pick(("api_token", "service_token", "bearer_token", "access_token"))
    token = b.setting(comp, name, idiom, kind, fmt.draw(d))
    s = token.secret  # surface where the logs hold it, shallow in the client module
    settings = [
        token,
        Setting("base_url", f"https://api.{service}.internal/v{d.int(1, 3)}"),
        Setting("timeout", str(d.int(5, 30))),
    ]

    def extra(get):
        fn = d.pick(("build_headers", "auth_headers", "request_headers"))
        code = f"""

def {fn}():
    return {{"Authorization": "Bearer " + {get(name)}, "Accept": "application/json"}}
"""
        test = f"""
def test_{fn}_accept_json():
    assert load("@MODULE@").{fn}()["Accept"] == "application/json"
"""
        return code, [(fn, f"{fn}()")], test

    where = b.settings_module(comp, settings, idiom, extra=extra)
    b.path_tiers[(s.id, where)] = "shallow"
    log = d.pick(("logs/debug.log", "var/log/app.log", f"support/{service}-outage.log", "logs/requests.log"))
    ids = [values.UUID.draw(d) for _ in range(d.int(2, 5))]
    style = d.pick(("kv", "json", "plain"))
    lines = []
    for i, rid in enumerate(ids):
        auth = (
            b.slot(s, "Authorization: Bearer {}", "Authorization: Bearer [REDACTED]")
            if i % 2 == 0
            else "Accept: application/json"
        )
        if style == "json":
            lines.append(
                f'{{"ts": "2025-03-0{i + 1}T10:1{i}:00Z", "level": "DEBUG", "request_id": "{rid}", "header": "{auth}"}}'
            )
        elif style == "kv":
            lines.append(f"2025-03-0{i + 1}T10:1{i}:00Z DEBUG request_id={rid} GET /{service} {auth}")
        else:
            lines.append(f"[2025-03-0{i + 1} 10:1{i}:00] debug {rid} -> {auth}")
        b.decoy("uuid", rid, log)
    b.add(
        d.pick(("Keep debug logs for the outage report", "Attach request logs", "Add logs from the incident")),
        {log: "\n".join(lines) + "\n"},
    )
    b.python_secrets(extras(b, 1), tier="shallow")
    return b.finish(f"{service} client", f"A client for the {service} API whose debug logs were committed.")


SCENARIO = Scenario("system_logging", "medium", make)
