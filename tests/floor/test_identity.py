"""The identity block: versions, split commitment and the source digest."""

from __future__ import annotations

import hashlib
import tomllib
import unittest
from pathlib import Path

import redaction_pressure
from redaction_pressure.corpus import CORPUS_VERSION
from redaction_pressure.identity import source_digest, version
from redaction_pressure.redact.api import identity
from redaction_pressure.redact.rubric import REWARD_SCHEMA_VERSION
from redaction_pressure.splits import commitment

ROOT = Path(__file__).resolve().parents[2]


class TestIdentity(unittest.TestCase):
    def test_block_names_environment_versions_split_and_digest(self):
        """The block carries exactly the fields the contract lists."""
        block = identity("dev", commitment("dev"))
        self.assertEqual(
            block,
            {
                "name": "redaction-pressure",
                "version": version(),
                "corpus_version": CORPUS_VERSION,
                "reward_schema_version": REWARD_SCHEMA_VERSION,
                "split": "dev",
                "split_commitment": commitment("dev"),
                "source_digest": source_digest(),
            },
        )

    def test_version_is_the_project_version(self):
        """The reported version is the one pyproject.toml declares."""
        project = tomllib.loads((ROOT / "pyproject.toml").read_text())["project"]
        self.assertEqual(version(), project["version"])

    def test_source_digest_follows_the_readme_definition(self):
        """Recomputing the digest from the documented recipe gives the same value."""
        package = Path(redaction_pressure.__file__).resolve().parent
        digest = hashlib.sha256()
        paths = sorted(package.rglob("*.py"), key=lambda p: p.relative_to(package).as_posix())
        self.assertIn("scanner.py", {p.name for p in paths})
        for path in paths:
            if "__pycache__" in path.parts:
                continue
            data = path.read_bytes()
            digest.update(
                path.relative_to(package).as_posix().encode() + b"\x00" + str(len(data)).encode() + b"\x00" + data
            )
        self.assertEqual(source_digest(), digest.hexdigest())

    def test_docs_state_the_digest_recipe(self):
        """The identity documentation defines the digest the way the code computes it, and the README links to it."""
        self.assertIn("docs/private-evaluation.md", (ROOT / "README.md").read_text())
        readme = (ROOT / "docs" / "private-evaluation.md").read_text()
        self.assertIn("source digest", readme.lower())
        self.assertIn("NUL", readme)
        self.assertIn("__pycache__", readme)


if __name__ == "__main__":
    unittest.main()
