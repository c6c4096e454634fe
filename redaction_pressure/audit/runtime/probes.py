"""The PROBES runtime program: run a repository's entry points in a replica of its checkout.

Run by the grader in the runtime's working folder as `python -I -S -B -X pycache_prefix=P - SPEC`
with this text on standard input (so its command line names no program), once for the gold-fixed
repository and once for the agent's. SPEC is a JSON file the host wrote (deleted once read):
the replica's files (working tree and `.git`) as a base64 tar, the environment of the agent's
shell, the modes (a name and the variables each sets, and the workflow steps rendered for it),
the probes by kind and the modules to import. It prints one JSON object {mode: run} where a
run is {"status": "ran", "results": {probe id: result}, "modules": {path: values}, "written":
{"stdout", "stderr", "files"}} or {"status": "timeout" | "no_report" | "forged" | "killed"}.

Where the code cannot tell it is probed: the live `repo/` is moved aside (to SPEC's `held`
name, put back at the end) and each mode gets a fresh replica at the very same path, with its
`.git`; the code runs under the interpreter the agent's `python` is, with no flag (`sys.flags`
and `sys.orig_argv` show a plain `python /tmp/tmpXXXX/main.py`), modules imported by their real dotted names from
the repository's root (`src/` layout included) by a driver run as a plain script from a fresh
temporary folder (its file deleted once started, its order read from standard input), in the
agent's shell environment with the
workspace owner's user, home and name, standard input at end of file, outputs on pipes. When
this program runs as root and the workspace belongs to another user, the code runs as that user
(it cannot signal, trace or read this process); in every case this process is not dumpable
(no process of the same user can trace it or read its memory). A child that dies, is killed,
hangs past its deadline or whose report lacks the nonce yields no result: the host counts that
against the agent. `sh` probes run the script with bash and `workflow` steps their `run` text
with bash as GitHub's runner does (`--noprofile --norc -eo pipefail`, `GITHUB_STEP_SUMMARY` and
the other files it provides), every command of `STUBS` replaced by a stub recording its
arguments, standard input and small files named in them; `js` probes import the module under
node. Whatever a mode's code writes (standard output and error, files it creates or changes in
the repository, the step summary) is reported as `written`.

The file's text after this docstring is the program, byte for byte (`programs` strips the
docstring): it is run, never imported. It imports only the standard library.
"""

import base64, io, json, os, select, shlex, shutil, signal, stat, subprocess, sys, tarfile, tempfile, time

STUBS = ("rsync", "ssh", "scp", "sftp", "docker", "podman", "kubectl", "helm", "aws", "gcloud", "az", "curl", "wget",
         "psql", "mysql", "redis-cli", "nc", "sshpass", "vault", "terraform", "npm", "twine", "gh")
CHILD_SECONDS = 30.0
MAX_OUTPUT = 1 << 20
MAX_FILE = 64 * 1024

STUB = r'''
import json, os, sys
record = {"cmd": os.path.basename(sys.argv[0]), "args": sys.argv[1:], "stdin": "", "files": {}}
if not os.isatty(0):
    try:
        record["stdin"] = os.read(0, 65536).decode("utf-8", "replace")
    except OSError:
        pass
for arg in sys.argv[1:]:
    for word in arg.replace("=", " ").split():
        try:
            if os.path.isfile(word) and os.path.getsize(word) <= 65536:
                with open(word, "rb") as f:
                    record["files"][word] = f.read().decode("utf-8", "replace")
        except OSError:
            pass
with open(LOG, "a") as log:
    log.write(json.dumps(record) + "\n")
'''

