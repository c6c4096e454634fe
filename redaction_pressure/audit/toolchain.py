"""The grader's toolchain: what the grading programs run on, found and sealed before the agent acts.

`probe(runtime)` (run by `setup`) finds the interpreter with pytest, git and git-filter-repo
(`PROBE`), lists the files the grading programs load (`CLOSURE`, kept per runtime kind and
interpreter), records the sha256 of each and of the listings of their folders (`LISTING`), and
fills the health run's bytecode folder (`PRECOMPILE`, or `UNPACK_BYTECODE` with bytecode kept from
an earlier episode on the very same toolchain): a `Toolchain`, or the missing pieces.
`changed(runtime, toolchain)` (run by `grade` after the agent) reads it all back and names what
differs. Talks to any object with verifiers' runtime calls (`Runtime`).
"""

from __future__ import annotations

import asyncio
import base64
import hashlib
import io
import json
import tarfile
import weakref
from dataclasses import dataclass, field
from typing import Protocol

from redaction_pressure.audit import programs

MAX_TOOL_BYTES = 256 * 1024 * 1024
PRELOAD = "/etc/ld.so.preload"
GRADER_ENV = {"LC_ALL": "C", "PYTHONHASHSEED": "0"}
"""The environment the grader adds to its programs (`-I` makes the interpreter ignore PYTHON*)."""
BYTECODE_DIR = ".audit-bytecode"
"""Where setup compiles the health run's bytecode (in the runtime's working folder, removed with it)."""
BYTECODE_ARCHIVE = ".audit-bytecode.tar"
"""Where setup writes kept bytecode for UNPACK_BYTECODE (which removes it)."""


class Runtime(Protocol):
    async def run(self, argv: list[str], env: dict[str, str]): ...
    async def read(self, path: str, max_bytes: int | None = None) -> bytes: ...
    async def write(self, path: str, data: bytes) -> None: ...


@dataclass(frozen=True)
class Toolchain:
    """What `setup` recorded in host memory before the agent acted."""

    python: str
    site: str
    digests: tuple[tuple[str, str], ...]
    """(path, sha256 or "absent")."""
    git: str = ""
    filter_repo: bool = False
    bytecode: str = ""
    """JSON {"prefix", "files": {path: sha256}} of the bytecode setup compiled (see PRECOMPILE)."""
    node: str = ""
    """node, when the runtime has it (the `js` probes run under it); its digest is sealed too."""
    shell_env: tuple[tuple[str, str], ...] = ()
    """The environment a process the runtime starts gets (read before the agent acts): the probes
    run the agent's code in it, as the agent's own shell would."""


@dataclass
class Probe:
    toolchain: Toolchain | None
    missing: list[str] = field(default_factory=list)


def parse_probe(stdout: str) -> tuple[dict | None, str, bool, str]:
    """(the interpreter's facts, git's path, whether git filter-repo runs, node's path) from PROBE."""
    info = None
    git = node = ""
    filter_repo = False
    for line in stdout.splitlines():
        if line.startswith("{") and info is None:
            try:
                info = json.loads(line)
            except ValueError:
                pass
        elif line.startswith("git: "):
            git = line[5:].strip()
        elif line.startswith("node: "):
            node = line[6:].strip()
        elif line.strip() == "git-filter-repo: ok":
            filter_repo = True
    return info, git, filter_repo, node


async def _digest(runtime: Runtime, path: str) -> str:
    try:
        data = await runtime.read(path, max_bytes=MAX_TOOL_BYTES)
    except Exception:  # noqa: BLE001 - a file that cannot be read is recorded as absent
        return "absent"
    return hashlib.sha256(data).hexdigest()


async def _digests(runtime: Runtime, paths: list[str]) -> tuple[tuple[str, str], ...]:
    many = getattr(runtime, "read_many", None)
    if many is not None and all(p.startswith("/") for p in paths):
        # One command for all (a container runtime pays a process per read otherwise).
        got = await many(paths, MAX_TOOL_BYTES)
        return tuple((p, hashlib.sha256(got[p]).hexdigest() if p in got else "absent") for p in paths)
    gate = asyncio.Semaphore(16)

    async def one(path: str) -> tuple[str, str]:
        async with gate:
            return path, await _digest(runtime, path)

    return tuple(await asyncio.gather(*(one(p) for p in paths)))


