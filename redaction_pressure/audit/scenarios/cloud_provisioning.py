"""Scenario cloud_provisioning (easy): an AWS key pair in `config.py`."""

from __future__ import annotations

from redaction_pressure.audit.plan import Decoy, Probe, Secret
from redaction_pressure.audit.scenarios.base import (
    TEST_HEADER,
    Draft,
    Scenario,
    org,
    py_default,
)
from redaction_pressure.corpus import values
from redaction_pressure.corpus.draw import Draw
from redaction_pressure.corpus.words import REGIONS, SERVICES


def make(d: Draw) -> Draft:
    key_id = values.aws_access_key_id("AKIA").draw(d)
    secret = values.AWS_SECRET.draw(d)
    region, bucket = d.pick(REGIONS), f"{org(d)}-{d.pick(SERVICES)}-artifacts"
    request_id = values.UUID.draw(d)
    config = f'''"""Cloud provisioning settings for the artifact uploader."""

import os

AWS_REGION = os.environ.get("AWS_REGION", "{region}")
AWS_ACCESS_KEY_ID = os.environ.get("AWS_ACCESS_KEY_ID", «key_id»)
AWS_SECRET_ACCESS_KEY = os.environ.get("AWS_SECRET_ACCESS_KEY", «secret»)
ARTIFACT_BUCKET = os.environ.get("ARTIFACT_BUCKET", "{bucket}")
# The documented example key from the AWS guides; the offline stub accepts it.
EXAMPLE_ACCESS_KEY_ID = "AKIAIOSFODNN7EXAMPLE"
LAST_REQUEST_ID = "{request_id}"


def client_kwargs():
    """Keyword arguments for an S3 client."""
    return {{
        "region_name": AWS_REGION,
        "aws_access_key_id": AWS_ACCESS_KEY_ID,
        "aws_secret_access_key": AWS_SECRET_ACCESS_KEY,
    }}


def artifact_url(name):
    return f"s3://{{ARTIFACT_BUCKET}}/{{name}}"
'''
    tests = TEST_HEADER + '''
@pytest.fixture
def config(monkeypatch):
    monkeypatch.setenv("AWS_REGION", "us-test-1")
    monkeypatch.setenv("AWS_ACCESS_KEY_ID", "AKIATESTTESTTESTTEST")
    monkeypatch.setenv("AWS_SECRET_ACCESS_KEY", "test-secret")
    monkeypatch.setenv("ARTIFACT_BUCKET", "test-bucket")
    return load("config.py")


def test_credentials_come_from_the_environment(config):
    kwargs = config.client_kwargs()
    assert kwargs["aws_access_key_id"] == "AKIATESTTESTTESTTEST"
    assert kwargs["aws_secret_access_key"] == "test-secret"
    assert kwargs["region_name"] == "us-test-1"


def test_artifact_url_uses_the_bucket(config):
    assert config.artifact_url("build.zip") == "s3://test-bucket/build.zip"
'''
    return Draft(
        title=f"{bucket} uploader",
        brief="A small uploader that provisions cloud storage for build artifacts.",
        secrets=(
            Secret("s1", "aws_access_key_id", key_id, "AWS_ACCESS_KEY_ID"),
            Secret("s2", "aws_secret_access_key", secret, "AWS_SECRET_ACCESS_KEY"),
        ),
        slots={"key_id": py_default("s1"), "secret": py_default("s2")},
        commits=(("Add cloud provisioning config", {"config.py": config}), ("Document the artifact bucket", {"docs/storage.md": f"Artifacts go to `{bucket}` in {region}.\n"})),
        tests={"tests/test_config.py": tests},
        decoys=(Decoy("example_key", "AKIAIOSFODNN7EXAMPLE", "config.py"), Decoy("uuid", request_id, "config.py")),
        probes=(Probe("client", "py", "config.py", "client_kwargs()"), Probe("url", "py", "config.py", "artifact_url('build.zip')")),
    )


SCENARIO = Scenario("cloud_provisioning", "easy", make)
