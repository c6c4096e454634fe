"""A scripted, non-LLM secrets-audit agent: scanner patterns, environment lookups, filter-repo.

The agent sees only what a model sees: the first user prompt and the results of its own tool
calls. It never reads the task's plan or secret values. It acts with the `bash` tool alone,
turn by turn:

1. *discover*: one command dumps every working-tree file, the tracked-file list and the whole
   history (`git log --all --reflog -p`) between markers;
2. *fix*: from that dump it finds candidates with scanner-style rules (known key formats, PEM
   blocks, credentials in URLs and SQL, keyword assignments, high-entropy strings, base64
   tokens that decode to `user:password`), skips look-alikes (examples, fixtures, placeholders,
   hashes, UUIDs), and writes each affected file back with the secret replaced by an
   environment lookup for the file's language (`os.environ.get("NAME", "")` in Python,
   `"${NAME}"` in shell, `${{ secrets.NAME }}` in workflows, `process.env.NAME` in
   JavaScript, a psql variable in SQL, an empty value in TOML, `[REDACTED]` in logs and
   docs); a tracked `.env` leaves the tree and git and goes into `.gitignore`. It commits,
   and when the history holds a found value it runs `git filter-repo --replace-text`, then
   expires the reflog and runs `git gc`. The same command ends with a fresh dump;
3. it repeats the fix while the fresh dump still shows candidates it can change (at most
   `MAX_FIX_ROUNDS` times), then answers in text, which ends the episode.

`decide(prompt, results)` is the whole policy, a pure function of what the agent has seen.
`play_local(plan)` plays it on a local workspace with the same programs the taskset's
`setup` and `finalize` run; `answer(body)` turns a chat-completions request into its next
tool calls, for a stand-in model server in front of the real `vf-eval`.

Where it falls short is the point of a baseline: it knows formats, not code, so a secret in
an unusual place or a fix that breaks behaviour costs it reward.
"""

from __future__ import annotations

import base64
import binascii
import math
import re
import shlex
from collections import Counter
from dataclasses import dataclass, field
from pathlib import PurePosixPath

from redaction_pressure.audit.plan import RepoPlan

MAX_FIX_ROUNDS = 2
TOOL_OUTPUT_MAX_BYTES = 20_000
"""The bash harness's middle-out cut of one tool result (verifiers 0.4.0); mirrored locally."""
DONE = "Remediation finished: the scanner finds no further secret it can fix."
FIX_MESSAGE = "Remove hard-coded secrets; read them from the environment"
REPLACED = "***REMOVED***"

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


# -- how to fix a file --------------------------------------------------------------------------


def env_name(text: str) -> str:
    """An environment-variable name from an identifier: `apiKey` -> `API_KEY`."""
    snake = re.sub(r"(?<=[a-z0-9])(?=[A-Z])", "_", text)
    name = re.sub(r"[^A-Za-z0-9]+", "_", snake).strip("_").upper()
    return name if name and not name[0].isdigit() else f"SECRET_{name}"


DOCUMENTED = re.compile(r"`([A-Z][A-Z0-9]*(?:_[A-Z0-9]+)+|[A-Z]{3,})`")


def documented_names(files: dict[str, str]) -> list[str]:
    """The environment variables the repository's README and docs name (in backticks)."""
    text = "\n".join(t for p, t in files.items() if p.lower().endswith(".md"))
    return sorted(set(DOCUMENTED.findall(text)))


def _tokens(text: str) -> set[str]:
    snake = re.sub(r"(?<=[a-z0-9])(?=[A-Z])", "_", text)
    return {t for t in re.split(r"[^a-z0-9]+", snake.lower()) if len(t) > 2}


def name_for(line: str, path: str, value: str, documented: list[str] = ()) -> str:
    """The variable a fix reads: the one the line already names, else the documented name that
    shares the most words with the line and the file's path, else one made from the context."""
    m = re.search(r"(?:environ\.get|getenv)\(\s*[\"']([A-Za-z_][A-Za-z0-9_]*)[\"']", line)
    if m:
        return m.group(1)
    guess = _guess_name(line, path, value)
    context = _tokens(line if "\n" not in value else "") | _tokens(path) | _tokens(guess)
    scored = sorted(((len(_tokens(n) & context), n) for n in documented), reverse=True)
    if scored and scored[0][0] > 0 and (len(scored) == 1 or scored[0][0] > scored[1][0]):
        return scored[0][1]
    return guess


