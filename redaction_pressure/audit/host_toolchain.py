"""The agent's toolchain on the evaluator's host: a Python of its own with pytest and git-filter-repo.

On the subprocess runtime (and in `LocalWorkspace` and `play`) the agent runs on the evaluator's
host. Its `python` must not be the evaluator's: that interpreter imports this package, whose
`splits.plan_for` rebuilds every public task and whose `programs.oracle_script` is the gold fix.

`ensure()` builds, without any network, a virtual environment of the evaluator's base interpreter
whose site-packages holds copies of just the distributions `ROOTS` names and their dependencies
(pytest, pluggy, iniconfig, packaging, pygments; git-filter-repo), taken file by file from the
evaluator's environment (each distribution's RECORD, bytecode left out), with their console
scripts (`pytest`, `py.test`, `git-filter-repo`, ...) and `python`, `python3`, `pythonX.Y` linked
to the base interpreter: the standard library and those packages, nothing else. It lives in
`$XDG_CACHE_HOME/redaction-pressure/toolchains/<digest>` (default `~/.cache`), named by a digest
of everything it holds, so one build serves every episode and process of a user; it is built in
a scratch folder beside it and renamed into place, so concurrent episodes never see half a
toolchain. Each `ensure()` checks it file by file against what this process would build (an
earlier episode's agent, the same user, may have written into it): a changed, added or removed
file gets it moved aside and built again. Bytecode (`__pycache__`) is not checked: the agent's
pytest writes it there, and the grader's programs never read it (`programs.ISOLATED`).

`agent_env(env)` is what a runtime's environment becomes on top of `env`: the toolchain's bin
folder first on PATH and the evaluator's own scripts folder off it, `VIRTUAL_ENV` naming the
toolchain, `PYTHONPATH` and the other interpreter variables emptied, and every other variable
whose value names the evaluator's environment (its prefix, its site-packages, this package's
folder) emptied. The runtimes merge these values over the host's environment, so a variable is
emptied rather than removed. The grader's programs find this toolchain like any runtime's (the
first `python` with pytest on PATH, `programs.PROBE`) and `toolchain.py` seals it as it seals any.

NOTE: this keeps the grader's code off the agent's interpreter, not out of the agent's reach: on
the subprocess runtime the agent is the evaluator's user on the evaluator's host (see
docs/secrets-audit.md, "What the subprocess runtime leaves in reach").
"""

from __future__ import annotations

import functools
import hashlib
import importlib.metadata
import json
import os
import secrets
import shutil
import site
import sys
import threading
from collections.abc import Mapping
from dataclasses import dataclass
from pathlib import Path

ROOTS = ("pytest", "git-filter-repo")
"""The distributions the agent's toolchain holds, with their dependencies (for this interpreter)."""
LAYOUT_VERSION = 1
"""Bump when the layout `ensure` builds changes (it is part of the folder's digest)."""
CLEARED = ("PYTHONPATH", "PYTHONHOME", "PYTHONSTARTUP", "PYTHONUSERBASE", "PYTHONEXECUTABLE", "PYTHONPLATLIBDIR")
"""Interpreter variables emptied in the agent's environment whatever they name."""
FLAG_VARIABLES = ("PYTHONDONTWRITEBYTECODE", "PYTHONOPTIMIZE", "PYTHONSAFEPATH", "PYTHONNOUSERSITE", "PYTHONINSPECT",
                  "PYTHONVERBOSE", "PYTHONDEBUG", "PYTHONDEVMODE", "PYTHONUTF8", "PYTHONINTMAXSTRDIGITS",
                  "PYTHONWARNDEFAULTENCODING")  # fmt: skip
"""Variables that set one of `sys.flags`: emptied in the agent's environment, whatever the host's
shell exported, so the agent's interpreter shows no flag, as a deployment's would; the probes run
with the same empty values (`probes.spec`)."""
KEPT = ("HOME", "USER", "LOGNAME", "SHELL", "TMPDIR", "LANG")
"""Variables never emptied, even if they name the evaluator's environment (the agent needs them)."""
ATTEMPTS = 3


class ToolchainError(RuntimeError):
    """The agent's toolchain could not be built; the message says what is missing."""


@dataclass(frozen=True)
class Layout:
    """What the toolchain folder holds, by path relative to it."""

    key: str
    files: dict[str, tuple[str, str]]
    """Copied files: path -> (source path, sha256)."""
    written: dict[str, bytes]
    """Generated files (pyvenv.cfg, console scripts): path -> bytes."""
    links: dict[str, str]
    """Symbolic links (the interpreter): path -> target."""
    missing: tuple[str, ...]
    """Distributions of the closure this environment does not have (the probe will name what lacks)."""


