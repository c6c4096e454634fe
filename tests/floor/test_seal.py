"""Sealing the private secret: gone from /proc/<pid>/environ, still usable here and by children."""

from __future__ import annotations

import os
import subprocess
import sys
import unittest

from tests.support.cases import PRIVATE_ENV, TEST_SECRET

PROBE = f"""
import os, subprocess, sys
from redaction_pressure.seal import scrub_initial_environ
found = scrub_initial_environ({PRIVATE_ENV!r})
block = open("/proc/self/environ", "rb").read()
child = subprocess.run([sys.executable, "-c", "import os; print(os.environ[{PRIVATE_ENV!r}])"],
                       capture_output=True, text=True).stdout.strip()
print(found, {TEST_SECRET!r}.encode() in block, os.environ[{PRIVATE_ENV!r}] == {TEST_SECRET!r},
      child == {TEST_SECRET!r}, b"PATH=" in block)
"""


class TestScrubInitialEnviron(unittest.TestCase):
    def test_the_secret_leaves_proc_environ_but_stays_usable(self):
        """After the scrub, /proc/self/environ no longer holds the secret; os.environ and a child spawned plainly still do."""
        env = {**os.environ, PRIVATE_ENV: TEST_SECRET}
        result = subprocess.run([sys.executable, "-c", PROBE], env=env, capture_output=True, text=True, timeout=120)
        self.assertEqual(result.returncode, 0, result.stderr)
        found, in_block, usable, inherited, others_intact = result.stdout.split()
        self.assertEqual((found, in_block, usable, inherited, others_intact), ("True", "False", "True", "True", "True"))

    def test_an_unset_secret_is_left_alone(self):
        """Without the variable the scrub reports nothing found and changes nothing."""
        env = {k: v for k, v in os.environ.items() if k != PRIVATE_ENV}
        probe = (
            "from redaction_pressure.seal import scrub_initial_environ; import os; "
            f"print(scrub_initial_environ({PRIVATE_ENV!r}), {PRIVATE_ENV!r} in os.environ)"
        )
        result = subprocess.run([sys.executable, "-c", probe], env=env, capture_output=True, text=True, timeout=120)
        self.assertEqual(result.stdout.split(), ["False", "False"], result.stderr)


if __name__ == "__main__":
    unittest.main()
