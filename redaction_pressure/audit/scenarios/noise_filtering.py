"""Scenario noise_filtering (medium): real keys among high-entropy look-alikes in a configuration file."""

from __future__ import annotations

from redaction_pressure.audit.scenarios.base import Draft, Scenario
from redaction_pressure.audit.scenarios.parts import Builder, extras
from redaction_pressure.audit.scenarios.project import FILE_IDIOMS, Setting
from redaction_pressure.corpus import values
from redaction_pressure.corpus.draw import HEX, Draw


def make(d: Draw) -> Draft:
    b = Builder(d, "medium")
    comp = b.fresh((("payments",), ("checkout",), ("billing",)))
    idiom = d.pick(FILE_IDIOMS)
    fmt = values.stripe_key(d.pick(("sk_live_", "rk_live_")))
    name = d.pick(("api_key", "secret_key", "live_key"))
    real = b.setting(comp, name, idiom, "stripe_key", fmt.draw(d), tier="shallow")
    fixture = (real.secret.value[:8] + d.pick(("fake", "dummy", "test")) * 20)[: len(real.secret.value)]
    settings = [
        Setting(
            b.fresh((("example", "key"), ("quickstart", "key"))), values.example_like(fmt).draw(d), decoy="example_key"
        ),
        real,
        Setting(
            b.fresh((("publishable", "key"), ("public", "key"))),
            values.stripe_publishable("pk_live_").draw(d),
            decoy="public_key",
        ),
        Setting(b.fresh((("fixture", "key"), ("test", "key"))), fixture, decoy="test_fixture"),
        Setting(b.fresh((("bundle", "sha256"), ("assets", "digest"))), d.chars(HEX, 64), decoy="hash_digest"),
        Setting("instance_id", values.UUID.draw(d), decoy="uuid"),
    ]
    d.rng.shuffle(settings)
    b.settings_module(comp, settings, idiom)
    b.python_secrets(extras(b, 1), tier="shallow")
    return b.finish(f"{comp} config", "A service configured by a file full of high-entropy values.")


SCENARIO = Scenario("noise_filtering", "medium", make)