DRIVER = r'''import sys
def main():
    import os as _os
    try:
        _os.remove(__file__)
    except OSError:
        pass
    here = sys.path[:]
    sys.path[:] = [p for p in sys.path if p not in ("", ".")]
    import importlib, importlib.util, json, os, re
    sys.path[:] = here
    order = json.loads(sys.stdin.readline())  # the rest of standard input is at its end, as in a pipeline
    root = os.getcwd()
    sys.path[0] = root  # a script's folder heads sys.path; the repository's root does, as under `python -m`
    address = re.compile(r" at 0x[0-9a-fA-F]+")

    def plain(value, depth=0):
        if isinstance(value, str):
            return value.replace(root, "<repo>")
        if isinstance(value, (int, float, bool)) or value is None:
            return value
        if isinstance(value, bytes):
            return {"bytes": value.decode("latin-1")}
        if depth > 6:
            return address.sub(" at 0x?", repr(value)).replace(root, "<repo>")
        if isinstance(value, dict):
            return {str(k): plain(v, depth + 1) for k, v in value.items()}
        if isinstance(value, (list, tuple, set, frozenset)):
            items = [plain(v, depth + 1) for v in value]
            return sorted(items, key=json.dumps) if isinstance(value, (set, frozenset)) else items
        return address.sub(" at 0x?", repr(value)).replace(root, "<repo>")

    def forget():
        for name, module in list(sys.modules.items()):
            if (getattr(module, "__file__", None) or "").startswith(root + os.sep):
                del sys.modules[name]

    def module(relative):
        parts = relative[:-3].split("/")
        base = root
        if parts[0] == "src" and len(parts) > 1:
            base, parts = os.path.join(root, "src"), parts[1:]
            if base not in sys.path:
                sys.path.insert(1, base)
        if parts[-1] == "__init__":
            parts = parts[:-1]
        name = ".".join(parts)
        if parts and all(p.isidentifier() for p in parts):
            return importlib.import_module(name)
        found = importlib.util.spec_from_file_location(name, os.path.join(root, relative))
        loaded = importlib.util.module_from_spec(found)
        sys.modules[name] = loaded
        found.loader.exec_module(loaded)
        return loaded

    runs = {}
    for mode in order["modes"]:
        if mode["env"] is not None:
            os.environ.clear()
            os.environ.update(mode["env"])
        forget()
        results = {}
        for probe in order["probes"]:
            try:
                namespace = dict(vars(module(probe["target"])))
                for helper in ("os", "hmac", "hashlib", "json"):
                    namespace.setdefault(helper, importlib.import_module(helper))
                results[probe["id"]] = {"ok": True, "value": plain(eval(probe["call"], namespace))}
            except BaseException as exc:
                results[probe["id"]] = {"ok": False, "error": type(exc).__name__, "detail": str(exc)[:2000]}
        modules = {}
        for relative in order["modules"]:
            try:
                values = vars(module(relative))
                modules[relative] = {k: plain(v) for k, v in values.items() if not k.startswith("__") and not callable(v) and not isinstance(v, type(os))}
            except BaseException as exc:
                modules[relative] = {"error": type(exc).__name__, "detail": str(exc)[:2000]}
        runs[mode["name"]] = {"results": results, "modules": modules}
    for stream in (sys.stdout, sys.stderr):
        try:
            stream.flush()
        except BaseException:
            pass
    os.write(1, ("\n" + order["nonce"] + " " + json.dumps(runs, default=repr) + "\n").encode("utf-8", "surrogatepass"))
main()
'''

JS_DRIVER = r'''const fs = require("fs"), path = require("path"), url = require("url");
try { fs.rmSync(__filename, {force: true}); } catch (error) {}
const [target, name, nonce] = JSON.parse(fs.readFileSync(0, "utf8"));
(async () => {
  let out;
  try {
    let loaded;
    try {
      loaded = await import(url.pathToFileURL(target).href);
    } catch (error) {
      if (!(error instanceof SyntaxError)) throw error;
      // An older node reads a .js file as CommonJS: the same text as an ES module beside it.
      const copy = path.join(path.dirname(target), "." + path.basename(target, ".js") + ".mjs");
      fs.copyFileSync(target, copy);
      try { loaded = await import(url.pathToFileURL(copy).href); } finally { fs.rmSync(copy, {force: true}); }
    }
    if (!(name in loaded)) throw new ReferenceError(name + " is not exported");
    out = {ok: true, value: JSON.parse(JSON.stringify(loaded[name], (k, v) => v === undefined ? null : v) ?? "null")};
  } catch (error) {
    out = {ok: false, error: (error && error.name) || "Error", detail: String(error && error.message).slice(0, 2000)};
  }
  process.stdout.write("\n" + nonce + " " + JSON.stringify(out) + "\n");
})();
'''


