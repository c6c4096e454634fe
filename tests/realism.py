"""Realism checks for the corpus: would a secret scanner, a parser or a person believe these documents?

Shared by `test_realism.py` and `benchmarks/realism.py`. Everything here is written
independently of the corpus's own helpers (its checksum, key and quoting code), so a
bug there cannot hide itself.

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
"""

from __future__ import annotations

import ast
import base64
import binascii
import itertools
import json
import math
import os
import re
import string
import subprocess
import tempfile
import tomllib
import urllib.parse
import zlib
from collections import Counter
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from functools import cache

import yaml
from cryptography.exceptions import UnsupportedAlgorithm
from cryptography.hazmat.primitives import serialization
from cryptography.hazmat.primitives.asymmetric import ec, ed25519

from redaction_pressure.corpus import FAMILIES, stream
from redaction_pressure.spans import Record, Span
from redaction_pressure.splits import DEV_SIZE, seed_for

try:
    import esprima
except ImportError:  # a dev dependency: an environment synced without the dev group lacks it
    esprima = None

# -- the records --------------------------------------------------------------------------


@dataclass(frozen=True)
class Located:
    """A record with the dev task and stream position it came from."""

    task: int
    index: int
    record: Record
    difficulty: str = "standard"

    @property
    def where(self) -> str:
        part = "shown" if self.index < SHOWN else "hidden"
        level = "" if self.difficulty == "standard" else f"{self.difficulty} "
        return f"{level}dev task {self.task} record {self.index} ({part}, {self.record.family})"


SHOWN, HIDDEN = 8, 32


@cache
def dev_records(difficulty: str = "standard") -> tuple[Located, ...]:
    """Every record (shown and hidden) of every dev task of a level, through `load_task` when
    it works (on standard, the bare stream when it does not: the API may be mid-edit)."""
    from redaction_pressure.redact.api import load_task

    out: list[Located] = []
    for task in range(DEV_SIZE):
        try:
            loaded = load_task("dev", task, difficulty=difficulty)
            records = [*loaded.shown, *loaded.hidden]
        except Exception:
            if difficulty != "standard":
                raise
            records = list(itertools.islice(stream(seed_for("dev", task), SHOWN), SHOWN + HIDDEN))
        out.extend(Located(task, i, record, difficulty) for i, record in enumerate(records))
    return tuple(out)


def line_of(record: Record, span: Span) -> str:
    """The full text line(s) that hold `span`."""
    start = record.text.rfind("\n", 0, span.start) + 1
    end = record.text.find("\n", span.end)
    return record.text[start : len(record.text) if end < 0 else end]


def key_context(record: Record, span: Span) -> str:
    """The key a value sits under: the words before it on its line back to (and including) the
    nearest one that names something (digits as 0); for a YAML `value:` under `- name: KEY`, the
    name on the line above."""
    start = record.text.rfind("\n", 0, span.start) + 1
    tokens = record.text[start : span.start].split()
    picked: list[str] = []
    for token in reversed(tokens):
        picked.insert(0, token)
        if re.search(r"[A-Za-z]{2,}", re.sub(r"value", "", token)):
            break
    else:
        if start:
            above = record.text.rfind("\n", 0, start - 1) + 1
            picked = record.text[above : start - 1].split()[-1:] + ["|"] + picked
    return re.sub(r"\d+", "0", " ".join(picked))


def excerpt(value: str, n: int = 24) -> str:
    """A short, single-line excerpt of a value for failure messages."""
    flat = value.replace("\n", "\\n")
    return flat if len(flat) <= n else flat[:n] + "..."


# -- entropy ------------------------------------------------------------------------------


def shannon_entropy(text: str) -> float:
    """Shannon entropy of the character distribution of `text`, in bits per character."""
    if not text:
        return 0.0
    counts = Counter(text)
    return -sum(c / len(text) * math.log2(c / len(text)) for c in counts.values())


HIGH_ENTROPY_RUN = re.compile(r"[A-Za-z0-9+]{16,}")
HIGH_ENTROPY_BITS = 3.5
HIGH_ENTROPY_HEX_BITS = 3.0


def has_high_entropy_run(value: str) -> bool:
    """A run of 16+ characters from [A-Za-z0-9+] above 3.5 bits per character (3.0 if all hex).

    Two departures from a plain "[A-Za-z0-9+/] above 3.5 bits" rule, both forced by the
    data: `/` ends a run, because a path's words strung together (`/var/run/secrets/
    notify`) reach 3.5 bits like any English text; and an all-hex run needs only 3.0
    bits, because 32 random hex digits average about 3.6 and often fall below 3.5.
    """
    for m in HIGH_ENTROPY_RUN.finditer(value):
        run = m.group()
        limit = HIGH_ENTROPY_HEX_BITS if re.fullmatch(r"[0-9a-fA-F]+", run) else HIGH_ENTROPY_BITS
        if shannon_entropy(run) > limit:
            return True
    return False


# -- value checks -------------------------------------------------------------------------

BASE62 = string.digits + string.ascii_uppercase + string.ascii_lowercase
CHECKSUMMED_PREFIXES = ("ghp_", "gho_", "npm_")


