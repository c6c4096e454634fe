"""The LISTING runtime program: digests of the listings of the toolchain's folders.

Run as `python -I -S -B -X pycache_prefix=... -c <this text> FOLDER...` with the digest-checked
interpreter; prints one sha256 per folder, one line each in the order given. Only built-in modules
beside `os`, so that reading no bytecode costs no compile. `__pycache__` is left out: every
grading program runs with `-B` and its own `pycache_prefix`, so Python never reads the bytecode
beside the sources, and an honest agent whose `pytest` writes it there (a toolchain installed
without bytecode, `PYTHONDONTWRITEBYTECODE` unset) changed nothing the grader loads.

The file's text after this docstring is the program, byte for byte (`programs` strips the
docstring): it is run, never imported.
"""

import os, sys
try:
    from _sha256 import sha256
except ImportError:
    from hashlib import sha256
out = []
for folder in sys.argv[1:]:
    try:
        names = sorted(name for name in os.listdir(folder) if name != "__pycache__")
    except OSError:
        names = ["<unreadable>"]
    out.append(sha256("\\n".join(names).encode("utf-8", "surrogateescape")).hexdigest())
sys.stdout.write("\\n".join(out))