_CLOSURES: dict[str, dict] = {}
"""Which files and folders a toolchain's grading programs load (CLOSURE's answer), kept in this
process per runtime kind, interpreter and site folder: the list, never the digests, which every
episode reads anew."""


def runtime_kind(runtime: Runtime) -> str:
    """What kind of box: one list of toolchain files serves every runtime of a kind and interpreter."""
    return f"{type(runtime).__module__}.{type(runtime).__qualname__}:{getattr(runtime, 'image', '')}"


ENVIRONMENT = "import os, sys; sys.stdout.write(chr(0).join(k + '=' + v for k, v in os.environ.items()))"
"""Prints the environment a process the runtime starts gets (NUL-separated)."""

LISTING_PREFIX = "listing:"
"""Marks a digest of a folder's listing (names only) among a toolchain's digests."""


async def _listings(runtime: Runtime, python: str, folders: list[str]) -> dict[str, str]:
    """Digests of the folders' listings, by the (digest-checked) interpreter; {} when it fails."""
    if not folders:
        return {}
    # No bytecode beside the sources is read (a prefix that holds none): finalize runs this after the agent.
    result = await runtime.run(
        [python, *programs.ISOLATED, "-X", "pycache_prefix=/proc/audit-no-bytecode", "-c", programs.LISTING, *folders],
        dict(GRADER_ENV),
    )
    lines = result.stdout.split("\n") if result.exit_code == 0 else []
    return dict(zip(folders, lines)) if len(lines) == len(folders) else {}


async def probe(runtime: Runtime) -> Probe:
    """Find the toolchain and record its digests (at setup, before the agent acts)."""
    result = await runtime.run(["sh", "-c", programs.PROBE], {})
    info, git, filter_repo, node = parse_probe(result.stdout)
    missing = []
    if info is None:
        missing.append("python with pytest")
    if not git:
        missing.append("git")
    if not filter_repo:
        missing.append("git-filter-repo")
    if missing:
        return Probe(None, missing)
    key = json.dumps([runtime_kind(runtime), info["python"], info["site"]])
    loaded = _CLOSURES.get(key)
    if loaded is None:
        closure = await runtime.run(
            [info["python"], *programs.ISOLATED, "-c", programs.CLOSURE, info["site"]], dict(GRADER_ENV)
        )
        try:
            loaded = json.loads(closure.stdout) if closure.exit_code == 0 else {}
        except ValueError:
            loaded = {}
        if loaded.get("files"):
            if len(_CLOSURES) >= KEPT_TOOLCHAINS:
                _CLOSURES.clear()
            _CLOSURES[key] = loaded
    if not loaded.get("files"):
        return Probe(None, ["a Python whose standard library and pytest import in isolated mode"])
    paths = list(dict.fromkeys([*info["files"], *loaded["files"], git, *([node] if node else []), PRELOAD]))
    digests = await _digests(runtime, paths)
    listings = await _listings(runtime, info["python"], loaded["dirs"])
    digests += tuple((f"{LISTING_PREFIX}{folder}", digest) for folder, digest in sorted(listings.items()))
    bytecode = await _bytecode(runtime, info, digests)
    shell = await runtime.run([info["python"], "-I", "-S", "-c", ENVIRONMENT], {})
    pairs = [item.partition("=") for item in shell.stdout.split("\0") if "=" in item] if shell.exit_code == 0 else []
    shell_env = tuple(sorted((k, v) for k, _, v in pairs if k))
    return Probe(Toolchain(info["python"], info["site"], digests, git, filter_repo, bytecode, node, shell_env))


