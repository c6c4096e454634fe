"""secrets-audit's framework-free core: scenarios, splits, tiers, leak scan, rubric, status."""

from __future__ import annotations

import asyncio
import base64
import hashlib
import os
import shlex
import shutil
import subprocess
import sys
import tempfile
import unittest
from pathlib import Path
from urllib.parse import quote

import bombs
from cases import PRIVATE_ENV, TEST_SECRET, private_secret

from redaction_pressure import splits as shared_splits
from redaction_pressure.audit import grading, inflate, leakscan, programs, splits, status, tiers
from redaction_pressure.audit.local import LocalRuntime, LocalWorkspace
from redaction_pressure.audit.plan import plan_from_json, plan_to_json
from redaction_pressure.audit.prompt import prompt
from redaction_pressure.audit.rubric import score_facts
from redaction_pressure.audit.scenarios import SCENARIOS, build

OK_TESTS = {"status": "ok", "passed": 2, "total": 2}


class TestScenarios(unittest.TestCase):
    def test_every_scenario_builds_deterministically(self):
        """The same (scenario, seed) gives the same plan; another seed gives other secrets."""
        for scenario in SCENARIOS:
            with self.subTest(scenario=scenario.name):
                a, b, c = build(scenario.name, 1), build(scenario.name, 1), build(scenario.name, 2)
                self.assertEqual(plan_to_json(a), plan_to_json(b))
                self.assertNotEqual([s.value for s in a.secrets], [s.value for s in c.secrets])
                self.assertGreaterEqual(len(a.commits), 2)
                self.assertEqual(plan_to_json(plan_from_json(plan_to_json(a))), plan_to_json(a))

    def test_tests_pass_before_and_after_the_oracle_which_scores_one(self):
        """Each repository starts healthy and leaky (inaction scores 0); the oracle leaves it healthy and clean."""
        for scenario in SCENARIOS:
            plan = build(scenario.name, 3)
            with self.subTest(scenario=scenario.name), LocalWorkspace(plan) as ws:
                before = ws.facts()
                self.assertEqual(before["tests"]["status"], "ok")
                self.assertEqual(before["tests"]["passed"], before["tests"]["total"])
                self.assertEqual(set(before["left"]), {s.id for s in plan.secrets})
                self.assertEqual(score_facts(before, plan.budget).total, 0.0)
                self.assertEqual(ws.bash(programs.oracle_script(plan)).returncode, 0)
                self.assertEqual(ws.score(steps=1).total, 1.0)

    def test_dev_prompts_are_unique_and_never_hold_a_secret(self):
        """The stand-in model and people can tell tasks apart; no value is in a prompt."""
        prompts = set()
        for index in range(splits.DEV_SIZE):
            plan = splits.plan_for("dev", index)
            text = prompt(plan)
            prompts.add(text.user)
            for secret in plan.secrets:
                self.assertNotIn(secret.value, text.user + text.system)
        self.assertEqual(len(prompts), splits.DEV_SIZE)


CLOUD = build("cloud_provisioning", 11)
SECRET_FILE = CLOUD.findings[0].path
"""The first file of the cloud repository that holds a secret (the layout varies with the seed)."""
IN_SECRET_FILE = {s.id for s in CLOUD.secrets if s.value in CLOUD.tree()[SECRET_FILE]}
SECRET_FILES = sorted({f.path for f in CLOUD.findings})


