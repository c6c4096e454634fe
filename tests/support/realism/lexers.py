"""Shell and SQL read as their lexers read them: `bash_syntax_problem` (bash -n), `shell_literal_regions`
(quoted strings, heredocs and bare words with their quoting) and `sql_literals` (quoted literals).
"""

from __future__ import annotations

import os
import re
import subprocess
import tempfile


def bash_syntax_problem(text: str) -> str | None:
    """What `bash -n` says about a script, or None when it parses."""
    with tempfile.TemporaryDirectory() as tmp:
        path = os.path.join(tmp, "deploy.sh")
        with open(path, "w", encoding="utf-8") as f:
            f.write(text)
        done = subprocess.run(
            ["bash", "--noprofile", "--norc", "-n", path], cwd=tmp, env={"PATH": "/usr/bin:/bin"},
            stdin=subprocess.DEVNULL, capture_output=True, text=True, timeout=20,
        )  # fmt: skip
    if done.returncode != 0 or done.stderr:
        return f"bash -n fails (exit {done.returncode}): {done.stderr.strip()[:200]}"
    return None


_HEREDOC = re.compile(r"<<(-?)[ \t]*(\\?)(['\"]?)([A-Za-z_][A-Za-z0-9_]*)\3")
"""A heredoc operator: `<<` or `<<-`, then the delimiter, quoted ('EOF', "EOF", \\EOF) or bare."""


def shell_literal_regions(text: str) -> list[tuple[int, int, str]]:
    """Regions of a bash script as (start, end, how): `single` quoted contents, heredoc bodies.

    A heredoc body is `heredoc` when its delimiter is quoted (`<<'EOF'`: no expansion)
    and `expanding` otherwise. A small lexer: quotes, `$( )` nesting inside double
    quotes, comments, here-strings and heredocs; enough for deploy scripts.
    Raises ValueError on an unterminated quote or heredoc.
    """
    regions: list[tuple[int, int, str]] = []
    stack = ["cmd"]  # cmd | dq (inside "...") | sub (inside $(...))
    pending: list[tuple[str, bool, bool]] = []  # heredocs opened on this line
    i, n = 0, len(text)
    while i < n:
        c, top = text[i], stack[-1]
        if c == "\\":
            i += 2
            continue
        if top == "dq":
            if c == '"':
                stack.pop()
            elif text.startswith("$(", i):
                stack.append("sub")
                i += 1
            i += 1
            continue
        if c == "'":
            end = text.find("'", i + 1)
            if end < 0:
                raise ValueError(f"unterminated single quote at offset {i}")
            regions.append((i + 1, end, "single"))
            i = end + 1
            continue
        if c == '"':
            stack.append("dq")
        elif text.startswith("$(", i):
            stack.append("sub")
            i += 1
        elif c == ")" and top == "sub":
            stack.pop()
        elif c == "#" and (i == 0 or text[i - 1] in " \t\n;"):
            end = text.find("\n", i)
            i = n if end < 0 else end
            continue
        elif text.startswith("<<<", i):
            i += 3
            continue
        elif (m := _HEREDOC.match(text, i)) is not None:
            pending.append((m.group(4), bool(m.group(2) or m.group(3)), m.group(1) == "-"))
            i = m.end()
            continue
        elif c == "\n" and pending:
            i += 1
            for delimiter, quoted, strip_tabs in pending:
                start = i
                while True:
                    eol = text.find("\n", i)
                    line = text[i : n if eol < 0 else eol]
                    if (line.lstrip("\t") if strip_tabs else line) == delimiter:
                        regions.append((start, i, "heredoc" if quoted else "expanding"))
                        i = n if eol < 0 else eol + 1
                        break
                    if eol < 0:
                        raise ValueError(f"heredoc {delimiter!r} is never closed")
                    i = eol + 1
            pending = []
            continue
        i += 1
    if stack != ["cmd"] or pending:
        raise ValueError(f"script ends inside {stack[-1] if stack != ['cmd'] else 'a heredoc'}")
    return regions


def sql_literals(text: str) -> list[tuple[int, int]]:
    """Content spans of single-quoted SQL literals (`''` escapes a quote); comments skipped.

    Raises ValueError on an unterminated literal or quoted identifier.
    """
    spans: list[tuple[int, int]] = []
    i, n = 0, len(text)
    while i < n:
        if text.startswith("--", i):
            end = text.find("\n", i)
            i = n if end < 0 else end
        elif text.startswith("/*", i):
            end = text.find("*/", i + 2)
            if end < 0:
                raise ValueError("unterminated block comment")
            i = end + 2
        elif text[i] == "'":
            j = i + 1
            while True:
                j = text.find("'", j)
                if j < 0:
                    raise ValueError(f"unterminated literal at offset {i}")
                if text.startswith("''", j):
                    j += 2
                    continue
                break
            spans.append((i + 1, j))
            i = j + 1
        elif text[i] in '"`':
            end = text.find(text[i], i + 1)
            if end < 0:
                raise ValueError(f"unterminated quoted identifier at offset {i}")
            i = end + 1
        else:
            i += 1
    return spans
