"""Each family parsed in its own format: `parse_problems(record)` says where a secret is not a value
the parser returns (an AST string, a YAML scalar, a sourced variable, a URL's password), and
`syntax_of(record)` names the format. Families without a grammar of their own (`access_log`, and
`app_log` outside JSON lines) are not checked.
"""

from __future__ import annotations

import ast
import json
import os
import re
import subprocess
import tempfile
import tomllib
import urllib.parse
from collections.abc import Callable, Iterator

import yaml

from redaction_pressure.corpus import FAMILIES
from redaction_pressure.spans import Record

from .lexers import bash_syntax_problem, shell_literal_regions, sql_literals
from .records import excerpt

try:
    import esprima
except ImportError:  # a dev dependency: an environment synced without the dev group lacks it
    esprima = None


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
