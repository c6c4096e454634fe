"""The scripted agent's hands: the bash command that fixes what it found.

`fix_command(observation, findings)` writes each affected file back with the secret replaced by an
environment lookup for the file's language (`fix_file`: `os.environ.get("NAME", "")` in Python,
`"${NAME}"` in shell, `${{ secrets.NAME }}` in workflows, `process.env.NAME` in JavaScript, a
psql variable in SQL, an empty value in TOML, `[REDACTED]` in logs and docs; the name the line or
the repository's docs already use, else one made from the context); a tracked `.env` leaves the
tree and git and goes into `.gitignore`. It commits, and when the history holds a found value it
runs `git filter-repo --replace-text`, then expires the reflog and runs `git gc`; the command ends
with a fresh `DISCOVER` dump. Pure functions of text.
"""

from __future__ import annotations

import base64
import re
import shlex
from pathlib import PurePosixPath

from redaction_pressure.audit.agent.scan import DISCOVER, SKIPPED_DIRS, Findings, Observation

FIX_MESSAGE = "Remove hard-coded secrets; read them from the environment"
REPLACED = "***REMOVED***"

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