def base62_crc32(body: str) -> str:
    """CRC32 of `body` in base62 (0-9A-Za-z), left-padded with '0' to 6 characters."""
    n = zlib.crc32(body.encode())
    digits = ""
    while n:
        n, r = divmod(n, 62)
        digits = BASE62[r] + digits
    return digits.rjust(6, "0")


def checksum_problem(token: str) -> str | None:
    """Why `token` is not a well-formed checksummed GitHub/npm token, or None."""
    prefix = next((p for p in CHECKSUMMED_PREFIXES if token.startswith(p)), None)
    if prefix is None:
        return "has no ghp_/gho_/npm_ prefix"
    rest = token[len(prefix) :]
    if len(rest) != 36 or any(c not in BASE62 for c in rest):
        return f"has {len(rest)} characters after the prefix, not 36 base62"
    body, check = rest[:30], rest[30:]
    expected = base62_crc32(body)
    if check != expected:
        return f"ends in {check!r}, but the base62 CRC32 of its random part is {expected!r}"
    return None


def private_key_problem(value: str, family: str) -> str | None:
    """Why a `private_key` span is not a loadable EC P-256 or Ed25519 PEM block, or None.

    JSON-escaped keys (service accounts) hold literal backslash-n sequences; they are
    unescaped first, and only that family may hold them.
    """
    if not (value.startswith("-----BEGIN ") and value.endswith("-----")):
        return "does not run from -----BEGIN to the closing -----"
    pem = value
    if "\\n" in value:
        if family != "service_account":
            return "holds escaped newlines outside a JSON document"
        pem = value.replace("\\n", "\n")
    try:
        if "-----BEGIN OPENSSH PRIVATE KEY-----" in pem:
            key = serialization.load_ssh_private_key(pem.encode(), password=None)
        else:
            key = serialization.load_pem_private_key(pem.encode(), password=None)
    except (ValueError, TypeError, UnsupportedAlgorithm) as error:
        return f"does not load: {error}"
    if isinstance(key, ed25519.Ed25519PrivateKey):
        return None
    if isinstance(key, ec.EllipticCurvePrivateKey) and key.curve.name == "secp256r1":
        return None
    return f"loads as {type(key).__name__}, not EC P-256 or Ed25519"


_B64URL = re.compile(r"[A-Za-z0-9_-]+")


def b64url_decode(part: str) -> bytes:
    """Strict base64url without padding: only the URL-safe alphabet, a valid length."""
    if not _B64URL.fullmatch(part) or len(part) % 4 == 1:
        raise ValueError("not base64url")
    return base64.urlsafe_b64decode(part + "=" * (-len(part) % 4))


def jwt_parts(value: str) -> tuple[dict, dict, bytes]:
    """Header, claims and signature of a compact JWT; ValueError if it is not one."""
    parts = value.split(".")
    if len(parts) != 3:
        raise ValueError(f"has {len(parts)} dot-separated parts, not 3")
    header, claims = (json.loads(b64url_decode(p)) for p in parts[:2])
    if not isinstance(header, dict) or not isinstance(claims, dict):
        raise ValueError("header or claims is not a JSON object")
    return header, claims, b64url_decode(parts[2])


HMAC_BYTES = {"HS256": 32, "HS384": 48, "HS512": 64}


def jwt_problem(value: str) -> str | None:
    """Why `value` is not a JWT whose header (with alg and typ) and claims are JSON objects, or None."""
    try:
        header, _claims, signature = jwt_parts(value)
    except (ValueError, UnicodeDecodeError) as error:
        return f"is not a JWT: {error}"
    if "alg" not in header or "typ" not in header:
        return f"header lacks alg or typ: {sorted(header)}"
    want = HMAC_BYTES.get(header["alg"])
    if want and len(signature) != want:
        return f"{header['alg']} signature has {len(signature)} bytes, not {want}"
    return None


def basic_credential_problem(value: str) -> str | None:
    """Why `value` is not strict base64 of UTF-8 `user:password` (both non-empty), or None."""
    try:
        text = base64.b64decode(value, validate=True).decode("utf-8")
    except (binascii.Error, ValueError) as error:
        return f"is not strict base64 of UTF-8: {error}"
    user, sep, password = text.partition(":")
    if not (sep and user and password):
        return "does not decode to user:password with both parts non-empty"
    return None


def session_key_problem(record: Record) -> str | None:
    """Why a record's `ASIA` (temporary) access key id lacks its session token, or None."""
    asia = [s for s in record.secrets if s.kind == "aws_access_key_id" and record.value(s).startswith("ASIA")]
    if asia and not any(s.kind == "aws_session_token" for s in record.secrets):
        return f"ASIA key {excerpt(record.value(asia[0]))!r} without an aws_session_token secret ({asia[0].slot})"
    return None


# -- parsing each family in its own format ------------------------------------------------


def _is_python(text: str) -> bool:
    """The python|javascript families: Python files open with an import statement."""
    return text.lstrip().startswith(("import ", "from "))


def python_strings(text: str) -> list[str]:
    """Every string constant in a Python module (raises SyntaxError)."""
    tree = ast.parse(text)
    return [n.value for n in ast.walk(tree) if isinstance(n, ast.Constant) and isinstance(n.value, str)]


