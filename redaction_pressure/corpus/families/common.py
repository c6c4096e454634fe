"""Helpers shared by the families: credential clusters and their look-alikes, quoting.

A credential cluster is a secret entry and up to a few look-alike entries whose key
names share the secret's subject and role words (`BILLING_API_TOKEN` beside
`BILLING_API_TOKEN_TTL`, `BILLING_API_TOKEN_SHA256`, `BILLING_PUBLISHABLE_KEY`,
`TEST_BILLING_API_TOKEN`), so the key words never decide alone what is a secret.
"""

from __future__ import annotations

from collections.abc import Sequence

from redaction_pressure.corpus import values as v
from redaction_pressure.corpus import words as w
from redaction_pressure.corpus.dialect import Builder, Entry
from redaction_pressure.corpus.draw import ALNUM

PRAGMA = "  # pragma: allowlist secret"
"""The inline comment scanners honour: a team's marking for a value it decided is no secret."""
ALLOW_MARKERS = ("# pragma: allowlist secret",) * 4 + (
    "# gitleaks:allow",
    "# trufflehog:ignore",
    "# nosec",
    "# noqa: S105",
)
"""Allowlist comments of detect-secrets, gitleaks, trufflehog, bandit and ruff; a task uses one."""

PUBLISHED = {
    "aws_access_key_id", "github_token", "github_pat", "gitlab_pat", "slack_token", "stripe_key",
    "google_api_key", "openai_key", "npm_token", "jwt",
}  # fmt: skip
LOOKALIKES = ("setting", "reference", "hash", "public", "fixture", "example", "placeholder", "id", "allowlisted")


def cluster(
    b: Builder,
    kind: str,
    case: str,
    *,
    form: str = "kv",
    looks: Sequence[str] = LOOKALIKES,
    count: tuple[int, int] = (1, 2),
    placeholder: str = "${{{name}}}",
) -> list[Entry]:
    """A secret entry of `kind` and `count` look-alike entries drawn from `looks`.

    A house token always comes with its vendor's public identifier, named by the vendor's
    convention, in the same alphabet and length.
    """
    d = b.d
    fmt = b.secret_format(kind)
    subject = b.subject(kind, fmt)
    role = b.role(kind, fmt)
    secret_words = (subject, *role)
    first = b.entry(form, (fmt, True), key=b.claim(secret_words, case))
    entries = [first]
    # Look-alikes are modelled on the secret or, as often, on each of its public ids: their
    # key words and prefixes must not point back at the secret.
    bases = [(secret_words, fmt, b.secret_prefix(fmt))]
    # A vendor's (or internal service's) public ids, and an anon JWT, travel with the secret.
    for public, role in b.publics(fmt) + b.anon(fmt):
        entries.append(b.entry(form, (public, False), key=b.claim((subject, *role), case), group=first.group))
        house = b.house_for(fmt)
        bases.append(((subject, *role), public, house.prefix_of(public) if house else ""))
    options = [
        look
        for look in looks
        if _applies(look, fmt) and not (look == "public" and (b.house_for(fmt) or fmt.kind == "jwt"))
    ]
    shift = b.world.level.lookalikes
    low, high = max(0, count[0] + shift), max(0, count[1] + shift)
    chosen = d.sample(options, min(len(options), d.int(low, high)))
    # A published format's test value often sits beside it, allowlisted, in the very same shape.
    if fmt.kind in PUBLISHED and "allowlisted" in options and "allowlisted" not in chosen and d.chance(0.75):
        chosen.append("allowlisted")
    for look in chosen:
        # Any member of the credential set, the secret no more often than each public id.
        words, model, prefix = d.pick(bases)
        if look == "setting":
            suffix, decoy = b.setting()
            entries.append(b.entry(form, (decoy, False), key=b.claim((*words, *suffix), case)))
        elif look == "reference":
            suffix, decoy = b.reference(subject, words)
            # Half the time the reference sits under its model's own words (`DB_PASSWORD=/run/secrets/db`).
            key_words = (d.pick(("staging", "shared", "prod")), *words) if d.chance(0.5) else (*words, *suffix)
            entries.append(b.entry(form, (decoy, False), key=b.claim(key_words, case)))
        elif look == "hash":
            suffix = d.pick(w.HASH_SUFFIXES)
            decoy = v.digest("fingerprint" if suffix[0] == "fingerprint" else d.pick(("hex64", "sha256_prefixed")))
            entries.append(b.entry(form, (decoy, False), key=b.claim((*words, *suffix), case)))
        elif look == "public":
            entries.append(
                b.entry(form, (b.public_like(fmt), False), key=b.claim((subject, *b.public_role(fmt)), case))
            )
        elif look == "id":
            decoy = v.Format("identifier", "hex", lambda dd: dd.chars("0123456789abcdef", 24), ALNUM)
            entries.append(b.entry(form, (decoy, False), key=b.claim((subject, *d.pick(w.ID_ROLES)), case)))
        elif look == "fixture":
            marker = d.pick(("test", "fake", "mock", "sample", "ci"))
            entries.append(
                b.entry(
                    form,
                    (v.fixture_like(model, d.pick(v.FAKE_STYLES), prefix), False),
                    key=b.claim((marker, *words), case),
                )
            )
        elif look == "allowlisted":
            # A full-entropy value the team marked as no secret, under its model's own words.
            decoy = v.Format("test_fixture", "allowlisted", model.make, model.charset)
            entries.append(
                b.entry(
                    form,
                    (decoy, False),
                    key=b.claim((d.pick(("test", "local", "ci", "dev")), *words), case),
                    allowlisted=True,
                )
            )
        elif look == "example":
            entries.append(b.entry(form, (v.example_like(model), False), key=b.claim(("example", *words), case)))
        elif look == "placeholder":
            name = w.spell(words, "upper_snake")
            text = placeholder.format(name=name)
            other = d.pick(("staging", "local", "dev", "fallback", "default"))
            entries.append(b.entry(form, (v.placeholder(text, "ref"), False), key=b.claim((other, *words), case)))
    return entries


