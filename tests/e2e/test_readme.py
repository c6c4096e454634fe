"""The README's offline commands run verbatim: every ```bash offline block, as a reader would paste it.

The blocks are extracted from README.md (so a changed flag breaks this test, not the reader)
and run with bash in a temporary copy of the tracked files, so relative outputs (`outputs/`,
`outputs/`) land there; `uv run` uses this checkout's environment (`UV_PROJECT`, no sync).
"""

from __future__ import annotations

import os
import re
import shutil
import subprocess
import tempfile
import unittest
from pathlib import Path

from tests.support.cases import PRIVATE_ENV

ROOT = Path(__file__).resolve().parents[2]
FENCE = re.compile(r"^```(?P<info>[^\n`]*)\n(?P<body>.*?)^```[ \t]*$", re.MULTILINE | re.DOTALL)
OFFLINE = "bash offline"


def offline_blocks(markdown: str) -> list[str]:
    """The bodies of the fenced blocks whose info string is exactly `bash offline`."""
    return [match["body"] for match in FENCE.finditer(markdown) if match["info"].strip() == OFFLINE]


FIXTURE = """# A project

```bash offline
echo first > first.txt
```

```bash
echo online only > never.txt
```

```bash offline extra
echo not exactly the info string > never.txt
```

```text
bash offline
```

````bash offline
echo four backticks do not open a three-backtick block > never.txt
````

```bash offline
mkdir -p out && echo second > out/second.txt
cat first.txt
```
"""


def run_block(block: str, cwd: Path, home: Path) -> subprocess.CompletedProcess:
    env = {k: v for k, v in os.environ.items() if k != PRIVATE_ENV and "API_KEY" not in k}
    env.setdefault("UV_CACHE_DIR", str(Path.home() / ".cache" / "uv"))
    env.update(HOME=str(home), UV_PYTHON_DOWNLOADS="never", UV_PROJECT=str(ROOT), UV_NO_SYNC="1")
    return subprocess.run(
        ["bash", "-e", "-o", "pipefail", "-c", block], cwd=cwd, env=env, capture_output=True, text=True,
        stdin=subprocess.DEVNULL, timeout=1800,
    )  # fmt: skip


def tracked_copy(destination: Path) -> None:
    listed = subprocess.run(["git", "ls-files", "-z"], cwd=ROOT, capture_output=True, check=True).stdout
    for name in filter(None, listed.decode().split("\0")):
        source = ROOT / name
        if source.is_file():
            (destination / name).parent.mkdir(parents=True, exist_ok=True)
            shutil.copy2(source, destination / name)


class TestExtractor(unittest.TestCase):
    def test_only_blocks_marked_exactly_bash_offline_are_taken(self):
        """Blocks whose info string is exactly `bash offline` are extracted, in order; others are not."""
        blocks = offline_blocks(FIXTURE)
        self.assertEqual(
            blocks, ["echo first > first.txt\n", "mkdir -p out && echo second > out/second.txt\ncat first.txt\n"]
        )

    def test_fixture_blocks_run_in_a_temporary_folder(self):
        """The extracted blocks run in order with bash; their relative outputs land in the folder."""
        with tempfile.TemporaryDirectory() as folder:
            for block in offline_blocks(FIXTURE):
                result = run_block(block, Path(folder), Path(folder))
                self.assertEqual(result.returncode, 0, result.stderr)
            self.assertEqual((Path(folder) / "out" / "second.txt").read_text(), "second\n")
            self.assertFalse((Path(folder) / "never.txt").exists())


class TestReadmeOfflineCommands(unittest.TestCase):
    def test_every_offline_block_of_the_readme_exits_0(self):
        """Each ```bash offline block of README.md runs verbatim in a copy of the tree and exits 0."""
        blocks = offline_blocks((ROOT / "README.md").read_text(encoding="utf-8"))
        if not blocks:
            self.skipTest("README.md marks no block `bash offline` yet")
        with tempfile.TemporaryDirectory() as folder:
            tree, home = Path(folder) / "tree", Path(folder) / "home"
            tree.mkdir()
            home.mkdir()
            tracked_copy(tree)
            for number, block in enumerate(blocks, start=1):
                with self.subTest(block=number, command=block.strip()):
                    result = run_block(block, tree, home)
                    self.assertEqual(result.returncode, 0, f"{block}\n{result.stdout[-2000:]}\n{result.stderr[-3000:]}")


if __name__ == "__main__":
    unittest.main()
