"""Scenario frontend_config (easy): a browser API key in a client-side JavaScript config."""

from __future__ import annotations

from redaction_pressure.audit.plan import Probe
from redaction_pressure.audit.scenarios.base import Draft, Scenario
from redaction_pressure.audit.scenarios.parts import Builder, extras
from redaction_pressure.audit.scenarios.project import split_camel
from redaction_pressure.corpus import values
from redaction_pressure.corpus.draw import HEX, Draw


def make(d: Draw) -> Draft:
    b = Builder(d, "easy")
    web = d.pick(("web/src", "frontend/src", "client/src", "ui/app", "static/js"))
    name = d.pick(("firebase", "config", "settings", "client-config", "env"))
    export = d.pick(("firebaseConfig", "appConfig", "clientConfig", "publicConfig"))
    key_name = d.pick(("apiKey", "browserKey", "mapsKey"))
    project = f"{b.project.package.replace('_', '-')}-{d.digits(4)}"
    app_id = f"1:{d.digits(12)}:web:{d.chars(HEX, 22)}"
    s = b.secret("google_api_key", values.GOOGLE_API_KEY.draw(d), b.var(*split_camel(key_name)))
    key_slot = b.slot(s, '"{}"', f"process.env.{s.env}")
    path = f"{web}/{name}.js"
    comment = d.pick(
        (
            "// Client-side configuration, bundled into the web app.",
            "/* Public settings of the browser client. */",
            "// Generated once from the console; edit by hand.",
        )
    )
    client = f'''{comment}
export const {export} = {{
  {key_name}: {key_slot},
  authDomain: "{project}.firebaseapp.com",
  projectId: "{project}",
  appId: "{app_id}",
}};
'''
    b.decoy("identifier", app_id, path)
    files = {path: client}
    b.probes.append(Probe("client_config", "js", path, export))
    if d.chance(0.7):
        fixture = (s.value[:6] + d.pick(("fake", "dummy", "test")) * 12)[: len(s.value)]
        mocks = f"{web}/{d.pick(('mocks', 'fixtures', 'stories'))}.js"
        files[mocks] = (
            f'// Test fixture for the component stories; not a real key.\nexport const mockConfig = {{ {key_name}: "{fixture}", projectId: "demo-project" }};\n'
        )
        b.decoy("test_fixture", fixture, mocks)
        b.probes.append(Probe("mocks", "js", mocks, "mockConfig"))
    server = b.project.module(d.pick(("render", "ssr", "frontend")))
    files[server] = f'''"""What the server-side renderer needs from the web client's configuration."""

import pathlib
import re

CONFIG = pathlib.Path(__file__).resolve().parents[{server.count("/")}] / "{path}"


def project_id():
    return re.search(r'projectId: "([^"]+)"', CONFIG.read_text()).group(1)
'''
    b.probes.append(Probe("project", "py", server, "project_id()"))
    b.test(f'''
def test_the_client_config_still_names_its_project():
    assert load("{server}").project_id() == "{project}"
    assert "{key_name}:" in (ROOT / "{path}").read_text()
''')
    if d.chance(0.5):
        # The key again, in a smoke test of the maps endpoint.
        smoke = f"scripts/{d.pick(('smoke', 'check-maps', 'ping-api'))}.sh"
        files[smoke] = (
            f'#!/usr/bin/env bash\nset -eu\ncurl -sf "https://maps.googleapis.com/maps/api/geocode/json?address=Paris&key="{b.sh_slot(s)}\n'
        )
        b.probes.append(Probe("smoke", "sh", smoke))
    b.add(d.pick(("Add the web client configuration", "Bundle the client config", "Web front end")), files)
    b.python_secrets(extras(b, 1))
    return b.finish(f"{project} web", "A web front end with a client-side configuration and a small server.")


SCENARIO = Scenario("frontend_config", "easy", make)