SECTIONS = (
    "server",
    "client",
    "backend",
    "frontend",
    "worker",
    "mobile",
    "admin",
    "widget",
    "ingest",
    "dashboard",
    "batch",
    "edge",
)
"""Section names a key's meaning may hang on at the hard level; which side is secret is the task's."""


def kinds(b: Builder, options: Sequence[str], low: int, high: int) -> list[str]:
    """`low` to `high` credential kinds from `options`, the first a vendor's token: every family
    that follows the task's naming conventions carries at least one vendor credential set."""
    chosen = b.d.sample(options, b.d.int(low, high))
    if "house_token" not in chosen:
        chosen[0] = "house_token"
    return [housed(b, kind) for kind in chosen]


def housed(b: Builder, kind: str) -> str:
    """`kind`, or at a level with a `house_share` as often as it says, a house token instead of a
    kind general knowledge finds (a published format, a JWT, a password). Draws nothing else."""
    share = b.world.level.house_share
    if share and kind not in ("house_token", "generic_secret") and b.d.chance(share):
        return "house_token"
    return kind


def _applies(look: str, fmt: v.Format) -> bool:
    if look in ("example", "fixture", "allowlisted"):
        return fmt.kind not in ("private_key", "base64_credential", "jwt")
    if look == "public":
        return fmt.kind in ("house_token", "stripe_key", "jwt", "generic_secret")
    return True


def note(entry: Entry, layout: dict) -> str:
    """The allowlist comment an entry's line carries, if any: always for an allowlisted value,
    for a visibly fake fixture when the task's layout marks fixtures too."""
    slot = entry.slots[0]
    if entry.words.get("allowlisted") or (slot.kind == "test_fixture" and layout.get("pragma")):
        return "  " + layout["marker"]
    return ""


SHELL_SAFE = set(ALNUM + "_-.:/+=@%^,")


def shell_quote(value_charset: str, preferred: str) -> str:
    """The quote a shell or .env value needs: `preferred` unless it is unquoted and unsafe."""
    if preferred == "" and not set(value_charset) <= SHELL_SAFE:
        return "'"
    return preferred


YAML_PLAIN_SAFE = set(ALNUM + "_-./+=")


def yaml_quote(value_charset: str, preferred: str) -> str:
    """The quote a YAML scalar needs: `preferred` unless it is plain and unsafe."""
    if preferred == "" and not set(value_charset) <= YAML_PLAIN_SAFE:
        return '"'
    return preferred
