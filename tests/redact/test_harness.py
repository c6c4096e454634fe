"""The one-turn harness: the trace verifiers' null harness makes, without its chat program.

Through the real vf-eval (subprocess runtime) against a stand-in model on 127.0.0.1, the
default harness and `--env.agent.harness.id null` play the same three dev tasks with the
same sampling arguments: the model receives the same requests, and the traces agree field
by field (messages, calls, usage, rewards, metrics, info, stop, errors, timing spans); a
dead model endpoint ends both in the same error; vf-replay re-scores the default harness's
run to the same rewards. Then the harness's own hop to the interception, against small
servers on 127.0.0.1: a stream cut before it finishes is asked again (marked as a retry) and
succeeds, a request past `request_timeout` or past its retries ends as the chat program's
transport failure (exit 97), and no subprocess is started.
"""

from __future__ import annotations

import asyncio
import json
import subprocess
import sys
import tempfile
import threading
import time
import unittest
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from unittest import mock

from redaction_pressure.redact import policies
from redaction_pressure.redact.api import load_task
from redaction_pressure.redact.harness import RETRY_COUNT_HEADER, OneTurnHarness, OneTurnHarnessConfig
from tests.support.runs import eval_environment, traces
from tests.support.standin import StandInModel

BIN = Path(sys.executable).parent
TASKS = 3
SAMPLING = ["--sampling.temperature", "0.25", "--sampling.max-tokens", "777"]


def _vf_eval(folder: str, out: Path, base_url: str, harness: str | None, tasks: int) -> subprocess.CompletedProcess:
    command = [
        str(BIN / "vf-eval"), "redaction-pressure", "-n", str(tasks), "-c", "3", "-m", "standin",
        "--client.base-url", base_url, "--client.api-key-var", "STANDIN_KEY", *SAMPLING,
        "--env.agent.runtime.type", "subprocess", "--env.taskset.split", "dev", "--no-push", "--no-rich", "-o", str(out),
    ]  # fmt: skip
    if harness is not None:
        command += ["--env.agent.harness.id", harness]
    return subprocess.run(command, env=eval_environment(folder), cwd=folder, capture_output=True, text=True,
                          stdin=subprocess.DEVNULL, timeout=900)  # fmt: skip


def _unmeasured(metrics: dict) -> dict:
    """The metrics less `budget_used`, the CPU time the rules took (measured, so never the same twice)."""
    return {k: v for k, v in metrics.items() if k != "budget_used"}


def _comparable(trace: dict) -> dict:
    """What a trace says about the episode, less what names this run (ids, clocks, harness config, runtime folder)."""
    return {
        "task": trace["task"]["key"],
        "messages": [{k: v for k, v in node.items() if k != "timestamp"} for node in trace["nodes"]],
        "calls": [{k: v for k, v in call.items() if k != "time"} for call in trace["calls"]],
        "usage": [trace[k] for k in ("num_input_tokens", "num_output_tokens", "num_total_tokens")],
        "rewards": trace["rewards"],
        "metrics": _unmeasured(trace["metrics"]),
        "info": trace["info"],
        "outcome": [trace[k] for k in ("ok", "is_completed", "stop_condition", "is_timeout")],
        "errors": [error.get("type") for error in trace["errors"]],
        "timing": sorted(k for k, v in trace["timing"].items() if isinstance(v, dict) and v.get("start")),
    }


