"""The ARCHIVE runtime program: `repo/` (working tree and the whole `.git`) as a tar on stdout.

Run as `python -I -S -B -X pycache_prefix=... -c <this text> REPO CAP FILE_CAP MAX_ENTRIES` with
the digest-checked interpreter; writes the tar base64-encoded. Regular files only, opened without
following links and without blocking; symlinks, FIFOs, sockets and devices are reported, not read.
Nothing is deleted. Bytecode and test caches outside `.git` (`__pycache__`, `.pytest_cache`,
`*.pyc`, `*.pyo`) are read like any file, within a cap of their own, but what cannot be read of
them is reported under "derived_skipped", not as oversized: only the host knows (from the index)
whether such a file is tracked, and an untracked one must never count. The tar's last member `m`
is the JSON report {"skipped", "derived_skipped", "oversized", "present"}. Imports only the
standard library.

The file's text after this docstring is the program, byte for byte (`programs` strips the
docstring): it is run, never imported.
"""

import base64, io, json, os, stat, sys, tarfile
repo, cap, file_cap, max_entries = sys.argv[1], int(sys.argv[2]), int(sys.argv[3]), int(sys.argv[4])
DERIVED_DIRS = {"__pycache__", ".pytest_cache"}
report = {"skipped": [], "derived_skipped": [], "oversized": False, "present": False}
buf = io.BytesIO()
tar = tarfile.open(fileobj=buf, mode="w", format=tarfile.PAX_FORMAT)
state = {"total": 0, "derived": 0, "entries": 0}
def skip(rel, why, extra=None, derived=False):
    # A derived path's trouble is the host's to judge (tracked or not); any other path's is oversized.
    if not derived and why in ("too_deep", "unreadable", "huge", "unread"):
        report["oversized"] = True
    key = "derived_skipped" if derived else "skipped"
    if len(report[key]) < 200:
        report[key].append([rel, why] + ([extra] if extra is not None else []))
    elif derived:
        report["oversized"] = True  # too many to judge one by one
def walk(top, rel, in_git, depth, derived):
    if depth > 64:
        return skip(rel, "too_deep", None, derived)
    try:
        names = sorted(os.listdir(top))
    except OSError:
        return skip(rel or ".", "unreadable", None, derived)
    for name in names:
        state["entries"] += 1
        if state["entries"] > max_entries:
            report["oversized"] = True
            return
        full = os.path.join(top, name)
        r = rel + "/" + name if rel else name
        try:
            st = os.lstat(full)
        except OSError:
            skip(r, "unreadable", None, derived); continue
        if stat.S_ISDIR(st.st_mode):
            walk(full, r, in_git or (rel == "" and name == ".git"), depth + 1, derived or (not in_git and name in DERIVED_DIRS))
        elif stat.S_ISREG(st.st_mode):
            mine = derived or (not in_git and name.endswith((".pyc", ".pyo")))
            total = "derived" if mine else "total"
            if st.st_size > file_cap:
                skip(r, "huge", None, mine); continue
            if state[total] + st.st_size > cap:
                skip(r, "unread", None, mine); continue
            try:
                fd = os.open(full, os.O_RDONLY | os.O_NOFOLLOW | os.O_NONBLOCK)
            except OSError:
                skip(r, "unreadable", None, mine); continue
            with os.fdopen(fd, "rb") as f:
                if not stat.S_ISREG(os.fstat(f.fileno()).st_mode):
                    skip(r, "special", None, mine); continue
                data = f.read(file_cap + 1)
            if len(data) > file_cap:
                skip(r, "huge", None, mine); continue
            state[total] += len(data)
            info = tarfile.TarInfo("t/" + r)
            info.size = len(data)
            info.mode = 0o755 if st.st_mode & 0o111 else 0o644
            tar.addfile(info, io.BytesIO(data))
        elif stat.S_ISLNK(st.st_mode):
            try: target = os.readlink(full)
            except OSError: target = ""
            skip(r, "symlink", target[:500], derived)
        else:
            skip(r, "special", None, derived)
try:
    st = os.lstat(repo)
    if stat.S_ISDIR(st.st_mode):
        report["present"] = True
        walk(repo, "", False, 0, False)
    elif stat.S_ISLNK(st.st_mode):
        skip(".", "symlink", os.readlink(repo)[:500])
except FileNotFoundError:
    pass
meta = json.dumps(report).encode()
info = tarfile.TarInfo("m")
info.size = len(meta)
tar.addfile(info, io.BytesIO(meta))
tar.close()
sys.stdout.write(base64.b64encode(buf.getvalue()).decode())