def _guess_name(line: str, path: str, value: str) -> str:
    if value.startswith("-----BEGIN"):
        return env_name(PurePosixPath(path).stem + "_PRIVATE_KEY")
    m = re.search(r"(?i)CREATE\s+(?:USER|ROLE)\s+(\w+)", line)
    if m:
        return env_name(m.group(1) + "_password")
    m = re.search(r"([A-Za-z_][A-Za-z0-9_]*)[\"']?\s*[:=]", line)
    if m and m.group(1).lower() not in ("export", "password"):
        return env_name(m.group(1))
    return env_name(PurePosixPath(path).stem + "_secret")


def language(path: str, text: str) -> str:
    p = PurePosixPath(path)
    suffix = p.suffix.lower()
    if suffix == ".py":
        return "python"
    if suffix in (".sh", ".bash") or text.startswith(("#!/bin/sh", "#!/usr/bin/env bash", "#!/bin/bash")):
        return "shell"
    if suffix in (".yml", ".yaml"):
        return "workflow" if path.startswith(".github/workflows/") else "yaml"
    if suffix in (".js", ".mjs", ".cjs", ".ts", ".jsx", ".tsx"):
        return "javascript"
    if suffix == ".sql":
        return "sql"
    if suffix in (".toml", ".ini", ".cfg", ".json"):
        return "config"
    return "text"


def quoted_literal(line: str, value: str) -> re.Match[str] | None:
    """The string literal of `line` that holds `value`."""
    for m in re.finditer(r"(\"|')((?:(?!\1).)*)\1", line):
        if value in m.group(2):
            return m
    return None


def fix_line(line: str, value: str, lang: str, path: str, documented: list[str] = ()) -> tuple[str, bool]:
    """`line` with `value` replaced by a lookup; True when `import os` is now needed."""
    name = name_for(line, path, value, documented)
    literal = quoted_literal(line, value)
    if lang == "python":
        if literal is not None:
            inner = literal.group(2)
            if re.search(r"(?:environ\.get|getenv)\(", line[: literal.start()]):
                stripped = inner.replace(":" + value + "@", "@") if ":" + value + "@" in inner else ""
                return line[: literal.start()] + f'"{stripped}"' + line[literal.end() :], False
            return line[: literal.start()] + f'os.environ.get("{name}", "")' + line[literal.end() :], True
        return line.replace(value, f'" + os.environ.get("{name}", "") + "'), True
    if lang == "shell":
        if literal is not None and literal.group(2) == value:
            return line[: literal.start()] + f'"${{{name}}}"' + line[literal.end() :], False
        return line.replace(value, f"${{{name}}}"), False
    if lang in ("workflow", "yaml"):
        lookup = f"${{{{ secrets.{name} }}}}" if lang == "workflow" else f"${{{name}}}"
        if literal is not None and literal.group(2) == value:
            return line[: literal.start()] + lookup + line[literal.end() :], False
        return line.replace(value, lookup), False
    if lang == "javascript":
        if literal is not None and literal.group(2) == value:
            return line[: literal.start()] + f"process.env.{name}" + line[literal.end() :], False
        return line.replace(value, f"${{process.env.{name}}}"), False
    if lang == "sql":
        if literal is not None and literal.group(2) == value:
            return line[: literal.start()] + f":'{name.lower()}'" + line[literal.end() :], False
        return line.replace(value, f":{name.lower()}"), False
    if lang == "config":
        if literal is not None and literal.group(2) == value:
            return line[: literal.start()] + '""' + line[literal.end() :], False
        return line.replace(value, ""), False
    return line.replace(value, "[REDACTED]"), False