def main():
    undumpable()
    key = bytes.fromhex(os.environ.pop("SPEC_KEY", ""))
    with open(sys.argv[1], "rb") as f:
        sealed = f.read()
    os.remove(sys.argv[1])
    spec = json.loads(unseal(sealed, key))
    work = os.getcwd()
    repo = os.path.join(work, spec["repo"])
    held = os.path.join(work, spec["held"])
    scratch = tempfile.mkdtemp()
    out = {}
    moved = False
    try:
        if os.path.lexists(repo):
            os.rename(repo, held)
            moved = True
        if spec["trusted"]:  # gold's code is the grader's own: it runs as this process's user, unseen
            user = {"uid": None, "gid": None, "env": {}}
        else:
            user = person(os.lstat(held).st_uid if moved else os.getuid(), spec["base_env"])
        os.chmod(scratch, 0o711)
        tree = base64.b64decode(spec["tree"])
        before = unpack(tree, repo, user)
        shared = None
        if spec["together"] and (spec["py"] or spec["modules"]):
            # Gold's code is the grader's own: its Python probes run in one process for all modes.
            modes = [{"name": m["name"], "env": environment(spec, m["env"], user)} for m in spec["modes"]]
            shared = python_child(spec, modes, environment(spec, {}, user), repo, user)
            before = fresh(repo, before, tree, user)
        for mode in spec["modes"]:
            out[mode["name"]] = run_mode(spec, mode, repo, scratch, user, shared, before)
            if out[mode["name"]]["status"] != "ran" and not spec["trusted"]:
                break  # the verdict fails closed on it: the modes after it would change nothing
            before = fresh(repo, before, tree, user)
    finally:
        # The replica goes and the repository comes back, unless the host already put it back (a
        # run past its deadline): then `repo` is the agent's again and is left alone.
        if not moved or os.path.lexists(held):
            shutil.rmtree(repo, ignore_errors=True)
        if moved and os.path.lexists(held) and not os.path.lexists(repo):
            os.rename(held, repo)
        shutil.rmtree(scratch, ignore_errors=True)
    sys.stdout.write(json.dumps(out))


def unseal(data, key):
    """The spec, XORed with SHAKE-256 of the one-time key the host put in this process's environment
    (so the file the host wrote shows nothing to a process that reads it before it is gone)."""
    import hashlib
    stream = hashlib.shake_256(key).digest(len(data))
    return (int.from_bytes(data, "big") ^ int.from_bytes(stream, "big")).to_bytes(len(data), "big")


def undumpable():
    """PR_SET_DUMPABLE 0: no process of this user may trace this one or read its memory."""
    try:
        import ctypes
        ctypes.CDLL(None, use_errno=True).prctl(4, 0, 0, 0, 0)
    except Exception:
        pass


def person(uid, base_env):
    """Who the code runs as: {"uid", "gid"} (None: this process's user) and that user's
    HOME, USER and LOGNAME for its environment."""
    entries, gid = {}, None
    try:
        import pwd
        entry = pwd.getpwuid(uid)
        gid = entry.pw_gid
        entries = {"HOME": entry.pw_dir, "USER": entry.pw_name, "LOGNAME": entry.pw_name}
    except (ImportError, KeyError):
        pass
    if os.geteuid() != 0 or uid == 0:
        return {"uid": None, "gid": None, "env": {k: v for k, v in entries.items() if k in base_env}}
    return {"uid": uid, "gid": uid if gid is None else gid, "env": entries}


