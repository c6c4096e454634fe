"""A minimal OpenAI-compatible chat-completions server on 127.0.0.1 (framework-free).

`ChatServer(answer)` answers `POST /v1/chat/completions` with `answer(request_body)`, as
server-sent events when the request asks for `stream` (what the verifiers harnesses do:
one content delta, a finish chunk, a usage chunk, `[DONE]`) and as one JSON completion
otherwise; `GET /v1/models` lists one model. When `answer` returns a list of
`{"name", "arguments"}` tool calls instead of text, they are streamed as `delta.tool_calls`
chunks ending with `finish_reason: "tool_calls"` (what a tool-using agent's model does). It stands in for a model: the scan pool's
warm-up in `serve-env` uses it, and so do the tests.
"""

from __future__ import annotations

import json
import sys
import threading
import time
from collections.abc import Callable
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any

MODEL_NAME = "redaction-pressure-policy"
_USAGE = {"prompt_tokens": 0, "completion_tokens": 0, "total_tokens": 0}


def last_user_text(body: dict) -> str:
    """The text of the request's last user message ('' when there is none)."""
    users = [m for m in body.get("messages") or [] if isinstance(m, dict) and m.get("role") == "user"]
    if not users:
        return ""
    content = users[-1].get("content")
    if isinstance(content, str):
        return content
    return "".join(part.get("text", "") for part in content or [] if isinstance(part, dict))


class _Server(ThreadingHTTPServer):
    request_queue_size = 128
    """Pending connections the socket holds: Python's default of 5 refuses a burst of episodes
    (dozens of harnesses asking at once), which the clients see as a dead endpoint."""

    def handle_error(self, request, client_address) -> None:
        # A client that went away mid-answer (a stopped run, a timed-out request) is not an error here.
        if isinstance(sys.exc_info()[1], (BrokenPipeError, ConnectionResetError)):
            return
        super().handle_error(request, client_address)


class ChatServer:
    """Serve `answer(body) -> reply text` on 127.0.0.1 until `close()`; `url` is the /v1 base URL."""

    def __init__(
        self, answer: Callable[[dict], str | list[dict[str, Any]]], port: int = 0, model: str = MODEL_NAME
    ) -> None:
        self.answer, self.model = answer, model
        self._server = _Server(("127.0.0.1", port), self._handler())
        self._server.daemon_threads = True
        self._thread = threading.Thread(target=self._server.serve_forever, name="chat-server", daemon=True)
        self._thread.start()
        self.port = self._server.server_address[1]
        self.url = f"http://127.0.0.1:{self.port}/v1"

    def close(self) -> None:
        self._server.shutdown()
        self._server.server_close()

    def __enter__(self) -> ChatServer:
        return self

    def __exit__(self, *exc) -> None:
        self.close()

    def _handler(self) -> type[BaseHTTPRequestHandler]:
        server = self

        class Handler(BaseHTTPRequestHandler):
            protocol_version = "HTTP/1.1"

            def do_GET(self) -> None:
                if self.path.rstrip("/").endswith("/models"):
                    self._json(
                        200,
                        {
                            "object": "list",
                            "data": [{"id": server.model, "object": "model", "owned_by": "redaction-pressure"}],
                        },
                    )
                else:
                    self._json(404, {"error": {"message": f"no route {self.path}"}})

            def do_POST(self) -> None:
                try:
                    body = json.loads(self.rfile.read(int(self.headers.get("Content-Length") or 0)) or b"{}")
                    if not isinstance(body, dict):
                        raise ValueError("the request body is not a JSON object")
                except ValueError as exc:
                    self._json(400, {"error": {"message": f"bad request: {exc}"}})
                    return
                if not self.path.rstrip("/").endswith("/chat/completions"):
                    self._json(404, {"error": {"message": f"no route {self.path}"}})
                    return
                reply = server.answer(body)
                base = {
                    "id": f"chatcmpl-{time.monotonic_ns()}",
                    "created": int(time.time()),
                    "model": body.get("model") or server.model,
                }
                calls = None
                if isinstance(reply, list):
                    calls = [
                        {"index": i, "id": f"call_{time.monotonic_ns()}_{i}", "type": "function",
                         "function": {"name": c["name"], "arguments": json.dumps(c.get("arguments", {}))}}
                        for i, c in enumerate(reply)
                    ]  # fmt: skip
                    reply = ""
                finish = "tool_calls" if calls else "stop"
                if not body.get("stream"):
                    message = {"role": "assistant", "content": None if calls else reply}
                    if calls:
                        message["tool_calls"] = [{k: v for k, v in c.items() if k != "index"} for c in calls]
                    choice = {"index": 0, "finish_reason": finish, "message": message}
                    self._json(200, {**base, "object": "chat.completion", "usage": _USAGE, "choices": [choice]})
                    return
                self.send_response(200)
                self.send_header("Content-Type", "text/event-stream")
                self.send_header("Cache-Control", "no-cache")
                self.send_header("Connection", "close")
                self.end_headers()
                chunk = {**base, "object": "chat.completion.chunk"}
                delta = {"role": "assistant", "content": reply}
                if calls:
                    delta = {"role": "assistant", "content": None, "tool_calls": calls}
                for event in (
                    {**chunk, "choices": [{"index": 0, "delta": delta, "finish_reason": None}]},
                    {**chunk, "choices": [{"index": 0, "delta": {}, "finish_reason": finish}]},
                    {**chunk, "choices": [], "usage": _USAGE},
                ):
                    self.wfile.write(f"data: {json.dumps(event)}\n\n".encode())
                self.wfile.write(b"data: [DONE]\n\n")
                self.wfile.flush()
                self.close_connection = True

            def _json(self, status: int, payload: dict) -> None:
                data = json.dumps(payload).encode()
                self.send_response(status)
                self.send_header("Content-Type", "application/json")
                self.send_header("Content-Length", str(len(data)))
                self.end_headers()
                self.wfile.write(data)

            def log_message(self, *args) -> None:
                pass

        return Handler
