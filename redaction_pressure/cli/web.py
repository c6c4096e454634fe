"""`/web`: the OpenEnv servers' debug page (one page for both environments), and its marks route.

`serve-openenv` mounts it on OpenEnv's own app: `GET /web` is a self-contained page (web.html: no
script, style or font from elsewhere) that plays a task over the server's own WebSocket session
(`/ws`) and reads the task API (`/<env>/task`); `POST /web/marks` shows a redaction-pressure reply's
effect on the task's hidden records, as the report's mistake view does (`report.analysis`). The
page offers the public splits only, and the marks route refuses private_eval: a private task's
records and secrets never reach it. OpenEnv's own web interface (Gradio, `ENABLE_WEB_INTERFACE`)
is not used: it shows an action form and raw JSON, none of the session's panels, and loads fonts
from the internet.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

from pydantic import BaseModel, Field

PAGE = Path(__file__).with_name("web.html")


class MarksRequest(BaseModel):
    """A marks request: the page's task and the reply it scored."""

    split: str
    index: int
    difficulty: str = "standard"
    reply: str = Field(max_length=65_536)


def marks(split: str, index: int, difficulty: str, reply: str) -> dict[str, Any]:
    """The task's hidden records cut into pieces (plain text, secrets and decoys) with what `reply` removed."""
    from redaction_pressure import splits
    from redaction_pressure.redact.api import load_task
    from redaction_pressure.redact.scanner import scan
    from redaction_pressure.report.analysis import mark_reply

    if split not in ("train", "dev"):
        raise ValueError(f"the debug page shows public tasks only (train, dev), not {split!r}")
    splits.check_index(split, index)
    marked = mark_reply(load_task(split, index, difficulty=difficulty), reply, scan)
    records = [
        {"number": record.number, "family": record.family, "mistakes": record.mistakes,
         "pieces": [{"parts": [list(p) for p in piece.parts], "role": piece.role, "status": piece.status,
                     "kind": piece.kind} for piece in record.pieces]}
        for record in marked.records
    ]  # fmt: skip
    return {"records": records, "problem": marked.problem}


def mount(app, taskset: str) -> None:
    """Add `/web` (and, for redaction-pressure, `/web/marks`) to OpenEnv's FastAPI app."""
    from fastapi import HTTPException
    from fastapi.responses import HTMLResponse

    from redaction_pressure.cli import common

    html = PAGE.read_text(encoding="utf-8")

    @app.get("/web", include_in_schema=False)
    def page() -> HTMLResponse:
        return HTMLResponse(html, headers={"Cache-Control": "no-store"})

    if taskset != common.TASKSET:
        return

    @app.post("/web/marks", include_in_schema=False)
    def marked(request: MarksRequest) -> dict[str, Any]:
        try:
            return marks(request.split, request.index, request.difficulty, request.reply)
        except ValueError as exc:  # SplitError is one; the message names what is wrong, never a record
            raise HTTPException(status_code=400, detail=str(exc).splitlines()[0]) from None
