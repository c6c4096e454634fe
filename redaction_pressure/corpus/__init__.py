"""The corpus: `stream(seed, shown)` yields realistic documents with labelled secrets and decoys.

Each task draws its own dialect (families, key names, syntax, layouts, house token
formats, look-alikes) and its shown records cover every slot of it; hidden records reuse
those slots with fresh values, each record from its own hash-derived generator. See
`stream.py` for the stream's promises and `dialect.py` for what a slot is.

Each difficulty level (`levels.py`: easy, standard, hard, expert) is a corpus of its own, named by
`corpus_version(level)`; a corpus seed carries its level. Bump the level's number in
`LEVEL_VERSIONS` (the standard level's is `CORPUS_VERSION`) whenever its generated output
changes; a test pins a digest of each level's dev split so that no change slips through
unversioned.
"""

from __future__ import annotations

from redaction_pressure.corpus.families import FAMILIES
from redaction_pressure.corpus.levels import DEFAULT as DEFAULT_DIFFICULTY
from redaction_pressure.corpus.levels import LEVELS
from redaction_pressure.corpus.stream import draw_dialect, stream

CORPUS_VERSION = "4"
"""The standard level's corpus version."""
LEVEL_VERSIONS = {"easy": "4", "standard": CORPUS_VERSION, "hard": "5", "expert": "6"}
"""Each level's own corpus version: a level's number moves only when its own records change
(corpus 5 changed only the hard level's; corpus 6 added the expert level)."""
DIFFICULTIES = tuple(LEVELS)


def corpus_version(difficulty: str = DEFAULT_DIFFICULTY) -> str:
    """The corpus version a level's tasks record: `4` for standard, `4-easy`, `5-hard`, `6-expert`."""
    if difficulty not in LEVELS:
        raise ValueError(f"unknown difficulty {difficulty!r}; choose one of {', '.join(LEVELS)}")
    number = LEVEL_VERSIONS[difficulty]
    return number if difficulty == DEFAULT_DIFFICULTY else f"{number}-{difficulty}"


SECRET_KINDS = (
    "aws_access_key_id",
    "aws_secret_access_key",
    "aws_session_token",
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
    "house_token",
)
DECOY_KINDS = (
    "example_key",
    "placeholder",
    "commit_sha",
    "uuid",
    "hash_digest",
    "public_key",
    "identifier",
    "secret_reference",
    "secret_setting",
    "test_fixture",
    "redacted_marker",
)

__all__ = [
    "CORPUS_VERSION", "DECOY_KINDS", "DEFAULT_DIFFICULTY", "DIFFICULTIES", "FAMILIES", "LEVEL_VERSIONS", "SECRET_KINDS",
    "corpus_version", "draw_dialect", "stream",
]  # fmt: skip