def javascript_strings(text: str, module: bool) -> list[str]:
    """Every string Literal (and template chunk) in a JavaScript program (raises esprima.Error)."""
    # esprima 4 predates ES2020's `import.meta`; a same-length identifier keeps offsets.
    source = text.replace("import.meta", "import_meta")
    tree = (esprima.parseModule if module else esprima.parseScript)(source).toDict()
    out: list[str] = []

    def walk(node: object) -> None:
        if isinstance(node, dict):
            if node.get("type") == "Literal" and isinstance(node.get("value"), str):
                out.append(node["value"])
            elif node.get("type") == "TemplateElement":
                out.append(node["value"]["cooked"])
            for child in node.values():
                walk(child)
        elif isinstance(node, list):
            for child in node:
                walk(child)

    walk(tree)
    return out


def _scalars(node: object) -> Iterator[object]:
    """Every leaf value of a parsed YAML/TOML/JSON document (mapping keys excluded)."""
    if isinstance(node, dict):
        for child in node.values():
            yield from _scalars(child)
    elif isinstance(node, list):
        for child in node:
            yield from _scalars(child)
    else:
        yield node


def _strict_json_object(pairs: list[tuple[str, object]]) -> dict:
    keys = [k for k, _ in pairs]
    if len(keys) != len(set(keys)):
        raise ValueError(f"duplicate keys {sorted(k for k in keys if keys.count(k) > 1)}")
    return dict(pairs)


def url_password(text: str) -> str | None:
    """The password of a URL with a scheme and a netloc, else None."""
    try:
        parts = urllib.parse.urlsplit(text)
    except ValueError:
        return None
    return parts.password if parts.scheme and parts.netloc else None


def dotenv_variables(text: str) -> dict[str, str]:
    """Source the file in bash (`set -a; . FILE`) and read back every variable it assigns.

    Runs in a fresh temp dir with an empty environment, no stdin and no profile; the
    file only assigns variables, so nothing else runs. Raises ValueError with bash's
    message when sourcing fails or writes to stderr.
    """
    names = re.findall(r"^(?:export[ \t]+)?([A-Za-z_][A-Za-z0-9_]*)=", text, flags=re.M)
    script = 'set -a; . ./.env || exit 97; for n in "$@"; do printf "%s=%s\\0" "$n" "${!n}"; done'
    with tempfile.TemporaryDirectory() as tmp:
        with open(os.path.join(tmp, ".env"), "w", encoding="utf-8") as f:
            f.write(text)
        done = subprocess.run(
            ["bash", "--noprofile", "--norc", "-c", script, "bash", *names],
            cwd=tmp, env={"PATH": "/usr/bin:/bin"}, stdin=subprocess.DEVNULL,
            capture_output=True, text=True, timeout=20,
        )  # fmt: skip
    if done.returncode != 0 or done.stderr:
        raise ValueError(f"bash could not source it (exit {done.returncode}): {done.stderr.strip()[:200]}")
    return dict(item.split("=", 1) for item in done.stdout.split("\0") if item)


def bash_syntax_problem(text: str) -> str | None:
    """What `bash -n` says about a script, or None when it parses."""
    with tempfile.TemporaryDirectory() as tmp:
        path = os.path.join(tmp, "deploy.sh")
        with open(path, "w", encoding="utf-8") as f:
            f.write(text)
        done = subprocess.run(
            ["bash", "--noprofile", "--norc", "-n", path], cwd=tmp, env={"PATH": "/usr/bin:/bin"},
            stdin=subprocess.DEVNULL, capture_output=True, text=True, timeout=20,
        )  # fmt: skip
    if done.returncode != 0 or done.stderr:
        return f"bash -n fails (exit {done.returncode}): {done.stderr.strip()[:200]}"
    return None


_HEREDOC = re.compile(r"<<(-?)[ \t]*(\\?)(['\"]?)([A-Za-z_][A-Za-z0-9_]*)\3")
"""A heredoc operator: `<<` or `<<-`, then the delimiter, quoted ('EOF', "EOF", \\EOF) or bare."""


def shell_literal_regions(text: str) -> list[tuple[int, int, str]]:
    """Regions of a bash script as (start, end, how): `single` quoted contents, heredoc bodies.

    A heredoc body is `heredoc` when its delimiter is quoted (`<<'EOF'`: no expansion)
    and `expanding` otherwise. A small lexer: quotes, `$( )` nesting inside double
    quotes, comments, here-strings and heredocs; enough for deploy scripts.
    Raises ValueError on an unterminated quote or heredoc.
    """
    regions: list[tuple[int, int, str]] = []
    stack = ["cmd"]  # cmd | dq (inside "...") | sub (inside $(...))
    pending: list[tuple[str, bool, bool]] = []  # heredocs opened on this line
    i, n = 0, len(text)
    while i < n:
        c, top = text[i], stack[-1]
        if c == "\\":
            i += 2
            continue
        if top == "dq":
            if c == '"':
                stack.pop()
            elif text.startswith("$(", i):
                stack.append("sub")
                i += 1
            i += 1
            continue
        if c == "'":
            end = text.find("'", i + 1)
            if end < 0:
                raise ValueError(f"unterminated single quote at offset {i}")
            regions.append((i + 1, end, "single"))
            i = end + 1
            continue
        if c == '"':
            stack.append("dq")
        elif text.startswith("$(", i):
            stack.append("sub")
            i += 1
        elif c == ")" and top == "sub":
            stack.pop()
        elif c == "#" and (i == 0 or text[i - 1] in " \t\n;"):
            end = text.find("\n", i)
            i = n if end < 0 else end
            continue
        elif text.startswith("<<<", i):
            i += 3
            continue
        elif (m := _HEREDOC.match(text, i)) is not None:
            pending.append((m.group(4), bool(m.group(2) or m.group(3)), m.group(1) == "-"))
            i = m.end()
            continue
        elif c == "\n" and pending:
            i += 1
            for delimiter, quoted, strip_tabs in pending:
                start = i
                while True:
                    eol = text.find("\n", i)
                    line = text[i : n if eol < 0 else eol]
                    if (line.lstrip("\t") if strip_tabs else line) == delimiter:
                        regions.append((start, i, "heredoc" if quoted else "expanding"))
                        i = n if eol < 0 else eol + 1
                        break
                    if eol < 0:
                        raise ValueError(f"heredoc {delimiter!r} is never closed")
                    i = eol + 1
            pending = []
            continue
        i += 1
    if stack != ["cmd"] or pending:
        raise ValueError(f"script ends inside {stack[-1] if stack != ['cmd'] else 'a heredoc'}")
    return regions


