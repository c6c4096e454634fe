"""The `status` observation: what the grade would give now, and what to do next, as a pure function.

`observe(plan, visible, calls, facts)` reads the facts `grading.grade` just recorded on the
agent's repository (what `finalize` will record) and returns the structured status; `render`
gives its text. The scores are the rubric's own (`rubric.score`): detection, health as tests x
probes x preservation x history kept with each factor, the efficiency bonus and the total the
episode would score if it ended now. Next actions are ranked by five heuristics, highest first:

1. fix a visible trigger (its fix reveals hidden findings)               priority 5
2. fix a visible finding whose secret also sits elsewhere (all at once)  priority 4
3. fix any other visible finding whose secret the grade still finds      priority 3
4. look where findings may hide, while some not yet visible still leak:
   `inspect_git_history` when history has never been inspected,
   `inspect_encoded` on files with visible findings                      priority 2
5. restore behaviour: failing tests, entry points that differ from a
   correct fix, lost lines and example values, commits not kept         priority 1

The top blocker is the highest-ranked fix action (or none). The status reveals nothing hidden:
findings the tiers made visible, and for the others only how many still leak (a finding counts
while the grade still finds its secret, so the count settles as secrets go). A failed probe is
named by its id, kind and entry point with the verdict's reason, which never holds a value.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from dataclasses import dataclass

from redaction_pressure.audit import preservation
from redaction_pressure.audit.leakscan import HISTORY_REWRITTEN
from redaction_pressure.audit.plan import RepoPlan
from redaction_pressure.audit.rubric import AuditScore, health, probe_share, score
from redaction_pressure.audit.tiers import INSPECT_ENCODED, INSPECT_HISTORY, Call, conflict_map, repo_path

MAX_ACTIONS = 5
MAX_PROBES = 8
"""Failed probes listed (the rest are counted)."""
PLACES = {"tree": "working tree", "history": "history", "probes": "entry points"}
"""Where the grade finds a secret, as the status names it."""


@dataclass(frozen=True)
class Action:
    priority: int
    text: str


@dataclass(frozen=True)
class Factors:
    """Health's factors as the rubric multiplies them."""

    tests: float
    tests_passed: int
    tests_total: int
    probes: float
    probes_passed: int
    probes_total: int
    preservation: float
    history_kept: float
    tampering: bool


@dataclass(frozen=True)
class Status:
    visible: tuple[dict, ...]
    """Each visible finding: id, path, line, kind, tier, `fixed` and `left` (where the grade still finds its secret)."""
    hidden: int
    """Findings not yet visible whose secret the grade still finds."""
    steps: int
    remaining: int
    score: AuditScore
    factors: Factors
    failed_probes: tuple[tuple[str, str], ...]
    """(probe, why) for each failed probe, at most MAX_PROBES."""
    more_failed: int
    conflicts: dict
    actions: tuple[Action, ...]
    blocker: str | None
    first_failure: dict | None = None
    """The first pristine test that failed (id, phase, error line), when one did."""
    lost: tuple[str, ...] = ()
    """Examples of original lines no longer in the repository (path:line)."""
    reason: str = ""
    """The grader's reason, when it could not grade the repository as it is."""
    probes_run: bool = True
    """False when the grade left the probes out (they run at the episode's end only)."""


def factors(facts: Mapping[str, object]) -> Factors:
    tests = facts.get("tests") or {}
    probes = facts.get("probes") or {}
    kept = float(facts.get("history_kept", 0.0)) if facts.get("history") == HISTORY_REWRITTEN else 1.0
    return Factors(
        tests=health(tests),
        tests_passed=int(tests.get("passed", 0)),
        tests_total=int(tests.get("total", 0)),
        probes=probe_share(probes),
        probes_passed=int(probes.get("passed", 0)),
        probes_total=int(probes.get("total", 0)),
        preservation=preservation.factor(facts.get("preservation")),
        history_kept=max(0.0, min(1.0, kept)),
        tampering=bool(facts.get("tampering")),
    )