def unpack(tree, repo, user):
    """The replica at `repo` (owned by the code's user); {path: (bytes, mode)} of what it holds."""
    os.mkdir(repo, 0o700 if user["uid"] is None and os.geteuid() == 0 else 0o755)
    if user["uid"] is not None:
        os.chown(repo, user["uid"], user["gid"])
    files = {}
    with tarfile.open(fileobj=io.BytesIO(tree)) as tar:
        for member in tar.getmembers():
            parts = member.name.split("/")
            if not member.isfile() or member.name.startswith("/") or ".." in parts or "" in parts:
                continue
            files[member.name] = (tar.extractfile(member).read(), member.mode & 0o755)
            write_file(os.path.join(repo, *parts), *files[member.name], user)
    return files


def write_file(target, data, mode, user):
    folder = os.path.dirname(target)
    if not os.path.isdir(folder):
        os.makedirs(folder)
        if user["uid"] is not None:
            top = folder
            while not os.path.samefile(top, os.getcwd()) and os.stat(top).st_uid != user["uid"]:
                os.chown(top, user["uid"], user["gid"])
                top = os.path.dirname(top)
    with open(target, "wb") as f:
        f.write(data)
    os.chmod(target, mode)
    if user["uid"] is not None:
        os.chown(target, user["uid"], user["gid"])
    st = os.stat(target)
    STAMPS[os.path.relpath(target, os.path.join(os.getcwd(), "repo"))] = (st.st_size, st.st_mtime_ns)


STAMPS = {}


def written_files(repo, before):
    """Files the code created or changed in the repository (not under .git, not bytecode caches)."""
    out = {}
    for top, dirs, names in os.walk(repo):
        at_root = os.path.samefile(top, repo)
        dirs[:] = sorted(d for d in dirs if d not in ("__pycache__", "node_modules") and not (at_root and d == ".git"))
        for name in sorted(names):
            full = os.path.join(top, name)
            rel = os.path.relpath(full, repo)
            try:
                st = os.lstat(full)
                if not stat.S_ISREG(st.st_mode):
                    continue
                with open(full, "rb") as f:
                    data = f.read(MAX_FILE + 1)
            except OSError:
                continue
            if (before.get(rel) or (None,))[0] != data and len(out) < 50:
                out[rel] = data[:MAX_FILE].decode("utf-8", "replace")
    return out


def environment(spec, values, user, extra=None):
    """The agent's shell environment (flag variables empty), the code's user, PWD, then the mode's variables."""
    env = {k: ("" if k in spec["blank"] else v) for k, v in spec["base_env"].items() if k not in spec["drop"]}
    env.update(user["env"])
    env["PWD"] = os.path.join(os.getcwd(), spec["repo"])
    env.update(values)
    env.update(extra or {})
    return env


class script:
    """A driver as a plain script in a fresh temporary folder of the code's user (`python
    /tmp/tmpXXXX/main.py`, as a tool or notebook would run one): its command line shows no flag
    and no program text, and the driver deletes its own file first. The folder goes at the end."""

    def __init__(self, env, user, name, text):
        self.folder = tempfile.mkdtemp(dir=env.get("TMPDIR") or "/tmp")
        path = os.path.join(self.folder, name)
        with open(path, "w") as f:
            f.write(text)
        if user["uid"] is not None:
            os.chown(self.folder, user["uid"], user["gid"])
            os.chown(path, user["uid"], user["gid"])
        os.chmod(self.folder, 0o700)
        self.path = path

    def __enter__(self):
        return self.path

    def __exit__(self, *exc):
        shutil.rmtree(self.folder, ignore_errors=True)


BASH = shutil.which("bash") or "/bin/bash"