def sql_literals(text: str) -> list[tuple[int, int]]:
    """Content spans of single-quoted SQL literals (`''` escapes a quote); comments skipped.

    Raises ValueError on an unterminated literal or quoted identifier.
    """
    spans: list[tuple[int, int]] = []
    i, n = 0, len(text)
    while i < n:
        if text.startswith("--", i):
            end = text.find("\n", i)
            i = n if end < 0 else end
        elif text.startswith("/*", i):
            end = text.find("*/", i + 2)
            if end < 0:
                raise ValueError("unterminated block comment")
            i = end + 2
        elif text[i] == "'":
            j = i + 1
            while True:
                j = text.find("'", j)
                if j < 0:
                    raise ValueError(f"unterminated literal at offset {i}")
                if text.startswith("''", j):
                    j += 2
                    continue
                break
            spans.append((i + 1, j))
            i = j + 1
        elif text[i] in '"`':
            end = text.find(text[i], i + 1)
            if end < 0:
                raise ValueError(f"unterminated quoted identifier at offset {i}")
            i = end + 1
        else:
            i += 1
    return spans


# How each family's secrets relate to the values its parser returns. A relation takes
# (secret kind, secret value, parsed string) and says whether that string holds the secret.
Relation = Callable[[str, str, str], bool]


def _equal(kind: str, secret: str, parsed: str) -> bool:
    return secret == parsed


def _value_or_dsn(kind: str, secret: str, parsed: str) -> bool:
    """A DSN password is the password of a URL the parser returns; any other secret is a whole value."""
    return url_password(parsed) == secret if kind == "dsn_password" else secret == parsed


def _yaml_holds(kind: str, secret: str, parsed: str) -> bool:
    """A YAML scalar holds a secret as its value, as a compose `NAME=value` item, or in a literal block."""
    if secret == parsed:
        return True
    if re.fullmatch(r"[A-Za-z_][A-Za-z0-9_]*=.*", parsed, flags=re.S) and parsed.partition("=")[2] == secret:
        return True
    # In a multi-line command, the secret is one whole word of it (delimited by space, quote, = or :).
    if secret[:1] in " '\"=:" or secret[-1:] in " '\"":
        return False
    return "\n" in parsed and bool(re.search(rf"(?:^|[\s'\"=:]){re.escape(secret)}(?=$|[\s'\"])", parsed, flags=re.M))


def _json_escaped(kind: str, secret: str, parsed: str) -> bool:
    """A JSON string holds a secret when the secret is its escaped form, minus a trailing `\\n`."""
    escaped = json.dumps(parsed)[1:-1]
    return secret == escaped or (escaped.endswith("\\n") and secret == escaped[:-2])


def _log_field(kind: str, secret: str, parsed: str) -> bool:
    return any(parsed == scheme + secret for scheme in ("", "Bearer ", "Token ", "Basic "))


def _unplaced(record: Record, strings: list[object], relation: Relation) -> list[str]:
    """A problem for every secret span that no parsed string holds."""
    texts = [s for s in strings if isinstance(s, str)]
    problems = []
    for span in record.secrets:
        value = record.value(span)
        if not any(relation(span.kind, value, s) for s in texts):
            problems.append(f"{span.kind} {excerpt(value)!r} is not a parsed value ({span.slot})")
    return problems


def _parse_python(record: Record) -> list[str]:
    try:
        strings = python_strings(record.text)
    except SyntaxError as error:
        return [f"does not parse as Python: {error}"]
    return _unplaced(record, strings, _value_or_dsn)


def _parse_javascript(record: Record, module: bool) -> list[str]:
    if esprima is None:
        return ["cannot parse JavaScript: esprima (a dev dependency) is not installed"]
    try:
        strings = javascript_strings(record.text, module)
    except esprima.Error as error:
        return [f"does not parse as JavaScript: {error}"]
    return _unplaced(record, strings, _value_or_dsn)


def _parse_code(record: Record) -> list[str]:
    return _parse_python(record) if _is_python(record.text) else _parse_javascript(record, module=False)


