"""Throughput benchmark: what an episode costs through vf-eval and the served pool, against what scoring costs.

    uv run python -m benchmarks.bench_throughput [--tasks 64] [--small 8] [--rounds 4] [--part vfeval|served|limit|all]

A script, not a test: it prints one run's figures. The model is a stand-in on 127.0.0.1 in
this process (its CPU is not counted: it stands in for the model) answering each dev prompt
with the induction policy's rules, computed before any clock starts.

1. **The limit.** The same answers scored in this process with the in-process scanner
   (`score_reply`): CPU milliseconds per episode, what no harness can go below.
2. **vf-eval** (`-c 32`, subprocess runtime, a fresh HOME per harness with
   `UV_COMPILE_BYTECODE=1`, as `redaction-pressure eval` runs it). For verifiers' `null`
   harness and redaction-pressure's default (in-process) harness: a warm-up run (2 tasks,
   discarded: it builds the null harness's script environment), then `--small` and `--tasks`
   tasks. CPU-seconds are the run's whole process tree (user + system, from `wait4`), wall
   seconds from start to exit; the marginal CPU-seconds per episode are
   (CPU(tasks) - CPU(small)) / (tasks - small), which sets the fixed start-up apart. Peak
   RSS of the vf-eval process (where the episodes run) and of the largest other process.
   Rewards of the two harnesses are compared task by task.
3. **Served** (`redaction-pressure serve-env --workers 2`, a static pool): `--rounds` passes
   over the dev tasks through one `EnvClient`, 64 in flight, after the server said ready.
   Episodes per second, CPU-seconds per episode of the server's process tree (read from
   /proc before and after), peak RSS of each env-server worker.
4. **secrets-audit** (`--part audit`): the scripted baseline through `redaction-pressure eval
   --taskset secrets-audit` (bash harness, subprocess runtime, `-c 4`) at two sizes: the
   marginal CPU-seconds per episode, and the run's CPU split by process role (sampled).

Under faults (a killer striking scan workers, two CPU burners, 1,024 episodes) the served
pool is measured by `benchmarks/load.py --part served --burners 2`. Nothing here talks to
anything but 127.0.0.1.
"""

from __future__ import annotations

import argparse
import asyncio
import json
import os
import signal
import statistics
import subprocess
import sys
import tempfile
import threading
import time
from pathlib import Path

from benchmarks.processes import descendants, role, rss_mib
from redaction_pressure.cli.endpoint import ChatServer, last_user_text
from redaction_pressure.redact import policies
from redaction_pressure.redact.api import load_task, score_reply
from redaction_pressure.redact.scanner import scan

BIN = Path(sys.executable).parent
KEY_VAR = "BENCH_THROUGHPUT_KEY"
HARNESSES = (("null", "null"), ("in-process (default)", None))


def answers(count: int) -> tuple[list, dict[str, str]]:
    tasks = [load_task("dev", i) for i in range(count)]
    return tasks, {task.prompt.user: policies.reply(policies.induction_rules(task.prompt.user)) for task in tasks}


def limit(tasks, replies) -> None:
    cpu, rebuild = [], []
    for task in tasks:
        reply = replies[task.prompt.user]
        score_reply(task, reply, scanner=scan)  # warm: the limit is the steady cost, not the first import
        start = time.process_time()
        score_reply(task, reply, scanner=scan)
        cpu.append(time.process_time() - start)
        start = time.process_time()
        load_task(task.split, task.index)
        rebuild.append(time.process_time() - start)
    print(f"limit: the same {len(tasks)} answers scored in-process (score_reply, in-process scanner)")
    print(
        f"  CPU per episode       p50 {statistics.median(cpu) * 1000:.1f} ms, mean {statistics.mean(cpu) * 1000:.1f} ms"
    )
    print(
        f"  + rebuilding the task from its seed (what a scan worker does first): mean {statistics.mean(rebuild) * 1000:.1f} ms"
    )


class TreeSampler(threading.Thread):
    """Peak RSS of a process and of the processes below it, sampled every 0.2 s."""

    def __init__(self, root: int) -> None:
        super().__init__(daemon=True)
        self.root, self.stop, self.peaks, self.commands = root, threading.Event(), {}, {}

    def run(self) -> None:
        while not self.stop.wait(0.2):
            for pid, command in {self.root: "", **descendants(self.root)}.items():
                self.commands.setdefault(pid, command)
                self.peaks[pid] = max(self.peaks.get(pid, 0.0), rss_mib(pid))