def cache_root() -> Path:
    base = os.environ.get("XDG_CACHE_HOME") or os.path.join(os.path.expanduser("~"), ".cache")
    return Path(base) / "redaction-pressure" / "toolchains"


def _canonical(name: str) -> str:
    return name.lower().replace("_", "-").replace(".", "-")


def _closure() -> tuple[list[importlib.metadata.Distribution], list[str]]:
    """`ROOTS` and their dependencies for this interpreter (markers evaluated, no extras)."""
    from packaging.requirements import Requirement

    found: dict[str, importlib.metadata.Distribution] = {}
    missing: list[str] = []
    todo = list(ROOTS)
    while todo:
        name = _canonical(todo.pop())
        if name in found or name in missing:
            continue
        try:
            dist = importlib.metadata.distribution(name)
        except importlib.metadata.PackageNotFoundError:
            missing.append(name)
            continue
        found[name] = dist
        for line in dist.requires or []:
            requirement = Requirement(line)
            if requirement.marker is None or requirement.marker.evaluate({"extra": ""}):
                todo.append(requirement.name)
    return [found[n] for n in sorted(found)], sorted(missing)


def _sha256(path: Path | str) -> str:
    digest = hashlib.sha256()
    with open(path, "rb") as f:
        for chunk in iter(lambda: f.read(1 << 20), b""):
            digest.update(chunk)
    return digest.hexdigest()


def _script(python: str, value: str) -> bytes:
    module, _, attr = value.partition(":")
    head = attr.split(".")[0]
    return (
        f'#!{python}\nimport sys\nfrom {module} import {head}\nif __name__ == "__main__":\n    sys.exit({attr}())\n'
    ).encode()


@functools.cache
def _sources() -> tuple[str, dict[str, tuple[str, str]], dict[str, str], tuple[str, ...]]:
    """(digest, files, console scripts, missing distributions), read once per process: the
    evaluator's installed files do not change under it."""
    base = _base_interpreter()
    site_dir = f"lib/python{sys.version_info.major}.{sys.version_info.minor}/site-packages"
    dists, missing = _closure()
    files: dict[str, tuple[str, str]] = {}
    scripts: dict[str, str] = {}
    for dist in dists:
        for entry in dist.files or []:
            parts = entry.parts
            if ".." in parts or "__pycache__" in parts or entry.suffix in (".pyc", ".pyo"):
                continue  # console scripts (written by `layout`) and bytecode
            source = Path(dist.locate_file(entry))
            if source.is_file():
                files[f"{site_dir}/{entry.as_posix()}"] = (str(source), _sha256(source))
        for point in dist.entry_points:
            if point.group == "console_scripts":
                scripts[point.name] = point.value
    contents = sorted((path, sha) for path, (_, sha) in files.items())
    key = hashlib.sha256(
        json.dumps([LAYOUT_VERSION, base, sys.version, contents, sorted(scripts.items())]).encode()
    ).hexdigest()[:24]
    return key, files, scripts, tuple(missing)


def _base_interpreter() -> str:
    return os.path.realpath(getattr(sys, "_base_executable", None) or sys.executable)


def layout(home: Path | None = None) -> Layout:
    """What `ensure` builds under `home` (default `cache_root()`)."""
    key, files, scripts, missing = _sources()
    root = (cache_root() if home is None else home) / key
    base = _base_interpreter()
    info = sys.version_info
    python = f"{root}/bin/python"
    written = {
        "pyvenv.cfg": (
            f"home = {os.path.dirname(base)}\ninclude-system-site-packages = false\n"
            f"version = {info.major}.{info.minor}.{info.micro}\n"
        ).encode(),
        **{f"bin/{name}": _script(python, value) for name, value in scripts.items()},
    }
    links = {f"bin/{name}": base for name in ("python", "python3", f"python{info.major}.{info.minor}")}
    return Layout(key, files, written, links, missing)


_LOCK = threading.Lock()


def _build(target: Path, plan: Layout) -> None:
    for rel, (source, _) in plan.files.items():
        dest = target / rel
        dest.parent.mkdir(parents=True, exist_ok=True)
        shutil.copyfile(source, dest)
    for rel, data in plan.written.items():
        dest = target / rel
        dest.parent.mkdir(parents=True, exist_ok=True)
        dest.write_bytes(data)
        if rel.startswith("bin/"):
            dest.chmod(0o755)
    for rel, link in plan.links.items():
        (target / rel).parent.mkdir(parents=True, exist_ok=True)
        os.symlink(link, target / rel)


