"""Realism of the corpus: on every dev task (shown and hidden), secrets pass the checks real
leaks pass, structured records parse with the secret as a parsed value, and decoys are
recognisably not secrets.

Each check is run twice: over the dev split (one subTest per task, listing that task's
problems), and on a deliberately broken input, so that no check can pass vacuously.
The value and format checks run on every level's dev split; the decoy rules on standard's
(on easy and hard a task's public ids follow that task's own conventions, which the rules'
standard conventions do not model: 150 and 1,117 public ids there fail them, no secret
passes them). The checks themselves live in `tests/support/realism/`.
"""

from __future__ import annotations

import base64
import json
import unittest
import zlib
from collections import Counter

from cryptography.hazmat.primitives import serialization
from cryptography.hazmat.primitives.asymmetric import rsa

from redaction_pressure.corpus import DECOY_KINDS
from redaction_pressure.spans import Record, Span
from redaction_pressure.splits import DEV_SIZE, seed_for
from tests.support.realism import (
    DECOY_RULES,
    PARSERS,
    Located,
    base62_crc32,
    basic_credential_problem,
    checksum_problem,
    decoy_rules_accepting,
    dev_records,
    excerpt,
    jwt_problem,
    key_context,
    line_of,
    parse_problems,
    private_key_problem,
    recognisably_not_secret,
    session_key_problem,
    shown_convention,
)

LEVELS = ("easy", "standard", "hard", "expert")


def by_task(difficulty: str = "standard") -> dict[int, list[Located]]:
    tasks: dict[int, list[Located]] = {}
    for located in dev_records(difficulty):
        tasks.setdefault(located.task, []).append(located)
    return tasks


def spans_of(kind: str) -> list[tuple[Located, Span]]:
    return [(loc, s) for loc in dev_records() for s in loc.record.secrets if s.kind == kind]


def first(family: str, when=lambda record: True) -> Record:
    return next(loc.record for loc in dev_records() if loc.record.family == family and when(loc.record))


class ValueCheck(unittest.TestCase):
    """Shared shape: run `problem(value, record)` on every secret span of `kinds`, per task,
    on the dev split of every level."""

    def assert_each_value(self, kinds: tuple[str, ...], problem) -> None:
        for level in LEVELS:
            checked = 0
            for task, records in by_task(level).items():
                with self.subTest(level=level, task=task):
                    failures = []
                    for loc in records:
                        for span in loc.record.secrets:
                            if span.kind in kinds:
                                checked += 1
                                value = loc.record.value(span)
                                if (why := problem(value, loc.record)) is not None:
                                    failures.append(f"{loc.where}: {span.kind} {excerpt(value)!r} {why} ({span.slot})")
                    self.assertEqual(failures, [])
            self.assertGreater(checked, 0, f"no {kinds} span in {level}'s dev split: the check is vacuous")


class TestGitHubChecksums(ValueCheck):
    def test_every_github_and_npm_token_carries_its_crc32(self):
        """Every ghp_/gho_/npm_ token ends in the base62 CRC32 of its 30-character random part."""
        self.assert_each_value(("github_token", "npm_token"), lambda value, record: checksum_problem(value))

    def test_the_verifier_matches_a_known_checksum(self):
        """The base62 checksum decodes back to zlib's CRC32, left-padded with '0' to 6 characters."""
        alphabet = "0123456789ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz"
        for body, pinned in [("0" * 30, "2C8GjS"), ("a", "4GEHKN")]:
            with self.subTest(body=body):
                check = base62_crc32(body)
                self.assertEqual(check, pinned)
                decoded = 0
                for char in check:
                    decoded = decoded * 62 + alphabet.index(char)
                self.assertEqual(decoded, zlib.crc32(body.encode()))
        self.assertEqual(base62_crc32(""), "000000")  # crc32(b"") == 0: all padding
        self.assertIsNone(checksum_problem("ghp_" + "0" * 30 + "2C8GjS"))

    def test_a_changed_character_breaks_the_checksum(self):
        """Changing one character of the random part of a real dev token fails the check."""
        loc, span = spans_of("github_token")[0]
        token = loc.record.value(span)
        swapped = token[:10] + ("A" if token[10] != "A" else "B") + token[11:]
        self.assertIsNotNone(checksum_problem(swapped))
        self.assertIsNotNone(checksum_problem(token[:-1]))


