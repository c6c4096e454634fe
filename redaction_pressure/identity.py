"""The identity block: which environment, corpus, reward and code produced a task or score.

Both environments build their block here (`block`), each passing its own versions; this module
sits on the shared floor and imports neither environment.

`source_digest()` is SHA-256 over every `*.py` file of the installed
`redaction_pressure` package directory (recursively, `__pycache__` excluded), taken in
order of their POSIX paths relative to that directory; each file contributes
`path` NUL `size in bytes as decimal` NUL `raw bytes`. It is computed once per process
from the files on disk, so it names the code that actually ran.
"""

from __future__ import annotations

import hashlib
from functools import lru_cache
from importlib import metadata
from pathlib import Path

DISTRIBUTIONS = ("redaction-pressure-core", "redaction-pressure", "secrets-audit")
"""Where the installed code's version is read, first found: the repository's development
install, then the environments' wheels (`environments/`), each of which carries this package."""
PACKAGE_DIR = Path(__file__).resolve().parent


@lru_cache(maxsize=1)
def version() -> str:
    """The installed code's version (the pyprojects agree; `test_packaging` checks it), or "unknown"."""
    for name in DISTRIBUTIONS:
        try:
            return metadata.version(name)
        except metadata.PackageNotFoundError:
            continue
    return "unknown"


@lru_cache(maxsize=1)
def source_digest() -> str:
    """SHA-256 hex of the package's Python sources, as defined in the module docstring."""
    digest = hashlib.sha256()
    files = sorted(
        (path.relative_to(PACKAGE_DIR).as_posix(), path)
        for path in PACKAGE_DIR.rglob("*.py")
        if "__pycache__" not in path.parts
    )
    for relative, path in files:
        data = path.read_bytes()
        digest.update(relative.encode() + b"\x00" + str(len(data)).encode() + b"\x00" + data)
    return digest.hexdigest()


def block(name: str, split: str, commitment: str, versions: dict[str, str]) -> dict[str, str]:
    """The identity block recorded in task data and, recomputed, in `trace.info`: the environment's
    name, the code's version, the environment's own versions (`corpus_version`, then any other,
    then `reward_schema_version`), the split and its commitment, and the source digest."""
    return {
        "name": name,
        "version": version(),
        **versions,
        "split": split,
        "split_commitment": commitment,
        "source_digest": source_digest(),
    }
