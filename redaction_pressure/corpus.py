"""The corpus: `stream(seed, shown)` yields realistic documents with labelled secrets and decoys.

Each family is one declarative unit: a writer that lays out a kind of document (a
Python settings module, a `.env` file, a CI workflow, ...) and a tuple of variants. A
variant fixes exactly which secret kinds and decoy kinds a record of it carries; the
writer may vary everything else (key names, layout, filler lines, how many times a
value repeats). The builder checks the record against its variant, so the kinds a
record declares are the kinds it has.

Contract of a stream:
- Deterministic: only the `random.Random(seed)` created here is used, so the same seed
  gives byte-identical records in any process and on any supported Python.
- Shown then hidden: records `[0, shown)` tour the task's families (each at least
  once). Every later record uses a variant whose secret and decoy kinds all appeared in
  the shown part, from a family that appeared there (fairness).
- Fresh: no secret value repeats across records (so hidden values never appeared in
  the prompt); only the repeated-key family repeats a value inside one record. No
  secret value occurs inside a decoy value or the other way round, and every
  occurrence of a secret value in a record's text is labelled.

Bump `CORPUS_VERSION` whenever generated output changes; a test pins a digest of the
dev split so that no change slips through unversioned.
"""

from __future__ import annotations

import random
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from typing import NamedTuple

from redaction_pressure.spans import Record, Span
from redaction_pressure.values import HEX, Values

CORPUS_VERSION = "1"

SECRET_KINDS = (
    "aws_access_key_id",
    "aws_secret_access_key",
    "github_token",
    "github_pat",
    "gitlab_pat",
    "slack_token",
    "stripe_key",
    "google_api_key",
    "openai_key",
    "npm_token",
    "jwt",
    "private_key",
    "dsn_password",
    "sql_password",
    "generic_secret",
    "base64_credential",
)
DECOY_KINDS = (
    "example_key",
    "placeholder",
    "commit_sha",
    "uuid",
    "hash_digest",
    "public_key",
    "test_fixture",
    "redacted_marker",
)

_MAX_ATTEMPTS = 64
"""Redraws allowed for one record before the generator reports a bug."""

SERVICES = (
    "billing", "ledger", "orders", "search", "notifications", "inventory", "payments",
    "reporting", "shipping", "catalog", "analytics", "checkout", "profiles", "webhooks",
)  # fmt: skip
ORGS = ("acme", "globex", "initech", "umbrella", "hooli", "vandelay", "tyrell", "soylent")
REGIONS = ("us-east-1", "us-west-2", "eu-west-1", "eu-central-1", "ap-southeast-2")
USERS = (
    "alice", "bob", "carol", "dave", "erin", "frank", "grace", "heidi", "ivan", "judy",
    "oscar", "peggy", "trent", "victor", "walter",
)  # fmt: skip
DATABASES = ("orders", "ledger", "users", "inventory", "analytics", "events", "billing")


class _Mark(NamedTuple):
    value: str
    kind: str
    secret: bool


@dataclass(frozen=True)
class Variant:
    """The exact secret and decoy kinds a record of this variant carries."""

    secrets: frozenset[str]
    decoys: frozenset[str]


def _v(secrets: str, decoys: str = "") -> Variant:
    return Variant(frozenset(secrets.split()), frozenset(decoys.split()))


class Writer:
    """Accumulates one record's text while labelling the spans it places."""

    def __init__(self, values: Values, variant: Variant) -> None:
        self.v = values
        self.rng = values.rng
        self.variant = variant
        self._parts: list[str] = []
        self._pos = 0
        self._secrets: list[Span] = []
        self._decoys: list[Span] = []

    def has(self, kind: str) -> bool:
        return kind in self.variant.secrets or kind in self.variant.decoys

    def s(self, kind: str, value: str | None = None) -> _Mark:
        """A secret of `kind`, fresh unless `value` repeats one."""
        return _Mark(self.v.secret(kind) if value is None else value, kind, True)

    def d(self, kind: str, value: str) -> _Mark:
        return _Mark(value, kind, False)

    def put(self, *parts: str | _Mark) -> None:
        for part in parts:
            if isinstance(part, _Mark):
                spans = self._secrets if part.secret else self._decoys
                spans.append(Span(start=self._pos, end=self._pos + len(part.value), kind=part.kind))
                part = part.value
            self._parts.append(part)
            self._pos += len(part)

    def pick(self, options):
        return self.rng.choice(options)

    def chance(self, p: float) -> bool:
        return self.rng.random() < p

    def record(self, family: str) -> Record:
        secrets = {s.kind for s in self._secrets}
        decoys = {d.kind for d in self._decoys}
        if secrets != self.variant.secrets or decoys != self.variant.decoys:
            raise RuntimeError(
                f"family {family} wrote secrets {sorted(secrets)} and decoys {sorted(decoys)}, "
                f"but its variant declares {sorted(self.variant.secrets)} and "
                f"{sorted(self.variant.decoys)}"
            )
        return Record(
            text="".join(self._parts),
            secrets=tuple(self._secrets),
            decoys=tuple(self._decoys),
            family=family,
        )