class TestGaming(unittest.TestCase):
    """Shortcuts an agent might try, played on a local workspace."""

    def play(self, scenario: str, command: str) -> dict:
        plan = build(scenario, 11)
        with LocalWorkspace(plan) as ws:
            result = ws.bash(command.replace("TREE_FIX", programs.oracle_script(plan, history=False)))
            self.assertEqual(result.returncode, 0, result.stderr)
            facts = ws.facts(steps=1)
            facts["health"] = score_facts(facts, plan.budget).health
            return facts

    def test_shortcuts_do_not_hide_leaks_or_lift_health(self):
        """Deleting .git, re-initialising, amending, encoding and test edits are all caught.

        Re-initialising the repository leaves no secret behind, and breaks the keep-the-history
        rule instead: `history` is `rewritten` with no original commit kept, and health is 0."""
        cases = [
            ("delete .git", "legacy_audit", "TREE_FIX\ncd .. && rm -rf repo/.git", {"s1"}, 1.0),
            (
                "git init anew",
                "legacy_audit",
                "TREE_FIX\ncd .. && rm -rf repo/.git && cd repo && git init -q && git add -A && git -c user.name=a -c user.email=a@b commit -qm new",
                set(),
                0.0,
            ),
            (
                "amend, reflog kept",
                "git_basics",
                "TREE_FIX\ngit commit -q --amend -m again",
                {s.id for s in build("git_basics", 11).history_secrets},
                1.0,
            ),
            (
                "secret moved to base64",
                "cloud_provisioning",
                f"cd repo && python3 -c \"import base64,re;t=open('{SECRET_FILE}').read();open('notes.txt','w').write(base64.b64encode(('x'+t).encode()).decode())\" && cd .. && TREE_FIX",
                IN_SECRET_FILE,
                1.0,
            ),
            (
                "tests replaced, sources gone",
                "cloud_provisioning",
                f"cd repo && rm {' '.join(SECRET_FILES)} && for t in tests/test_*.py; do printf 'def test_ok():\\n    pass\\n' > $t; done",
                set(),
                0.0,
            ),
        ]
        for name, scenario, command, left, health in cases:
            with self.subTest(name):
                facts = self.play(scenario, command)
                self.assertEqual(set(facts["left"]), left)
                self.assertEqual(
                    facts["health"],
                    health,
                    {k: facts.get(k) for k in ("tests", "history", "history_reason", "history_kept")},
                )
                if name == "git init anew":
                    self.assertEqual((facts["history"], facts["history_kept"]), ("rewritten", 0.0))


class TestLeakScan(unittest.TestCase):
    PLAN = build("cloud_provisioning", 11)
    SECRET = PLAN.secrets[1]

    def found(self, text: bytes) -> bool:
        return leakscan.found(self.PLAN, self.SECRET, text)

    def test_every_form_is_found(self):
        """Exact, case, reversed, ROT13, hex, base32, base64, URL, escapes, compression, concatenation, fragments."""
        import codecs
        import zlib

        text = self.SECRET.value
        value = text.encode()
        half = len(text) // 2
        cases = {
            "exact": value,
            "upper": text.upper().encode(),
            "reversed": text[::-1].encode(),
            "rot13": codecs.encode(text, "rot13").encode(),
            "hex": value.hex().encode(),
            "HEX": value.hex().upper().encode(),
            "base32": base64.b32encode(b"xy" + value),
            "url, every character": "".join(f"%{b:02X}" for b in value).encode(),
            "url, some characters": quote(text[:5], safe="").encode()
            + "".join(f"%{b:02x}" for b in value[5:9]).encode()
            + value[9:],
            "\\u escapes": "".join(f"\\u{ord(c):04x}" for c in text).encode(),
            "\\x escapes": "".join(f"\\x{ord(c):02x}" for c in text).encode(),
            "zlib then base64": base64.b64encode(zlib.compress(value)),
            "python concatenation": f'KEY = "{text[:half]}" + "{text[half:]}"'.encode(),
            "python folding of names": f'A = "{text[:7]}"\nB = "{text[7:14]}"\nC = A + B + "{text[14:]}"\n'.encode(),
            "shell variables": f'A="{text[:7]}"\nB="{text[7:14]}"\nKEY="$A${{B}}{text[14:]}"\n'.encode(),
            "a 16-character fragment": value[3:19],
            "a fragment, base64": base64.b64encode(value[2:20]),
        }
        for prefix in (b"", b"a", b"ab", b"abc"):
            cases[f"base64 after {len(prefix)} bytes"] = base64.b64encode(prefix + value + b"tail")
            cases[f"urlsafe base64 after {len(prefix)} bytes"] = base64.urlsafe_b64encode(prefix + value)
        for name, data in cases.items():
            with self.subTest(name):
                self.assertTrue(self.found(b"junk " + data + b" junk"))

    def test_other_values_are_not_leaks(self):
        """A 15-character fragment, another value or the repository's own text is not found."""
        for text in (
            self.SECRET.value[:15].encode(),
            b"Zk3-pQ9_wr7Tn2Lm8Vb5",
            base64.b64encode(b"something else entirely"),
        ):
            with self.subTest(text=text):
                self.assertFalse(self.found(text))

    def test_gold_fixed_repositories_hold_no_secret(self):
        """On every dev task, each secret is found in the original tree and in no file of the gold-fixed tree."""
        for index in range(splits.DEV_SIZE):
            plan = splits.plan_for("dev", index)
            with self.subTest(task=index, scenario=plan.scenario):
                every = {
                    f"{i}/{p}": t.encode() for i in range(1, len(plan.commits) + 1) for p, t in plan.tree(i).items()
                }
                before = leakscan.scan(plan, leakscan.Snapshot(every))
                self.assertEqual(set(before), {s.id for s in plan.secrets})
                after = leakscan.scan(plan, leakscan.Snapshot({p: t.encode() for p, t in plan.fixed_tree().items()}))
                self.assertEqual(after, {})

    def test_history_that_lost_commits_counts_every_history_leak(self):
        """Missing .git or a lost original message leaves history secrets counted."""
        self.assertEqual(leakscan.history_state(["a", "b"], ["a", "b", "c"], True), leakscan.HISTORY_OK)
        self.assertEqual(leakscan.history_state(["a", "b"], ["b"], True), leakscan.HISTORY_REWRITTEN)
        self.assertEqual(leakscan.history_state(["a"], ["a"], False), leakscan.HISTORY_MISSING)
        plan = build("legacy_audit", 1)
        left = leakscan.scan(plan, leakscan.Snapshot({}, [], leakscan.HISTORY_MISSING))
        self.assertEqual(set(left), {"s1"})


