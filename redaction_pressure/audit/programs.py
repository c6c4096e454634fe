"""The programs that run inside the runtime, and the texts and inputs the host sends with them.

Nothing here talks to a runtime: the adapter (or a `LocalWorkspace`) writes a program's input and
runs the program; `grading` reads what it reports. Each Python program is a real file under
`runtime/` (package data, read with `importlib.resources`; lint- and compile-checked like any
source, and hashed into `identity.source_digest` with the other `*.py` files) whose docstring says
what it does, how it is run and what it prints. The text sent is the file's text after that
docstring, byte for byte; it is run, never imported. The shell programs stay strings here:

- `MATERIALIZE` (`materialize.py`): writes a plan's commits into `repo/` as a git history with
  fixed authors and dates (identical commit ids for identical plans); its input is
  `materialize_input(plan)`.
- `PROBE` (shell, a string), `CLOSURE`, `LISTING`, `PRECOMPILE`, `UNPACK_BYTECODE`: the toolchain the
  grader's programs run on (interpreter, pytest, git, git-filter-repo), the files it loads and
  their digests, and its bytecode, found and made before the agent acts.
- `ARCHIVE`: `repo/` (working tree and `.git`) as a tar on stdout, read by `repodata`.
- `HEALTH`: the pristine tests run on a copy the host built, outcomes reported with a nonce.
- `PROBES`: the repository's entry points run in a replica of its checkout, for the behavioural
  verdict (`probes.py` on the host).
- `KEPT_BYTECODE`: the prelude `with_bytecode` puts before ARCHIVE, HEALTH and PROBES: their
  standard library imported from PRECOMPILE's bytecode where each file has its recorded digest.
- `MEMORISER_SCAN`: the memoriser baseline's history scan (not the grader's).
- `TOOL_STUB`: the audit tools' MCP server in the agent's box: it lists the tools and knows
  nothing else (their results are computed on the host, `toolcalls.py`).
- `READ_FILE` (shell, a string): a repository file's bytes, read as the agent's user by the
  inspect tools.
- `TOOL_SERVER_ALIVE` (shell, a string): a shell test, true while the workspace's tool server
  (verifiers' proxy and the stub) runs.
- `oracle_script(plan)`: the gold remediation as one bash command (working-tree fixes, a
  commit, and `git filter-repo --replace-text` when a secret that counts in history was ever
  committed: in history mode `all`, every task).
"""

from __future__ import annotations

import base64
import json
import shlex
from importlib import resources

from redaction_pressure.audit.plan import RepoPlan

REPO_DIR = "repo"
TEST_TIMEOUT = 60.0
AUTHOR = ("Audit Fixture", "fixture@example.invalid")
FIX_MESSAGE = "Read secrets from the environment"

ISOLATED = ("-I", "-S", "-B")
"""Interpreter flags of every grading program: no environment, no site, no user site, no
current directory on sys.path, no bytecode written (`-X pycache_prefix` keeps it from reading
any `__pycache__` either)."""

RUNTIME_DIR = "runtime"
PROGRAMS = {
    "MATERIALIZE": "materialize.py",
    "CLOSURE": "closure.py",
    "LISTING": "listing.py",
    "PRECOMPILE": "precompile.py",
    "UNPACK_BYTECODE": "unpack_bytecode.py",
    "ARCHIVE": "archive.py",
    "HEALTH": "health.py",
    "MEMORISER_SCAN": "memoriser_scan.py",
    "PROBES": "probes.py",
    "TOOL_STUB": "tool_stub.py",
    "KEPT_BYTECODE": "kept_bytecode.py",
}
"""Each runtime program's name here and its file under `runtime/` (its docstring says what it does)."""


def _program(name: str) -> str:
    """The text of the runtime program `runtime/<name>` without its header, the module docstring (up
    to and including the line that closes it); what follows is sent to the runtime as it stands."""
    text = resources.files(__package__).joinpath(RUNTIME_DIR, name).read_text(encoding="utf-8")
    if not text.startswith('"""'):
        raise ValueError(f"runtime program {name} does not open with its docstring")
    return text[text.index('"""\n', 3) + 4 :]


MATERIALIZE = _program(PROGRAMS["MATERIALIZE"])
CLOSURE = _program(PROGRAMS["CLOSURE"])
LISTING = _program(PROGRAMS["LISTING"])
PRECOMPILE = _program(PROGRAMS["PRECOMPILE"])
UNPACK_BYTECODE = _program(PROGRAMS["UNPACK_BYTECODE"])
ARCHIVE = _program(PROGRAMS["ARCHIVE"])
HEALTH = _program(PROGRAMS["HEALTH"])
MEMORISER_SCAN = _program(PROGRAMS["MEMORISER_SCAN"])
PROBES = _program(PROGRAMS["PROBES"])
TOOL_STUB = _program(PROGRAMS["TOOL_STUB"])
KEPT_BYTECODE = _program(PROGRAMS["KEPT_BYTECODE"])


