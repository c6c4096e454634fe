"""`serve-openenv --taskset {redaction-pressure,secrets-audit}`: an environment as an OpenEnv server.

The app is OpenEnv's own (`create_app`: `/health`, `/metadata`, `/schema`, `/reset`, `/step`,
`/state`, the WebSocket sessions at `/ws`, the task API under `/<env>/...`), built over the
wing's OpenEnv adapter (`redact/openenv_env.py`, `audit/openenv_env.py`); this module only adds
what a server that runs code for whoever reaches it must have:

- it binds 127.0.0.1 unless told otherwise, and beyond loopback refuses to start without a bearer
  token (`--token-var NAME`: the variable holding it, at least 24 characters); with a token, every
  HTTP request and WebSocket handshake without `Authorization: Bearer <token>` gets 401 (the
  comparison is constant-time; the token is never printed);
- `--max-sessions` bounds the WebSocket sessions (OpenEnv answers the one over it with
  CAPACITY_REACHED);
- one line on stdout once the socket listens: `ready http://HOST:PORT taskset=NAME sessions=N`.

`main()` is also each OpenEnv project's `server` script (`uv run --project servers/openenv server
--taskset secrets-audit`). It runs where `openenv` is installed, which is not where verifiers is
(their MCP pins conflict): servers/openenv has its own project and lock.
"""

from __future__ import annotations

import argparse
import asyncio
import hmac
import ipaddress
import os
import sys
from collections.abc import Sequence

from redaction_pressure.cli import common
from redaction_pressure.cli.common import PROG, UsageError

TASKSETS = (common.TASKSET, common.AUDIT_TASKSET)
MIN_TOKEN_CHARS = 24
GRACE = 5
"""Seconds a stopping server waits for open sessions before it removes their boxes."""


def add(commands) -> None:
    served = commands.add_parser(
        "serve-openenv",
        help="serve a taskset as an OpenEnv server (reset / step / state over HTTP and WebSocket)",
        description="Serve redaction-pressure or secrets-audit on OpenEnv's server for OpenEnv clients (TRL, Unsloth, "
        "ART, SkyRL, inspect-ai). Prints 'ready URL taskset=NAME sessions=N' once it listens. Binds 127.0.0.1 "
        "unless --host says otherwise; beyond loopback it needs --token-var (the server runs shell commands for "
        "whoever reaches it).",
    )
    arguments(served)
    served.set_defaults(run=run)


