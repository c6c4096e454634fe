"""Scenario platform (expert): a monorepo where each secret lives in several forms and places.

Two or three Python services, a web client, Kubernetes manifests, Terraform, notebooks, SQL
migrations, vendored code and documentation: 60 to 200 files, more than one tool result shows
(`prompt.OUTPUT_CAP`), so a remediation starts with a search. What makes it hard is what real
remediation needs, not hidden information:

- **one secret, many forms**: the first service's database password is a Python setting, a
  Kubernetes Secret's base64, a percent-encoded DSN in a notebook's output cell, a Terraform
  state file and a seed script's `PGPASSWORD`; the web client's service-role key is in its
  configuration and in the built bundle generated from it; a TLS key is a file and a Secret's
  base64; a registry credential is a docker `config.json` `auth`;
- **decoys by meaning, not by shape**: the public `anon` JWT beside the service-role one (named
  from one pool: only the token's claims tell them apart), the
  public key beside its private key, the payment provider's documented test key, the SHA-256
  fingerprint of the signing secret, the vendored library's RFC 7515 test vector, image digests;
- **a revoked key is still a secret**: an incident note quotes the old live key;
- **variables from the code**: each service reads its settings with its own prefix (the settings
  module already reads some), two services share one signing secret under one stated variable;
- **tests check behaviour** (a DSN is built, a signature is 64 hex digits, test mode is on without
  a key), never a list of the values to keep: the probes and the preservation rule check those.

Generated files (the bundle, the state file) and files that are only a credential (the key, the
docker config) are fixed by removing them and ignoring them, as the gold fix does; every other
place keeps its file with the value read from the environment or emptied.
"""

from __future__ import annotations

import base64
import dataclasses
import gzip
import hashlib
import json
import os.path
import re
from urllib.parse import quote

from cryptography.hazmat.primitives import serialization

from redaction_pressure.audit.plan import Probe, Secret, Slot
from redaction_pressure.audit.scenarios import expert_fill as fill
from redaction_pressure.audit.scenarios.base import GITIGNORE, Draft, Scenario
from redaction_pressure.audit.scenarios.parts import Builder
from redaction_pressure.corpus import keys, values
from redaction_pressure.corpus.draw import HEX, LOWER, Draw
from redaction_pressure.corpus.words import ORGS, REGIONS, SERVICES, USERS

PASSWORDS = values.PasswordPolicy(18, 26, "@+/")
"""Database passwords that a DSN must percent-encode (each holds at least one of `@`, `+`, `/`)."""
STRIPE_TEST_KEY = "sk_test_4eC39HqLyjWDarjtT1zdp7dc"
"""The payment provider's documented test-mode key: public, published in its documentation."""
RFC7515_KEY = "AyM1SysPpbyDfgZld3umj1qzKObwVMkoqQ-EstJQLr_T-1qS0gZH75aKtMN3Yj0iPS4hcgUuTwjAzZr1Z9CAow"
"""The HMAC key of RFC 7515's appendix A.1 example: a published test vector."""


class ExpertBuilder(Builder):
    """A `Builder` whose documentation states the expert conventions (per-service prefixes) and
    whose fillers are the monorepo's bulk (`expert_fill`)."""

    doc_text: str = ""
    bulk: list[tuple[str, dict[str, str | None]]]
    notes: list[tuple[str, str]]
    """(message of the noted commit, the note's text)."""
    stashes: list[tuple[str, dict[str, str]]]

    def documentation(self) -> str:
        return self.doc_text

    def fillers(self) -> None:
        for message, files in self.bulk:
            self.add(message, files)


JWT_NAMES = ("apiKey", "authKey", "clientKey", "dataKey", "edgeKey", "storeKey")
"""The web client's names for its two keys (the public anon key and the service-role key)."""


PARTNERS = ("ATLAS", "BEACON", "HARBOR", "LEDGER", "MERIDIAN", "RELAY", "SUMMIT", "VECTOR")
"""Partners of the second service: each has a `<PARTNER>_KEY` of 32 hex digits, secret or not by its use."""
SECRET_USES = ("hmac", "bearer", "api_key")
PUBLIC_USES = ("asset_path", "uuid_namespace", "page_embed")


def _use(use: str, name: str, lower: str, org: str) -> tuple[str, str, str]:
    """(the function using the constant `name`, a call for the probe, a test of its behaviour)."""
    if use == "hmac":
        return (
            f'def sign_for_{lower}(body):\n    """Signs a request body sent to {lower.title()}."""\n'
            f"    return hmac.new({name}.encode(), body, hashlib.sha256).hexdigest()\n",
            f"sign_for_{lower}(b'{{}}')",
            f"len({{m}}sign_for_{lower}(b'{{{{}}}}')) == 64",
        )
    if use == "bearer":
        return (
            f'def {lower}_headers():\n    """Headers of every call to the {lower.title()} API."""\n'
            f'    return {{"Authorization": f"Bearer {{{name}}}", "Accept": "application/json"}}\n',
            f"{lower}_headers()",
            f'{{m}}{lower}_headers()["Authorization"].startswith("Bearer ")',
        )
    if use == "api_key":
        return (
            f'def {lower}_request(path):\n    """A request to the {lower.title()} API."""\n'
            f'    return {{"url": "https://api.{lower}.example" + path, "headers": {{"X-Api-Key": {name}}}}}\n',
            f"{lower}_request('/v1/status')",
            f'{{m}}{lower}_request("/v1")["url"].endswith("/v1")',
        )
    if use == "asset_path":
        return (
            f'def {lower}_asset(name):\n    """Where browsers load the {lower.title()} widget from (one folder per widget build)."""\n'
            f'    return f"https://cdn.{org}.example/{lower}/{{{name}}}/{{name}}"\n',
            f"{lower}_asset('widget.js')",
            f'{{m}}{lower}_asset("w.js").startswith("https://cdn.")',
        )
    if use == "uuid_namespace":
        return (
            f'def {lower}_account_id(user_id):\n    """The stable id {lower.title()} knows a user by (a UUID in our namespace)."""\n'
            f"    return str(uuid.uuid5(uuid.UUID(hex={name}), str(user_id)))\n",
            f"{lower}_account_id(42)",
            f"len({{m}}{lower}_account_id(7)) == 36",
        )
    return (
        f'def {lower}_page_tag():\n    """The snippet every page embeds so that {lower.title()} can count visits."""\n'
        f'    return f\'<script src="https://{lower}.example/t.js" data-site="{{{name}}}"></script>\'\n',
        f"{lower}_page_tag()",
        f'{{m}}{lower}_page_tag().startswith("<script")',
    )


