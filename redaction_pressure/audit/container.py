"""A sealed workspace: the task in a podman container, the agent unprivileged, the grader root.

`PodmanWorkspace(plan, image)` is `local.LocalWorkspace`'s sealed counterpart, framework-free:
a container from a local image (no network), set up as root with the taskset's own programs
(`grading.probe`, MATERIALIZE), the repository handed to the user `agent`; `bash(command)`
runs as that user, so the interpreter, its standard library, pytest and git (all root's) are
out of the agent's reach; `facts()` grades as root with the very same `grading.grade`. It is
what a `docker` or `podman` runtime with `agent_user` gives in verifiers, without the harness.

`build_image(tag)` makes the image from Debian's mirror with `mmdebstrap` (the workplace has
no image registry): Python 3, pytest, git, git-filter-repo, node, bash and the `agent` user.
Podman runs here as root with `runc` and cgroupfs (`containers_conf`).
"""

from __future__ import annotations

import asyncio
import os
import shutil
import subprocess
import tempfile
import uuid
from dataclasses import dataclass
from pathlib import Path

from redaction_pressure.audit import grading, programs
from redaction_pressure.audit.plan import RepoPlan

IMAGE = "localhost/secrets-audit:bookworm-node"
"""The image tag: a new tag whenever PACKAGES changes, so a kept older image is never used."""
PACKAGES = "python3,python3-pytest,git,git-filter-repo,nodejs,bash,passwd,ca-certificates"
MIRROR = "http://deb.debian.org/debian"
AGENT = "agent"
WORKDIR = "/work"
PATH = "/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin"
CONTAINERS_CONF = """[containers]
default_ulimits = []
[engine]
runtime = "runc"
cgroup_manager = "cgroupfs"
"""


def containers_conf() -> str:
    """A containers.conf podman accepts on this kind of machine (root, runc, cgroupfs); its path."""
    path = Path(tempfile.gettempdir()) / "secrets-audit-containers.conf"
    if not path.exists() or path.read_text() != CONTAINERS_CONF:
        path.write_text(CONTAINERS_CONF)
    return str(path)


def podman(*args: str, data: bytes | None = None, timeout: float = 600) -> subprocess.CompletedProcess:
    env = {**os.environ, "CONTAINERS_CONF": containers_conf()}
    return subprocess.run(["podman", *args], input=data, capture_output=True, env=env, timeout=timeout)


def available() -> str:
    """ "" when podman can run containers here, else the one-line reason it cannot."""
    if shutil.which("podman") is None:
        return "podman is not installed (apt-get install podman runc)"
    probe = podman("info", "--format", "{{.Host.OCIRuntime.Name}}", timeout=60)
    return (
        ""
        if probe.returncode == 0
        else f"podman does not run here: {probe.stderr.decode(errors='replace').strip()[-200:]}"
    )


def has_image(tag: str = IMAGE) -> bool:
    return podman("image", "exists", tag, timeout=60).returncode == 0


def build_image(tag: str = IMAGE, mirror: str = MIRROR) -> None:
    """The workspace image from Debian's mirror (`mmdebstrap`, ~30 s, ~270 MB), imported as `tag`."""
    if shutil.which("mmdebstrap") is None:
        raise RuntimeError("building the image needs mmdebstrap (apt-get install mmdebstrap)")
    with tempfile.TemporaryDirectory() as scratch:
        rootfs = Path(scratch) / "rootfs.tar"
        hook = f'--customize-hook=chroot "$1" useradd -m -u 1000 {AGENT}'
        made = subprocess.run(
            ["mmdebstrap", "--variant=apt", f"--include={PACKAGES}", hook, "bookworm", str(rootfs), mirror],
            capture_output=True,
            timeout=1800,
        )
        if made.returncode:
            raise RuntimeError(f"mmdebstrap failed: {made.stderr.decode(errors='replace')[-500:]}")
        imported = podman("import", "-q", "--change", f"ENV PATH={PATH}", str(rootfs), tag)
        if imported.returncode:
            raise RuntimeError(f"podman import failed: {imported.stderr.decode(errors='replace')[-500:]}")


@dataclass(frozen=True)
class Result:
    exit_code: int
    stdout: str
    stderr: str


