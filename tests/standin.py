"""A stand-in model: an OpenAI-compatible chat-completions server on 127.0.0.1.

It stands in for the model, not for our code: each request's last user message is
looked up in a table of scripted replies, and the reply is streamed back as
server-sent events the way the verifiers null harness expects (`stream: true`, with a
final usage chunk). Unknown prompts get a reply that is not JSON.
"""

from __future__ import annotations

import json
import threading
import time
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

UNKNOWN_PROMPT = "I do not know this prompt."


def _text(content) -> str:
    if isinstance(content, str):
        return content
    return "".join(part.get("text", "") for part in content or [] if isinstance(part, dict))


class StandInModel:
    """Serve `replies` (user prompt -> reply) until `close()`; `url` is the /v1 base URL."""

    def __init__(self, replies: dict[str, str]) -> None:
        self.replies = replies
        self.requests: list[dict] = []
        handler = self._handler()
        self._server = ThreadingHTTPServer(("127.0.0.1", 0), handler)
        self._thread = threading.Thread(target=self._server.serve_forever, daemon=True)
        self._thread.start()
        self.url = f"http://127.0.0.1:{self._server.server_address[1]}/v1"

    def close(self) -> None:
        self._server.shutdown()
        self._server.server_close()

    def answer(self, body: dict) -> str:
        users = [m for m in body.get("messages", []) if m.get("role") == "user"]
        prompt = _text(users[-1].get("content")) if users else ""
        return self.replies.get(prompt, UNKNOWN_PROMPT)

    def _handler(self):
        model = self

        class Handler(BaseHTTPRequestHandler):
            def do_POST(self) -> None:
                body = json.loads(self.rfile.read(int(self.headers.get("Content-Length", 0))) or b"{}")
                model.requests.append(body)
                reply = model.answer(body)
                base = {"id": "standin", "created": int(time.time()), "model": body.get("model", "standin")}
                usage = {"prompt_tokens": 100, "completion_tokens": 50, "total_tokens": 150}
                if not body.get("stream"):
                    payload = {
                        **base, "object": "chat.completion", "usage": usage,
                        "choices": [{"index": 0, "finish_reason": "stop", "message": {"role": "assistant", "content": reply}}],
                    }  # fmt: skip
                    data = json.dumps(payload).encode()
                    self.send_response(200)
                    self.send_header("Content-Type", "application/json")
                    self.send_header("Content-Length", str(len(data)))
                    self.end_headers()
                    self.wfile.write(data)
                    return
                self.send_response(200)
                self.send_header("Content-Type", "text/event-stream")
                self.send_header("Cache-Control", "no-cache")
                self.end_headers()
                chunk = {**base, "object": "chat.completion.chunk"}
                for event in (
                    {**chunk, "choices": [{"index": 0, "delta": {"role": "assistant", "content": reply}, "finish_reason": None}]},
                    {**chunk, "choices": [{"index": 0, "delta": {}, "finish_reason": "stop"}]},
                    {**chunk, "choices": [], "usage": usage},
                ):
                    self.wfile.write(f"data: {json.dumps(event)}\n\n".encode())
                self.wfile.write(b"data: [DONE]\n\n")
                self.wfile.flush()

            def log_message(self, *args) -> None:
                pass

        return Handler
