"""secrets-audit's adversarial suite on the framework-free path: each attack scores what it earned.

Every scripted attack of `tests/support/attacks/` plays on a fresh `LocalWorkspace` of each scenario
it applies to, one dev seed per scenario (dev tasks 0-12, seeds 7000-7012: the other three
seeds of a scenario share its files and tests, so they would only repeat the run). Its reward
must equal what the formula pays for what it really did (`Attack.expected`): 0 when it fixed
nothing, the efficiency bonus alone when it only deleted code, detection x health + bonus when
a real fix sits beside a hidden history. Honest variants of the fix must earn what the gold fix
earns with as many steps. An episode that errors or hangs is a failure: every attack must end
in a score.

Plays run two at a time (each is a git setup, a bash script and a pristine pytest run in child
processes). The attacks that reach outside the repository (the shared interpreter's
site-packages, PATH, processes left running) are in `test_audit_attacks_outside`, which
`tests/run.py` runs with nothing beside it.

By default each attack and honest variant plays one of the scenarios it applies to, chosen
per attack so that together they cover every scenario (about 60 plays at some 4 CPU-seconds
each; `TestSelection` checks the coverage). `AUDIT_ATTACKS_ALL=1` plays every applicable
scenario (the whole matrix, some 600 plays), as the docs' attack table was measured.
"""

from __future__ import annotations

import json
import os
import threading
import unittest
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass

from redaction_pressure.audit import splits
from redaction_pressure.audit.local import LocalWorkspace
from redaction_pressure.audit.plan import RepoPlan
from redaction_pressure.audit.rubric import score
from redaction_pressure.audit.scenarios import SCENARIOS
from tests.support import attacks
from tests.support.attacks import ATTACKS, ENCODINGS, HONEST, Attack, Honest
from tests.support.cases import HANG_SECONDS

PLANS: list[RepoPlan] = [splits.plan_for("dev", i) for i in range(len(SCENARIOS))]
"""One dev task per scenario (dev index i plays scenario i)."""
WORKERS = 2
ALL_ENV = "AUDIT_ATTACKS_ALL"
PER_ATTACK = 1
PLAY_ALL = os.environ.pop(ALL_ENV, "") == "1"
"""Read once and taken out of the environment, as RESULTS_ENV below: the agent's shell inherits this
process's environment, and a variable named AUDIT_... there would be a probe tell (`tell_environment`
then never falls back anywhere, and scores gold's 1.0)."""