def _parse_yaml(record: Record) -> list[str]:
    try:
        document = yaml.safe_load(record.text)
    except yaml.YAMLError as error:
        return [f"does not parse as YAML: {str(error).splitlines()[0]}"]
    return _unplaced(record, list(_scalars(document)), _yaml_holds)


def _parse_toml(record: Record) -> list[str]:
    try:
        document = tomllib.loads(record.text)
    except tomllib.TOMLDecodeError as error:
        return [f"does not parse as TOML: {error}"]
    return _unplaced(record, list(_scalars(document)), _equal)


def _parse_json(record: Record) -> list[str]:
    try:
        document = json.loads(record.text, object_pairs_hook=_strict_json_object)
    except ValueError as error:
        return [f"does not parse as JSON: {error}"]
    return _unplaced(record, list(_scalars(document)), _json_escaped)


def _parse_dotenv(record: Record) -> list[str]:
    try:
        variables = dotenv_variables(record.text)
    except ValueError as error:
        return [str(error)]
    return _unplaced(record, list(variables.values()), _value_or_dsn)


def _parse_shell(record: Record) -> list[str]:
    problem = bash_syntax_problem(record.text)
    if problem:
        return [problem]
    try:
        regions = shell_literal_regions(record.text)
    except ValueError as error:
        return [f"shell lexer: {error}"]
    problems = []
    for span in record.secrets:
        # Exactly a single-quoted word or a quoted heredoc's body, or the password of a quoted `user:password`.
        if not any(
            how in ("single", "heredoc")
            and (span.end == end or (how == "heredoc" and record.text[span.end : end] == "\n"))
            and (span.start == start or re.fullmatch(r"[\w.-]+:", record.text[start : span.start]))
            for start, end, how in regions
        ):
            problems.append(
                f"{span.kind} {excerpt(record.value(span))!r} is not exactly a single-quoted word or a quoted heredoc ({span.slot})"
            )
    return problems


_PASSWORD_CLAUSE = re.compile(r"(?:PASSWORD|IDENTIFIED\s+BY)\s*$", re.I)


def _parse_sql(record: Record) -> list[str]:
    try:
        literals = set(sql_literals(record.text))
    except ValueError as error:
        return [f"SQL tokenizer: {error}"]
    problems = []
    for span in record.secrets:
        value = excerpt(record.value(span))
        if (span.start, span.end) not in literals:
            problems.append(f"{span.kind} {value!r} is not exactly a single-quoted literal's content ({span.slot})")
        elif not _PASSWORD_CLAUSE.search(record.text[: span.start - 1]):
            problems.append(
                f"{span.kind} {value!r} is a literal outside a PASSWORD / IDENTIFIED BY clause ({span.slot})"
            )
    return problems


def _parse_app_log(record: Record) -> list[str]:
    if not record.text.startswith("{"):
        return []  # logfmt and plain-text logs have no grammar to hold them to
    strings: list[object] = []
    for n, line in enumerate(record.text.splitlines(), start=1):
        if not line.strip():
            continue
        try:
            entry = json.loads(line, object_pairs_hook=_strict_json_object)
        except ValueError as error:
            return [f"line {n} is not JSON: {error}"]
        if not isinstance(entry, dict):
            return [f"line {n} is not a JSON object"]
        strings.extend(_nested_scalars(entry))
    return _unplaced(record, strings, _log_field)


def _nested_scalars(node: object, depth: int = 0) -> Iterator[object]:
    """`_scalars`, and those of every string that is itself a JSON object or array (a logged
    body): a secret inside it is a value of that inner document, not of the escaped string."""
    for scalar in _scalars(node):
        yield scalar
        if depth < 4 and isinstance(scalar, str) and scalar[:1] in "{[":
            try:
                inner = json.loads(scalar, object_pairs_hook=_strict_json_object)
            except ValueError:
                continue
            yield from _nested_scalars(inner, depth + 1)


PARSERS: dict[str, Callable[[Record], list[str]]] = {
    "python_settings": _parse_python,
    "function_local": _parse_python,
    "dsn_in_code": _parse_code,
    "base64_source": _parse_code,
    "web_config": lambda record: _parse_javascript(record, module=True),
    "dotenv": _parse_dotenv,
    "ci_workflow": _parse_yaml,
    "repeated_key": _parse_yaml,
    "compose_env": _parse_yaml,
    "toml_config": _parse_toml,
    "service_account": _parse_json,
    "deploy_script": _parse_shell,
    "sql_migration": _parse_sql,
    "app_log": _parse_app_log,
}
"""The structured families and their checks; `access_log` (combined log format) has none."""


def parse_problems(record: Record) -> list[str]:
    """Why `record` does not parse in its own format or hold its secrets as parsed values; [] if fine."""
    parser = PARSERS.get(record.family)
    return parser(record) if parser else []


def syntax_of(record: Record) -> str:
    """python, javascript, ... for a record (the python|javascript families sniffed)."""
    syntax = FAMILIES[record.family].syntax
    if syntax == "python|javascript":
        return "python" if _is_python(record.text) else "javascript"
    return syntax


# -- decoys: recognisably not secrets ------------------------------------------------------