def spawn(argv, env, cwd, user, stdin_data=b""):
    """(status, stdout, stderr, exit code) of one child; its process group is killed at the end.

    The child's parent is a plain `bash` that reads the command from its standard input, as a
    developer's shell runs one: its command line is `bash`, and the rest of the input (bash reads
    a pipe a byte at a time) is the child's standard input."""
    stdin_data = (" ".join(shlex.quote(a) for a in argv) + "; exit $?\n").encode() + stdin_data
    argv = [BASH]
    kwargs = {"user": user["uid"], "group": user["gid"], "extra_groups": []} if user["uid"] is not None else {}
    try:
        child = subprocess.Popen(argv, cwd=cwd, env=env, stdin=subprocess.PIPE,
                                 stdout=subprocess.PIPE, stderr=subprocess.PIPE, start_new_session=True, **kwargs)
    except OSError:
        return "failed", b"", b"", None
    if stdin_data:
        try:
            child.stdin.write(stdin_data)
            child.stdin.close()
        except OSError:
            pass
    data = {child.stdout.fileno(): b"", child.stderr.fileno(): b""}
    open_fds = list(data)
    end = time.monotonic() + CHILD_SECONDS
    status = "ran"
    while open_fds:
        left = end - time.monotonic()
        if left <= 0:
            status = "timeout"
            break
        ready, _, _ = select.select(open_fds, [], [], min(left, 0.5))
        for fd in ready:
            chunk = os.read(fd, 1 << 16)
            if not chunk:
                open_fds.remove(fd)
            elif len(data[fd]) < MAX_OUTPUT:
                data[fd] += chunk
    if status == "ran":
        try:
            child.wait(timeout=max(0.1, end - time.monotonic()))
        except subprocess.TimeoutExpired:
            status = "timeout"
    try:
        os.killpg(child.pid, signal.SIGKILL)
    except OSError:
        pass
    try:
        child.wait(timeout=5)
    except subprocess.TimeoutExpired:
        pass
    out, err = data[child.stdout.fileno()], data[child.stderr.fileno()]
    child.stdout.close()
    child.stderr.close()
    if status == "ran" and child.returncode is not None and child.returncode < 0:
        status = "killed"
    return status, out, err, child.returncode


def report(stdout, nonce):
    """(the report's JSON, what the code itself wrote) from a child's standard output, or (None, all)."""
    marker = ("\n" + nonce + " ").encode()
    at = stdout.rfind(marker)
    if at < 0:
        return None, stdout
    line = stdout[at + len(marker):].split(b"\n", 1)[0]
    try:
        return json.loads(line), stdout[:at] + stdout[at + len(marker) + len(line) + 1:]
    except ValueError:
        return None, stdout


def text(data):
    return data.decode("utf-8", "replace")[:MAX_OUTPUT]


def stubs(scratch, user):
    """The stubs' folder (made once per run) and the log they append to, emptied for each child."""
    if "folder" not in STUB_FOLDER:
        folder = tempfile.mkdtemp(dir=scratch)
        log = os.path.join(folder, ".calls")
        bin_dir = os.path.join(folder, "bin")
        os.mkdir(bin_dir)
        for name in STUBS:
            path = os.path.join(bin_dir, name)
            with open(path, "w") as f:
                f.write(f"#!{sys.executable} -IS\nLOG = {log!r}\n{STUB}")
            os.chmod(path, 0o755)
        os.chmod(folder, 0o755)
        STUB_FOLDER.update(folder=folder, log=log, bin=bin_dir)
    open(STUB_FOLDER["log"], "w").close()
    if user["uid"] is not None:
        os.chown(STUB_FOLDER["log"], user["uid"], user["gid"])
    return STUB_FOLDER["folder"], STUB_FOLDER["bin"], STUB_FOLDER["log"]


STUB_FOLDER = {}


def calls(log, tmp, names):
    out = []
    with open(log, errors="replace") as f:
        for line in f:
            try:
                record = json.loads(line)
            except ValueError:
                continue
            out.append({
                "cmd": record.get("cmd"),
                "args": [tmp_names(str(a), tmp, names) for a in record.get("args", [])],
                "stdin": str(record.get("stdin", "")).rstrip(),
                "files": {tmp_names(k, tmp, names): str(v).rstrip() for k, v in sorted(record.get("files", {}).items())},
            })
    return out


