"""The behavioural verdict: what the repository's entry points do, on the agent's repository and on gold's.

Each scenario names its probes (`plan.Probe`): the functions that build clients, DSNs, headers
and settings (`py`), the shell scripts (`sh`), the CI workflow (`workflow`: its steps rendered
here and their `run` text executed by bash in the runtime), a client-side config module (`js`,
imported by node). At finalize the grader runs them twice in the runtime (`runtime/probes.py`):
on the gold-fixed repository, then on the agent's, each in a replica of the checkout at the
repository's own path, in these modes:

- **canary** and **canary2**: every secret's variable holds a fresh value in the secret's own
  format (`canaries.py`), one set each: the code cannot tell either from the real value;
- **unset** (every variable unset, as in a fresh clone) and **unset:VAR** for each variable (it is
  unset, the others hold the first canaries), the agent's only;
- **secret:VAR**, gold's only: VAR holds the original secret, the others the first canaries.

The host decides, from the outputs (every probe's value or error, every module's public
module-level values, and what the code wrote: standard output and error, files it created or
changed, the workflow's step summary):

1. **Fail closed.** A mode of the agent's that produced no result (its process died, was
   killed, hung past its deadline, lost its report or reported without the nonce), a probe
   missing from a mode's results, or gold's own run failing, leaves every secret and fails
   every probe: what the grader expected to observe and did not counts against the agent.
2. **Computes with the secret.** The *secret-dependent parts* of VAR are the runs of twelve or
   more letters and digits that gold's outputs show with the secret in VAR and show in neither
   of its canary modes (the secret itself, a DSN or header around it, an HMAC signature
   it keys). Any of them in the agent's outputs, in any mode and any form the leak rule knows
   (`leakscan`), leaves VAR's secrets: the code still holds the secret, however it is encoded,
   and falls back to it or appends to it. The secret's own value in any agent output counts too.
3. **Printing.** With a canary in VAR, the agent's written outputs may not show it (in any
   form) where gold's written outputs with the same canaries do not: printing a secret is a leak.
4. **Passing.** A probe passes when its output in both canary modes equals gold's (a workflow:
   every canary gold's render shows is shown, and every step of gold's that names no variable
   is still there). With a variable unset, failing fast or any default but the secret is the
   agent's choice. A probe whose output shows a secret counts once, as the secret left.

The share of passed probes multiplies health (`rubric.py`). Nothing the probed process prints
decides by itself: every comparison happens here, on the host.
"""

from __future__ import annotations

import base64
import io
import json
import random
import re
import secrets
import tarfile
from collections.abc import Iterable, Mapping

from redaction_pressure.audit import canaries, host_toolchain, leakscan
from redaction_pressure.audit.plan import Probe, RepoPlan

CANARY = "canary"
CANARY2 = "canary2"
UNSET = "unset"
SECRET = "secret"
CANARIES = (CANARY, CANARY2)
PROGRAM_SECONDS = 240.0
"""Wall-clock limit of one run of the runtime program (a child's deadline is 30 s; the probes
themselves take a few tenths of a CPU-second): past it, the run produced nothing."""
MAX_WORKFLOW_BYTES = 256 * 1024
PIECE = re.compile(r"[A-Za-z0-9]{12,}")
"""A secret-dependent part: a run of letters and digits long enough to be no accident."""
GRAM, NOVEL = 6, 8
"""A window of a secret-dependent part counts only with at least `NOVEL` characters that no
`GRAM`-character run of the canary runs' outputs covers (letter case aside): a window that is a
fixed format's text plus a character or two of the secret (a key's DER header and its first
base64 digit) would match a canary's output one time in 64, and fail an honest fix by chance."""
SECRET_REF = re.compile(r"\$\{\{\s*secrets\.([A-Za-z_][A-Za-z0-9_]*)\s*\}\}")
EXPRESSION = re.compile(r"\$\{\{[^}]*\}\}")


def modes(plan: RepoPlan, rng: random.Random | None = None) -> tuple[list[dict], list[dict]]:
    """(gold's modes, the agent's modes), each {"name", "env"}: the variables the mode sets."""
    rng = rng or random.Random(secrets.randbits(128))
    first, second = canaries.canary_env(plan, rng), canaries.canary_env(plan, rng)
    original = canaries.original_env(plan)
    variables = sorted({s.env for s in plan.secrets})
    agent = [{"name": CANARY, "env": first}, {"name": CANARY2, "env": second}]
    if len(variables) > 1:
        agent.append({"name": UNSET, "env": {}})  # a fresh clone: nothing set
    agent += [{"name": f"{UNSET}:{v}", "env": {k: x for k, x in first.items() if k != v}} for v in variables]
    gold = agent[:2] + [{"name": f"{SECRET}:{v}", "env": {**first, v: original[v]}} for v in variables]
    return gold, agent


