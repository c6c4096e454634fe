"""The environments' wheels install alone and run: what a user of the environments folder does.

Each entry (`environments/redaction_pressure`, `environments/secrets_audit`) builds a wheel that
carries the repository's `redaction_pressure` package (copied in at build time by the entry's
hatch hook; git holds one copy). Each wheel goes into its own new virtual environment with
nothing of this repository on the path: its registry dependencies at the lock's versions
(offline, from uv's package cache: tests send no traffic beyond 127.0.0.1), then the wheel
itself, then `uv pip check`. Each venv runs its id with `vf-eval -n 2` against a stand-in model
on 127.0.0.1 playing the oracle, which must score 1.0 on both tasks. A third venv holds both
wheels: no file is shared, both ids resolve, and removing one leaves the other working.
"""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import tempfile
import tomllib
import unittest
import zipfile
from pathlib import Path

from redaction_pressure.audit import programs, splits
from redaction_pressure.audit.prompt import prompt
from redaction_pressure.redact import policies
from redaction_pressure.redact.api import load_task
from tests.support.cases import HANG_SECONDS, PRIVATE_ENV
from tests.support.standin import StandInModel, ToolCallingModel

ROOT = Path(__file__).resolve().parents[2]
PACKAGE = ROOT / "redaction_pressure"
INSTALL_SECONDS = 900
"""A hang guard for building and installing (uv installs from its cache; no test asserts speed)."""
TASKS = 2
VENDORED = "secrets_audit/_vendor/redaction_pressure/"


def uv() -> list[str]:
    found = shutil.which("uv")
    return [found] if found else ["python3", "-m", "uv"]


def pyproject(path: Path) -> dict:
    return tomllib.loads(path.read_text())["project"]


def repository_files() -> dict[str, bytes]:
    """The package's files as a wheel must carry them: every file but bytecode caches."""
    return {
        path.relative_to(PACKAGE).as_posix(): path.read_bytes()
        for path in PACKAGE.rglob("*")
        if path.is_file() and "__pycache__" not in path.parts and path.suffix != ".pyc"
    }


def traces(out: Path) -> list[dict]:
    (path,) = out.rglob("traces.jsonl")
    return [t for line in path.read_text().splitlines() if line.strip() for t in json.loads(line)["traces"]]


def total(trace: dict) -> float:
    return sum(r["score"] * r["weight"] for r in trace["rewards"].values())


class TestMetadata(unittest.TestCase):
    """The three pyprojects describe one code base: same version, the entries' dependencies the root's."""

    def setUp(self):
        self.root = pyproject(ROOT / "pyproject.toml")
        self.rp = pyproject(ROOT / "environments/redaction_pressure/pyproject.toml")
        self.sa = pyproject(ROOT / "environments/secrets_audit/pyproject.toml")

    def test_one_version(self):
        self.assertEqual({self.root["version"], self.rp["version"], self.sa["version"]}, {self.root["version"]})

    def test_the_redaction_pressure_wheel_has_the_roots_dependencies_and_extras(self):
        """A scoring install needs only the core dependencies: report, export, scanners and audit are extras."""
        self.assertEqual(self.rp["dependencies"], self.root["dependencies"])
        self.assertEqual(self.rp["optional-dependencies"], self.root["optional-dependencies"])
        for tool in ("matplotlib", "jinja2", "detect-secrets", "git-filter-repo", "pytest", "datasets", "dulwich"):
            self.assertFalse([r for r in self.rp["dependencies"] if r.startswith(tool)], tool)

    def test_the_secrets_audit_wheel_has_the_core_and_the_audit_extra(self):
        extras = self.root["optional-dependencies"]
        self.assertEqual(self.sa["dependencies"], self.root["dependencies"] + extras["audit"])
        self.assertEqual(self.sa["optional-dependencies"], {"report": extras["report"]})


WORK = Path()
ENV: dict[str, str] = {}
WHEELS: dict[str, Path] = {}


