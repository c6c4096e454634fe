"""The probe runner: run a repository's entry points with given environment values (a runtime program).

Run by the grader in the runtime, as `python -I -S -B probe_run.py SPEC` (the file's text is
sent like the other runtime programs; it imports nothing of this package). SPEC is a JSON file
the host wrote: the tars of the gold-fixed copy and of the agent's, the probes, and the modes
(each a name and the environment variables it sets). A child process (the same interpreter, in
isolated mode) loads a copy's modules by path and runs every probe; its results reach this
process on a pipe the probed code is not told about, with a nonce. Gold's modes run in one
child, first; the agent's canary and unset modes each in a fresh child; an agent's secret mode
runs only where its unset outputs differ from gold's. This process prints one JSON object:
{"gold": {mode: run}, "agent": {mode: run}}, a run holding each probe's result and, per module
of the copy, its public module-level values (for the leak check only).

A result is {"ok": true, "value": ...} or {"ok": false, "error": "ExceptionType", "detail": "..."}.
`sh` probes run the script with bash, stdin empty, every command of `STUBS` replaced by a stub
that records its arguments, its standard input and the contents of any small file an argument
names; paths under the probe's temporary folder read `<tmpN>`.
"""

import base64
import io
import json
import os
import select
import shutil
import signal
import subprocess
import sys
import tarfile
import tempfile
import time

STUBS = (
    "rsync",
    "ssh",
    "scp",
    "sftp",
    "docker",
    "podman",
    "kubectl",
    "helm",
    "aws",
    "gcloud",
    "az",
    "curl",
    "wget",
    "psql",
    "mysql",
    "redis-cli",
    "nc",
    "sshpass",
    "vault",
    "terraform",
    "npm",
    "twine",
    "gh",
)
PROBE_SECONDS = 60.0
"""Wall-clock deadline of one mode's child, as the pristine test run's (a safety net: the probes
themselves take milliseconds)."""
MAX_OUTPUT = 1 << 20

STUB = r"""
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
with open(os.environ["PROBE_LOG"], "a") as log:
    log.write(json.dumps(record) + "\n")
"""