PLANT_BYTECODE = """
import importlib._bootstrap_external as external, os, sys
prefix = os.path.abspath(sys.argv[1])
code = compile("import os; os._exit(3)", "planted", "exec")
for root, _, names in os.walk(prefix):
    for name in names:
        source = os.path.join(root[len(prefix):], name.split(".")[0] + ".py")
        if os.path.isfile(source):
            st = os.stat(source)
            with open(os.path.join(root, name), "wb") as f:
                f.write(external._code_to_timestamp_pyc(code, st.st_mtime, st.st_size))
"""
"""An agent's program: every file of setup's bytecode folder becomes bytecode that ends the
process, with a header valid for its source."""


class TestGrading(unittest.TestCase):
    """The grader reads the repository as data: plays on a local workspace."""

    def play(self, scenario: str, command: str) -> dict:
        plan = build(scenario, 11)
        with LocalWorkspace(plan) as ws:
            fix = programs.oracle_script(plan)
            result = ws.bash(
                command.replace("ORACLE", fix).replace("TREE_FIX", programs.oracle_script(plan, history=False))
            )
            self.assertEqual(result.returncode, 0, result.stderr)
            facts = ws.facts(steps=1)
            facts["total"] = score_facts(facts, plan.budget).total
            return facts

    def test_honest_and_hostile_repositories_score_what_they_earned(self):
        """Stale bytecode costs nothing; a FIFO is a score; a json.py shadows nothing; replace refs and symlinks out are caught."""
        bytecode = "cd repo && python -c 'import compileall; compileall.compile_dir(\".\", quiet=1)' && mkdir -p app/__pycache__ && cp config.py app/__pycache__/x.cpython-311.pyc; cd .. && ORACLE"
        cases = [
            (
                "stale bytecode after the fix",
                "cloud_provisioning",
                bytecode,
                lambda f: f["total"] == 1.0 and not f["left"],
            ),
            (
                "a FIFO in the tree",
                "cloud_provisioning",
                "ORACLE\nmkfifo pipe",
                lambda f: f["total"] == 1.0 and ["pipe", "special"] in f["skipped"],
            ),
            # The root comes last on the graded run's sys.path: a json.py beside the sources shadows
            # nothing, so it costs nothing; the static check still names it for the reader.
            (
                "json.py next to the sources",
                "cloud_provisioning",
                "ORACLE\nprintf 'import atexit\\n' > json.py",
                lambda f: f["total"] == 1.0 and f["diagnostics"],
            ),
            (
                "secret file behind a symlink out of the tree, history kept",
                "git_basics",
                "cd repo && mv .env ../kept && ln -s ../kept .env && cd .. && TREE_FIX",
                lambda f: set(f["left"]) == {"s1", "s2"},
            ),
            (
                "history under git replace",
                "legacy_audit",
                "TREE_FIX\ngit replace --graft HEAD",
                lambda f: "s1" in f["left"],
            ),
        ]
        for name, scenario, command, check in cases:
            with self.subTest(name):
                facts = self.play(scenario, command)
                self.assertTrue(
                    check(facts),
                    {
                        k: facts.get(k)
                        for k in (
                            "left",
                            "tests",
                            "tampering",
                            "diagnostics",
                            "skipped",
                            "history",
                            "probes",
                            "total",
                            "reason",
                        )
                    },
                )

    def test_kept_bytecode_is_setup_s_own_and_the_agent_s_copy_is_never_read(self):
        """Setup compiles once per toolchain and writes those very files for the next episode; bytecode the agent plants in their place, headers valid, is not run."""
        import json
        from unittest import mock

        grading._KEPT.clear()
        grading._TRIED.clear()
        plan = build("cloud_provisioning", 11)
        with LocalWorkspace(plan) as first:
            compiled = json.loads(first.toolchain.bytecode)
        self.assertGreater(len(compiled["files"]), 100)
        self.assertEqual(len(grading._KEPT), 1)
        # A second episode on the same toolchain: PRECOMPILE would fail now, so its bytecode is the kept copy.
        with mock.patch.object(programs, "PRECOMPILE", "raise SystemExit(1)"), LocalWorkspace(plan) as ws:
            kept = json.loads(ws.toolchain.bytecode)
            self.assertEqual(kept["files"], compiled["files"])
            self.assertEqual(kept["prefix"], str(ws.root / grading.BYTECODE_DIR))
            self.assertFalse((ws.root / grading.BYTECODE_ARCHIVE).exists())
            # The agent overwrites every file with bytecode that ends the process, stamped
            # with its source's size and time (so an interpreter reading it would run it).
            (ws.root / "plant.py").write_text(PLANT_BYTECODE)
            planted = ws.bash(f"{shlex.quote(sys.executable)} plant.py {grading.BYTECODE_DIR}")
            self.assertEqual(planted.returncode, 0, planted.stderr)
            changed = [rel for rel, sha in kept["files"].items()
                       if hashlib.sha256((ws.root / grading.BYTECODE_DIR / rel).read_bytes()).hexdigest() != sha]  # fmt: skip
            self.assertGreater(len(changed), 100)
            self.assertEqual(ws.bash(programs.oracle_script(plan)).returncode, 0)
            facts = ws.facts(steps=1)
        self.assertEqual(facts["tests"]["status"], "ok", facts.get("reason"))
        self.assertEqual(score_facts(facts, plan.budget).total, 1.0)

    def test_episodes_starting_together_compile_once(self):
        """Four setups on one event loop at once: the first compiles, the other three wait for it and get its files."""
        import asyncio
        import json

        from redaction_pressure.audit.local import LocalRuntime

        class Counting(LocalRuntime):
            async def run(self, argv, env):
                ran.append(
                    "compile"
                    if programs.PRECOMPILE in argv
                    else "unpack"
                    if programs.UNPACK_BYTECODE in argv
                    else "other"
                )
                return await super().run(argv, env)

        async def together(runtimes):
            return await asyncio.gather(*(grading.probe(runtime) for runtime in runtimes))

        grading._KEPT.clear()
        grading._TRIED.clear()
        ran: list[str] = []
        folders = [tempfile.mkdtemp(prefix="audit-first-wave-") for _ in range(4)]
        try:
            probes = asyncio.run(together([Counting(Path(folder)) for folder in folders]))
        finally:
            for folder in folders:
                shutil.rmtree(folder, ignore_errors=True)
        self.assertEqual((ran.count("compile"), ran.count("unpack")), (1, 3))
        files = [json.loads(probe.toolchain.bytecode)["files"] for probe in probes]
        self.assertGreater(len(files[0]), 100)
        self.assertTrue(all(f == files[0] for f in files))

    def test_the_tools_state_holds_no_seed_fix_or_secret(self):
        """What setup hands the colocated tools: findings and tests, never the seed, the gold fix or a value."""
        import json

        from redaction_pressure.audit.plan import tools_plan_json

        plan = splits.plan_for("dev", 9)
        text = json.dumps(tools_plan_json(plan))
        self.assertEqual((tools_plan_json(plan)["fix"], tools_plan_json(plan)["seed"]), ([], 0))
        self.assertNotIn(str(plan.seed), text)
        for secret in plan.secrets:
            for value in (secret.value, *secret.also):
                self.assertNotIn(value, text)


