"""`openenv validate`'s own graders, through a provider that serves the environment on 127.0.0.1.

    python tests/support/openenv_validate.py PACKAGE_DIR TASKSET > report.json

openenv 0.10's validator reaches a running environment through a provider (`run_validation(...,
provider=)`); its default one builds and runs a Docker image, which needs a Docker daemon that
this kind of machine does not run. This provider starts `redaction-pressure serve-openenv
--taskset TASKSET` on a free loopback port instead (secrets-audit in its local box: the contract
checked is the server's, the same in either box) and hands its URL to the validator, whose graders
then run unchanged: startup, reward well-formed, observation schema, state contract. It declares
no network-policy or exec capability, so those checks report SKIP with the validator's reason.
Run with the OpenEnv project's Python (servers/openenv/.venv); prints the report as JSON.
"""

from __future__ import annotations

import json
import subprocess
import sys
import time
import urllib.request
from pathlib import Path

from openenv.validation import Level, run_validation
from openenv.validation.types import ProviderCapability

ROOT = Path(__file__).resolve().parents[2]


class _Running:
    def __init__(self, proc: subprocess.Popen, url: str) -> None:
        self.proc, self.base_url = proc, url

    def inspect(self) -> dict:
        return {"pid": self.proc.pid}

    def logs(self, max_bytes: int = 65536) -> str:
        return ""

    def exec(self, argv, timeout_s):
        raise NotImplementedError("the loopback provider runs no command in the box")

    def stop(self) -> None:
        self.proc.terminate()
        try:
            self.proc.wait(30)
        except subprocess.TimeoutExpired:
            self.proc.kill()


class LoopbackProvider:
    """Serves the package's environment with serve-openenv on 127.0.0.1 (no image: `build` only names the source)."""

    name = "loopback-serve-openenv"
    capabilities = frozenset({ProviderCapability.IMAGE_BUILD})
    supported_network_modes = frozenset({"public", "no-network"})

    def __init__(self, taskset: str) -> None:
        self.taskset = taskset

    def build(self, root, execution) -> str:
        return "sha256:" + "0" * 64

    def start(self, spec) -> _Running:
        box = ["--sandbox", "local"] if self.taskset == "secrets-audit" else []
        proc = subprocess.Popen(
            [sys.executable, "-m", "redaction_pressure", "serve-openenv", "--taskset", self.taskset, "--port", "0", *box],
            cwd=ROOT, stdout=subprocess.PIPE, stdin=subprocess.DEVNULL, text=True,
        )  # fmt: skip
        line = proc.stdout.readline()
        if not line.startswith("ready "):
            proc.kill()
            raise RuntimeError(f"serve-openenv did not start: {line!r}")
        url = line.split()[1]
        deadline = time.monotonic() + 60
        while time.monotonic() < deadline:
            try:
                with urllib.request.urlopen(url + "/health", timeout=2) as r:
                    if r.status == 200:
                        return _Running(proc, url)
            except OSError:
                time.sleep(0.2)
        proc.kill()
        raise RuntimeError("no /health")


def main() -> int:
    package, taskset = Path(sys.argv[1]), sys.argv[2]
    report = run_validation(package, max_level=Level.RUNTIME, provider=LoopbackProvider(taskset))
    rows = [{"check": r.check_id, "status": r.status.value, "evidence": list(r.evidence)} for r in report.results]
    json.dump({"verdict": report.verdict.value, "results": rows}, sys.stdout)
    return 0


if __name__ == "__main__":
    sys.exit(main())