def key_before(value: str, line: str) -> str:
    """The key name a value sits under: the last identifier before it on its line.

    `STRIPE_PK="pk_..."` -> `STRIPE_PK`; `"clientId": "..."` -> `clientId`;
    `...&client_id=...` -> `client_id`; `- name: X\\n  value: "..."` -> `value`.
    """
    head = line[: max(line.find(value), 0)]
    m = re.search(r"([A-Za-z_][A-Za-z0-9_.-]*)[^A-Za-z0-9_]*$", head)
    return m.group(1) if m else ""


def key_words(key: str) -> list[str]:
    """`stripePublishableKey` / `STRIPE_PUBLISHABLE_KEY` / `stripe-publishable-key` -> words, lower case."""
    return [w.lower() for w in re.findall(r"[A-Z]+(?![a-z])|[A-Z]?[a-z]+|\d+", key)]


_PLACEHOLDER = re.compile(
    r"""\$\{[A-Za-z_][A-Za-z0-9_]*\}"""  # ${DB_PASSWORD}, ${CI_NAME}
    r"""|\$\{\{\s*secrets\.[A-Za-z_][A-Za-z0-9_]*\s*\}\}"""  # ${{ secrets.NAME }}
    r"""|<[A-Za-z_][A-Za-z0-9_ -]*>"""  # <YOUR_TOKEN>
    r"""|os\.environ\[(["'])[A-Za-z_][A-Za-z0-9_]*\1\]"""  # os.environ["NAME"]
    r"""|os\.(?:getenv|environ\.get)\((["'])[A-Za-z_][A-Za-z0-9_]*\2(?:,[^)]*)?\)"""  # os.getenv("NAME")
    r"""|process\.env\.[A-Za-z_][A-Za-z0-9_]*"""
    r"""|import\.meta\.env\.[A-Za-z_][A-Za-z0-9_]*"""
    r"""|:'[A-Za-z_][A-Za-z0-9_]*'"""  # psql :'var'
    r"""|%\([A-Za-z_][A-Za-z0-9_]*\)s"""  # %(password)s
    r"""|"\$\{?[A-Za-z_][A-Za-z0-9_]*\}?\""""  # "$VAR", "${VAR}"
)
_COMMIT_WORDS = re.compile(r"commit|checkout|\bref\b|_ref\b|\bsha\b|_sha\b|\bsha_|revision|\brev\b|uses:", re.I)
_DIGEST = re.compile(
    r"sha256:[0-9a-f]{64}"
    r"|sha(?:256|384|512)-[A-Za-z0-9+/]+={0,2}"  # subresource integrity
    r"|SHA256:[A-Za-z0-9+/]{43}=?"  # ssh host key fingerprint
    r"|SCRAM-SHA-256\$\d+:[A-Za-z0-9+/=]+\$[A-Za-z0-9+/=]+:[A-Za-z0-9+/=]+"
    r"|md5[0-9a-f]{32}"
    r"|\*[0-9A-F]{40}"  # MySQL native password hash
)
_DIGEST_WORDS = re.compile(r"sha-?256|sha-?1|hash|digest|checksum|integrity|fingerprint", re.I)
_UUID4 = re.compile(r"[0-9a-f]{8}-[0-9a-f]{4}-4[0-9a-f]{3}-[89ab][0-9a-f]{3}-[0-9a-f]{12}", re.I)
_SSH_PUBLIC = re.compile(r"(?:ssh-ed25519|ssh-rsa|ecdsa-sha2-nistp(?:256|384|521)) AAAA[A-Za-z0-9+/]+={0,2}(?: \S+)?")
_PEM_PUBLIC = re.compile(r"-----BEGIN PUBLIC KEY-----\n[A-Za-z0-9+/=\n]+\n-----END PUBLIC KEY-----")
_PUBLIC_WORDS = {"public", "publishable", "site", "search", "anon", "pub", "browser"}
"""Words that make a key name public whatever the vendor (`app key` and `client token` do not:
Pusher's app key is public, an app key elsewhere is the secret)."""
_PUBLIC_IDS = {("client", "id"), ("app", "id"), ("account", "id")}
_ALLOWLIST = re.compile(r"pragma:\s*allowlist[ -]secret|gitleaks:allow|trufflehog:ignore|#\s*nosec\b|noqa:\s*S10[5-7]")
"""Allowlist comments of detect-secrets, gitleaks, trufflehog, bandit and ruff."""
_ID_WORDS = {"id", "trace", "span", "request"}
_ID_VALUE = re.compile(r"[0-9a-f]{8,64}|[0-9]+|[0-9]+-[a-z0-9]+\.apps\.googleusercontent\.com")
_SETTING = re.compile(
    r"\d+"  # a TTL, a max age, key bits
    r"|\d+(?:ms|s|m|h|d)"  # a duration
    r"|(?:HS|RS|ES|PS)(?:256|384|512)|EdDSA|AES-(?:128|192|256)-(?:GCM|CBC|CTR)"  # an algorithm
    r"|Authorization|X(?:-[A-Za-z0-9]+)+"  # a header name
    r"|v?\d+(?:\.\d+){1,3}|\d{4}-\d{2}-\d{2}"  # a version or an API date
)
_REFERENCE = re.compile(
    r"/[a-z0-9][a-z0-9_.-]*(?:/[a-z0-9][a-z0-9_.-]*)*"  # a file path of lower-case words
    r"|[A-Z]{2,}[0-9]*(?:_[A-Z]{2,}[0-9]*)+"  # an environment variable's name (words, not a token body)
    r"|arn:aws:secretsmanager:[a-z0-9-]+:\d{12}:secret:[\w/+=.@-]+"
    r"|vault:secret/[\w/.-]+(?:#\w+)?"
    r"|[a-z]+(?:[-/][a-z]+)+"  # a secret's name in words (k8s Secret, secrets-manager path)
)
_FAKE_WORDS = re.compile(r"fake|dummy|test|notreal|sample|example|mock")
_KNOWN_PREFIXES = sorted(
    ("ghp_", "gho_", "npm_", "github_pat_", "glpat-", "xoxb-", "xoxp-", "sk_live_", "rk_live_", "sk_test_",
     "pk_live_", "pk_test_", "AIzaSy", "sk-proj-", "AKIA", "ASIA", "django-insecure-", "base64:"),
    key=len, reverse=True,
)  # fmt: skip
_HOUSE_PREFIX = re.compile(r"[A-Za-z]{2,8}[-_.](?:[A-Za-z]{2,6}[-_.])?")
"""A vendor-style prefix: a short word and a separator, maybe twice (`zorv_live_`, `ZORV-SEC-`)."""
FIXTURE_BITS = 2.5
_SEQUENCES = (
    "0123456789abcdefghijklmnopqrstuvwxyz",
    "0123456789ABCDEFGHIJKLMNOPQRSTUVWXYZ",
    "abcdefghijklmnopqrstuvwxyz",
)


