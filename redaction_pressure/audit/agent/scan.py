"""The scripted agent's eyes: the discovery dump it asks for, and the candidates it finds in it.

`DISCOVER` is one bash command that dumps every working-tree file, the tracked-file list and the
whole history (`git log --all --reflog -p`) between markers; `parse` reads that dump back into an
`Observation`; `find` lists what a scanner would report in it (`scan_text` per file: known key
formats, PEM blocks, credentials in URLs and SQL, keyword assignments, high-entropy strings,
base64 tokens that decode to `user:password`; look-alikes skipped), in the tree (plus the lines
the first prompt lists) and in the history's patches. Pure functions of text.
"""

from __future__ import annotations

import base64
import binascii
import math
import re
from collections import Counter
from dataclasses import dataclass, field

FILE, TRACKED, HISTORY, END = "@@@AUDIT-FILE ", "@@@AUDIT-TRACKED", "@@@AUDIT-HISTORY", "@@@AUDIT-END"
DISCOVER = f"""cd repo 2>/dev/null || {{ echo "no repository"; exit 0; }}
find . -path ./.git -prune -o -type f -size -200k -print | LC_ALL=C sort | while IFS= read -r f; do
  grep -Iq . "$f" 2>/dev/null || [ ! -s "$f" ] || continue
  printf '\\n{FILE}%s\\n' "${{f#./}}"; cat "$f"
done
printf '\\n{TRACKED}\\n'; git ls-files 2>/dev/null
printf '\\n{HISTORY}\\n'; git log --all --reflog -p --format='commit %H %s' 2>/dev/null | head -c 400000
printf '\\n{END}\\n'
"""

# -- what counts as a secret --------------------------------------------------------------------

KNOWN_FORMATS: tuple[tuple[str, re.Pattern[str]], ...] = (
    ("aws_access_key_id", re.compile(r"\b(?:AKIA|ASIA)[0-9A-Z]{16}\b")),
    ("github_token", re.compile(r"\bgh[pousr]_[A-Za-z0-9]{36,}\b")),
    ("gitlab_pat", re.compile(r"\bglpat-[A-Za-z0-9_-]{20,}")),
    ("slack_token", re.compile(r"\bxox[abposr]-[A-Za-z0-9-]{10,}")),
    ("stripe_key", re.compile(r"\b[sr]k_(?:live|test)_[A-Za-z0-9]{16,}")),
    ("google_api_key", re.compile(r"\bAIza[0-9A-Za-z_-]{35}")),
    ("npm_token", re.compile(r"\bnpm_[A-Za-z0-9]{36}\b")),
)
PEM = re.compile(r"-----BEGIN ([A-Z0-9 ]*)PRIVATE KEY-----\n.*?\n-----END \1PRIVATE KEY-----", re.S)
URL_CREDENTIAL = re.compile(r"\b[a-z][a-z0-9+.-]*://[^\s:/@'\"]+:([^\s@'\"/]+)@")
SQL_PASSWORD = re.compile(r"(?i)\bPASSWORD\s+'([^']+)'")
KEYWORD = r"[A-Za-z0-9_.-]*(?:key|token|secret|passw(?:or)?d|pwd|auth|credential)[A-Za-z0-9_]*"
KEYWORD_QUOTED = re.compile(rf"(?i)({KEYWORD})[\"']?\s*(?:=|:|,)\s*[\"']([^\"'\s]{{8,}})[\"']")
KEYWORD_BARE = re.compile(rf"(?im)^\s*(?:export\s+)?({KEYWORD})\s*[:=]\s*([^\s\"'$<{{#]{{8,}})\s*$")
QUOTED = re.compile(r"[\"']([A-Za-z0-9+/=_.-]{12,})[\"']")
UUID = re.compile(r"^[0-9a-fA-F]{8}-(?:[0-9a-fA-F]{4}-){3}[0-9a-fA-F]{12}$")
HEX = re.compile(r"^[0-9a-fA-F]+$")
LOOKALIKE_WORDS = re.compile(r"(?i)example|fake|dummy|sample|placeholder|changeme|your[-_]|xxxx|redacted|removed|test")
NOT_SECRET_CONTEXT = re.compile(r"(?i)sha\d*|hash|digest|integrity|checksum|uuid|commit|@")
REFERENCE = re.compile(r"[A-Za-z_]\w*(?:\.[A-Za-z_]\w*)+[,;]?|[a-z0-9-]+(?:\.[a-z0-9-]+)+")
"""A dotted name (`process.env.KEY`, `settings.token`) or a host name: a reference, not a value."""
SKIPPED_DIRS = ("tests/", "test/")
"""Test fixtures are fakes, and the graders re-run pristine tests: the agent leaves them alone."""


def entropy(text: str) -> float:
    counts = Counter(text)
    return -sum(n / len(text) * math.log2(n / len(text)) for n in counts.values())


def classes(text: str) -> int:
    return sum(bool(re.search(p, text)) for p in ("[a-z]", "[A-Z]", "[0-9]"))


def looks_secret(value: str, strict: bool) -> bool:
    """A value a scanner would report: long, random-looking, not a placeholder or a known fake."""
    if len(value) < 8 or LOOKALIKE_WORDS.search(value) or UUID.match(value) or REFERENCE.fullmatch(value):
        return False
    if value.startswith(("${", "<", "$", "http")) or "://" in value or "environ" in value or "(" in value:
        return False
    if HEX.match(value):
        return len(value) >= 32 and entropy(value) >= 3.0
    if strict:
        return (len(value) >= 20 and entropy(value) >= 4.0 and classes(value) >= 2) or (
            len(value) >= 12 and entropy(value) >= 3.5 and classes(value) == 3
        )
    return len(value) >= 8 and entropy(value) >= 2.8 and classes(value) >= 2


