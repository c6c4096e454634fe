"""The agent's toolchain on the host (`audit/host_toolchain.py`): its own python with pytest and
git-filter-repo, nothing of the evaluator's environment, built once, checked every time.

Each class builds into a cache folder of its own (`XDG_CACHE_HOME` pointed at a temporary folder),
so no test disturbs the toolchain other modules use.
"""

from __future__ import annotations

import os
import subprocess
import sys
import tempfile
import unittest
from pathlib import Path
from unittest import mock

from redaction_pressure.audit import host_toolchain, programs, splits
from redaction_pressure.audit.local import LocalWorkspace
from redaction_pressure.audit.rubric import score

FORBIDDEN = ("redaction_pressure", "secrets_audit", "verifiers", "dulwich", "regex", "pydantic")
"""Packages of the evaluator's environment the agent's python must not import."""


class OwnCache(unittest.TestCase):
    """A class whose toolchains are built under a temporary cache folder."""

    @classmethod
    def setUpClass(cls):
        cls._cache = tempfile.TemporaryDirectory(prefix="toolchain-cache-")
        cls._env = mock.patch.dict(os.environ, {"XDG_CACHE_HOME": cls._cache.name})
        cls._env.start()

    @classmethod
    def tearDownClass(cls):
        cls._env.stop()
        cls._cache.cleanup()


class TestLayout(unittest.TestCase):
    def test_it_holds_pytest_its_dependencies_and_git_filter_repo_only(self):
        """The toolchain's site-packages holds exactly pytest's and git-filter-repo's distributions, nothing of this package."""
        plan = host_toolchain.layout(Path("/nonexistent"))
        tops = {rel.split("/")[3].split("-")[0] for rel in plan.files}
        self.assertEqual(
            tops,
            {
                "_pytest",
                "pytest",
                "py.py",
                "pluggy",
                "iniconfig",
                "packaging",
                "pygments",
                "git_filter_repo",
                "git_filter_repo.py",
            },
        )
        self.assertEqual(plan.missing, ())
        self.assertTrue({"bin/pytest", "bin/git-filter-repo", "pyvenv.cfg"} <= set(plan.written))
        self.assertIn("include-system-site-packages = false", plan.written["pyvenv.cfg"].decode())


class TestEnsure(OwnCache):
    def test_it_is_built_once_and_handed_out_again(self):
        """A second call finds the folder the first built, under the cache, named by its digest."""
        first = host_toolchain.ensure()
        marker = first / "lib" / "__pycache__"
        marker.mkdir()  # bytecode the agent's pytest writes is no change
        self.assertEqual(host_toolchain.ensure(), first)
        self.assertTrue(marker.is_dir())
        self.assertEqual(first.parent, Path(os.environ["XDG_CACHE_HOME"]) / "redaction-pressure" / "toolchains")

    def test_a_changed_toolchain_is_built_again(self):
        """An earlier agent's sitecustomize.py, an edited pytest file or a removed script gets the folder rebuilt."""
        root = host_toolchain.ensure()
        site = next(root.glob("lib/python*/site-packages"))
        changes = {
            "added": lambda: (site / "sitecustomize.py").write_text("import os\n"),
            "edited": lambda: (site / "_pytest" / "main.py").write_text("raise SystemExit(0)\n"),
            "removed": lambda: (root / "bin" / "git-filter-repo").unlink(),
            "relinked": lambda: ((root / "bin" / "python").unlink(), (root / "bin" / "python").symlink_to("/bin/sh")),
        }
        for name, change in changes.items():
            with self.subTest(name):
                change()
                self.assertTrue(host_toolchain.differs(root, host_toolchain.layout()))
                self.assertEqual(host_toolchain.ensure(), root)
                self.assertEqual(host_toolchain.differs(root, host_toolchain.layout()), "")
        self.assertFalse((site / "sitecustomize.py").exists())

    def test_processes_building_at_once_all_get_one_whole_toolchain(self):
        """Three processes that find no toolchain build at once; each gets the same folder, whole."""
        code = "from redaction_pressure.audit import host_toolchain as h; print(h.ensure())"
        with tempfile.TemporaryDirectory(prefix="toolchain-race-") as cache:
            env = {**os.environ, "XDG_CACHE_HOME": cache}
            runs = [
                subprocess.Popen([sys.executable, "-c", code], env=env, stdout=subprocess.PIPE, text=True)
                for _ in range(3)
            ]
            roots = {run.communicate(timeout=120)[0].strip() for run in runs}
            self.assertEqual([run.returncode for run in runs], [0, 0, 0])
            self.assertEqual(len(roots), 1)
            with mock.patch.dict(os.environ, {"XDG_CACHE_HOME": cache}):
                self.assertEqual(host_toolchain.differs(Path(roots.pop()), host_toolchain.layout()), "")
            leftovers = [p.name for p in (Path(cache) / "redaction-pressure" / "toolchains").iterdir()]
            self.assertEqual(len(leftovers), 1, leftovers)


