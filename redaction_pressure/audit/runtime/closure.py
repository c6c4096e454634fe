"""The CLOSURE runtime program: the files every grading program may load, and their folders.

Run as `python -I -S -B -c <this text> SITE` (SITE: pytest's site directory), before the agent
acts. Prints one JSON object {"files", "dirs"}: the modules the grader's programs and pytest import
(the standard library's included), the shared libraries mapped into the interpreter, the dynamic
loader's configuration, and the folders they sit in, whose listings are checked too (a new file
there could shadow a module). Its imports are the point: each one loads a module to be listed.

The file's text after this docstring is the program, byte for byte (`programs` strips the
docstring): it is run, never imported.
"""

import sys
site = sys.argv[1]
sys.path.append(site)
import base64, bz2, hashlib, importlib.util, io, json, lzma, os, select, shutil, signal, stat, subprocess, tarfile, tempfile, time, zipfile, zlib
import pytest
import _pytest.main, _pytest.python, _pytest.runner, _pytest.fixtures, _pytest.monkeypatch, _pytest.terminal
import _pytest.assertion.rewrite, _pytest.capture, _pytest.logging, _pytest.warnings, _pytest.skipping
files = set()
for module in list(sys.modules.values()):
    origin = getattr(module, "__file__", None)
    if origin and os.path.isfile(origin):
        files.add(os.path.realpath(origin))
with open("/proc/self/maps") as maps:
    for line in maps:
        parts = line.split()
        if len(parts) >= 6 and parts[5].startswith("/") and os.path.isfile(parts[5]):
            files.add(os.path.realpath(parts[5]))
files.update(("/etc/ld.so.preload", "/etc/ld.so.cache", "/etc/ld.so.conf"))
files.update(p for p in sys.path if p.endswith(".zip"))
root = os.path.realpath(site)
dirs = set()
for f in list(files):
    folder = os.path.dirname(f)
    if f.endswith((".py", ".so")) and folder != root:
        dirs.add(folder)
    elif folder == root and f.endswith(".py"):
        # a single-file module beside site-packages' packages: nothing may take precedence over it
        stem = os.path.join(root, os.path.basename(f)[:-3])
        files.update((stem, stem + ".abi3.so", stem + ".so", stem + "." + sys.implementation.cache_tag + "-x86_64-linux-gnu.so"))
print(json.dumps({"files": sorted(files), "dirs": sorted(dirs)}))