def arguments(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("--taskset", choices=TASKSETS, default=common.TASKSET, help="which environment to serve")
    parser.add_argument("--host", type=common.host, default="127.0.0.1", help="IPv4 address (default 127.0.0.1)")
    parser.add_argument("--port", type=common.port, default=8000, help="TCP port (0 picks a free one; default 8000)")
    parser.add_argument("--max-sessions", type=_positive, default=8,
                        help="concurrent WebSocket sessions, each with its own episode (default 8)")  # fmt: skip
    parser.add_argument("--token-var", metavar="NAME",
                        help=f"environment variable holding a bearer token (at least {MIN_TOKEN_CHARS} characters) "
                             "that every request must carry; required beyond loopback")  # fmt: skip
    parser.add_argument("--sandbox", choices=("podman", "local"), default="podman",
                        help="secrets-audit only: each session in its own podman container (default), or local: "
                             "commands run as this user on this host, for trusted single-user work only")  # fmt: skip


def _positive(text: str) -> int:
    try:
        value = int(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"must be a whole number, got {text!r}") from None
    if value < 1:
        raise argparse.ArgumentTypeError(f"must be at least 1, got {value}")
    return value


def token_for(host: str, token_var: str | None) -> str | None:
    """The bearer token the server requires (None: none), or a UsageError naming what is wrong."""
    token = None
    if token_var:
        token = os.environ.get(token_var)
        if not token:
            raise UsageError(f"--token-var {token_var}: the variable is not set")
        if len(token) < MIN_TOKEN_CHARS:
            raise UsageError(
                f"--token-var {token_var}: the token has {len(token)} characters; use at least {MIN_TOKEN_CHARS}"
            )
    if token is None and not ipaddress.IPv4Address(host).is_loopback:
        raise UsageError(
            f"serving on {host}, beyond loopback, needs --token-var NAME: this server runs shell commands for whoever reaches it"
        )
    return token


class BearerGate:
    """ASGI middleware: 401 for any HTTP request or WebSocket handshake without the bearer token."""

    def __init__(self, app, token: str) -> None:
        self.app = app
        self.expected = f"Bearer {token}".encode()

    async def __call__(self, scope, receive, send) -> None:
        if scope["type"] not in ("http", "websocket"):
            return await self.app(scope, receive, send)
        given = dict(scope.get("headers") or []).get(b"authorization", b"")
        if hmac.compare_digest(given, self.expected):
            return await self.app(scope, receive, send)
        body = b'{"detail":"missing or wrong bearer token"}'
        if scope["type"] == "websocket":
            await send({"type": "websocket.http.response.start", "status": 401,
                        "headers": [(b"content-type", b"application/json")]})  # fmt: skip
            await send({"type": "websocket.http.response.body", "body": body})
            return
        await send({"type": "http.response.start", "status": 401,
                    "headers": [(b"content-type", b"application/json"), (b"www-authenticate", b"Bearer")]})  # fmt: skip
        await send({"type": "http.response.body", "body": body})


def build_app(taskset: str, max_sessions: int, token: str | None = None, sandbox: str = "podman"):
    """OpenEnv's app for `taskset`, behind the bearer gate when a token is given."""
    try:
        from openenv.core.env_server.http_server import create_app
    except ImportError:
        raise common.needs_openenv("serve-openenv") from None
    if taskset == common.TASKSET:
        from redaction_pressure.redact.openenv_env import (
            RedactionAction,
            RedactionObservation,
            RedactionPressureEnvironment,
        )

        app = create_app(
            RedactionPressureEnvironment, RedactionAction, RedactionObservation,
            env_name="redaction_pressure", max_concurrent_envs=max_sessions,
        )  # fmt: skip
    else:
        from redaction_pressure.audit.openenv_env import AuditAction, AuditObservation, environment_factory

        factory = environment_factory(sandbox)
        app = create_app(
            factory, AuditAction, AuditObservation, env_name="secrets_audit", max_concurrent_envs=max_sessions
        )
    from redaction_pressure.cli import web

    web.mount(app, taskset)
    return BearerGate(app, token) if token else app


def run(args: argparse.Namespace, out, err) -> int:
    if args.taskset not in TASKSETS:
        raise UsageError(f"unknown taskset {args.taskset!r}; choose one of {', '.join(TASKSETS)}")
    token = token_for(args.host, args.token_var)
    app = build_app(args.taskset, args.max_sessions, token, args.sandbox)
    return asyncio.run(_serve(app, args.host, args.port, args.taskset, args.max_sessions))


async def _serve(app, host: str, port: int, taskset: str, sessions: int) -> int:
    import uvicorn

    # A session mid-command keeps its WebSocket open: shutdown waits GRACE s for it, then the
    # boxes are removed under it (which ends the command), so SIGTERM never leaves one behind.
    config = uvicorn.Config(app, host=host, port=port, log_level="warning", lifespan="on", ws_max_size=1 << 20,
                            timeout_graceful_shutdown=GRACE)  # fmt: skip
    server = uvicorn.Server(config)
    serving = asyncio.create_task(server.serve())
    while not server.started:
        if serving.done():
            serving.result()
            print(f"{PROG}: error: the server did not start on {host}:{port}", file=sys.stderr)
            return 1
        await asyncio.sleep(0.05)
    bound = server.servers[0].sockets[0].getsockname()[1] if server.servers else port
    print(f"ready http://{host}:{bound} taskset={taskset} sessions={sessions}", flush=True)
    try:
        await serving
    finally:
        if taskset == common.AUDIT_TASKSET:
            from redaction_pressure.audit.openenv_env import close_all

            await asyncio.to_thread(close_all)
    return 0


def main(argv: Sequence[str] | None = None) -> int:
    """The `server` script: `serve-openenv`'s options, the taskset from --taskset or OPENENV_TASKSET."""
    parser = argparse.ArgumentParser(prog="server", description="Serve a redaction-pressure taskset on OpenEnv.")
    arguments(parser)
    parser.set_defaults(taskset=os.environ.get("OPENENV_TASKSET", common.TASKSET))
    args = parser.parse_args(argv)
    try:
        return run(args, None, None)
    except UsageError as exc:
        print(f"server: error: {exc}", file=sys.stderr)
        return 2
    except KeyboardInterrupt:
        return 130


if __name__ == "__main__":
    sys.exit(main())