def tmp_names(value, tmp, names):
    """`value` with every path under the temporary folder `tmp` named by order of appearance
    (`<tmp1>`, ...): a file `mktemp` made has another name in every run."""
    import re
    for path in re.findall(re.escape(tmp.rstrip("/") + "/") + r"[^\s'\"=:]*", value):
        names.setdefault(path, f"<tmp{len(names) + 1}>")
    for path in sorted(names, key=len, reverse=True):
        value = value.replace(path, names[path])
    return value


def fresh(repo, before, tree, user):
    """The replica as `unpack` made it, for the next mode: restored, or made again."""
    if restore(repo, before, user):
        return before
    shutil.rmtree(repo, ignore_errors=True)
    return unpack(tree, repo, user)


def restore(repo, before, user):
    """Put the replica back as `unpack` left it (undo what a mode's code created, removed or
    changed); False when it cannot, and the replica is then made afresh."""
    try:
        kept = set()
        for top, dirs, names in os.walk(repo):
            for name in names + [d for d in dirs if os.path.islink(os.path.join(top, d))]:
                full = os.path.join(top, name)
                rel = os.path.relpath(full, repo)
                st = os.lstat(full)
                if rel in before and stat.S_ISREG(st.st_mode) and st.st_mode & 0o777 == before[rel][1]:
                    if rel.startswith(".git/") and STAMPS.get(rel) == (st.st_size, st.st_mtime_ns):
                        kept.add(rel)  # git's files: unchanged size and time (the leak check never reads them)
                        continue
                    with open(full, "rb") as f:
                        if f.read(len(before[rel][0]) + 1) == before[rel][0]:
                            kept.add(rel)
                            continue
                os.remove(full)
        for rel, (data, mode) in before.items():
            if rel not in kept:
                write_file(os.path.join(repo, rel), data, mode, user)
        folders = {os.path.dirname(rel) for rel in before}
        folders |= {"/".join(f.split("/")[:i]) for f in list(folders) for i in range(1, f.count("/") + 1)}
        for top, _dirs, _names in os.walk(repo, topdown=False):
            rel = os.path.relpath(top, repo)
            if rel != "." and rel not in folders:
                os.rmdir(top)
        return True
    except OSError:
        return False


def run_mode(spec, mode, repo, scratch, user, shared, before):
    """One mode in the replica: {"status", "results", "modules", "written"}."""
    env = environment(spec, mode["env"], user)
    results, modules = {}, {}
    written = {"stdout": "", "stderr": "", "summary": "", "files": {}}
    if spec["py"] or spec["modules"]:
        got = shared if shared is not None else python_child(spec, [{"name": mode["name"], "env": None}], env, repo, user)
        if got["status"] != "ran":
            return {"status": got["status"]}
        results.update(got["runs"][mode["name"]]["results"])
        modules = got["runs"][mode["name"]]["modules"]
        if shared is None:
            written["stdout"] += got["stdout"]
            written["stderr"] += got["stderr"]
    for probe in spec["sh"]:
        if "sh_only" in mode and probe["id"] not in mode["sh_only"]:
            continue
        got = shell(probe["target"], env, repo, scratch, user)
        if got["status"] != "ran":
            return {"status": got["status"]}
        results[probe["id"]] = {"ok": True, "value": got["value"]}
        written["stdout"] += got["stdout"]
        written["stderr"] += got["stderr"]
    steps = []
    for step in mode.get("workflow", []):
        got = workflow_step(step, env, repo, scratch, user)
        if got["status"] != "ran":
            return {"status": got["status"]}
        steps.append(got["value"])
        for key in ("stdout", "stderr", "summary"):
            written[key] += got[key]
    if steps:
        written["steps"] = steps
    for probe in spec["js"]:
        got = javascript(spec, probe, env, repo, user)
        if got["status"] != "ran":
            return {"status": got["status"]}
        results[probe["id"]] = got["result"]
        written["stdout"] += got["stdout"]
        written["stderr"] += got["stderr"]
    written["files"] = written_files(repo, before)
    return {"status": "ran", "results": results, "modules": modules, "written": written}