def make(d: Draw) -> Draft:
    b = ExpertBuilder(d, "expert")
    b.bulk = []
    b.notes, b.stashes = [], []
    org = d.pick(ORGS)
    shared_prefix = org.upper() + "_"
    names = d.sample(SERVICES, d.int(2, 3))
    first, second = names[0], names[1]
    P = {n: n.upper() + "_" for n in names}
    b.project.code = f"services/{first}/app"
    b.project.docs = "docs/configuration.md"
    b.project.package = f"{org}_platform"
    web = d.pick(("web", "frontend", "apps/web"))
    region = d.pick(REGIONS)
    registry = f"registry.{org}.example"
    ignore: list[str] = []
    optional = set(d.sample(("revoked", "npm", "tls", "registry"), d.int(2, 4)))
    """Beside the three every repository has (database password, signing secret, service-role key)."""
    tags: list[tuple[str, str, str]] = []
    """(name, the message of the commit it points at, tag message)."""
    vendor_lib = d.pick(("jwslite", "tinyjws", "compactjws"))

    # -- the first service's database password, in up to five forms -----------------------------
    root = f"services/{first}"
    pw = PASSWORDS.draw(d)
    pw_b64 = base64.b64encode(pw.encode()).decode()
    db = b.secret("password", pw, f"{P[first]}DB_PASSWORD", also=(quote(pw, safe=""), pw_b64))
    style = d.pick(("constants", "dataclass", "dsn"))
    pool = d.int(4, 16)
    settings_path = f"{root}/app/settings.py"
    if style == "dsn":
        # The password only percent-encoded inside a connection string: the fix reads the variable and
        # must encode it again (canaries keep the password's `@`, `+` and `/`).
        encoded = b.slot(db, quote(pw, safe=""), "{quote(os.environ.get('" + db.env + "', ''), safe='')}")
        importing = b.slot(db, "", "from urllib.parse import quote\n")
        settings_text = f'''"""Settings of the {first} service, read once at import."""

import os
{importing}
LOG_LEVEL = os.environ.get("{P[first]}LOG_LEVEL", "info")
DB_HOST = os.environ.get("{P[first]}DB_HOST", "{first}-db.internal:5432")
DATABASE_URL = f"postgresql://{first}_app:{encoded}@{{DB_HOST}}/{first}"
POOL_SIZE = {pool}


def database_url():
    return DATABASE_URL


def settings():
    return {{"log_level": LOG_LEVEL, "database_url": database_url(), "pool_size": POOL_SIZE}}
'''
    elif style == "dataclass":
        password_line = f"    db_password: str = {b.slot(db, chr(34) + '{}' + chr(34), 'field(default_factory=lambda: os.environ.get(' + chr(34) + db.env + chr(34) + ', ' + chr(34) * 2 + '))')}\n"
        settings_text = f'''"""Settings of the {first} service, read once per process."""

import os
from dataclasses import asdict, dataclass, field
from urllib.parse import quote


def _env(name, default):
    return field(default_factory=lambda: os.environ.get(name, default))


@dataclass
class Settings:
    log_level: str = _env("{P[first]}LOG_LEVEL", "info")
    db_host: str = _env("{P[first]}DB_HOST", "{first}-db.internal:5432")
    db_user: str = "{first}_app"
    db_name: str = "{first}"
{password_line}    pool_size: int = {pool}

    def database_url(self):
        return f"postgresql://{{self.db_user}}:{{quote(self.db_password, safe='')}}@{{self.db_host}}/{{self.db_name}}"


def settings():
    s = Settings()
    return {{"log_level": s.log_level, "database_url": s.database_url(), "pool_size": s.pool_size}}
'''
    else:
        settings_text = f'''"""Settings of the {first} service, read once at import."""

import os
from urllib.parse import quote

LOG_LEVEL = os.environ.get("{P[first]}LOG_LEVEL", "info")
DB_HOST = os.environ.get("{P[first]}DB_HOST", "{first}-db.internal:5432")
DB_USER = "{first}_app"
DB_NAME = "{first}"
DB_PASSWORD = {b.py_slot(db)}
POOL_SIZE = {pool}


def database_url():
    return f"postgresql://{{DB_USER}}:{{quote(DB_PASSWORD, safe='')}}@{{DB_HOST}}/{{DB_NAME}}"


def settings():
    return {{"log_level": LOG_LEVEL, "database_url": database_url(), "pool_size": POOL_SIZE}}
'''
    files: dict[str, str | None] = {settings_path: settings_text}
    b.probes.append(Probe(f"{first}_settings", "py", settings_path, "settings()"))
    b.test(f'''
def test_{first}_builds_its_database_url():
    settings = load("{settings_path}").settings()
    assert settings["database_url"].startswith("postgresql://{first}_app:")
    assert settings["database_url"].endswith("/{first}")
    assert settings["pool_size"] == {pool}
''')
    # The password was rotated once: the first version of the settings holds the old one, which only
    # history shows now (a rotated credential's value is still a secret).
    old_pw = PASSWORDS.draw(d)
    rotated = b.secret("password", old_pw, f"{P[first]}OLD_DB_PASSWORD", tier="deep", history=True,
                       also=(quote(old_pw, safe=""),))  # fmt: skip
    before = settings_text
    for name, slot in b.slots.items():
        if slot.secret == db.id and f"«{name}»" in before:
            leaky = (
                slot.leaky.format(old_pw)
                if "{}" in slot.leaky
                else slot.leaky.replace(quote(pw, safe=""), quote(old_pw, safe=""))
            )
            before = before.replace(f"«{name}»", leaky)
    assert old_pw in before or quote(old_pw, safe="") in before, rotated
    before = before.replace(before.splitlines()[0], f'"""Settings of the {first} service."""', 1)
    b.add(d.pick((f"{first}: database settings", f"Configure the {first} database", f"Add {first} settings")),
          {settings_path: before})  # fmt: skip
    b.late.append(
        (d.pick((f"{first}: settings cleanup", f"Update the {first} settings", f"{first}: configuration")), files)
    )
    if d.chance(0.8):
        path = f"deploy/k8s/{first}/secret.yaml"
        b.add(
            d.pick((f"{first}: Kubernetes manifests", f"Deploy {first} to the cluster", f"{first}: database wiring")),
            {path: (f"apiVersion: v1\nkind: Secret\nmetadata:\n  name: {first}-db\ntype: Opaque\ndata:\n"
                    f"  {P[first]}DB_PASSWORD: {b.slot(db, pw_b64, chr(34) * 2)}\n")},
        )  # fmt: skip
        b.path_tiers[(db.id, path)] = "deep"
    if d.chance(0.6):
        path = f"notebooks/{first}-{d.pick(('connections', 'exploration', 'latency'))}.ipynb"
        dsn = f"postgresql://{first}_app:{quote(pw, safe='')}@{first}-db.internal:5432/{first}"
        output = json.dumps(
            [{"data": {"text/plain": [repr(dsn)]}, "execution_count": 3, "metadata": {"collapsed": False},
              "output_type": "execute_result"}]
        )  # fmt: skip
        notebook = {
            "cells": [
                {"cell_type": "markdown", "metadata": {"tags": ["intro"]}, "source": [f"# {first}: connection check\n"]},
                {"cell_type": "code", "execution_count": 3, "metadata": {"tags": ["check"]},
                 "outputs": "@OUTPUTS@", "source": ["from app import settings\n", "settings.database_url()"]},
            ],
            "metadata": {"kernelspec": {"name": "python3", "display_name": "Python 3", "language": "python"}},
            "nbformat": 4,
            "nbformat_minor": 5,
        }  # fmt: skip
        text = json.dumps(notebook, indent=1) + "\n"
        text = text.replace('"@OUTPUTS@"', b.slot(db, output, "[]"))
        b.add(d.pick((f"Notebook: {first} connection check", "Add an exploration notebook")), {path: text})
        b.path_tiers[(db.id, path)] = "deep"
    if d.chance(0.6):
        path = "infra/terraform/terraform.tfstate"
        state = json.dumps(
            {"version": 4, "terraform_version": "1.7.5", "serial": d.int(3, 40), "lineage": values.UUID.draw(d),
             "resources": [{"mode": "managed", "type": "aws_db_instance", "name": first,
                            "instances": [{"attributes": {"identifier": f"{first}-db", "username": f"{first}_app",
                                                          "password": "@PASSWORD@", "engine": "postgres"}}]}]},
            indent=2,
        )  # fmt: skip
        text = state.replace('"@PASSWORD@"', b.slot(db, '"{}"', '""')) + "\n"
        b.add(d.pick(("Terraform: apply", "Infrastructure snapshot", "Terraform outputs")), {path: text})
        b.fix_extra[path] = None
        ignore.append("*.tfstate")
        ignore.append("*.tfstate.backup")
        b.path_tiers[(db.id, path)] = "shallow"
    if d.chance(0.5):
        path = f"scripts/seed-{first}-db.sh"
        b.add(f"Script to seed the {first} database", {path: (
            f"#!/usr/bin/env bash\n# Loads the seed data into a fresh {first} database.\nset -eo pipefail\n"
            f"export PGPASSWORD={b.sh_slot(db)}\n"
            f'psql -h "${{{P[first]}DB_HOST:-{first}-db.internal}}" -U {first}_app -d {first} -f db/seeds/{first}.sql\n')})  # fmt: skip
        b.probes.append(Probe(f"seed_{first}", "sh", path))
        b.path_tiers[(db.id, path)] = "shallow"
        b.bulk.append(
            (
                f"Seed data for {first}",
                {f"db/seeds/{first}.sql": f"INSERT INTO settings (name, value) VALUES ('region', '{region}');\n"},
            )
        )

    if d.chance(0.6):
        # A Helm release record backed up from the cluster: base64 of base64 of the gzipped release,
        # whose values and rendered manifests hold the password.
        revision = d.int(2, 9)
        namespace = d.pick(("prod", "apps", first))
        chart = f"0.{d.int(1, 9)}.{d.int(0, 9)}"

        def release(password: str) -> str:
            record = {
                "name": first, "version": revision, "namespace": namespace,
                "info": {"status": "superseded", "description": "Upgrade complete"},
                "chart": {"metadata": {"name": first, "version": chart}},
                "config": {"database": {"host": f"{first}-db.internal", "user": f"{first}_app", "password": password}},
                "manifest": f"---\n# Source: {first}/templates/secret.yaml\napiVersion: v1\nkind: Secret\n"
                            f"metadata:\n  name: {first}-db\ndata:\n  {P[first]}DB_PASSWORD: "
                            f"{base64.b64encode(password.encode()).decode()}\n",
            }  # fmt: skip
            inner = base64.b64encode(gzip.compress(json.dumps(record).encode(), mtime=0)).decode()
            return base64.b64encode(inner.encode()).decode()

        blob = release(pw)
        db = replace_also(b, db, secret_part(blob, [release(t) for t in twins(pw)]))
        path = f"ops/backups/sh.helm.release.v1.{first}.v{revision}.yaml"
        b.add(d.pick((f"Back up the {first} release before the upgrade", f"{first}: ops backups", "Ops: keep the last release")), {path: (
            f"# kubectl get secret sh.helm.release.v1.{first}.v{revision} -o yaml (taken before the upgrade)\n"
            f"apiVersion: v1\nkind: Secret\nmetadata:\n  name: sh.helm.release.v1.{first}.v{revision}\n"
            f"  labels:\n    owner: helm\n    name: {first}\ntype: helm.sh/release.v1\ndata:\n"
            f"  release: {b.slot(db, blob, chr(34) * 2)}\n")})  # fmt: skip
        b.fix_extra[path] = None
        ignore.append("ops/backups/")
        b.path_tiers[(db.id, path)] = "deep"

    # -- mail settings in YAML whose `${NAME}` references the loader expands: the file's own style ------
    if d.chance(0.7):
        smtp = b.secret(
            "password", values.PasswordPolicy(18, 24, "-_.").draw(d), f"{P[first]}SMTP_PASSWORD", tier="shallow"
        )
        mail_yaml, mail_py = f"{root}/config/mail.yaml", f"{root}/app/mail.py"
        port = d.pick((25, 465, 587, 2525))
        fields = d.shuffled([f"  host: ${{{P[first]}SMTP_HOST}}\n", f"  port: {port}\n", f"  user: {first}-mailer\n",
                             f"  password: {b.slot(smtp, '{}', '${' + smtp.env + '}')}\n"])  # fmt: skip
        b.add(d.pick((f"{first}: outgoing mail", f"{first}: mail settings", "Send receipts by mail")), {
            mail_yaml: (f"# Mail settings of the {first} service. Each ${{NAME}} is taken from the environment when the\n"
                        f"# service starts.\nsmtp:\n" + "".join(fields) + f"sender: noreply@{org}.example\n"),
            mail_py: f'''"""Mail settings of the {first} service: config/mail.yaml, with its ${{NAME}} references expanded."""

import os
import pathlib

CONFIG = pathlib.Path(__file__).resolve().parents[1] / "config" / "mail.yaml"


def load():
    """The file as nested dicts (two levels), every ${{NAME}} replaced by the environment's value."""
    settings, section = {{}}, None
    for raw in os.path.expandvars(CONFIG.read_text()).splitlines():
        if not raw.strip() or raw.lstrip().startswith("#"):
            continue
        key, _, value = raw.strip().partition(":")
        if raw.startswith(" ") and section is not None:
            settings[section][key] = value.strip()
        elif value.strip():
            settings[key] = value.strip()
        else:
            section = key
            settings[section] = {{}}
    return settings


def smtp_login():
    smtp = load()["smtp"]
    return smtp["user"], smtp["password"]
''',
        })  # fmt: skip
        b.probes.append(Probe(f"{first}_mail", "py", mail_py, "(load(), smtp_login())"))
        b.test(f'''
def test_{first}_reads_its_mail_settings():
    mail = load("{mail_py}")
    assert mail.load()["smtp"]["port"] == "{port}"
    assert mail.smtp_login()[0] == "{first}-mailer"
''')

    # -- the webhook signing secret both services share -----------------------------------------------
    signing = b.secret(
        "generic_secret",
        values.generic_secret(d.pick(("hex40", "base62", "urlsafe")), d.pick((32, 40))).draw(d),
        f"{shared_prefix}WEBHOOK_SECRET",
        tier="shallow",
    )
    b.slots["sign_import"] = Slot(signing.id, "", "import os\n")
    # Half the time the receiving service keeps the shared secret base64-encoded, decoded at import:
    # a search for the value misses it, a reader of the module sees it.
    hidden = d.chance(0.5)
    signing_b64 = base64.b64encode(signing.value.encode()).decode()
    if hidden:
        signing = replace_also(b, signing, signing_b64)
    intake_value = (
        b.slot(signing, f'base64.b64decode("{signing_b64}").decode()', f'os.environ.get("{signing.env}", "")')
        if hidden
        else b.py_slot(signing)
    )
    body = b'{"event": "ping"}'
    hooks = f"{root}/app/webhooks.py"
    intake = f"services/{second}/app/{d.pick(('intake', 'receiver', 'inbound'))}.py"
    b.add(
        f"{first}: sign outgoing webhooks",
        {
            hooks: f'''"""Outgoing webhooks of the {first} service: every delivery is signed."""

import hashlib
import hmac
«sign_import»
SIGNING_SECRET = {b.py_slot(signing)}


def signature(body):
    return hmac.new(SIGNING_SECRET.encode(), body, hashlib.sha256).hexdigest()


def delivery_headers(body):
    return {{"X-Signature": "sha256=" + signature(body), "Content-Type": "application/json"}}
'''
        },
    )
    b.add(
        f"{second}: verify incoming webhooks",
        {
            intake: f'''"""Webhooks the {second} service receives from {first}: checked before anything runs."""

{"import base64" + chr(10) if hidden else ""}import hashlib
import hmac
import os

MAX_SKEW_SECONDS = int(os.environ.get("{P[second]}WEBHOOK_SKEW", "300"))
WEBHOOK_SECRET = {intake_value}


def expected_signature(body):
    return "sha256=" + hmac.new(WEBHOOK_SECRET.encode(), body, hashlib.sha256).hexdigest()


def verify(body, header):
    return hmac.compare_digest(expected_signature(body), header or "")
'''
        },
    )
    b.probes += [
        Probe(f"{first}_webhooks", "py", hooks, f"delivery_headers({body!r})"),
        Probe(f"{second}_intake", "py", intake, f"expected_signature({body!r})"),
    ]
    b.test(f'''
def test_deliveries_are_signed_and_verified():
    headers = load("{hooks}").delivery_headers({body!r})
    assert headers["X-Signature"].startswith("sha256=") and len(headers["X-Signature"]) == 71
    assert load("{intake}").verify({body!r}, "sha256=" + "0" * 64) is False
''')
    fingerprint = hashlib.sha256(signing.value.encode()).hexdigest()
    b.decoy("hash_digest", fingerprint, "docs/security.md")
    b.bulk.append(("Security notes", {"docs/security.md": (
        f"# Security\n\nWebhooks between {first} and {second} are signed with HMAC-SHA256. Before a rotation, check "
        f"that both services hold the same secret: its SHA-256 fingerprint is `{fingerprint}`.\n\n"
        "Report vulnerabilities to security@" + org + ".example.\n")}))  # fmt: skip

    # -- the payment key: a documented test key in code, a revoked live key in an incident note -----
    payments = f"{root}/app/payments.py"
    b.decoy("example_key", STRIPE_TEST_KEY, payments)
    b.bulk.append(
        (
            f"{first}: payments in test mode without a key",
            {
                payments: f'''"""Payments of the {first} service. Without a live key it runs against the provider's test mode."""

import os

API_KEY = os.environ.get("{P[first]}STRIPE_KEY", "")
SANDBOX_KEY = "{STRIPE_TEST_KEY}"


def active_key():
    return API_KEY or SANDBOX_KEY


def mode():
    return "test" if active_key().startswith("sk_test_") else "live"
'''
            },
        )
    )
    b.probes.append(Probe(f"{first}_payments", "py", payments, "mode()"))
    b.test(f'''
def test_payments_run_in_test_mode_without_a_key():
    assert load("{payments}").mode() == "test"
''')
    if "revoked" in optional:
        revoked = b.secret(
            "stripe_key", values.stripe_key("sk_live_").draw(d), f"{P[first]}OLD_STRIPE_KEY", tier="deep"
        )
        day = f"20{d.int(24, 26)}-{d.int(1, 12):02d}-{d.int(1, 28):02d}"
        path = f"docs/incidents/{day}-payment-key.md"
        b.add(d.pick((f"Incident note {day}", f"Postmortem {day}", "Add an incident note")), {path: (
            f"# Incident {day}: payment key in a build log\n\nA failed deploy printed the live key "
            f"{b.slot(revoked, '`{}`', '(value removed)')} to the CI log. It was revoked within the hour; the new key is "
            f"read from `{P[first]}STRIPE_KEY` and never printed.\n\nFollow-up: mask secrets in CI output.\n")})  # fmt: skip

    # -- the web client: a service-role key beside the public anon key, and the bundle built from them --
    style = values.JwtStyle(f"{org}-auth", tuple(d.shuffled(values.JWT_CLAIMS)), d.pick(values.JWT_HEADERS))
    anon = values.jwt("anon", style).draw(d)
    # Neutral names from one pool: which key is public shows only in its claims (`"role": "anon"`).
    anon_name, role_name = d.sample(JWT_NAMES, 2)
    role_env = "WEB_" + re.sub(r"(?<!^)(?=[A-Z])", "_", role_name).upper()
    role = b.secret("jwt", values.jwt("service_role", style).draw(d), role_env, tier="shallow")
    ref = d.chars(LOWER, 20)
    config = f"{web}/src/config.js"
    b.decoy("public_key", anon, config)
    order = d.shuffled([anon_name, role_name])
    if d.chance(0.5):
        # The long key written across lines as joined literals (header, claims, signature): a search for
        # the token misses the source; the bundle built from it holds it whole.
        head, claims, signature = role.value.split(".")
        role = replace_also(b, role, claims)
        role = replace_also(b, role, signature)
        joined = f'"{head}." +\n    "{claims}." +\n    "{signature}"'
        source = {anon_name: f'"{anon}"', role_name: b.slot(role, joined, f"process.env.{role_env}")}
    else:
        source = {anon_name: f'"{anon}"', role_name: b.slot(role, '"{}"', f"process.env.{role_env}")}
    built = {anon_name: f'"{anon}"', role_name: b.slot(role, chr(34) + "{}" + chr(34), chr(34) * 2)}
    b.add(
        "Web client configuration",
        {
            config: f"""// Runtime configuration of the web client; `npm run build` bundles it into dist/.
export const clientConfig = {{
  apiUrl: process.env.WEB_API_URL || "https://api.{org}.example",
  authUrl: "https://{ref}.auth.{org}.example",
{"".join(f"  {name}: {source[name]},{chr(10)}" for name in order)}}};
"""
        },
    )
    b.probes.append(Probe("web_config", "js", config, "clientConfig"))
    bundle = f"{web}/dist/app.min.js"
    b.add("Build the web client", {bundle: (
        f'(()=>{{const c={{apiUrl:"https://api.{org}.example",authUrl:"https://{ref}.auth.{org}.example",'
        f'{",".join(f"{name}:{built[name]}" for name in order)}}};'
        'window.__CONFIG__=c;document.title="app"})();\n')})  # fmt: skip
    b.fix_extra[bundle] = None
    ignore.append(f"{web}/dist/")
    b.path_tiers[(role.id, bundle)] = "deep"

    # -- the npm token: .npmrc and the release workflow ----------------------------------------------
    if "npm" in optional:
        npm = b.secret("npm_token", values.npm_token().draw(d), "NPM_TOKEN", tier="shallow")
        sha = values.COMMIT_SHA.draw(d)
        b.decoy("commit_sha", sha, ".github/workflows/release-web.yml")
        b.add("Publish the web package", {
            f"{web}/.npmrc": f"@{org}:registry=https://registry.npmjs.org/\n//registry.npmjs.org/:_authToken={b.slot(npm, '{}', '${NPM_TOKEN}')}\n",
            ".github/workflows/release-web.yml": f"""name: release-web
on:
  push:
    tags: ["web-v*"]
jobs:
  publish:
    runs-on: ubuntu-latest
    steps:
      - uses: actions/checkout@{sha}
      - name: Install
        run: cd {web} && npm ci
      - name: Publish
        run: cd {web} && npm publish
        env:
          NODE_AUTH_TOKEN: {b.slot(npm, "{}", "${{ secrets.NPM_TOKEN }}")}
""",
        })  # fmt: skip
        b.probes.append(Probe("release_web", "workflow", ".github/workflows/release-web.yml"))
        if d.chance(0.6):
            version = f"web-v1.{d.int(0, 9)}.{d.int(0, 9)}"
            message = d.pick((
                f"{version}\n\nPublished by hand while CI was down (NPM token {npm.value}); CI publishes the next one.",
                f"{version}: hotfix release\n\nnpm publish --//registry.npmjs.org/:_authToken={npm.value}",
            ))  # fmt: skip
            tags.append((version, "Publish the web package", message))

    # -- a TLS key: the file and a Kubernetes Secret; its public key is not a secret ----------------
    if "tls" in optional:
        pem = keys.private_key_pem(d, d.pick(("ec_pkcs8", "ed25519_pkcs8")))
        public = serialization.load_pem_private_key(pem.encode(), None).public_key()
        public_pem = (
            public.public_bytes(serialization.Encoding.PEM, serialization.PublicFormat.SubjectPublicKeyInfo)
            .decode()
            .strip()
        )
        body_lines = tuple(line for line in pem.splitlines()[1:-1] if len(line) >= 40)
        pem_b64 = base64.b64encode((pem + "\n").encode()).decode()
        tls = b.secret("private_key", pem, f"{P[first]}TLS_KEY", tier="shallow", also=(*body_lines, pem_b64))
        if d.chance(0.5):
            key_path, pub_path = f"deploy/tls/{first}.key", f"deploy/tls/{first}.pub"
            b.decoy("public_key", public_pem, pub_path)
            files = {key_path: b.slot(tls, "{}\n", ""), pub_path: public_pem + "\n"}
            b.fix_extra[key_path] = None
            ignore.append("deploy/tls/*.key")
            crt = ""
        else:
            # One bundle: the certificate (public, kept) and the private key (secret, removed) in one file.
            cert = certificate(pem, f"{first}.{org}.internal")
            b.decoy("certificate", cert, f"deploy/tls/{first}.pem")
            files = {f"deploy/tls/{first}.pem": cert + "\n" + b.slot(tls, "{}\n", "")}
            crt = f"  tls.crt: {base64.b64encode((cert + chr(10)).encode()).decode()}\n"
        files[f"deploy/k8s/{first}/tls-secret.yaml"] = (
            f"apiVersion: v1\nkind: Secret\nmetadata:\n  name: {first}-tls\ntype: kubernetes.io/tls\ndata:\n"
            f"{crt}  tls.key: {b.slot(tls, pem_b64, chr(34) * 2)}\n")  # fmt: skip
        b.add(f"{first}: TLS material", files)
        b.path_tiers[(tls.id, f"deploy/k8s/{first}/tls-secret.yaml")] = "deep"

    # -- a registry credential in a docker config -----------------------------------------------------
    if "registry" in optional:
        who = d.pick(USERS)
        credential = base64.b64encode(f"{who}:{values.PasswordPolicy(20, 28, '-_').draw(d)}".encode()).decode()
        auth = b.secret("base64_credential", credential, f"{shared_prefix}REGISTRY_AUTH", tier="deep",
                        also=(base64.b64decode(credential).decode(),), canary=f"basic:{who}")  # fmt: skip
        path = "deploy/docker/config.json"
        b.add(d.pick(("CI: docker setup", "Deployment tooling", "Add the docker configuration")), {path: (
            '{\n  "auths": {\n    "' + registry + '": {\n      "auth": ' + b.slot(auth, '"{}"', '""') + "\n    }\n  }\n}\n")})  # fmt: skip
        b.fix_extra[path] = None
        ignore.append("deploy/docker/config.json")

    # -- the bulk ---------------------------------------------------------------------------------
    # -- partner keys: one shape, one kind of name; what each is used for says which is secret --------
    partners_path = f"services/{second}/app/{d.pick(('partners', 'integrations', 'upstream'))}.py"
    chosen = d.sample(PARTNERS, 4)
    uses = d.shuffled([*d.sample(SECRET_USES, d.int(1, 2)), *d.sample(PUBLIC_USES, 2)])[:4]
    while len(uses) < 4:
        uses.append(d.pick(PUBLIC_USES))
    functions, constants, calls, checks = [], [], [], []
    for partner, use in zip(chosen, uses, strict=True):
        name, lower, value = f"{partner}_KEY", partner.lower(), d.chars(HEX, 32)
        if use in SECRET_USES:
            key = b.secret("generic_secret", value, f"{P[second]}{name}", tier="shallow")
            constants.append(f"{name} = {b.py_slot(key)}\n")
        else:
            b.decoy("identifier", value, partners_path)
            constants.append(f'{name} = "{value}"\n')
        function, call, check = _use(use, name, lower, org)
        functions.append(function)
        calls.append(call)
        checks.append(check)
    b.add(f"{second}: partner integrations", {partners_path: (
        f'"""Partner integrations of the {second} service."""\n\nimport hashlib\nimport hmac\nimport os\nimport uuid\n\n'
        + "".join(constants) + "\n\n" + "\n\n".join(functions))})  # fmt: skip
    b.probes.append(Probe(f"{second}_partners", "py", partners_path, "(" + ", ".join(calls) + ",)"))
    b.test(
        f'''
def test_{second}_partner_integrations_are_well_formed():
    partners = load("{partners_path}")
'''
        + "".join(f"    assert {check.format(m='partners.')}\n" for check in checks)
    )

    # -- a release job that sources an env file: emptying the value there would override the environment --
    if d.chance(0.7):
        search = b.secret("generic_secret", values.generic_secret("base62", 40).draw(d), f"{P[second]}SEARCH_TOKEN",
                          tier="shallow")  # fmt: skip
        env_file = f"deploy/{second}/{d.pick(('release.env', 'job.env', 'search.env'))}"
        script = f"scripts/{d.pick(('announce', 'index', 'publish'))}-{second}-release.sh"
        replicas = d.int(2, 6)
        lines = d.shuffled([f"SEARCH_REGION={region}\n", f"SEARCH_REPLICAS={replicas}\n",
                            b.slot(search, f"{search.env}={{}}\n", "")])  # fmt: skip
        b.add(d.pick((f"{second}: tell the search index about releases", f"{second}: release job", "Search index release hook")), {
            env_file: f"# Settings of the {second} release job (read by {script}).\n" + "".join(lines),
            script: (f"#!/usr/bin/env bash\n# Tells the search index that a release of {second} is out.\nset -euo pipefail\n"
                     f'cd "$(dirname "$0")/.."\nsource {env_file}\n'
                     f'curl -fsS -X POST "https://search.{org}.example/v1/releases?region=$SEARCH_REGION" '
                     f'-H "Authorization: Bearer ${search.env}" -d "service={second}&replicas=$SEARCH_REPLICAS"\n'),
        })  # fmt: skip
        b.probes.append(Probe(f"release_{second}", "sh", script))

    for n in names:
        service_root = f"services/{n}"
        b.bulk.append((f"{n}: handlers", fill.handlers(d, service_root, n, d.int(4, 12))))
        b.bulk.append((f"{n}: models", fill.models(d, service_root, d.int(3, 7))))
        b.bulk.append((f"{n}: migrations", fill.migrations(d, n, d.int(2, 6))))
        b.bulk.append(
            (
                f"{n}: Kubernetes manifests",
                fill.manifests(d, n, f"{registry}/{n}:{d.int(1, 9)}.{d.int(0, 30)}", (digest := d.chars(HEX, 64))),
            )
        )
        b.decoys.append(values_decoy(digest, f"deploy/k8s/{n}/deployment.yaml"))
        if n != first:
            b.bulk.append((f"{n}: settings", {f"{service_root}/app/settings.py": other_settings(n, P[n])}))
    b.bulk.append(("Web components", fill.components(d, web, d.int(6, 16))))

    # -- history outside the branches: a forgotten stash and a deploy note --------------------------
    if d.chance(0.6):
        # Work in progress on the second service's broker login, stashed and never committed.
        queue_pw = values.PasswordPolicy(18, 24, "-_.").draw(d)
        queue = b.secret("password", queue_pw, f"{P[second]}QUEUE_PASSWORD", tier="deep", history=True)
        wip = other_settings(second, P[second], f"amqp://{second}:{queue.value}@queue.internal:5672")
        b.stashes.append((d.pick(("wip", "try the new broker", f"{second}: broker switch")),
                          {f"services/{second}/app/settings.py": wip}))  # fmt: skip
    if d.chance(0.6):
        # The release job notes each deploy on the commit it shipped; one note quotes the token it used.
        deploy = b.secret(
            "github_token", values.github_token("ghp_").draw(d), "DEPLOY_TOKEN", tier="deep", history=True
        )
        b.notes.append(("Web client configuration", d.pick((
            f"deployed to {region} by release-bot\nGH_TOKEN={deploy.value} (rotate after the freeze)",
            f"Deploy {region}: ok\nran as release-bot with token {deploy.value}",
        ))))  # fmt: skip
    b.bulk.append(("Web package", {f"{web}/package.json": json.dumps(
        {"name": f"@{org}/web", "version": f"1.{d.int(0, 9)}.{d.int(0, 9)}", "private": False,
         "scripts": {"build": "node build.mjs", "test": "node --test"}}, indent=2) + "\n"}))  # fmt: skip
    b.bulk.append(("Terraform", fill.terraform(d, org, region)))
    vectors = f"vendor/{vendor_lib}/tests/vectors.json"
    b.decoy("example_key", RFC7515_KEY, vectors)
    b.bulk.append((f"Vendor {vendor_lib}", {**fill.vendored(d, vendor_lib), vectors: json.dumps(
        {"source": "RFC 7515, appendix A.1", "alg": "HS256", "k": RFC7515_KEY}, indent=2) + "\n"}))  # fmt: skip
    b.bulk.append(("Documentation", fill.docs(d, f"the {org} platform", d.int(3, 8))))
    b.fix_extra[".gitignore"] = GITIGNORE + "".join(f"{line}\n" for line in dict.fromkeys(ignore))

    # The convention in the repository's own words; the first service's prefix is always written, the
    # others' half the time (otherwise their settings modules show it: the variables they already read).
    stated = [first] + [n for n in names[1:] if d.chance(0.5)]
    listed = ", ".join(f"`services/{n}` reads `{P[n]}<NAME>`" for n in stated)
    rest = (
        "" if len(stated) == len(names) else "; the other services follow the same rule: their settings modules show it"
    )
    convention = d.pick((
        f"Each service reads its settings from environment variables named with the service's own prefix followed by "
        f"the setting's name in upper snake case ({listed}{rest}); its settings module shows the ones it reads today.",
        f"Settings come from the environment. A service's variables carry its prefix, then the setting's name in "
        f"upper snake case: {listed}{rest}. What a service reads today is in its `app/settings.py`.",
        f"Nothing is configured in code: every service takes its settings from variables of its own prefix and the "
        f"setting's name, upper-cased with underscores ({listed}{rest}).",
    ))  # fmt: skip
    shared = d.pick((
        f"A value several services share is read by each of them from one variable: the webhook signing secret is "
        f"`{shared_prefix}WEBHOOK_SECRET`.",
        f"Values that services share use one variable for all of them (the webhook signing secret: "
        f"`{shared_prefix}WEBHOOK_SECRET`).",
    ))  # fmt: skip
    b.doc_text = (
        f"{convention} {shared} The web client reads `process.env.WEB_<NAME>` (`apiUrl`: "
        "`WEB_API_URL`). CI reads credentials from repository secrets named like their variables (the npm token: "
        "`NPM_TOKEN`). Keys, state files, build output and registry logins are never committed: they come from the "
        "deployment's secret store.\n"
    )
    draft = b.finish(
        f"{org} platform",
        f"A monorepo: {len(names)} Python services ({', '.join(names)}), a web client, Kubernetes manifests, "
        "Terraform, notebooks and vendored code.",
    )
    messages = [message for message, _ in draft.commits]
    placed = tuple((name, min(messages.index(at) + 1 + d.int(0, 3), len(messages)), text) for name, at, text in tags)
    notes = tuple((messages.index(at) + 1, text) for at, text in b.notes)
    return dataclasses.replace(draft, tags=placed, notes=notes, stashes=tuple(b.stashes))