class TestAgainstTheNullHarness(unittest.TestCase):
    """The default harness and verifiers' null harness, same tasks, same stand-in model."""

    @classmethod
    def setUpClass(cls):
        cls.folder = tempfile.TemporaryDirectory()
        folder = cls.folder.name
        tasks = [load_task("dev", i) for i in range(TASKS)]
        replies = {task.prompt.user: policies.reply(policies.induction_rules(task.prompt.user)) for task in tasks}
        cls.runs, cls.requests, cls.results = {}, {}, {}
        for harness in (None, "null"):
            name = harness or "default"
            with StandInModel(replies) as model:
                result = _vf_eval(folder, Path(folder) / name, model.url, harness, TASKS)
                cls.requests[name] = model.requests
            cls.results[name] = result
            found = [path.parent for path in (Path(folder) / name).glob("*/traces.jsonl")]
            cls.runs[name] = found[0] if len(found) == 1 else None
            dead = _vf_eval(folder, Path(folder) / f"{name}-dead", "http://127.0.0.1:9/v1", harness, 1)
            cls.results[f"{name}-dead"] = dead

    @classmethod
    def tearDownClass(cls):
        cls.folder.cleanup()

    def _traces(self, name: str) -> list[dict]:
        self.assertEqual(
            self.results[name].returncode, 0, self.results[name].stdout[-3000:] + self.results[name].stderr[-3000:]
        )
        self.assertIsNotNone(self.runs[name], f"one run folder for {name}")
        return sorted(traces(self.runs[name]), key=lambda t: t["task"]["key"])

    def test_the_default_harness_is_this_one(self):
        """Without --env.agent.harness.id, the run's harness is redaction-pressure's own (with its knobs), and null names verifiers'."""
        default, null = self._traces("default"), self._traces("null")
        self.assertEqual({t["agent"]["config"]["harness"]["id"] for t in default}, {"redaction-pressure"})
        self.assertEqual({t["agent"]["config"]["harness"].get("max_retries") for t in default}, {2})
        self.assertEqual({t["agent"]["config"]["harness"]["id"] for t in null}, {"null"})

    def test_the_model_receives_the_same_requests(self):
        """Every request body the stand-in model received (messages, sampling, streaming) is the same under both harnesses."""
        self._traces("default"), self._traces("null")

        def bodies(name):
            return sorted(json.dumps(body, sort_keys=True) for body in self.requests[name])

        self.assertEqual(len(self.requests["default"]), TASKS)
        self.assertEqual(bodies("default"), bodies("null"))
        body = self.requests["default"][0]
        self.assertEqual(
            (body.get("temperature"), body.get("max_tokens") or body.get("max_completion_tokens")), (0.25, 777)
        )
        self.assertEqual([m["role"] for m in body["messages"]], ["system", "user"])

    def test_the_traces_agree_field_by_field(self):
        """Messages, calls, usage, rewards, metrics, info, stop condition, errors and timing spans are the null harness's."""
        default, null = self._traces("default"), self._traces("null")
        self.assertEqual(len(default), TASKS)
        for mine, theirs in zip(default, null, strict=True):
            with self.subTest(task=mine["task"]["key"]):
                self.assertEqual(_comparable(mine), _comparable(theirs))
        self.assertTrue(all(t["rewards"] and not t["errors"] for t in default), "every episode scored")

    def test_a_dead_model_endpoint_ends_both_alike(self):
        """A model endpoint nobody listens on: both harnesses record the same error on the episode, and none is scored."""
        found = {}
        for name in ("default-dead", "null-dead"):
            result = self.results[name]
            self.assertEqual(result.returncode, 0, result.stderr[-3000:])
            (run,) = [path.parent for path in (Path(self.folder.name) / name).glob("*/traces.jsonl")]
            (trace,) = traces(run)
            found[name] = (_comparable(trace)["errors"], trace["rewards"], trace["ok"])
        self.assertEqual(found["default-dead"], found["null-dead"])
        self.assertTrue(found["default-dead"][0], "the episode carries an error")

    def test_vf_replay_rescores_to_the_same_rewards(self):
        """vf-replay of the default harness's run gives every episode the rewards and metrics vf-eval saved (less the measured budget_used)."""
        saved = self._traces("default")
        replay = Path(self.folder.name) / "replay"
        result = subprocess.run([str(BIN / "vf-replay"), str(self.runs["default"]), "-o", str(replay), "--no-rich"],
                                env=eval_environment(self.folder.name), cwd=self.folder.name, capture_output=True,
                                text=True, stdin=subprocess.DEVNULL, timeout=600)  # fmt: skip
        self.assertEqual(result.returncode, 0, result.stderr[-3000:])
        again = sorted(traces(replay), key=lambda t: t["task"]["key"])
        self.assertEqual(
            [(t["rewards"], _unmeasured(t["metrics"])) for t in again],
            [(t["rewards"], _unmeasured(t["metrics"])) for t in saved],
        )


