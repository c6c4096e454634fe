"""OpenEnv servers under load and faults: what a served episode costs, and what survives a killer.

    servers/openenv/.venv/bin/python -m benchmarks.bench_openenv [--part rp|audit|all]
        [--episodes 1000] [--sessions 64] [--audit-sessions 16] [--kill-every 3]

A script, not a test: it prints one run's figures. Run it with the OpenEnv project's Python
(openenv cannot share an environment with verifiers); every server is `serve-openenv` on
127.0.0.1, every client OpenEnv's own `EnvClient`.

1. **redaction-pressure** (`--part rp`): the dev tasks' oracle replies scored in this process
   (`score_reply`, the limit no server goes below), then `--episodes` episodes (reset + one step)
   over `--sessions` concurrent WebSocket sessions: episodes per second, the server's CPU-seconds
   per episode (its process tree, from /proc before and after), the step's round trip p50 / p99
   beside the in-process scoring p50, and whether every reward equals the in-process one; first
   over one session (nothing queues), then over `--sessions`.
2. **secrets-audit** (`--part audit`): `--audit-sessions` concurrent sessions on the podman
   sandbox, half playing the gold fix and half inaction, plus one client that disconnects
   mid-episode; first quiet, then with a killer SIGKILLing a random `podman exec` below the
   server every `--kill-every` seconds (the sessions' commands and the grader's calls). Each
   session must end with a reward or a one-line error (a grade whose call into the box was killed
   from outside is void: an error, not a 0); every reward must equal the formula's (gold: 1.0;
   inaction: 0.0); afterwards no container of the server is left.

**Server overhead per step.** The servers this script starts are `serve-openenv` with one change
(`--serve-timed`, this file): each step's observation carries, in its `metadata`, the time the
environment's `step` took and, for secrets-audit, how much of it was the agent's call (the
command or tool) and the grade. The overhead of a step is its round trip at the client less the
time inside `step`: OpenEnv's server, the WebSocket, serialising both ways and the client.
"""

from __future__ import annotations

import argparse
import asyncio
import os
import random
import signal
import statistics
import subprocess
import sys
import threading
import time
from pathlib import Path

from benchmarks import processes

ROOT = Path(__file__).resolve().parents[1]


def start(*args: str) -> tuple[subprocess.Popen, str]:
    """`serve-openenv --port 0 ARGS` with its steps timed (`serve_timed`); the process and its URL once it listens."""
    proc = subprocess.Popen([sys.executable, "-m", "benchmarks.bench_openenv", "--serve-timed", "--port", "0", *args],
                            cwd=ROOT, stdout=subprocess.PIPE, stdin=subprocess.DEVNULL, text=True)  # fmt: skip
    line = proc.stdout.readline()
    if not line.startswith("ready "):
        proc.kill()
        raise SystemExit(f"serve-openenv did not start: {line!r}")
    return proc, line.split()[1]


def stop(proc: subprocess.Popen) -> None:
    proc.send_signal(signal.SIGTERM)
    try:
        proc.wait(60)
    except subprocess.TimeoutExpired:
        proc.kill()
        proc.wait()


def tree_cpu(root: int) -> float:
    """User + system CPU-seconds of `root` and every process below it (live ones)."""
    ticks = os.sysconf("SC_CLK_TCK")
    total = 0.0
    for pid in [root, *processes.descendants(root)]:
        try:
            fields = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()
            total += (int(fields[11]) + int(fields[12]) + int(fields[13]) + int(fields[14])) / ticks
        except (OSError, IndexError, ValueError):
            continue
    return total


def serve_timed(argv: list[str]) -> int:
    """The `server` script, each step's observation carrying `metadata["bench"]`: `step_s` (the environment's
    `step`), and for secrets-audit `call_s` (the agent's command or tool) and `grade_s` (the grades)."""
    from redaction_pressure.audit.openenv_env import SecretsAuditEnvironment
    from redaction_pressure.cli import serve_openenv
    from redaction_pressure.redact.openenv_env import RedactionPressureEnvironment

    def part(cls, name: str, key: str) -> None:
        inner = getattr(cls, name)

        def timed(self, *args, **kwargs):
            t0 = time.perf_counter()
            try:
                return inner(self, *args, **kwargs)
            finally:
                self._bench[key] = self._bench.get(key, 0.0) + time.perf_counter() - t0

        setattr(cls, name, timed)

    def stamped(cls) -> None:
        inner = cls.step

        def step(self, *args, **kwargs):
            self._bench, t0 = {}, time.perf_counter()
            observation = inner(self, *args, **kwargs)
            observation.metadata["bench"] = {**self._bench, "step_s": time.perf_counter() - t0}
            return observation

        cls.step = step

    part(SecretsAuditEnvironment, "_act", "call_s")
    part(SecretsAuditEnvironment, "_grade", "grade_s")
    stamped(SecretsAuditEnvironment)
    stamped(RedactionPressureEnvironment)
    return serve_openenv.main(argv)


