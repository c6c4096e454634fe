"""`openenv validate` on the OpenEnv packages, every level, with the validator's own Docker provider run by podman.

    uv run --project servers/openenv python servers/openenv/validate.py [redaction_pressure] [secrets_audit] [--json]

It calls openenv's `run_validation` with openenv's `DockerValidationProvider`: the validator builds
the package's Dockerfile, starts the image read-only as user 65532 without network, plays the
package's runtime plan through its own client and measures the network from outside. Three things
differ from `openenv validate PACKAGE`, each because of this kind of machine (docs/openenv.md):

- `docker` is podman: podman-as-docker/ (beside this file) comes first on PATH; it runs podman,
  translating the one Docker CLI template function podman 4.3 lacks. The Docker CLI at
  /usr/local/bin has no daemon to talk to.
- The image's contents: the package folder holds no code, so this stages `site.tar` there (the
  OpenEnv project's locked dependencies and its wheel, built from the working tree) for the
  Dockerfile to add onto the audit image, which `container.build_image()` makes from Debian's
  mirror if it is missing. The staged file and the image the validator built are removed after.
- The network helper: the provider's default (python:3.12-slim, pinned on Docker Hub) cannot be
  pulled here; the helper is the audit image (Debian's python3), pinned by its digest.

Prints each check's status and evidence and the verdict; exits 0 when every verdict is PASS or WARN,
1 otherwise, 2 when it cannot run (no podman, no uv, no mmdebstrap for a missing image).
"""

from __future__ import annotations

import argparse
import json
import os
import shutil
import subprocess
import sys
import tarfile
import tempfile
from pathlib import Path

from openenv.validation import Level, run_validation
from openenv.validation.providers.docker import DockerValidationProvider

from redaction_pressure.audit import container

HERE = Path(__file__).resolve().parent
PACKAGES = ("redaction_pressure", "secrets_audit")


class CannotRun(RuntimeError):
    """What this machine lacks for the validator's runtime level; one line."""


def _run(argv: list[str], what: str) -> str:
    done = subprocess.run(argv, capture_output=True, text=True, stdin=subprocess.DEVNULL, timeout=1800)
    if done.returncode:
        raise CannotRun(f"{what} failed: {done.stderr.strip()[-300:]}")
    return done.stdout


def uv() -> list[str]:
    """The uv command: on PATH, or the module of a `python3` that has it (pip may put the script off PATH)."""
    if shutil.which("uv"):
        return ["uv"]
    if (
        shutil.which("python3")
        and subprocess.run(["python3", "-m", "uv", "--version"], capture_output=True).returncode == 0
    ):
        return ["python3", "-m", "uv"]
    raise CannotRun("staging the image's contents needs uv (pip install uv)")


def stage(package: Path) -> Path:
    """site.tar in the package folder: the locked dependencies and the project's wheel, for a cp311 Linux image."""
    uv_ = uv()
    with tempfile.TemporaryDirectory(prefix="openenv-stage-") as scratch:
        work = Path(scratch)
        _run([*uv_, "build", "--project", str(HERE), "--wheel", "-q", "-o", str(work / "dist")], "uv build")
        _run([*uv_, "export", "--project", str(HERE), "--frozen", "--no-dev", "--no-emit-project", "-q",
              "--format", "requirements-txt", "-o", str(work / "requirements.txt")], "uv export")  # fmt: skip
        target = [
            "--target",
            str(work / "site"),
            "--python-version",
            "3.11",
            "--python-platform",
            "x86_64-manylinux_2_28",
        ]
        _run([*uv_, "pip", "install", "-q", *target, "-r", str(work / "requirements.txt")], "uv pip install")
        (wheel,) = (work / "dist").glob("*.whl")
        _run([*uv_, "pip", "install", "-q", *target, "--no-deps", str(wheel)], "uv pip install")
        shutil.rmtree(work / "site" / "bin", ignore_errors=True)  # scripts for the host's Python; the image runs -m
        staged = package / "site.tar"
        with tarfile.open(staged, "w") as tar:
            tar.add(work / "site", arcname=".")
    return staged


def helper_image() -> str:
    """The audit image, pinned by its digest: the network helper, sink and control containers run it."""
    digest = container.podman("image", "inspect", "--format", "{{.Digest}}", container.IMAGE, timeout=60)
    if digest.returncode:
        raise CannotRun(f"podman cannot inspect {container.IMAGE}")
    return f"{container.IMAGE.rsplit(':', 1)[0]}@{digest.stdout.decode().strip()}"


def prepare() -> str:
    """podman as `docker`, the base image built if missing; the helper image's reference."""
    reason = container.available()
    if reason:
        raise CannotRun(reason)
    for package in PACKAGES:
        first = (HERE / "envs" / package / "Dockerfile").read_text().split("\nFROM ", 1)[1].split()[0]
        if first != container.IMAGE:
            raise CannotRun(f"envs/{package}/Dockerfile starts FROM {first}, not the audit image {container.IMAGE}")
    if not container.has_image():
        try:
            container.build_image()
        except RuntimeError as exc:
            raise CannotRun(str(exc)) from None
    os.environ["PATH"] = f"{HERE / 'podman-as-docker'}{os.pathsep}{os.environ.get('PATH', '')}"
    os.environ["CONTAINERS_CONF"] = container.containers_conf()
    return helper_image()


def validate(package: Path, helper: str) -> dict:
    """One package through every level: the report as JSON."""
    staged = stage(package)
    try:
        report = run_validation(
            package, max_level=Level.SEMANTIC, provider=DockerValidationProvider(helper_image=helper)
        )
    finally:
        staged.unlink(missing_ok=True)
    data = report.model_dump(mode="json")
    built = next((r["measured"].get("image_ref") for r in data["results"] if r["check_id"] == "runtime.startup"), None)
    if built:
        container.podman("image", "rm", "--force", built, timeout=120)
    return data


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("packages", nargs="*", metavar="PACKAGE", help=f"of {', '.join(PACKAGES)} (default: both)")
    parser.add_argument("--json", action="store_true", help="print the reports as one JSON object by package")
    args = parser.parse_args(argv)
    unknown = sorted(set(args.packages) - set(PACKAGES))
    if unknown:
        parser.error(f"no package {unknown[0]!r}: choose from {', '.join(PACKAGES)}")
    try:
        helper = prepare()
        reports = {name: validate(HERE / "envs" / name, helper) for name in args.packages or PACKAGES}
    except CannotRun as exc:
        print(f"validate: {exc}", file=sys.stderr)
        return 2
    if args.json:
        json.dump(reports, sys.stdout, indent=1)
        print()
    else:
        for name, data in reports.items():
            print(f"{name}: {data['verdict'].upper()}")
            for row in data["results"]:
                print(f"  {row['status'].upper():5} {row['check_id']}: {'; '.join(row['evidence'])[:160]}")
    return 0 if all(data["verdict"] in ("pass", "warn") for data in reports.values()) else 1


if __name__ == "__main__":
    sys.exit(main())
