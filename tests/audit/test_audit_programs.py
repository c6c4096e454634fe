"""The secrets-audit runtime programs (`redaction_pressure/audit/runtime/`, `PROBE`): files, texts, syntax.

Each Python program is a file of package data whose text after its docstring `programs` sends to
the runtime. These tests pin each sent text's sha256 (the bytes the grader's runtime receives; a
change to a program must change its pin here, knowingly), compile them, check the shell program
`PROBE` (a string in `programs`) with `sh -n`, and check that every file of the folder is a
program `programs` sends.
"""

from __future__ import annotations

import hashlib
import json
import marshal
import os
import shutil
import subprocess
import sys
import tempfile
import unittest
from importlib import resources
from importlib.util import MAGIC_NUMBER
from pathlib import Path

from redaction_pressure.audit import programs

SENT_SHA256 = {
    "MATERIALIZE": "ff7eac1c8612c3586c4a4f7b65efb42b1f8c26c4eb15a442f52334cabae00160",
    "CLOSURE": "c6ff4234d2f8491c72cf8669b93f5074fc550352f308e425ce91a6d2f52f4e4b",
    "LISTING": "89547bf5ebd2fcc6fded5db763bf79624c48216c531b8c6d14b418c33ab3b802",
    "PRECOMPILE": "6c977a8c40e849bbc3e710bb01e1ebfb6f1e301f38bc7c666824164ab144f2b6",
    "UNPACK_BYTECODE": "a4cb106dfee3795ac9a4c8b1785ef9ab61e98c0b3ad17f3dfddd3c3b104ab4eb",
    "ARCHIVE": "d8a5776c31416f5e0e0c97d0a77c2e3d7e0753b4c4558ad4f9880e5b20b76dcb",
    "PROBE": "7ac6f52db7e6cd078f77e617a5f269110e85c4da9ab90bb06628e98404fa10e3",
    "HEALTH": "a71943998d800181684bd7ae1f3cf4b3f070153d727bf31f7ae8af51a32511dc",
    "PROBES": "6cf189355904906de7a6b7b9820acd1ae9a66113551a0e146c8fc0b42d863c23",
    "MEMORISER_SCAN": "447141fb81cf563b32b7e54ac5aad3744aca49ff2bb9c2471bd61b43945dcf4f",
    "TOOL_STUB": "143ea19916a71d2e94800fc7b4c53537d4cf9ed18e4226a3fc6b29d94ae36043",
    "KEPT_BYTECODE": "02b5d39b3eb3c4fcaf404b4061110b8869e6e281126a0b6dbfaa15d09ccd02ce",
}
"""The sha256 of each text the runtime receives: a change to a program changes its pin here, knowingly."""


def _folder():
    return resources.files("redaction_pressure.audit").joinpath(programs.RUNTIME_DIR)


class RuntimeProgramsTest(unittest.TestCase):
    def test_the_sent_texts_are_pinned(self):
        self.assertEqual({*programs.PROGRAMS, "PROBE"}, set(SENT_SHA256))
        for name, pinned in SENT_SHA256.items():
            with self.subTest(name):
                self.assertEqual(hashlib.sha256(getattr(programs, name).encode()).hexdigest(), pinned)

    def test_every_file_is_a_program(self):
        files = {entry.name for entry in _folder().iterdir() if entry.name != "__pycache__"}
        self.assertEqual(files, set(programs.PROGRAMS.values()))

    def test_the_python_programs_compile(self):
        for name, file in programs.PROGRAMS.items():
            with self.subTest(name):
                compile(getattr(programs, name), f"<{name}>", "exec")
                # the whole file too: its docstring then the program, as ruff sees it
                compile(_folder().joinpath(file).read_text(encoding="utf-8"), file, "exec")

    def test_the_header_is_all_that_is_left_out(self):
        for name, file in programs.PROGRAMS.items():
            with self.subTest(name):
                text = _folder().joinpath(file).read_text(encoding="utf-8")
                sent = getattr(programs, name)
                self.assertTrue(text.endswith(sent))
                header = text[: len(text) - len(sent)]
                self.assertTrue(header.startswith('"""') and header.endswith('"""\n'))
                self.assertEqual(header.count('"""'), 2)

    @unittest.skipUnless(shutil.which("sh"), "no sh")
    def test_the_shell_programs_parse(self):
        for name in ("PROBE", "READ_FILE", "TOOL_SERVER_ALIVE"):
            with self.subTest(name):
                result = subprocess.run(
                    ["sh", "-n", "-c", getattr(programs, name)], capture_output=True, text=True, timeout=30
                )
                self.assertEqual(result.returncode, 0, result.stderr)