class TestPrivateKeys(ValueCheck):
    def test_every_private_key_loads_as_ec_p256_or_ed25519(self):
        """Every private_key span loads with cryptography (PEM or OpenSSH; JSON-escaped ones unescaped)."""
        self.assert_each_value(("private_key",), lambda value, record: private_key_problem(value, record.family))

    def test_every_key_style_is_exercised(self):
        """The dev split holds PKCS#8, OpenSSH and JSON-escaped keys, so each loader runs on dev
        (SEC1 keys, which dev happens not to hold, are loaded by the next test)."""
        heads = Counter(loc.record.value(s).split("-----")[1] for loc, s in spans_of("private_key"))
        escaped = sum("\\n" in loc.record.value(s) for loc, s in spans_of("private_key"))
        self.assertTrue({"BEGIN OPENSSH PRIVATE KEY", "BEGIN PRIVATE KEY"} <= set(heads), heads)
        self.assertGreater(escaped, 0)

    def test_every_style_the_corpus_can_draw_loads(self):
        """Keys of every style the corpus draws (SEC1 included, which dev happens not to hold) load."""
        from redaction_pressure.corpus import keys
        from redaction_pressure.corpus.draw import Draw

        for style in keys.PRIVATE_KEY_STYLES:
            for n in range(20):
                with self.subTest(style=style, n=n):
                    self.assertIsNone(
                        private_key_problem(keys.private_key_pem(Draw.derived(n, "key-test"), style), "deploy_script")
                    )

    def test_a_corrupted_key_does_not_load(self):
        """Flipping one base64 character inside a dev key's body makes it fail to load."""
        for loc, span in spans_of("private_key")[:8]:
            value = loc.record.value(span)
            with self.subTest(where=loc.where):
                # The body's second character encodes the DER outer SEQUENCE: any change breaks it.
                header_end = value.index("-----", 11) + 5
                i = header_end + (2 if value[header_end] == "\\" else 1) + 1
                broken = value[:i] + ("A" if value[i] != "A" else "B") + value[i + 1 :]
                self.assertIsNotNone(private_key_problem(broken, loc.record.family))

    def test_an_rsa_key_is_refused(self):
        """A loadable key of another type (RSA) is reported: only EC P-256 and Ed25519 are expected."""
        key = rsa.generate_private_key(public_exponent=65537, key_size=1024)
        pem = (
            key.private_bytes(
                serialization.Encoding.PEM, serialization.PrivateFormat.PKCS8, serialization.NoEncryption()
            )
            .decode()
            .strip()
        )
        self.assertIn("RSAPrivateKey", private_key_problem(pem, "deploy_script") or "")

    def test_escaped_newlines_outside_json_are_refused(self):
        """A JSON-escaped key outside a service account document is reported."""
        loc, span = next((loc, s) for loc, s in spans_of("private_key") if loc.record.family == "service_account")
        self.assertIsNotNone(private_key_problem(loc.record.value(span), "deploy_script"))


class TestJwts(ValueCheck):
    def test_every_jwt_has_three_base64url_json_parts(self):
        """Every jwt span is header.claims.signature in base64url, header (alg, typ) and claims JSON objects."""
        self.assert_each_value(("jwt",), lambda value, record: jwt_problem(value))

    def test_malformed_tokens_are_reported(self):
        """Two parts, a header without typ, claims that are not an object and padding are each reported."""

        def part(obj) -> str:
            return base64.urlsafe_b64encode(json.dumps(obj).encode()).rstrip(b"=").decode()

        sig = base64.urlsafe_b64encode(bytes(32)).rstrip(b"=").decode()
        good = f"{part({'alg': 'HS256', 'typ': 'JWT'})}.{part({'sub': 'x'})}.{sig}"
        self.assertIsNone(jwt_problem(good))
        for name, token in [
            ("two parts", good.rsplit(".", 1)[0]),
            ("no typ", f"{part({'alg': 'HS256'})}.{part({'sub': 'x'})}.{sig}"),
            ("claims a list", f"{part({'alg': 'HS256', 'typ': 'JWT'})}.{part([1])}.{sig}"),
            ("padded", good + "=="),
            ("short HS256 signature", good[:-4]),
        ]:
            with self.subTest(name):
                self.assertIsNotNone(jwt_problem(token))


