"""The `status` observation: what SecretsAuditEnv's observation reports, as a pure function.

Given the plan, the visible findings, the secrets the working tree no longer holds, the
steps taken and the current health, `observe` returns the structured status and `render`
its text. Next actions are ranked by five heuristics, highest first:

1. fix a visible trigger (its fix reveals hidden findings)               priority 5
2. fix a visible finding whose secret also sits elsewhere (all at once)  priority 4
3. fix any other visible unfixed finding                                 priority 3
4. look where findings may hide: `inspect_git_history` when history has
   never been inspected, `inspect_encoded` on files with visible findings  priority 2
5. restore behaviour when the pristine tests do not all pass             priority 1

The top blocker is the highest-ranked fix action (or none). The status reveals nothing
hidden: only counts, and findings the tiers already made visible.
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass

from redaction_pressure.audit.plan import RepoPlan
from redaction_pressure.audit.rubric import efficiency
from redaction_pressure.audit.tiers import INSPECT_ENCODED, INSPECT_HISTORY, Call, conflict_map

MAX_ACTIONS = 5


@dataclass(frozen=True)
class Action:
    priority: int
    text: str


@dataclass(frozen=True)
class Status:
    visible: tuple[dict, ...]
    hidden: int
    steps: int
    remaining: int
    efficiency: float
    security: float
    health: float
    conflicts: dict
    actions: tuple[Action, ...]
    blocker: str | None
    first_failure: dict | None = None
    """The first pristine test that failed (id, phase, error line), when one did."""


def observe(
    plan: RepoPlan,
    visible_ids: Iterable[str],
    fixed: Iterable[str],
    calls: Iterable[Call],
    steps: int,
    health: float,
    first_failure: dict | None = None,
) -> Status:
    visible_ids = set(visible_ids)
    fixed = set(fixed)
    calls = list(calls)
    findings = [f for f in plan.findings if f.id in visible_ids]
    conflicts = {
        secret: entry for secret, entry in conflict_map(plan).items() if any(f.secret == secret for f in findings)
    }
    shown_conflicts = {
        next(f.id for f in findings if f.secret == secret): {
            "reveals": len(entry["reveals"]),
            "blocks": [i for i in entry["blocks"] if i in visible_ids],
        }
        for secret, entry in conflicts.items()
    }
    actions: list[Action] = []
    for f in findings:
        if f.secret in fixed:
            continue
        where = f"{f.path}:{f.line}"
        if conflicts.get(f.secret, {}).get("reveals"):
            actions.append(Action(5, f"fix {f.id} ({f.kind} at {where}): fixing it reveals more findings"))
        elif len(conflicts.get(f.secret, {}).get("blocks", [])) > 1:
            actions.append(Action(4, f"fix {f.id} ({f.kind} at {where}) together with every place its secret sits"))
        else:
            actions.append(Action(3, f"fix {f.id} ({f.kind} at {where})"))
    if not any(c.tool == INSPECT_HISTORY for c in calls):
        actions.append(Action(2, "inspect_git_history: old commits may still hold secrets"))
    for path in sorted({f.path for f in findings}):
        if not any(c.tool == INSPECT_ENCODED and c.args.get("path") == path for c in calls):
            actions.append(Action(2, f"inspect_encoded {path}: encoded values may hide more"))
    if health < 1.0:
        actions.append(Action(1, "restore behaviour: the pristine tests do not all pass"))
    actions.sort(key=lambda a: -a.priority)
    fixes = [a for a in actions if a.priority >= 3]
    security = sum(1 for s in plan.secrets if s.id in fixed) / len(plan.secrets)
    return Status(
        visible=tuple(
            {"id": f.id, "path": f.path, "line": f.line, "kind": f.kind, "tier": f.tier, "fixed": f.secret in fixed}
            for f in findings
        ),
        hidden=len(plan.findings) - len(findings),
        steps=steps,
        remaining=max(0, plan.budget - steps),
        efficiency=efficiency(steps, plan.budget),
        security=security,
        health=health,
        conflicts=shown_conflicts,
        actions=tuple(actions[:MAX_ACTIONS]),
        blocker=fixes[0].text if fixes else None,
        first_failure=first_failure if health < 1.0 else None,
    )


def render(status: Status) -> str:
    lines = [f"Visible findings ({len(status.visible)}), not yet visible: {status.hidden}"]
    for f in status.visible:
        mark = "fixed" if f["fixed"] else "open"
        lines.append(f"  {f['id']} [{mark}] {f['kind']} at {f['path']}:{f['line']} ({f['tier']})")
    lines.append(
        f"Steps taken: {status.steps}, remaining: {status.remaining}; efficiency bonus now {status.efficiency:.3f}"
    )
    lines.append(
        f"Security score (secrets gone from the working tree): {status.security:.2f}; health score: {status.health:.2f}"
    )
    if status.first_failure:
        f = status.first_failure
        lines.append(f"First failing test: {f.get('id', '?')} ({f.get('when', '?')}): {f.get('error', '')}")
    if status.conflicts:
        lines.append("Conflict map:")
        for fid, entry in status.conflicts.items():
            lines.append(
                f"  {fid}: reveals {entry['reveals']} hidden finding(s); shares its secret with {entry['blocks']}"
            )
    lines.append("Next actions:")
    lines += [f"  {i + 1}. {a.text}" for i, a in enumerate(status.actions)] or ["  (none)"]
    lines.append(f"Top blocker: {status.blocker or 'none'}")
    return "\n".join(lines)