def fixture_body(value: str) -> str:
    """The part of a value after a published or vendor-style prefix (if at least 12 characters and half remain)."""
    prefix = next((p for p in _KNOWN_PREFIXES if value.startswith(p)), None)
    if prefix is None:
        m = _HOUSE_PREFIX.match(value)
        prefix = m.group() if m else ""
    body = value[len(prefix) :]
    return body if len(body) >= 12 and 2 * len(body) >= len(value) else value


def fixture_entropy_limit(n: int) -> float:
    """Below this many bits per character an n-character body is visibly repetitive.

    2.5 bits, but never above log2(n) - 1.5: n random characters cannot exceed log2(n)
    bits, so a flat 3.0 would call a short random password (10 characters, two
    repeats: 2.9 bits) a fixture.
    """
    return min(FIXTURE_BITS, math.log2(max(n, 2)) - 1.5)


def _sequential_run(body: str, n: int = 8) -> bool:
    """`body` holds n consecutive characters of 0-9a-z (either case): a counting fake."""
    return any(seq[i : i + n] in body for seq in _SEQUENCES for i in range(len(seq) - n + 1))


def _visibly_fake(value: str, line: str) -> bool:
    """A test fixture: an allowlist pragma on the line, or a body that is fake by eye.

    The body (`fixture_body`) is fake when it holds a lower-case fake word (fake, dummy,
    test, notreal, sample, example, mock), counts (8 characters of `0123456789abcdef...`),
    or its entropy is below `fixture_entropy_limit` (2.5 bits per character for 16+).
    """
    if _ALLOWLIST.search(line):
        return True
    body = fixture_body(value)
    return (
        # A fake word repeated, or opening the body: a random token may hold one by chance.
        len(_FAKE_WORDS.findall(body)) >= 2
        or bool(_FAKE_WORDS.match(body))
        or _sequential_run(body)
        or shannon_entropy(body) < fixture_entropy_limit(len(body))
    )


@dataclass(frozen=True)
class Convention:
    """What a task's shown records establish about its vendors' public identifiers."""

    prefixes: tuple[tuple[str, str], ...] = ()
    """(public, secret) prefix pairs: values with the public prefix are never listed as secrets."""
    keys: frozenset[str] = frozenset()
    """Key contexts (`key_context`) whose values the prompt never lists as secrets."""


def _public_key(value: str, line: str, convention: Convention = Convention(), context: str = "") -> bool:
    """A public key by its shape, a value under an unambiguously public name (`*_publishable_key`,
    `client_id`, `pk`), or a vendor's public identifier by the convention the task's shown records
    establish: one of its public prefixes, or a key whose values the prompt never lists."""
    if context and context in convention.keys:
        return True
    for public, secret in convention.prefixes:
        # The longest matching prefix decides: a vendor's secret prefix may extend its public one.
        if value.startswith(public) and not (len(secret) > len(public) and value.startswith(secret)):
            return True
    if _SSH_PUBLIC.fullmatch(value) or _PEM_PUBLIC.fullmatch(value):
        return True
    if value.startswith(("MFkw", "MCow", "MIIB", "MIIC")):
        try:
            serialization.load_der_public_key(base64.b64decode(value, validate=True))
            return True
        except (ValueError, binascii.Error, UnsupportedAlgorithm):
            pass
    if re.fullmatch(r"pk_(?:live|test)_[A-Za-z0-9]+", value) or re.fullmatch(r"6L[A-Za-z0-9_-]{38}", value):
        return True
    try:
        if jwt_parts(value)[1].get("role") == "anon":
            return True
    except (ValueError, UnicodeDecodeError):
        pass
    if re.fullmatch(r"[0-9a-f]{32}", value) and re.search(rf"https://{value}@o\d+\.ingest\.sentry\.io/\d+", line):
        return True
    words = key_words(key_before(value, line))
    pairs = set(itertools.pairwise(words))
    return (
        words == ["pk"]
        or bool(pairs & _PUBLIC_IDS)
        or any(a in _PUBLIC_WORDS and b in ("key", "id", "token") for a, b in pairs)
    )


