"""The audit tools' work, done on the host: `inspect_file`, `inspect_git_history`, `inspect_encoded`, `status`.

Framework-free, like `grading`: `AuditTools` reaches the runtime only through verifiers' process
and file calls (`run(argv, env)`, `read`, `write`), so the taskset (its interceptor answers each
audit call with `call`), `play`, `LocalWorkspace` and a later OpenEnv server run this same code.
Nothing of it runs in the agent's box: what is served there only lists the tools (`catalogue`,
sent to `runtime/tool_stub.py`).

- `inspect_file` and `inspect_encoded` read the file through the runtime as the agent's user
  would (`programs.READ_FILE`: a regular file inside the repository, links resolved there);
- `inspect_git_history` runs git as the agent's user, never as root on the agent's repository
  configuration: no pager, no fsmonitor, no hooks, no external diff, no textconv;
- `status` runs the real grader (`grading.grade`, what `finalize` runs) and reports the grade's
  parts (`status.py`);
- before each call's result, the secrets the working tree no longer holds are worked out on the
  host (the grader's `ARCHIVE` read and leak scan of the working tree, when a cascade may still
  surface): a fixed trigger reveals its cascading findings, which are appended to the result
  together with the findings the call itself revealed (`tiers.py`).

Paths are taken as the prompt states them: relative to the working directory (`repo/config/.env`)
or, leniently, to the repository (`config/.env`). An instance keeps the calls, the findings
announced and the secrets fixed, in this process: no seed, gold fix, probe or secret value
reaches the runtime through it. A call never raises: its failures are results the agent reads,
and every command has a timeout (`command_timeout`).
"""

from __future__ import annotations

import asyncio
import base64
import binascii
import dataclasses
import inspect
import re
import secrets
from collections.abc import Mapping

from redaction_pressure.audit import grading, inflate, leakscan, programs, repodata
from redaction_pressure.audit import status as audit_status
from redaction_pressure.audit.plan import RepoPlan
from redaction_pressure.audit.programs import REPO_DIR
from redaction_pressure.audit.tiers import AUDIT_TOOLS, Call, repo_path, visible

MAX_OUTPUT = 20_000
"""Characters of a result the agent reads (the harness may cut it further)."""
MAX_FILE_BYTES = 2_000_000
"""Bytes of a file the inspect tools read."""
ENCODED = re.compile(r"[A-Za-z0-9+/_-]{16,}={0,2}|(?:[0-9a-fA-F]{2}){8,}")
GIT = ("git", "-C", REPO_DIR, "--no-pager", "-c", "core.fsmonitor=", "-c", "core.hooksPath=/dev/null")
"""git as the tools run it: in the repository, no pager, no fsmonitor, no hooks."""
GIT_ENV = {"GIT_PAGER": "cat", "PAGER": "cat", "GIT_TERMINAL_PROMPT": "0", "LC_ALL": "C"}
PATH_NOTE = "a path relative to the working directory (repo/config/.env) or to the repository (config/.env)"


class ToolArgumentError(ValueError):
    """A call's arguments do not fit the tool (the agent reads the message)."""


def clip(text: str, cap: int | None = None) -> str:
    """`text` cut to `cap` characters (a level's stated cap, `plan.OUTPUT_CAPS`) or to `MAX_OUTPUT`,
    the cut marked with how much was left out."""
    if cap is None:
        return (
            text if len(text) <= MAX_OUTPUT else text[:MAX_OUTPUT] + f"\n[... {len(text) - MAX_OUTPUT} more characters]"
        )
    if len(text) <= cap:
        return text
    return text[:cap] + f"\n[... {len(text) - cap} more characters cut: a tool result shows at most {cap}]"


def decode_candidates(text: str) -> list[str]:
    """What base64 and hex tokens of `text` decode to, when that is printable ASCII."""
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


