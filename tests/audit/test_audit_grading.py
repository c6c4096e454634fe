"""secrets-audit's grader, played on local workspaces: shortcuts an agent might try are caught,
the repository is read as data, the toolchain listing, the probes on every dev task and the
runtime's requirements named.
"""

from __future__ import annotations

import asyncio
import hashlib
import os
import shlex
import shutil
import subprocess
import sys
import tempfile
import unittest
from pathlib import Path

from redaction_pressure.audit import grading, leakscan, probes, programs, splits
from redaction_pressure.audit.local import LocalRuntime, LocalWorkspace
from redaction_pressure.audit.rubric import score_facts
from redaction_pressure.audit.scenarios import build

CLOUD = build("cloud_provisioning", 11)


SECRET_FILE = CLOUD.findings[0].path
"""The first file of the cloud repository that holds a secret (the layout varies with the seed)."""


IN_SECRET_FILE = {s.id for s in CLOUD.secrets if s.value in CLOUD.tree()[SECRET_FILE]}


SECRET_FILES = sorted({f.path for f in CLOUD.findings})


class TestGaming(unittest.TestCase):
    """Shortcuts an agent might try, played on a local workspace, in history mode `seed` (where only
    git_basics' and legacy_audit's secrets count in git's objects, so that a working-tree fix is
    the whole fix elsewhere; `all` mode's rule is tests/audit/test_audit_history.py's)."""

    def play(self, scenario: str, command: str) -> dict:
        plan = build(scenario, 11, "seed")
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
                {s.id for s in build("git_basics", 11, "seed").history_secrets},
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
        plan = build(scenario, 11, "seed")  # the seed's history rule: these cases are about the tree
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

        async def both(plan, gold, untouched):
            # One run of gold's for both verdicts: the agent's runs see the same canaries.
            gold_modes, agent_modes = probes.modes(plan)
            runs = await grading._gold_probes(runtime, toolchain, "/tmp/.audit-probes", plan, gold_modes)
            done = asyncio.get_running_loop().create_future()
            done.set_result(runs)
            return [
                await grading._agent_probes(runtime, toolchain, "/tmp/.audit-probes", plan, tree, {}, done, agent_modes)
                for tree in (gold, untouched)
            ]

        for index in range(splits.DEV_SIZE):
            plan = splits.plan_for("dev", index)
            gold = {p: t.encode() for p, t in plan.fixed_tree().items()}
            untouched = {p: t.encode() for p, t in plan.tree().items()}
            with self.subTest(task=index, scenario=plan.scenario):
                fixed, leaky = asyncio.run(both(plan, gold, untouched))
                self.assertEqual((fixed["passed"], fixed["leaks"], fixed.get("broken")), (fixed["total"], {}, None))
                self.assertGreater(fixed["total"], 0)
                static = leakscan.scan(plan, leakscan.Snapshot(untouched))
                text = "\n".join(plan.tree().values())
                in_tree = {s.id for s in plan.secrets if any(v in text for v in (s.value, *s.also))}
                self.assertEqual(set(leaky["leaks"]) | set(static), in_tree)


class TestTrackedDerivedFiles(unittest.TestCase):
    """Bytecode and test caches are derived only when untracked: a tracked one counts wherever it is."""

    PATHS = ("pkg/__pycache__/creds.txt", "vault/creds.pyc", ".pytest_cache/v/x")

    def graded(self, command: str) -> dict:
        """The gold fix, then `command` in repo/ (`$S` holds the first secret's value), graded."""
        with LocalWorkspace(CLOUD) as ws:
            fix = ws.bash(programs.oracle_script(CLOUD))
            self.assertEqual(fix.returncode, 0, fix.stderr)
            secret = shlex.quote(CLOUD.secrets[0].value)
            done = ws.bash(f"cd repo && S={secret} && {command}")
            self.assertEqual(done.returncode, 0, done.stderr)
            return ws.facts(steps=1)

    def test_a_tracked_cache_or_bytecode_file_holding_a_secret_leaves_it(self):
        """`pkg/__pycache__/creds.txt`, `vault/creds.pyc`, `.pytest_cache/v/x` committed (git add -f) hold the secret: it is left, there."""
        for path in self.PATHS:
            with self.subTest(path):
                q = shlex.quote(path)
                facts = self.graded(
                    f'mkdir -p "$(dirname {q})" && printf %s "$S" > {q} && git add -f {q} && '
                    "git -c user.name=a -c user.email=a@b.invalid commit -qm keep"
                )
                self.assertIn(path, facts["left"].get(CLOUD.secrets[0].id, {}).get("tree", []), facts["left"])
                self.assertEqual(facts["derived_counted"], [path])

    def test_the_same_files_untracked_are_caches_and_cost_nothing(self):
        """Untracked and not ignored (the .gitignore emptied), the same files count for nothing; a plain file beside them does."""
        for path in self.PATHS:
            with self.subTest(path):
                q = shlex.quote(path)
                facts = self.graded(f': > .gitignore && mkdir -p "$(dirname {q})" && printf %s "$S" > {q}')
                self.assertEqual(facts["left"], {})
                self.assertNotIn("derived_counted", facts)
        control = self.graded(': > .gitignore && mkdir -p vault && printf %s "$S" > vault/creds.txt')
        self.assertIn("vault/creds.txt", control["left"][CLOUD.secrets[0].id]["tree"])

    def test_untracked_caches_never_break_the_grade(self):
        """A symlink out of the tree, a FIFO and a file past the size limit inside untracked caches leave the gold fix at 1.0."""
        huge = grading.MAX_FILE_BYTES + 1
        command = (
            "mkdir -p pkg/__pycache__ .pytest_cache && ln -s /etc/passwd pkg/__pycache__/link.pyc && "
            f"mkfifo .pytest_cache/pipe && head -c {huge} /dev/zero > pkg/__pycache__/big.cpython-311.pyc && "
            "python -m pytest -q -p no:randomly tests >/dev/null 2>&1; true"
        )
        facts = self.graded(command)
        self.assertEqual(
            score_facts(facts, CLOUD.budget).total, 1.0, {k: facts.get(k) for k in ("left", "reason", "tests")}
        )


