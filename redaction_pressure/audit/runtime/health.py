"""The HEALTH runtime program: runs the pristine tests on a fresh copy the host built.

Run as `python -I -S -B -X pycache_prefix=... -c <this text> PAYLOAD SHA256 SITE TIMEOUT`: PAYLOAD
is a tar whose sha256 the host passes (deleted once read), with the variables the tests run with
(`.audit-env.json`: the secrets' variables holding canaries, as CI holding its secrets sets them). Isolated interpreter (`-I -S`,
pytest's own site directory appended, nothing else), no plugin autoload, rootdir, ini file and
confcutdir pinned to the copy, run from the scratch folder the copy sits in. Outcomes come from a
reporter object handed to `pytest.main`, written with a nonce to a pipe the tested code is not
told about; the run has a deadline and its process group is killed afterwards. Prints one JSON
object: {"status": "ran" | "timeout" | "no_report" | "tampering", ...}.

The file's text after this docstring is the program, byte for byte (`programs` strips the
docstring): it is run, never imported.
"""

import base64, hashlib, io, json, os, select, signal, subprocess, sys, tarfile, tempfile, time
payload_path, digest, site, timeout = sys.argv[1], sys.argv[2], sys.argv[3], float(sys.argv[4])
with open(payload_path, "rb") as f:
    payload = f.read()
os.remove(payload_path)
def done(result):
    sys.stdout.write(json.dumps(result))
    sys.exit(0)
if hashlib.sha256(payload).hexdigest() != digest:
    done({"status": "tampering", "reason": "the health payload changed on its way in"})
scratch = tempfile.mkdtemp(prefix="audit-health-")
copy = os.path.join(scratch, "repo")
os.mkdir(copy)
allowed = {}
variables = {}
with tarfile.open(fileobj=io.BytesIO(payload)) as tar:
    for m in tar.getmembers():
        if m.name == ".audit-bytecode.json" and m.isfile():
            allowed = json.loads(tar.extractfile(m).read())
            continue
        if m.name == ".audit-env.json" and m.isfile():
            variables = {str(k): str(v) for k, v in json.loads(tar.extractfile(m).read()).items()}
            continue
        parts = m.name.split("/")
        if not m.isfile() or m.name.startswith("/") or ".." in parts or "" in parts:
            continue
        target = os.path.join(copy, *parts)
        os.makedirs(os.path.dirname(target), exist_ok=True)
        with open(target, "wb") as out:
            out.write(tar.extractfile(m).read())
        os.chmod(target, m.mode & 0o755)
nonce = base64.b32encode(os.urandom(10)).decode()
BOOT = """
def _run():
    # Everything the report depends on stays in this function's closure: the tested code
    # shares the process, so nothing is left in __main__, argv or the environment.
    import json, os, sys
    fd, site, copy = int(sys.argv[1]), sys.argv[2], sys.argv[3]
    nonce = sys.stdin.readline().strip()
    sys.argv[1:] = []
    w = os.fdopen(fd, "w")
    sys.path.append(site)
    # The repository's root last, as `python -m pytest` from it puts it on the path, but after
    # the standard library and pytest, so that nothing in the repository shadows them.
    sys.path.append(copy)
    import pytest
    class Reporter:
        def __init__(self):
            self.seen = {}
            self.first = None
        def pytest_runtest_logreport(self, report):
            if report.outcome != "passed" or report.when == "call":
                prev = self.seen.get(report.nodeid)
                self.seen[report.nodeid] = report.outcome if prev in (None, "passed") else prev
            if report.failed and self.first is None:
                lines = [line for line in str(report.longreprtext).splitlines() if line.strip()]
                errors = [line for line in lines if line.startswith("E ")]
                self.first = {"id": report.nodeid, "when": report.when, "error": ((errors or lines or [""])[-1])[:300]}
        def pytest_collectreport(self, report):
            if report.failed and self.first is None:
                lines = [line for line in str(report.longreprtext).splitlines() if line.strip()]
                self.first = {"id": report.nodeid, "when": "collect", "error": ((lines or [""])[-1])[:300]}
        def pytest_sessionfinish(self, session, exitstatus):
            w.write(json.dumps({"nonce": nonce, "outcomes": self.seen, "exit": int(exitstatus), "first_failure": self.first}) + "\\n")
            w.flush()
    return pytest.main(["-q", "-p", "no:cacheprovider", "-p", "no:randomly", "--rootdir", copy, "-c", os.path.join(copy, "pytest.ini"),
                        "--confcutdir", copy, "-o", "addopts=", "-o", "cache_dir=" + os.devnull, os.path.join(copy, "tests")],
                       plugins=[Reporter()])
import sys
sys.exit(int(_run()))
"""
r, w = os.pipe()
env = {"PATH": "/usr/local/bin:/usr/bin:/bin", "HOME": scratch, "LANG": "C.UTF-8", "TMPDIR": scratch,
       "PYTEST_DISABLE_PLUGIN_AUTOLOAD": "1", "PYTHONDONTWRITEBYTECODE": "1", **variables}