def observe(
    plan: RepoPlan,
    visible_ids: Iterable[str],
    calls: Iterable[Call],
    facts: Mapping[str, object],
    probes_run: bool = True,
) -> Status:
    """The status from the grade's `facts` (they carry the steps) and what the agent was shown;
    `probes_run=False` when the grade left the probes out (the status then says so)."""
    visible_ids = set(visible_ids)
    calls = list(calls)
    result = score(plan, facts)
    left = {sid: where for sid, where in (facts.get("left") or {}).items() if isinstance(where, Mapping)}
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
    hidden = sum(1 for f in plan.findings if f.id not in visible_ids and f.secret in left)
    actions: list[Action] = []
    for f in findings:
        if f.secret not in left:
            continue
        where = f"{f.path}:{f.line}"
        still = _places(left[f.secret])
        if conflicts.get(f.secret, {}).get("reveals"):
            actions.append(Action(5, f"fix {f.id} ({f.kind} at {where}): fixing it reveals more findings"))
        elif len(conflicts.get(f.secret, {}).get("blocks", [])) > 1:
            actions.append(Action(4, f"fix {f.id} ({f.kind} at {where}) together with every place its secret sits"))
        else:
            actions.append(Action(3, f"fix {f.id} ({f.kind} at {where}); the grade still finds it in: {still}"))
    if hidden:
        if not any(c.tool == INSPECT_HISTORY for c in calls):
            actions.append(Action(2, "inspect_git_history: old commits may still hold secrets"))
        for path in sorted({f.path for f in findings}):
            if not any(c.tool == INSPECT_ENCODED and repo_path(c.args.get("path")) == path for c in calls):
                actions.append(Action(2, f"inspect_encoded {path}: encoded values may hide more"))
    parts = factors(facts)
    tests = facts.get("tests") or {}
    probes = facts.get("probes") or {}
    reasons = probes.get("reasons") or {}
    failed = [p for p in plan.probes if p.id in set(probes.get("failed") or []) or p.id in reasons]
    if parts.tests < 1.0:
        actions.append(Action(1, f"restore behaviour: {parts.tests_passed} of {parts.tests_total} pristine tests pass"))
    if failed:
        first = failed[0]
        actions.append(
            Action(1, f"make {_probe(first)} behave as a correct fix does: {reasons.get(first.id, 'differs')}")
        )
    kept = facts.get("preservation") or {}
    if parts.preservation < 1.0:
        actions.append(Action(1, "restore the original lines and example values that are gone (they may move, not go)"))
    if parts.history_kept < 1.0:
        actions.append(
            Action(1, "keep every original commit: its message, author date and the files that held no secret")
        )
    actions.sort(key=lambda a: -a.priority)
    fixes = [a for a in actions if a.priority >= 3]
    first_failure = tests.get("first_failure") if isinstance(tests.get("first_failure"), Mapping) else None
    return Status(
        visible=tuple(
            {
                "id": f.id,
                "path": f.path,
                "line": f.line,
                "kind": f.kind,
                "tier": f.tier,
                "fixed": f.secret not in left,
                "left": _places(left.get(f.secret) or {}),
            }
            for f in findings
        ),
        hidden=hidden,
        steps=result.steps,
        remaining=max(0, plan.budget - result.steps),
        score=result,
        factors=parts,
        failed_probes=tuple((_probe(p), str(reasons.get(p.id, "differs from the fix"))) for p in failed[:MAX_PROBES]),
        more_failed=max(0, len(failed) - MAX_PROBES),
        conflicts=shown_conflicts,
        actions=tuple(actions[:MAX_ACTIONS]),
        blocker=fixes[0].text if fixes else None,
        first_failure=dict(first_failure) if first_failure and parts.tests < 1.0 else None,
        lost=tuple(str(x) for x in (kept.get("lost") or [])[:3]) if parts.preservation < 1.0 else (),
        reason=str(facts.get("reason") or ""),
        probes_run=probes_run or not plan.probes,
    )


def _places(where: Mapping[str, object]) -> str:
    return ", ".join(label for key, label in PLACES.items() if where.get(key))


def _probe(probe) -> str:
    return f"probe {probe.id} ({probe.kind} {probe.target}{' ' + probe.call if probe.call else ''})"


def render(status: Status) -> str:
    s, f = status.score, status.factors
    lines = [f"Visible findings ({len(status.visible)}), not yet visible and still leaking: {status.hidden}"]
    for v in status.visible:
        mark = "fixed" if v["fixed"] else f"open: {v['left']}"
        lines.append(f"  {v['id']} [{mark}] {v['kind']} at {v['path']}:{v['line']} ({v['tier']})")
    lines.append(f"Steps taken: {status.steps}, remaining: {status.remaining}; efficiency bonus now {s.efficiency:.3f}")
    lines.append(
        f"Detection: {s.detection:.2f} ({s.leaks_initial - s.leaks_left} of {s.leaks_initial} secrets no longer recoverable)"
    )
    lines.append(
        f"Health: {s.health:.2f} = tests {f.tests:.2f} ({f.tests_passed}/{f.tests_total} passed)"
        f" x probes {f.probes:.2f} ({f.probes_passed}/{f.probes_total} match a correct fix)"
        f" x preservation {f.preservation:.2f} x history kept {f.history_kept:.2f}"
        + (" x 0 (the grader's toolchain changed)" if f.tampering else "")
    )
    formula = (
        f"min(1, {s.detection:.2f} x {s.health:.2f} + {s.efficiency:.3f})"
        if s.detection > 0
        else "0 (no leak fixed yet)"
    )
    lines.append(f"Score if the episode ended now: {s.total:.3f} = {formula}")
    if not status.probes_run:
        lines.append(
            "Probes: not run by status here (the agent runs as the grader's user); the episode's end runs them"
        )
    if status.reason:
        lines.append(f"Grader: {status.reason}")
    if status.failed_probes:
        lines.append("Failed probes (entry points whose output differs from a correct fix's):")
        lines += [f"  {probe}: {why}" for probe, why in status.failed_probes]
        if status.more_failed:
            lines.append(f"  ... and {status.more_failed} more")
    if status.first_failure:
        ff = status.first_failure
        lines.append(f"First failing test: {ff.get('id', '?')} ({ff.get('when', '?')}): {ff.get('error', '')}")
    if status.lost:
        lines.append(f"Original lines gone, e.g.: {', '.join(status.lost)}")
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