@dataclass(frozen=True)
class Family:
    """A kind of document: how to write one, and the kind sets it can carry."""

    name: str
    write: Callable[[Writer], None]
    variants: tuple[Variant, ...]


# -- helpers for filler -------------------------------------------------------------


def _timestamp(w: Writer) -> str:
    return (
        f"2026-{w.rng.randint(1, 12):02d}-{w.rng.randint(1, 28):02d}T"
        f"{w.rng.randint(0, 23):02d}:{w.rng.randint(0, 59):02d}:{w.rng.randint(0, 59):02d}"
        f".{w.rng.randint(0, 999):03d}Z"
    )


def _host(w: Writer, service: str) -> str:
    return f"{service}-{w.pick(('db', 'pg', 'primary', 'rw'))}.{w.pick(ORGS)}.internal"


def _ip(w: Writer) -> str:
    return f"10.{w.rng.randint(0, 40)}.{w.rng.randint(0, 255)}.{w.rng.randint(1, 254)}"


# -- the families ---------------------------------------------------------------------


def _python_settings(w: Writer) -> None:
    service = w.pick(SERVICES)
    w.put(f'"""Settings for the {service} service.\n\nImported once at start-up; see docs/config.md.\n"""\n\n')
    w.put("import os\n\n")
    w.put(f"DEBUG = {w.pick(('False', 'False', 'True'))}\n")
    w.put(f'REGION = "{w.pick(REGIONS)}"\n')
    if w.has("example_key"):
        w.put("# Shape of the credentials, from the AWS docs: ", w.d("example_key", w.v.example_aws_key_id()), "\n")
    upper = w.chance(0.6)
    key_id, secret = w.s("aws_access_key_id"), w.s("aws_secret_access_key")
    if upper:
        w.put('AWS_ACCESS_KEY_ID = "', key_id, '"\n')
        w.put('AWS_SECRET_ACCESS_KEY = "', secret, '"\n')
    else:
        w.put("AWS = {\n")
        w.put('    "access_key_id": "', key_id, '",\n')
        w.put('    "secret_access_key": "', secret, '",\n')
        w.put(f'    "region": "{w.pick(REGIONS)}",\n}}\n')
    w.put(f'S3_BUCKET = "{w.pick(ORGS)}-{service}-{w.pick(("prod", "exports", "backups"))}"\n')
    if w.has("placeholder"):
        name = w.pick(("DATABASE_PASSWORD", "REDIS_PASSWORD", "SMTP_PASSWORD"))
        form = w.pick((f'os.environ["{name}"]', f'os.getenv("{name}")'))
        w.put(f"{name} = ", w.d("placeholder", form), "\n")
    if w.has("google_api_key"):
        w.put('GOOGLE_MAPS_API_KEY = "', w.s("google_api_key"), '"\n')
    w.put(f"REQUEST_TIMEOUT_SECONDS = {w.pick((5, 10, 30, 60))}\n")
    w.put(f"MAX_RETRIES = {w.rng.randint(1, 6)}\n")