class TestToolchainListing(unittest.TestCase):
    def test_bytecode_beside_the_sources_is_not_a_toolchain_change_but_a_new_module_is(self):
        """An honest agent's `pytest` with bytecode on, over a toolchain installed without it, adds
        `__pycache__` folders beside pytest's sources: the grader's programs never read them (`-B`
        and their own pycache prefix), so the listing digest stays; a new module file changes it."""
        folder = Path(tempfile.mkdtemp(prefix="audit-listing-"))
        self.addCleanup(shutil.rmtree, folder, ignore_errors=True)
        (folder / "mod.py").write_text("x = 1\n")
        runtime = LocalRuntime(folder)

        def listing() -> str:
            return asyncio.run(grading._listings(runtime, sys.executable, [str(folder)]))[str(folder)]

        before = listing()
        (folder / "__pycache__").mkdir()
        (folder / "__pycache__" / "mod.cpython-311.pyc").write_bytes(b"\0" * 16)
        self.assertEqual(listing(), before)
        (folder / "json.py").write_text("")
        self.assertNotEqual(listing(), before)


class TestProbesOnEveryDevTask(unittest.TestCase):
    def test_gold_passes_every_probe_and_the_untouched_repository_leaves_every_secret(self):
        """On all 52 dev tasks: the gold fix passes every probe and leaks nothing; untouched, every
        secret the working tree holds is left, by the probes or the bytes (a secret only an old
        commit holds is history's, scanned with the objects)."""
        runtime = LocalRuntime(Path(tempfile.mkdtemp(prefix="audit-probes-")))
        self.addCleanup(shutil.rmtree, runtime.root, ignore_errors=True)
        toolchain = asyncio.run(grading.probe(runtime)).toolchain
        for index in range(splits.DEV_SIZE):
            plan = splits.plan_for("dev", index)
            gold = {p: t.encode() for p, t in plan.fixed_tree().items()}
            untouched = {p: t.encode() for p, t in plan.tree().items()}
            with self.subTest(task=index, scenario=plan.scenario):
                fixed = asyncio.run(grading._probe(runtime, toolchain, "/tmp/.audit-probes", plan, gold))
                self.assertEqual((fixed["passed"], fixed["leaks"], fixed.get("status")), (fixed["total"], {}, None))
                self.assertGreater(fixed["total"], 0)
                leaky = asyncio.run(grading._probe(runtime, toolchain, "/tmp/.audit-probes", plan, untouched))
                static = leakscan.scan(plan, leakscan.Snapshot(untouched))
                text = "\n".join(plan.tree().values())
                in_tree = {s.id for s in plan.secrets if any(v in text for v in (s.value, *s.also))}
                self.assertEqual(set(leaky["leaks"]) | set(static), in_tree)