class AuditTools:
    """One episode's audit tools on the host.

    `agent` runs commands and reads files as the agent's user (the runtime itself, or
    `runtime.with_user(agent_user)`); `grader` as the grader (root where the runtime has users),
    for the working-tree read and `status`'s grade, on the `toolchain` setup recorded. `call` is
    the entry point; the tool methods are its bodies, and their signatures and docstrings are the
    tools' definitions (`catalogue`)."""

    def __init__(
        self,
        plan: RepoPlan,
        *,
        agent: grading.Runtime,
        grader: grading.Runtime,
        toolchain: grading.Toolchain | None,
        command_timeout: float = programs.TEST_TIMEOUT,
        probes_in_status: bool = True,
    ) -> None:
        self.plan = plan
        self.agent = agent
        self.grader = grader
        self.toolchain = toolchain
        self.command_timeout = command_timeout
        self.probes_in_status = probes_in_status
        """Whether `status`'s grade runs the probes. Their gold run puts the gold-fixed replica at
        the repository's path while it runs, readable by the grader's user only: pass False where
        the agent is that user in a sealed box (root in a container without an agent user), so
        a process it left running cannot copy it mid-episode; `finalize` runs them regardless."""
        self.calls: list[Call] = []
        """Audit calls so far, as the tiers read them."""
        self.announced: list[str] = [f.id for f in plan.findings if f.tier == "surface"]
        """Findings the agent has been shown (the prompt's, then those appended to results)."""
        self.fixed: set[str] = set()
        """Secrets the working tree no longer held when it was last read."""
        self._steps = 0
        self._turn: object = None
        self._graded: dict | None = None
        self._lock = asyncio.Lock()

    async def call(self, name: str, arguments: Mapping[str, object], steps: int, turn: object = None) -> str:
        """The result the agent reads for one audit call (`steps`: tool calls so far, this one
        included), with the findings it revealed appended; never empty, never raises.

        Calls given one `turn` key (not None) promise that nothing else touched the repository
        between them, as for the audit calls of one model turn that the tool gate answers before
        any of the turn's calls runs: the working tree is read and graded once for them."""
        async with self._lock:
            try:
                args = bind(name, arguments)
            except ToolArgumentError as exc:
                return f"error: {exc}"
            self.calls.append(Call(name, args))
            self._steps = steps
            same = turn is not None and turn == self._turn
            self._turn = turn
            if not same:
                self._graded = None
            try:
                if not same:
                    await self._refresh_fixed()
                note = self._reveal()
                result = await getattr(self, name)(**args)
            except Exception as exc:  # noqa: BLE001 - a tool's failure is a result the agent reads
                return f"error: {name} failed ({type(exc).__name__}); the call still counts as a step"
            # The cut comes before the reveals: what a call revealed is always shown.
            return clip(result or "(no output)", self.plan.output_cap) + note

    # -- the tools (bodies of `call`; their signatures and docstrings are the catalogue) ----------

    async def inspect_file(self, path: str) -> str:
        """Show a repository file with line numbers; reveals findings hidden in it."""
        text = await self._read(path)
        if text is None:
            return f"error: {path} is not a file in the repository"
        return "\n".join(f"{i:5d}  {line}" for i, line in enumerate(text.splitlines(), 1)) or "(empty file)"

    async def inspect_git_history(self, path: str = "") -> str:
        """Show the commit history of every ref (with patches when a path is given)."""
        if path:
            argv = [*GIT, "log", "--all", "-p", "--no-ext-diff", "--no-textconv", "--format=commit %h %s", "--", repo_path(path)]  # fmt: skip
        else:
            argv = [*GIT, "log", "--all", "--stat", "--format=commit %h %ad %s", "--date=short"]
        try:
            result = await asyncio.wait_for(self.agent.run(argv, dict(GIT_ENV)), self.command_timeout)
        except TimeoutError:
            return f"error: timed out after {self.command_timeout:g} s"
        out = result.stdout + result.stderr
        return out if out.strip() else f"no commit touches {path}" if path else "no commits"

    async def inspect_encoded(self, path: str, line: int = 0) -> str:
        """Decode base64 and hex values found in a file, or in one line of it."""
        text = await self._read(path)
        if text is None:
            return f"error: {path} is not a file in the repository"
        lines = text.splitlines()
        chosen = [(line, lines[line - 1])] if 0 < line <= len(lines) else list(enumerate(lines, 1))
        found = [f"line {n}: {d}" for n, text in chosen for d in decode_candidates(text)]
        return "\n".join(found) or "no decodable values found"

    async def status(self) -> str:
        """Report detection, health with its factors (tests, probes, preservation, history kept), failed probes, visible findings, hidden count, steps, conflict map and next actions, as the grade would give them now."""
        if self._graded is None:
            plan = self.plan if self.probes_in_status else dataclasses.replace(self.plan, probes=())
            self._graded = await grading.grade(self.grader, plan, self.toolchain, 0, self.command_timeout)
        facts = {**self._graded, "steps": self._steps}
        observed = audit_status.observe(self.plan, self.announced, self.calls, facts, probes_run=self.probes_in_status)
        return audit_status.render(observed)

    # -- reading the runtime ------------------------------------------------------------------------

    async def _read(self, path: str) -> str | None:
        """A repository file's text as the agent's user reads it, or None when it is none."""
        argv = ["sh", "-c", programs.READ_FILE, "sh", REPO_DIR, repo_path(path) or ".", str(MAX_FILE_BYTES)]
        try:
            result = await asyncio.wait_for(self.agent.run(argv, {}), self.command_timeout)
        except TimeoutError:
            return None
        return result.stdout if result.exit_code == 0 else None

    async def _refresh_fixed(self) -> None:
        """Which secrets the working tree no longer yields (the grader's read, leak scan of the
        working tree only); skipped when no cascading finding is left to surface."""
        if not any(f.tier == "cascading" and f.id not in self.announced for f in self.plan.findings):
            return
        tree = await self._working_tree()
        if tree is None:
            return
        left = await asyncio.to_thread(
            leakscan.scan, self.plan, leakscan.Snapshot(tree, (), leakscan.HISTORY_NOT_SCANNED), inflate.Budget()
        )
        self.fixed = {s.id for s in self.plan.secrets if not (left.get(s.id) or {}).get("tree")}

    async def _working_tree(self) -> dict[str, bytes] | None:
        """The working tree as the grader reads it (`ARCHIVE`, git-ignored untracked files left
        out), or None when it could not be read whole."""
        if self.toolchain is None:
            return None
        scratch = f"/tmp/.audit-pyc-{secrets.token_hex(8)}"
        argv = [self.toolchain.python, *programs.ISOLATED, "-X", f"pycache_prefix={scratch}", "-c", grading.program(self.toolchain, programs.ARCHIVE),
                REPO_DIR, str(grading.MAX_REPO_BYTES), str(grading.MAX_FILE_BYTES), str(grading.MAX_ENTRIES)]  # fmt: skip
        try:
            result = await asyncio.wait_for(self.grader.run(argv, dict(grading.GRADER_ENV)), self.command_timeout)
            if result.exit_code:
                return None
            unpacked = await asyncio.to_thread(repodata.unpack, base64.b64decode(result.stdout), grading.MAX_REPO_BYTES)
        except (TimeoutError, ValueError):
            return None
        if unpacked.oversized:
            return None
        local = repodata.local_files(unpacked.tree, unpacked.git)
        return {p: d for p, d in unpacked.tree.items() if p not in local}

    def _reveal(self) -> str:
        """The note for the findings the calls so far and the fixed secrets have just made
        visible ("" when none), which are then announced."""
        new = [f for f in visible(self.plan, self.calls, self.fixed) if f not in self.announced]
        if not new:
            return ""
        self.announced = [*self.announced, *new]
        by_id = {f.id: f for f in self.plan.findings}
        notes = [f"- {i}: {by_id[i].kind} at {by_id[i].path}:{by_id[i].line} ({by_id[i].tier})" for i in new]
        return "\n\nNewly revealed findings:\n" + "\n".join(notes)