def setUpModule():
    """Build both entries' wheels once for the module's classes."""
    global WORK
    WORK = Path(tempfile.mkdtemp(prefix="rp-wheels-"))
    # No bytecode compiled at install (tests/run.py asks uv for it): compiling the fresh venvs
    # costs more CPU than their short runs save.
    ENV.update(
        {
            k: v
            for k, v in os.environ.items()
            if k not in (PRIVATE_ENV, "VIRTUAL_ENV", "UV_COMPILE_BYTECODE", "PYTHONPATH")
        }
    )
    ENV.update(
        HOME=str(WORK / "home"),
        UV_CACHE_DIR=os.environ.get("UV_CACHE_DIR", str(Path.home() / ".cache" / "uv")),
        UV_PYTHON_DOWNLOADS="never",
        STANDIN_KEY="not-a-real-key",
    )
    dist = WORK / "dist"
    for entry in ("redaction-pressure", "secrets-audit"):
        Installs.sh([*uv(), "build", "--wheel", "--package", entry, "--out-dir", str(dist)], cwd=ROOT)
    WHEELS.update({path.name.split("-")[0]: path for path in dist.glob("*.whl")})


def tearDownModule():
    shutil.rmtree(WORK, ignore_errors=True)


class Installs(unittest.TestCase):
    """Installs the built wheels into new venvs under WORK."""

    @classmethod
    def sh(
        cls, argv: list[str], cwd: Path, timeout: float = INSTALL_SECONDS, env: dict | None = None
    ) -> subprocess.CompletedProcess:
        result = subprocess.run(
            argv, cwd=cwd, env=env or ENV, capture_output=True, text=True, stdin=subprocess.DEVNULL, timeout=timeout
        )
        if result.returncode:
            raise AssertionError(f"{' '.join(argv[:4])} ... failed:\n{result.stdout[-3000:]}\n{result.stderr[-3000:]}")
        return result

    @classmethod
    def venv(cls, name: str, *entries: str) -> tuple[Path, dict[str, str]]:
        """A new venv holding `entries`' wheels and their registry dependencies; its bin and environment."""
        pylock = WORK / f"pylock.{name}.toml"
        packages = [arg for entry in entries for arg in ("--package", entry)]
        cls.sh(
            [
                *uv(),
                "export",
                "--frozen",
                "--no-dev",
                *packages,
                "--no-emit-workspace",
                "--format",
                "pylock.toml",
                "-o",
                str(pylock),
            ],
            cwd=ROOT,
        )
        venv = WORK / name
        cls.sh([*uv(), "venv", "--python", "3.11", str(venv)], cwd=WORK)
        python = ["--offline", "--python", str(venv / "bin" / "python")]
        cls.sh([*uv(), "pip", "install", *python, "-r", str(pylock)], cwd=WORK)
        wheels = [str(WHEELS[entry.replace("-", "_")]) for entry in entries]
        cls.sh([*uv(), "pip", "install", *python, "--no-deps", *wheels], cwd=WORK)
        cls.sh([*uv(), "pip", "check", "--python", str(venv / "bin" / "python")], cwd=WORK)
        env = {**ENV, "PATH": f"{venv / 'bin'}{os.pathsep}{ENV.get('PATH', '')}"}
        return venv / "bin", env

    @classmethod
    def vf_eval(cls, bin: Path, env: dict, env_id: str, url: str, out: Path) -> list[dict]:
        cls.sh(
            [str(bin / "vf-eval"), env_id, "-n", str(TASKS), "-c", str(TASKS), "-m", "standin",
             "--client.base-url", url, "--client.api-key-var", "STANDIN_KEY",
             "--env.agent.runtime.type", "subprocess", "--env.taskset.split", "dev",
             "--no-push", "--no-rich", "-o", str(out)],
            WORK, timeout=HANG_SECONDS * 10, env=env,
        )  # fmt: skip
        return traces(out)

    def imported_from(self, bin: Path, env: dict) -> str:
        program = "import redaction_pressure; print(redaction_pressure.__file__)"
        return self.sh([str(bin / "python"), "-c", program], WORK, env=env).stdout.strip()


class TestWheelContents(Installs):
    def test_each_wheel_carries_the_repositorys_package_byte_for_byte(self):
        """The wheels hold exactly the repository's files (no bytecode), at the top level or vendored."""
        expected = repository_files()
        for name, prefix in (("redaction_pressure", "redaction_pressure/"), ("secrets_audit", VENDORED)):
            with zipfile.ZipFile(WHEELS[name]) as wheel:
                carried = {
                    n[len(prefix) :]: wheel.read(n)
                    for n in wheel.namelist()
                    if n.startswith(prefix) and not n.endswith("/")
                }
            self.assertEqual(sorted(carried), sorted(expected), name)
            self.assertEqual([k for k in expected if carried[k] != expected[k]], [], name)

    def test_the_secrets_audit_wheel_names_its_copy_on_the_path_and_shares_no_file(self):
        with zipfile.ZipFile(WHEELS["secrets_audit"]) as wheel:
            sa = set(wheel.namelist())
            self.assertEqual(wheel.read("secrets_audit__vendor.pth").decode().split(), ["secrets_audit/_vendor"])
        with zipfile.ZipFile(WHEELS["redaction_pressure"]) as wheel:
            rp = set(wheel.namelist())
        self.assertEqual({n for n in sa & rp if ".dist-info/" not in n}, set())