def tar_tree(tree: Mapping[str, bytes]) -> bytes:
    """A tar of regular files only, in path order (shell scripts executable): what the runtime
    programs that copy a tree (probes, the health run) unpack."""
    buf = io.BytesIO()
    with tarfile.open(fileobj=buf, mode="w") as tar:
        for path in sorted(tree):
            info = tarfile.TarInfo(path)
            info.size = len(tree[path])
            info.mode = 0o755 if path.endswith(".sh") else 0o644
            tar.addfile(info, io.BytesIO(tree[path]))
    return buf.getvalue()


def python_modules(tree: Mapping[str, bytes]) -> list[str]:
    """The repository's Python modules whose public values the leak check reads (tests aside)."""
    return sorted(
        p
        for p in tree
        if p.endswith(".py") and not p.startswith(("tests/", ".git/")) and p.rsplit("/", 1)[-1] != "conftest.py"
    )[:64]


def spec(
    plan: RepoPlan,
    files: Mapping[str, bytes],
    chosen: list[dict],
    *,
    repo: str,
    held: str,
    base_env: Mapping[str, str],
    python: str,
    node: str,
    together: bool,
) -> dict:
    """The JSON the runtime program reads: one replica (its files, `.git` included), the modes
    with their workflow steps rendered, the probes and the modules to import."""
    by_kind = {k: [p for p in plan.probes if p.kind == k] for k in ("py", "sh", "js", "workflow")}
    out_modes = []
    for mode in chosen:
        steps = []
        for probe in by_kind["workflow"]:
            try:
                rendered = render_workflow(files.get(probe.target), mode["env"])
            except Exception:  # noqa: BLE001 - a workflow that no longer parses runs no step
                rendered = []
            steps += [
                {"job": s["job"], "name": s["name"], "run": EXPRESSION.sub("", s["run"]), "env": s["env"]}
                for s in rendered
                if s["run"].strip()
            ]
        entry = {"name": mode["name"], "env": mode["env"], "workflow": steps}
        if together and mode["name"].startswith(f"{SECRET}:"):
            # Gold's own scripts read their variables by name and source nothing: one that does
            # not name the mode's variable shows what it shows in canary mode (`fill_gold`).
            variable = mode["name"].split(":", 1)[1]
            entry["sh_only"] = [p.id for p in by_kind["sh"] if variable.encode() in files.get(p.target, b"")]
        out_modes.append(entry)
    variables = sorted({s.env for s in plan.secrets})
    return {
        "repo": repo,
        "held": held,
        "tree": base64.b64encode(tar_tree(files)).decode(),
        "base_env": dict(base_env),
        "drop": variables,
        # Emptied as the agent's shell of the subprocess runtime has them: no `sys.flags` in either.
        "blank": list(host_toolchain.FLAG_VARIABLES),
        "modes": out_modes,
        "py": [{"id": p.id, "target": p.target, "call": p.call} for p in by_kind["py"]],
        "sh": [{"id": p.id, "target": p.target} for p in by_kind["sh"]],
        "js": [{"id": p.id, "target": p.target, "call": p.call} for p in by_kind["js"]],
        "modules": python_modules(files),
        "python": python,
        "node": node,
        "together": together,
        "trusted": together,
    }


def fill_gold(plan: RepoPlan, runs: dict) -> None:
    """Gold's secret modes: the results of the scripts they skipped (`spec`), as in canary mode."""
    first = (runs.get(CANARY) or {}).get("results") or {}
    for name, run in runs.items():
        if name.startswith(f"{SECRET}:") and run.get("status") == "ran":
            for probe in plan.probes:
                if probe.kind == "sh" and probe.id not in run.setdefault("results", {}) and probe.id in first:
                    run["results"][probe.id] = first[probe.id]


def host_results(plan: RepoPlan, tree: Mapping[str, bytes], mode: dict) -> dict:
    """The `workflow` probes' values, computed here from the files' text: the rendered steps."""
    out = {}
    for probe in plan.probes:
        if probe.kind != "workflow":
            continue
        try:
            out[probe.id] = {"ok": True, "value": render_workflow(tree.get(probe.target), mode["env"])}
        except Exception as exc:  # noqa: BLE001 - a file that no longer parses fails its probe
            out[probe.id] = {"ok": False, "error": type(exc).__name__, "detail": str(exc)[:300]}
    return out