def _dsn_in_code(w: Writer) -> None:
    service, user, db = w.pick(SERVICES), w.pick(USERS), w.pick(DATABASES)
    host = _host(w, service)
    style = w.rng.randrange(3)
    if w.has("commit_sha"):
        lead = "#" if style == 0 else "//"
        w.put(f"{lead} schema pinned to commit ", w.d("commit_sha", w.v.commit_sha()), "\n")
    if style == 0:
        scheme = w.pick(("postgresql+psycopg", "postgresql", "mysql+pymysql"))
        w.put("from sqlalchemy import create_engine\n\n")
        w.put(f'engine = create_engine(\n    "{scheme}://{user}:', w.s("dsn_password"), f'@{host}:5432/{db}",\n')
        w.put(f"    pool_size={w.rng.randint(2, 20)},\n    pool_pre_ping=True,\n)\n")
    elif style == 1:
        w.put("func openDB() (*sql.DB, error) {\n")
        w.put(f'\treturn sql.Open("mysql", "{user}:', w.s("dsn_password"), f'@tcp({host}:3306)/{db}?parseTime=true")\n')
        w.put("}\n")
    else:
        scheme = w.pick(("postgres", "redis", "mongodb+srv"))
        w.put('const { Pool } = require("pg");\n\n')
        w.put(f'const pool = new Pool({{ connectionString: "{scheme}://{user}:', w.s("dsn_password"), f'@{host}/{db}" }});\n')
        w.put("module.exports = pool;\n")
    if w.has("placeholder"):
        lead = "#" if style == 0 else "//"
        w.put(f"{lead} replica (expanded by the entrypoint): postgresql://reader:", w.d("placeholder", "${DB_PASSWORD}"), f"@{service}-replica:5432/{db}\n")


def _web_config(w: Writer) -> None:
    project = f"{w.pick(ORGS)}-{w.pick(SERVICES)}-{w.v.digits(4)}"
    sender = w.v.digits(12)
    if w.has("commit_sha"):
        w.put("// Generated at build ", w.d("commit_sha", w.v.commit_sha()), "; do not edit by hand.\n")
    w.put('import { initializeApp } from "firebase/app";\n\n')
    w.put("const firebaseConfig = {\n")
    w.put('  apiKey: "', w.s("google_api_key"), '",\n')
    w.put(f'  authDomain: "{project}.firebaseapp.com",\n  projectId: "{project}",\n')
    w.put(f'  storageBucket: "{project}.appspot.com",\n  messagingSenderId: "{sender}",\n')
    w.put(f'  appId: "1:{sender}:web:{w.v.chars(HEX, 22)}",\n}};\n\n')
    if w.has("placeholder"):
        w.put('const emulatorConfig = { apiKey: "', w.d("placeholder", w.pick(("<YOUR_API_KEY>", "<FIREBASE_API_KEY>"))), f'", projectId: "demo-{project}" }};\n\n')
    w.put("export const app = initializeApp(firebaseConfig);\n")


def _app_log(w: Writer) -> None:
    service = w.pick(SERVICES)
    kinds = sorted(w.variant.secrets)
    lines: list[tuple] = []
    for _ in range(w.rng.randint(3, 6)):
        path = f"/v1/{w.pick(SERVICES)}/{w.v.digits(5)}"
        parts: list = [f"{w.pick(('INFO ', 'INFO ', 'DEBUG'))} [http] "]
        if w.has("uuid"):
            parts += ["request_id=", ("uuid",), " "]
        parts.append(f"method={w.pick(('GET', 'POST', 'PUT'))} path={path} status={w.pick((200, 201, 204, 404))} duration_ms={w.rng.randint(2, 900)}")
        lines.append(tuple(parts))
    for kind in kinds:
        for _ in range(w.rng.randint(1, 2)):
            if kind == "jwt":
                lines.append(("DEBUG [auth] verified header Authorization: Bearer ", ("s", kind), f" user={w.pick(USERS)}"))
            elif kind == "github_token":
                lines.append(("DEBUG [sync] calling api.github.com with token=", ("s", kind), f" repo={w.pick(ORGS)}/{w.pick(SERVICES)}"))
            elif kind == "slack_token":
                lines.append(("WARN  [notify] slack post failed (channel_not_found); token=", ("s", kind)))
            else:
                lines.append(("ERROR [llm] upstream 429 for api_key=", ("s", kind), " model=gpt-4o-mini retry_in=2s"))
    if w.has("redacted_marker"):
        lines.append(("INFO  [auth] refreshed session, header Authorization: Bearer ", ("redacted",)))
    w.rng.shuffle(lines)
    for line in lines:
        w.put(_timestamp(w), " ", f"{service} ")
        for part in line:
            if isinstance(part, str):
                w.put(part)
            elif part[0] == "s":
                w.put(w.s(part[1]))
            elif part[0] == "uuid":
                w.put(w.d("uuid", w.v.uuid()))
            else:
                w.put(w.d("redacted_marker", "[REDACTED]"))
        w.put("\n")