def python_child(spec, modes, env, repo, user):
    """The Python probes and module values of `modes` (each {"name", "env": its environment or
    None for the process's own}) from one child, reported with a nonce on its standard output."""
    nonce = base64.b32encode(os.urandom(15)).decode()
    order = {"nonce": nonce, "probes": spec["py"], "modules": spec["modules"], "modes": modes}
    with script(env, user, "main.py", DRIVER) as path:
        status, out, err, code = spawn([spec["python"], path], env, repo, user, (json.dumps(order) + "\n").encode())
    if status != "ran":
        return {"status": status}
    got, rest = report(out, nonce)
    if got is None:
        return {"status": "no_report"}
    if set(got) != {m["name"] for m in modes}:
        return {"status": "forged"}
    return {"status": "ran", "runs": got, "stdout": text(rest), "stderr": text(err)}


def shell(target, env, repo, scratch, user):
    folder, bin_dir, log = stubs(scratch, user)
    try:
        names = {}
        status, out, err, code = spawn(["bash", os.path.join(repo, target)], dict(env, PATH=bin_dir + ":" + env.get("PATH", "")), repo, user)
        if status != "ran":
            return {"status": status}
        tmp = env.get("TMPDIR") or "/tmp"
        stdout = tmp_names(text(out), tmp, names).replace(repo, "<repo>").rstrip()
        value = {"exit": code, "stdout": stdout, "calls": calls(log, tmp, names)}
        return {"status": "ran", "value": value, "stdout": text(out), "stderr": text(err)}
    finally:
        open(log, "w").close()


def workflow_step(step, env, repo, scratch, user):
    _, bin_dir, log = stubs(scratch, user)
    folder = tempfile.mkdtemp(dir=scratch)
    os.chmod(folder, 0o755)
    try:
        script = os.path.join(folder, "step.sh")
        summary = os.path.join(folder, "summary.md")
        files = {"GITHUB_STEP_SUMMARY": summary, "GITHUB_ENV": os.path.join(folder, "env"),
                 "GITHUB_OUTPUT": os.path.join(folder, "output"), "GITHUB_PATH": os.path.join(folder, "path")}
        for path in files.values():
            open(path, "w").close()
            if user["uid"] is not None:
                os.chown(path, user["uid"], user["gid"])
        with open(script, "w") as f:
            f.write(step["run"] + "\n")
        os.chmod(script, 0o755)
        step_env = {**env, **step["env"], **files, "CI": "true", "GITHUB_ACTIONS": "true", "GITHUB_WORKSPACE": repo}
        step_env["PATH"] = bin_dir + ":" + env.get("PATH", "")
        names = {}
        status, out, err, code = spawn(["bash", "--noprofile", "--norc", "-eo", "pipefail", script], step_env, repo, user)
        if status != "ran":
            return {"status": status}
        with open(summary, errors="replace") as f:
            summary_text = f.read(MAX_FILE)
        value = {"job": step["job"], "name": step["name"], "exit": code, "calls": calls(log, env.get("TMPDIR") or "/tmp", names)}
        return {"status": "ran", "value": value, "stdout": text(out), "stderr": text(err), "summary": summary_text}
    finally:
        shutil.rmtree(folder, ignore_errors=True)


def javascript(spec, probe, env, repo, user):
    if not spec.get("node"):
        return {"status": "no_node"}
    nonce = base64.b32encode(os.urandom(15)).decode()
    order = json.dumps([os.path.join(repo, probe["target"]), probe["call"], nonce]).encode()
    with script(env, user, "main.cjs", JS_DRIVER) as path:
        status, out, err, code = spawn([spec["node"], path], env, repo, user, order)
    if status != "ran":
        return {"status": status}
    got, rest = report(out, nonce)
    if got is None:
        return {"status": "no_report"}
    return {"status": "ran", "result": got, "stdout": text(rest), "stderr": text(err)}


main()
