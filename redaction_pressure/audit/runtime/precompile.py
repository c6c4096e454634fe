"""The PRECOMPILE runtime program: compiles the modules a pristine test run imports.

Run by `setup` as `python -I -S -c <this text> SITE PREFIX`, before the agent acts, when the
grader has no bytecode for this toolchain yet: compiles pytest and the standard-library modules a
pristine run imports into the bytecode folder PREFIX and prints each file's sha256 (one JSON line),
then the files themselves (a base64 tar line) for the grader to keep. The health run copies only
files that still match into its own fresh bytecode folder, so it starts fast and never reads
bytecode the agent wrote; the grading programs read their standard library from it too
(KEPT_BYTECODE). Its imports are the point: each one compiles a module.

The file's text after this docstring is the program, byte for byte (`programs` strips the
docstring): it is run, never imported.
"""

import os, sys
site, prefix = sys.argv[1], os.path.abspath(sys.argv[2])
sys.pycache_prefix = prefix  # before any import that compiles (os and sys are frozen and builtin)
import hashlib, json
sys.path.append(site)
import pytest
import _pytest.main, _pytest.python, _pytest.runner, _pytest.fixtures, _pytest.monkeypatch, _pytest.terminal
import _pytest.assertion.rewrite, _pytest.capture, _pytest.logging, _pytest.warnings, _pytest.skipping
import importlib.util, pathlib, subprocess, select, tarfile, tempfile, signal, shutil, base64, io, shlex, ctypes
files = {}
archive = io.BytesIO()
with tarfile.open(fileobj=archive, mode="w") as tar:
    for root, dirs, names in os.walk(prefix):
        dirs.sort()
        for n in sorted(names):
            full = os.path.join(root, n)
            with open(full, "rb") as f:
                data = f.read()
            rel = os.path.relpath(full, prefix)
            files[rel] = hashlib.sha256(data).hexdigest()
            member = tarfile.TarInfo(rel)
            member.size = len(data)
            tar.addfile(member, io.BytesIO(data))
print(json.dumps({"prefix": prefix, "files": files}))
print(base64.b64encode(archive.getvalue()).decode())