def vf_eval(count: int, harness: str | None, home: Path, model_url: str) -> dict:
    out = home / "runs"
    env = {k: v for k, v in os.environ.items() if k != "REDACTION_PRESSURE_PRIVATE_SEED" and "API_KEY" not in k}
    env.update(HOME=str(home), UV_PYTHON_DOWNLOADS="never", UV_COMPILE_BYTECODE="1", **{KEY_VAR: "not-a-real-key"})
    env.setdefault("UV_CACHE_DIR", str(Path.home() / ".cache" / "uv"))
    before = set(out.glob("*/traces.jsonl"))
    command = [
        str(BIN / "vf-eval"), "redaction-pressure", "-n", str(count), "-c", "32", "-m", "standin",
        "--client.base-url", model_url, "--client.api-key-var", KEY_VAR, "--env.agent.runtime.type", "subprocess",
        "--env.taskset.split", "dev", "--no-push", "--no-rich", "-o", str(out),
    ]  # fmt: skip
    if harness is not None:
        command += ["--env.agent.harness.id", harness]
    started = time.perf_counter()
    process = subprocess.Popen(
        command, env=env, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, stdin=subprocess.DEVNULL
    )
    sampler = TreeSampler(process.pid)
    sampler.start()
    stderr = process.stderr.read()
    _, status, usage = os.wait4(process.pid, 0)
    wall = time.perf_counter() - started
    sampler.stop.set()
    process.returncode = os.waitstatus_to_exitcode(status)
    if process.returncode:
        raise SystemExit(f"vf-eval exited {process.returncode}: {stderr.decode(errors='replace')[-2000:]}")
    (run,) = sorted(set(out.glob("*/traces.jsonl")) - before)
    rewards = {}
    for line in run.read_text().splitlines():
        for trace in json.loads(line)["traces"] if line.strip() else []:
            rewards[trace["task"]["key"]] = (
                sum(r["score"] * r["weight"] for r in trace["rewards"].values()),
                bool(trace["errors"]),
            )
    others = [peak for pid, peak in sampler.peaks.items() if pid != process.pid]
    return {
        "cpu": usage.ru_utime + usage.ru_stime, "wall": wall, "rewards": rewards,
        "rss": sampler.peaks.get(process.pid, 0.0), "other_rss": max(others, default=0.0),
    }  # fmt: skip


def vfeval_part(tasks, replies, small: int) -> None:
    count = len(tasks)
    print(
        f"vf-eval: {count} and {small} dev episodes (-c 32, subprocess runtime), stand-in model answering induction's rules"
    )
    results = {}
    with ChatServer(lambda body: replies.get(last_user_text(body), "no such prompt")) as model:
        for label, harness in HARNESSES:
            with tempfile.TemporaryDirectory(prefix="rp-throughput-") as home:
                vf_eval(2, harness, Path(home), model.url)  # warm-up, discarded
                few = vf_eval(small, harness, Path(home), model.url)
                many = vf_eval(count, harness, Path(home), model.url)
            results[label] = (few, many)
            marginal = (many["cpu"] - few["cpu"]) / (count - small)
            errored = sum(1 for _, failed in many["rewards"].values() if failed)
            print(f"  {label} harness")
            print(f"    {count} episodes      {many['cpu']:6.1f} CPU-s, {many['wall']:5.1f} s wall, {count / many['wall']:.2f} episodes/s, "
                  f"{many['cpu'] / count:.2f} CPU-s per episode all told; {errored} errored")  # fmt: skip
            print(f"    {small} episodes       {few['cpu']:6.1f} CPU-s, {few['wall']:5.1f} s wall")
            print(f"    marginal          {marginal:.3f} CPU-s per episode")
            print(
                f"    peak RSS          vf-eval process {many['rss']:.0f} MiB; largest other process {many['other_rss']:.0f} MiB"
            )
    (null_few, null_many), (ours_few, ours_many) = results[HARNESSES[0][0]], results[HARNESSES[1][0]]
    null_marginal = (null_many["cpu"] - null_few["cpu"]) / (count - small)
    ours_marginal = (ours_many["cpu"] - ours_few["cpu"]) / (count - small)
    same = sum(1 for key, value in ours_many["rewards"].items() if null_many["rewards"].get(key) == value)
    print(f"  marginal CPU per episode, in-process / null: {ours_marginal / null_marginal:.3f} (target <= 0.1)")
    print(f"  rewards identical to the null harness's on {same} of {count} tasks")