def overhead(result, trip: float) -> float:
    """A step's round trip less its time inside the environment's `step` (from the timed server)."""
    return trip - result.observation.metadata["bench"]["step_s"]


def ms(values: list[float]) -> str:
    return f"p50 {statistics.median(values) * 1000:.1f} ms, p99 {pct(values, 0.99) * 1000:.1f} ms"


def pct(values: list[float], q: float) -> float:
    values = sorted(values)
    return values[min(len(values) - 1, int(q * len(values)))]


# -- redaction-pressure ---------------------------------------------------------------------------


def bench_rp(episodes: int, sessions: int) -> None:
    from redaction_pressure.redact.api import load_task, score_reply
    from redaction_pressure.redact.policies.reference import oracle_rules, reply
    from redaction_pressure.redact.scanner import scan

    tasks = [load_task("dev", i) for i in range(64)]
    replies = [reply(oracle_rules(t.hidden)) for t in tasks]
    expected, limit = [], []
    for task, text in zip(tasks, replies):
        t0 = time.process_time()
        expected.append(score_reply(task, text, scanner=scan).reward)
        limit.append(time.process_time() - t0)
    print(f"redaction-pressure in process: scoring p50 {statistics.median(limit) * 1000:.1f} ms CPU per episode")

    for count, concurrent in ((min(200, episodes), 1), (episodes, sessions)):
        served_rp(count, concurrent, replies, expected, limit)


def served_rp(episodes: int, sessions: int, replies: list[str], expected: list[float], limit: list[float]) -> None:
    from redaction_pressure.redact.openenv_env import RedactionAction, RedactionPressureEnv

    proc, url = start("--taskset", "redaction-pressure", "--max-sessions", str(sessions))
    try:
        cpu0, wall0 = tree_cpu(proc.pid), time.monotonic()
        queue = list(range(episodes))
        trips: list[float] = []
        extra: list[float] = []
        wrong: list[int] = []

        async def session() -> None:
            async with RedactionPressureEnv(base_url=url, message_timeout_s=300) as env:
                while queue:
                    n = queue.pop()
                    i = n % 64
                    await env.reset(split="dev", index=i)
                    t0 = time.monotonic()
                    result = await env.step(RedactionAction(reply=replies[i]))
                    trips.append(time.monotonic() - t0)
                    extra.append(overhead(result, trips[-1]))
                    if result.reward != expected[i]:
                        wrong.append(i)

        async def run() -> None:
            await asyncio.gather(*(session() for _ in range(sessions)))

        asyncio.run(run())
        wall, cpu = time.monotonic() - wall0, tree_cpu(proc.pid) - cpu0
    finally:
        stop(proc)
    print(f"redaction-pressure served: {episodes} episodes over {sessions} sessions in {wall:.1f} s = "
          f"{episodes / wall:.1f} episodes/s; server CPU {cpu / episodes * 1000:.1f} ms per episode; "
          f"step round trip {ms(trips)}; server overhead per step (round trip less the step's scoring) {ms(extra)} "
          f"(in-process scoring p50 {statistics.median(limit) * 1000:.1f} ms); rewards equal: {not wrong} "
          f"({len(wrong)} differ)")  # fmt: skip


# -- secrets-audit --------------------------------------------------------------------------------


class Killer:
    """SIGKILLs a random `podman exec` below `root` every `every` seconds until stopped."""

    def __init__(self, root: int, every: float) -> None:
        self.root, self.every, self.kills = root, every, 0
        self.done = threading.Event()
        self.thread = threading.Thread(target=self._run, daemon=True)
        self.thread.start()

    def _run(self) -> None:
        rng = random.Random(7)
        while not self.done.wait(self.every):
            execs = [
                pid
                for pid, cmd in processes.descendants(self.root).items()
                if " exec " in f" {cmd} " and "podman" in cmd
            ]
            if execs:
                try:
                    os.kill(rng.choice(execs), signal.SIGKILL)
                    self.kills += 1
                except ProcessLookupError:
                    pass

    def stop(self) -> int:
        self.done.set()
        self.thread.join()
        return self.kills