def fix_pem(text: str, value: str, path: str, documented: list[str] = ()) -> str:
    """Replace a PEM block (and the heredoc around it) with the key read from the environment."""
    name = name_for("", path, value, documented)
    at = text.find(value)
    start = text.rfind("\n", 0, at - 1) + 1 if at > 0 else 0
    opener = text[start:at].rstrip("\n")
    heredoc = re.search(r"<<-?\s*(['\"]?)(\w+)\1", opener)
    if heredoc and text[at + len(value) :].startswith("\n" + heredoc.group(2) + "\n"):
        command = (opener[: heredoc.start()] + opener[heredoc.end() :]).strip()
        if command.startswith("cat"):
            replacement = f"printf '%s\\n' \"${{{name}}}\"" + command[3:]
        else:
            replacement = f"printf '%s\\n' \"${{{name}}}\" | {command}"
        end = at + len(value) + len(heredoc.group(2)) + 2
        return text[:start] + replacement + "\n" + text[end:]
    return text.replace(value, f"${{{name}}}")


def ensure_import_os(text: str) -> str:
    if re.search(r"^import os\b|^from os import|^import .*\bos\b", text, re.M):
        return text
    lines = text.split("\n")
    at = 0
    if lines and lines[0].startswith(('"""', "'''")):
        quote = lines[0][:3]
        if lines[0].count(quote) >= 2 and len(lines[0]) > 3:
            at = 1
        else:
            at = next((i + 1 for i, line in enumerate(lines[1:], 1) if quote in line), 1)
    return "\n".join(lines[:at] + ["import os"] + lines[at:])


def fix_file(path: str, text: str, values: list[str], documented: list[str] = ()) -> str:
    """The file with every value in `values` it holds replaced by a lookup for its language."""
    lang = language(path, text)
    for value in [v for v in values if "\n" in v and v in text]:
        text = fix_pem(text, value, path, documented)
    needs_os = False
    lines = text.split("\n")
    for i, line in enumerate(lines):
        for value in values:
            if "\n" not in value and value in line:
                line, needed = fix_line(line, value, lang, path, documented)
                needs_os = needs_os or needed
        lines[i] = line
    text = "\n".join(lines)
    return ensure_import_os(text) if needs_os else text


def is_dotenv(path: str) -> bool:
    name = PurePosixPath(path).name
    return name == ".env" or (name.startswith(".env.") and not name.endswith((".example", ".sample", ".template")))


def dotenv_example(text: str, values: list[str]) -> str:
    out = []
    for line in text.splitlines():
        key, sep, value = line.partition("=")
        if sep and any(v in value for v in values):
            line = f"{key}=<{key.strip().lower().replace('_', '-')}>"
        out.append(line)
    return "\n".join(out) + "\n"


def write_file(path: str, text: str) -> str:
    quoted = shlex.quote(path)
    payload = base64.b64encode(text.encode()).decode()
    return f'mkdir -p "$(dirname {quoted})" && printf %s {payload} | base64 -d > {quoted}'


def fix_command(observation: Observation, findings: Findings) -> str | None:
    """One bash command that fixes the tree, commits, rewrites history if needed, then re-dumps."""
    values = findings.values
    steps: list[str] = []
    gitignore = observation.files.get(".gitignore", "")
    for path, text in observation.files.items():
        held = [v for v in values if v in text]
        if not held or path.startswith(SKIPPED_DIRS):
            continue
        if is_dotenv(path):
            steps.append(f"git rm -q --cached --ignore-unmatch {shlex.quote(path)}; rm -f {shlex.quote(path)}")
            example = path + ".example"
            if example not in observation.files:
                steps.append(write_file(example, dotenv_example(text, held)))
            entry = "/" + path if "/" in path else path
            if path not in gitignore.splitlines() and entry not in gitignore.splitlines():
                gitignore = (gitignore if gitignore.endswith("\n") or not gitignore else gitignore + "\n") + path + "\n"
            continue
        fixed = fix_file(path, text, held, documented_names(observation.files))
        if fixed != text:
            steps.append(write_file(path, fixed))
    if gitignore != observation.files.get(".gitignore", ""):
        steps.append(write_file(".gitignore", gitignore))
    history = [v for v in findings.history if v]
    if not steps and not history:
        return None
    lines = ["cd repo || exit 1"]
    lines += steps
    lines.append(f"git add -A && git commit -q -m {shlex.quote(FIX_MESSAGE)} || true")
    if history:
        rules = []
        for value in history:
            parts = [p for p in value.split("\n") if len(p) >= 16 and "-----" not in p] if "\n" in value else [value]
            rules += [f"literal:{p}==>{REPLACED}" for p in parts]
        payload = base64.b64encode(("\n".join(rules) + "\n").encode()).decode()
        lines.append(f"printf %s {payload} | base64 -d > ../.audit-agent-replacements")
        lines.append(
            "git filter-repo --quiet --force --replace-text ../.audit-agent-replacements >/dev/null 2>&1 || echo 'filter-repo failed'"
        )
        lines.append("rm -f ../.audit-agent-replacements")
        lines.append("git reflog expire --expire=now --all && git gc --quiet --prune=now")
    lines.append("cd ..")
    return "\n".join(lines) + "\n" + DISCOVER