class TestBasicCredentials(ValueCheck):
    def test_every_base64_credential_decodes_to_user_and_password(self):
        """Every base64_credential span is strict base64 of UTF-8 `user:password`, both non-empty."""
        self.assert_each_value(("base64_credential",), lambda value, record: basic_credential_problem(value))

    def test_bad_credentials_are_reported(self):
        """No colon, an empty password, non-strict base64 and invalid UTF-8 are each reported."""
        for name, value in [
            ("no colon", base64.b64encode(b"alice").decode()),
            ("empty password", base64.b64encode(b"alice:").decode()),
            ("not strict", base64.b64encode(b"alice:pw").decode() + "!"),
            ("not utf-8", base64.b64encode(b"alice:\xff\xfe").decode()),
        ]:
            with self.subTest(name):
                self.assertIsNotNone(basic_credential_problem(value))


class TestSessionKeys(unittest.TestCase):
    def test_asia_keys_come_with_a_session_token(self):
        """An aws_access_key_id starting with ASIA only appears in a record with an aws_session_token secret."""
        for task, records in by_task().items():
            with self.subTest(task=task):
                problems = [f"{loc.where}: {p}" for loc in records if (p := session_key_problem(loc.record))]
                self.assertEqual(problems, [])

    def test_a_lone_asia_key_is_reported(self):
        """Dropping the session token from a dev record that has one makes the check fail."""
        record = first("python_settings", lambda r: any(s.kind == "aws_session_token" for s in r.secrets))
        lone = record.model_copy(update={"secrets": tuple(s for s in record.secrets if s.kind != "aws_session_token")})
        self.assertIsNone(session_key_problem(record))
        self.assertIsNotNone(session_key_problem(lone))


# Appended to a record, each breaks its family's syntax without moving any span.
BREAKERS = {
    "python": "\n)(\n",
    "javascript": "\n}}(\n",
    "dotenv": "\nBROKEN='unterminated\n",
    "yaml": "\nbroken: [unclosed\n",
    "toml": "\n[[[\n",
    "json": ",",
    "shell": "\nif then\n",
    "sql": "\nSELECT 'unterminated;\n",
    "app_log": "{not json\n",
}
SYNTAX_OF_FAMILY = {
    "python_settings": "python", "function_local": "python", "web_config": "javascript", "dotenv": "dotenv",
    "ci_workflow": "yaml", "repeated_key": "yaml", "compose_env": "yaml", "toml_config": "toml",
    "service_account": "json", "deploy_script": "shell", "sql_migration": "sql", "app_log": "app_log",
}  # fmt: skip


def _is_json_log(record: Record) -> bool:
    return record.family != "app_log" or record.text.startswith("{")


