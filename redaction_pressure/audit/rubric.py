"""The secrets-audit reward, faithful to SecretsAuditEnv, from the facts `finalize` recorded.

    detection  = (initial leaks - leaks left) / initial leaks      (a leak = one secret)
    health     = tests x history kept x preservation x probes, where
                 tests        = pristine tests passed / total      (0 on collection errors, no
                                                                    tests, a timeout or any tampering)
                 history kept = the share of the old history's commits the rewrite kept
                                (1 when history was not rewritten)
                 preservation = `preservation.factor` of what the fix kept of the code
                 probes       = the share of behaviour probes that matched gold (1 without probes)
    efficiency = 0.15 * max(0, 1 - steps / budget)
    total      = min(1, detection * health + efficiency) if detection > 0 else 0

`steps` counts every tool call the agent made (bash, edit and the audit tools alike).
Facts are plain JSON (`trace.info["audit"]`), so `score(plan, facts)` re-scores a saved trace
exactly: no runtime, clock or randomness is involved.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass

from redaction_pressure.audit import preservation
from redaction_pressure.audit.leakscan import HISTORY_REWRITTEN
from redaction_pressure.audit.plan import RepoPlan

AUDIT_REWARD_SCHEMA_VERSION = "4"
"""Bump whenever the formula, the leak forms or what counts as a step changes."""
EFFICIENCY_WEIGHT = 0.15
TESTS_OK = "ok"


@dataclass(frozen=True)
class AuditScore:
    detection: float
    health: float
    efficiency: float
    total: float
    leaks_initial: int
    leaks_left: int
    tests_passed: int
    tests_total: int
    steps: int

    def metrics(self) -> dict[str, float]:
        return {
            "detection": self.detection,
            "health": self.health,
            "efficiency": self.efficiency,
            "leaks_initial": float(self.leaks_initial),
            "leaks_left": float(self.leaks_left),
            "tests_passed": float(self.tests_passed),
            "tests_total": float(self.tests_total),
            "steps": float(self.steps),
        }


def efficiency(steps: int, budget: int) -> float:
    return EFFICIENCY_WEIGHT * max(0.0, 1.0 - steps / budget)


def health(tests: Mapping[str, object]) -> float:
    passed, total = int(tests.get("passed", 0)), int(tests.get("total", 0))
    if tests.get("status") != TESTS_OK or total <= 0:
        return 0.0
    return max(0, min(passed, total)) / total


def probe_share(observed: Mapping[str, object] | None) -> float:
    """The share of probe checks that matched gold (1.0 when the task has no probes)."""
    if not observed:
        return 1.0
    total = int(observed.get("total", 0))
    return max(0, min(int(observed.get("passed", 0)), total)) / total if total else 1.0


def score(plan: RepoPlan, facts: Mapping[str, object]) -> AuditScore:
    """The reward of one episode from its recorded facts."""
    return score_facts({**facts, "secrets": [s.id for s in plan.secrets]}, plan.budget)


def score_facts(facts: Mapping[str, object], budget: int) -> AuditScore:
    """The reward from facts alone: `secrets` (ids), `left`, `tests`, `steps` (what replay has)."""
    secrets = list(facts["secrets"])
    initial = len(secrets)
    left = len(set(facts.get("left", {}) or {}) & set(secrets))
    detection = (initial - left) / initial
    tests = facts.get("tests", {}) or {}
    h = 0.0 if facts.get("tampering") else health(tests)
    if facts.get("history") == HISTORY_REWRITTEN:
        h *= max(0.0, min(1.0, float(facts.get("history_kept", 0.0))))
    h *= preservation.factor(facts.get("preservation"))
    h *= probe_share(facts.get("probes"))
    steps = int(facts.get("steps", 0))
    e = efficiency(steps, budget)
    total = min(1.0, detection * h + e) if detection > 0 else 0.0
    return AuditScore(
        detection, h, e, total, initial, left, int(tests.get("passed", 0)), int(tests.get("total", 0)), steps
    )