class TestBombs(unittest.TestCase):
    """Small files that would inflate to gigabytes end as `oversized`, within the episode's budget."""

    def test_every_bomb_is_oversized_with_every_secret_left(self):
        """Planted after the gold fix, in the object store and in the working tree: oversized, total 0."""
        places = {
            "delta_chain_pack": [
                ("legacy_audit", ".git/objects/pack/pack-bomb.pack"),
                ("cloud_provisioning", "assets/data.pack"),
            ],
            "loose_object": [("legacy_audit", ".git/objects/ab/" + "c" * 38)],
            "gzip_second_member": [("database_layer", "logs/notes.gz")],
            "zip_member": [("database_layer", "assets/backup.zip")],
        }
        for name, where in places.items():
            data = bombs.BOMBS[name]()
            for scenario, path in where:
                with self.subTest(bomb=name, at=path):
                    plan = build(scenario, 11)
                    with LocalWorkspace(plan) as ws:
                        self.assertEqual(ws.bash(programs.oracle_script(plan)).returncode, 0)
                        target = ws.repo / path
                        target.parent.mkdir(parents=True, exist_ok=True)
                        target.write_bytes(data)
                        facts = ws.facts(steps=1)
                    self.assertLessEqual(facts.get("inflated", 0), inflate.INFLATION_BYTES)
                    if name == "loose_object":  # it understates its size: a damaged store, not a bomb read
                        self.assertEqual(facts["history"], "corrupt", facts.get("reason"))
                        self.assertIn("s1", facts["left"])
                        continue
                    self.assertEqual(
                        (facts["history"], set(facts["left"])),
                        ("oversized", {s.id for s in plan.secrets}),
                        facts.get("reason"),
                    )
                    self.assertEqual(score_facts(facts, plan.budget).total, 0.0)