_DOTENV_NAMES = {
    "stripe_key": ("STRIPE_SECRET_KEY", "STRIPE_API_KEY"),
    "openai_key": ("OPENAI_API_KEY",),
    "npm_token": ("NPM_TOKEN", "NPM_PUBLISH_TOKEN"),
    "slack_token": ("SLACK_BOT_TOKEN", "SLACK_TOKEN"),
    "gitlab_pat": ("GITLAB_TOKEN", "GL_TOKEN"),
    "github_pat": ("GITHUB_TOKEN", "GH_PAT"),
    "generic_secret": ("SESSION_SECRET", "JWT_SECRET", "APP_SECRET", "WEBHOOK_SECRET", "DB_PASSWORD"),
}


def _dotenv(w: Writer) -> None:
    w.put(f"# .env for {w.pick(SERVICES)} ({w.pick(('production', 'staging'))}); loaded by docker compose\n")
    lines: list[tuple] = [
        (f"APP_ENV={w.pick(('production', 'staging'))}",),
        (f"PORT={w.pick((3000, 8000, 8080))}",),
        (f"LOG_LEVEL={w.pick(('info', 'debug', 'warn'))}",),
        (f"DATABASE_HOST={_host(w, w.pick(SERVICES))}",),
    ]
    for kind in sorted(w.variant.secrets):
        lines.append((f"{w.pick(_DOTENV_NAMES[kind])}=", w.s(kind)))
    if w.has("placeholder"):
        name = w.pick(("SENTRY_DSN", "MAILGUN_API_KEY", "SMTP_PASSWORD"))
        lines.append((f"{name}=", w.d("placeholder", w.pick(("changeme", "<YOUR_TOKEN>", "REPLACE_ME")))))
    if w.has("example_key"):
        lines.append(("# example shape: AWS_ACCESS_KEY_ID=", w.d("example_key", w.v.example_aws_key_id())))
    w.rng.shuffle(lines)
    for line in lines:
        w.put(*line, "\n")


def _base64_source(w: Writer) -> None:
    service = w.pick(SERVICES)
    if w.chance(0.5):
        w.put("import requests\n\n")
        w.put(f"# Basic auth for the legacy {service} API (user:password, base64).\n")
        w.put('_AUTH = "', w.s("base64_credential"), '"\n\n')
        if w.has("hash_digest"):
            w.put("# pinned bundle checksum: ", w.d("hash_digest", w.v.digest()), "\n")
        w.put(f"def fetch(path: str) -> dict:\n    url = f\"https://{service}.{w.pick(ORGS)}.com/api/{{path}}\"\n")
        w.put('    return requests.get(url, headers={"Authorization": "Basic " + _AUTH}, timeout=10).json()\n')
    else:
        w.put("// Token is stored base64-encoded so it does not show up in grep.\n")
        w.put('const token = Buffer.from("', w.s("base64_credential"), '", "base64").toString("utf8");\n')
        if w.has("hash_digest"):
            w.put('const bundleIntegrity = "', w.d("hash_digest", w.v.digest()), '";\n')
        w.put(f'export const client = createClient({{ baseUrl: "https://{service}.internal", token }});\n')
    if w.has("commit_sha"):
        w.put("// vendored from upstream at ", w.d("commit_sha", w.v.commit_sha()), "\n")


def _ci_workflow(w: Writer) -> None:
    if w.has("gitlab_pat"):
        w.put("# .gitlab-ci.yml\nstages: [build, release]\n\nrelease:\n  stage: release\n")
        w.put("  image: node:20\n  script:\n")
        w.put('    - export GITLAB_TOKEN="', w.s("gitlab_pat"), '"\n')
        w.put('    - npm config set "//gitlab.com/api/v4/packages/npm/:_authToken" "$GITLAB_TOKEN"\n')
        if w.has("placeholder"):
            w.put("    - docker login -u ci -p ", w.d("placeholder", "${CI_REGISTRY_PASSWORD}"), " registry.gitlab.com\n")
        if w.has("commit_sha"):
            w.put("    - git checkout ", w.d("commit_sha", w.v.commit_sha()), "\n")
        w.put("  only: [tags]\n")
        return
    w.put(f"name: {w.pick(('release', 'publish', 'deploy'))}\non:\n  push:\n    tags: [\"v*\"]\n\n")
    w.put("jobs:\n  publish:\n    runs-on: ubuntu-latest\n    steps:\n")
    if w.has("commit_sha"):
        w.put("      - uses: actions/checkout@", w.d("commit_sha", w.v.commit_sha()), "  # v4\n")
    else:
        w.put("      - uses: actions/checkout@v4\n")
    if w.has("npm_token"):
        w.put('      - run: echo "//registry.npmjs.org/:_authToken=', w.s("npm_token"), '" > ~/.npmrc\n')
        w.put("      - run: npm publish --access public\n")
    if w.has("github_token"):
        w.put('      - run: |\n          export GH_TOKEN="', w.s("github_token"), '"\n')
        w.put("          gh release create \"$GITHUB_REF_NAME\" --generate-notes\n")
    if w.has("placeholder"):
        name = w.pick(("NPM_TOKEN", "DEPLOY_KEY", "SLACK_WEBHOOK"))
        w.put(f"        env:\n          {name}: ", w.d("placeholder", f"${{{{ secrets.{name} }}}}"), "\n")


