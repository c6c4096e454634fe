"""Shared test data: minimal bad answers with their error codes, hostile patterns, helpers.

Every test module draws from here, so a case is written once and its expected
outcome is stated beside it.
"""

from __future__ import annotations

import io
import json
import logging
import os
from contextlib import contextmanager

from redaction_pressure.redact.api import RedactionTask, load_task
from redaction_pressure.spans import Record, Span
from redaction_pressure.splits import DEV_SIZE

PRIVATE_ENV = "REDACTION_PRESSURE_PRIVATE_SEED"
TEST_SECRET = "t3st-secret-for-unit-tests-only-0123456789abcdef"
HANG_SECONDS = 60.0
"""Wall time after which a bounded operation counts as hung. Tests assert only this: the
machines are shared (a dozen busy processes on two cores made one CPU second take 14 s of
wall time), so speed is measured by benchmarks/, never by a timed test; a hostile pattern
that is not interrupted runs for hours, far past this bound."""
OTHER_SECRET = "another-test-secret-with-enough-characters-42"


def cycled_reply(index: int, hidden: list[Record]) -> str:
    """Task i of a scripted run answers with policy i % 4, from the task's hidden records:
    the oracle (1.0), no rules (0.0), the first-character exploit (0.0), malformed JSON (0.0)."""
    from redaction_pressure.redact import policies

    kind = index % 4
    if kind == 0:
        return policies.reply(policies.oracle_rules(hidden))
    if kind == 1:
        return '{"rules": []}'
    if kind == 2:
        return policies.reply(policies.first_character_rules(hidden))
    return '{"rules": [{"pattern": "AKIA", "replacement": "[REDACTED]"},]}'


def reply(*rules: tuple[str, str]) -> str:
    return json.dumps({"rules": [{"pattern": p, "replacement": r} for p, r in rules]})


EXHAUSTING = r"(?s).{0,6}.{0,6}.{0,6}(?<=\x00)"
"""A rule that matches nothing and costs CPU in proportion to the text (`calibrate.linear_pattern(6)`).
On the longest dev task, 24 copies need ~7.6 CPU-s against the 1 s budget while the dearest call
takes ~0.028 s against the 0.25 s cap (measured here, 2026-12-01): a machine up to seven times
faster or eight times slower still ends it as `budget_exhausted`. (`.*.*`, quadratic per record,
had a fourfold margin to the cap only, and under a twofold one to the budget on the leanest task.)"""


# (name, reply, expected code) — each the smallest answer that produces the code on
# any dev task. Matching-time codes use patterns that misbehave on any realistic text.
BAD_ANSWERS: list[tuple[str, str, str]] = [
    ("not json", "rules: [secret]", "malformed_json"),
    ("empty reply", "", "malformed_json"),
    ("prose around the object", 'Here you go: {"rules": []}', "malformed_json"),
    ("top level is a list", "[]", "malformed_json"),
    ("duplicate top-level key", '{"rules": [], "rules": []}', "malformed_json"),
    ("NaN", '{"rules": [], "x": NaN}', "malformed_json"),
    ("extra top-level key", '{"rules": [], "note": "hi"}', "malformed_json"),
    ("rules not a list", '{"rules": {}}', "malformed_json"),
    ("two fences", '```json\n{"rules": []}\n```\n```json\n{"rules": []}\n```', "malformed_json"),
    ("entry not an object", '{"rules": ["AKIA"]}', "bad_entry"),
    ("entry missing replacement", '{"rules": [{"pattern": "AKIA"}]}', "bad_entry"),
    ("entry with extra key", '{"rules": [{"pattern": "a", "replacement": "", "flags": "i"}]}', "bad_entry"),
    ("duplicate key in entry", '{"rules": [{"pattern": "a", "pattern": "b", "replacement": ""}]}', "malformed_json"),
    ("empty pattern", reply(("", "")), "bad_entry"),
    ("pattern too long", reply(("a" * 513, "")), "bad_entry"),
    ("pattern not a string", '{"rules": [{"pattern": 7, "replacement": ""}]}', "bad_entry"),
    ("too many rules", reply(*[("AKIA[A-Z2-7]{16}", "[REDACTED]")] * 25), "too_many_rules"),
    ("group reference replacement", reply(("(AKIA)[A-Z2-7]{16}", r"\1")), "unsafe_replacement"),
    ("whole-match replacement", reply(("AKIA[A-Z2-7]{16}", r"\g<0>")), "unsafe_replacement"),
    ("dollar replacement", reply(("AKIA[A-Z2-7]{16}", "$1")), "unsafe_replacement"),
    ("other text replacement", reply(("AKIA[A-Z2-7]{16}", "***")), "unsafe_replacement"),
    ("unbalanced group", reply(("(AKIA", "")), "invalid_regex"),
    ("fuzzy matching", reply(("(?:AKIA){e<=3}", "")), "invalid_regex"),
    ("compile bomb", reply(("((a{1000}){1000}){100}", "")), "invalid_regex"),
    ("empty match", reply(("x*", "")), "empty_match"),
    # `\K` inside a lookahead ends a match before it starts: counted, it would lift precision above 1.
    ("inverted span", reply((r"[^\n](?=[^\n]\K)", "[REDACTED]")), "empty_match"),
    ("excessive matches", reply(("(?s).", "")), "excessive_matches"),
    # Exponential on any text: the lookbehind hides the impossible NUL from regex's
    # required-literal check, so the first call runs into the per-call cap.
    ("exponential backtracking", reply((r"(?s)(.|.)*(?<=\x00)", "")), "timeout"),
    # Linear in the text (EXHAUSTING): many small calls whose sum is many budgets.
    ("many cheap scans exhaust the budget", reply(*[(EXHAUSTING, "")] * 24), "budget_exhausted"),
]