class TestRedactionPressureAlone(Installs):
    @classmethod
    def setUpClass(cls):
        super().setUpClass()
        cls.bin, cls.venv_env = cls.venv("rp", "redaction-pressure")

    def test_the_code_is_the_wheels_not_the_checkout(self):
        where = self.imported_from(self.bin, self.venv_env)
        self.assertIn(str(WORK / "rp"), where)
        self.assertNotIn(str(ROOT), where)

    def test_a_scoring_install_has_no_report_export_or_audit_libraries(self):
        """matplotlib (report), datasets (export), dulwich and git-filter-repo (audit) come only with extras (jinja2 comes with verifiers)."""
        program = "import importlib.util as u; print([m for m in ('matplotlib', 'datasets', 'dulwich', 'git_filter_repo') if u.find_spec(m)])"
        self.assertEqual(
            self.sh([str(self.bin / "python"), "-c", program], WORK, env=self.venv_env).stdout.strip(), "[]"
        )

    def test_vf_eval_redaction_pressure_scores_the_oracle_one(self):
        """`vf-eval redaction-pressure -n 2` from the wheel alone: the oracle scores 1.0 on both tasks."""
        tasks = [load_task("dev", i) for i in range(TASKS)]
        model = StandInModel({t.prompt.user: policies.reply(policies.oracle_rules(t.hidden)) for t in tasks})
        try:
            found = self.vf_eval(self.bin, self.venv_env, "redaction-pressure", model.url, WORK / "rp-eval")
        finally:
            model.close()
        self.assertEqual([total(t) for t in found], [1.0] * TASKS)
        self.assertEqual({t["info"]["environment"]["name"] for t in found}, {"redaction-pressure"})

    def test_the_cli_names_the_missing_report_extra(self):
        result = subprocess.run(
            [str(self.bin / "redaction-pressure"), "report", str(WORK), "-o", str(WORK / "r.html")],
            env=self.venv_env, capture_output=True, text=True, stdin=subprocess.DEVNULL, timeout=HANG_SECONDS,
        )  # fmt: skip
        self.assertNotEqual(result.returncode, 0)
        self.assertIn("'report' extra", result.stderr)
        self.assertEqual(len(result.stderr.strip().splitlines()), 1, result.stderr)


def oracle_agent() -> ToolCallingModel:
    """Plays the oracle's bash fix, one call, on dev tasks 0 .. TASKS-1."""
    plans = [splits.plan_for("dev", i) for i in range(TASKS)]
    return ToolCallingModel(
        {
            prompt(plan).user: [[{"name": "bash", "arguments": {"command": programs.oracle_script(plan)}}]]
            for plan in plans
        }
    )


class TestSecretsAuditAlone(Installs):
    @classmethod
    def setUpClass(cls):
        super().setUpClass()
        cls.bin, cls.venv_env = cls.venv("sa", "secrets-audit")

    def test_the_code_is_the_wheels_vendored_copy(self):
        where = self.imported_from(self.bin, self.venv_env)
        self.assertIn(str(WORK / "sa"), where)
        self.assertIn("/secrets_audit/_vendor/redaction_pressure/", where)

    def test_vf_eval_secrets_audit_scores_the_oracle_one(self):
        """`vf-eval secrets-audit -n 2` from the wheel alone: the oracle's fix scores 1.0 on both repositories."""
        model = oracle_agent()
        try:
            found = self.vf_eval(self.bin, self.venv_env, "secrets-audit", model.url, WORK / "sa-eval")
        finally:
            model.close()
        self.assertEqual([total(t) for t in found], [1.0] * TASKS, [t.get("error") for t in found])