def server_cpu(pid: int) -> float:
    """CPU-seconds of a process, its live descendants and the children they reaped."""
    ticks = os.sysconf("SC_CLK_TCK")
    total = 0
    for each in [pid, *descendants(pid)]:
        try:
            fields = Path(f"/proc/{each}/stat").read_text().rsplit(")", 1)[1].split()
            total += sum(int(v) for v in fields[11:15])  # utime, stime, cutime, cstime
        except (OSError, ValueError, IndexError):
            continue
    return total / ticks


def served_part(tasks, replies, rounds: int) -> None:
    import verifiers.v1 as vf
    from verifiers.v1.serve import EnvClient

    from redaction_pressure.redact.taskset import RedactionPressureConfig, RedactionPressureTaskset

    env = {k: v for k, v in os.environ.items() if k != "REDACTION_PRESSURE_PRIVATE_SEED"}
    env[KEY_VAR] = "not-a-real-key"
    server = subprocess.Popen([str(BIN / "redaction-pressure"), "serve-env", "--port", "0", "--workers", "2"],
                              stdout=subprocess.PIPE, stderr=subprocess.DEVNULL, stdin=subprocess.DEVNULL, text=True, env=env)  # fmt: skip
    line = server.stdout.readline()
    if not line.startswith("ready "):
        server.kill()
        raise SystemExit(f"serve-env did not become ready: {line!r}")
    address = line.split()[1]
    data = [
        t.data.model_dump(mode="json")
        for t in RedactionPressureTaskset(RedactionPressureConfig(split="dev", size=len(tasks)))
    ]
    jobs = data * rounds
    sampler = TreeSampler(server.pid)
    sampler.start()
    failures = []

    async def run_all(model_url: str) -> None:
        client = EnvClient(address)
        gate = asyncio.Semaphore(64)
        config = vf.EvalClientConfig(base_url=model_url, api_key_var=KEY_VAR)

        async def one(task_data) -> None:
            async with gate:
                try:
                    episode = await client.run(
                        client=config, model="standin", sampling=vf.SamplingConfig(), task_data=task_data
                    )
                    if episode.traces[0].errors:
                        failures.append(episode.traces[0].errors)
                except Exception as exc:  # noqa: BLE001 - counted
                    failures.append(exc)

        try:
            await asyncio.gather(*(one(d) for d in jobs))
        finally:
            await client.close()

    with ChatServer(lambda body: replies.get(last_user_text(body), "no such prompt")) as model:
        cpu_before = server_cpu(server.pid)
        started = time.perf_counter()
        asyncio.run(run_all(model.url))
        wall = time.perf_counter() - started
        cpu = server_cpu(server.pid) - cpu_before
    sampler.stop.set()
    workers = sorted(
        peak for pid, peak in sampler.peaks.items() if role(sampler.commands.get(pid, "")) == "env-server worker"
    )
    scans = [peak for pid, peak in sampler.peaks.items() if role(sampler.commands.get(pid, "")) == "scan worker"]
    server.send_signal(signal.SIGTERM)
    server.wait(60)
    print(
        f"served: serve-env --workers 2 (static pool), {len(jobs)} dev episodes ({rounds} rounds), 64 in flight, quiet"
    )
    print(f"  throughput          {len(jobs) / wall:.1f} episodes/s ({wall:.1f} s); {len(failures)} failed")
    print(f"  CPU per episode     {cpu / len(jobs):.3f} CPU-s (the server's whole process tree)")
    print(
        f"  peak RSS            env-server workers {', '.join(f'{w:.0f}' for w in workers)} MiB; scan workers up to {max(scans, default=0):.0f} MiB"
    )


AUDIT_ROLES = (
    (
        "tool server (verifiers' MCP proxy and the audit tools' stub)",
        ("verifiers.v1.tasksets.harbor.toolset", "secrets-audit-tools-stub"),
    ),
    ("vf-eval (rollouts, interception, host-side grading)", "vf-eval"),
    ("bash harness chat program", "/.cache/verifiers/"),
    ("git, git-filter-repo, pytest, grading programs", ("git", "pytest", "python3 -c", "python -c")),
)


def audit_role(command: str) -> str:
    for label, marker in AUDIT_ROLES:
        markers = marker if isinstance(marker, tuple) else (marker,)
        if any(m in command for m in markers):
            return label
    return "other"