class TestAgentEnvironment(OwnCache):
    def test_nothing_points_back_into_the_evaluators_environment(self):
        """PATH loses the evaluator's scripts folder, VIRTUAL_ENV names the toolchain, PYTHONPATH and any variable naming the evaluator are emptied."""
        scripts = os.path.dirname(sys.executable)
        env = {
            "PATH": os.pathsep.join([scripts, "/usr/bin", "/bin"]),
            "VIRTUAL_ENV": sys.prefix,
            "PYTHONPATH": "/anywhere",
            "_": sys.executable,
            "HOME": os.environ.get("HOME", "/root"),
            "EDITOR": "vi",
        }
        out = host_toolchain.agent_env(env)
        root = host_toolchain.ensure()
        self.assertEqual(out["PATH"].split(os.pathsep), [str(root / "bin"), "/usr/bin", "/bin"])
        self.assertEqual(out["VIRTUAL_ENV"], str(root))
        self.assertEqual((out["PYTHONPATH"], out["_"]), ("", ""))
        self.assertNotIn("HOME", out)
        self.assertNotIn("EDITOR", out)


class TestLocalWorkspace(OwnCache):
    """The agent's shell in a LocalWorkspace, as the subprocess runtime gives it."""

    @classmethod
    def setUpClass(cls):
        super().setUpClass()
        cls.plan = splits.plan_for("dev", 3)

    def test_the_agents_python_cannot_import_the_evaluators_packages(self):
        """`python -c "import redaction_pressure"` (and secrets_audit, verifiers, ...) fails in the agent's shell."""
        with LocalWorkspace(self.plan) as ws:
            for name in FORBIDDEN:
                for python in ("python", "python3"):
                    with self.subTest(name, python=python):
                        result = ws.bash(f'{python} -c "import {name}"')
                        self.assertNotEqual(result.returncode, 0)
                        self.assertIn("ModuleNotFoundError", result.stderr)

    def test_pytest_and_git_filter_repo_work(self):
        """`python -m pytest --version`, `pytest --version` and `git filter-repo --version` run from the toolchain."""
        with LocalWorkspace(self.plan) as ws:
            root = host_toolchain.ensure()
            for command in ("python -m pytest --version", "pytest --version", "git filter-repo --version"):
                with self.subTest(command):
                    result = ws.bash(command)
                    self.assertEqual(result.returncode, 0, result.stderr)
            where = ws.bash('python -c "import sys, pytest; print(sys.prefix); print(pytest.__file__)"')
            prefix, pytest_file = where.stdout.split()
            self.assertEqual(prefix, str(root))
            self.assertTrue(pytest_file.startswith(str(root)))
            self.assertTrue(ws.toolchain.site.startswith(str(root)))

    def test_the_gold_fix_still_scores_one(self):
        """The oracle's fix, run in the agent's shell (git filter-repo from the toolchain), scores 1.0 with the grader on the toolchain."""
        with LocalWorkspace(self.plan) as ws:
            done = ws.bash(programs.oracle_script(self.plan))
            self.assertEqual(done.returncode, 0, done.stderr)
            self.assertEqual(score(self.plan, ws.facts(1)).total, 1.0)


if __name__ == "__main__":
    unittest.main()