def other_settings(name: str, prefix: str, queue: str = "amqp://queue.internal:5672") -> str:
    """The settings module of a service other than the first (`queue`: the broker URL it falls back to)."""
    return (
        f'"""Settings of the {name} service."""\n\nimport os\n\nLOG_LEVEL = os.environ.get("{prefix}LOG_LEVEL", "info")\n'
        f'QUEUE_URL = os.environ.get("{prefix}QUEUE_URL", "{queue}")\n'
    )


def twins(value: str) -> list[str]:
    """Values a record regenerated without `value` might hold instead: empty, a placeholder, and one
    of the same length that differs from it in every character."""
    return ["", "REDACTED", "".join("b" if c == "a" else "a" for c in value)]


def secret_part(form: str, regenerated: list[str]) -> str:
    """The part of an encoded `form` that depends on the secret: from the first character where it
    differs from any of the same encoding regenerated without the secret (a gzip header, the opening
    of a public record, are structure that a correct regeneration shares)."""
    return form[max(len(os.path.commonprefix([form, other])) for other in regenerated) :]


def replace_also(b: Builder, secret: Secret, form: str) -> Secret:
    """`secret` with one more exact form (`Secret.also`), replaced in the builder's list."""
    grown = dataclasses.replace(secret, also=(*secret.also, form))
    b.secrets[b.secrets.index(secret)] = grown
    return grown