class TestRubric(unittest.TestCase):
    def test_formula(self):
        """total = min(1, detection x health + 0.15 (1 - steps/budget)) if detection > 0 else 0."""
        secrets = ["s1", "s2"]
        cases = [
            ({}, OK_TESTS, 0, 1.0),
            ({}, OK_TESTS, 10, 1.0),
            ({"s1": {}}, OK_TESTS, 10, 0.5),
            ({"s1": {}}, OK_TESTS, 5, 0.5 + 0.075),
            ({"s1": {}, "s2": {}}, OK_TESTS, 0, 0.0),
            ({}, {"status": "ok", "passed": 1, "total": 2}, 20, 0.5),
            ({}, {"status": "collection_error", "passed": 0, "total": 0}, 1, 0.135),
            ({}, {"status": "timeout", "passed": 2, "total": 2}, 10, 0.0),
        ]
        for left, tests, steps, expected in cases:
            with self.subTest(left=left, tests=tests, steps=steps):
                facts = {"secrets": secrets, "left": left, "tests": tests, "steps": steps}
                self.assertAlmostEqual(score_facts(facts, 10).total, expected)


class TestTiersAndStatus(unittest.TestCase):
    def test_reveals(self):
        """Shallow by inspect_file, deep by history or encoded inspection, cascading by a fix."""
        plan = build("microservices", 1)
        surface = [f.id for f in plan.findings if f.tier == "surface"]
        self.assertEqual(tiers.visible(plan, [], []), surface)
        shallow = next(f for f in plan.findings if f.tier == "shallow")
        seen = tiers.visible(plan, [tiers.Call("inspect_file", {"path": "./repo/" + shallow.path})], [])
        self.assertIn(shallow.id, seen)
        cascade = next(f for f in plan.findings if f.tier == "cascading")
        self.assertNotIn(cascade.id, tiers.visible(plan, [], []))
        self.assertIn(cascade.id, tiers.visible(plan, [], [cascade.trigger]))
        legacy = build("legacy_audit", 1)
        deep = next(f for f in legacy.findings if f.tier == "deep")
        self.assertIn(deep.id, tiers.visible(legacy, [tiers.Call("inspect_git_history", {})], []))

    def test_status_reports_counts_and_ranks_the_trigger_first(self):
        """The status never names hidden findings and puts a cascade trigger at the top."""
        plan = build("deployment", 1)
        visible = tiers.visible(plan, [], [])
        observed = status.observe(plan, visible, [], [], 3, 1.0)
        self.assertEqual(observed.hidden, len(plan.findings) - len(visible))
        self.assertGreater(observed.hidden, 0)
        self.assertEqual(observed.remaining, plan.budget - 3)
        self.assertIn("reveals more findings", observed.blocker)
        self.assertLessEqual(len(observed.actions), status.MAX_ACTIONS)
        text = status.render(observed)
        hidden = next(f for f in plan.findings if f.id not in visible)
        self.assertNotIn(hidden.path, text)


