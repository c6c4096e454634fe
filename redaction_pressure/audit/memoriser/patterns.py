"""The memoriser's pattern folding: token sequences from several train tasks folded into one regex.

Texts are tokenised (words, single characters, and sentinel tokens `\x00id\x00` standing for
secret values or for the start and end of a file); `fold` aligns sequences into items holding one
string per sequence, and `Regex` renders them as a regex (literal where all agree, a gap of the
strings' shape where they vary, `shape` for secret values: their character classes and lengths
stretched by `SLACK`) and as a template of the fixed text. Pure functions.
"""

from __future__ import annotations

import math
import os
import re
from collections import Counter
from difflib import SequenceMatcher

SLACK = 0.25
"""How far a learned length range stretches beyond the lengths seen (share of the longest)."""

SENTINEL = re.compile(r"\x00[^\x00]*\x00")
TOKEN = re.compile(r"\x00[^\x00]*\x00|\w+|[\s\S]", re.ASCII)
BOF, EOF = "\x00^\x00", "\x00$\x00"
"""Context tokens for the start and the end of a file."""

# -- learning: token sequences folded into patterns ---------------------------------------------


def tokenise(text: str) -> list[str]:
    return TOKEN.findall(text)


def is_secret(token: str) -> bool:
    return token.startswith("\x00") and token not in (BOF, EOF)


def _literal(item: list[str]) -> bool:
    return len(set(item)) == 1


def fold(sequences: list[list[str]]) -> list[list[str]]:
    """Align token sequences into one pattern of items, each holding one string per sequence.

    Runs every sequence shares stay literal items (all strings equal); what differs between
    them becomes a gap item holding each sequence's text there."""
    pattern = [[token] for token in sequences[0]]
    for count, sequence in enumerate(sequences[1:], 1):
        keys = [item[0] if _literal(item) else f"\x01{n}" for n, item in enumerate(pattern)]
        merged: list[list[str]] = []
        for op, i1, i2, j1, j2 in SequenceMatcher(None, keys, sequence, autojunk=False).get_opcodes():
            if op == "equal":
                merged += [item + [token] for item, token in zip(pattern[i1:i2], sequence[j1:j2])]
            else:
                before = ["".join(parts) for parts in zip(*pattern[i1:i2])] or [""] * count
                merged.append(before + ["".join(sequence[j1:j2])])
        pattern = merged
    return pattern


def _char_class(chars: set[str]) -> str:
    ranges = [r for r, letters in (("a-z", "abcdefghijklmnopqrstuvwxyz"), ("A-Z", "ABCDEFGHIJKLMNOPQRSTUVWXYZ"),
                                   ("0-9", "0123456789")) if chars & set(letters)]  # fmt: skip
    others = sorted(c for c in chars if not (c.isascii() and c.isalnum()))
    escaped = ["\\n" if c == "\n" else "\\" + c if c in "\\]^-[" else c for c in others]
    return "[" + "".join(ranges + escaped) + "]"


def _repeat(lengths: list[int]) -> str:
    slack = max(2, math.ceil(max(lengths) * SLACK))
    return f"{{{max(0, min(lengths) - slack)},{max(lengths) + slack}}}"


def _gap(strings: list[str]) -> str:
    """A pattern for strings seen in one place: their characters' classes, their lengths stretched."""
    return _char_class(set("".join(strings))) + _repeat([len(s) for s in strings])


def shape(values: list[str]) -> str:
    """A pattern for a secret's values across seeds: shared prefix and suffix, then a gap."""
    prefix = os.path.commonprefix(values)
    rests = [v[len(prefix) :] for v in values]
    suffix = os.path.commonprefix([r[::-1] for r in rests])[::-1]
    middles = [r[: len(r) - len(suffix)] for r in rests]
    if not any(middles):
        return re.escape(prefix + suffix)
    return re.escape(prefix) + _gap(middles) + re.escape(suffix)


class Regex:
    """Renders folded items of one rule into regex text, naming each gap so templates can cite it."""

    def __init__(self, shapes: dict[str, str], values: list[dict[str, str]]) -> None:
        self.shapes = shapes
        self.values = values
        self.gaps: list[tuple[str, list[str]]] = []

    def expand(self, item: list[str]) -> list[str]:
        return [SENTINEL.sub(lambda m: values.get(m.group(), ""), s) for s, values in zip(item, self.values)]

    def render(self, items: list[list[str]], capture: str = "") -> str:
        out = []
        for item in items:
            token = item[0]
            if not _literal(item):
                strings = self.expand(item)
                if not any(strings):
                    continue  # only file boundaries differ here: no text to match
                name = f"g{len(self.gaps)}"
                self.gaps.append((name, strings))
                out.append(f"(?P<{name}>{_gap(strings)})")
            elif token == BOF:
                out.append(r"\A")
            elif token == EOF:
                out.append(r"\Z")
            elif is_secret(token):
                body = self.shapes[token]
                out.append(f"(?P<{capture}>{body})" if capture else f"(?:{body})")
            else:
                out.append(re.escape(token))
        return "".join(out)

    def template(self, items: list[list[str]]) -> list[list[str]]:
        """The fixed text: literal parts, and gaps filled from the match where the text came from."""
        parts = []
        for item in items:
            if _literal(item):
                parts.append(["lit", item[0]])
                continue
            strings = self.expand(item)
            source = next((name for name, seen in self.gaps if seen == strings), None)
            parts.append(["ref", source] if source else ["lit", Counter(strings).most_common(1)[0][0]])
        return parts


def path_pattern(paths: list[str]) -> str:
    """A pattern for the paths one rule was learned on: varying folders or names become gaps."""
    return Regex({}, [{} for _ in paths]).render(fold([tokenise(p) for p in paths]))