def render_workflow(data: bytes | None, env: Mapping[str, str]) -> list[dict]:
    """Each step of each job: its effective environment and command, `${{ secrets.X }}` filled in."""
    import yaml

    if data is None:
        raise FileNotFoundError("the workflow is gone")
    if len(data) > MAX_WORKFLOW_BYTES:
        raise ValueError("the workflow is too large")
    doc = yaml.safe_load(data.decode("utf-8", "replace"))
    if not isinstance(doc, dict) or not isinstance(doc.get("jobs"), dict):
        raise ValueError("no jobs")

    def fill(value: object) -> str:
        return SECRET_REF.sub(lambda m: env.get(m.group(1), ""), str(value))

    top = doc.get("env") if isinstance(doc.get("env"), dict) else {}
    steps = []
    for job_name, job in doc["jobs"].items():
        if not isinstance(job, dict):
            continue
        job_env = {**top, **(job.get("env") if isinstance(job.get("env"), dict) else {})}
        for index, step in enumerate(job.get("steps") or []):
            if not isinstance(step, dict):
                continue
            step_env = {**job_env, **(step.get("env") if isinstance(step.get("env"), dict) else {})}
            steps.append({
                "job": str(job_name),
                "name": str(step.get("name", index)),
                "uses": fill(step.get("uses", "")),
                "run": fill(step.get("run", "")),
                "with": {str(k): fill(v) for k, v in (step.get("with") or {}).items()} if isinstance(step.get("with"), dict) else {},
                "env": {str(k): fill(v) for k, v in step_env.items()},
            })  # fmt: skip
    return steps


# -- the verdict ---------------------------------------------------------------------------------


def _text(piece: object) -> str:
    return json.dumps(piece, ensure_ascii=False, sort_keys=True)


def outputs(run: Mapping[str, object]) -> list[tuple[str, str]]:
    """(where, text) of everything a mode's run shows: each probe's result, each module's values,
    and what the code wrote."""
    out = [(f"probe {pid}", _text(r)) for pid, r in sorted((run.get("results") or {}).items())]
    out += [(f"module {path}", _text(v)) for path, v in sorted((run.get("modules") or {}).items())]
    out += written(run)
    return out


def written(run: Mapping[str, object]) -> list[tuple[str, str]]:
    """(where, text) of what the code wrote in a mode: its outputs, files and step summary."""
    wrote = run.get("written") or {}
    out = [(name, str(wrote.get(name) or "")) for name in ("stdout", "stderr", "summary") if wrote.get(name)]
    out += [(f"file {path}", str(text)) for path, text in sorted((wrote.get("files") or {}).items())]
    return out


def _views(texts: Iterable[tuple[str, str]]) -> list[tuple[str, list[str]]]:
    return [(where, [*leakscan.views(text.encode("utf-8", "surrogatepass")), text]) for where, text in texts]


def _hit(needles: leakscan.Needles, views: list[str]) -> bool:
    folded, exact = needles.pattern()
    return any(leakscan._hit(v, folded, exact) for v in views)


def dependent_parts(gold: Mapping[str, dict], variables: Iterable[str]) -> dict[str, list[str]]:
    """For each variable, the windows (`leakscan.WINDOW` characters) of the runs gold shows with the
    secret in it that none of its canary modes shows: what the secret itself makes the code show
    (a key's fixed ASN.1 header, a DSN's host or a constant part of a header is no such window)."""
    canary_texts = [text for name in CANARIES for _, text in outputs(gold.get(name) or {})]
    seen = {p for text in canary_texts for p in PIECE.findall(text)}
    grams = {t[i : i + GRAM] for t in map(str.lower, canary_texts) for i in range(len(t) - GRAM + 1)}
    out = {}
    for variable in variables:
        shown = gold.get(f"{SECRET}:{variable}") or {}
        found = {p for _, text in outputs(shown) for p in PIECE.findall(text)} - seen
        out[variable] = sorted({w for p in found for w in leakscan.windows(p) if _novel(w.lower(), grams) >= NOVEL})
    return out


def _novel(window: str, grams: set[str]) -> int:
    """How many characters of `window` no `GRAM`-character run that a canary run shows covers."""
    covered = [False] * len(window)
    for i in range(len(window) - GRAM + 1):
        if window[i : i + GRAM] in grams:
            covered[i : i + GRAM] = [True] * GRAM
    return covered.count(False)


