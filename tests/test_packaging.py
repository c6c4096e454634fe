"""The wheels install and run: the core package and both environments' entries, in a fresh venv.

What a user of the environments folder does: build the root's wheel and each entry's, install
them into a new virtual environment (offline, from the wheels plus uv's package cache, with
the lock's versions as constraints), then run the verifiers CLIs from that venv. Both ids must
resolve there and score: `vf-eval redaction-pressure` plays a dev task against a stand-in
model, `vf-validate secrets-audit` plays the gold fix and inaction on a dev repository.
"""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import tempfile
import unittest
from pathlib import Path

from cases import HANG_SECONDS, PRIVATE_ENV
from standin import StandInModel

from redaction_pressure import policies
from redaction_pressure.api import load_task

ROOT = Path(__file__).resolve().parents[1]
ENTRIES = ("redaction-pressure", "secrets-audit")
INSTALL_SECONDS = 900
"""A hang guard for building and installing (uv resolves from its cache; no test asserts speed)."""


def uv() -> list[str]:
    found = shutil.which("uv")
    return [found] if found else ["python3", "-m", "uv"]


class TestWheels(unittest.TestCase):
    @classmethod
    def setUpClass(cls):
        cls.work = Path(tempfile.mkdtemp(prefix="rp-wheels-"))
        # No bytecode compiled at install (tests/run.py asks uv for it): compiling the fresh venv
        # costs more CPU than its two short runs save.
        cls.env = {k: v for k, v in os.environ.items() if k not in (PRIVATE_ENV, "VIRTUAL_ENV", "UV_COMPILE_BYTECODE")}
        cls.env.update(
            HOME=str(cls.work / "home"),
            UV_CACHE_DIR=os.environ.get("UV_CACHE_DIR", str(Path.home() / ".cache" / "uv")),
            UV_PYTHON_DOWNLOADS="never",
            STANDIN_KEY="not-a-real-key",
        )
        dist = cls.work / "dist"
        cls.sh([*uv(), "build", "--wheel", "--out-dir", str(dist)], cwd=ROOT)
        for entry in ENTRIES:
            cls.sh([*uv(), "build", "--wheel", "--package", entry, "--out-dir", str(dist)], cwd=ROOT)
        cls.wheels = sorted(dist.glob("*.whl"))
        # The lock's registry dependencies as a pylock file (exact files by URL and hash), so
        # uv installs them offline from its cache; the three wheels then go in on top.
        pylock = cls.work / "pylock.toml"
        cls.sh(
            [*uv(), "export", "--frozen", "--no-dev", "--all-extras", "--all-packages", "--no-emit-workspace",
             "--format", "pylock.toml", "-o", str(pylock)],
            cwd=ROOT,
        )  # fmt: skip
        cls.venv = cls.work / "venv"
        cls.sh([*uv(), "venv", "--python", "3.11", str(cls.venv)], cwd=cls.work)
        cls.bin = cls.venv / "bin"
        python = ["--offline", "--python", str(cls.bin / "python")]
        cls.sh([*uv(), "pip", "install", *python, "-r", str(pylock)], cwd=cls.work)
        cls.sh([*uv(), "pip", "install", *python, "--no-deps", *map(str, cls.wheels)], cwd=cls.work)
        cls.sh([*uv(), "pip", "check", "--python", str(cls.bin / "python")], cwd=cls.work)
        cls.env["PATH"] = f"{cls.bin}{os.pathsep}{cls.env.get('PATH', '')}"

    @classmethod
    def tearDownClass(cls):
        shutil.rmtree(cls.work, ignore_errors=True)

    @classmethod
    def sh(cls, argv: list[str], cwd: Path, timeout: float = INSTALL_SECONDS) -> subprocess.CompletedProcess:
        result = subprocess.run(
            argv, cwd=cwd, env=cls.env, capture_output=True, text=True, stdin=subprocess.DEVNULL, timeout=timeout
        )
        if result.returncode:
            raise AssertionError(f"{' '.join(argv[:4])} ... failed:\n{result.stdout[-3000:]}\n{result.stderr[-3000:]}")
        return result

    def test_three_wheels_are_built(self):
        """The root builds the core wheel and each entry a wheel named by its environment id."""
        names = {path.name.split("-")[0] for path in self.wheels}
        self.assertEqual(names, {"redaction_pressure_core", "redaction_pressure", "secrets_audit"})

    def test_installed_code_is_the_wheel_not_the_checkout(self):
        """The fresh venv imports the package from its own site-packages, not from this repository."""
        out = self.sh([str(self.bin / "python"), "-c", "import redaction_pressure; print(redaction_pressure.__file__)"], self.work)
        self.assertIn(str(self.venv), out.stdout)
        self.assertNotIn(str(ROOT / "redaction_pressure"), out.stdout)

    def test_a_scoring_install_needs_only_the_core_dependencies(self):
        """The redaction-pressure entry and the core require no report, export, scanner or audit tooling outside extras."""
        program = (
            "import json, importlib.metadata as m; print(json.dumps({d: m.requires(d) or [] for d in "
            "('redaction-pressure', 'redaction-pressure-core', 'secrets-audit')}))"
        )
        requires = json.loads(self.sh([str(self.bin / "python"), "-c", program], self.work).stdout)
        plain = [r for name in ("redaction-pressure", "redaction-pressure-core") for r in requires[name] if "extra ==" not in r]
        self.assertTrue(any(r.startswith("verifiers") for r in plain), plain)
        for tool in ("matplotlib", "jinja2", "detect-secrets", "git-filter-repo", "pytest", "datasets", "dulwich"):
            self.assertFalse([r for r in plain if r.startswith(tool)], tool)
        self.assertTrue(any("[audit]" in r for r in requires["secrets-audit"]), requires["secrets-audit"])

    def test_vf_eval_redaction_pressure_runs_from_the_venv(self):
        """`vf-eval redaction-pressure` resolves from the installed wheels and scores the oracle 1.0."""
        task = load_task("dev", 0)
        model = StandInModel({task.prompt.user: policies.reply(policies.oracle_rules(task.hidden))})
        try:
            out = self.work / "eval"
            self.sh(
                [str(self.bin / "vf-eval"), "redaction-pressure", "-n", "1", "-m", "standin",
                 "--client.base-url", model.url, "--client.api-key-var", "STANDIN_KEY",
                 "--env.agent.runtime.type", "subprocess", "--env.taskset.split", "dev",
                 "--no-push", "--no-rich", "-o", str(out)],
                self.work, timeout=HANG_SECONDS * 10,
            )  # fmt: skip
        finally:
            model.close()
        (path,) = out.rglob("traces.jsonl")
        (trace,) = [t for line in path.read_text().splitlines() if line.strip() for t in json.loads(line)["traces"]]
        self.assertEqual(sum(r["score"] * r["weight"] for r in trace["rewards"].values()), 1.0)
        self.assertEqual(trace["info"]["environment"]["name"], "redaction-pressure")

    def test_vf_validate_secrets_audit_runs_from_the_venv(self):
        """`vf-validate secrets-audit` resolves from the installed wheels; gold and noop pass on a dev repository."""
        out = self.work / "validate"
        self.sh(
            [str(self.bin / "vf-validate"), "secrets-audit", "-n", "1", "--taskset.split", "dev",
             "--runtime.type", "subprocess", "--no-rich", "-o", str(out)],
            self.work, timeout=HANG_SECONDS * 10,
        )  # fmt: skip
        (summary,) = out.rglob("summary.json")
        data = json.loads(summary.read_text())
        self.assertEqual((data["total"], data["valid_rate"]), (1, 1.0))
        self.assertEqual((data["checks"]["gold"]["valid"], data["checks"]["noop"]["valid"]), (1, 1))


if __name__ == "__main__":
    unittest.main()