class _Interception:
    """A stand-in for the interception server: scripted streamed answers, headers recorded."""

    def __init__(self, script: list[str]) -> None:
        self.script, self.headers = list(script), []
        self.released = threading.Event()
        """Set on close: a hanging request is held until then (or a minute), never a fixed short time."""
        outer = self

        class Handler(BaseHTTPRequestHandler):
            protocol_version = "HTTP/1.1"

            def do_POST(self) -> None:
                self.rfile.read(int(self.headers.get("Content-Length") or 0))
                outer.headers.append(dict(self.headers))
                step = outer.script.pop(0) if outer.script else "finish"
                if step == "hang":
                    outer.released.wait(60)
                    return
                self.send_response(200)
                self.send_header("Content-Type", "text/event-stream")
                self.send_header("Connection", "close")
                self.end_headers()
                chunk = {"id": "c", "object": "chat.completion.chunk", "created": 0, "model": "m"}
                self.wfile.write(
                    f"data: {json.dumps({**chunk, 'choices': [{'index': 0, 'delta': {'role': 'assistant', 'content': '{}'}, 'finish_reason': None}]})}\n\n".encode()
                )
                if step == "finish":
                    self.wfile.write(
                        f"data: {json.dumps({**chunk, 'choices': [{'index': 0, 'delta': {}, 'finish_reason': 'stop'}]})}\n\n".encode()
                    )
                    self.wfile.write(b"data: [DONE]\n\n")
                self.wfile.flush()
                self.close_connection = True

            def log_message(self, *args) -> None:
                pass

        self.server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        self.server.daemon_threads = True
        threading.Thread(target=self.server.serve_forever, daemon=True).start()
        self.url = f"http://127.0.0.1:{self.server.server_address[1]}/v1"

    def close(self) -> None:
        self.released.set()
        self.server.shutdown()
        self.server.server_close()


def _launch(url: str, **knobs):
    from verifiers.v1.clients import ModelContext
    from verifiers.v1.task import TaskData

    harness = OneTurnHarness(OneTurnHarnessConfig(id="redaction-pressure", **knobs))
    ctx = ModelContext(model="m", client=None)
    data = TaskData(prompt="the prompt", system_prompt="the system prompt")

    async def run():
        return await harness.launch(ctx, None, None, url, "the-secret", {}, data)

    with mock.patch("subprocess.Popen", side_effect=AssertionError("no subprocess")), \
         mock.patch("asyncio.create_subprocess_exec", side_effect=AssertionError("no subprocess")):  # fmt: skip
        started = time.monotonic()
        result = asyncio.run(run())
    return result, time.monotonic() - started


class _ContainerRuntime:
    """What a docker or podman runtime looks like to a harness: host URLs become callbacks inside the box."""

    def host_url(self, url: str) -> str:
        return url.replace("127.0.0.1", "127.0.0.2")  # loopback still: a regression must not reach a network

    async def prepare_uv_script(self, source, env, activate=True):
        self.prepared = (source, env)
        return ["uv-script"]


