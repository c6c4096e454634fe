"""The environments-folder test entry: runs the root test suite, the one source of truth."""

from __future__ import annotations

import unittest
from pathlib import Path

ROOT_TESTS = Path(__file__).resolve().parents[3] / "tests"


def load_tests(loader: unittest.TestLoader, tests: unittest.TestSuite, pattern: str | None):
    if not (ROOT_TESTS / "test_corpus.py").is_file():
        raise FileNotFoundError(f"the root test suite is missing at {ROOT_TESTS}")
    return unittest.TestLoader().discover(str(ROOT_TESTS), top_level_dir=str(ROOT_TESTS))
