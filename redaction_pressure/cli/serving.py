"""Serve the taskset the way a trainer reaches it: verifiers' env server over TCP (127.0.0.1 by default).

`redaction-pressure serve-env` runs `serve()`: `verifiers.v1.serve.serve_env` with a static
(`--workers N`) or elastic (`--elastic --max-workers N`) pool of env-server worker
processes in this process's foreground, and a readiness thread beside it. verifiers'
broker answers health checks before its workers have loaded anything, so readiness here
means more: the thread runs one warm-up episode per pre-spawned worker against a local
chat endpoint that answers `{"rules": []}`, which makes each worker load the taskset and
start its scan pool. Only when every warm-up episode has come back scored does it print

    ready tcp://127.0.0.1:PORT workers=N

on standard output (one line, flushed); a trainer waits for that line, then connects an
`EnvClient` to the address. If that does not happen within `ready_timeout` (one deadline
for the whole start), the error names the stage that was not ready: the broker's address,
its health check, or which warm-up episodes had not come back. SIGTERM or SIGINT shut the
broker, its workers and their scan pools down and exit 0.

Supervision: verifiers' broker (`EnvServerPool`) never notices a dead env-server worker;
it keeps routing episodes to it and they hang. `SupervisedPool` checks its workers at
least once a second: a worker that died is replaced by a fresh one, and every request it
held is sent again to a live worker (a run starts over there; the client keeps only the
traces of the run that replies). After `RUN_ATTEMPTS` dead workers, a run fails fast with
a named error instead. A verifiers adapter: the only other module importing verifiers is
`taskset.py`.
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
import os
import queue
import signal
import sys
import threading
import time
from collections.abc import Callable

import msgpack
import verifiers.v1 as vf
import zmq
import zmq.asyncio
from verifiers.v1.serve import EnvClient, env_config_data
from verifiers.v1.serve.pool import _CANCEL_MISS, _HEALTH, EnvServerPool, _arm_teardown
from verifiers.v1.serve.types import RunResponse

from redaction_pressure.cli.endpoint import ChatServer
from redaction_pressure.redact.taskset import RedactionPressureConfig, RedactionPressureTaskset

NO_RULES = '{"rules": []}'
WARM_UP_KEY_VAR = "REDACTION_PRESSURE_WARM_UP_KEY"
RUN_ATTEMPTS = 3
"""Env-server workers a run may lose (each dying under it) before it fails with a named error."""
CHECK_SECONDS = 1.0
"""Longest time between two checks of the env-server workers' liveness."""

logger = logging.getLogger(__name__)


def env_config(taskset: dict, runtime: str = "subprocess") -> dict:
    """The picklable env config `serve_env` ships to its workers."""
    config = vf.resolve_env_config(
        {"taskset": {"id": "redaction-pressure", **taskset}, "agent": {"runtime": {"type": runtime}}}
    )
    return env_config_data(config)


def log_setup() -> None:
    """Warnings and errors of the server and its workers go to standard error."""
    logging.basicConfig(
        level=logging.WARNING, stream=sys.stderr, format="%(asctime)s %(name)s %(levelname)s %(message)s"
    )