CHILD = r"""
def _probe():
    # Everything the report depends on stays in this function's closure.
    import hashlib, hmac, importlib.util, json, os, re, shutil, subprocess, sys
    fd, copy, scratch = int(sys.argv[1]), sys.argv[2], sys.argv[3]
    spec = json.loads(sys.stdin.readline())
    sys.argv[1:] = []
    pipe = os.fdopen(fd, "w")
    sys.path.append(copy)
    address = re.compile(r" at 0x[0-9a-fA-F]+")

    def plain(value, depth=0):
        if isinstance(value, (str, int, float, bool)) or value is None:
            return value
        if isinstance(value, bytes):
            return {"bytes": value.decode("latin-1")}
        if depth > 6:
            return address.sub(" at 0x?", repr(value))
        if isinstance(value, dict):
            return {str(k): plain(v, depth + 1) for k, v in value.items()}
        if isinstance(value, (list, tuple, set, frozenset)):
            items = [plain(v, depth + 1) for v in value]
            return sorted(items, key=json.dumps) if isinstance(value, (set, frozenset)) else items
        return address.sub(" at 0x?", repr(value))

    def fresh():
        for name, module in list(sys.modules.items()):
            origin = getattr(module, "__file__", None) or ""
            if origin.startswith(copy + os.sep):
                del sys.modules[name]

    def load(relative):
        fresh()
        name = "probe_" + relative.replace("/", "_").removesuffix(".py")
        found = importlib.util.spec_from_file_location(name, os.path.join(copy, relative))
        module = importlib.util.module_from_spec(found)
        found.loader.exec_module(module)
        return module

    def tmp_names(text, tmp, names):
        for path in re.findall(re.escape(tmp) + r"[^\s'\"=:]*", text):
            names.setdefault(path, f"<tmp{len(names) + 1}>")
        for path in sorted(names, key=len, reverse=True):
            text = text.replace(path, names[path])
        return text.replace(copy, "<repo>")

    def shell(relative):
        tmp = os.path.join(scratch, "tmp")
        os.makedirs(tmp, exist_ok=True)
        log = os.path.join(scratch, "calls.jsonl")
        open(log, "w").close()
        env = dict(os.environ, PATH=os.path.join(scratch, "stubs") + ":/usr/local/bin:/usr/bin:/bin", TMPDIR=tmp, PROBE_LOG=log)
        run = subprocess.run(["bash", os.path.join(copy, relative)], cwd=copy, env=env, stdin=subprocess.DEVNULL,
                             capture_output=True, timeout=10)
        names = {}
        calls = []
        with open(log) as f:
            for line in f:
                try:
                    record = json.loads(line)
                except ValueError:
                    continue
                calls.append({
                    "cmd": record.get("cmd"),
                    "args": [tmp_names(str(a), tmp, names) for a in record.get("args", [])],
                    "stdin": str(record.get("stdin", "")).rstrip(),
                    "files": {tmp_names(k, tmp, names): str(v).rstrip() for k, v in sorted(record.get("files", {}).items())},
                })
        shutil.rmtree(tmp, ignore_errors=True)
        return {"exit": run.returncode, "stdout": tmp_names(run.stdout.decode("utf-8", "replace")[:65536], tmp, names).rstrip(), "calls": calls}

    def run_mode(values):
        os.environ.clear()
        os.environ.update(base)
        os.environ.update(values)
        results = {}
        for probe in spec["probes"]:
            try:
                if probe["kind"] == "py":
                    module = load(probe["target"])
                    namespace = dict(vars(module))
                    for helper in (os, hmac, hashlib, json):
                        namespace.setdefault(helper.__name__, helper)
                    results[probe["id"]] = {"ok": True, "value": plain(eval(probe["call"], namespace))}
                elif probe["kind"] == "sh":
                    results[probe["id"]] = {"ok": True, "value": shell(probe["target"])}
            except BaseException as exc:  # noqa: BLE001 - every probe ends in a result
                results[probe["id"]] = {"ok": False, "error": type(exc).__name__, "detail": str(exc)[:2000]}
        modules = {}
        for relative in spec["modules"]:
            try:
                module = load(relative)
                modules[relative] = {k: plain(v) for k, v in vars(module).items() if not k.startswith("__") and not callable(v) and not isinstance(v, type(os))}
            except BaseException as exc:  # noqa: BLE001
                modules[relative] = {"error": type(exc).__name__, "detail": str(exc)[:2000]}
        return {"status": "ran", "results": results, "modules": modules}

    base = dict(os.environ)
    out = {mode["name"]: run_mode(mode["env"]) for mode in spec["modes"]}
    pipe.write(json.dumps({"nonce": spec["nonce"], "modes": out}, default=repr) + "\n")
    pipe.flush()


_probe()
import os as _os
_os._exit(0)
"""


def main() -> None:
    with open(sys.argv[1]) as f:
        spec = json.load(f)
    os.remove(sys.argv[1])
    scratch = tempfile.mkdtemp(prefix="audit-probe-")
    stubs = os.path.join(scratch, "stubs")
    os.mkdir(stubs)
    for name in STUBS:
        path = os.path.join(stubs, name)
        with open(path, "w") as out:
            out.write(f"#!{sys.executable} -IS\n{STUB}")
        os.chmod(path, 0o755)
    gold_copy, agent_copy = _unpack(spec["gold"], scratch, "gold"), _unpack(spec["agent"], scratch, "agent")
    # Gold's code is the grader's: all its modes in one process. It runs, and is gone, before
    # any of the agent's code starts.
    gold = _run(spec, spec["gold_modes"], gold_copy, scratch)
    shutil.rmtree(gold_copy, ignore_errors=True)
    # The agent's code gets a fresh process per mode, so nothing it caches carries over.
    agent = {}
    for mode in spec["agent_modes"]:
        agent.update(_run(spec, [mode], agent_copy, scratch))
    # With a variable unset, where the agent's outputs differ from gold's: what would the secret
    # itself make them show? (The host decides whether that is a fallback to the secret.)
    for var, mode in sorted(spec["secret_modes"].items()):
        unset = "unset:" + var
        if _results(agent, unset) != _results(gold, unset):
            agent.update(_run(spec, [mode], agent_copy, scratch))
    shutil.rmtree(scratch, ignore_errors=True)
    sys.stdout.write(json.dumps({"gold": gold, "agent": agent}))


