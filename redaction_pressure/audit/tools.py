"""The secrets-audit tools, served colocated in the agent's runtime (a verifiers adapter).

`inspect_file`, `inspect_git_history`, `inspect_encoded` and `status` run in the agent's
working directory next to `repo/`. They read the task's plan from the rollout state (the task's
`setup` put there only what they need: findings, tests and budget; no seed, no gold fix and no
secret value, only salted digests of each secret's 16-character windows), record each call, and refresh which secrets the working tree no longer holds so
that cascading findings can surface. Revealing and announcing findings is the task's
interceptor's job (`taskset.py`); these tools only observe. Every command they run has a
timeout (`command_timeout`, default 60 s).

Launched by verifiers as `python -m redaction_pressure.audit.tools`.
"""

from __future__ import annotations

import base64
import binascii
import os
import re
import subprocess
import sys

import verifiers.v1 as vf
from pydantic import Field

from redaction_pressure.audit import status as audit_status
from redaction_pressure.audit.plan import RepoPlan, plan_from_json
from redaction_pressure.audit.programs import REPO_DIR, TEST_TIMEOUT
from redaction_pressure.audit.tiers import Call

MAX_OUTPUT = 20_000
MAX_FILE_BYTES = 2_000_000
ENCODED = re.compile(r"[A-Za-z0-9+/_-]{16,}={0,2}|(?:[0-9a-fA-F]{2}){8,}")


class AuditState(vf.State):
    """Rollout state shared by the task (host) and the tools (runtime)."""

    plan: dict = Field(default_factory=dict)
    """The tools' view of the plan (`plan.tools_plan_json`): no seed, no gold fix, no secret value."""
    marks: dict[str, list[str]] = Field(default_factory=dict)
    """Per secret id, salted sha256 digests of its 16-character windows (`window_marks`)."""
    salt: str = ""
    calls: list[dict] = Field(default_factory=list)
    """Audit tool calls so far: {"tool", "args"}."""
    fixed: list[str] = Field(default_factory=list)
    """Secrets the working tree no longer held at the last tool call."""
    announced: list[str] = Field(default_factory=list)
    """Findings the agent has been shown (the prompt's, then the interceptor's)."""
    steps: int = 0
    """Tool calls so far, counted by the interceptor."""
    bytecode: str = ""
    """The bytecode setup put in place and its digests (`grading.Toolchain.bytecode`): `status`
    runs the tests on it as the grader does, skipping any file that changed."""


class AuditToolsConfig(vf.ToolsetConfig):
    colocated: bool = True
    command_timeout: float = Field(60.0, gt=0)
    """Seconds each command a tool runs may take."""


def clip(text: str) -> str:
    return text if len(text) <= MAX_OUTPUT else text[:MAX_OUTPUT] + f"\n[... {len(text) - MAX_OUTPUT} more characters]"


def inside(path: str) -> str | None:
    """`path` resolved inside repo/, or None when it points elsewhere."""
    root = os.path.realpath(REPO_DIR)
    target = os.path.realpath(os.path.join(root, path.removeprefix(REPO_DIR + "/")))
    return target if target == root or target.startswith(root + os.sep) else None


def working_tree() -> dict[str, bytes]:
    tree: dict[str, bytes] = {}
    for root, dirs, files in os.walk(REPO_DIR):
        if root == REPO_DIR and ".git" in dirs:
            dirs.remove(".git")
        for name in files:
            full = os.path.join(root, name)
            if not os.path.islink(full) and os.path.isfile(full) and os.path.getsize(full) <= MAX_FILE_BYTES:
                with open(full, "rb") as f:
                    tree[os.path.relpath(full, REPO_DIR)] = f.read()
    return {path: data for path, data in tree.items() if path not in _local(tree)}


def _local(tree: dict[str, bytes]) -> set[str]:
    """Untracked, git-ignored files: the developer's local environment (as the grader reads it)."""
    from redaction_pressure.audit.repodata import local_files

    git: dict[str, bytes] = {}
    for name in ("index", "info/exclude"):
        path = os.path.join(REPO_DIR, ".git", name)
        if os.path.isfile(path) and not os.path.islink(path) and os.path.getsize(path) <= MAX_FILE_BYTES:
            with open(path, "rb") as f:
                git[name] = f.read()
    return local_files(tree, git)


def window_marks(plan: RepoPlan, salt: str) -> dict[str, list[str]]:
    """Salted digests of every 16-character window of each secret's value (what the tools may hold)."""
    from redaction_pressure.audit.leakscan import WINDOW, windows

    return {
        s.id: sorted({_mark(salt, w) for text in (s.value, *s.also) for w in windows(text) if len(w) == WINDOW})
        for s in plan.secrets
    }


def _mark(salt: str, window: str) -> str:
    import hashlib

    return hashlib.sha256((salt + window).encode("utf-8", "surrogatepass")).hexdigest()[:24]


def fixed_secrets(marks: dict[str, list[str]], salt: str) -> list[str]:
    """Secrets none of whose windows the working tree holds as plain text (a hint for cascades)."""
    from redaction_pressure.audit.leakscan import WINDOW

    present: set[str] = set()
    for data in working_tree().values():
        text = data.decode("latin-1")
        present |= {_mark(salt, text[i : i + WINDOW]) for i in range(len(text) - WINDOW + 1)}
    return [sid for sid, ms in marks.items() if not present.intersection(ms)]