# Hostile patterns over synthetic text, each with the code it must end in.
HOSTILE: list[tuple[str, str, str]] = [
    (r"(a+)+$", "a" * 5000 + "b", "timeout"),
    (r"(.*a){12}x", "a" * 5000, "timeout"),
    (r"(a|aa)+$", "a" * 5000 + "b", "timeout"),
    (r"(?:AKIA){e<=3}", "a" * 5000, "invalid_regex"),
    (r"((a{1000}){1000}){100}", "a" * 5000, "invalid_regex"),
]


def synthetic_record(text: str, secrets: list[tuple[int, int]] = (), decoys: list[tuple[int, int]] = ()) -> Record:
    """A record over arbitrary text, for cases the corpus never produces."""
    return Record(
        text=text,
        secrets=tuple(Span(start=a, end=b, kind="generic_secret") for a, b in secrets),
        decoys=tuple(Span(start=a, end=b, kind="placeholder") for a, b in decoys),
        family="synthetic",
    )


def dev_tasks() -> list[RedactionTask]:
    return [load_task("dev", index) for index in range(DEV_SIZE)]


def longest_dev_task() -> RedactionTask:
    """The dev task with the most hidden text: the one hostile answers are scored against."""
    return max(dev_tasks(), key=lambda t: sum(len(r.text) for r in t.hidden))


@contextmanager
def private_secret(value: str | None):
    """Set (or unset, with None) the private_eval secret for the duration of a block."""
    old = os.environ.get(PRIVATE_ENV)
    if value is None:
        os.environ.pop(PRIVATE_ENV, None)
    else:
        os.environ[PRIVATE_ENV] = value
    try:
        yield
    finally:
        if old is None:
            os.environ.pop(PRIVATE_ENV, None)
        else:
            os.environ[PRIVATE_ENV] = old


@contextmanager
def captured_logs():
    """Everything logged anywhere, at every level, during the block (read `.getvalue()`)."""
    stream = io.StringIO()
    handler = logging.StreamHandler(stream)
    root = logging.getLogger()
    old_level = root.level
    root.addHandler(handler)
    root.setLevel(logging.DEBUG)
    try:
        yield stream
    finally:
        root.removeHandler(handler)
        root.setLevel(old_level)


def child_pids(parent: int, command_contains: str = "") -> list[int]:
    """PIDs of `parent`'s direct children whose command line contains `command_contains` (from /proc)."""
    from pathlib import Path

    found = []
    for entry in Path("/proc").iterdir():
        if not entry.name.isdigit():
            continue
        try:
            ppid = int((entry / "stat").read_text().rsplit(")", 1)[1].split()[1])
            command = (entry / "cmdline").read_bytes().replace(b"\0", b" ").decode(errors="replace")
        except (OSError, ValueError, IndexError):
            continue
        if ppid == parent and command_contains in command:
            found.append(int(entry.name))
    return found
