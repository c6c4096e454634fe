"""The UNPACK_BYTECODE runtime program: writes kept bytecode into the bytecode folder.

Run by `setup` as `python -I -S -B -c <this text> ARCHIVE PREFIX` instead of PRECOMPILE when the
grader kept bytecode for this very toolchain: extracts ARCHIVE (the grader's own tar, deleted once
read) into PREFIX and prints PREFIX; compiling again would give the same bytes. An interpreter
without tarfile's extraction filters (before 3.11.4) fails here, and setup compiles instead.

The file's text after this docstring is the program, byte for byte (`programs` strips the
docstring): it is run, never imported.
"""

import io, os, sys, tarfile
archive, prefix = sys.argv[1], os.path.abspath(sys.argv[2])
with open(archive, "rb") as f:
    data = f.read()
os.remove(archive)
with tarfile.open(fileobj=io.BytesIO(data)) as tar:
    tar.extractall(prefix, filter="data")
print(prefix)
