"""The one-turn harness: redaction-pressure's default, sending its one chat request in-process.

verifiers' `null` harness runs a chat program in the rollout's runtime for every episode (a
`uv` script environment, an interpreter importing `openai` and `mcp`), which makes one request
through the interception server and exits: about 1.6 CPU-seconds an episode, two hundred times
what scoring the answer costs. What verifiers relies on is that every model call passes through
the interception `endpoint` with its `secret` (it records the turn into the trace), not that a
program runs (`Harness.launch`'s contract). So this harness sends the same request from the env
worker's event loop: the system prompt and the prompt, streamed with usage, under the same retry
rules as the chat program (the SDK's retries for 5xx/429, then whole attempts again on a
dropped connection or an unfinished stream, marked with `x-stainless-retry-count` so the
interception replays rather than re-asks). The trace is the one the null harness produces.

Where verifiers hands the harness an endpoint the env worker cannot reach (a local container
runtime, docker or podman, rewrites it to a callback inside the box), this harness runs
verifiers' chat program in the box instead, exactly as `null` does.

Sampling arguments, the provider client's timeouts and retries and every limit are applied by
the interception server, as for any harness. This harness's own knobs bound the hop from the
env worker to that server: `--env.agent.harness.request-timeout`, `.connect-timeout`,
`.max-retries`. `--env.agent.harness.id null` selects verifiers' chat program instead.
"""

from __future__ import annotations

import asyncio
import logging
import weakref

import httpx
from openai import APIConnectionError, AsyncOpenAI, DefaultAsyncHttpxClient, omit
from pydantic import Field
from tenacity import (
    AsyncRetrying,
    before_sleep_log,
    retry_if_exception_type,
    stop_after_attempt,
    wait_random_exponential,
)
from verifiers.v1.clients import ModelContext
from verifiers.v1.configs.harness import HarnessConfig
from verifiers.v1.dialects.chat import message_to_wire
from verifiers.v1.errors import MODEL_TRANSPORT_ERROR_EXIT_CODE
from verifiers.v1.harness import Harness
from verifiers.v1.harnesses.utils.launch import CHAT_PROGRAM_SOURCE, launch_chat_program
from verifiers.v1.runtimes import ProgramResult, Runtime
from verifiers.v1.task import TaskData
from verifiers.v1.trace import Trace

logger = logging.getLogger(__name__)

RETRY_COUNT_HEADER = "x-stainless-retry-count"
"""The header the interception's replay guard reads: a retried body is replayed, not re-asked."""

_TRANSPORT_ERRORS = (APIConnectionError, httpx.TransportError)


class OneTurnHarnessConfig(HarnessConfig):
    request_timeout: float | None = Field(None, gt=0)
    """Seconds the request to the interception server may take, response included (None: no
    limit, as verifiers' chat program; the rollout timeout still bounds the episode)."""
    connect_timeout: float = Field(5.0, gt=0)
    """Seconds to connect to the interception server."""
    max_retries: int = Field(2, ge=0)
    """Retries of a failed request: the SDK's for 5xx/429 answers, then as many whole
    attempts on a dropped connection or a stream that ends unfinished (the chat program's rules)."""


class OneTurnHarness(Harness[OneTurnHarnessConfig]):
    """One chat request through the interception, sent from the env worker (no tools; a program
    in the box only where a container runtime leaves no other way to the endpoint)."""

    APPENDS_SYSTEM_PROMPT = True
    SUPPORTS_RESUME = True
    EXECUTES_CODE = False
    NEEDS_CONTAINER = False

    async def setup(self, runtime: Runtime) -> None:
        if not _reaches_host(runtime):
            await runtime.prepare_uv_script(CHAT_PROGRAM_SOURCE, self.config.resolved_env)

    async def launch(
        self,
        ctx: ModelContext,
        trace: Trace,
        runtime: Runtime,
        endpoint: str,
        secret: str,
        mcp_urls: dict[str, str],
        data: TaskData,
    ) -> ProgramResult:
        system_prompt, prompt = self.resolve_prompt(data)
        if not _reaches_host(runtime):
            # A container runtime hands the harness a URL that works inside the box only (its
            # egress proxy's callback): there, send the request as the null harness does.
            return await launch_chat_program(
                CHAT_PROGRAM_SOURCE, self.config, ctx, trace, runtime, endpoint, secret, mcp_urls, system_prompt, prompt
            )
        messages: list[dict] = [{"role": "system", "content": system_prompt}] if system_prompt else []
        if isinstance(prompt, str):
            messages.append({"role": "user", "content": prompt})
        elif prompt is not None:
            messages.extend(message_to_wire(message) for message in prompt)
        config = self.config
        client = AsyncOpenAI(
            base_url=endpoint,
            api_key=secret,
            timeout=httpx.Timeout(config.request_timeout, connect=config.connect_timeout),
            max_retries=config.max_retries,
            http_client=_http_client(),
        )
        try:
            await _complete(client, ctx.model, messages)
        except _TRANSPORT_ERRORS as error:
            # What the chat program exits with on a lost connection: verifiers reports it
            # as an interception failure (or the provider error the interception recorded).
            return ProgramResult(MODEL_TRANSPORT_ERROR_EXIT_CODE, "", f"{type(error).__name__}: {error}")
        except Exception as error:  # noqa: BLE001 - the chat program's crash, reported the same way
            return ProgramResult(1, "", f"{type(error).__name__}: {error}")
        return ProgramResult(0, "", "")


_PROBE_URL = "http://127.0.0.1:9/v1"


def _reaches_host(runtime: Runtime | None) -> bool:
    """Whether the endpoint verifiers hands this runtime's harness is the host's own URL: the
    subprocess runtime's and a remote sandbox's (its public tunnel) are; a local container
    runtime's is rewritten to a callback inside the box."""
    return runtime is None or runtime.host_url(_PROBE_URL) == _PROBE_URL


async def _complete(client: AsyncOpenAI, model: str, messages: list[dict]) -> None:
    """Send the request and read its stream to the end, retrying whole attempts as the chat program does."""
    async for attempt in AsyncRetrying(
        retry=retry_if_exception_type(_TRANSPORT_ERRORS),
        stop=stop_after_attempt(client.max_retries + 1),
        wait=wait_random_exponential(multiplier=0.5, max=8.0),
        before_sleep=before_sleep_log(logger, logging.WARNING),
        reraise=True,
    ):
        retries = attempt.retry_state.attempt_number - 1
        stream = await client.chat.completions.create(
            model=model,
            messages=messages,
            stream=True,
            stream_options={"include_usage": True},
            extra_headers={RETRY_COUNT_HEADER: str(retries)} if retries else omit,
        )
        with attempt:
            finished = False
            async for chunk in stream:
                finished = finished or any(choice.finish_reason is not None for choice in chunk.choices)
            if not finished:
                raise APIConnectionError(
                    message="Model stream ended before a completion finished", request=stream.response.request
                )


_CLIENTS: weakref.WeakKeyDictionary[asyncio.AbstractEventLoop, httpx.AsyncClient] = weakref.WeakKeyDictionary()


def _http_client() -> httpx.AsyncClient:
    """One connection pool per event loop: building a client (its TLS context) costs more than a request."""
    loop = asyncio.get_running_loop()
    client = _CLIENTS.get(loop)
    if client is None or client.is_closed:
        client = _CLIENTS[loop] = DefaultAsyncHttpxClient()
    return client


__all__ = ["OneTurnHarness", "OneTurnHarnessConfig"]