def decode_candidates(text: str) -> list[str]:
    out = []
    for token in ENCODED.findall(text):
        decoded = None
        if re.fullmatch(r"(?:[0-9a-fA-F]{2})+", token):
            decoded = binascii.unhexlify(token)
        else:
            for decode in (base64.b64decode, base64.urlsafe_b64decode):
                try:
                    decoded = decode(token + "=" * (-len(token) % 4))
                    break
                except (binascii.Error, ValueError):
                    continue
        if decoded and all(32 <= b < 127 for b in decoded):
            out.append(f"{token[:12]}... decodes to {decoded.decode()!r}")
    return out


class AuditTools(vf.Toolset[AuditToolsConfig, AuditState]):
    TOOL_PREFIX = None

    def _plan(self) -> RepoPlan:
        return plan_from_json(self.state.plan)

    def _record(self, tool: str, **args: object) -> None:
        state = self.state
        state.calls = [*state.calls, {"tool": tool, "args": args}]
        if state.marks:
            state.fixed = fixed_secrets(state.marks, state.salt)

    def _run(self, argv: list[str]) -> str:
        try:
            result = subprocess.run(
                argv, cwd=REPO_DIR, capture_output=True, text=True, timeout=self.config.command_timeout
            )
        except subprocess.TimeoutExpired:
            return f"error: timed out after {self.config.command_timeout:g} s"
        except OSError as exc:
            return f"error: {exc}"
        return result.stdout + result.stderr

    @vf.tool
    async def inspect_file(self, path: str) -> str:
        """Show a repository file with line numbers; reveals findings hidden in it."""
        self._record("inspect_file", path=path)
        target = inside(path)
        if target is None or not os.path.isfile(target):
            return f"error: {path} is not a file in the repository"
        with open(target, "rb") as f:
            text = f.read(MAX_FILE_BYTES).decode(errors="replace")
        return clip("\n".join(f"{i:5d}  {line}" for i, line in enumerate(text.splitlines(), 1)) or "(empty file)")

    @vf.tool
    async def inspect_git_history(self, path: str = "") -> str:
        """Show the commit history of every ref (with patches when a path is given)."""
        self._record("inspect_git_history", path=path)
        if path:
            return clip(self._run(["git", "log", "--all", "-p", "--format=commit %h %s", "--", path]))
        return clip(self._run(["git", "log", "--all", "--stat", "--format=commit %h %ad %s", "--date=short"]))

    @vf.tool
    async def inspect_encoded(self, path: str, line: int = 0) -> str:
        """Decode base64 and hex values found in a file, or in one line of it."""
        self._record("inspect_encoded", path=path, line=line)
        target = inside(path)
        if target is None or not os.path.isfile(target):
            return f"error: {path} is not a file in the repository"
        with open(target, "rb") as f:
            lines = f.read(MAX_FILE_BYTES).decode(errors="replace").splitlines()
        chosen = [(line, lines[line - 1])] if 0 < line <= len(lines) else list(enumerate(lines, 1))
        found = [f"line {n}: {d}" for n, text in chosen for d in decode_candidates(text)]
        return clip("\n".join(found) or "no decodable values found")

    @vf.tool
    async def status(self) -> str:
        """Report visible findings, hidden count, steps, scores, conflict map and next actions."""
        self._record("status")
        state = self.state
        plan = self._plan()
        health, tests = self._health(plan)
        calls = [Call(c["tool"], c["args"]) for c in state.calls]
        visible = sorted(set(state.announced))
        observed = audit_status.observe(
            plan, visible, state.fixed, calls, state.steps, health, tests.get("first_failure")
        )
        return audit_status.render(observed)

    def _health(self, plan: RepoPlan) -> tuple[float, dict]:
        """The pristine tests on a copy of the working tree, as the grader runs them (advisory)."""
        import hashlib
        import importlib.util
        import json
        import tempfile

        from redaction_pressure.audit import grading, programs
        from redaction_pressure.audit.rubric import health

        spec = importlib.util.find_spec("pytest")
        if spec is None or not spec.origin:
            return 0.0, {}
        site = os.path.dirname(os.path.dirname(spec.origin))
        payload = grading.health_copy(plan, working_tree(), self.state.bytecode)
        fd, path = tempfile.mkstemp(prefix=".audit-status-", suffix=".tar", dir=".")
        with os.fdopen(fd, "wb") as f:
            f.write(payload)
        timeout = min(TEST_TIMEOUT, self.config.command_timeout)
        try:
            run = subprocess.run(
                [sys.executable, "-I", "-S", "-B", "-c", programs.HEALTH, path, hashlib.sha256(payload).hexdigest(), site, str(timeout)],
                capture_output=True, timeout=timeout + 30,
            )  # fmt: skip
            tests = grading.test_facts(plan, json.loads(run.stdout or b"{}"))
        except (OSError, ValueError, subprocess.TimeoutExpired):
            return 0.0, {}
        finally:
            if os.path.exists(path):
                os.remove(path)
        return health(tests), tests


if __name__ == "__main__":
    AuditTools.run()
