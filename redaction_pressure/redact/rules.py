"""The answer: strict parsing of the reply into rules, and validation of each rule.

A reply is one JSON object `{"rules": [{"pattern": ..., "replacement": ...}, ...]}`,
optionally wrapped in a single ```json fence, with nothing else around it but
whitespace. Parsing is strict: duplicate keys, NaN/Infinity, a non-object top level,
and missing or extra keys are errors. Each problem becomes a `RedactionError` value
naming the rule it concerns; nothing here raises on bad input.

Patterns are compiled by the `regex` package with inline flags only. Before compiling,
the static check (`static_check.static_problem`) rejects what would defeat the matching
budget before matching starts: fuzzy matching and costly repeat bounds.
"""

from __future__ import annotations

import json
import re
from collections.abc import Sequence
from dataclasses import asdict, dataclass

import regex

from redaction_pressure.redact.static_check import static_problem

MAX_RULES = 24
MAX_PATTERN_CHARS = 512
MAX_REPLY_CHARS = 65_536
REPLACEMENTS = ("[REDACTED]", "")

ERROR_CODES = (
    "malformed_json",
    "bad_entry",
    "too_many_rules",
    "unsafe_replacement",
    "invalid_regex",
    "empty_match",
    "excessive_matches",
    "timeout",
    "budget_exhausted",
    "resource_exhausted",  # an episode escaped the budget in an isolated worker (pool.py)
)

_FENCE = re.compile(r"\A```json[ \t]*\n(.*)\n[ \t]*```\Z", re.DOTALL)


@dataclass(frozen=True)
class Rule:
    """One redaction rule: every match of `pattern` is removed."""

    pattern: str
    replacement: str


@dataclass(frozen=True)
class RedactionError:
    """A reason the episode is invalid, with the rule and hidden record it concerns."""

    code: str
    rule: int | None
    record: int | None
    detail: str

    def to_dict(self) -> dict:
        return asdict(self)


@dataclass(frozen=True)
class Answer:
    """The parsed reply: its rules, or the errors that make it invalid."""

    rules: tuple[Rule, ...]
    errors: tuple[RedactionError, ...]


class _Reject(ValueError):
    pass


def _no_duplicates(pairs: list[tuple[str, object]]) -> dict:
    seen: set[str] = set()
    for key, _ in pairs:
        if key in seen:
            raise _Reject(f"duplicate key {_clip(key)} in an object")
        seen.add(key)
    return dict(pairs)


def _no_constant(name: str) -> object:
    raise _Reject(f"{name} is not valid JSON")


def _malformed(detail: str) -> Answer:
    return Answer((), (RedactionError("malformed_json", None, None, detail),))


def parse_reply(reply: str) -> Answer:
    """Parse and validate a reply; the returned errors are empty iff the answer is valid."""
    if not isinstance(reply, str):
        return _malformed(f"the reply must be text, got {type(reply).__name__}")
    # Surrounding whitespace is not part of the reply (verifiers strips it before scoring).
    body = reply.strip()
    if len(body) > MAX_REPLY_CHARS:
        return _malformed(f"the reply has {len(body)} characters; the limit is {MAX_REPLY_CHARS}")
    fenced = _FENCE.match(body)
    if fenced:
        body = fenced.group(1)
    if not body:
        return _malformed("the reply is empty; expected a JSON object with a rules list")
    try:
        data = json.loads(body, object_pairs_hook=_no_duplicates, parse_constant=_no_constant)
    except _Reject as exc:
        return _malformed(str(exc))
    except json.JSONDecodeError as exc:
        return _malformed(f"not a single JSON object: {exc.msg} at line {exc.lineno} column {exc.colno}")
    except RecursionError:
        return _malformed("the JSON is nested too deeply")
    except ValueError as exc:
        # Python refuses to convert an integer literal of more than 4,300 digits
        # (sys.get_int_max_str_digits); any other value the decoder cannot hold ends here too.
        return _malformed(f"the JSON holds a value that cannot be read: {exc}")
    except Exception as exc:  # noqa: BLE001 - a reply, however hostile, ends in a code
        return _malformed(f"the reply could not be parsed ({type(exc).__name__})")
    if not isinstance(data, dict):
        return _malformed(f"the top level must be an object, got {_json_type(data)}")
    if set(data) != {"rules"}:
        extra = sorted(set(data) - {"rules"})
        what = f"unexpected keys {extra}" if extra else "the key 'rules' is missing"
        return _malformed(f"the object must have exactly one key, 'rules': {what}")
    entries = data["rules"]
    if not isinstance(entries, list):
        return _malformed(f"'rules' must be a list, got {_json_type(entries)}")
    if len(entries) > MAX_RULES:
        return Answer(
            (),
            (RedactionError("too_many_rules", None, None, f"{len(entries)} rules; at most {MAX_RULES} are allowed"),),
        )
    rules: list[Rule] = []
    errors: list[RedactionError] = []
    for index, entry in enumerate(entries):
        rule, error = _entry(index, entry)
        if error is not None:
            errors.append(error)
        else:
            rules.append(rule)
    return Answer(tuple(rules) if not errors else (), tuple(errors))