def bench_audit(count: int, kill_every: float) -> None:
    from redaction_pressure.audit import container, programs
    from redaction_pressure.audit import splits as audit_splits
    from redaction_pressure.audit.openenv_env import AuditAction, SecretsAuditEnv

    def own_containers() -> set[str]:
        out = container.podman("ps", "-a", "--format", "{{.Names}}", timeout=120).stdout.decode().split()
        return {n for n in out if n.startswith("secrets-audit-")}

    for label, killing in (("quiet", False), ("killer", True)):
        before = own_containers()
        proc, url = start("--taskset", "secrets-audit", "--max-sessions", str(count + 1))
        killer = Killer(proc.pid, kill_every) if killing else None
        outcomes: list[tuple[str, object]] = []
        timings: list[tuple[float, dict]] = []

        async def step(env, action):
            t0 = time.monotonic()
            result = await env.step(action)
            trip = time.monotonic() - t0
            timings.append((overhead(result, trip), result.observation.metadata["bench"]))
            return result

        async def play(i: int) -> None:
            gold = i % 2 == 0
            plan = audit_splits.plan_for("dev", i)
            try:
                async with SecretsAuditEnv(base_url=url, message_timeout_s=1800) as env:
                    await env.reset(split="dev", index=i)
                    if gold:
                        await step(env, AuditAction(command=programs.oracle_script(plan)))
                    result = await step(env, AuditAction(tool="submit"))
                    outcomes.append(("gold" if gold else "inaction", result.reward))
            except Exception as exc:  # noqa: BLE001 - a clear error is one of the two allowed endings
                outcomes.append(("gold" if gold else "inaction", f"error: {str(exc).splitlines()[0][:160]}"))

        async def leave() -> None:
            env = SecretsAuditEnv(base_url=url, message_timeout_s=1800)
            try:
                await env.connect()
                await env.reset(split="dev", index=count)
            except Exception as exc:  # noqa: BLE001 - the killer may strike its setup: an error is an ending
                outcomes.append(("leaving", f"error: {str(exc).splitlines()[0][:160]}"))
            finally:
                await env.disconnect()  # mid-episode: the server must remove its box

        async def run() -> None:
            await asyncio.gather(*(play(i) for i in range(count)), leave())

        t0 = time.monotonic()
        try:
            asyncio.run(run())
        finally:
            wall = time.monotonic() - t0
            kills = killer.stop() if killer else 0
            time.sleep(5)
            left_running = own_containers() - before
            stop(proc)
        left_after = own_containers() - before
        rewards = {k: [r for kk, r in outcomes if kk == k] for k in ("gold", "inaction", "leaving")}
        errors = [r for _, r in outcomes if isinstance(r, str)]
        scored = {k: [r for r in v if not isinstance(r, str)] for k, v in rewards.items()}
        expected = all(r == 1.0 for r in scored["gold"]) and all(r == 0.0 for r in scored["inaction"])
        print(f"secrets-audit {label}: {count} sessions + 1 disconnecting, {wall:.0f} s, {kills} podman execs killed; "
              f"ended {len(rewards['gold']) + len(rewards['inaction'])} of {count} ({len(errors)} errors, the leaving client's included); gold rewards {rewards['gold']}; "
              f"inaction rewards {rewards['inaction']}; {'every reward as the formula says' if expected else 'a reward NOT as the formula says'}; "
              f"containers left while serving {len(left_running)}, after the server stopped {len(left_after)}")  # fmt: skip
        for e in errors[:3]:
            print(f"  {e}")
        if timings:
            print(f"  {len(timings)} steps: server overhead (round trip less the step) {ms([t for t, _ in timings])}; "
                  f"inside the step: the agent's call {ms([b.get('call_s', 0.0) for _, b in timings])}, "
                  f"the grade {ms([b.get('grade_s', 0.0) for _, b in timings])}, the rest "
                  f"{ms([b['step_s'] - b.get('call_s', 0.0) - b.get('grade_s', 0.0) for _, b in timings])}")  # fmt: skip


def main() -> int:
    if sys.argv[1:2] == ["--serve-timed"]:
        return serve_timed(sys.argv[2:])
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--part", choices=("rp", "audit", "all"), default="all")
    parser.add_argument("--episodes", type=int, default=1000)
    parser.add_argument("--sessions", type=int, default=64)
    parser.add_argument("--audit-sessions", type=int, default=16)
    parser.add_argument("--kill-every", type=float, default=3.0)
    args = parser.parse_args()
    if args.part in ("rp", "all"):
        bench_rp(args.episodes, args.sessions)
    if args.part in ("audit", "all"):
        bench_audit(args.audit_sessions, args.kill_every)
    return 0


if __name__ == "__main__":
    sys.exit(main())
