"""`.env` files: `KEY=value` lines for several vendors, with look-alikes under the same words.

Dialect: `export ` or not, the quote the task uses (none, double, single; unsafe values
get single quotes), a header comment, section comments, and 2 to 4 credential clusters
(published tokens, house tokens, generic secrets, passwords, a DATABASE_URL).
Every record sources cleanly in bash and each secret is a variable's exact value.
"""

from __future__ import annotations

from redaction_pressure.corpus import words as w
from redaction_pressure.corpus.dialect import Builder, Family, FamilyDialect
from redaction_pressure.corpus.document import Writer
from redaction_pressure.corpus.families.common import ALLOW_MARKERS, cluster, kinds, note, shell_quote
from redaction_pressure.corpus.values import placeholder

KINDS = (
    "stripe_key", "openai_key", "npm_token", "slack_token", "gitlab_pat", "github_pat", "github_token",
    "generic_secret", "generic_secret", "generic_secret", "password", "jwt", "aws_access_key_id",
    "generic_secret", "jwt",
) + ("house_token",) * 12  # fmt: skip


def draw(b: Builder) -> FamilyDialect:
    d = b.d
    layout = {
        "export": d.chance(0.25),
        "quote": d.pick(("", "", '"', "'")),
        "header": d.pick(
            (
                "# {service} ({env}), loaded by docker compose",
                "# Environment for {service} - {env}",
                "## {service}.env",
                "",
            )
        ),
        "sections": d.chance(0.5),
        "db_url": d.chance(0.4),
        "pragma": d.chance(0.6),
        "marker": d.pick(ALLOW_MARKERS),
    }
    share = b.world.level.house_share
    if layout["db_url"] and share and d.chance(share):
        # At a level with a house share, as often as it says, the file has no database URL.
        layout["db_url"] = False
    for kind in kinds(b, KINDS, 2, 4):
        if kind == "aws_access_key_id":
            b.entry("aws", (b.secret_format("aws_access_key_id"), True), (b.secret_format("aws_secret_access_key"), True),
                    id_key="AWS_ACCESS_KEY_ID", secret_key="AWS_SECRET_ACCESS_KEY")  # fmt: skip
            continue
        for entry in cluster(b, kind, "upper_snake"):
            entry.words["quote"] = shell_quote(entry.slots[0].fmt.charset, layout["quote"])
    if layout["db_url"]:
        user = d.pick(b.world.users)
        scheme = d.pick(("postgres", "postgresql", "mysql", "redis", "amqp"))
        b.entry("url", (b.secret_format("dsn_password"), True), key=d.pick(("DATABASE_URL", "DB_URL", f"{scheme.upper()}_URL")),
                prefix=f"{scheme}://{user}:", suffix=f"@{b.world.services[0]}-db.{b.world.domain}:{d.pick((5432, 3306, 6379, 5672))}/{d.pick(w.DATABASES)}")  # fmt: skip
        if d.chance(0.6):
            b.entry("url", (placeholder("${DB_PASSWORD}", "dollar_brace"), False), key="REPLICA_URL",
                    prefix=f"{scheme}://{user}:", suffix=f"@{b.world.services[0]}-replica.{b.world.domain}/{d.pick(w.DATABASES)}")  # fmt: skip
    return b.done(layout)


def write(wr: Writer) -> None:
    d, layout = wr.d, wr.layout
    service = wr.service()
    if layout["header"]:
        wr.line(layout["header"].format(service=service, env=wr.world.env))
    lines: list[tuple] = [
        (f"APP_ENV={wr.world.env}",),
        (f"PORT={d.pick((3000, 8000, 8080, 9090))}",),
        (f"LOG_LEVEL={d.pick(('info', 'debug', 'warn'))}",),
        (f"{d.pick(('DATABASE_HOST', 'REDIS_HOST', 'CACHE_HOST'))}={wr.host()}",),
        (f"{d.pick(('FEATURE_NEW_CHECKOUT', 'ENABLE_METRICS', 'USE_TLS'))}={d.pick(('true', 'false', '1'))}",),
    ]
    lines = d.sample(lines, d.int(2, 5))
    export = "export " if layout["export"] else ""
    for entry in wr.entries:
        if entry.form == "aws":
            key_id, secret = entry.slots
            lines.append(
                (f"{export}{entry['id_key']}=", wr.fresh(key_id), f"\n{export}{entry['secret_key']}=", wr.fresh(secret))
            )
        elif entry.form == "url":
            lines.append((f"{export}{entry['key']}={entry['prefix']}", wr.fresh(entry.slots[0]), entry["suffix"]))
        else:
            quote = entry.words.get("quote", "")
            lines.append((f"{export}{entry['key']}={quote}", wr.fresh(entry.slots[0]), quote + note(entry, layout)))
    lines = d.shuffled(lines)
    if layout["sections"] and len(lines) > 3:
        lines.insert(
            d.int(1, len(lines) - 1), (f"\n# --- {d.pick(('secrets', 'vendors', 'integrations', 'runtime'))} ---",)
        )
    for line in lines:
        wr.line(*line)


FAMILY = Family("dotenv", draw, write, syntax="dotenv", filename=".env")