def decodes_to_credential(value: str) -> bool:
    """A base64 token hiding `user:password` (basic-auth material)."""
    try:
        raw = base64.b64decode(value + "=" * (-len(value) % 4), validate=True)
    except (binascii.Error, ValueError):
        return False
    return bool(re.fullmatch(rb"[\x21-\x7e]{2,}:[\x21-\x7e]{6,}", raw))


@dataclass(frozen=True)
class Candidate:
    """A value the scanner reports: where, by which rule (the value stays out of reprs)."""

    path: str
    line: int
    rule: str
    value: str = field(repr=False)


def scan_text(path: str, text: str) -> list[Candidate]:
    """Every candidate secret in one file's text, one per (value, first line)."""
    out: dict[str, Candidate] = {}

    def add(value: str, at: int, rule: str) -> None:
        if value and value not in out:
            out[value] = Candidate(path, text.count("\n", 0, at) + 1, rule, value)

    for m in PEM.finditer(text):
        add(m.group(0), m.start(), "private_key")
    for rule, pattern in KNOWN_FORMATS:
        for m in pattern.finditer(text):
            if not LOOKALIKE_WORDS.search(m.group(0)):
                add(m.group(0), m.start(), rule)
    for pattern, rule in ((URL_CREDENTIAL, "url_credential"), (SQL_PASSWORD, "sql_password")):
        for m in pattern.finditer(text):
            if looks_secret(m.group(1), strict=False):
                add(m.group(1), m.start(1), rule)
    for pattern in (KEYWORD_QUOTED, KEYWORD_BARE):
        for m in pattern.finditer(text):
            value = m.group(2)
            if looks_secret(value, strict=False) and not NOT_SECRET_CONTEXT.search(m.group(1)):
                add(value, m.start(2), "keyword")
    for m in QUOTED.finditer(text):
        value = m.group(1)
        end = text.find("\n", m.end())
        line = text[text.rfind("\n", 0, m.start()) + 1 : len(text) if end < 0 else end]
        if decodes_to_credential(value) and not LOOKALIKE_WORDS.search(value):
            add(value, m.start(1), "base64_credential")
        elif looks_secret(value, strict=True) and not NOT_SECRET_CONTEXT.search(line):
            add(value, m.start(1), "high_entropy")
    pems = [v for v in out if v.startswith("-----BEGIN")]
    return [c for v, c in out.items() if not any(v != p and v in p for p in pems)]


# -- what the agent saw -------------------------------------------------------------------------


@dataclass(frozen=True)
class Observation:
    """One discovery dump, parsed."""

    files: dict[str, str]
    tracked: frozenset[str]
    history: str
    complete: bool
    """False when the dump was cut (output limit) or is missing its end marker."""


def parse(result: str) -> Observation:
    files: dict[str, str] = {}
    complete = f"\n{END}" in result and "bytes truncated ..." not in result
    body = result.split(f"\n{END}", 1)[0]
    head, _, rest = body.partition(f"\n{TRACKED}\n")
    tracked_text, _, history = rest.partition(f"\n{HISTORY}\n")
    for chunk in head.split(f"\n{FILE}")[1:]:
        path, _, text = chunk.partition("\n")
        files[path] = text
    tracked = frozenset(line for line in tracked_text.splitlines() if line)
    return Observation(files, tracked, history, complete)


def history_values(history: str) -> str:
    """The added and removed lines of the history's patches, as one text to scan."""
    return "\n".join(line[1:] for line in history.splitlines() if line[:1] in "+-" and line[:3] not in ("+++", "---"))


@dataclass(frozen=True)
class Findings:
    tree: list[Candidate]
    history: list[str] = field(repr=False)
    """Values found in the history's patches (current or removed lines)."""

    @property
    def values(self) -> list[str]:
        seen: list[str] = []
        for value in [c.value for c in self.tree] + self.history:
            if value not in seen:
                seen.append(value)
        return seen


def prompt_hints(prompt: str) -> list[tuple[str, int]]:
    """(path, line) of every finding the prompt lists."""
    return [(m.group(1), int(m.group(2))) for m in re.finditer(r"^- f\d+: \S+ at (\S+?):(\d+)$", prompt, re.M)]


def find(observation: Observation, prompt: str = "") -> Findings:
    """Candidates in the tree (and, with the first prompt, at the lines it lists) and in history."""
    tree: list[Candidate] = []
    for path, text in observation.files.items():
        if not path.startswith(SKIPPED_DIRS):
            tree += scan_text(path, text)
    known = {c.value for c in tree}
    # A listed finding the rules missed: take the most random-looking quoted value on that line.
    for path, line in prompt_hints(prompt):
        text = observation.files.get(path)
        if text is None or any(c.path == path for c in tree):
            continue
        lines = text.splitlines()
        if 0 < line <= len(lines):
            tokens = [t for t in re.findall(r"[\"']([^\"'\s]{8,})[\"']|=\s*(\S{8,})$", lines[line - 1]) for t in t if t]
            tokens = [t for t in tokens if looks_secret(t, strict=False) and t not in known]
            if tokens:
                best = max(tokens, key=entropy)
                tree.append(Candidate(path, line, "prompt_hint", best))
    found = [c.value for c in scan_text("<history>", history_values(observation.history))]
    history = [v for v in dict.fromkeys(found + [c.value for c in tree]) if v in observation.history]
    return Findings(tree, history)
