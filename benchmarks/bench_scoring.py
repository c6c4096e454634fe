"""Scoring benchmark: prints latency, overhead ratios, hostile wall times, loop stalls, load time, memory.

    uv run python -m benchmarks.bench_scoring [--reps N]

A script, not a test: the machines are shared and noisy, so it reports medians and
ratios from one run, against the targets of the issue that asked for it. Nothing here
talks to the network.

Figures:
- per-episode scoring latency (median, p99) of realistic answers on all 64 dev tasks,
  through the production path: parse, a pool worker's scan, grading;
- the whole scoring of an episode in this process (parse, static check, compile, scan,
  grade) against bare `regex` (compile, `finditer` with the same per-call timeout) on the
  same rules and texts, per-episode p50, on realistic and on oracle answers, with patterns
  fresh to both compile caches (a new answer) and repeated (the practical limit); and a
  naive stdlib `re.sub` scorer's time over our scan;
- the worst wall time of a hostile episode (the hostile suite) against the 1 s budget;
- the largest event-loop stall while 64 episodes (8 hostile) are scored concurrently by
  the verifiers taskset;
- the time to load the 64 dev tasks in a fresh process; peak memory of parent and workers.
"""

from __future__ import annotations

import argparse
import asyncio
import json
import re
import statistics
import subprocess
import sys
import time
from pathlib import Path

import regex

from redaction_pressure.redact import policies
from redaction_pressure.redact.api import load_task, prompt_digest, score_reply
from redaction_pressure.redact.pool import ScanPool
from redaction_pressure.redact.rules import Rule, parse_reply
from redaction_pressure.redact.scanner import DEFAULT_BUDGET, EPISODE_BUDGET_SECONDS, scan
from redaction_pressure.redact.static_check import static_problem
from redaction_pressure.splits import seed_for

ROOT = Path(__file__).resolve().parents[1]

TARGETS = {
    "p50": "<= 5 ms",
    "vs_bare": "<= 2x",
    "vs_re": ">= 2x faster",
    "hostile": f"<= {EPISODE_BUDGET_SECONDS * 1000 + 100:.0f} ms",
    "stall": "<= 20 ms",
    "load": "<= 0.5 s",
}


def realistic_answers(task) -> dict[str, str]:
    """Answers shaped like a model's: context rules, prefix rules, scanner rules, the oracle."""
    context = [
        Rule(r"(?<![A-Z0-9])(?:AKIA|ASIA)[A-Z2-7]{16}(?<!EXAMPLE)", "[REDACTED]"),
        Rule(r"(?<=://[a-z_]+:)[^@\s\"]+(?=@)", "[REDACTED]"),
        Rule(r"(?<=PASSWORD ')[^']+", "[REDACTED]"),
        Rule(r"gh[po]_[A-Za-z0-9]{36}", "[REDACTED]"),
        Rule(r"-----BEGIN [A-Z ]*PRIVATE KEY-----[\s\S]+?-----END [A-Z ]*PRIVATE KEY-----", "[REDACTED]"),
        Rule(r"eyJ[\w-]+\.eyJ[\w-]+\.[\w-]+", "[REDACTED]"),
        Rule(r"(?<=(?:^|[\s_])(?:password|secret|token|api_key) = \")[^\"]+", "[REDACTED]"),
    ]
    return {
        "context": policies.reply(context),
        "prefix": policies.reply(policies.prefix_rules(task.shown)),
        "scanner": policies.reply(policies.scanner_rules()),
        "oracle": policies.reply(policies.oracle_rules(task.hidden)),
    }


def percentile(values: list[float], q: float) -> float:
    ordered = sorted(values)
    return ordered[min(len(ordered) - 1, int(round(q * (len(ordered) - 1))))]


def bench_latency(tasks, pool: ScanPool, reps: int) -> list[float]:
    """Per-episode wall time of the taskset's path: a worker rebuilds, parses, scans, grades."""
    jobs = [
        (seed_for("dev", task.index), prompt_digest(task.prompt.user), answer)
        for task in tasks
        for answer in realistic_answers(task).values()
    ]
    times = []
    for _ in range(reps):
        for seed, digest, answer in jobs:
            start = time.perf_counter()
            pool.score_episode(seed, 8, 32, digest, answer)
            times.append(time.perf_counter() - start)
    return times