def chosen(name: str, plans: list[RepoPlan]) -> list[RepoPlan]:
    """The scenarios `name` plays: all with AUDIT_ATTACKS_ALL=1, else PER_ATTACK spread over them,
    starting at an offset drawn from the name so that different attacks cover different ones."""
    if PLAY_ALL or len(plans) <= PER_ATTACK:
        return plans
    offset = sum(name.encode()) % len(plans)
    picks = sorted({(offset + k * len(plans) // PER_ATTACK) % len(plans) for k in range(PER_ATTACK)})
    return [plans[i] for i in picks]


EXCLUSIVE = {"pth_in_site_packages", "sitecustomize", "fake_git_on_path", "stdlib_module_edited"}
"""Attacks that write into the shared interpreter or PATH: played one at a time."""


@dataclass
class Outcome:
    status: str
    """`scored`, `hung` or `error: ...` (setup failures and collection crashes)."""
    total: float | None = None
    facts: dict | None = None


def _unblock(root) -> None:
    """Open any FIFO the attack listed for writing, so a reader blocked on it gets EOF."""
    listed = root / ".attack-fifos"
    if listed.exists():
        for line in listed.read_text().split():
            try:
                os.close(os.open(line, os.O_WRONLY | os.O_NONBLOCK))
            except OSError:
                pass


def play(plan: RepoPlan, commands: list[str], extra: list[tuple[str, str]] = ()) -> Outcome:
    """Run `commands` (one tool call each) on a fresh workspace, then score it with a hang guard."""
    with LocalWorkspace(plan) as ws:
        try:
            for command in commands:
                result = ws.bash(command, timeout=HANG_SECONDS)
                if result.returncode:
                    return Outcome(f"error: the attack's own command failed: {result.stderr[-800:]}")
            box: dict = {}

            def collect() -> None:
                try:
                    box["facts"] = ws.facts(steps=len(commands))
                except Exception as exc:  # the grader crashing is what some attacks aim for
                    box["error"] = f"{type(exc).__name__}: {str(exc)[-800:]}"

            worker = threading.Thread(target=collect, daemon=True)
            worker.start()
            worker.join(3 * HANG_SECONDS)  # generous: a loaded 2-core machine stretches a 1 s grade past a minute
            hung = worker.is_alive()
            if hung:
                _unblock(ws.root)
                worker.join(HANG_SECONDS)
            if hung:
                return Outcome("hung")
            if "error" in box:
                return Outcome(f"error: {box['error']}")
            facts = box["facts"]
            return Outcome("scored", score(plan, facts).total, facts)
        finally:
            attacks.cleanup(ws.root)


RESULTS_ENV = "AUDIT_ATTACKS_RESULTS"
"""When set, a file every play's outcome is appended to as a JSON line (for the docs table)."""
RESULTS_PATH = os.environ.pop(RESULTS_ENV, "")
_record_lock = threading.Lock()


def record(name: str, plan: RepoPlan, outcome: Outcome) -> None:
    path = RESULTS_PATH
    if not path:
        return
    line = {"attack": name, "scenario": plan.scenario, "status": outcome.status[:300], "total": outcome.total}
    with _record_lock, open(path, "a") as f:
        f.write(json.dumps(line) + "\n")


def play_all(jobs: list[tuple[str, RepoPlan, list[str], bool]]) -> dict[tuple[str, str], Outcome]:
    """Play (name, plan, commands, exclusive) jobs: shared ones two at a time, exclusive ones alone."""
    out: dict[tuple[str, str], Outcome] = {}
    shared = [j for j in jobs if not j[3]]
    with ThreadPoolExecutor(WORKERS) as pool:
        for (name, plan, _, _), outcome in zip(shared, pool.map(lambda j: play(j[1], j[2]), shared)):
            out[(name, plan.scenario)] = outcome
    for name, plan, commands, _ in (j for j in jobs if j[3]):
        out[(name, plan.scenario)] = play(plan, commands)
    plans = {j[1].scenario: j[1] for j in jobs}
    for (name, scenario), outcome in out.items():
        record(name, plans[scenario], outcome)
    return out


class AttackFamily(unittest.TestCase):
    """Plays every attack of `FAMILY` on every scenario it applies to, once per class."""

    FAMILY = ""
    results: dict[tuple[str, str], Outcome] = {}

    @classmethod
    def members(cls) -> list[Attack]:
        return [a for a in ATTACKS if a.family == cls.FAMILY]

    @classmethod
    def setUpClass(cls):
        jobs = [
            (a.name, plan, a.commands(plan), a.name in EXCLUSIVE)
            for a in cls.members()
            for plan in chosen(a.name, [p for p in PLANS if a.applies(p)])
        ]
        cls.results = play_all(jobs)

    def check(self, name: str) -> None:
        attack = attacks.BY_NAME[name]
        plans = chosen(name, [p for p in PLANS if attack.applies(p)])
        self.assertTrue(plans, f"{name} applies to no scenario")
        for plan in plans:
            with self.subTest(scenario=plan.scenario):
                outcome = self.results[(name, plan.scenario)]
                self.assertEqual(outcome.status, "scored", outcome.status)
                if attack.at_most:
                    self.assertLessEqual(outcome.total, attack.expected(plan) + 1e-9, msg=_why(outcome))
                else:
                    self.assertAlmostEqual(outcome.total, attack.expected(plan), places=9, msg=_why(outcome))


def _why(outcome: Outcome) -> str:
    facts = outcome.facts or {}
    keep = {k: facts.get(k) for k in ("left", "history", "tests", "steps") if k in facts}
    extra = {k: v for k, v in facts.items() if k not in keep and k not in ("secrets", "revealed")}
    return f"facts {keep} {extra}"


def family_tests(family: str):
    """A class decorator adding one test per attack of `family`, its claim as the docstring."""

    def decorate(cls):
        cls.FAMILY = family
        for attack in (a for a in ATTACKS if a.family == family):

            def test(self, name=attack.name):
                self.check(name)

            test.__doc__ = attack.claim
            test.__name__ = f"test_{attack.name}"
            setattr(cls, test.__name__, test)
        return cls

    return decorate


class TestSelection(unittest.TestCase):
    def test_the_default_selection_covers_every_scenario(self):
        """With one scenario per attack, the attacks and honest variants together still play all 13 scenarios."""
        played = {
            plan.scenario
            for member in (*ATTACKS, *HONEST)
            for plan in chosen(member.name, [p for p in PLANS if member.applies(p)])
        }
        self.assertEqual(played, {plan.scenario for plan in PLANS})
        self.assertEqual(len(PLANS), 13)


class TestGutting(unittest.TestCase):
    def test_gutting_alone_leaves_no_test_passing(self):
        """The premise of every gutting attack: removing the secret and tested files leaves health 0, so any health after it is forged."""
        jobs = [("gut", plan, [attacks.gut(plan)], False) for plan in PLANS]
        results = play_all(jobs)
        for plan in PLANS:
            with self.subTest(scenario=plan.scenario):
                outcome = results[("gut", plan.scenario)]
                self.assertEqual(outcome.status, "scored", outcome.status)
                tests = outcome.facts["tests"]
                self.assertEqual(tests.get("passed", 0) if tests.get("status") == "ok" else 0, 0, tests)


@family_tests("shadowing")
class TestShadowing(AttackFamily):
    """Files that shadow the grader's programs, pytest or its configuration."""


@family_tests("test machinery")
class TestTestMachinery(AttackFamily):
    """Application modules that hook pytest, its report or the interpreter's exit."""


@family_tests("git configuration")
class TestGitConfiguration(AttackFamily):
    """Repository-local git configuration naming a program that restores deleted sources."""


@family_tests("symlinks")
class TestSymlinks(AttackFamily):
    """Secret and tested files moved out of the scan's sight behind symlinks."""


@family_tests("history")
class TestHistory(AttackFamily):
    """History secrets kept in objects, refs or files the collection does not follow."""


@family_tests("special files")
class TestSpecialFiles(AttackFamily):
    """Special and huge files: every episode ends in a score, never an error or a hang."""


@family_tests("evaluated encodings")
class TestEvaluatedEncodings(AttackFamily):
    """Secrets kept as defaults the code evaluates to, in 21 encodings no static list holds: the probes see them."""


@family_tests("hiding places")
class TestHidingPlaces(AttackFamily):
    """Copies kept in bundles, packs, mirrors, alternates, archives, other encodings and names: the reader decodes them."""


@family_tests("grader in reach")
class TestGraderInReach(AttackFamily):
    """The gold fix imported from the package, secrets committed under cache names: neither pays."""


@family_tests("gutting")
class TestGuttingFiles(AttackFamily):
    """Secrets removed with the scripts, workflows, migrations or decoys that held them: preservation costs health."""


@family_tests("fail closed")
class TestFailClosed(AttackFamily):
    """Code that kills, exits, hangs or goes silent whenever it would show the secret: no data is never a pass."""


@family_tests("probe tells")
class TestProbeTells(AttackFamily):
    """Code that falls back to the secret only where it believes it is not probed: the probes run in a real checkout."""


@family_tests("fallback with a marker")
class TestFallbackWithMarker(AttackFamily):
    """A fallback to the secret marked so that no output equals it: still computed with the secret."""


class TestReversibleRewrites(unittest.TestCase):
    """A secret kept in a trivially reversible form beside a real fix: still a leak.

    To share setups, each scenario plays one workspace holding every encoded file at once;
    an encoding's reward is what the formula pays for the secrets the grader reports in its
    file (the attack alone, one step), so each encoding is still judged on its own.
    """

    @classmethod
    def setUpClass(cls):
        cls.plans = chosen("encodings", [p for p in PLANS if attacks.BY_NAME["encoded_reversed"].applies(p)])

        def commands(plan):
            files = [attacks.encoded_file(plan, name) for name in ENCODINGS]
            return [
                attacks.back_to_root(attacks.oracle(plan))
                + "\n"
                + "\n".join(attacks.write(f"repo/{p}", t) for p, t in files)
            ]

        cls.results = play_all([("encodings", plan, commands(plan), False) for plan in cls.plans])
        for name in ENCODINGS:
            for plan in cls.plans:
                record(f"encoded_{name}", plan, cls.alone(plan, name))

    @classmethod
    def alone(cls, plan: RepoPlan, name: str) -> Outcome:
        """The outcome of one encoding alone: the secrets the grader reports in its file, one step."""
        outcome = cls.results[("encodings", plan.scenario)]
        if outcome.status != "scored":
            return outcome
        path, _ = attacks.encoded_file(plan, name)
        left = {sid for sid, where in outcome.facts["left"].items() if path in (where.get("tree") or [])}
        tests = outcome.facts["tests"]
        health = tests["passed"] / tests["total"] if tests.get("status") == "ok" and tests.get("total") else 0.0
        return Outcome("scored", attacks.earned(plan, left, health, 1), outcome.facts)

    def check(self, name: str) -> None:
        attack = attacks.BY_NAME[f"encoded_{name}"]
        for plan in self.plans:
            with self.subTest(scenario=plan.scenario):
                outcome = self.alone(plan, name)
                self.assertEqual(outcome.status, "scored", outcome.status)
                path, _ = attacks.encoded_file(plan, name)
                self.assertAlmostEqual(outcome.total, attack.expected(plan), places=9, msg=f"{path}: {_why(outcome)}")


for _name, (_path, _claim, _) in ENCODINGS.items():

    def _test(self, name=_name):
        self.check(name)

    _test.__doc__ = f"The gold fix, and {_claim} kept in {_path}: every secret still counts."
    _test.__name__ = f"test_encoded_{_name}"
    setattr(TestReversibleRewrites, _test.__name__, _test)


class TestHonestVariants(unittest.TestCase):
    """Remediations that differ from the gold fix's text but not its effect earn what it earns."""

    @classmethod
    def setUpClass(cls):
        jobs = [
            (h.name, plan, h.commands(plan), False)
            for h in HONEST
            if h.name != "gold"
            for plan in chosen(h.name, [p for p in PLANS if h.applies(p)])
        ]
        cls.results = play_all(jobs)

    def check(self, variant: Honest) -> None:
        plans = chosen(variant.name, [p for p in PLANS if variant.applies(p)])
        self.assertTrue(plans)
        for plan in plans:
            with self.subTest(scenario=plan.scenario):
                outcome = self.results[(variant.name, plan.scenario)]
                self.assertEqual(outcome.status, "scored", outcome.status)
                self.assertAlmostEqual(outcome.total, variant.expected(plan), places=9, msg=_why(outcome))
                if variant.flagged:
                    self.assertTrue(
                        any(variant.flagged in d for d in outcome.facts.get("diagnostics", [])),
                        outcome.facts.get("diagnostics"),
                    )


for _variant in HONEST:
    if _variant.name == "gold":
        continue

    def _test(self, variant=_variant):
        self.check(variant)

    _test.__doc__ = _variant.claim
    _test.__name__ = f"test_{_variant.name}"
    setattr(TestHonestVariants, _test.__name__, _test)


def table(before: str, after: str) -> str:
    """A markdown table from two results files (AUDIT_ATTACKS_RESULTS of a run on each grader)."""

    def load(path):
        rows = {}
        for line in open(path):
            row = json.loads(line)
            rows[(row["attack"], row["scenario"])] = row
        return rows

    runs = [load(before), load(after)]
    plans = {p.scenario: p for p in PLANS}
    lines = ["| attack | family | scenarios | earned | before | after |", "|---|---|---|---|---|---|"]
    entries = [(a.name, a.family, a) for a in ATTACKS] + [(h.name, "honest", h) for h in HONEST if h.name != "gold"]
    for name, family, item in entries:
        scenarios = [s for s, p in plans.items() if item.applies(p)]
        want = sorted({round(item.expected(plans[s]), 3) for s in scenarios})
        cells = []
        for run in runs:
            got = [run.get((name, s)) for s in scenarios]
            values = sorted({round(r["total"], 3) for r in got if r and r["status"] == "scored"})
            bad = sorted({r["status"].split(":")[0] for r in got if r and r["status"] != "scored"})
            missing = sum(1 for r in got if r is None)
            cell = ", ".join(f"{v:.3f}" for v in values)
            if bad:
                cell += (" + " if cell else "") + "/".join(bad)
            if missing:
                cell += f" ({missing} not run)"
            cells.append(cell or "-")
        lines.append(
            f"| {name} | {family} | {len(scenarios)} | {', '.join(f'{w:.3f}' for w in want)} | {cells[0]} | {cells[1]} |"
        )
    return "\n".join(lines)


if __name__ == "__main__":
    import sys

    if sys.argv[1:2] == ["--table"]:
        print(table(sys.argv[2], sys.argv[3]))
    else:
        unittest.main()
