"""Load benchmark: many episodes through the served env pool and plain vf-eval, hostile answers, faults (a script, not a test).

    uv run python -m benchmarks.load [--episodes 1024] [--concurrency 64] [--kill-every 3] [--burners 2]
        [--part served|loop|vfeval|flips|both] [--kill-env-worker-at SECONDS]

Faults: a killer SIGKILLs a random `redaction_pressure.redact.worker` below the run every
`--kill-every` seconds (on average), whatever it is doing: starting (it has not loaded
the scanner yet), scanning or idle; the first scan worker it sees is struck at once, so
the pool's first start is killed too. `--burners N` runs N CPU-burning processes beside
the run. Every part prints lost episodes, changed rewards, kills split by "while
starting" / "while scanning" / "while idle", and throughput.

Parts, all against a quiet reference (every answer scored alone, in this process,
with the plain in-process scanner):

1. **Served.** `redaction-pressure serve-env --workers 2` (verifiers' env-server pool, each
   worker with its scan pool) and a stand-in model on 127.0.0.1 that answers each train
   prompt with a scripted reply: 80% realistic (the oracle, induction, constant and prefix
   policies in turn), 10% hostile (catastrophic backtracking, budget floods, empty
   matches, match floods, invalid patterns), 5% malformed, 5% budget-hungry but valid.
   An `EnvClient` runs the episodes with `--concurrency` in flight while a thread SIGKILLs
   a random scan worker of the server every `--kill-every` seconds. Prints throughput,
   scoring latency p50/p99 (`trace.timing.scoring`), peak memory per process role,
   scan-worker replacements (PIDs that appeared after the start) and the episodes lost,
   errored or whose reward or error codes differ from the reference; memory growth of
   each env-server worker between the 256th episode and the end.
2. **Event loop.** The same episodes scored by the taskset in this process (the code an
   env-server worker runs), `--concurrency` at a time, with a 1 ms ticker on the loop and
   the same killer: the largest stall, and rewards against the reference.
3. **vf-eval** (`--part vfeval`). The same train episodes through plain `vf-eval
   redaction-pressure -n EPISODES -c CONCURRENCY` (subprocess runtime) against the stand-in
   model, the killer striking scan workers below vf-eval.
4. **Flips** (`--part flips`). Near-budget answers (valid rules that use most of the
   episode's matching budget) scored `--flip-repeats` times each through a scan pool, with
   no budget recheck, one recheck on a fresh worker, and the default rule (up to three runs,
   the fastest decides): the share of answers whose verdict is not the same on every run
   (flip rate), and how many differ at least once from their verdict scored alone.

`--kill-env-worker-at S` (served part) also SIGKILLs one env-server worker S seconds
into the run: no episode may hang or be lost.

The process helpers (who runs below a PID, memory, the killer, the burners) are in
`processes.py` beside this script. Nothing here talks to anything but 127.0.0.1.
"""

from __future__ import annotations

import argparse
import asyncio
import json
import os
import signal
import subprocess
import sys
import threading
import time
from pathlib import Path

from benchmarks.processes import Burners, Killer, descendants, role, rss_mib
from redaction_pressure.cli.endpoint import ChatServer, last_user_text
from redaction_pressure.redact import policies
from redaction_pressure.redact.api import load_task, score_reply
from redaction_pressure.redact.rules import Rule
from redaction_pressure.redact.scanner import scan

BIN = Path(sys.executable).parent
HOSTILE = [
    json.dumps({"rules": [{"pattern": r"(?s)(.|.)*(?<=\x00)", "replacement": ""}]}),  # timeout
    json.dumps(
        {"rules": [{"pattern": r"(?s).{0,6}.{0,6}.{0,6}(?<=\x00)", "replacement": ""}] * 24}
    ),  # budget_exhausted
    json.dumps({"rules": [{"pattern": "x*", "replacement": ""}]}),  # empty_match
    json.dumps({"rules": [{"pattern": "(?s).", "replacement": ""}]}),  # excessive_matches
    json.dumps({"rules": [{"pattern": "a{100000}", "replacement": ""}]}),  # invalid_regex
    json.dumps({"rules": [{"pattern": "(?:(?:a{100}){100}){2}", "replacement": ""}]}),  # invalid_regex
]
MALFORMED = [
    "rules: [AKIA]",
    '{"rules": [{"pattern": "AKIA"}]}',
    "Sure! Here are the rules.",
    '{"rules": [], "rules": []}',
]
HUNGRY = r"(?:[A-Za-z0-9]{1,40}){1,2}(?<=Q{3})"