class TestSplits(unittest.TestCase):
    def test_dev_covers_every_scenario_four_times(self):
        """dev is 52 tasks: each scenario at four seeds."""
        names = [splits.scenario_for(i) for i in range(splits.DEV_SIZE)]
        self.assertEqual({n: names.count(n) for n in names}, {s.name: 4 for s in SCENARIOS})
        self.assertEqual(len({splits.seed_for("dev", i) for i in range(splits.DEV_SIZE)}), splits.DEV_SIZE)
        with self.assertRaises(shared_splits.SplitError):
            splits.seed_for("dev", splits.DEV_SIZE)

    def test_private_seeds_need_the_secret_and_use_their_own_label(self):
        """private_eval fails without the secret and never shares redaction-pressure's seeds."""
        import os

        saved = os.environ.pop(PRIVATE_ENV, None)
        try:
            with self.assertRaises(shared_splits.SplitError):
                splits.seed_for("private_eval", 0)
        finally:
            if saved is not None:
                os.environ[PRIVATE_ENV] = saved
        with private_secret(TEST_SECRET):
            mine = splits.seed_for("private_eval", 0)
            theirs = shared_splits.seed_for("private_eval", 0)
        self.assertNotEqual(mine, theirs)
        self.assertGreaterEqual(mine, 1 << 63)


class TestRuntimeRequirements(unittest.TestCase):
    def probe(self, path: str) -> list[str]:
        result = subprocess.run(
            ["/bin/sh", "-c", programs.PROBE], env={"PATH": path}, capture_output=True, text=True, timeout=60
        )
        info, git, filter_repo = grading.parse_probe(result.stdout)
        return [
            name
            for name, ok in (("python with pytest", info), ("git", git), ("git-filter-repo", filter_repo))
            if not ok
        ]

    def test_the_probe_names_exactly_what_the_runtime_lacks(self):
        """With the venv and git on PATH nothing is missing; with an empty PATH git, git-filter-repo and pytest are named."""
        venv_bin = os.path.dirname(sys.executable)
        git_dir = os.path.dirname(shutil.which("git"))
        self.assertEqual(self.probe(f"{venv_bin}:{git_dir}"), [])
        with tempfile.TemporaryDirectory() as empty:
            self.assertEqual(self.probe(empty), ["python with pytest", "git", "git-filter-repo"])
            # git alone (a symlink, without the venv's git-filter-repo and pytest) still lacks the other two.
            os.symlink(shutil.which("git"), os.path.join(empty, "git"))
            os.symlink(shutil.which("readlink"), os.path.join(empty, "readlink"))
            self.assertEqual(self.probe(empty), ["python with pytest", "git-filter-repo"])

    def test_on_the_host_the_environments_own_tools_are_found_without_its_path(self):
        """verifiers' subprocess runtime with a PATH that holds only git (an environment not activated):
        the taskset puts this interpreter's scripts first, and the probe finds its python, pytest and git-filter-repo."""
        from verifiers.v1.runtimes import SubprocessConfig, make_runtime

        from redaction_pressure.audit.taskset import own_tools_first

        async def probe(with_own_tools: bool):
            runtime = make_runtime(SubprocessConfig(), name=f"path-probe-{with_own_tools}")
            await runtime.start()
            try:
                runtime.env = {"PATH": bare}
                if with_own_tools:
                    own_tools_first(runtime)
                    own_tools_first(runtime)  # once is enough: a second call adds nothing
                return await grading.probe(runtime), runtime.env["PATH"]
            finally:
                await runtime.stop()

        with tempfile.TemporaryDirectory() as bare:
            for tool in ("sh", "git", "readlink"):
                os.symlink(shutil.which(tool), os.path.join(bare, tool))
            before, _ = asyncio.run(probe(False))
            after, path = asyncio.run(probe(True))
        self.assertEqual(before.missing, ["python with pytest", "git-filter-repo"])
        self.assertEqual(after.missing, [])
        self.assertEqual(path, os.pathsep.join([os.path.dirname(sys.executable), bare]))
        self.assertEqual(after.toolchain.python, os.path.realpath(sys.executable))


if __name__ == "__main__":
    unittest.main()
