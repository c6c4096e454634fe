"""docs/openenv.md's training loops, run as written against `serve-openenv` for both environments."""

from __future__ import annotations

import os
import re
import subprocess
import unittest

from redaction_pressure import splits as shared_splits
from redaction_pressure.redact.api import load_task, score_reply
from tests.support.openenv_server import ROOT, Server, openenv_python

DOC = ROOT / "docs" / "openenv.md"


def example(marker: str) -> str:
    """The fenced Python block of docs/openenv.md whose first line is `# training loop: MARKER`."""
    blocks = re.findall(r"```python\n(.*?)```", DOC.read_text(), flags=re.S)
    (code,) = [b for b in blocks if b.startswith(f"# training loop: {marker}\n")]
    return code


def run(code: str, url: str) -> subprocess.CompletedProcess:
    env = {k: v for k, v in os.environ.items() if k != shared_splits.PRIVATE_ENV}
    env["OPENENV_URL"] = url
    return subprocess.run([openenv_python(), "-c", code], env=env, cwd=ROOT, capture_output=True, text=True,
                          timeout=1800, stdin=subprocess.DEVNULL)  # fmt: skip


class TestTrainingLoops(unittest.TestCase):
    def test_the_redaction_pressure_loop_gets_score_replys_rewards(self):
        """16 train episodes over one session: the printed mean is score_reply's for the example's reply."""
        code = example("redaction-pressure")
        namespace: dict = {}
        exec(code.split("rewards = []")[0].replace("from redaction_pressure.redact.openenv_env", "#"), namespace)  # noqa: S102 - the doc's own policy
        server = Server("--taskset", "redaction-pressure")
        try:
            done = run(code, server.url)
        finally:
            server.close()
        self.assertEqual(done.returncode, 0, done.stderr[-3000:])
        tasks = [load_task("train", i) for i in range(16)]
        rewards = [score_reply(t, namespace["policy"](t.prompt.system, t.prompt.user)).reward for t in tasks]
        self.assertEqual(done.stdout.strip(), f"16 episodes, mean reward {sum(rewards) / 16:.3f}")
        self.assertGreater(sum(rewards), 0.0, "the example's rule earns something on some task")

    def test_the_secrets_audit_loop_plays_to_the_final_grade(self):
        """Two train episodes in the default (podman) sandbox, each to its submit: the final grade, inaction's 0.0."""
        from redaction_pressure.audit import container

        if not container.has_image():
            container.build_image()
        server = Server("--taskset", "secrets-audit", "--max-sessions", "2")
        try:
            done = run(example("secrets-audit"), server.url)
        finally:
            server.close()
        self.assertEqual(done.returncode, 0, done.stderr[-3000:])
        lines = done.stdout.strip().splitlines()
        self.assertEqual(len(lines), 3, done.stdout)
        for episode, line in enumerate(lines[:2]):
            self.assertTrue(line.startswith(f"episode {episode}: reward 0.0, submitted"), line)
        self.assertEqual(lines[2], "2 episodes, mean reward 0.000")
