"""A stand-in model: scripted replies served by the package's chat endpoint on 127.0.0.1.

It stands in for the model, not for our code: each request's last user message is
looked up in a table of scripted replies and streamed back as server-sent events the way
the verifiers null harness expects (`redaction_pressure.cli.endpoint.ChatServer`). Unknown
prompts get a reply that is not JSON. `ToolCallingModel` plays a multi-turn agent the same
way: each task's first user message keys a script of turns (tool calls or text).
"""

from __future__ import annotations

from redaction_pressure.cli.endpoint import ChatServer, last_user_text

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


class ToolCallingModel(ChatServer):
    """Play `scripts` (first user prompt -> turns) turn by turn until `close()`.

    A turn is a list of tool calls (`{"name": ..., "arguments": {...}}`), a reply text, or a
    function of the request body giving either; after the last turn, and for unknown prompts,
    the model answers "Done.".
    """

    def __init__(self, scripts: dict[str, list]) -> None:
        self.scripts = scripts
        super().__init__(self._answer)

    def _answer(self, body: dict):
        messages = body.get("messages") or []
        first = next((m for m in messages if m.get("role") == "user"), {})
        content = first.get("content")
        text = content if isinstance(content, str) else "".join(p.get("text", "") for p in content or [])
        turns = self.scripts.get(text, [])
        if callable(turns):
            return turns(body)
        done = sum(1 for m in messages if m.get("role") == "assistant")
        return turns[done] if done < len(turns) else "Done."
