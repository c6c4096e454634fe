"""Writing one record: text accumulated part by part, with the slots it fills labelled.

A family's `write` puts plain strings and `Mark`s; a mark is a slot's value, fresh from
the record's own generator unless a value is repeated on purpose (one key shared by
several services). The writer turns marks into spans that carry the slot id, so the
record says which slot every secret and decoy came from.
"""

from __future__ import annotations

from typing import NamedTuple

from redaction_pressure.corpus.dialect import Entry, FamilyDialect, Slot
from redaction_pressure.corpus.draw import Draw
from redaction_pressure.corpus.world import World
from redaction_pressure.spans import Record, Span


class Mark(NamedTuple):
    value: str
    slot: Slot


class Writer:
    """Accumulates one record's text while labelling the spans it places."""

    def __init__(self, d: Draw, world: World, dialect: FamilyDialect, entries: tuple[Entry, ...]) -> None:
        self.d = d
        self.world = world
        self.layout = dialect.layout
        self.entries = entries
        self.family_entries = dialect.entries
        """All of the family's entries (a record writing all of them is its family's first)."""
        self._parts: list[str] = []
        self._pos = 0
        self._secrets: list[Span] = []
        self._decoys: list[Span] = []

    def fresh(self, slot: Slot) -> Mark:
        return Mark(slot.fmt.draw(self.d), slot)

    def put(self, *parts: str | Mark) -> None:
        for part in parts:
            if isinstance(part, Mark):
                spans = self._secrets if part.slot.secret else self._decoys
                spans.append(
                    Span(start=self._pos, end=self._pos + len(part.value), kind=part.slot.kind, slot=part.slot.id)
                )
                part = part.value
            self._parts.append(part)
            self._pos += len(part)

    def line(self, *parts: str | Mark) -> None:
        self.put(*parts, "\n")

    def record(self, family: str) -> Record:
        return Record(
            text="".join(self._parts), secrets=tuple(self._secrets), decoys=tuple(self._decoys), family=family
        )

    # -- filler shared by families ---------------------------------------------------------

    def timestamp(self) -> str:
        d = self.d
        return f"2026-{d.int(1, 12):02d}-{d.int(1, 28):02d}T{d.int(0, 23):02d}:{d.int(0, 59):02d}:{d.int(0, 59):02d}.{d.int(0, 999):03d}Z"

    def host(self, service: str | None = None) -> str:
        service = service or self.d.pick(self.world.services)
        return f"{service}-{self.d.pick(('db', 'pg', 'primary', 'rw', 'cache', 'mq'))}.{self.world.domain}"

    def ip(self) -> str:
        d = self.d
        return f"10.{d.int(0, 40)}.{d.int(0, 255)}.{d.int(1, 254)}"

    def service(self) -> str:
        return self.d.pick(self.world.services)