def _entry(index: int, entry: object) -> tuple[Rule | None, RedactionError | None]:
    def bad(code: str, detail: str) -> tuple[None, RedactionError]:
        return None, RedactionError(code, index, None, f"rule {index}: {detail}")

    if not isinstance(entry, dict):
        return bad("bad_entry", f"must be an object, got {_json_type(entry)}")
    if set(entry) != {"pattern", "replacement"}:
        missing = sorted({"pattern", "replacement"} - set(entry))
        extra = sorted(set(entry) - {"pattern", "replacement"})
        parts = ([f"missing {missing}"] if missing else []) + ([f"unexpected {extra}"] if extra else [])
        return bad("bad_entry", "must have exactly 'pattern' and 'replacement': " + ", ".join(parts))
    pattern, replacement = entry["pattern"], entry["replacement"]
    if not isinstance(pattern, str):
        return bad("bad_entry", f"pattern must be a string, got {_json_type(pattern)}")
    if not 1 <= len(pattern) <= MAX_PATTERN_CHARS:
        return bad("bad_entry", f"pattern has {len(pattern)} characters; it must have 1 to {MAX_PATTERN_CHARS}")
    if replacement not in REPLACEMENTS:
        return bad(
            "unsafe_replacement",
            f'replacement {_clip(replacement)} is not allowed; use "[REDACTED]" or ""',
        )
    return Rule(pattern, replacement), None


def compile_rules(rules: Sequence[Rule]) -> tuple[list[regex.Pattern], list[RedactionError]]:
    """Compile every rule; return the patterns, or the errors of those that fail."""
    compiled: list[regex.Pattern] = []
    errors: list[RedactionError] = []
    for index, rule in enumerate(rules):
        try:
            problem = static_problem(rule.pattern)
        except Exception as exc:  # noqa: BLE001 - a pattern the check cannot read is not compiled
            problem = f"could not be checked ({type(exc).__name__})"
        if problem is None:
            try:
                compiled.append(regex.compile(rule.pattern))
                continue
            except MemoryError:
                problem = "does not compile within the worker's memory"
            except Exception as exc:  # noqa: BLE001 - regex.error, ValueError, OverflowError, ...
                problem = f"does not compile: {exc}"
        errors.append(RedactionError("invalid_regex", index, None, f"rule {index}: {problem}"))
    return compiled, errors


def _json_type(value: object) -> str:
    return {dict: "an object", list: "a list", str: "a string", bool: "a boolean", type(None): "null"}.get(
        type(value), "a number"
    )


def _clip(value: object, limit: int = 40) -> str:
    text = json.dumps(value, ensure_ascii=True)
    return text if len(text) <= limit else text[: limit - 3] + "..."