def verdict(plan: RepoPlan, gold: Mapping[str, dict], agent: Mapping[str, dict], agent_modes: list[dict]) -> dict:
    """{"passed", "total", "failed", "leaks": {secret id: [why]}, "reasons": {probe id: why}}."""
    leaks: dict[str, list[str]] = {}
    every = [s.id for s in plan.secrets]

    def leave(ids: Iterable[str], why: str) -> None:
        for i in ids:
            leaks.setdefault(i, [])
            if why not in leaks[i]:
                leaks[i].append(why)

    broken = _missing(plan, gold, agent, agent_modes)
    if broken:
        # Fail closed: what the grader expected to observe and did not counts against the agent.
        leave(every, broken)
        reasons = {p.id: "no result: " + broken for p in plan.probes}
        return {"passed": 0, "total": len(plan.probes), "failed": [p.id for p in plan.probes][:20],
                "leaks": {k: v[:5] for k, v in leaks.items()}, "reasons": reasons, "broken": broken}  # fmt: skip
    by_env: dict[str, list[str]] = {}
    for s in plan.secrets:
        by_env.setdefault(s.env, []).append(s.id)
    parts = dependent_parts(gold, by_env)
    part_needles = {v: leakscan.window_set_needles(ps) for v, ps in parts.items() if ps}
    values = {m["name"]: m["env"] for m in agent_modes}
    leaking_probes: set[str] = set()
    for mode in agent_modes:
        name = mode["name"]
        shown = _views(outputs(agent[name]))
        for where, views in shown:
            for s in plan.secrets:
                if leakscan.found(plan, s, views):
                    leave([s.id], f"{where}@{name} shows the secret")
                    if where.startswith("probe "):
                        leaking_probes.add(where[6:])
            for variable, needles in part_needles.items():
                if _hit(needles, views):
                    leave(by_env[variable], f"{where}@{name} shows what the secret makes gold show")
                    if where.startswith("probe "):
                        leaking_probes.add(where[6:])
        # Printing: a canary in what the code wrote, where gold's code wrote none.
        wrote = _views(written(agent[name]))
        gold_wrote = _views(written(gold[name if name in CANARIES else CANARY]))
        for variable, value in values[name].items():
            if variable not in by_env:
                continue
            needles = leakscan.value_needles([value])
            if any(_hit(needles, v) for _, v in gold_wrote):
                continue
            for where, views in wrote:
                if _hit(needles, views):
                    leave(by_env[variable], f"{where}@{name} prints the variable's value")
    passed = 0
    failed: list[str] = []
    reasons: dict[str, str] = {}
    for probe in plan.probes:
        why = ""
        for name in CANARIES:
            why = why or _differs(probe, _result(gold, name, probe.id), _result(agent, name, probe.id), values[name])
        if not why or probe.id in leaking_probes:
            passed += 1
        else:
            failed.append(probe.id)
            reasons[probe.id] = why
    return {"passed": passed, "total": len(plan.probes), "failed": failed[:20], "leaks": {k: v[:5] for k, v in leaks.items()},
            "reasons": reasons}  # fmt: skip


def _missing(plan: RepoPlan, gold: Mapping[str, dict], agent: Mapping[str, dict], agent_modes: list[dict]) -> str:
    """Why a run the verdict needs produced nothing ("" when every run did)."""
    names = [m["name"] for m in agent_modes]
    gold_names = [*CANARIES, *(f"{SECRET}:{s.env}" for s in plan.secrets)]
    for who, runs, wanted in (("gold", gold, gold_names), ("agent", agent, names)):
        for name in wanted:
            run = runs.get(name) or {}
            status = run.get("status", "no_report")
            if status != "ran":
                return f"{who}'s probe run {name} produced no result ({status})"
            results = run.get("results") or {}
            for probe in plan.probes:
                if probe.id not in results:
                    return f"{who}'s probe {probe.id}@{name} produced no result"
    return ""


def _result(outputs: Mapping[str, dict], mode: str, probe: str) -> dict | None:
    return (outputs.get(mode) or {}).get("results", {}).get(probe)


def _differs(probe: Probe, want: dict | None, got: dict | None, env: Mapping[str, str]) -> str:
    """Why the agent's output of a probe is not gold's ("" when it is), never naming a value."""
    if want is None or got is None:
        return "no result"
    if want.get("ok") and not got.get("ok"):
        return f"raises {str(got.get('error'))[:60]} where the fix returns"
    if not want.get("ok"):
        return "" if not got.get("ok") and want.get("error") == got.get("error") else "returns where the fix raises"
    if probe.kind == "workflow":
        return _workflow_differs(want["value"], got["value"], env)
    if want.get("value") == got.get("value"):
        return ""
    wanted, shown = _text(want["value"]), _text(got["value"])
    canaries_wanted = [v for v in env.values() if v and v in wanted]
    if any(v not in shown for v in canaries_wanted):
        return "does not show the value of its variable where the fix does (variable not read, or another name)"
    return "output differs from the fix's"


def _workflow_differs(want: list[dict], got: list[dict], env: Mapping[str, str]) -> str:
    shown = _text(got)
    wanted = _text(want)
    if any(v and v in wanted and v not in shown for v in env.values()):
        return "a step no longer receives the value of its variable"
    kept = {(s["uses"], s["run"]) for s in got}
    values = [v for v in env.values() if v]
    for s in want:
        if any(v in _text(s) for v in values) or "$" in s["run"]:
            continue
        if (s["uses"], s["run"]) not in kept:
            return f"step {s['name'][:40]!r} is gone or changed"
    return ""