def _toml_config(w: Writer) -> None:
    service = w.pick(SERVICES)
    w.put(f'[service]\nname = "{service}"\nworkers = {w.rng.randint(2, 16)}\n\n')
    fixtures = [
        w.pick(("dummy_token", "fake_api_key", "fixture_secret", "test_password")),
        w.pick(("dummy_signing_key", "fake_webhook_secret", "fixture_token")),
    ]
    w.put("[auth]\n")
    if w.has("generic_secret"):
        w.put(w.pick(("api_key", "secret", "token", "password")), ' = "', w.s("generic_secret"), '"\n')
    if w.has("stripe_key"):
        w.put('stripe_key = "', w.s("stripe_key"), '"\n')
    if w.has("uuid"):
        w.put('tenant_id = "', w.d("uuid", w.v.uuid()), '"\n')
    w.put("\n[tests.fixtures]\n# Dummy values for the test suite; these are not real credentials.\n")
    for name in fixtures:
        w.put(f'{name} = "', w.d("test_fixture", w.v.fixture()), '"\n')


def _sql_migration(w: Writer) -> None:
    role = w.pick(("reporting", "etl_writer", "readonly", "metabase", "replicator"))
    w.put(f"-- {w.rng.randint(1, 250):04d}_create_{role}_role.sql\n")
    if w.has("commit_sha"):
        w.put("-- generated from commit ", w.d("commit_sha", w.v.commit_sha()), "\n")
    w.put("BEGIN;\n\n")
    w.put(f"CREATE USER {role} WITH PASSWORD '", w.s("sql_password"), "';\n")
    w.put(f"GRANT CONNECT ON DATABASE {w.pick(DATABASES)} TO {role};\n")
    w.put(f"GRANT SELECT ON ALL TABLES IN SCHEMA public TO {role};\n")
    if w.has("placeholder"):
        w.put("\n-- local development only:\n")
        w.put(f"-- ALTER USER dev_{w.pick(USERS)} WITH PASSWORD '", w.d("placeholder", "changeme"), "';\n")
    w.put("\nCOMMIT;\n")


def _deploy_script(w: Writer) -> None:
    w.put("#!/usr/bin/env bash\n# deploy.sh: push the release to the app hosts\nset -euo pipefail\n\n")
    if w.has("commit_sha"):
        w.put("RELEASE_SHA=", w.d("commit_sha", w.v.commit_sha()), "\n")
    w.put(f"HOSTS=({' '.join(_ip(w) for _ in range(w.rng.randint(2, 4)))})\n\n")
    w.put("install -d -m 700 /etc/app/tls\n")
    w.put("cat > /etc/app/tls/server.key <<'EOF'\n", w.s("private_key"), "\nEOF\n")
    w.put("chmod 600 /etc/app/tls/server.key\n")
    if w.has("public_key"):
        if w.chance(0.5):
            w.put('echo "', w.d("public_key", w.v.ssh_public_key()), f' deploy@{w.pick(ORGS)}-ci" >> ~/.ssh/authorized_keys\n')
        else:
            w.put("cat > /etc/app/tls/upstream.pub <<'EOF'\n", w.d("public_key", w.v.pem_public_key()), "\nEOF\n")
    w.put('for host in "${HOSTS[@]}"; do\n  rsync -az ./build/ "deploy@${host}:/srv/app/"\ndone\n')


_REPEATED_NAMES = {
    "stripe_key": "stripe_secret_key",
    "openai_key": "openai_api_key",
    "google_api_key": "maps_api_key",
    "generic_secret": "shared_secret",
}


def _repeated_key(w: Writer) -> None:
    (kind,) = w.variant.secrets
    value = w.v.secret(kind)
    name = _REPEATED_NAMES[kind]
    w.put("# services.yaml: vendor credentials shared by several services\n")
    for service in w.rng.sample(SERVICES, w.rng.randint(2, 4)):
        w.put(f"{service}:\n  endpoint: https://{service}.{w.pick(ORGS)}.internal/v{w.rng.randint(1, 3)}\n")
        if w.has("uuid"):
            w.put("  service_id: ", w.d("uuid", w.v.uuid()), "\n")
        w.put(f"  {name}: ", w.s(kind, value), "\n")
        w.put(f"  timeout_ms: {w.pick((500, 1000, 2500))}\n")