class CpuSampler(threading.Thread):
    """The last CPU-seconds seen of every process below a root, every 0.1 s (short-lived ones are missed)."""

    def __init__(self, root: int) -> None:
        super().__init__(daemon=True)
        self.root, self.stop, self.cpu, self.commands = root, threading.Event(), {}, {}
        self.ticks = os.sysconf("SC_CLK_TCK")

    def run(self) -> None:
        while not self.stop.wait(0.1):
            for pid, command in descendants(self.root).items():
                try:
                    fields = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()
                except OSError:
                    continue
                self.commands.setdefault(pid, command)
                self.cpu[pid] = max(self.cpu.get(pid, 0.0), (int(fields[11]) + int(fields[12])) / self.ticks)


def audit_part(sizes: tuple[int, int]) -> None:
    """secrets-audit's scripted baseline through `redaction-pressure eval` (vf-eval, bash harness, subprocess runtime)."""
    print(
        f"secrets-audit: the scripted baseline through `redaction-pressure eval --taskset secrets-audit` on {sizes[0]} and {sizes[1]} dev tasks (-c 4)"
    )
    figures = {}
    for count in sizes:
        with tempfile.TemporaryDirectory(prefix="rp-throughput-audit-") as home:
            env = {k: v for k, v in os.environ.items() if k != "REDACTION_PRESSURE_PRIVATE_SEED" and "API_KEY" not in k}
            env.update(HOME=home, UV_PYTHON_DOWNLOADS="never")
            env.setdefault("UV_CACHE_DIR", str(Path.home() / ".cache" / "uv"))
            started = time.perf_counter()
            process = subprocess.Popen([str(BIN / "redaction-pressure"), "eval", "--taskset", "secrets-audit", "-n", str(count), "-o", f"{home}/runs"],
                                       env=env, cwd=home, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, stdin=subprocess.DEVNULL)  # fmt: skip
            sampler = CpuSampler(process.pid)
            sampler.start()
            stderr = process.stderr.read()
            _, status, usage = os.wait4(process.pid, 0)
            wall = time.perf_counter() - started
            sampler.stop.set()
            if os.waitstatus_to_exitcode(status):
                raise SystemExit(
                    f"eval exited {os.waitstatus_to_exitcode(status)}: {stderr.decode(errors='replace')[-2000:]}"
                )
            roles: dict[str, float] = {}
            for pid, cpu in sampler.cpu.items():
                roles[audit_role(sampler.commands[pid])] = roles.get(audit_role(sampler.commands[pid]), 0.0) + cpu
            figures[count] = (usage.ru_utime + usage.ru_stime, wall, roles)
    (few, few_wall, _), (many, many_wall, roles) = figures[sizes[0]], figures[sizes[1]]
    print(
        f"  {sizes[1]} episodes        {many:6.1f} CPU-s, {many_wall:5.1f} s wall; {sizes[0]} episodes {few:.1f} CPU-s, {few_wall:.1f} s wall"
    )
    print(f"  marginal          {(many - few) / (sizes[1] - sizes[0]):.2f} CPU-s per episode")
    print(
        f"  where the {sizes[1]}-episode run's CPU went (sampled every 0.1 s; processes shorter than that fall in the rest):"
    )
    attributed = 0.0
    for label, cpu in sorted(roles.items(), key=lambda item: -item[1]):
        attributed += cpu
        print(f"    {label:58s} {cpu:6.1f} CPU-s ({cpu / sizes[1]:.2f} per episode)")
    print(f"    {'the rest (eval and its scripted agent, short-lived processes)':58s} {many - attributed:6.1f} CPU-s")


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--tasks", type=int, default=64, help="dev episodes per run (at most 64)")
    parser.add_argument(
        "--small", type=int, default=8, help="episodes of the smaller vf-eval run (for the marginal cost)"
    )
    parser.add_argument("--rounds", type=int, default=4, help="served: passes over the dev tasks")
    parser.add_argument("--part", choices=("vfeval", "served", "limit", "audit", "all"), default="all")
    parser.add_argument("--audit-sizes", default="4,13", help="audit: the two run sizes (dev tasks)")
    args = parser.parse_args()
    if not 1 <= args.small < args.tasks <= 64:
        parser.error("need 1 <= --small < --tasks <= 64")
    tasks, replies = answers(args.tasks)
    if args.part in ("limit", "all"):
        limit(tasks, replies)
    if args.part in ("vfeval", "all"):
        vfeval_part(tasks, replies, args.small)
    if args.part in ("served", "all"):
        served_part(tasks, replies, args.rounds)
    if args.part in ("audit", "all"):
        small, large = (int(n) for n in args.audit_sizes.split(","))
        audit_part((small, large))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
