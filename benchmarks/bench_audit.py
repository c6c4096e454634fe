"""secrets-audit benchmark: setup and scoring time per episode, and per-scenario scores.

    uv run python -m benchmarks.bench_audit [--difficulty standard|expert] [--tasks N] [--vf-eval] [--concurrency C]

A script, not a test: the machine is shared and noisy, so it prints medians and p90 from one
run against the issue's targets. Nothing here talks to the network.

- setup: what the taskset's `setup` does before the agent starts, the harness's own install
  not counted: rebuild the plan from (split, index), probe the runtime for git,
  git-filter-repo and pytest, digest the toolchain through the file API, write the seeded
  repository with its history;
- finalize (scoring): what `finalize` and the rewards do (`grading.grade`): re-digest the
  toolchain, archive `repo/` and `.git` in the runtime, read the object store on the host,
  scan, run the pristine tests on a copy built from the scanned bytes, score. Timed twice per
  task: on the untouched repository and after the oracle remediation (history rewritten);
- decompression bombs planted after the gold fix, each graded in a fresh process: the verdict,
  the bytes inflated against the episode's budget and the process's peak memory (building
  the bomb's bytes happens before, in the same process, so the peak includes them);
- per-scenario means on the dev tasks of three policies: the oracle (its remediation in one
  step), the scripted baseline (`redaction_pressure.audit.agent`, which sees only
  the prompt and its tool results) and inaction (no tool call).

All of it runs the runtime programs the taskset runs (`programs.PROBE`, `MATERIALIZE`,
`COLLECT`) through local subprocesses, the framework-free path. `--vf-eval` also plays the
baseline through the real `vf-eval` (bash harness, subprocess runtime, the package's chat
endpoint as the stand-in model turning the agent's decisions into streamed tool calls) and
checks that every task's reward equals the local one.
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import subprocess
import sys
import tempfile
import time
from collections import defaultdict
from pathlib import Path

from redaction_pressure.audit import agent as audit_agent
from redaction_pressure.audit import programs, splits
from redaction_pressure.audit.local import LocalWorkspace
from redaction_pressure.audit.rubric import score
from redaction_pressure.audit.scenarios import EXPERT_SCENARIOS, SCENARIO_NAMES

ROOT = Path(__file__).resolve().parents[1]
TARGETS = {"setup": 0.5, "scoring_p50": 2.0}


def quantiles(values: list[float]) -> tuple[float, float]:
    ordered = sorted(values)
    p90 = ordered[min(len(ordered) - 1, round(0.9 * (len(ordered) - 1)))]
    return statistics.median(ordered), p90


def timed_setup(index: int, level: str) -> tuple[float, LocalWorkspace]:
    """Seconds to rebuild the plan, probe the runtime, digest its toolchain and write the repository."""
    start = time.perf_counter()
    plan = splits.plan_for("dev", index, difficulty=level)
    try:
        workspace = LocalWorkspace(plan)
    except RuntimeError as exc:
        raise SystemExit(str(exc)) from exc
    return time.perf_counter() - start, workspace


def timed_scoring(workspace: LocalWorkspace, steps: int) -> tuple[float, float]:
    """(seconds to collect, test, scan and score; the reward)."""
    start = time.perf_counter()
    total = score(workspace.plan, workspace.facts(steps)).total
    return time.perf_counter() - start, total


def run_local(
    count: int, level: str
) -> tuple[dict[str, list[float]], dict[str, dict[str, list[float]]], dict[int, float]]:
    times: dict[str, list[float]] = defaultdict(list)
    scores: dict[str, dict[str, list[float]]] = defaultdict(lambda: defaultdict(list))
    baseline: dict[int, float] = {}
    for index in range(count):
        plan = splits.plan_for("dev", index, difficulty=level)
        seconds, workspace = timed_setup(index, level)
        times["setup"].append(seconds)
        with workspace:
            seconds, total = timed_scoring(workspace, steps=0)
            times["scoring_untouched"].append(seconds)
            scores[plan.scenario]["inaction"].append(total)
            done = workspace.bash(programs.oracle_script(plan))
            if done.returncode:
                raise SystemExit(f"task {index}: the oracle failed: {done.stderr[-500:]}")
            seconds, total = timed_scoring(workspace, steps=1)
            times["scoring_after_oracle"].append(seconds)
            scores[plan.scenario]["oracle"].append(total)
        episode = audit_agent.play_local(plan)
        baseline[index] = episode.total
        scores[plan.scenario]["baseline"].append(episode.total)
        scores[plan.scenario]["baseline_steps"].append(episode.steps)
    return times, scores, baseline


def run_vf_eval(count: int, concurrency: int, level: str) -> tuple[dict[int, float], float]:
    """The baseline through the real vf-eval: per-task rewards and the wall time."""
    from redaction_pressure.cli.endpoint import ChatServer

    home = Path(tempfile.mkdtemp(prefix="bench-audit-"))
    env = {k: v for k, v in os.environ.items() if k != "REDACTION_PRESSURE_PRIVATE_SEED"}
    env.setdefault("UV_CACHE_DIR", str(Path.home() / ".cache" / "uv"))
    env.update(HOME=str(home), UV_PYTHON_DOWNLOADS="never", STANDIN_KEY="not-a-real-key")
    out = home / "run"
    with ChatServer(audit_agent.answer) as model:
        start = time.perf_counter()
        result = subprocess.run(
            [str(Path(sys.executable).parent / "vf-eval"), "secrets-audit", "-n", str(count), "-m", "scripted-baseline",
             "-c", str(concurrency), "--client.base-url", model.url, "--client.api-key-var", "STANDIN_KEY",
             "--env.agent.runtime.type", "subprocess", "--env.taskset.split", "dev", "--env.taskset.difficulty", level, "--no-push", "--no-rich",
             "-o", str(out)],
            env=env, cwd=ROOT, capture_output=True, text=True, stdin=subprocess.DEVNULL,
        )  # fmt: skip
        wall = time.perf_counter() - start
    if result.returncode:
        raise SystemExit(f"vf-eval failed:\n{result.stderr[-3000:]}")
    rewards: dict[int, float] = {}
    for path in out.rglob("traces.jsonl"):
        for line in path.read_text().splitlines():
            for trace in json.loads(line)["traces"] if line.strip() else []:
                if trace.get("errors"):
                    print(f"task {trace['task']['data']['index']}: {trace['errors'][0]['message'][:200]}")
                rewards[trace["task"]["data"]["index"]] = sum(
                    r["score"] * r["weight"] for r in trace["rewards"].values()
                )
    return rewards, wall


BOMB = r"""
import json, resource, sys, time
from pathlib import Path
from redaction_pressure.audit import programs
from redaction_pressure.audit.local import LocalWorkspace
from redaction_pressure.audit.scenarios import build
source, scenario, path = sys.argv[1], sys.argv[2], sys.argv[3]
plan = build(scenario, 11)
with LocalWorkspace(plan) as ws:
    ws.bash(programs.oracle_script(plan))
    if source:
        target = ws.repo / path
        target.parent.mkdir(parents=True, exist_ok=True)
        target.write_bytes(Path(source).read_bytes())
    start = time.perf_counter()
    facts = ws.facts(1)