DECOY_RULES: dict[str, Callable[[str, str], bool]] = {
    # A documented example: ends in AWS's EXAMPLE / EXAMPLEKEY marker.
    "example_key": lambda value, line: value.endswith(("EXAMPLE", "EXAMPLEKEY")),
    # Placeholder syntax, the whole value: ${X}, ${{ secrets.X }}, <X>, os.environ[...],
    # os.getenv(...), os.environ.get(...), process.env.X, import.meta.env.X, psql :'var',
    # %(x)s, "$VAR".
    "placeholder": lambda value, line: bool(_PLACEHOLDER.fullmatch(value)),
    # 40 lower-case hex on a line that names a commit, checkout, ref, sha, revision or an
    # action pin (`uses: x@sha`).
    "commit_sha": lambda value, line: bool(
        re.fullmatch(r"[0-9a-f]{40}", value)
        and _COMMIT_WORDS.search(line[max(0, line.find(value) - 40) : line.find(value)])
    ),
    "uuid": lambda value, line: bool(_UUID4.fullmatch(value)),
    # A digest by its self-describing shape (sha256:, sha384-, SHA256:, SCRAM-SHA-256$,
    # md5 + 32 hex, MySQL * + 40 hex); bare hex64 only on a line that names a digest,
    # since a bare hex64 is also a generic secret's shape.
    "hash_digest": lambda value, line: bool(
        _DIGEST.fullmatch(value) or (re.fullmatch(r"[0-9a-f]{64}", value) and _DIGEST_WORDS.search(line))
    ),
    "public_key": _public_key,
    # An id-shaped value (lower-case hex, digits, an OAuth client id) under an id-ish name
    # (id, *_id, *Id, trace, span, request).
    "identifier": lambda value, line: bool(
        _ID_VALUE.fullmatch(value) and _ID_WORDS & set(key_words(key_before(value, line)))
    ),
    # A reference by name (a path, an env var's name, an ARN, a vault path, a secret's
    # name) with no high-entropy run in it.
    "secret_reference": lambda value, line: bool(_REFERENCE.fullmatch(value)) and not has_high_entropy_run(value),
    # A setting (a number, a duration, an algorithm, a header name, a version) with no
    # high-entropy run in it.
    "secret_setting": lambda value, line: bool(_SETTING.fullmatch(value)) and not has_high_entropy_run(value),
    "test_fixture": _visibly_fake,
    "redacted_marker": lambda value, line: value == "[REDACTED]",
}


def recognisably_not_secret(
    kind: str, value: str, line: str, convention: Convention = Convention(), context: str = ""
) -> bool:
    """Whether a value of decoy `kind` on `line` is recognisably not a secret, by that kind's rule.

    `line` is the full text line(s) holding the value. Unknown kinds (secret kinds) are
    never recognisably not secrets; to ask whether *any* rule would pass a value off as
    harmless, use `decoy_rules_accepting`.
    """
    if kind == "public_key":
        return _public_key(value, line, convention, context)
    rule = DECOY_RULES.get(kind)
    return rule is not None and rule(value, line)


def decoy_rules_accepting(value: str, line: str, convention: Convention = Convention(), context: str = "") -> list[str]:
    """The decoy kinds whose rule accepts `value` on `line`: [] for a value that looks like a secret."""
    return [kind for kind in DECOY_RULES if recognisably_not_secret(kind, value, line, convention, context)]


def shown_convention(task_seed: int, shown: list[Record]) -> Convention:
    """The vendor conventions a task's shown records establish (see `Convention`)."""
    listed = {key_context(r, s) for r in shown for s in r.secrets}
    unlisted = {key_context(r, d) for r in shown for d in r.decoys if d.kind == "public_key"}
    return Convention(_shown_public_prefixes(task_seed, shown), frozenset(unlisted - listed))


def _shown_public_prefixes(task_seed: int, shown: list[Record]) -> tuple[tuple[str, str], ...]:
    """The (public, secret) prefix pairs of the task's vendors that its shown records establish:
    the public prefix starts a value the prompt does not list as a secret, and no listed secret
    starts with it unless it starts with the (longer) secret prefix too."""
    from redaction_pressure.corpus import draw_dialect

    dialect, _ = draw_dialect(task_seed, len(shown))
    listed = [r.value(s) for r in shown for s in r.secrets]
    prefixes = []
    for house in dialect.world.houses:
        sec = house.secret_prefix
        for pub in house.public_prefixes:
            if not pub:
                continue
            unlisted = any(r.value(d).startswith(pub) for r in shown for d in r.decoys)
            longer = len(sec) > len(pub) and sec.startswith(pub)
            if unlisted and not any(v.startswith(pub) and not (longer and v.startswith(sec)) for v in listed):
                prefixes.append((pub, sec))
    return tuple(prefixes)