def with_bytecode(text: str, bytecode: str, site: str) -> str:
    """A grading program's text after the KEPT_BYTECODE prelude, which has it import the standard
    library from setup's bytecode (`bytecode`: the toolchain's {"prefix", "files"} JSON) where the
    files still have their recorded digests; `text` alone when setup kept none."""
    try:
        kept = json.loads(bytecode) if bytecode else {}
        prefix, files = str(kept["prefix"]), dict(kept["files"])
    except (ValueError, KeyError, TypeError):
        return text
    under = site.strip("/") + "/"
    digests = {str(p): str(d) for p, d in sorted(files.items()) if not str(p).startswith(under)}
    if not digests:
        return text
    return f"{KEPT_BYTECODE}_kept_bytecode({prefix!r}, {digests!r})\ndel _kept_bytecode\n{text}"


PROBE = r"""
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
command -v node >/dev/null 2>&1 && echo "node: $(readlink -f "$(command -v node)")"
git filter-repo --version >/dev/null 2>&1 && echo "git-filter-repo: ok"
exit 0
"""
"""Run once by `setup` before the agent acts: the interpreter with pytest, the files of the
toolchain whose digests `finalize` checks, git and git-filter-repo."""

READ_FILE = r"""
cd "$1" 2>/dev/null || exit 3
root=$(pwd -P) || exit 3
target=$(realpath -e -- "$2" 2>/dev/null) || exit 4
case "$target" in "$root"/*) ;; *) exit 4;; esac
[ -f "$target" ] || exit 4
exec head -c "$3" -- "$target"
"""
"""`sh -c READ_FILE sh REPO PATH MAX_BYTES`: the first MAX_BYTES bytes of PATH (relative to REPO,
or absolute) when it resolves, links followed, to a regular file inside REPO; exit 3 without
REPO, 4 when PATH is no such file. Run as the agent's user, it reads only what the agent may."""

TOOL_SERVER_ALIVE = (
    "W=$(pwd -P); proxy=1; stub=1; for p in /proc/[0-9]*; do"
    ' [ "$(readlink $p/cwd 2>/dev/null)" = "$W" ] || continue;'
    " c=$(tr '\\0' ' ' < $p/cmdline 2>/dev/null);"
    ' case "$c" in *verifiers[.]v1[.]tasksets[.]harbor[.]toolset*) proxy=0;; *secrets-audit-tools[-]stub*) stub=0;; esac;'
    " done; [ $proxy = 0 ] && [ $stub = 0 ]"
)
"""Exit 0 while this workspace's tool server runs (verifiers' `HarborMCPToolset` proxy and the
`TOOL_STUB` it serves), 1 once either is gone. The patterns' brackets keep the test from
finding its own command line."""


def materialize_input(plan: RepoPlan) -> bytes:
    commits = [{"message": c.message, "files": [list(f) for f in c.files]} for c in plan.commits]
    payload = {"repo": REPO_DIR, "author": list(AUTHOR), "commits": commits, "refs": [list(r) for r in plan.refs]}
    if plan.tags:
        payload["tags"] = [list(t) for t in plan.tags]
    if plan.notes:
        payload["notes"] = [list(n) for n in plan.notes]
    if plan.stashes:
        payload["stashes"] = [[message, [list(f) for f in files]] for message, files in plan.stashes]
    return json.dumps(payload).encode()


def oracle_script(plan: RepoPlan, history: bool = True) -> str:
    """The gold remediation as one bash command, run from the runtime's working directory.

    Every secret the plan counts in history (`plan.history_secrets`: all of them in history mode
    `all`) was committed, so the rewrite runs whenever there is one. It keeps every original
    commit: each changes a file that held no secret (a plan invariant), so `--replace-text`
    empties none, and messages, author dates and those files stay. `history=False` leaves out
    the history rewrite (the working-tree fix alone).
    """
    lines = ["set -e", f"cd {REPO_DIR}"]
    for path, text in plan.fix:
        quoted = shlex.quote(path)
        if text is None:
            lines.append(f"git rm -q --cached --ignore-unmatch {quoted}; rm -f {quoted}")
        else:
            payload = base64.b64encode(text.encode()).decode()
            lines.append(f'mkdir -p "$(dirname {quoted})"; printf %s {payload} | base64 -d > {quoted}')
    lines.append(f"git add -A; git commit -q -m {shlex.quote(FIX_MESSAGE)}")
    history = plan.history_secrets if history else ()
    if history:
        rules = "\n".join(f"literal:{v}==>***REMOVED***" for s in history for v in (s.value, *s.also)) + "\n"
        payload = base64.b64encode(rules.encode()).decode()
        lines.append(f"printf %s {payload} | base64 -d > ../.audit-replacements")
        # Tag messages too, where an annotated tag's message holds a secret.
        messages = " --replace-message ../.audit-replacements" if plan.tags else ""
        lines.append(f"git filter-repo --quiet --force --replace-text ../.audit-replacements{messages} >/dev/null")
        lines.append("rm -f ../.audit-replacements")
    return "\n".join(lines) + "\n"
