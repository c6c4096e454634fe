"""Serve the taskset the way a trainer reaches it: verifiers' env server over TCP on 127.0.0.1.

`redaction-pressure serve-env` runs `serve()`: `verifiers.v1.serve.serve_env` with a static
(`--workers N`) or elastic (`--elastic --max-workers N`) pool of env-server worker
processes in this process's foreground, and a readiness thread beside it. verifiers'
broker answers health checks before its workers have loaded anything, so readiness here
means more: the thread runs one warm-up episode per pre-spawned worker against a local
chat endpoint that answers `{"rules": []}`, which makes each worker load the taskset and
start its scan pool. Only when every warm-up episode has come back scored does it print

    ready tcp://127.0.0.1:PORT workers=N

on standard output (one line, flushed); a trainer waits for that line, then connects an
`EnvClient` to the address. SIGTERM or SIGINT shut the broker, its workers and their scan
pools down and exit 0. A verifiers adapter: the only other module importing verifiers is
`taskset.py`.
"""

from __future__ import annotations

import asyncio
import logging
import os
import queue
import signal
import sys
import threading
from collections.abc import Callable

import verifiers.v1 as vf
from verifiers.v1.serve import EnvClient, env_config_data, serve_env

from redaction_pressure.endpoint import ChatServer
from redaction_pressure.taskset import RedactionPressureConfig, RedactionPressureTaskset

NO_RULES = '{"rules": []}'
WARM_UP_KEY_VAR = "REDACTION_PRESSURE_WARM_UP_KEY"


def env_config(taskset: dict, runtime: str = "subprocess") -> dict:
    """The picklable env config `serve_env` ships to its workers."""
    config = vf.resolve_env_config({"taskset": {"id": "redaction-pressure", **taskset}, "agent": {"runtime": {"type": runtime}}})
    return env_config_data(config)


def log_setup() -> None:
    """Warnings and errors of the server and its workers go to standard error."""
    logging.basicConfig(level=logging.WARNING, stream=sys.stderr, format="%(asctime)s %(name)s %(levelname)s %(message)s")


def serve(
    *,
    port: int = 0,
    workers: int = 2,
    elastic: bool = False,
    max_workers: int | None = None,
    taskset: dict | None = None,
    ready_timeout: float = 300.0,
    announce: Callable[[str], None] | None = None,
) -> int:
    """Serve until SIGTERM/SIGINT; returns the exit status (0 after a clean shutdown)."""
    announce = announce or (lambda line: print(line, flush=True))
    pool = {"max_workers": max_workers, "elastic": True} if elastic else {"max_workers": workers, "elastic": False}
    warm = 1 if elastic else workers
    addresses: queue.Queue[str] = queue.Queue()
    failed = threading.Event()
    with ChatServer(lambda body: NO_RULES) as chat:

        def wait_until_ready() -> None:
            try:
                address = addresses.get(timeout=ready_timeout)
                asyncio.run(_warm_up(address, chat.url, warm, ready_timeout))
                announce(f"ready {address} workers={warm}")
            except Exception as exc:  # noqa: BLE001 - any failure to warm up ends the server
                print(f"redaction-pressure: error: the env server did not become ready: {exc}", file=sys.stderr, flush=True)
                failed.set()
                os.kill(os.getpid(), signal.SIGTERM)

        threading.Thread(target=wait_until_ready, name="serve-env-ready", daemon=True).start()
        previous = signal.signal(signal.SIGINT, lambda *_: os.kill(os.getpid(), signal.SIGTERM))
        try:
            serve_env(
                address=f"tcp://127.0.0.1:{port}", address_queue=addresses, log_setup=log_setup,
                config_data=env_config(taskset or {}), **pool,
            )  # fmt: skip
        finally:
            signal.signal(signal.SIGINT, previous)
    return 1 if failed.is_set() else 0


async def _warm_up(address: str, model_url: str, count: int, timeout: float) -> None:
    """Run `count` concurrent episodes (dev tasks 0..count-1) through the server and check each is scored."""
    client = EnvClient(address)
    try:
        await client.wait_for_server_startup(timeout=timeout)
        tasks = list(RedactionPressureTaskset(RedactionPressureConfig(split="dev", size=count)))
        config = vf.EvalClientConfig(base_url=model_url, api_key_var=WARM_UP_KEY_VAR)
        sampling = vf.SamplingConfig()
        runs = [client.run(client=config, model="warm-up", sampling=sampling, task_data=t.data.model_dump(mode="json")) for t in tasks]
        episodes = await asyncio.wait_for(asyncio.gather(*runs), timeout)
        for episode in episodes:
            for trace in episode.traces:
                if trace.errors or any(reward is None for reward in trace.rewards.values()) or not trace.rewards:
                    raise RuntimeError(f"a warm-up episode was not scored ({[e.model_dump() for e in trace.errors]})")
    finally:
        await client.close()
