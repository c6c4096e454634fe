"""Application log lines that leak bearer tokens, API keys and user tokens.

Dialect: the line format (logfmt, JSON lines, or bracketed text), and 1 to 3 leaking
fields, each with its own field name and message; beside them, fields that share the
leaking field's name but hold `[REDACTED]`, request and trace ids, and the deployed
commit. A record is 3 to 8 lines; a leaking entry may leak on more than one line.
JSON-lines records parse line by line.
"""

from __future__ import annotations

import json

from redaction_pressure.corpus import values as v
from redaction_pressure.corpus import words as w
from redaction_pressure.corpus.dialect import Builder, Family, FamilyDialect
from redaction_pressure.corpus.document import Mark, Writer
from redaction_pressure.corpus.draw import HEX
from redaction_pressure.corpus.families.common import kinds

KINDS = (
    ("jwt", "github_token", "slack_token", "openai_key", "generic_secret", "stripe_key", "gitlab_pat")
    + ("house_token",) * 8
    + ("generic_secret", "jwt")
)
FIELDS = (
    "token",
    "api_key",
    "auth",
    "access_token",
    "key",
    "credential",
    "bearer",
    "secret",
    "authorization",
    "x_api_key",
)
MESSAGES = (
    "upstream call failed", "request authenticated", "retrying with stored credential", "webhook delivered",
    "cache miss for session", "token refreshed", "outbound request", "sync finished",
)  # fmt: skip
COMPONENTS = ("http", "auth", "client", "worker", "sync")
TRACE_ID = v.Format("identifier", "trace", lambda d: d.chars(HEX, 32), HEX)


def draw(b: Builder) -> FamilyDialect:
    d = b.d
    layout = {"format": d.pick(("logfmt", "json", "text")), "level_case": d.pick(("upper", "lower"))}
    fields = d.sample(FIELDS, 3)
    names: set[str] = set()
    for n, kind in enumerate(kinds(b, KINDS, 1, 3)):
        fmt = b.secret_format(kind)
        scheme = d.pick(("Bearer ", "")) if kind == "jwt" else ""
        house = b.house_for(fmt)
        field = w.spell((house.vendor, *house.secret_role), "lower_snake") if house else fields[n]
        first = b.entry(
            "leak", (fmt, True), field=field, scheme=scheme, message=d.pick(MESSAGES), component=d.pick(COMPONENTS)
        )
        # At the hard level a JSON line may carry the credential inside an escaped JSON string
        # (a logged request body), and so may any other member of the set.
        nested = (
            d.pick(("payload", "body", "request", "context"))
            if b.world.level.escaped and layout["format"] == "json" and d.chance(0.6)
            else ""
        )
        first.words["nested"] = nested
        # Public ids are logged the way the secret is: as a line's subject or beside it.
        for public, role in b.publics(fmt) + b.anon(fmt):
            name = w.spell(((house.vendor,) if house else ()) + tuple(role), "lower_snake")
            if name not in names:
                names.add(name)
                public_scheme = d.pick(("Bearer ", "")) if kind == "jwt" else ""
                b.entry(
                    "leak",
                    (public, False),
                    field=name,
                    scheme=public_scheme,
                    message=d.pick(MESSAGES),
                    component=d.pick(COMPONENTS),
                    group=first.group,
                    nested=nested,
                )
        # A field already `[REDACTED]` reuses the name of any member of the set, not only the secret's.
        if d.chance(0.6):
            model = d.pick([e for e in b.entries if e.group == first.group])
            b.entry(
                "leak",
                (v.REDACTED_MARKER, False),
                field=model["field"],
                scheme=model["scheme"],
                message=d.pick(MESSAGES),
                component=d.pick(COMPONENTS),
            )
    if d.chance(0.7):
        b.entry("field", (v.UUID, False), field=d.pick(("request_id", "req_id", "correlation_id")))
    if d.chance(0.6):
        b.entry("field", (TRACE_ID, False), field=d.pick(("trace_id", "span", "traceparent_id")))
    if d.chance(0.4):
        b.entry("field", (v.COMMIT_SHA, False), field=d.pick(("git_sha", "commit", "build_commit")))
    return b.done(layout, keep=0.6)


def write(wr: Writer) -> None:
    d, layout = wr.d, wr.layout
    service = wr.service()
    leaks = [e for e in wr.entries if e.form == "leak"]
    fields = [e for e in wr.entries if e.form == "field"]
    lines: list[tuple[list, list]] = []
    for entry in leaks:
        # Every subject may be logged twice (a marker once): the count says nothing.
        for _ in range(1 if entry.slots[0].kind == "redacted_marker" else d.int(1, 2)):
            lines.append(([("msg", entry["message"]), ("component", entry["component"])], [entry]))
    for _ in range(d.int(1, 3)):
        head = [
            ("msg", d.pick(("request served", "health check ok", "job queued"))),
            ("path", f"/v1/{wr.service()}/{d.digits(5)}"),
            ("status", str(d.pick((200, 201, 204, 404)))),
        ]
        lines.append((head, []))
    d.rng.shuffle(lines)
    for head, subjects in lines:
        # The line's own value and the context fields, in any order: position tells nothing.
        logged = subjects + [entry for entry in fields if d.chance(0.7)]
        tail = [
            (e["field"], e.words.get("scheme", ""), wr.fresh(e.slots[0]))
            if not e.words.get("nested")
            else _nested(wr, e)
            for e in d.shuffled(logged)
        ]
        _emit(wr, layout, service, head + tail)


def _nested(wr: Writer, entry) -> tuple:
    """A field whose value is a JSON document in a string: `"body": "{\\"token\\": \\"...\\"}"`.
    The labelled span is the value as the line holds it (escaped twice)."""
    mark = wr.fresh(entry.slots[0])
    inner = json.dumps({entry["field"]: entry.words.get("scheme", "") + mark.value})
    escaped = json.dumps(mark.value)[1:-1]
    head, _, tail = json.dumps(inner)[1:-1].partition(json.dumps(escaped)[1:-1])
    return (entry["nested"], Raw(head), mark._replace(value=json.dumps(escaped)[1:-1]), Raw(tail))


class Raw(str):
    """Text already escaped for a JSON line (written as is)."""


def _emit(wr: Writer, layout: dict, service: str, fields: list[tuple]) -> None:
    d = wr.d
    level = d.pick(("INFO", "INFO", "DEBUG", "WARN"))
    level = level if layout["level_case"] == "upper" else level.lower()
    ts = wr.timestamp()
    if layout["format"] == "json":
        wr.put('{"ts": "', ts, '", "level": "', level, '", "service": "', service, '"')
        for name, *value in fields:
            wr.put(f', "{name}": "')
            for part in value:
                wr.put(part if isinstance(part, (Mark, Raw)) else json.dumps(part)[1:-1])
            wr.put('"')
        wr.line("}")
    elif layout["format"] == "logfmt":
        wr.put(f"ts={ts} level={level} service={service}")
        for name, *value in fields:
            text = "".join(p.value if isinstance(p, Mark) else p for p in value)
            quote = '"' if " " in text else ""
            wr.put(f" {name}={quote}", *value, quote)
        wr.line()
    else:
        wr.put(f"{ts} {level:<5} [{service}]")
        for name, *value in fields:
            if name == "msg":
                wr.put(" ", *value)
            else:
                wr.put(f" {name}=", *value)
        wr.line()


FAMILY = Family("app_log", draw, write, syntax="log", filename="app.log")
