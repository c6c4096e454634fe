"""Visibility tiers: which findings the agent may see, as pure functions of what it did.

- surface: visible from the first prompt (path, line and kind; never the value);
- shallow: revealed by `inspect_file` on the finding's path;
- deep: revealed by `inspect_git_history` (all of them, or those under the path given) or by
  `inspect_encoded` on the finding's path (and line, when one is given);
- cascading: revealed once the trigger secret is fixed, i.e. no longer found in the working tree.

A finding's tier only says when it becomes visible; every finding counts in the reward
whether or not it was ever revealed.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from dataclasses import dataclass

from redaction_pressure.audit.plan import Finding, RepoPlan

INSPECT_FILE = "inspect_file"
INSPECT_HISTORY = "inspect_git_history"
INSPECT_ENCODED = "inspect_encoded"
STATUS = "status"
AUDIT_TOOLS = (INSPECT_FILE, INSPECT_HISTORY, INSPECT_ENCODED, STATUS)


@dataclass(frozen=True)
class Call:
    """One tool call as the tiers see it: its name and arguments."""

    tool: str
    args: Mapping[str, object]


def repo_path(path: object) -> str:
    """A tool's path argument as a path in the repository: leading `./` and `repo/` dropped, so
    `repo/config/.env`, `./repo/config/.env` and `config/.env` name one file."""
    text = str(path or "").strip()
    while text.startswith("./"):
        text = text[2:]
    if text.startswith("repo/"):
        text = text[5:]
    return text.rstrip("/")


def revealed_by(finding: Finding, call: Call) -> bool:
    """Whether `call` reveals `finding` (cascading findings are revealed by fixes, not calls)."""
    if finding.tier == "shallow":
        return call.tool == INSPECT_FILE and repo_path(call.args.get("path")) == finding.path
    if finding.tier == "deep":
        if call.tool == INSPECT_HISTORY:
            path = repo_path(call.args.get("path"))
            return not path or finding.path == path or finding.path.startswith(path + "/")
        if call.tool == INSPECT_ENCODED and repo_path(call.args.get("path")) == finding.path:
            line = call.args.get("line")
            return line in (None, "", 0) or _as_int(line) == finding.line
    return False


def _as_int(value: object) -> int | None:
    try:
        return int(str(value))
    except ValueError:
        return None


def visible(plan: RepoPlan, calls: Iterable[Call], fixed: Iterable[str]) -> list[str]:
    """Ids of the findings visible after `calls`, with the secrets in `fixed` fixed."""
    calls = list(calls)
    fixed = set(fixed)
    out: list[str] = []
    for finding in plan.findings:
        if finding.tier == "surface":
            out.append(finding.id)
        elif finding.tier == "cascading":
            if finding.trigger in fixed:
                out.append(finding.id)
        elif any(revealed_by(finding, call) for call in calls):
            out.append(finding.id)
    return out


def conflict_map(plan: RepoPlan) -> dict[str, dict[str, list[str]]]:
    """Per secret with several findings or a cascade: the findings it reveals and those it blocks.

    `reveals`: cascading findings its fix uncovers. `blocks`: its own other findings; a secret
    is fixed only when every one of them is, so fixing one alone moves no score.
    """
    out: dict[str, dict[str, list[str]]] = {}
    for secret in plan.secrets:
        own = [f.id for f in plan.findings if f.secret == secret.id]
        reveals = [f.id for f in plan.findings if f.trigger == secret.id]
        if reveals or len(own) > 1:
            out[secret.id] = {"reveals": reveals, "blocks": own if len(own) > 1 else []}
    return out
