"""The ARCHIVE runtime program: `repo/` (working tree and the whole `.git`) as a tar on stdout.

Run as `python -I -S -B -X pycache_prefix=... -c <this text> REPO CAP FILE_CAP MAX_ENTRIES` with
the digest-checked interpreter; writes the tar base64-encoded. Regular files only, opened without
following links and without blocking; symlinks, FIFOs, sockets and devices are reported, not read;
bytecode and test caches outside `.git` are deleted first. The tar's last member `m` is the JSON
report {"skipped", "oversized", "removed", "present"}. Imports only the standard library.

The file's text after this docstring is the program, byte for byte (`programs` strips the
docstring): it is run, never imported.
"""

import base64, io, json, os, shutil, stat, sys, tarfile
repo, cap, file_cap, max_entries = sys.argv[1], int(sys.argv[2]), int(sys.argv[3]), int(sys.argv[4])
DERIVED_DIRS = {"__pycache__", ".pytest_cache"}
report = {"skipped": [], "oversized": False, "removed": 0, "present": False}
buf = io.BytesIO()
tar = tarfile.open(fileobj=buf, mode="w", format=tarfile.PAX_FORMAT)
state = {"total": 0, "entries": 0}
def skip(rel, why, extra=None):
    if len(report["skipped"]) < 200:
        report["skipped"].append([rel, why] + ([extra] if extra is not None else []))
def walk(top, rel, in_git, depth):
    if depth > 64:
        report["oversized"] = True
        return skip(rel, "too_deep")
    try:
        names = sorted(os.listdir(top))
    except OSError:
        report["oversized"] = True
        return skip(rel or ".", "unreadable")
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
            report["oversized"] = True; skip(r, "unreadable"); continue
        if stat.S_ISDIR(st.st_mode):
            if not in_git and name in DERIVED_DIRS:
                shutil.rmtree(full, ignore_errors=True); report["removed"] += 1; continue
            walk(full, r, in_git or (rel == "" and name == ".git"), depth + 1)
        elif stat.S_ISREG(st.st_mode):
            if not in_git and name.endswith((".pyc", ".pyo")):
                try: os.remove(full); report["removed"] += 1
                except OSError: pass
                continue
            if st.st_size > file_cap:
                skip(r, "huge"); report["oversized"] = True; continue
            if state["total"] + st.st_size > cap:
                report["oversized"] = True; continue
            try:
                fd = os.open(full, os.O_RDONLY | os.O_NOFOLLOW | os.O_NONBLOCK)
            except OSError:
                report["oversized"] = True; skip(r, "unreadable"); continue
            with os.fdopen(fd, "rb") as f:
                if not stat.S_ISREG(os.fstat(f.fileno()).st_mode):
                    skip(r, "special"); continue
                data = f.read(file_cap + 1)
            if len(data) > file_cap:
                skip(r, "huge"); report["oversized"] = True; continue
            state["total"] += len(data)
            info = tarfile.TarInfo("t/" + r)
            info.size = len(data)
            info.mode = 0o755 if st.st_mode & 0o111 else 0o644
            tar.addfile(info, io.BytesIO(data))
        elif stat.S_ISLNK(st.st_mode):
            try: target = os.readlink(full)
            except OSError: target = ""
            skip(r, "symlink", target[:500])
        else:
            skip(r, "special")
try:
    st = os.lstat(repo)
    if stat.S_ISDIR(st.st_mode):
        report["present"] = True
        walk(repo, "", False, 0)
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