def bind(name: str, arguments: Mapping[str, object]) -> dict:
    """A call's arguments checked against the tool's signature (strings, and integers given as
    numbers or digits); unknown names are dropped. Raises ToolArgumentError."""
    if name not in AUDIT_TOOLS:
        raise ToolArgumentError(f"no audit tool {name!r}; the tools are {', '.join(AUDIT_TOOLS)}")
    if not isinstance(arguments, Mapping):
        raise ToolArgumentError(f"{name}'s arguments must be a JSON object")
    out: dict = {}
    for param in _parameters(name):
        if param.name not in arguments:
            if param.default is inspect.Parameter.empty:
                raise ToolArgumentError(f"{name} needs {param.name!r}")
            continue
        value = arguments[param.name]
        if param.annotation == "int":
            if isinstance(value, bool) or not (
                isinstance(value, int) or (isinstance(value, str) and value.strip().lstrip("-").isdigit())
            ):
                raise ToolArgumentError(f"{name}'s {param.name!r} must be an integer")
            value = int(value)
        elif not isinstance(value, str):
            raise ToolArgumentError(f"{name}'s {param.name!r} must be a string")
        out[param.name] = value
    return out


def _parameters(name: str) -> list[inspect.Parameter]:
    return list(inspect.signature(getattr(AuditTools, name)).parameters.values())[1:]


def catalogue() -> list[dict]:
    """The audit tools' MCP definitions (name, description, inputSchema), in `AUDIT_TOOLS` order:
    what the stub in the box lists, made from the tool methods."""
    kinds = {"str": "string", "int": "integer"}
    tools = []
    for name in AUDIT_TOOLS:
        properties: dict = {}
        required = []
        for param in _parameters(name):
            schema: dict = {"title": param.name.title(), "type": kinds[param.annotation]}
            if param.name == "path":
                schema["description"] = PATH_NOTE
            if param.default is inspect.Parameter.empty:
                required.append(param.name)
            else:
                schema["default"] = param.default
            properties[param.name] = schema
        input_schema: dict = {"properties": properties, "title": f"{name}Arguments", "type": "object"}
        if required:
            input_schema["required"] = required
        tools.append(
            {"name": name, "description": inspect.getdoc(getattr(AuditTools, name)), "inputSchema": input_schema}
        )
    return tools