# -- the policy ---------------------------------------------------------------------------------


def bash(command: str) -> dict:
    return {"name": "bash", "arguments": {"command": command}}


Action = list[dict] | str
"""Tool calls for the next turn, or the final text answer."""


def decide(prompt: str, results: list[str]) -> Action:
    """The next action after the tool results so far (oldest first)."""
    if not results:
        return [bash(DISCOVER)]
    observation = parse(results[-1])
    if not observation.files and not observation.complete:
        return DONE
    rounds = len(results) - 1
    if rounds >= MAX_FIX_ROUNDS:
        return DONE
    # The prompt's findings point at lines of the repository as it started: use them once.
    findings = find(observation, prompt if rounds == 0 else "")
    if rounds:
        before = find(parse(results[-2]), prompt if rounds == 1 else "")
        if set(findings.values) >= set(before.values):
            return DONE  # the last fix changed nothing the scanner can see: stop, do not loop
    command = fix_command(observation, findings)
    return DONE if command is None else [bash(command)]


# -- playing it ---------------------------------------------------------------------------------


def bound(text: str) -> str:
    """The harness's cut of an oversized tool result (head and tail kept)."""
    data = text.encode()
    if len(data) <= TOOL_OUTPUT_MAX_BYTES:
        return text
    keep = TOOL_OUTPUT_MAX_BYTES // 2
    return f"{data[:keep].decode(errors='ignore')}\n[... {len(data) - 2 * keep} bytes truncated ...]\n{data[-keep:].decode(errors='ignore')}"


@dataclass(frozen=True)
class Episode:
    steps: int
    facts: dict
    total: float
    detection: float
    health: float


def play(plan: RepoPlan, workspace, budget: int | None = None) -> Episode:
    """Play the agent on a workspace (`bash(command)`, `facts(steps)`: local or sealed) and score it."""
    from redaction_pressure.audit.prompt import prompt
    from redaction_pressure.audit.rubric import score

    budget = plan.budget if budget is None else budget
    text = prompt(plan).user
    results: list[str] = []
    steps = 0
    while steps < budget:
        action = decide(text, results)
        if isinstance(action, str):
            break
        for call in action:
            steps += 1
            done = workspace.bash(call["arguments"]["command"])
            results.append(bound(done.stdout + done.stderr))
    facts = workspace.facts(steps)
    result = score(plan, facts)
    return Episode(steps, facts, result.total, result.detection, result.health)


def play_local(plan: RepoPlan, budget: int | None = None) -> Episode:
    """Play the agent on a local workspace (the taskset's own setup and scoring programs)."""
    from redaction_pressure.audit.local import LocalWorkspace

    with LocalWorkspace(plan) as ws:
        return play(plan, ws, budget)


def conversation(body: dict) -> tuple[str, list[str]]:
    """(first user prompt, tool results in order) of a chat-completions request."""
    messages = [m for m in body.get("messages") or [] if isinstance(m, dict)]

    def text(message: dict) -> str:
        content = message.get("content")
        if isinstance(content, str):
            return content
        return "".join(p.get("text", "") for p in content or [] if isinstance(p, dict))

    prompt = next((text(m) for m in messages if m.get("role") == "user"), "")
    return prompt, [text(m) for m in messages if m.get("role") == "tool"]


def answer(body: dict) -> Action:
    """The agent's reply to one chat-completions request (for a stand-in model server)."""
    prompt, results = conversation(body)
    return decide(prompt, results)