class TestInAContainerRuntime(unittest.TestCase):
    def test_it_runs_the_null_harness_program_where_the_endpoint_is_inside_the_box(self):
        """A runtime that rewrites host URLs: setup prepares and launch runs verifiers' chat program with exactly the null harness's arguments."""
        from verifiers.v1.clients import ModelContext
        from verifiers.v1.harnesses.null import NullHarness, NullHarnessConfig
        from verifiers.v1.runtimes import ProgramResult
        from verifiers.v1.task import TaskData

        data = TaskData(prompt="the prompt", system_prompt="the system prompt")
        ctx = ModelContext(model="m", client=None)
        calls = {}
        for name, harness in (("ours", OneTurnHarness(OneTurnHarnessConfig(id="redaction-pressure"))),
                              ("null", NullHarness(NullHarnessConfig(id="null")))):  # fmt: skip
            runtime = _ContainerRuntime()

            async def fake_launch(*args, **kwargs):
                # (source, config, ctx, trace, runtime, endpoint, secret, mcp_urls, system_prompt, prompt)
                calls[name] = (
                    args[0],
                    [a for i, a in enumerate(args) if i not in (0, 1, 4)],
                    args[4] is runtime,
                    kwargs,
                )
                return ProgramResult(0, "", "")

            async def play():
                await harness.setup(runtime)
                with mock.patch(f"{type(harness).__module__}.launch_chat_program", fake_launch):
                    return await harness.launch(ctx, None, runtime, "http://127.0.0.2:1/v1", "s", {}, data)

            result = asyncio.run(play())
            self.assertEqual(result.exit_code, 0)
            self.assertTrue(
                hasattr(runtime, "prepared"), f"{name}: the chat program's environment was prepared in setup"
            )
        (source, ours_args, ours_runtime, ours_kwargs), (null_source, null_args, null_runtime, null_kwargs) = (
            calls["ours"],
            calls["null"],
        )
        self.assertEqual(source, null_source)
        self.assertEqual(ours_args, null_args)  # ctx, trace, endpoint, secret, tool servers, system prompt, prompt
        self.assertTrue(ours_runtime and null_runtime)
        self.assertEqual(ours_kwargs.get("extra_args", ()), null_kwargs.get("extra_args", ()))

    def test_the_subprocess_runtime_gets_no_program(self):
        """On a runtime whose URLs are the host's, setup prepares nothing (no script environment)."""
        runtime = _ContainerRuntime()
        runtime.host_url = lambda url: url
        asyncio.run(OneTurnHarness(OneTurnHarnessConfig(id="redaction-pressure")).setup(runtime))
        self.assertFalse(hasattr(runtime, "prepared"))


class TestTheHopToTheInterception(unittest.TestCase):
    def test_a_finished_stream_is_a_success(self):
        """One request, bearer secret sent, marked as the first attempt, exit 0."""
        server = _Interception(["finish"])
        try:
            result, _ = _launch(server.url)
        finally:
            server.close()
        self.assertEqual(result.exit_code, 0, result.stderr)
        self.assertEqual(len(server.headers), 1)
        self.assertEqual(server.headers[0].get("Authorization"), "Bearer the-secret")
        self.assertIn({k.lower(): v for k, v in server.headers[0].items()}.get(RETRY_COUNT_HEADER), (None, "0"))

    def test_a_stream_cut_short_is_asked_again_as_a_retry(self):
        """A stream that ends before its finish is sent again, marked as retry 1, and the episode succeeds."""
        server = _Interception(["cut", "finish"])
        try:
            result, _ = _launch(server.url)
        finally:
            server.close()
        self.assertEqual(result.exit_code, 0, result.stderr)
        self.assertEqual(len(server.headers), 2)
        self.assertEqual({k.lower(): v for k, v in server.headers[1].items()}.get(RETRY_COUNT_HEADER), "1")

    def test_past_its_retries_it_fails_as_the_chat_program_does(self):
        """Cut streams beyond max_retries end with the chat program's transport exit code, naming the cause."""
        server = _Interception(["cut", "cut", "cut"])
        try:
            result, _ = _launch(server.url, max_retries=1)
        finally:
            server.close()
        self.assertEqual(result.exit_code, 97)
        self.assertIn("stream ended before a completion finished", result.stderr)
        self.assertEqual(len(server.headers), 2)

    def test_a_request_past_its_timeout_fails_in_time(self):
        """An interception that holds the request a minute: with request_timeout 0.5 s and no retries, exit 97
        long before (the bound, 30 s, leaves a busy machine ample room; the server alone would take 60)."""
        server = _Interception(["hang"])
        try:
            result, elapsed = _launch(server.url, request_timeout=0.5, max_retries=0)
        finally:
            server.close()
        self.assertEqual(result.exit_code, 97, result.stderr)
        self.assertLess(elapsed, 30, "the timeout, not the server, ended it")


if __name__ == "__main__":
    unittest.main()
