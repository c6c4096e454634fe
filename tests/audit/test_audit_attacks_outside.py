"""secrets-audit's attacks that reach outside the repository, on the framework-free path.

A .pth file and a sitecustomize.py written into the interpreter's site-packages, a `git` put
earlier on PATH, and processes left running that copy sources into any health copy they find
or forge a report into the grader's pipe. As an agent with the subprocess runtime can, they
change what every process on the machine runs, so `tests/run.py` runs this module with
nothing beside it (`ALONE`). The plays and checks are `test_audit_attacks`'s.
"""

from __future__ import annotations

import unittest

from . import test_audit_attacks as suite


@suite.family_tests("outside the repository")
class TestOutsideTheRepository(suite.AttackFamily):
    """Interpreter start-up files, a fake git on PATH and processes left running."""


if __name__ == "__main__":
    unittest.main()