class TestBothTogether(Installs):
    @classmethod
    def setUpClass(cls):
        super().setUpClass()
        cls.bin, cls.venv_env = cls.venv("both", "redaction-pressure", "secrets-audit")

    def resolve(self, env_id: str) -> str:
        program = f"from verifiers.v1.utils.loaders import import_taskset; print(import_taskset({env_id!r}).__name__)"
        return self.sh([str(self.bin / "python"), "-c", program], WORK, env=self.venv_env).stdout.strip()

    def test_both_ids_resolve_and_removing_one_leaves_the_other_working(self):
        """Together, both ids resolve on the top-level package; without redaction-pressure, secrets-audit uses its copy."""
        self.assertEqual(
            (self.resolve("redaction-pressure"), self.resolve("secrets-audit")), ("redaction_pressure", "secrets_audit")
        )
        self.assertNotIn("_vendor", self.imported_from(self.bin, self.venv_env))
        self.sh([*uv(), "pip", "uninstall", "--python", str(self.bin / "python"), "redaction-pressure"], WORK)
        self.assertIn("_vendor", self.imported_from(self.bin, self.venv_env))
        self.assertEqual(self.resolve("secrets-audit"), "secrets_audit")


if __name__ == "__main__":
    unittest.main()


class TestOpenEnvWheel(Installs):
    """servers/openenv's wheel in a venv of its own (openenv cannot share one with verifiers): its `server` script
    serves, and the typed clients a trainer imports from the wheel play an episode of each environment."""

    @classmethod
    def setUpClass(cls):
        super().setUpClass()
        project = ROOT / "servers" / "openenv"
        dist = WORK / "dist-openenv"
        cls.sh([*uv(), "build", "--wheel", "--project", str(project), "--out-dir", str(dist)], cwd=ROOT)
        (wheel,) = dist.glob("*.whl")
        pylock = WORK / "pylock.openenv.toml"
        cls.sh([*uv(), "export", "--project", str(project), "--frozen", "--no-dev", "--no-emit-project",
                "--format", "pylock.toml", "-o", str(pylock)], cwd=ROOT)  # fmt: skip
        venv = WORK / "openenv"
        cls.sh([*uv(), "venv", "--python", "3.11", str(venv)], cwd=WORK)
        python = ["--offline", "--python", str(venv / "bin" / "python")]
        cls.sh([*uv(), "pip", "install", *python, "-r", str(pylock)], cwd=WORK)
        cls.sh([*uv(), "pip", "install", *python, "--no-deps", str(wheel)], cwd=WORK)
        cls.sh([*uv(), "pip", "check", "--python", str(venv / "bin" / "python")], cwd=WORK)
        cls.bin = venv / "bin"
        cls.venv_env = {**ENV, "PATH": f"{cls.bin}{os.pathsep}{ENV.get('PATH', '')}"}

    def test_no_verifiers_and_the_code_is_the_wheels(self):
        program = "import importlib.util as u, redaction_pressure; print(redaction_pressure.__file__, bool(u.find_spec('verifiers')))"
        where, has_verifiers = self.sh(
            [str(self.bin / "python"), "-c", program], WORK, env=self.venv_env
        ).stdout.split()
        self.assertIn(str(WORK / "openenv"), where)
        self.assertEqual(has_verifiers, "False")

    def test_the_server_script_serves_the_wheels_clients(self):
        """`server --taskset redaction-pressure` from the wheel, and its client scoring the oracle's reply 1.0."""
        task = load_task("dev", 2)
        reply = policies.reply(policies.oracle_rules(task.hidden))
        server = subprocess.Popen([str(self.bin / "server"), "--taskset", "redaction-pressure", "--port", "0"],
                                  cwd=WORK, env=self.venv_env, stdout=subprocess.PIPE, stderr=subprocess.DEVNULL,
                                  stdin=subprocess.DEVNULL, text=True)  # fmt: skip
        try:
            line = server.stdout.readline()
            self.assertTrue(line.startswith("ready http://127.0.0.1:"), line)
            client = (
                "import sys\n"
                "from redaction_pressure.redact.openenv_env import RedactionAction, RedactionPressureEnv\n"
                "from redaction_pressure.audit.openenv_env import AuditAction, SecretsAuditEnv\n"
                "with RedactionPressureEnv(base_url=sys.argv[1]).sync() as env:\n"
                "    env.reset(split='dev', index=2)\n"
                "    print(env.step(RedactionAction(reply=sys.stdin.read())).reward)\n"
            )
            done = subprocess.run([str(self.bin / "python"), "-c", client, line.split()[1]], input=reply, cwd=WORK,
                                  env=self.venv_env, capture_output=True, text=True, timeout=600)  # fmt: skip
            self.assertEqual(done.returncode, 0, done.stderr[-3000:])
            self.assertEqual(done.stdout.strip(), "1.0")
        finally:
            server.terminate()
            server.wait(60)
