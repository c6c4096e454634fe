"""The static pattern check: what may not be compiled at all, found before compiling.

`static_problem(pattern)` returns why a pattern is refused, or None. It rejects what would
defeat the matching budget before matching starts, since the budget cannot interrupt
compilation: fuzzy matching (`{e<=1}`; any unescaped `{` must open a numeric repeat bound)
and repeat bounds whose size (`MAX_REPEAT_BOUND`) or nested product (`MAX_REPEAT_PRODUCT`)
makes compilation itself costly. It only reads the pattern, never compiles it
(`rules.compile_rules` calls it first, and refuses a pattern the check cannot read).
`skip_escape` and `skip_class` step over an escape or a character class of a pattern's
text (the reference policies use them too).
"""

from __future__ import annotations

import functools
import re

import regex

MAX_REPEAT_BOUND = 1_000
"""Largest number allowed in a repeat bound `{m,n}`."""
MAX_REPEAT_PRODUCT = 10_000
"""Largest product of nested repeat bounds, e.g. `(?:(?:a{100}){100})` is 10 000."""


@functools.lru_cache(maxsize=500)  # as many as `regex` keeps compiled: a pattern it need not parse again, neither do we
def static_problem(pattern: str) -> str | None:
    """Why `pattern` may not be compiled at all, or None.

    Walks the pattern once, tracking groups, so that the product of nested repeat
    bounds is known: `((a{1000}){1000}){100}` costs seconds and gigabytes to compile,
    and the matching budget cannot interrupt compilation.

    Verbose mode (`(?x)`) changes what the text means: whitespace is ignored (also
    between an atom and its bound, and inside `{ m , n }`) and `#` starts a comment up to
    the next newline, except escaped (`\\#`) or inside a character class. `regex` makes
    an unscoped `(?x)` anywhere apply to the whole pattern (version 0) or to the end of
    its group (version 1); scoped groups `(?x:...)` and `(?-x:...)` switch it for their
    contents. The walk follows that, and where the reading is uncertain (an unscoped
    flag after the start, version 1) it walks every reading and rejects what any of them
    rejects. A second check walks the parse tree of `regex` itself (no compiling), so
    whatever the text walk misreads, fuzzy matching and costly bounds are still found.
    """
    if "{" not in pattern:
        # Repeat bounds and fuzzy constraints are both written in braces; without one, every
        # repeat is *, + or ? and neither walk below can find anything (a measured fast path).
        return None
    verbose_anywhere = _unscoped_verbose(pattern)
    readings = [verbose_anywhere] if not verbose_anywhere else [True]
    if verbose_anywhere and (not _starts_verbose(pattern) or "V1" in pattern):
        readings.append(False)
    for verbose in readings:
        problem = _walk(pattern, verbose)
        if problem is not None:
            return problem
    return _tree_problem(pattern)


_FLAG_GROUP = re.compile(r"\(\?([a-zA-Z0-9]*)(?:-([a-zA-Z]*))?(:|\))")
_SPACE = " \t\n\r\x0b\x0c"


def _starts_verbose(pattern: str) -> bool:
    flags = _FLAG_GROUP.match(pattern)
    return bool(flags and flags.group(3) == ")" and "x" in flags.group(1))


def _unscoped_verbose(pattern: str) -> bool:
    """Whether an unscoped flag group turning on verbose mode appears outside classes and comments.

    Read as `regex` first reads a pattern (not verbose), so a `#` comment cannot hide it.
    """
    i, n = 0, len(pattern)
    while i < n:
        c = pattern[i]
        if c == "\\":
            i = skip_escape(pattern, i)
        elif c == "[":
            i = skip_class(pattern, i)
        elif c == "(" and pattern.startswith("(?#", i):
            end = pattern.find(")", i)
            i = n if end < 0 else end + 1
        elif c == "(":
            flags = _FLAG_GROUP.match(pattern, i)
            if flags and flags.group(3) == ")" and "x" in flags.group(1):
                return True
            i += 1
        else:
            i += 1
    return False


def _walk(pattern: str, verbose: bool) -> str | None:
    """The text walk of `static_problem`, starting in verbose mode or not."""
    frames = [1]  # per open group: the largest product of bounds inside it
    modes = [verbose]  # per open group: verbose mode inside it
    last = 1  # weight of the atom a quantifier would repeat
    i, n = 0, len(pattern)
    while i < n:
        c = pattern[i]
        if modes[-1] and c in _SPACE:
            i += 1
            continue
        if modes[-1] and c == "#":
            end = pattern.find("\n", i)
            i = n if end < 0 else end + 1
            continue
        if c == "\\":
            i = skip_escape(pattern, i)
            last = 1
            continue
        if c == "[":
            i = skip_class(pattern, i)
            last = 1
            continue
        if c == "(":
            if pattern.startswith("(?#", i):
                end = pattern.find(")", i)
                i = n if end < 0 else end + 1
                continue
            flags = _FLAG_GROUP.match(pattern, i)
            inner = modes[-1]
            if flags:
                if "x" in flags.group(1):
                    inner = True
                if "x" in (flags.group(2) or ""):
                    inner = False
                if flags.group(3) == ")":
                    modes[-1] = inner  # unscoped: from here to the end of the enclosing group
                    i = flags.end()
                    continue
                i = flags.end()
            else:
                i += 1
            frames.append(1)
            modes.append(inner)
            continue
        if c == ")":
            inner = frames.pop() if len(frames) > 1 else 1
            if len(modes) > 1:
                modes.pop()
            frames[-1] = max(frames[-1], inner)
            last = inner
            i += 1
            continue
        if c == "{":
            bound = _bound_at(pattern, i, modes[-1])
            if bound is None:
                return (
                    f"unescaped '{{' at position {i} is not a repeat bound {{m,n}}; write \\{{ "
                    "for a literal brace (fuzzy matching such as {e<=1} is not allowed)"
                )
            numbers, end = bound
            largest = max(numbers)
            if largest > MAX_REPEAT_BOUND:
                return f"repeat bound {largest} at position {i} exceeds {MAX_REPEAT_BOUND}"
            product = last * max(largest, 1)
            if product > MAX_REPEAT_PRODUCT:
                return f"nested repeat bounds multiply to {product} at position {i}; the limit is {MAX_REPEAT_PRODUCT}"
            frames[-1] = max(frames[-1], product)
            last = product
            i = end
            continue
        if c not in "*+?":
            last = 1
        i += 1
    return None