print(json.dumps({"seconds": time.perf_counter() - start, "history": facts.get("history"),
                  "inflated": facts.get("inflated", 0), "peak_mib": resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024}))
"""
BOMBS = (
    (
        "delta_chain_pack",
        "legacy_audit",
        ".git/objects/pack/pack-bomb.pack",
        "a 1.2 KB pack: a 64 KiB blob, deltas to 512 MiB and 4 TiB",
    ),
    (
        "loose_object",
        "cloud_provisioning",
        "assets/object.bin",
        "a loose blob declaring 10 bytes, inflating to 512 MiB",
    ),
    ("gzip_second_member", "database_layer", "logs/notes.gz", "a gzip whose second member inflates to 512 MiB"),
    ("zip_member", "database_layer", "assets/backup.zip", "a zip whose member inflates to 512 MiB"),
)


def bombs() -> None:
    """Each bomb graded in a fresh process (its bytes built here first): the verdict, the bytes
    inflated and the grading process's peak memory, beside the same grade without a bomb."""
    from redaction_pressure.audit.inflate import INFLATION_BYTES, PART_BYTES
    from tests.support import bombs as builders

    def grade(source: str, scenario: str, path: str) -> dict | None:
        run = subprocess.run([sys.executable, "-c", BOMB, source, scenario, path], capture_output=True, text=True)
        try:
            return json.loads(run.stdout.strip().splitlines()[-1])
        except (ValueError, IndexError):
            print(f"  grading failed: {run.stderr[-300:]}")
            return None

    print(
        f"decompression bombs (inflation budget per episode: {INFLATION_BYTES >> 20} MiB, {PART_BYTES >> 20} MiB a part), each graded in a fresh process:"
    )
    print(f"{'bomb':<62} {'size':>8} {'verdict':>10} {'inflated':>9} {'peak RSS':>9} {'grade':>7}")
    plain = grade("", "legacy_audit", "")
    if plain:
        print(
            f"{'(no bomb: the gold fix of legacy_audit)':<62} {'':>8} {str(plain['history']):>10} {plain['inflated'] / 2**20:>7.1f}Mi {plain['peak_mib']:>7.0f}Mi {plain['seconds']:>6.2f}s"
        )
    with tempfile.TemporaryDirectory() as scratch:
        for name, scenario, path, label in BOMBS:
            source = Path(scratch) / name
            source.write_bytes(builders.BOMBS[name]())
            out = grade(str(source), scenario, path)
            if out:
                size = source.stat().st_size
                print(
                    f"{label:<62} {size / 1024:>6.1f}Ki {str(out['history']):>10} {out['inflated'] / 2**20:>7.1f}Mi {out['peak_mib']:>7.0f}Mi {out['seconds']:>6.2f}s"
                )


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--difficulty", choices=splits.LEVELS, default=splits.STANDARD,
                        help="the level's dev tasks: standard (the curriculum, the default) or expert")  # fmt: skip
    parser.add_argument("--tasks", type=int, help="dev tasks to run (default: all of the level's, 52 or 24)")
    parser.add_argument("--vf-eval", action="store_true", help="also play the baseline through the real vf-eval")
    parser.add_argument(
        "--concurrency", type=int, default=8, help="vf-eval -c (default 8; 2 cores start few tool servers at once)"
    )
    args = parser.parse_args()
    if args.tasks is None:
        args.tasks = splits.dev_size(args.difficulty)
    elif not 1 <= args.tasks <= splits.dev_size(args.difficulty):
        parser.error(f"--tasks must be 1 to {splits.dev_size(args.difficulty)} at level {args.difficulty}")

    start = time.perf_counter()
    times, scores, baseline = run_local(args.tasks, args.difficulty)
    print(
        f"secrets-audit benchmark: {args.tasks} {args.difficulty} dev tasks, {os.cpu_count()} CPUs, local runtime programs, {time.perf_counter() - start:.0f} s"
    )
    print()
    print(f"{'per episode':<34} {'median':>8} {'p90':>8}  target")
    rows = [
        ("setup (plan + probe + digests + repo)", "setup", f"<= {TARGETS['setup']} s"),
        ("finalize, untouched repository", "scoring_untouched", f"p50 <= {TARGETS['scoring_p50']} s"),
        ("finalize, after the oracle", "scoring_after_oracle", f"p50 <= {TARGETS['scoring_p50']} s"),
    ]
    for label, key, target in rows:
        median, p90 = quantiles(times[key])
        print(f"{label:<34} {median:>7.3f}s {p90:>7.3f}s  {target}")
    print()
    print(f"{'scenario':<20} {'difficulty':<10} {'oracle':>7} {'baseline':>9} {'inaction':>9} {'baseline steps':>15}")
    from redaction_pressure.audit.scenarios import by_name

    for name in (*SCENARIO_NAMES, *(s.name for s in EXPERT_SCENARIOS)):
        if name not in scores:
            continue
        row = scores[name]
        mean = {k: statistics.fmean(v) for k, v in row.items()}
        print(
            f"{name:<20} {by_name(name).difficulty:<10} {mean['oracle']:>7.3f} {mean['baseline']:>9.3f} "
            f"{mean['inaction']:>9.3f} {mean['baseline_steps']:>15.1f}"
        )
    every = {
        k: statistics.fmean(v for row in scores.values() for v in row[k]) for k in ("oracle", "baseline", "inaction")
    }
    print(f"{'all':<20} {'':<10} {every['oracle']:>7.3f} {every['baseline']:>9.3f} {every['inaction']:>9.3f}")
    below = sorted(i for i, v in baseline.items() if v < 1.0)
    print(f"baseline below 1.0 on dev tasks: {below or 'none'}")
    print()
    if args.difficulty == splits.STANDARD:
        bombs()  # the bombs are planted in standard scenarios' repositories: one set, whatever the level
    if args.vf_eval:
        rewards, wall = run_vf_eval(args.tasks, args.concurrency, args.difficulty)
        differ = sorted(i for i in baseline if abs(rewards.get(i, -1.0) - baseline[i]) > 1e-9)
        print()
        print(f"vf-eval (bash harness, subprocess runtime, -c {args.concurrency}): {len(rewards)} episodes in {wall:.0f} s; "
              f"mean reward {statistics.fmean(rewards.values()):.3f}; tasks whose reward differs from the local path: {differ or 'none'}")  # fmt: skip


if __name__ == "__main__":
    main()
