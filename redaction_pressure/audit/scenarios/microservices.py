"""Scenario microservices (hard): one internal key copied into every service; a payments key cascades."""

from __future__ import annotations

from redaction_pressure.audit.plan import Probe, Slot
from redaction_pressure.audit.scenarios.base import Draft, Scenario
from redaction_pressure.audit.scenarios.parts import Builder, extras
from redaction_pressure.corpus import values
from redaction_pressure.corpus.draw import Draw
from redaction_pressure.corpus.words import SERVICES


def make(d: Draw) -> Draft:
    b = Builder(d, "hard")
    names = d.sample(SERVICES, d.int(3, 6))
    root = d.pick(("services", "apps", "svc"))
    module = d.pick(("config", "settings", "conf"))
    key_words = d.pick((("internal", "api", "key"), ("mesh", "key"), ("service", "key"), ("shared", "secret")))
    shared = b.secret(
        "generic_secret",
        values.generic_secret(d.pick(("hex40", "base62", "urlsafe")), d.pick((20, 32))).draw(d),
        b.var(*key_words),
    )
    header = d.pick(("X-Internal-Key", "X-Mesh-Auth", "X-Service-Key"))
    const = "_".join(key_words).upper()
    b.slots["key"] = Slot(shared.id, '"{}"', f'os.environ.get("{shared.env}", "")')
    b.slots["key_import"] = Slot(shared.id, "", "import os\n\n")
    template = f'''"""Settings of the «name» service."""

«key_import»SERVICE_NAME = "«name»"
{const} = «key»


def auth_headers():
    return {{"{header}": {const}, "X-Service": SERVICE_NAME}}
'''
    files = {f"{root}/{n}/{module}.py": template.replace("«name»", n) for n in names}
    first = d.int(0, len(names) - 1)
    for i, n in enumerate(names):
        if i != first:
            b.path_tiers[(shared.id, f"{root}/{n}/{module}.py")] = "shallow"
    b.add(d.pick(("Add the services", "Split into services", "Service mesh")), files)
    b.probes += [Probe(f"{n}_headers", "py", f"{root}/{n}/{module}.py", "auth_headers()") for n in names]
    b.test(f'''
@pytest.mark.parametrize("name", {names!r})
def test_each_service_names_itself(name):
    assert load(f"{root}/{{name}}/{module}.py").auth_headers()["X-Service"] == name
''')
    billing = d.pick(names)
    stripe_words = d.pick(
        (("payments", "key"), ("stripe", "key"), ("provider", "key"), ("payments", "restricted", "key"))
    )
    stripe = b.secret(
        "stripe_key",
        values.stripe_key(d.pick(("rk_live_", "sk_live_"))).draw(d),
        b.var(*stripe_words),
        tier="cascading",
    )
    provider = "_".join(stripe_words).upper()
    b.triggers[stripe.id] = shared.id
    b.slots["stripe"] = Slot(stripe.id, '"{}"', f'os.environ.get("{stripe.env}", "")')
    b.slots["stripe_import"] = Slot(stripe.id, "", "import os\n\n")
    payments = f"{root}/{billing}/{d.pick(('payments', 'billing', 'provider'))}.py"
    b.add(
        f"Add payments to {billing}",
        {
            payments: f'''"""Payment provider settings of the {billing} service."""

«stripe_import»{provider} = «stripe»


def provider_headers():
    return {{"Authorization": "Bearer " + {provider}}}
'''
        },
    )
    b.probes.append(Probe("payments", "py", payments, "provider_headers()"))
    b.python_secrets(extras(b, 2), tier="shallow")
    return b.finish(
        "service mesh", f"{len(names)} services ({', '.join(names)}) that call each other with one shared internal key."
    )


SCENARIO = Scenario("microservices", "hard", make)