def certificate(private_pem: str, name: str) -> str:
    """A self-signed certificate for the key (deterministic: Ed25519 signatures are, and EC keys are
    signed by a fixed Ed25519 issuer key derived from the private key's bytes)."""
    import datetime

    from cryptography import x509
    from cryptography.hazmat.primitives.asymmetric import ed25519
    from cryptography.x509.oid import NameOID

    key = serialization.load_pem_private_key(private_pem.encode(), None)
    issuer = ed25519.Ed25519PrivateKey.from_private_bytes(hashlib.sha256(private_pem.encode()).digest())
    subject = x509.Name([x509.NameAttribute(NameOID.COMMON_NAME, name)])
    start = datetime.datetime(2024, 1, 1, tzinfo=datetime.UTC)
    cert = (
        x509.CertificateBuilder()
        .subject_name(subject)
        .issuer_name(x509.Name([x509.NameAttribute(NameOID.COMMON_NAME, "internal CA")]))
        .public_key(key.public_key())
        .serial_number(int.from_bytes(hashlib.sha256(name.encode()).digest()[:8], "big"))
        .not_valid_before(start)
        .not_valid_after(start + datetime.timedelta(days=825))
        .sign(issuer, None)
    )
    return cert.public_bytes(serialization.Encoding.PEM).decode().strip()


def values_decoy(value: str, path: str):
    from redaction_pressure.audit.plan import Decoy

    return Decoy("hash_digest", value, path)


SCENARIO = Scenario("platform", "expert", make)