def differs(root: Path, plan: Layout) -> str:
    """What in `root` differs from `plan` ("" when nothing does; bytecode folders are not looked at)."""
    expected = {rel: sha for rel, (_, sha) in plan.files.items()}
    expected.update({rel: hashlib.sha256(data).hexdigest() for rel, data in plan.written.items()})
    seen: set[str] = set()
    for folder, dirs, names in os.walk(root):
        links = [d for d in dirs if os.path.islink(os.path.join(folder, d))]
        dirs[:] = [d for d in dirs if d not in links and d != "__pycache__"]
        for name in [*names, *links]:
            full = os.path.join(folder, name)
            rel = os.path.relpath(full, root)
            seen.add(rel)
            if os.path.islink(full):
                if plan.links.get(rel) != os.readlink(full):
                    return f"{rel} is a link it should not be"
            elif rel not in expected:
                return f"{rel} was added"
            elif not os.path.isfile(full) or _sha256(full) != expected[rel]:
                return f"{rel} changed"
    absent = sorted((set(expected) | set(plan.links)) - seen)
    return f"{absent[0]} is missing" if absent else ""


def ensure() -> Path:
    """The toolchain folder, built or checked now (see the module docstring). Raises
    `ToolchainError` when it cannot be built."""
    home = cache_root()
    plan = layout(home)
    if "pytest" in plan.missing:
        raise ToolchainError("pytest is not installed beside this package (install the audit extra)")
    root = home / plan.key
    with _LOCK:
        for _ in range(ATTEMPTS):
            if root.is_dir() and not root.is_symlink():
                if not differs(root, plan):
                    return root
                _discard(root, home)
            try:
                home.mkdir(parents=True, exist_ok=True)
                scratch = Path(home / f".build-{secrets.token_hex(6)}")
                scratch.mkdir()
                try:
                    _build(scratch, plan)
                    os.rename(scratch, root)  # atomic; fails when another process got there first
                except OSError:
                    pass
                finally:
                    shutil.rmtree(scratch, ignore_errors=True)
            except OSError as exc:
                raise ToolchainError(f"cannot build the agent's toolchain under {home}: {exc}") from exc
        if root.is_dir() and not differs(root, plan):
            return root
    raise ToolchainError(f"the agent's toolchain at {root} keeps changing while it is built")


def _discard(root: Path, home: Path) -> None:
    """Move a changed toolchain aside (one rename, so no episode sees it half removed), then remove it."""
    aside = home / f".stale-{secrets.token_hex(6)}"
    try:
        os.rename(root, aside)
    except OSError:
        return  # another process moved it already
    shutil.rmtree(aside, ignore_errors=True)


def evaluator_roots() -> list[str]:
    """Folders of the evaluator's own environment: its venv, its site-packages, this package."""
    roots = set()
    if sys.prefix != sys.base_prefix:
        roots |= {sys.prefix, os.path.realpath(sys.prefix)}
    for folder in [*site.getsitepackages(), site.getusersitepackages()]:
        roots |= {folder, os.path.realpath(folder)}
    package = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
    roots |= {package, os.path.realpath(package)}
    return sorted(r for r in roots if r and r != os.sep)


def _inside(path: str, roots: list[str]) -> bool:
    path = os.path.realpath(path) if path else path
    return any(path == r or path.startswith(r.rstrip(os.sep) + os.sep) for r in roots)


def agent_env(env: Mapping[str, str], root: Path | None = None) -> dict[str, str]:
    """The values to set over `env` (a runtime's environment) so that the agent's python, pytest
    and git-filter-repo are the toolchain's and nothing points back into the evaluator's environment."""
    root = ensure() if root is None else root
    roots = evaluator_roots()
    bin_dir = str(root / "bin")
    path = [p for p in env.get("PATH", "").split(os.pathsep) if p and p != bin_dir and not _inside(p, roots)]
    out = {"PATH": os.pathsep.join([bin_dir, *path]), "VIRTUAL_ENV": str(root)}
    for name, value in env.items():
        if name in out or name in KEPT:
            continue
        if any(r in value for r in roots):
            out[name] = ""
    for name in (*CLEARED, *FLAG_VARIABLES):
        out[name] = ""
    return out
