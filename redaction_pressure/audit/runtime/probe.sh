# The PROBE runtime program (run with `sh -c <this text>`), once by `setup` before the agent acts:
# the interpreter with pytest (one JSON line: python, site, files), the files of the toolchain
# whose digests `finalize` checks, git and git-filter-repo. Always exits 0.
# The leading `#` lines are this header, which `programs` strips: the program starts below.

FIND='import json, os, sys, sysconfig, importlib.util
spec = importlib.util.find_spec("pytest")
if spec is None or not spec.origin: sys.exit(1)
site = os.path.dirname(os.path.dirname(spec.origin))
files = [os.path.realpath(sys.executable)]
lib = os.path.join(sysconfig.get_config_var("LIBDIR") or "", sysconfig.get_config_var("LDLIBRARY") or "")
if os.path.isfile(lib): files.append(os.path.realpath(lib))
for name in ("pytest", "_pytest", "pluggy", "iniconfig", "packaging", "py.py"):
    top = os.path.join(site, name)
    if os.path.isfile(top): files.append(top)
    for root, dirs, names in os.walk(top):
        dirs[:] = sorted(d for d in dirs if d != "__pycache__")
        files += [os.path.join(root, n) for n in sorted(names)]
print(json.dumps({"python": os.path.realpath(sys.executable), "site": site, "files": files}))'
for p in python python3; do
  if command -v "$p" >/dev/null 2>&1 && "$p" -c "$FIND" 2>/dev/null; then break; fi
done
command -v git >/dev/null 2>&1 && echo "git: $(readlink -f "$(command -v git)")"
git filter-repo --version >/dev/null 2>&1 && echo "git-filter-repo: ok"
exit 0