class PodmanRuntime:
    """`run`, `read` and `write` in a running container, as root (the grader's side)."""

    def __init__(self, container: str, workdir: str = WORKDIR, image: str = IMAGE) -> None:
        self.container, self.workdir, self.image = container, workdir, image

    def _exec(
        self, argv: list[str], env: dict[str, str], user: str = "root", data: bytes | None = None, timeout: float = 600
    ) -> subprocess.CompletedProcess:
        flags = [f"--env={k}={v}" for k, v in {"PATH": PATH, **env}.items()]
        return podman(
            "exec",
            "-i" if data is not None else "--tty=false",
            "--user",
            user,
            "--workdir",
            self.workdir,
            *flags,
            self.container,
            *argv,
            data=data,
            timeout=timeout,
        )

    async def run(self, argv: list[str], env: dict[str, str]) -> Result:
        done = await asyncio.to_thread(self._exec, argv, env)
        return Result(done.returncode, done.stdout.decode(errors="replace"), done.stderr.decode(errors="replace"))

    async def read(self, path: str, max_bytes: int | None = None) -> bytes:
        limit = str((max_bytes or (1 << 40)) + 1)
        script = 'test -f "$1" && test ! -L "$1" && exec head -c "$2" "$1"; exit 3'
        done = await asyncio.to_thread(self._exec, ["sh", "-c", script, "sh", path, limit], {})
        if done.returncode:
            raise OSError(f"{path} is not a regular file")
        if max_bytes is not None and len(done.stdout) > max_bytes:
            raise OSError(f"{path} is over {max_bytes} bytes")
        return done.stdout

    async def read_many(self, paths: list[str], max_bytes: int) -> dict[str, bytes]:
        """Many regular files in one command (a tar stream from the box's own tar, as trustworthy
        as `head` is for `read`); a path missing from the result is absent or not a regular file."""
        import io
        import tarfile

        done = await asyncio.to_thread(self._exec, ["tar", "--ignore-failed-read", "-cf", "-", "-P", "--", *paths], {})
        out: dict[str, bytes] = {}
        with tarfile.open(fileobj=io.BytesIO(done.stdout), mode="r:") as tar:
            for member in tar:
                if member.isfile() and member.size <= max_bytes:
                    out["/" + member.name.lstrip("/")] = tar.extractfile(member).read()
        return out

    async def write(self, path: str, data: bytes) -> None:
        script = 'mkdir -p "$(dirname "$1")" && cat > "$1"'
        done = await asyncio.to_thread(self._exec, ["sh", "-c", script, "sh", path], {}, "root", data)
        if done.returncode:
            raise OSError(f"writing {path} failed: {done.stderr.decode(errors='replace')[-200:]}")


class PodmanWorkspace:
    """The task in a fresh container: `bash` as the unprivileged agent, `facts` as root."""

    def __init__(self, plan: RepoPlan, image: str = IMAGE, agent: str = AGENT) -> None:
        self.plan, self.agent = plan, agent
        self.container = f"secrets-audit-{uuid.uuid4().hex[:12]}"
        started = podman(
            "run",
            "-d",
            "--rm",
            "--network",
            "none",
            "--name",
            self.container,
            image,
            "sh",
            "-c",
            f"mkdir -p {WORKDIR} && exec sleep infinity",
            timeout=120,
        )
        if started.returncode:
            raise RuntimeError(f"podman run failed: {started.stderr.decode(errors='replace')[-300:]}")
        try:
            self.runtime = PodmanRuntime(self.container, image=image)
            asyncio.run(self.runtime.run(["sh", "-c", f"id {agent} >/dev/null 2>&1 || useradd -m {agent}"], {}))
            probe = asyncio.run(grading.probe(self.runtime))
            if probe.toolchain is None:
                raise RuntimeError(f"the image lacks {', '.join(probe.missing)}")
            self.toolchain = probe.toolchain
            asyncio.run(self.runtime.write(".audit-input.json", programs.materialize_input(self.plan)))
            made = asyncio.run(self.runtime.run(["python3", "-c", programs.MATERIALIZE, ".audit-input.json"], {}))
            if made.exit_code:
                raise RuntimeError(f"setting up the repository failed: {made.stderr[-500:]}")
            asyncio.run(
                self.runtime.run(
                    [
                        "sh",
                        "-c",
                        f"rm -f .audit-input.json && chown -R {agent}: {WORKDIR}/{programs.REPO_DIR} && chown {agent}: {WORKDIR}",
                    ],
                    {},
                )
            )
        except BaseException:
            self.close()
            raise

    def bash(self, command: str, timeout: float = 60) -> subprocess.CompletedProcess:
        """`command` run by bash as the agent, in the workspace (the repository is ./repo)."""
        done = self.runtime._exec(["bash", "-c", command], {"HOME": f"/home/{self.agent}"}, self.agent, timeout=timeout)
        return subprocess.CompletedProcess(
            done.args, done.returncode, done.stdout.decode(errors="replace"), done.stderr.decode(errors="replace")
        )

    def facts(self, steps: int = 0) -> dict:
        facts = asyncio.run(grading.grade(self.runtime, self.plan, self.toolchain, steps))
        facts["revealed"] = []
        return facts

    def close(self) -> None:
        podman("rm", "-f", "-t", "0", self.container, timeout=120)

    def __enter__(self) -> PodmanWorkspace:
        return self

    def __exit__(self, *exc) -> None:
        self.close()