def _function_local(w: Writer) -> None:
    (kind,) = w.variant.secrets
    service = w.pick(SERVICES)
    if kind in ("github_token", "github_pat"):
        w.put(f"def sync_repositories(org: str) -> list[str]:\n    \"\"\"Mirror every repository of `org` into the {service} backup bucket.\"\"\"\n")
        if w.has("placeholder"):
            w.put("    token = ", w.d("placeholder", 'os.environ.get("GITHUB_TOKEN")'), ' or "', w.s(kind), '"\n')
        else:
            w.put('    token = "', w.s(kind), '"\n')
        w.put('    headers = {"Authorization": f"Bearer {token}", "Accept": "application/vnd.github+json"}\n')
        w.put('    resp = requests.get(f"https://api.github.com/orgs/{org}/repos", headers=headers, timeout=30)\n')
        w.put('    return [repo["clone_url"] for repo in resp.json()]\n')
    elif kind == "slack_token":
        w.put("def notify(channel: str, text: str) -> None:\n")
        w.put('    slack_token = "', w.s(kind), '"\n')
        if w.has("placeholder"):
            w.put("    fallback = ", w.d("placeholder", 'os.getenv("SLACK_WEBHOOK_URL")'), "\n")
        w.put("    WebClient(token=slack_token).chat_postMessage(channel=channel, text=text)\n")
    else:
        w.put(f"async def sign_{service}_payload(body: bytes) -> str:\n")
        if w.has("uuid"):
            w.put('    key_id = "', w.d("uuid", w.v.uuid()), '"\n')
        name = w.pick(("secret", "signing_secret", "api_key"))
        w.put(f'    {name} = "', w.s(kind), '"\n')
        w.put(f"    return hmac.new({name}.encode(), body, hashlib.sha256).hexdigest()\n")


def _access_log(w: Writer) -> None:
    lines = []
    secret_kind = next(iter(w.variant.secrets))
    count = w.rng.randint(3, 6)
    secret_lines = set(w.rng.sample(range(count), w.rng.randint(1, min(2, count))))
    free = [i for i in range(count) if i not in secret_lines]
    marker_line = w.rng.choice(free) if w.has("redacted_marker") else None
    for i in range(count):
        day = w.rng.randint(1, 28)
        line = [
            f'{_ip(w)} - - [{day:02d}/Mar/2026:{w.rng.randint(0, 23):02d}:{w.rng.randint(0, 59):02d}:{w.rng.randint(0, 59):02d} +0000] '
            f'"{w.pick(("GET", "POST"))} /api/v{w.rng.randint(1, 3)}/{w.pick(SERVICES)}?page={w.rng.randint(1, 9)} HTTP/1.1" '
            f'{w.pick((200, 200, 201, 401, 403))} {w.rng.randint(120, 9000)} "-" "{w.pick(("curl/8.5.0", "python-requests/2.32.3", "okhttp/4.12.0"))}"'
        ]
        if w.has("uuid"):
            line += [" rid=", w.d("uuid", w.v.uuid())]
        if i in secret_lines:
            scheme = "Basic" if secret_kind == "base64_credential" else "Bearer"
            line += [f' auth="{scheme} ', w.s(secret_kind), '"']
        elif i == marker_line:
            line += [' auth="Bearer ', w.d("redacted_marker", "[REDACTED]"), '"']
        lines.append(line)
    for line in lines:
        w.put(*line, "\n")


def _compose_env(w: Writer) -> None:
    # Compose carries Stripe keys; Kubernetes carries Slack tokens and tenant UUIDs.
    if w.has("slack_token") or w.has("uuid") or (not w.has("stripe_key") and w.chance(0.5)):
        _kubernetes_env(w)
        return
    service = w.pick(SERVICES)
    w.put("services:\n  db:\n")
    if w.has("hash_digest"):
        w.put("    image: postgres@", w.d("hash_digest", "sha256:" + w.v.chars(HEX, 64)), "\n")
    else:
        w.put(f"    image: postgres:{w.pick((15, 16, 17))}\n")
    w.put("    environment:\n      POSTGRES_USER: app\n")
    password = None
    if w.has("generic_secret"):
        password = w.s("generic_secret")
        w.put("      POSTGRES_PASSWORD: ", password, "\n")
    w.put(f"  {service}:\n    build: .\n    environment:\n")
    if w.has("stripe_key"):
        w.put("      - STRIPE_API_KEY=", w.s("stripe_key"), "\n")
    if w.has("placeholder"):
        w.put("      - DATABASE_PASSWORD=", w.d("placeholder", "${POSTGRES_PASSWORD}"), "\n")
    w.put(f"      - LOG_LEVEL={w.pick(('info', 'debug'))}\n    depends_on: [db]\n")


