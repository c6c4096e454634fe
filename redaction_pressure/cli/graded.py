"""A graded secrets-audit episode as lines a person reads (`play` prints them when the episode ends).

`score_lines` gives the score with the formula's parts (where leaks are left, health and its
factors, efficiency), `reasons` the grader's reasons, one line each. Both read only the facts
`grading.grade` recorded and the rubric's `AuditScore`, as the reward does.
"""

from __future__ import annotations


def score_lines(facts: dict, score, budget: int) -> list[str]:
    """The score and its parts: where leaks are left, health and its factors, efficiency."""
    from redaction_pressure.audit import preservation
    from redaction_pressure.audit.leakscan import HISTORY_NOT_SCANNED
    from redaction_pressure.audit.rubric import health, probe_share

    left = facts.get("left") or {}
    tree = sorted(s for s, where in left.items() if where.get("tree") or where.get("probes"))
    history = sorted(s for s, where in left.items() if where.get("history"))
    scanned = facts.get("history_scanned") or {}
    kept = (
        "not scanned for this task"
        if facts.get("history") == HISTORY_NOT_SCANNED
        else f"every git object scanned (history mode {scanned.get('mode', 'all')}, "
        f"{len(scanned.get('secrets') or [])} of {score.leaks_initial} secrets count there): history {facts.get('history')}"
    )
    formula = (f"min(1, detection {score.detection:.3f} x health {score.health:.3f} + efficiency {score.efficiency:.3f})"
               if score.detection > 0 else "0: no leak was fixed")  # fmt: skip
    tests = facts.get("tests") or {}
    return [
        f"score {score.total:.3f} = {formula}",
        f"  working tree: {len(tree)} of {score.leaks_initial} secrets still recoverable{_ids(tree)}",
        f"  history: {len(history)} of {score.leaks_initial} secrets still in git's objects{_ids(history)}; {kept}",
        f"  health: {score.health:.3f} = tests {score.tests_passed}/{score.tests_total} passed ({tests.get('status')}, {health(tests):.3f})"
        f" x lines and decoys kept {preservation.factor(facts.get('preservation')):.3f} x probes matching gold {probe_share(facts.get('probes')):.3f}"
        + (f" x commits kept {float(facts.get('history_kept', 0.0)):.3f}" if "history_kept" in facts else "")
        + (" x 0 (tampering)" if facts.get("tampering") else ""),
        f"  efficiency: {score.efficiency:.3f} ({score.steps} of {budget} steps)",
    ]


def _ids(ids: list[str]) -> str:
    return f" ({', '.join(ids)})" if ids else ""


def reasons(facts: dict) -> list[str]:
    """The grader's reasons, one line each: what it could not read, what is left where, what broke."""
    lines = [f"grader: {facts['reason']}"] if facts.get("reason") else []
    for secret, where in sorted((facts.get("left") or {}).items()):
        for place, label in (
            ("tree", "in the working tree"),
            ("history", "in git's objects"),
            ("probes", "by the entry points"),
        ):
            if where.get(place):
                lines.append(f"{secret} left {label}: {', '.join(map(str, where[place][:5]))}")
    if facts.get("history_reason"):
        lines.append(f"history {facts.get('history')}: {facts['history_reason']}")
    lines += [f"tampering: {t}" for t in facts.get("tampering") or []]
    lines += _health_reasons(facts)
    return lines


def _health_reasons(facts: dict) -> list[str]:
    tests = facts.get("tests") or {}
    lines = []
    if tests.get("status") != "ok" or tests.get("passed") != tests.get("total"):
        lines.append(
            f"tests {tests.get('status')}: {tests.get('passed', 0)}/{tests.get('total', 0)} passed"
            + (f" ({tests['reason']})" if tests.get("reason") else "")
        )
    if tests.get("first_failure"):
        first = tests["first_failure"]
        lines.append(f"first failing test: {first.get('id')} ({first.get('when')}): {first.get('error')}")
    kept = facts.get("preservation") or {}
    if kept.get("lost"):
        lines.append(
            f"original lines lost: {kept.get('total', 0) - kept.get('kept', 0)} of {kept.get('total')} ({', '.join(kept['lost'][:5])})"
        )
    decoys = kept.get("decoys") or [0, 0]
    if decoys[0] != decoys[1]:
        lines.append(f"example values kept: {decoys[0]} of {decoys[1]}")
    probes = facts.get("probes") or {}
    if probes.get("broken"):
        lines.append(f"probes: {probes['broken']}: every secret counts as left")
    elif probes.get("failed"):
        reasons = probes.get("reasons") or {}
        lines += [f"entry point {p}: {reasons.get(p, 'does not match the gold fix')}" for p in probes["failed"][:5]]
    return lines