class TestStructuredRecords(unittest.TestCase):
    def test_every_structured_record_parses_with_its_secrets_as_values(self):
        """Every structured record parses in its own format and each secret equals a parsed value."""
        for task, records in by_task().items():
            with self.subTest(task=task):
                problems = [f"{loc.where}: {p}" for loc in records for p in parse_problems(loc.record)]
                self.assertEqual(problems, [])

    def test_every_level_s_structured_records_parse_with_their_secrets_as_values(self):
        """On easy and hard too (hard logs secrets inside JSON bodies escaped in a log line's string),
        every structured record parses in its own format and each secret equals a parsed value."""
        for level in ("easy", "hard"):  # standard: the test above
            with self.subTest(level=level):
                problems = [f"{loc.where}: {p}" for loc in dev_records(level) for p in parse_problems(loc.record)]
                self.assertEqual(problems[:20], [], f"{len(problems)} problems")

    def test_a_secret_in_a_logged_body_is_held_by_the_body_s_own_json(self):
        """A secret inside a logged JSON body counts as a value only while that body parses."""
        nested = [
            (loc.record, span)
            for loc in dev_records("hard")
            if loc.record.family == "app_log"
            for span in loc.record.secrets
            if loc.record.text[span.end : span.end + 4] == '\\"}"'
        ]
        self.assertGreater(len(nested), 10, "hard logs secrets inside JSON bodies")
        record, span = nested[0]
        self.assertEqual(parse_problems(record), [])
        end = span.end + 3  # after the body's closing brace, inside the log line's string
        broken = record.model_copy(update={"text": record.text[:end] + "}" + record.text[end:]})
        self.assertIn(
            f"{span.kind} {excerpt(record.value(span))!r} is not a parsed value", " ".join(parse_problems(broken))
        )

    def test_every_structured_family_is_exercised(self):
        """Each parser (and both languages of the python|javascript families, and JSON-lines logs) meets dev records."""
        seen = Counter(loc.record.family for loc in dev_records() if _is_json_log(loc.record))
        self.assertEqual(sorted(f for f in PARSERS if not seen[f]), [])
        for family in ("dsn_in_code", "base64_source"):
            languages = {loc.record.text.startswith("import") for loc in dev_records() if loc.record.family == family}
            self.assertEqual(languages, {True, False}, family)

    def test_broken_syntax_is_reported(self):
        """A dev record of each family with a syntax error appended fails its check."""
        for family in PARSERS:
            for python in (True, False) if family in ("dsn_in_code", "base64_source") else (None,):
                record = first(
                    family, lambda r: _is_json_log(r) and (python is None or r.text.startswith("import") == python)
                )
                breaker = BREAKERS[SYNTAX_OF_FAMILY.get(family) or ("python" if python else "javascript")]
                with self.subTest(family=family, python=python):
                    self.assertEqual(parse_problems(record), [])
                    self.assertNotEqual(parse_problems(record.model_copy(update={"text": record.text + breaker})), [])

    def test_a_misplaced_span_is_reported(self):
        """Widening a dev record's first secret span by one character to the left fails its check."""
        for family in PARSERS:
            record = first(family, _is_json_log)
            span = record.secrets[0]
            moved = span.model_copy(update={"start": span.start - 1})
            with self.subTest(family=family):
                self.assertNotEqual(
                    parse_problems(record.model_copy(update={"secrets": (moved, *record.secrets[1:])})), []
                )

    def test_an_expanding_heredoc_or_double_quotes_are_reported(self):
        """A deploy script whose key heredoc is unquoted, or whose token is double-quoted, fails the check."""
        record = first("deploy_script", lambda r: "<<'" in r.text and "export " in r.text)
        delimiter = record.text.split("<<'", 1)[1].split("'", 1)[0]
        unquoted = record.text.replace(f"<<'{delimiter}'", f"<< {delimiter} ")  # same length: spans stay put
        self.assertEqual(parse_problems(record), [])
        self.assertNotEqual(parse_problems(record.model_copy(update={"text": unquoted})), [])
        export = next(s for s in record.secrets if record.text[s.start - 1] == "'" and record.text[s.end] == "'")
        text = record.text[: export.start - 1] + '"' + record.value(export) + '"' + record.text[export.end + 1 :]
        self.assertNotEqual(parse_problems(record.model_copy(update={"text": text})), [])

    def test_a_password_outside_a_literal_is_reported(self):
        """A migration whose password lost its quotes fails the check."""
        record = first("sql_migration")
        span = record.secrets[0]
        text = record.text[: span.start - 1] + " " + record.value(span) + " " + record.text[span.end + 1 :]
        self.assertNotEqual(parse_problems(record.model_copy(update={"text": text})), [])


# (kind, value, line, expected): each rule accepts its decoys and refuses a look-alike secret.
RULE_CASES = [
    ("example_key", "AKIAIOSFODNN7EXAMPLE", "", True),
    ("example_key", "AKIAIOSFODNN7EXAMPLF", "", False),
    ("placeholder", "${{ secrets.NPM_TOKEN }}", "", True),
    ("placeholder", 'os.environ["STRIPE_KEY"]', "", True),
    ("placeholder", ":'reader_password'", "", True),
    ("placeholder", "Xk2${A}9", "", False),
    ("commit_sha", "a" * 39 + "b", "      - uses: actions/checkout@" + "a" * 39 + "b", True),
    ("commit_sha", "a" * 39 + "b", "API_SECRET=" + "a" * 39 + "b", False),
    ("uuid", "3b241101-e2bb-4255-8caf-4136c566a962", "", True),
    ("uuid", "3b241101-e2bb-1255-8caf-4136c566a962", "", False),
    ("hash_digest", "sha256:" + "0f" * 32, "", True),
    ("hash_digest", "0f" * 32, "BILLING_TOKEN_SHA256=" + "0f" * 32, True),
    ("hash_digest", "0f" * 32, "SIGNING_SECRET=" + "0f" * 32, False),
    ("public_key", "pk_live_51abc", "", True),
    ("public_key", "zorv_pub_k3j4h5", "ZORV_PUBLISHABLE_KEY=zorv_pub_k3j4h5", True),
    ("public_key", "zorv_live_k3j4h5", "ZORV_SECRET_KEY=zorv_live_k3j4h5", False),
    ("identifier", "0a1b2c3d4e5f60718293a4b5", "STRIPE_ACCOUNT_ID=0a1b2c3d4e5f60718293a4b5", True),
    ("identifier", "AKIAQ3EGKZ7XWLN4M5PR", "AWS_ACCESS_KEY_ID=AKIAQ3EGKZ7XWLN4M5PR", False),
    ("secret_reference", "/run/secrets/billing_api_token", "", True),
    ("secret_reference", "Zx9/Qm4kLp2Vw8Rt6Yh3Nb5", "", False),
    ("secret_setting", "3600", "", True),
    ("secret_setting", "X-Api-Key", "", True),
    ("secret_setting", "hQ7xR2mK9vL4pW8n", "", False),
    ("test_fixture", "sk_test_" + "x" * 24, "", True),
    ("test_fixture", "ghp_fake0fake0fake0fake0fake0fake0fake", "", True),
    ("test_fixture", "AKIA0123456789ABCDEF", "", True),
    ("test_fixture", "sk_test_51Hq8ZkL2mN4pQ7rS9tV1wX3yZ5aB7cD", "", False),
    ("test_fixture", "hQ7xR2mK9vL4pW8n", "token = 'hQ7xR2mK9vL4pW8n'  # pragma: allowlist secret", True),
    ("redacted_marker", "[REDACTED]", "", True),
    ("redacted_marker", "[REDACTED", "", False),
]


