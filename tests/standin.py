"""A stand-in model: scripted replies served by the package's chat endpoint on 127.0.0.1.

It stands in for the model, not for our code: each request's last user message is
looked up in a table of scripted replies and streamed back as server-sent events the way
the verifiers null harness expects (`redaction_pressure.endpoint.ChatServer`). Unknown
prompts get a reply that is not JSON.
"""

from __future__ import annotations

from redaction_pressure.endpoint import ChatServer, last_user_text

UNKNOWN_PROMPT = "I do not know this prompt."


class StandInModel(ChatServer):
    """Serve `replies` (user prompt -> reply) until `close()`; `url` is the /v1 base URL."""

    def __init__(self, replies: dict[str, str]) -> None:
        self.replies = replies
        self.requests: list[dict] = []
        super().__init__(self._reply)

    def _reply(self, body: dict) -> str:
        self.requests.append(body)
        return self.replies.get(last_user_text(body), UNKNOWN_PROMPT)