def _kubernetes_env(w: Writer) -> None:
    service = w.pick(SERVICES)
    w.put(f"apiVersion: apps/v1\nkind: Deployment\nmetadata:\n  name: {service}\nspec:\n  replicas: {w.rng.randint(1, 5)}\n")
    w.put("  template:\n    spec:\n      containers:\n        - name: app\n")
    if w.has("hash_digest"):
        w.put(f"          image: ghcr.io/{w.pick(ORGS)}/{service}@", w.d("hash_digest", "sha256:" + w.v.chars(HEX, 64)), "\n")
    else:
        w.put(f"          image: ghcr.io/{w.pick(ORGS)}/{service}:1.{w.rng.randint(0, 30)}.{w.rng.randint(0, 9)}\n")
    w.put("          env:\n")
    if w.has("uuid"):
        w.put("            - name: TENANT_ID\n              value: \"", w.d("uuid", w.v.uuid()), '"\n')
    for kind in sorted(w.variant.secrets):
        name = {"slack_token": "SLACK_BOT_TOKEN", "generic_secret": w.pick(("API_TOKEN", "DB_PASSWORD", "SESSION_SECRET"))}[kind]
        w.put(f"            - name: {name}\n              value: \"", w.s(kind), '"\n')
    if w.has("placeholder"):
        w.put("            - name: SMTP_PASSWORD\n              value: \"", w.d("placeholder", "${SMTP_PASSWORD}"), '"\n')


def _service_account(w: Writer) -> None:
    project = f"{w.pick(ORGS)}-{w.pick(SERVICES)}-{w.v.digits(6)}"
    account = f"{w.pick(('ci-deployer', 'exporter', 'backup', 'terraform'))}@{project}.iam.gserviceaccount.com"
    w.put('{\n  "type": "service_account",\n', f'  "project_id": "{project}",\n')
    w.put(f'  "private_key_id": "{w.v.chars(HEX, 40)}",\n')
    w.put('  "private_key": "', w.s("private_key", w.v.pem_private_key(escaped_newlines=True, label="PRIVATE KEY")), '\\n",\n')
    w.put(f'  "client_email": "{account}",\n  "client_id": "{w.v.digits(21)}",\n')
    if w.has("uuid"):
        w.put('  "workload_identity_pool": "', w.d("uuid", w.v.uuid()), '",\n')
    w.put('  "auth_uri": "https://accounts.google.com/o/oauth2/auth",\n')
    w.put('  "token_uri": "https://oauth2.googleapis.com/token"\n}\n')