class TestRuntimeRequirements(unittest.TestCase):
    def probe(self, path: str) -> list[str]:
        result = subprocess.run(
            ["/bin/sh", "-c", programs.PROBE], env={"PATH": path}, capture_output=True, text=True, timeout=60
        )
        info, git, filter_repo, _node = grading.parse_probe(result.stdout)
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

    def test_on_the_host_the_agents_own_toolchain_is_found_without_the_environments_path(self):
        """verifiers' subprocess runtime with a PATH that holds only git (an environment not activated):
        the taskset puts the agent's own toolchain first: the probe finds its python, pytest and git-filter-repo,
        and that python cannot import this package."""
        from verifiers.v1.runtimes import SubprocessConfig, make_runtime

        from redaction_pressure.audit import host_toolchain
        from redaction_pressure.audit.taskset import own_toolchain_first

        async def probe(with_own_tools: bool):
            runtime = make_runtime(SubprocessConfig(), name=f"path-probe-{with_own_tools}")
            await runtime.start()
            try:
                runtime.env = {"PATH": bare}
                if with_own_tools:
                    await own_toolchain_first(runtime)
                    await own_toolchain_first(runtime)  # once is enough: a second call adds nothing
                    imported = await runtime.run(["python", "-c", "import redaction_pressure"], {})
                    self.assertNotEqual(imported.exit_code, 0, "the agent's python imports this package")
                return await grading.probe(runtime), runtime.env["PATH"]
            finally:
                await runtime.stop()

        with tempfile.TemporaryDirectory() as bare:
            for tool in ("sh", "git", "readlink"):
                os.symlink(shutil.which(tool), os.path.join(bare, tool))
            before, _ = asyncio.run(probe(False))
            after, path = asyncio.run(probe(True))
        root = host_toolchain.ensure()
        self.assertEqual(before.missing, ["python with pytest", "git-filter-repo"])
        self.assertEqual(after.missing, [])
        self.assertEqual(path, os.pathsep.join([str(root / "bin"), bare]))
        self.assertEqual(Path(after.toolchain.site).parent.parent.parent, root)


if __name__ == "__main__":
    unittest.main()


class TestLostLines(unittest.TestCase):
    def test_a_lost_line_is_shown_in_the_file_that_lost_it(self):
        """A line many files share (`apiVersion: v1`) lost by deleting one file is reported in that
        file, not in the first file of the repository that has it."""
        from redaction_pressure.audit import preservation
        from redaction_pressure.audit.splits import plan_for

        plan = plan_for("dev", 0, difficulty="expert")
        fixed = {path: text.encode() for path, text in plan.fixed_tree().items()}
        manifests = sorted(p for p, t in fixed.items() if p.endswith(".yaml") and b"apiVersion: v1" in t)
        self.assertGreater(len(manifests), 2)
        gone = manifests[-1]
        measured = preservation.measure(plan, {p: t for p, t in fixed.items() if p != gone})
        self.assertLess(measured["lines"], 1.0)
        self.assertTrue(measured["lost"])
        self.assertEqual({place.rsplit(":", 1)[0] for place in measured["lost"]}, {gone})
