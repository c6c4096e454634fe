"""Hatch build hook: this entry's wheel carries the repository's `redaction_pressure` package.

The code has one home, the repository root's `redaction_pressure/`; no copy is kept in git.
Building the sdist copies it in beside this file (so a wheel built from the sdist finds it
there), building the wheel copies it into the wheel under the hook's `into` folder (none: the
top level), without bytecode caches. With `into` set, the wheel also gets a `.pth` file naming
that folder, so every interpreter of the environment (the scan workers
included) imports the package from there unless an installed `redaction_pressure` (the
`redaction-pressure` wheel, same version) comes first on `sys.path`. Editable installs copy
nothing: `dev-mode-dirs` puts the repository root on `sys.path` instead. The secrets-audit
entry runs this same file (its `build_hook.py` is a link here; its sdist gets the file).
"""

from __future__ import annotations

import shutil
import tempfile
from pathlib import Path

from hatchling.builders.hooks.plugin.interface import BuildHookInterface

PACKAGE = "redaction_pressure"


class CodeHook(BuildHookInterface):
    PLUGIN_NAME = "custom"

    def initialize(self, version: str, build_data: dict) -> None:
        if version == "editable":
            return
        self._staging = Path(tempfile.mkdtemp(prefix="rp-build-"))
        copy = self._staging / PACKAGE
        shutil.copytree(self._source(), copy, ignore=shutil.ignore_patterns("__pycache__", "*.pyc"))
        into = self.config.get("into", "") if self.target_name == "wheel" else ""
        build_data["force_include"][str(copy)] = f"{into}/{PACKAGE}" if into else PACKAGE
        if into:
            pth = self._staging / f"{into.replace('/', '_')}.pth"
            pth.write_text(f"{into}\n")
            build_data["force_include"][str(pth)] = pth.name

    def finalize(self, version: str, build_data: dict, artifact_path: str) -> None:
        staging = getattr(self, "_staging", None)
        if staging is not None:
            shutil.rmtree(staging, ignore_errors=True)

    def _source(self) -> Path:
        """The package beside this file (an unpacked sdist) or at the repository root (a checkout)."""
        root = Path(self.root)
        for candidate in (root / PACKAGE, root.parent.parent / PACKAGE):
            if (candidate / "__init__.py").is_file():
                return candidate
        raise RuntimeError(f"{PACKAGE}/ not found beside {root} nor at the repository root {root.parent.parent}")
