"""Realism checks for the corpus: would a secret scanner, a parser or a person believe these documents?

Shared by `tests/floor/test_realism.py`, `tests/floor/test_levels.py` and `benchmarks/realism.py`.
Everything here is written independently of the corpus's own helpers (its checksum, key and
quoting code), so a bug there cannot hide itself.

- `dev_records(difficulty)`: every record of every dev task of a level (standard by
  default), shown and hidden, with where it sits.
- Value checks, each returning a problem sentence or None: `checksum_problem` (GitHub
  `ghp_`/`gho_` and npm `npm_` CRC32), `private_key_problem` (loads with `cryptography`,
  EC P-256 or Ed25519 only), `jwt_problem`, `basic_credential_problem`.
- `parse_problems(record)`: the record parses in its own format and every secret is a
  value the parser returns (an AST string, a YAML scalar, a sourced variable, a URL's
  password), not merely text that happens to sit in the file; a JSON log's string that is
  itself a JSON document (a logged request or response body, as on hard) is parsed too.
  Families without a grammar of their own (`access_log`, and `app_log` outside JSON lines)
  are not checked.
- `recognisably_not_secret(kind, value, line)`: one documented rule per decoy kind. It is
  meant to hold for every decoy and for no secret: the tests run it both ways.

One module per concern: `records` (the dev records and where a span sits), `entropy`, `values`
(the value checks), `lexers` (shell and SQL literals), `parsing` (each family in its own
format), `decoys` (the decoy rules and the shown convention). This package gathers the names
the tests and the benchmark use.
"""

from __future__ import annotations

from .decoys import DECOY_RULES, decoy_rules_accepting, recognisably_not_secret, shown_convention
from .parsing import PARSERS, parse_problems, syntax_of
from .records import Located, dev_records, excerpt, key_context, line_of
from .values import (
    base62_crc32,
    basic_credential_problem,
    checksum_problem,
    jwt_problem,
    private_key_problem,
    session_key_problem,
)

__all__ = [
    "DECOY_RULES", "PARSERS", "Located", "base62_crc32", "basic_credential_problem", "checksum_problem",
    "decoy_rules_accepting", "dev_records", "excerpt", "jwt_problem", "key_context", "line_of", "parse_problems",
    "private_key_problem", "recognisably_not_secret", "session_key_problem", "shown_convention", "syntax_of",
]  # fmt: skip