def serve(
    *,
    host: str = "127.0.0.1",
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
            deadline = time.monotonic() + ready_timeout
            try:
                try:
                    address = addresses.get(timeout=ready_timeout)
                except queue.Empty:
                    raise RuntimeError(f"the broker did not bind its address within {ready_timeout:g} s") from None
                asyncio.run(_warm_up(address, chat.url, warm, deadline))
                announce(f"ready {address} workers={warm}")
            except Exception as exc:  # noqa: BLE001 - any failure to warm up ends the server
                reason = str(exc) or type(exc).__name__
                print(
                    f"redaction-pressure: error: the env server did not become ready: {reason}",
                    file=sys.stderr,
                    flush=True,
                )
                failed.set()
                os.kill(os.getpid(), signal.SIGTERM)

        threading.Thread(target=wait_until_ready, name="serve-env-ready", daemon=True).start()
        previous = signal.signal(signal.SIGINT, lambda *_: os.kill(os.getpid(), signal.SIGTERM))
        try:
            serve_supervised(
                address=f"tcp://{host}:{port}", address_queue=addresses, log_setup=log_setup,
                config_data=env_config(taskset or {}), **pool,
            )  # fmt: skip
        finally:
            signal.signal(signal.SIGINT, previous)
    return 1 if failed.is_set() else 0


async def _warm_up(address: str, model_url: str, count: int, deadline: float) -> None:
    """Run `count` concurrent episodes (dev tasks 0..count-1) through the server and check each is scored by `deadline`."""
    client = EnvClient(address)
    try:
        try:
            await client.wait_for_server_startup(timeout=max(1.0, deadline - time.monotonic()))
        except TimeoutError:
            raise RuntimeError(f"the broker at {address} did not answer its health check in time") from None
        tasks = list(RedactionPressureTaskset(RedactionPressureConfig(split="dev", size=count)))
        config = vf.EvalClientConfig(base_url=model_url, api_key_var=WARM_UP_KEY_VAR)
        sampling = vf.SamplingConfig()
        runs = [
            asyncio.ensure_future(
                client.run(client=config, model="warm-up", sampling=sampling, task_data=t.data.model_dump(mode="json"))
            )
            for t in tasks
        ]
        done, waiting = await asyncio.wait(runs, timeout=max(1.0, deadline - time.monotonic()))
        for run in waiting:
            run.cancel()
        if waiting:
            raise RuntimeError(
                f"{len(waiting)} of {count} warm-up episodes had not come back when the readiness timeout ran out "
                f"(each env-server worker loads the taskset and starts its scan pool on its first episode; "
                f"a slow or overloaded machine may need a longer --ready-timeout)"
            )
        for run in done:
            episode = run.result()
            for trace in episode.traces:
                if trace.errors or any(reward is None for reward in trace.rewards.values()) or not trace.rewards:
                    raise RuntimeError(f"a warm-up episode was not scored ({[e.model_dump() for e in trace.errors]})")
    finally:
        await client.close()


class SupervisedPool(EnvServerPool):
    """verifiers' env-server broker, plus a watch on its workers: a dead one is replaced and its requests re-sent."""

    def __init__(self, *args, **kwargs) -> None:
        super().__init__(*args, **kwargs)
        self._next_index = 0
        self.replaced = 0

    def _spawn_worker(self) -> None:
        # verifiers names a worker's socket by its position; with replacements the positions
        # repeat, so every worker gets a fresh index instead.
        index = self._next_index
        self._next_index += 1
        count = len(self.workers)
        original = self._worker_path
        self._worker_path = lambda i: original(index)  # type: ignore[method-assign]
        try:
            super()._spawn_worker()
        finally:
            del self._worker_path
        self.workers[count]["index"] = index

    async def run(self) -> None:
        self._poller = zmq.asyncio.Poller()
        self._poller.register(self.frontend, zmq.POLLIN)
        for _ in range(1 if self.elastic else (self.max_workers or 1)):
            self._spawn_worker()
        pending: dict[bytes, dict] = {}  # request_id -> client_id, worker, method, payload, attempts
        logger.info("SupervisedPool up: address=%s workers=%d", self.address, len(self.workers))
        checked = time.monotonic()
        try:
            while True:
                events = dict(await self._poller.poll(timeout=CHECK_SECONDS * 1000))
                if self.frontend in events:
                    frames = await self.frontend.recv_multipart()
                    if len(frames) == 4:
                        await self._from_client(pending, *frames)
                for worker in list(self.workers):
                    if worker["dealer"] in events:
                        await self._from_worker(pending, worker)
                if time.monotonic() - checked >= CHECK_SECONDS:
                    checked = time.monotonic()
                    await self._supervise(pending)
        except (asyncio.CancelledError, KeyboardInterrupt):
            pass
        finally:
            self._shutdown()

    async def _from_client(
        self, pending: dict, client_id: bytes, request_id: bytes, method: bytes, payload: bytes
    ) -> None:
        if method == b"health":
            await self.frontend.send_multipart([client_id, request_id, b"reply", _HEALTH])
            return
        if method == b"cancel":
            try:
                target = str(msgpack.unpackb(payload, raw=False).get("request_id", "")).encode()
            except Exception:  # noqa: BLE001 - one bad frame must not kill the broker
                target = b""
            entry = pending.get(target)
            if entry is None:
                await self.frontend.send_multipart([client_id, request_id, b"reply", _CANCEL_MISS])
                return
            worker = entry["worker"]
        else:
            worker = min(self.workers, key=lambda w: w["active"])
        pending[request_id] = {
            "client_id": client_id,
            "worker": worker,
            "method": method,
            "payload": payload,
            "attempts": 1,
        }
        await self._dispatch(request_id, pending[request_id], worker)
        if self.elastic and method != b"cancel":
            self._maybe_scale_up(len(pending))

    async def _dispatch(self, request_id: bytes, entry: dict, worker: dict) -> None:
        entry["worker"] = worker
        worker["active"] += 1
        await worker["dealer"].send_multipart([request_id, entry["method"], entry["payload"]])

    async def _from_worker(self, pending: dict, worker: dict) -> None:
        request_id, kind, data = await worker["dealer"].recv_multipart(copy=False)
        entry = pending.get(request_id.bytes)
        if entry is None or entry["worker"] is not worker:
            return  # a reply for a request that has moved on (or finished)
        if kind.bytes == b"reply":
            pending.pop(request_id.bytes)
            worker["active"] -= 1
        with contextlib.suppress(zmq.ZMQError):
            await self.frontend.send_multipart([entry["client_id"], request_id, kind, data], copy=False)

    async def _supervise(self, pending: dict) -> None:
        """Replace dead workers and send their requests again (or fail them by name)."""
        dead = [worker for worker in self.workers if not worker["process"].is_alive()]
        for worker in dead:
            status = worker["process"].exitcode
            logger.warning("env-server worker %d died (exit code %s); starting a replacement", worker["index"], status)
            self.workers.remove(worker)
            with contextlib.suppress(Exception):
                self._poller.unregister(worker["dealer"])
            with contextlib.suppress(Exception):
                worker["dealer"].close()
            with contextlib.suppress(Exception):
                worker["pipe"].close()
            with contextlib.suppress(OSError):
                os.unlink(self._worker_path(worker["index"]))
            self.replaced += 1
            self._spawn_worker()
            for request_id, entry in list(pending.items()):
                if entry["worker"] is not worker:
                    continue
                if entry["method"] == b"cancel":
                    pending.pop(request_id)
                    await self.frontend.send_multipart([entry["client_id"], request_id, b"reply", _CANCEL_MISS])
                elif entry["attempts"] >= RUN_ATTEMPTS:
                    pending.pop(request_id)
                    error = (
                        f"the env-server worker running this episode died (exit code {status}); "
                        f"{entry['attempts']} workers died under it, so it is not tried again"
                    )
                    reply = msgpack.packb(
                        RunResponse(success=False, error=error).model_dump(mode="json"), use_bin_type=True
                    )
                    await self.frontend.send_multipart([entry["client_id"], request_id, b"reply", reply])
                else:
                    entry["attempts"] += 1
                    await self._dispatch(request_id, entry, min(self.workers, key=lambda w: w["active"]))


def serve_supervised(
    *,
    max_workers: int | None,
    address: str,
    address_queue=None,
    log_setup: Callable[[], None] | None = None,
    elastic: bool = True,
    multiplex: int = 128,
    **server_kwargs,
) -> None:
    """`verifiers.v1.serve.serve_env` with a `SupervisedPool` broker, in this process's foreground, even for one worker."""
    _arm_teardown(None)
    if log_setup is not None:
        log_setup()
    try:
        pool = SupervisedPool(server_kwargs, max_workers, address, log_setup, multiplex, elastic)
        if address_queue is not None:
            address_queue.put(pool.address)
        asyncio.run(pool.run())
    except KeyboardInterrupt:
        pass