def answer(task, i: int) -> tuple[str, str]:
    """Episode i's scripted reply and its category."""
    slot = i % 20
    if slot in (3, 13):
        return "hostile", HOSTILE[(i // 20) % len(HOSTILE)]
    if slot == 7:
        return "malformed", MALFORMED[(i // 20) % len(MALFORMED)]
    if slot == 17:
        return "hungry", policies.reply([*policies.oracle_rules(task.hidden), Rule(HUNGRY, "")])
    realistic = (
        lambda: policies.oracle_rules(task.hidden),
        lambda: policies.induction_rules(task.prompt.user),
        lambda: policies.constant_rules(),
        lambda: policies.prefix_rules(task.shown),
    )
    return "realistic", policies.reply(realistic[i % 4]())


def outcome(reward: float, codes: list[str]) -> tuple[float, tuple[str, ...]]:
    return (round(reward, 12), tuple(codes))


def percentile(values: list[float], q: float) -> float:
    ordered = sorted(values)
    return ordered[min(len(ordered) - 1, int(q * len(ordered)))] if ordered else float("nan")


# -- part 1: served ----------------------------------------------------------------------------


def served(tasks, replies, reference, args) -> None:
    import verifiers.v1 as vf
    from verifiers.v1.serve import EnvClient

    from redaction_pressure.redact.taskset import RedactionPressureConfig, RedactionPressureTaskset

    by_prompt = {task.prompt.user: reply for task, (_, reply) in zip(tasks, replies, strict=True)}
    model = ChatServer(lambda body: by_prompt.get(last_user_text(body), "no such prompt"))
    server = subprocess.Popen(
        [str(BIN / "redaction-pressure"), "serve-env", "--port", "0", "--workers", str(args.workers)],
        stdout=subprocess.PIPE, stderr=subprocess.DEVNULL, stdin=subprocess.DEVNULL, text=True,
        env={k: v for k, v in os.environ.items() if k != "REDACTION_PRESSURE_PRIVATE_SEED"},
    )  # fmt: skip
    line = server.stdout.readline()
    if not line.startswith("ready "):
        server.kill()
        raise SystemExit(f"serve-env did not become ready: {line!r}")
    address = line.split()[1]
    data = [
        t.data.model_dump(mode="json")
        for t in RedactionPressureTaskset(RedactionPressureConfig(split="train", size=len(tasks)))
    ]
    initial = set(descendants(server.pid))
    seen: dict[int, str] = {}
    peaks: dict[int, float] = {}
    at_256: dict[int, float] = {}
    done = 0
    sampling = threading.Event()

    def sample() -> None:
        while not sampling.wait(0.5):
            for pid, cmd in descendants(server.pid).items():
                seen.setdefault(pid, cmd)
                peaks[pid] = max(peaks.get(pid, 0.0), rss_mib(pid))
                if done >= 256 and pid not in at_256 and role(cmd) == "env-server worker":
                    at_256[pid] = rss_mib(pid)
            peaks[server.pid] = max(peaks.get(server.pid, 0.0), rss_mib(server.pid))

    sampler = threading.Thread(target=sample, daemon=True)
    sampler.start()
    killer = Killer(server.pid, args.kill_every)
    killer.start()
    env_kills: list[int] = []
    if args.kill_env_worker_at is not None:

        def kill_env_worker() -> None:
            workers = [pid for pid, cmd in descendants(server.pid).items() if role(cmd) == "env-server worker"]
            if workers:
                os.kill(workers[0], signal.SIGKILL)
                env_kills.append(workers[0])

        threading.Timer(args.kill_env_worker_at, kill_env_worker).start()
    results: list = [None] * len(tasks)
    latencies: list[float] = []

    async def run_all() -> None:
        client = EnvClient(address)
        gate = asyncio.Semaphore(args.concurrency)
        config = vf.EvalClientConfig(base_url=model.url, api_key_var="LOAD_BENCH_KEY")

        async def one(n: int) -> None:
            nonlocal done
            async with gate:
                try:
                    episode = await asyncio.wait_for(
                        client.run(client=config, model="standin", sampling=vf.SamplingConfig(), task_data=data[n]), 600
                    )
                    results[n] = episode.traces[0]
                    latencies.append(results[n].timing.scoring.duration)
                except Exception as exc:  # noqa: BLE001 - a lost episode is what we count
                    results[n] = exc
                done += 1

        try:
            await asyncio.gather(*(one(n) for n in range(len(tasks))))
        finally:
            await client.close()

    started = time.perf_counter()
    asyncio.run(run_all())
    elapsed = time.perf_counter() - started
    killer.stop.set()
    final = {pid: rss_mib(pid) for pid, cmd in descendants(server.pid).items() if role(cmd) == "env-server worker"}
    sampling.set()
    server.send_signal(signal.SIGTERM)
    status = server.wait(60)
    model.close()

    lost = [n for n, r in enumerate(results) if isinstance(r, Exception) or r is None]
    errored = [
        n for n, r in enumerate(results) if n not in lost and (r.errors or any(v is None for v in r.rewards.values()))
    ]
    changed = [
        n for n, r in enumerate(results)
        if n not in lost and n not in errored
        and outcome(r.reward, [e["code"] for e in r.info.get("redaction_errors", [])]) != reference[n]
    ]  # fmt: skip
    replacements = len([pid for pid, cmd in seen.items() if role(cmd) == "scan worker" and pid not in initial])
    print(
        f"served: {len(tasks)} train episodes, concurrency {args.concurrency}, {args.workers} env-server workers, a scan worker killed every ~{args.kill_every:g} s"
    )
    print(f"  throughput          {len(tasks) / elapsed:.2f} episodes/s ({elapsed:.0f} s)")
    print(
        f"  scoring latency     p50 {percentile(latencies, 0.5) * 1000:.0f} ms, p99 {percentile(latencies, 0.99) * 1000:.0f} ms (trace.timing.scoring)"
    )
    print(f"  {killer.summary()}; scan-worker processes started after warm-up: {replacements}")
    print(f"  env-server workers killed: {len(env_kills)}")
    print(f"  lost {len(lost)}, errored {len(errored)}, reward or error codes changed {len(changed)} (of {len(tasks)})")
    for n in (lost + errored)[:5]:
        print(f"    episode {n}: {results[n]!r:.300}")
    for n in changed[:5]:
        got = outcome(
            results[n].reward,
            [
                e["detail"] if e["code"] == "resource_exhausted" else e["code"]
                for e in results[n].info.get("redaction_errors", [])
            ],
        )
        print(f"    episode {n} ({replies[n][0]}): quiet {reference[n]}, served {got}")
    by_role: dict[str, list[float]] = {}
    for pid, peak in peaks.items():
        by_role.setdefault("broker (serve-env)" if pid == server.pid else role(seen.get(pid, "")), []).append(peak)
    for name, values in sorted(by_role.items()):
        print(f"  peak RSS {name:32s} max {max(values):6.0f} MiB over {len(values)} process(es)")
    for pid, end in final.items():
        if pid in at_256:
            print(f"  env-server worker {pid}: RSS {at_256[pid]:.0f} MiB after 256 episodes, {end:.0f} MiB at the end")
    print(f"  serve-env exit status after SIGTERM: {status}")


# -- part 2: event loop ---------------------------------------------------------------------


def event_loop(tasks, replies, reference, args) -> None:
    import verifiers.v1 as vf

    from redaction_pressure.redact.taskset import RedactionPressureConfig, RedactionPressureTaskset

    built = list(RedactionPressureTaskset(RedactionPressureConfig(split="train", size=len(tasks))))
    killer = Killer(os.getpid(), args.kill_every, seed=2)
    stalls: list[float] = []

    def trace_for(task, reply: str) -> vf.Trace:
        nodes = [vf.MessageNode(message=vf.UserMessage(content=task.data.prompt)),
                 vf.MessageNode(parent=0, message=vf.AssistantMessage(content=reply), sampled=True)]  # fmt: skip
        return vf.Trace(
            task=vf.TraceTask(type=type(task).__name__, data=task.data, key=task.key, hash=task.hash),
            agent=vf.AgentInfo(config=vf.AgentConfig(runtime=vf.SubprocessConfig()), name="load"), nodes=nodes,
        )  # fmt: skip

    async def main() -> tuple[list, float]:
        stop = asyncio.Event()

        async def ticker() -> None:
            while not stop.is_set():
                before = time.perf_counter()
                await asyncio.sleep(0.001)
                stalls.append(time.perf_counter() - before - 0.001)

        gate = asyncio.Semaphore(args.concurrency)
        traces = [trace_for(task, reply) for task, (_, reply) in zip(built, replies, strict=True)]

        async def one(task, trace) -> None:
            async with gate:
                await task.score(trace)

        tick = asyncio.ensure_future(ticker())
        started = time.perf_counter()
        await asyncio.gather(*(one(t, tr) for t, tr in zip(built, traces, strict=True)), return_exceptions=True)
        elapsed = time.perf_counter() - started
        stop.set()
        await tick
        return traces, elapsed

    assert built[0].pool is not None  # start the scan pool before timing
    killer.start()
    traces, elapsed = asyncio.run(main())
    killer.stop.set()
    changed = [
        n
        for n, t in enumerate(traces)
        if outcome(t.reward, [e["code"] for e in t.info.get("redaction_errors", [])]) != reference[n]
    ]
    print(
        f"event loop: the same {len(tasks)} episodes scored by the taskset in this process, concurrency {args.concurrency}"
    )
    print(f"  throughput          {len(tasks) / elapsed:.1f} episodes/s ({elapsed:.1f} s)")
    print(
        f"  largest stall       {max(stalls) * 1000:.1f} ms (p99 {percentile(stalls, 0.99) * 1000:.1f} ms over {len(stalls)} ticks)"
    )
    print(f"  {killer.summary()}; lost 0 (every trace scored in place), reward or error codes changed: {len(changed)}")
    print(f"  peak RSS of this process {rss_mib(os.getpid(), 'VmHWM'):.0f} MiB")


# -- part 3: plain vf-eval ---------------------------------------------------------------------


def vfeval(tasks, replies, reference, args) -> None:
    import tempfile

    by_prompt = {task.prompt.user: reply for task, (_, reply) in zip(tasks, replies, strict=True)}
    model = ChatServer(lambda body: by_prompt.get(last_user_text(body), "no such prompt"))
    out = Path(tempfile.mkdtemp(prefix="rp-load-vfeval-"))
    env = {k: v for k, v in os.environ.items() if k != "REDACTION_PRESSURE_PRIVATE_SEED"}
    env.update(LOAD_BENCH_KEY="not-a-real-key", UV_PYTHON_DOWNLOADS="never")
    started = time.perf_counter()
    run = subprocess.Popen(
        [str(BIN / "vf-eval"), "redaction-pressure", "-n", str(len(tasks)), "-c", str(args.concurrency), "-m", "standin",
         "--client.base-url", model.url, "--client.api-key-var", "LOAD_BENCH_KEY",
         "--env.agent.runtime.type", "subprocess", "--env.taskset.split", "train",
         "--no-push", "--no-rich", "-o", str(out)],
        env=env, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, stdin=subprocess.DEVNULL, text=True,
    )  # fmt: skip
    killer = Killer(run.pid, args.kill_every, seed=3)
    killer.start()
    output, _ = run.communicate()
    elapsed = time.perf_counter() - started
    killer.stop.set()
    model.close()
    found = {}
    for path in out.rglob("traces.jsonl"):
        for line in path.read_text().splitlines():
            for trace in json.loads(line).get("traces", []) if line.strip() else []:
                found[trace["task"]["data"]["index"]] = trace
    lost = [n for n in range(len(tasks)) if n not in found or found[n].get("errors")]
    changed = []
    for n, trace in found.items():
        if n in lost or n >= len(reference):
            continue
        reward = sum(r["score"] * r["weight"] for r in trace["rewards"].values())
        if outcome(reward, [e["code"] for e in trace["info"].get("redaction_errors", [])]) != reference[n]:
            changed.append(n)
    print(
        f"vf-eval: {len(tasks)} train episodes, -c {args.concurrency}, subprocess runtime, exit status {run.returncode}"
    )
    print(f"  throughput          {len(tasks) / elapsed:.2f} episodes/s ({elapsed:.0f} s, vf-eval's start included)")
    print(f"  {killer.summary()}")
    print(f"  lost {len(lost)}, reward or error codes changed {len(changed)} (of {len(tasks)})")
    for n in (lost + changed)[:5]:
        print(f"    episode {n}: {json.dumps(found.get(n, {}).get('errors', 'no trace'))[:300]}")
    if run.returncode:
        print(output[-2000:])


# -- part 4: near-budget flips ----------------------------------------------------------------


def flips(args) -> None:
    from redaction_pressure.redact.pool import ScanPool

    candidates = []
    for index in range(args.flip_tasks * 4):
        task = load_task("train", index)
        for copies in (3, 2, 4):  # one copy of the hungry rule uses about a third of the budget
            text = policies.reply([*policies.oracle_rules(task.hidden), *[Rule(HUNGRY, "")] * copies])
            quiet = score_reply(task, text, scanner=scan)
            if 0.7 <= quiet.metrics["budget_used"] or any(e.code == "budget_exhausted" for e in quiet.errors):
                candidates.append((task, text, quiet.reward))
                break
        if len(candidates) >= args.flip_tasks:
            break
    print(
        f"flips: {len(candidates)} near-budget answers, each scored {args.flip_repeats} times, {args.burners} CPU burners"
    )
    rules = (("no recheck", {"budget_runs": 1}), ("one recheck on a fresh worker", {"budget_runs": 2, "rerun_fresh": True}),
             ("up to 3 runs, the fastest decides (default)", {}))  # fmt: skip
    for label, settings in rules:
        with ScanPool(workers=2, **settings) as pool:
            flipped = changed = exhausted = 0
            for task, text, quiet in candidates:
                verdicts = [score_reply(task, text, scanner=pool.scan).reward for _ in range(args.flip_repeats)]
                flipped += len(set(verdicts)) > 1
                changed += any(v != quiet for v in verdicts)
                exhausted += verdicts.count(0.0)
            runs = len(candidates) * args.flip_repeats
            print(f"  {label}: {flipped} of {len(candidates)} answers flipped ({flipped / max(1, len(candidates)):.0%}), "
                  f"{changed} differ from their quiet verdict at least once; {exhausted} of {runs} runs "
                  f"budget_exhausted; {pool.rechecked} rechecks")  # fmt: skip


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--episodes", type=int, default=1024)
    parser.add_argument("-c", "--concurrency", type=int, default=64)
    parser.add_argument("--workers", type=int, default=2, help="env-server workers (part 1)")
    parser.add_argument(
        "--kill-every", type=float, default=3.0, help="mean seconds between scan-worker kills (0: none)"
    )
    parser.add_argument("--part", choices=("served", "loop", "vfeval", "flips", "both"), default="both")
    parser.add_argument("--burners", type=int, default=0, help="CPU-burning processes beside the run")
    parser.add_argument(
        "--kill-env-worker-at", type=float, help="served: SIGKILL one env-server worker this many seconds in"
    )
    parser.add_argument("--flip-tasks", type=int, default=12, help="flips: near-budget answers")
    parser.add_argument("--flip-repeats", type=int, default=6, help="flips: runs of each answer")
    args = parser.parse_args()
    with Burners(args.burners):
        return run_parts(args)


def run_parts(args) -> int:
    if args.part == "flips":
        flips(args)
        return 0
    tasks = [load_task("train", i) for i in range(args.episodes)]
    replies = [answer(task, i) for i, task in enumerate(tasks)]
    started = time.perf_counter()
    reference = []
    for task, (_, reply) in zip(tasks, replies, strict=True):
        result = score_reply(task, reply, scanner=scan)
        reference.append(outcome(result.reward, [e.code for e in result.errors]))
    mix = ", ".join(
        f"{kind} {sum(1 for k, _ in replies if k == kind)}" for kind in ("realistic", "hostile", "malformed", "hungry")
    )
    print(f"reference: {len(tasks)} answers scored alone in {time.perf_counter() - started:.0f} s; mix {mix}")
    if args.part in ("loop", "both"):
        event_loop(tasks, replies, reference, args)
    if args.part in ("served", "both"):
        served(tasks, replies, reference, args)
    if args.part == "vfeval":
        vfeval(tasks, replies, reference, args)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
