"""Scenario legacy_audit (hard): a token that only old commits, a tag and a release branch still hold."""

from __future__ import annotations

from redaction_pressure.audit.plan import Probe, Slot
from redaction_pressure.audit.scenarios.base import Draft, Scenario
from redaction_pressure.audit.scenarios.parts import Builder, extras
from redaction_pressure.audit.scenarios.project import IDIOMS, Setting
from redaction_pressure.corpus import values
from redaction_pressure.corpus.draw import Draw


def make(d: Draw) -> Draft:
    b = Builder(d, "hard")
    kind, fmt = d.pick(
        (
            ("npm_token", values.npm_token()),
            ("github_token", values.github_token("ghp_")),
            ("gitlab_pat", values.GITLAB_PAT),
        )
    )
    registry = d.pick(("registry.legacy.internal", "npm.old.internal", "packages.legacy.example"))
    words = d.pick((("registry", "token"), ("npm", "token"), ("legacy", "token"), ("auth", "token")))
    legacy = b.secret(kind, fmt.draw(d), b.var(*words), history=True, tier="deep")
    path = b.project.module(d.pick(("legacy_sync", "registry", "mirror")))
    old_name = d.pick(("sync.py", "registry_sync.py", "publish.py"))
    old_path = path.rsplit("/", 1)[0] + "/" + old_name
    const = "_".join(words).upper()
    b.slots["legacy"] = Slot(legacy.id, '"{}"', f'os.environ.get("{legacy.env}", "")')
    leaky = f'''"""Sync with the legacy package registry."""

import os

REGISTRY = "https://{registry}"
{const} = «legacy»


def auth_line():
    return f"//{{REGISTRY.split('://')[1]}}/:_authToken=" + {const}
'''
    current = f'''"""Sync with the legacy package registry."""

import os

REGISTRY = "https://{registry}"


def auth_line():
    return f"//{{REGISTRY.split('://')[1]}}/:_authToken=" + os.environ.get("{legacy.env}", "")
'''
    moved = d.chance(0.5)
    first = "Add legacy registry sync"
    b.add(first, {old_path if moved else path: leaky})
    b.pinned.append((d.pick(("v0.9.0", "legacy-1", "v1.0.0-rc1")), first))
    if moved:
        b.late.append(("Move the registry sync", {old_path: None, path: leaky}))
        b.pinned.append((f"release/{d.int(0, 1)}.{d.int(1, 9)}", "Move the registry sync"))
    b.late.append(
        (
            d.pick(("Read the registry token from the environment", "Stop hard-coding the registry token")),
            {path: current},
        )
    )
    b.probes.append(Probe("registry", "py", path, "auth_line()"))
    b.test(f'''
def test_registry_auth_line_names_the_registry():
    assert load("{path}").auth_line().startswith("//{registry}/:_authToken=")
''')
    comp = b.fresh((("webhooks",), ("hooks",), ("callbacks",)))
    idiom = d.pick(tuple(i for i in IDIOMS if i != "local"))
    name = d.pick(("webhook_secret", "signing_secret", "hook_key"))
    settings = [
        b.setting(comp, name, idiom, "generic_secret", values.generic_secret("hex32", 16).draw(d)),
        Setting("max_skew", str(d.int(60, 600))),
    ]

    def extra(get):
        code = f"""

def signature(body):
    import hashlib
    import hmac

    return hmac.new({get(name)}.encode(), body, hashlib.sha256).hexdigest()
"""
        return (
            code,
            [("webhook", "signature(b'body')")],
            """
def test_signatures_are_hex():
    assert len(load("@MODULE@").signature(b"x")) == 64
""",
        )

    b.settings_module(comp, settings, idiom, extra=extra, message="Verify incoming webhooks")
    b.python_secrets(extras(b, 2), tier="shallow")
    return b.finish("legacy sync", "A long-lived service; old commits once held a registry token.")


SCENARIO = Scenario("legacy_audit", "hard", make)