def bench_ratios(tasks, reps: int) -> tuple[float, float]:
    """Total seconds for our scan and a naive re.sub scorer on the same rules and texts.

    Only rules stdlib `re` also compiles take part (it refuses variable-width lookbehind),
    so both do exactly the same matching work; compiled patterns are cached (warm).
    """

    def re_compiles(rule: Rule) -> bool:
        try:
            re.compile(rule.pattern)
        except re.error:
            return False
        return True

    jobs = []
    for task in tasks:
        texts = [r.text for r in task.hidden]
        for answer in realistic_answers(task).values():
            rules = [rule for rule in parse_reply(answer).rules if re_compiles(rule)]
            if rules:
                jobs.append((rules, texts))

    def ours():
        for rules, texts in jobs:
            scan(rules, texts)

    def naive():
        for rules, texts in jobs:
            for text in texts:
                for rule in rules:
                    text = re.sub(rule.pattern, rule.replacement, text)

    def best(fn) -> float:
        samples = []
        for _ in range(reps):
            start = time.perf_counter()
            fn()
            samples.append(time.perf_counter() - start)
        return statistics.median(samples)

    ours(), naive()
    return best(ours), best(naive)


def bench_floor(tasks, reps: int) -> dict[tuple[str, str], tuple[float, float]]:
    """Per-episode p50 of the whole scoring (parse, static check, compile, scan, grade; in
    this process) against bare `regex` on the same rules and texts: compile, then
    `finditer` with the same per-call timeout. Keys: (answers, cache) with answers
    "realistic" (all four kinds) or "oracle", cache "fresh" (each episode's patterns new
    to `regex`'s compile cache and to our check's, as a model's new answer is) or "repeated"
    (both caches warm, as when a policy repeats its rules)."""
    episodes = [(task, kind, answer) for task in tasks for kind, answer in realistic_answers(task).items()]
    prepared = [
        (task, kind, answer, parse_reply(answer).rules, [r.text for r in task.hidden])
        for task, kind, answer in episodes
    ]

    def ours(task, answer, rules, texts) -> None:
        score_reply(task, answer, scanner=scan)

    def bare(task, answer, rules, texts) -> None:
        for rule in rules:
            try:
                pattern = regex.compile(rule.pattern)
            except Exception:  # noqa: BLE001 - an answer that does not compile costs what it costs
                continue
            for text in texts:
                try:
                    for _ in pattern.finditer(text, timeout=DEFAULT_BUDGET.call):
                        pass
                except TimeoutError:
                    pass

    times: dict[tuple[str, str, str], list[float]] = {}
    for cache in ("fresh", "repeated"):
        for _ in range(reps):
            for task, kind, answer, rules, texts in prepared:
                for name, fn in (("ours", ours), ("bare", bare)):
                    if cache == "fresh":
                        regex.purge()
                        static_problem.cache_clear()
                    else:
                        fn(task, answer, rules, texts)
                    start = time.perf_counter()
                    fn(task, answer, rules, texts)
                    elapsed = time.perf_counter() - start
                    for group in ("realistic", "oracle") if kind == "oracle" else ("realistic",):
                        times.setdefault((group, cache, name), []).append(elapsed)
    return {
        (group, cache): (
            statistics.median(times[(group, cache, "ours")]),
            statistics.median(times[(group, cache, "bare")]),
        )
        for group in ("realistic", "oracle")
        for cache in ("fresh", "repeated")
    }


def bench_hostile(pool: ScanPool) -> tuple[float, str]:
    from redaction_pressure.redact.api import Prompt, RedactionTask
    from tests.redact.test_hostile import CASES, RUNS

    longest = max((load_task("dev", i) for i in range(64)), key=lambda t: sum(len(r.text) for r in t.hidden))
    runs = RedactionTask(split="dev", index=0, prompt=Prompt(system="", user=""), shown=(), hidden=RUNS, identity={})
    tasks = {"dev": longest, "runs": runs}
    worst, name = 0.0, ""
    for case, text, texts, _ in CASES:
        start = time.perf_counter()
        score_reply(tasks[texts], text, scanner=pool.scan)
        elapsed = time.perf_counter() - start
        if elapsed > worst:
            worst, name = elapsed, case
    return worst, name


