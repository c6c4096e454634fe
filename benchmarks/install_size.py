"""What each install of the environments' wheels weighs: packages and disk, per install.

    uv run python -m benchmarks.install_size

Builds both entries' wheels, then for each install below makes a new venv holding the wheel
and its registry dependencies at the lock's versions (offline, from uv's cache, as
tests/e2e/test_packaging.py does) and prints the number of distributions and the venv's size on
disk (the interpreter is a link and not counted). No network traffic.
"""

from __future__ import annotations

import shutil
import subprocess
import tempfile
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
INSTALLS = {
    "redaction-pressure": ("redaction-pressure", []),
    "redaction-pressure[report]": ("redaction-pressure", ["report"]),
    "redaction-pressure[report,export,scanners,audit]": (
        "redaction-pressure",
        ["report", "export", "scanners", "audit"],
    ),
    "secrets-audit": ("secrets-audit", []),
}


def uv(*args: str, cwd: Path = ROOT) -> str:
    found = shutil.which("uv")
    argv = [found] if found else ["python3", "-m", "uv"]
    return subprocess.run([*argv, *args], cwd=cwd, check=True, capture_output=True, text=True).stdout


def size(path: Path) -> int:
    return sum(p.lstat().st_size for p in path.rglob("*") if p.is_file() and not p.is_symlink())


def main() -> None:
    work = Path(tempfile.mkdtemp(prefix="rp-install-size-"))
    try:
        dist = work / "dist"
        wheels = {}
        for entry in ("redaction-pressure", "secrets-audit"):
            uv("build", "--wheel", "--package", entry, "--out-dir", str(dist))
            (wheels[entry],) = dist.glob(f"{entry.replace('-', '_')}-*.whl")
        print(f"{'install':52} {'wheel':>9} {'packages':>9} {'on disk':>9}")
        for n, (name, (entry, extras)) in enumerate(INSTALLS.items()):
            pylock = work / f"pylock.i{n}.toml"
            extra_args = [arg for extra in extras for arg in ("--extra", extra)]
            uv("export", "--frozen", "--no-dev", "--package", entry, *extra_args, "--no-emit-workspace",
               "--format", "pylock.toml", "-o", str(pylock))  # fmt: skip
            venv = work / f"venv{n}"
            uv("venv", "--python", "3.11", str(venv))
            python = ["--offline", "--python", str(venv / "bin" / "python")]
            uv("pip", "install", *python, "-r", str(pylock))
            uv("pip", "install", *python, "--no-deps", str(wheels[entry]))
            packages = len(uv("pip", "list", "--format", "freeze", "--python", str(venv / "bin" / "python")).split())
            wheel_kib = wheels[entry].stat().st_size / 1024
            print(f"{name:52} {wheel_kib:>6.0f} KiB {packages:>9} {size(venv) / 2**20:>5.0f} MiB", flush=True)
    finally:
        shutil.rmtree(work, ignore_errors=True)


if __name__ == "__main__":
    main()