prefix = os.path.join(scratch, ".pycache")
source = allowed.get("prefix", "")
for rel, sha in (allowed.get("files") or {}).items():
    parts = rel.split("/")
    if not source or rel.startswith("/") or ".." in parts or not rel.endswith(".pyc"):
        continue
    try:
        fd = os.open(os.path.join(source, rel), os.O_RDONLY | os.O_NOFOLLOW | os.O_NONBLOCK)
        with os.fdopen(fd, "rb") as f:
            data = f.read(16 << 20)
    except OSError:
        continue
    if hashlib.sha256(data).hexdigest() != sha:
        continue  # changed since setup: recompiled from the (digest-checked) source instead
    target = os.path.join(prefix, *parts)
    os.makedirs(os.path.dirname(target), exist_ok=True)
    with open(target, "wb") as out:
        out.write(data)
child = subprocess.Popen([sys.executable, "-I", "-S", "-B", "-X", "pycache_prefix=" + prefix, "-c", BOOT, str(w), site, copy],
                         cwd=scratch, env=env, pass_fds=(w,), stdin=subprocess.PIPE, stdout=subprocess.DEVNULL,
                         stderr=subprocess.DEVNULL, start_new_session=True)
os.close(w)
try:
    child.stdin.write((nonce + "\n").encode())
    child.stdin.close()
except OSError:
    pass
deadline = time.monotonic() + timeout
data = b""
status = None
while True:
    left = deadline - time.monotonic()
    if left <= 0:
        status = "timeout"; break
    ready, _, _ = select.select([r], [], [], min(left, 0.5))
    if ready:
        chunk = os.read(r, 1 << 20)
        data += chunk
        if not chunk or b"\n" in data or len(data) > (8 << 20):
            break
    elif child.poll() is not None:
        ready, _, _ = select.select([r], [], [], 0.2)
        if not ready:
            break
try:
    child.wait(timeout=max(0.1, min(5.0, deadline - time.monotonic())))
except subprocess.TimeoutExpired:
    status = status or "timeout"
try:
    os.killpg(child.pid, signal.SIGKILL)
except OSError:
    pass
try:
    child.wait(timeout=5)
except subprocess.TimeoutExpired:
    pass
import shutil
shutil.rmtree(scratch, ignore_errors=True)
if status == "timeout":
    done({"status": "timeout"})
line = data.split(b"\n", 1)[0]
try:
    result = json.loads(line)
except ValueError:
    done({"status": "no_report", "exit": child.returncode})
if result.get("nonce") != nonce:
    done({"status": "tampering", "reason": "the test report did not carry the grader's nonce"})
done({"status": "ran", "outcomes": result.get("outcomes", {}), "exit": result.get("exit"), "returncode": child.returncode,
      "first_failure": result.get("first_failure")})