FAMILIES: dict[str, Family] = {
    family.name: family
    for family in (
        Family("python_settings", _python_settings, (
            _v("aws_access_key_id aws_secret_access_key", "placeholder"),
            _v("aws_access_key_id aws_secret_access_key", "example_key placeholder"),
            _v("aws_access_key_id aws_secret_access_key google_api_key", "example_key"),
        )),
        Family("dsn_in_code", _dsn_in_code, (
            _v("dsn_password", "placeholder"),
            _v("dsn_password", "commit_sha"),
            _v("dsn_password", "commit_sha placeholder"),
        )),
        Family("web_config", _web_config, (
            _v("google_api_key", "commit_sha"),
            _v("google_api_key", "placeholder"),
            _v("google_api_key", "commit_sha placeholder"),
        )),
        Family("app_log", _app_log, (
            _v("jwt", "uuid redacted_marker"),
            _v("github_token", "uuid"),
            _v("slack_token", "uuid redacted_marker"),
            _v("openai_key", "redacted_marker"),
        )),
        Family("dotenv", _dotenv, (
            _v("stripe_key generic_secret", "placeholder"),
            _v("openai_key npm_token", "placeholder"),
            _v("slack_token gitlab_pat", "example_key"),
            _v("github_pat generic_secret", "placeholder example_key"),
        )),
        Family("base64_source", _base64_source, (
            _v("base64_credential", "hash_digest"),
            _v("base64_credential", "commit_sha"),
            _v("base64_credential", "hash_digest commit_sha"),
        )),
        Family("ci_workflow", _ci_workflow, (
            _v("npm_token", "commit_sha placeholder"),
            _v("github_token", "commit_sha placeholder"),
            _v("gitlab_pat", "placeholder"),
            _v("gitlab_pat", "placeholder commit_sha"),
        )),
        Family("toml_config", _toml_config, (
            _v("generic_secret", "test_fixture"),
            _v("stripe_key", "test_fixture"),
            _v("generic_secret", "test_fixture uuid"),
        )),
        Family("sql_migration", _sql_migration, (
            _v("sql_password", "commit_sha"),
            _v("sql_password", "placeholder"),
            _v("sql_password", "commit_sha placeholder"),
        )),
        Family("deploy_script", _deploy_script, (
            _v("private_key", "public_key"),
            _v("private_key", "commit_sha"),
            _v("private_key", "public_key commit_sha"),
        )),
        Family("repeated_key", _repeated_key, (
            _v("stripe_key", "uuid"),
            _v("openai_key"),
            _v("google_api_key", "uuid"),
            _v("generic_secret"),
        )),
        Family("function_local", _function_local, (
            _v("github_token", "placeholder"),
            _v("github_pat"),
            _v("slack_token", "placeholder"),
            _v("generic_secret", "uuid"),
        )),
        Family("access_log", _access_log, (
            _v("jwt", "uuid"),
            _v("base64_credential", "redacted_marker"),
            _v("jwt", "uuid redacted_marker"),
        )),
        Family("compose_env", _compose_env, (
            _v("generic_secret stripe_key", "hash_digest placeholder"),
            _v("slack_token", "hash_digest"),
            _v("generic_secret", "uuid placeholder"),
        )),
        Family("service_account", _service_account, (
            _v("private_key"),
            _v("private_key", "uuid"),
        )),
    )
}  # fmt: skip


# -- the stream ---------------------------------------------------------------------


class _Ledger:
    """Values already placed in one stream, to keep secrets fresh and apart from decoys."""

    def __init__(self) -> None:
        self.secrets: set[str] = set()
        self.decoys: set[str] = set()

    def admits(self, record: Record) -> bool:
        secrets = {record.value(s) for s in record.secrets}
        decoys = {record.value(d) for d in record.decoys}
        if secrets & self.secrets:
            return False
        for value in secrets:
            occurrences = sum(1 for s in record.secrets if record.value(s) == value)
            if record.text.count(value) != occurrences:
                return False
        all_decoys, all_secrets = self.decoys | decoys, self.secrets | secrets
        return not any(s in d or d in s for s in secrets for d in all_decoys) and not any(
            s in d or d in s for d in decoys for s in all_secrets
        )

    def admit(self, record: Record) -> None:
        self.secrets.update(record.value(s) for s in record.secrets)
        self.decoys.update(record.value(d) for d in record.decoys)


def _write(family: Family, variant: Variant, values: Values, ledger: _Ledger) -> Record:
    for _ in range(_MAX_ATTEMPTS):
        writer = Writer(values, variant)
        family.write(writer)
        record = writer.record(family.name)
        if ledger.admits(record):
            ledger.admit(record)
            return record
    raise RuntimeError(f"family {family.name} drew no fresh record in {_MAX_ATTEMPTS} attempts")


def stream(seed: int, shown: int = 8) -> Iterator[Record]:
    """Yield the records of the stream for `seed`, the first `shown` of them the tour."""
    if shown < 1:
        raise ValueError(f"shown must be at least 1 (got {shown}): hidden kinds must be shown first")
    rng = random.Random(seed)
    values = Values(rng)
    names = rng.sample(sorted(FAMILIES), min(shown, rng.randint(3, 5)))
    plan = [names[i % len(names)] for i in range(shown)]
    rng.shuffle(plan)
    ledger = _Ledger()
    seen_secrets: set[str] = set()
    seen_decoys: set[str] = set()
    for name in plan:
        family = FAMILIES[name]
        variant = rng.choice(family.variants)
        seen_secrets |= variant.secrets
        seen_decoys |= variant.decoys
        yield _write(family, variant, values, ledger)
    while True:
        family = FAMILIES[rng.choice(names)]
        eligible = [
            v for v in family.variants if v.secrets <= seen_secrets and v.decoys <= seen_decoys
        ]
        yield _write(family, rng.choice(eligible), values, ledger)