def _bound_at(pattern: str, i: int, verbose: bool) -> tuple[list[int], int] | None:
    """The numbers of the repeat bound `{m,n}` at `pattern[i]` and the index past it, or None."""
    end = pattern.find("}", i)
    if end < 0:
        return None
    body = pattern[i + 1 : end]
    if verbose:
        body = "".join(ch for ch in body if ch not in _SPACE)
    bound = _BOUND_BODY.fullmatch(body)
    if bound is None or (bound.group(1) == "" and bound.group(3) in (None, "")):
        return None
    return [int(g) for g in (bound.group(1), bound.group(3)) if g], end + 1


_BOUND_BODY = re.compile(r"(\d*)(?:(,)(\d*))?")


def _tree_problem(pattern: str) -> str | None:
    """Fuzzy matching or costly bounds in the parse tree `regex` builds for `pattern` (no compiling).

    Uses the parser inside `regex` (`_regex_core`), pinned by the lock file; if that is
    not there, the text walk alone decides. A pattern the parser refuses is left to
    `regex.compile`, which says why.
    """
    try:
        from regex import _regex_core as core
    except ImportError:
        return None
    try:
        tree = _parse_tree(core, pattern)
    except Exception:  # noqa: BLE001 - regex.error and the like: compile() reports it
        return None
    if tree is None:
        return None
    found: list[str] = []
    # Nodes that hold no repeat or fuzzy constraint below them: characters, strings, sets,
    # properties, dots, anchors. Most of a long literal alternation is these; skip them unread.
    leaves = (core.Character, core.String, core.SetBase, core.Property, core.Range, core.Any, core.ZeroWidthBase)

    def weigh(node, depth: int = 0) -> int:
        if depth > 200 or found or isinstance(node, leaves):
            return 1
        if isinstance(node, core.Fuzzy):
            found.append("fuzzy matching (such as {e<=1}) is not allowed")
            return 1
        inner = 1
        for child in _children(core, node):
            inner = max(inner, weigh(child, depth + 1))
        if isinstance(node, core.GreedyRepeat):  # lazy and possessive repeats are subclasses
            counts = [c for c in (node.min_count, node.max_count) if isinstance(c, int)]
            largest = max(counts, default=1)
            if largest > MAX_REPEAT_BOUND:
                found.append(f"repeat bound {largest} exceeds {MAX_REPEAT_BOUND}")
            elif inner * max(largest, 1) > MAX_REPEAT_PRODUCT:
                found.append(f"nested repeat bounds multiply to {inner * largest}; the limit is {MAX_REPEAT_PRODUCT}")
            return inner * max(largest, 1)
        return inner

    weigh(tree)
    return found[0] if found else None


def _parse_tree(core, pattern: str):
    """What `regex.compile` parses before compiling, following its restart on global flags."""
    flags = 0
    for _ in range(4):
        source = core.Source(pattern)
        info = core.Info(flags, source.char_type, {})
        source.ignore_space = bool(info.flags & regex.VERBOSE)
        try:
            return core._parse_pattern(source, info)
        except core._UnscopedFlagSet:
            flags = info.global_flags
    return None


def _children(core, node) -> list:
    base = core.RegexBase
    children = []
    for value in node.__dict__.values():
        if isinstance(value, base):
            children.append(value)
        elif isinstance(value, (list, tuple)):
            children += [item for item in value if isinstance(item, base)]
    return children


def skip_escape(pattern: str, i: int) -> int:
    """Index just past the escape sequence starting at `pattern[i] == '\\'`."""
    if i + 1 >= len(pattern):
        return i + 1
    kind = pattern[i + 1]
    if kind in "pPNxuUgkL" and i + 2 < len(pattern) and pattern[i + 2] in "{<":
        close = "}" if pattern[i + 2] == "{" else ">"
        end = pattern.find(close, i + 3)
        return len(pattern) if end < 0 else end + 1
    return i + 2


def skip_class(pattern: str, i: int) -> int:
    """Index just past the character class starting at `pattern[i] == '['`."""
    j = i + 1
    if j < len(pattern) and pattern[j] == "^":
        j += 1
    if j < len(pattern) and pattern[j] == "]":
        j += 1
    while j < len(pattern):
        if pattern[j] == "\\":
            j = skip_escape(pattern, j)
            continue
        if pattern[j] == "]":
            return j + 1
        j += 1
    return j