def _convention(task: int, records: list[Located]):
    """The vendor conventions dev task `task`'s shown records establish."""
    return shown_convention(seed_for("dev", task), [loc.record for loc in records][:8])


class TestDecoysAreRecognisable(unittest.TestCase):
    def test_every_decoy_passes_its_kinds_rule(self):
        """Every decoy span of every dev task is recognisably not a secret by the rule for its kind."""
        for task, records in by_task().items():
            with self.subTest(task=task):
                failures = []
                convention = _convention(task, records)
                for loc in records:
                    for span in loc.record.decoys:
                        value, line = loc.record.value(span), line_of(loc.record, span)
                        if not recognisably_not_secret(
                            span.kind, value, line, convention, key_context(loc.record, span)
                        ):
                            failures.append(
                                f"{loc.where}: {span.kind} {excerpt(value)!r} ({span.slot}) on {excerpt(line.strip(), 80)!r}"
                            )
                self.assertEqual(failures, [])

    def test_no_secret_passes_any_decoy_rule(self):
        """No secret span of any dev task is accepted by any decoy kind's rule: the rules classify, not label."""
        for task, records in by_task().items():
            with self.subTest(task=task):
                failures = []
                convention = _convention(task, records)
                for loc in records:
                    for span in loc.record.secrets:
                        value, line = loc.record.value(span), line_of(loc.record, span)
                        if accepted := decoy_rules_accepting(value, line, convention, key_context(loc.record, span)):
                            failures.append(
                                f"{loc.where}: {span.kind} {excerpt(value)!r} ({span.slot}) passes for {accepted}"
                            )
                self.assertEqual(failures, [])

    def test_every_decoy_kind_has_a_rule_and_meets_the_dev_split(self):
        """Each corpus decoy kind has a rule, and each appears in the dev split (no vacuous rule)."""
        self.assertEqual(sorted(DECOY_RULES), sorted(DECOY_KINDS))
        seen = Counter(s.kind for loc in dev_records() for s in loc.record.decoys)
        self.assertEqual(sorted(k for k in DECOY_KINDS if not seen[k]), [])

    def test_each_rule_accepts_its_decoys_and_refuses_look_alikes(self):
        """A table of hand-written cases: each rule says True for its decoy shape and False for a secret beside it."""
        for kind, value, line, expected in RULE_CASES:
            with self.subTest(kind=kind, value=value):
                self.assertIs(recognisably_not_secret(kind, value, line or value), expected)

    def test_secret_kinds_are_never_decoys(self):
        """Asked about a secret kind, the classifier says False whatever the value."""
        self.assertFalse(recognisably_not_secret("github_token", "[REDACTED]", "[REDACTED]"))


class TestDevSplit(unittest.TestCase):
    def test_all_dev_records_are_checked(self):
        """The checks above see all 64 dev tasks with 40 records each."""
        self.assertEqual(len(dev_records()), DEV_SIZE * 40)


if __name__ == "__main__":
    unittest.main()