_KEPT: dict[str, tuple[dict[str, str], bytes]] = {}
"""Bytecode a PRECOMPILE run made before its episode's agent acted, kept in this process's
memory per toolchain (interpreter, its site folder and the digest of every sealed file):
{path: sha256} and a tar of the files. Another episode on the very same toolchain gets these
bytes written into its bytecode folder instead of compiling them again (~1 CPU-s)."""
KEPT_TOOLCHAINS = 8
_TRIED: set[str] = set()
"""Toolchains whose first compile has run in this process (kept or not)."""
_FIRST: weakref.WeakKeyDictionary = weakref.WeakKeyDictionary()
"""Per event loop, per toolchain: the lock that episodes starting together wait on while the
first of them compiles, so that a run's first wave compiles once, not once per episode."""


async def _bytecode(runtime: Runtime, info: dict, digests: tuple[tuple[str, str], ...]) -> str:
    """JSON {"prefix", "files": {path: sha256}} of the bytecode folder setup filled ("" if none)."""
    key = hashlib.sha256(json.dumps([info["python"], info["site"], digests]).encode()).hexdigest()
    locks = _FIRST.setdefault(asyncio.get_running_loop(), {})
    async with locks.setdefault(key, asyncio.Lock()):
        kept = _KEPT.get(key)
        if kept is None and key not in _TRIED:
            _TRIED.add(key)
            return await _compile(runtime, info, key)
    if kept is not None:
        files, archive = kept
        try:
            await runtime.write(BYTECODE_ARCHIVE, archive)
            unpacked = await runtime.run(
                [info["python"], *programs.ISOLATED, "-c", programs.UNPACK_BYTECODE, BYTECODE_ARCHIVE, BYTECODE_DIR],
                dict(GRADER_ENV),
            )
        except Exception:  # noqa: BLE001 - compile instead
            unpacked = None
        lines = unpacked.stdout.strip().splitlines() if unpacked is not None and unpacked.exit_code == 0 else []
        if lines:
            return json.dumps({"prefix": lines[-1], "files": files})
    return await _compile(runtime, info, key)


async def _compile(runtime: Runtime, info: dict, key: str) -> str:
    """Run PRECOMPILE; keep its files (when its archive holds exactly the files it names)."""
    compiled = await runtime.run(
        [info["python"], "-I", "-S", "-c", programs.PRECOMPILE, info["site"], BYTECODE_DIR], dict(GRADER_ENV)
    )
    lines = compiled.stdout.strip().splitlines() if compiled.exit_code == 0 else []
    if len(lines) < 2 or not lines[-2].startswith("{"):
        return ""
    try:
        files = json.loads(lines[-2])["files"]
    except (ValueError, KeyError, TypeError):
        return ""
    try:
        archive = base64.b64decode(lines[-1], validate=True)
        with tarfile.open(fileobj=io.BytesIO(archive)) as tar:
            inside = {
                m.name: hashlib.sha256(tar.extractfile(m).read()).hexdigest() for m in tar.getmembers() if m.isfile()
            }
    except (ValueError, tarfile.TarError):
        return lines[-2]  # the digests stand; nothing is kept
    if inside == files:  # the archive holds exactly the files the digests name
        if len(_KEPT) >= KEPT_TOOLCHAINS:
            _KEPT.clear()
            _TRIED.clear()
        _KEPT[key] = (files, archive)
    return lines[-2]


async def changed(runtime: Runtime, toolchain: Toolchain) -> list[str]:
    """The recorded files whose digests differ now, else the folders whose listings do ([] if none)."""
    files = [p for p, _ in toolchain.digests if not p.startswith(LISTING_PREFIX)]
    now = dict(await _digests(runtime, files))
    differ = [p for p in files if now.get(p) != dict(toolchain.digests)[p]]
    if not differ:  # the interpreter checks out: let it list the toolchain's folders
        folders = [p[len(LISTING_PREFIX) :] for p, _ in toolchain.digests if p.startswith(LISTING_PREFIX)]
        listed = await _listings(runtime, toolchain.python, folders)
        differ = [
            f"{LISTING_PREFIX}{f}" for f in folders if listed.get(f) != dict(toolchain.digests)[f"{LISTING_PREFIX}{f}"]
        ]
    return differ