def bench_loop_stall() -> tuple[float, float, float]:
    """Largest gap of a 1 ms ticker while the taskset scores 64 episodes (8 hostile) submitted
    at once: overall, and after the first 0.1 s (the submission burst, when the 64 scoring
    calls' synchronous preludes run back to back), and the wall time."""
    from redaction_pressure.redact.taskset import RedactionPressureConfig, RedactionPressureTaskset
    from tests.support.taskset import make_trace, oracle_reply

    dev = list(RedactionPressureTaskset(RedactionPressureConfig(split="dev")))
    hostile = json.dumps({"rules": [{"pattern": r"(?s)(.|.)*(?<=\x00)", "replacement": ""}]})
    work = [(task, hostile if i % 8 == 0 else oracle_reply(task)) for i, task in enumerate(dev)]

    async def main() -> tuple[float, float, float]:
        gaps, done = [(0.0, 0.0)], asyncio.Event()

        async def ticker():
            last = time.perf_counter()
            while not done.is_set():
                await asyncio.sleep(0.001)
                now = time.perf_counter()
                gaps.append((now - last - 0.001, now - start))
                last = now

        # Warm the shared pool so worker start-up is not counted as scoring, and build
        # the traces (a rollout's job, not scoring's) before the ticker starts.
        await dev[1].score(make_trace(dev[1], oracle_reply(dev[1])))
        traces = [(task, make_trace(task, answer)) for task, answer in work]
        start = time.perf_counter()
        tick = asyncio.create_task(ticker())
        await asyncio.sleep(0)
        await asyncio.gather(*(task.score(trace) for task, trace in traces))
        wall = time.perf_counter() - start
        done.set()
        await tick
        return max(g for g, _ in gaps), max(g for g, at in gaps if at > 0.1), wall

    return asyncio.run(main())


def bench_load() -> float:
    code = (
        "import time\n"
        "from redaction_pressure.redact.api import load_task\n"
        "start = time.perf_counter()\n"
        "tasks = [load_task('dev', i) for i in range(64)]\n"
        "print(time.perf_counter() - start)\n"
    )
    samples = []
    for _ in range(3):
        out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True, cwd=ROOT)
        samples.append(float(out.stdout.strip()))
    return statistics.median(samples)


def peak_memory_mb(pool: ScanPool) -> tuple[float, float]:
    import resource

    parent = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024
    workers = 0.0
    for worker in list(pool._idle.queue):
        status = Path(f"/proc/{worker.process.pid}/status").read_text()
        workers = max(workers, int(re.search(r"VmHWM:\s+(\d+)", status).group(1)) / 1024)
    return parent, workers


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--reps", type=int, default=3, help="repetitions of the latency and ratio runs")
    args = parser.parse_args()
    tasks = [load_task("dev", i) for i in range(64)]
    rows = []
    with ScanPool(workers=2) as pool:
        score_reply(tasks[0], '{"rules": []}', scanner=pool.scan)  # start-up is not latency
        latency = bench_latency(tasks, pool, args.reps)
        p50, p99 = statistics.median(latency), percentile(latency, 0.99)
        rows.append(("episode latency p50 (pool)", f"{p50 * 1000:.2f} ms", TARGETS["p50"], p50 <= 0.005))
        rows.append(("episode latency p99 (pool)", f"{p99 * 1000:.2f} ms", "-", None))
        for (group, cache), (ours_p50, bare_p50) in bench_floor(tasks, args.reps).items():
            ratio = ours_p50 / bare_p50
            rows.append((f"scoring p50 / bare regex p50, {group}, {cache}", f"{ours_p50 * 1000:.2f} / {bare_p50 * 1000:.2f} ms = {ratio:.2f}x",
                         TARGETS["vs_bare"], ratio <= 2.0))  # fmt: skip
        ours, naive = bench_ratios(tasks, args.reps)
        rows.append(("naive re.sub scorer / our scan", f"{naive / ours:.2f}x", TARGETS["vs_re"], naive / ours >= 2.0))
        worst, name = bench_hostile(pool)
        rows.append(
            (
                f"worst hostile episode ({name})",
                f"{worst * 1000:.0f} ms",
                TARGETS["hostile"],
                worst <= EPISODE_BUDGET_SECONDS + 0.1,
            )
        )
        parent_mb, worker_mb = peak_memory_mb(pool)
    stall, steady, wall = bench_loop_stall()
    rows.append(
        (
            "largest loop stall, 64 episodes (8 hostile)",
            f"{stall * 1000:.1f} ms (in {wall:.1f} s)",
            TARGETS["stall"],
            stall <= 0.020,
        )
    )
    rows.append(
        ("  the same, after the submission burst", f"{steady * 1000:.1f} ms", TARGETS["stall"], steady <= 0.020)
    )
    load = bench_load()
    rows.append(("dev split load, fresh process", f"{load:.3f} s", TARGETS["load"], load <= 0.5))
    rows.append(("peak memory: parent / one worker", f"{parent_mb:.0f} / {worker_mb:.0f} MiB", "-", None))

    print(f"redaction-pressure scoring benchmark ({len(latency)} scored episodes; python {sys.version.split()[0]})")
    width = max(len(r[0]) for r in rows)
    for name, value, target, ok in rows:
        verdict = "" if ok is None else ("met" if ok else "MISSED")
        print(f"  {name:<{width}}  {value:>22}  target {target:<14} {verdict}")


if __name__ == "__main__":
    main()