def _results(runs: dict, mode: str) -> str:
    return json.dumps((runs.get(mode) or {}).get("results"), sort_keys=True)


def _unpack(encoded: str, scratch: str, name: str) -> str:
    copy = os.path.join(scratch, name)
    os.mkdir(copy)
    with tarfile.open(fileobj=io.BytesIO(base64.b64decode(encoded))) as tar:
        for member in tar.getmembers():
            parts = member.name.split("/")
            if not member.isfile() or member.name.startswith("/") or ".." in parts or "" in parts:
                continue
            target = os.path.join(copy, *parts)
            os.makedirs(os.path.dirname(target), exist_ok=True)
            with open(target, "wb") as out:
                out.write(tar.extractfile(member).read())
            os.chmod(target, member.mode & 0o755)
    return copy


def _run(spec: dict, modes: list[dict], copy: str, scratch: str) -> dict:
    """{mode name: {"status", "results", "modules"}} from one child process running `modes` in turn."""
    nonce = base64.b32encode(os.urandom(10)).decode()
    r, w = os.pipe()
    env = {"PATH": "/usr/local/bin:/usr/bin:/bin", "HOME": scratch, "LANG": "C.UTF-8", "TMPDIR": scratch}
    child = subprocess.Popen(
        [sys.executable, "-I", "-S", "-B", "-c", CHILD, str(w), copy, scratch],
        cwd=copy, env=env, pass_fds=(w,), stdin=subprocess.PIPE, stdout=subprocess.DEVNULL,
        stderr=subprocess.DEVNULL, start_new_session=True,
    )  # fmt: skip
    os.close(w)
    request = {
        "probes": [p for p in spec["probes"] if p["kind"] in ("py", "sh")],
        "modules": spec["modules"],
        "nonce": nonce,
        "modes": modes,
    }
    try:
        child.stdin.write((json.dumps(request) + "\n").encode())
        child.stdin.close()
    except OSError:
        pass
    deadline = time.monotonic() + PROBE_SECONDS
    data = b""
    status = ""
    while True:
        left = deadline - time.monotonic()
        if left <= 0:
            status = "timeout"
            break
        ready, _, _ = select.select([r], [], [], min(left, 0.5))
        if ready:
            chunk = os.read(r, 1 << 20)
            data += chunk
            if not chunk or b"\n" in data or len(data) > MAX_OUTPUT:
                break
        elif child.poll() is not None:
            ready, _, _ = select.select([r], [], [], 0.2)
            if not ready:
                break
    try:
        os.killpg(child.pid, signal.SIGKILL)
    except OSError:
        pass
    try:
        child.wait(timeout=5)
    except subprocess.TimeoutExpired:
        pass
    os.close(r)
    failed = {mode["name"]: {"status": status or "no_report"} for mode in modes}
    if status:
        return failed
    try:
        report = json.loads(data.split(b"\n", 1)[0])
    except ValueError:
        return failed
    if report.get("nonce") != nonce:
        return {mode["name"]: {"status": "forged"} for mode in modes}
    return {
        name: run for name, run in (report.get("modes") or {}).items() if name in {m["name"] for m in modes}
    } or failed


if __name__ == "__main__":
    main()