class KeptBytecodeTest(unittest.TestCase):
    """The KEPT_BYTECODE prelude: a grading program imports a module from setup's bytecode only when
    the file has the digest recorded at setup and its header matches the source as it is now."""

    def setUp(self):
        self.work = Path(tempfile.mkdtemp())
        self.addCleanup(shutil.rmtree, self.work, ignore_errors=True)
        self.lib = self.work / "lib"
        self.lib.mkdir()
        self.source = self.lib / "kept_probe_mod.py"
        self.source.write_text('VALUE = "from source"\n')
        self.prefix = self.work / "bytecode"
        st = self.source.stat()
        code = compile('VALUE = "from kept bytecode"\n', str(self.source), "exec")
        header = MAGIC_NUMBER + bytes(4) + (int(st.st_mtime) & 0xFFFFFFFF).to_bytes(4, "little")
        self.pyc = header + (st.st_size & 0xFFFFFFFF).to_bytes(4, "little") + marshal.dumps(code)
        self.rel = f"{str(self.lib).lstrip('/')}/kept_probe_mod.{sys.implementation.cache_tag}.pyc"
        (self.prefix / self.rel).parent.mkdir(parents=True)
        (self.prefix / self.rel).write_bytes(self.pyc)

    def run_program(self, digests: dict[str, str]) -> str:
        bytecode = json.dumps({"prefix": str(self.prefix), "files": digests})
        text = (
            f"import sys\nsys.path.insert(0, {str(self.lib)!r})\nimport kept_probe_mod\nprint(kept_probe_mod.VALUE)\n"
        )
        sent = programs.with_bytecode(text, bytecode, "/nowhere/site-packages")
        fresh = self.work / "fresh-prefix"
        result = subprocess.run(
            [sys.executable, *programs.ISOLATED, "-X", f"pycache_prefix={fresh}", "-c", sent],
            capture_output=True, text=True, timeout=60, cwd=self.work,
        )  # fmt: skip
        self.assertEqual(result.returncode, 0, result.stderr)
        self.assertFalse(fresh.exists(), "the prelude wrote bytecode")
        return result.stdout.strip()

    def test_verified_bytecode_is_imported(self):
        self.assertEqual(self.run_program({self.rel: hashlib.sha256(self.pyc).hexdigest()}), "from kept bytecode")

    def test_bytecode_changed_after_setup_is_not_run(self):
        digest = hashlib.sha256(self.pyc).hexdigest()
        (self.prefix / self.rel).write_bytes(self.pyc.replace(b"from kept bytecode", b"from the agent!!!!"))
        self.assertEqual(self.run_program({self.rel: digest}), "from source")

    def test_a_source_changed_since_setup_is_compiled(self):
        os.utime(self.source, (1_000_000_000, 1_000_000_000))
        self.assertEqual(self.run_program({self.rel: hashlib.sha256(self.pyc).hexdigest()}), "from source")

    def test_no_record_no_kept_bytecode(self):
        self.assertEqual(self.run_program({}), "from source")
        (self.prefix / self.rel).unlink()
        self.assertEqual(self.run_program({self.rel: hashlib.sha256(self.pyc).hexdigest()}), "from source")

    def test_bytecode_under_the_site_folder_is_left_to_the_health_run(self):
        text = programs.with_bytecode("pass\n", json.dumps({"prefix": "/p", "files": {"s/site/a.pyc": "0"}}), "/s/site")
        self.assertEqual(text, "pass\n")


if __name__ == "__main__":
    unittest.main()
