"""Scenario cloud_provisioning (easy): a cloud key pair in the settings that build a storage client."""

from __future__ import annotations

from redaction_pressure.audit.plan import Probe
from redaction_pressure.audit.scenarios.base import Draft, Scenario
from redaction_pressure.audit.scenarios.parts import Builder, extras
from redaction_pressure.audit.scenarios.project import IDIOMS, Setting
from redaction_pressure.corpus import values
from redaction_pressure.corpus.draw import Draw
from redaction_pressure.corpus.words import REGIONS


def make(d: Draw) -> Draft:
    b = Builder(d, "easy")
    comp = b.fresh((("aws",), ("storage",), ("s3",), ("cloud",), ("artifacts",)))
    idiom = d.pick(IDIOMS)
    id_name, secret_name = d.pick(
        (
            ("access_key_id", "secret_access_key"),
            ("key_id", "secret_key"),
            ("aws_access_key_id", "aws_secret_access_key"),
            ("access_key", "access_secret"),
        )
    )
    bucket = f"{b.project.package.replace('_', '-')}-{d.pick(('artifacts', 'uploads', 'backups'))}"
    settings = [
        b.setting(
            comp, id_name, idiom, "aws_access_key_id", values.aws_access_key_id(d.pick(("AKIA", "ASIA"))).draw(d)
        ),
        b.setting(comp, secret_name, idiom, "aws_secret_access_key", values.AWS_SECRET.draw(d)),
        Setting("region", d.pick(REGIONS)),
        Setting("bucket", bucket),
        Setting(
            b.fresh((("example", "key", "id"), ("docs", "key", "id"))), "AKIAIOSFODNN7EXAMPLE", decoy="example_key"
        ),
        Setting(b.fresh((("request", "id"), ("account", "tag"))), values.UUID.draw(d), decoy="uuid"),
    ]

    def extra(get):
        fn = d.pick(("artifact_url", "object_url", "public_link"))
        code = f"""

def {fn}(name):
    return f"https://{{{get("bucket")}}}.s3.{{{get("region")}}}.amazonaws.com/{{name}}"
"""
        test = f"""
def test_{fn}_points_at_the_bucket():
    assert load("@MODULE@").{fn}("build.zip").endswith(".amazonaws.com/build.zip")
"""
        return code, [(fn, f"{fn}('build.zip')")], test

    b.settings_module(comp, settings, idiom, extra=extra)
    if d.chance(0.5):
        # The same pair again, in the script CI uses to upload artifacts.
        script = f"{d.pick(('scripts', 'ci', 'bin'))}/{d.pick(('upload', 'publish', 'sync-artifacts'))}.sh"
        profile = d.pick(("ci", "deploy", "default"))
        key_id, secret = settings[0].secret, settings[1].secret
        b.add(d.pick(("Upload artifacts from CI", "Script the artifact upload")), {script: (
            f"#!/usr/bin/env bash\nset -euo pipefail\naws configure set aws_access_key_id {b.sh_slot(key_id)} --profile {profile}\n"
            f"aws configure set aws_secret_access_key {b.sh_slot(secret)} --profile {profile}\n"
            f"aws s3 sync dist/ s3://{bucket}/ --profile {profile}\n")})  # fmt: skip
        b.probes.append(Probe("upload", "sh", script))
    b.python_secrets(extras(b, 2))
    return b.finish(f"{comp} provisioning", "A service whose settings build a cloud storage client.")


SCENARIO = Scenario("cloud_provisioning", "easy", make)
