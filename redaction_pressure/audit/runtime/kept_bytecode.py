"""The KEPT_BYTECODE prelude: a grading program's standard library from setup's verified bytecode.

Not run on its own: `programs.with_bytecode` puts this text, then a call
`_kept_bytecode(PREFIX, DIGESTS)`, before a grading program (ARCHIVE, HEALTH, PROBES). Those run
with a fresh, empty `-X pycache_prefix`, so that they never read bytecode the agent could have
written; without this they compile every standard-library module they import from source
(~0.3 CPU-s a program). PREFIX is the bytecode folder PRECOMPILE filled at setup, before the agent
acted, and DIGESTS the sha256 of each of its standard-library files as the grader recorded them
then. A module's bytecode is read from there when it is imported, used only if its bytes have the
recorded digest and its header matches the source file as it is now (the interpreter's own
timestamp check); anything else, a file gone, changed or unreadable, compiles from source as before.
It uses only what needs no compiling: builtin and frozen modules and `_sha256`.

The file's text after this docstring is the prelude, byte for byte (`programs` strips the
docstring): it is run, never imported.
"""


def _kept_bytecode(prefix, digests):
    try:
        import marshal, sys, _frozen_importlib_external as external
        from _sha256 import sha256
    except ImportError:
        return
    tag = sys.implementation.cache_tag

    class Loader(external.SourceFileLoader):
        def get_code(self, fullname):
            head, _, tail = self.path.rpartition("/")
            rel = head.lstrip("/") + "/" + tail[:-3] + "." + tag + ".pyc"
            want = digests.get(rel) if tail.endswith(".py") else None
            if want is not None:
                try:
                    with open(prefix + "/" + rel, "rb") as f:
                        data = f.read()
                    stats = self.path_stats(self.path)
                except OSError:
                    data = b""
                if (
                    len(data) > 16
                    and sha256(data).hexdigest() == want
                    and data[:4] == external.MAGIC_NUMBER
                    and data[4:8] == b"\0\0\0\0"
                    and data[8:12] == (int(stats["mtime"]) & 0xFFFFFFFF).to_bytes(4, "little")
                    and data[12:16] == (stats["size"] & 0xFFFFFFFF).to_bytes(4, "little")
                ):
                    try:
                        return marshal.loads(memoryview(data)[16:])
                    except (EOFError, ValueError, TypeError):
                        pass
            return super().get_code(fullname)

    loaders = [
        (external.ExtensionFileLoader, external.EXTENSION_SUFFIXES),
        (Loader, external.SOURCE_SUFFIXES),
        (external.SourcelessFileLoader, external.BYTECODE_SUFFIXES),
    ]
    sys.path_hooks.insert(0, external.FileFinder.path_hook(*loaders))
    sys.path_importer_cache.clear()
