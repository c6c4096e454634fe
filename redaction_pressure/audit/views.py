"""The views of a file's bytes: every text a secret may be spelled in (a pure function).

`views(data)` reads the bytes as text (Latin-1; UTF-16/32 and EBCDIC when the bytes say so) and
adds, per text: string literals joined across concatenation and line breaks, backslash escapes
and HTML character references decoded, URL-decoded, whitespace removed, and constant folding
(Python expressions, JavaScript and shell assignments); containers (archives, compressed
streams, git packs and bundles) are opened within a `Budget` (raising `Oversized` past it), and
base64 tokens decoded, each result read again in all these forms up to `MAX_DECODE_DEPTH`
levels. Every call charges the bytes it reads to the budget (`Budget.view`). `leakscan` searches the views for each secret's windows; its docstring gives the rule.
"""

from __future__ import annotations

import ast
import base64
import binascii
import re
import warnings
import zlib
from urllib.parse import unquote

from redaction_pressure.audit.inflate import Budget, inflate_raw, unwrap

MAX_DECODE_DEPTH = 3

ESCAPE = re.compile(
    r"\\x([0-9a-fA-F]{2})|\\u\{([0-9a-fA-F]{1,6})\}|\\u([0-9a-fA-F]{4})|\\U([0-9a-fA-F]{8})|\\([0-7]{1,3})"
    r"|&#x([0-9a-fA-F]{1,6});|&#([0-9]{1,7});"
)
JOIN = re.compile(r"""(?<!\\)(["'`])[ \t]*(?:\\?\r?\n[ \t]*)*(?:\+|\.\.?|,)?[ \t]*(?:\\?\r?\n[ \t]*)*(["'`])""")
"""A closing quote, optional `+` (or `.`/`..`/`,`) and line breaks, an opening quote."""
B64_TOKEN = re.compile(r"[A-Za-z0-9+/_-]{16,}={0,2}")
WHITESPACE = re.compile(r"\s+|\\[nrt]")
ASSIGN = re.compile(
    r"""^[ \t]*(?:export[ \t]+|readonly[ \t]+|local[ \t]+|declare[ \t]+|const[ \t]+|let[ \t]+|var[ \t]+)?"""
    r"""([A-Za-z_$][\w$]*)[ \t]*(?::[^=\n]*)?[ \t]*=[ \t]*([^\n;]*)""",
    re.M,
)
TOKEN = re.compile(
    r""""((?:[^"\\\n]|\\.)*)"|'([^'\n]*)'|`([^`]*)`|\$\{([A-Za-z_]\w*)\}|\$([A-Za-z_]\w*)|([A-Za-z_$][\w$]*)|(\S)"""
)


def _unescape(text: str) -> str:
    def one(m: re.Match[str]) -> str:
        for i, base in ((1, 16), (2, 16), (3, 16), (4, 16), (5, 8), (6, 16), (7, 10)):
            if m.group(i):
                try:
                    return chr(int(m.group(i), base))
                except (ValueError, OverflowError):
                    return m.group(0)
        return m.group(0)

    return ESCAPE.sub(one, text)


def parse_quietly(text: str) -> ast.Module:
    """`ast.parse` without the SyntaxWarnings that arbitrary files (an agent's, a YAML read as
    Python) raise: they would reach the evaluator's stderr, once per process and file shape."""
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", SyntaxWarning)
        return ast.parse(text)


def _fold_python(text: str) -> list[str]:
    """String values a Python module computes from constants (best effort, never executes code)."""
    try:
        tree = parse_quietly(text)
    except (SyntaxError, ValueError, RecursionError, MemoryError):
        return []
    env: dict[str, str] = {}
    out: list[str] = []

    def value(node: ast.AST, depth: int = 0) -> str | None:
        if depth > 50:
            return None
        if isinstance(node, ast.Constant):
            if isinstance(node.value, str):
                return node.value
            if isinstance(node.value, bytes):
                return node.value.decode("latin-1")
            return None
        if isinstance(node, ast.Name):
            return env.get(node.id)
        if isinstance(node, ast.BinOp) and isinstance(node.op, ast.Add):
            a, b = value(node.left, depth + 1), value(node.right, depth + 1)
            return a + b if a is not None and b is not None else None
        if isinstance(node, ast.JoinedStr):
            parts = []
            for part in node.values:
                v = value(part.value if isinstance(part, ast.FormattedValue) else part, depth + 1)
                if v is None:
                    return None
                parts.append(v)
            return "".join(parts)
        if isinstance(node, ast.Subscript) and isinstance(node.slice, ast.Slice):
            v = value(node.value, depth + 1)
            s = node.slice
            if v is not None and s.lower is None and s.upper is None and isinstance(s.step, ast.UnaryOp):
                return v[::-1]
            return None
        if isinstance(node, ast.Call) and isinstance(node.func, ast.Attribute):
            attr = node.func.attr
            base = value(node.func.value, depth + 1)
            if attr == "join" and base is not None and len(node.args) == 1:
                seq = node.args[0]
                items = seq.elts if isinstance(seq, (ast.List, ast.Tuple)) else None
                vals = [value(e, depth + 1) for e in items] if items is not None else None
                if vals is not None and all(v is not None for v in vals):
                    return base.join(vals)  # type: ignore[arg-type]
            if attr in ("upper", "lower", "strip", "swapcase") and base is not None:
                return getattr(base, attr)()
        return None

    for _ in range(2):  # twice, so names bound later in the file resolve too
        for node in ast.walk(tree):
            if isinstance(node, (ast.Assign, ast.AnnAssign)) and node.value is not None:
                v = value(node.value)
                targets = node.targets if isinstance(node, ast.Assign) else [node.target]
                for t in targets:
                    if isinstance(t, ast.Name) and v is not None:
                        env[t.id] = v
    for node in ast.walk(tree):
        if isinstance(node, (ast.BinOp, ast.JoinedStr, ast.Call, ast.Subscript)):
            v = value(node)
            if v:
                out.append(v)
    return out


def _fold_assignments(text: str) -> list[str]:
    """Shell and JavaScript: variables bound to quoted text, joined by `+`, `$A$B` or `${A}`."""
    env: dict[str, str] = {}
    out: list[str] = []

    def evaluate(rhs: str) -> str:
        parts = []
        for m in TOKEN.finditer(rhs):
            dq, sq, bt, brace, dollar, ident, other = m.groups()
            if dq is not None or bt is not None:
                inner = dq if dq is not None else bt
                inner = re.sub(
                    r"\$\{([A-Za-z_]\w*)\}|\$([A-Za-z_]\w*)", lambda x: env.get(x.group(1) or x.group(2), ""), inner
                )
                parts.append(inner)
            elif sq is not None:
                parts.append(sq)
            elif brace or dollar:
                parts.append(env.get(brace or dollar, ""))
            elif ident is not None:
                parts.append(env.get(ident, ident if not parts else ""))
            elif other not in "+()":
                parts.append(other)
        return "".join(parts)

    for m in ASSIGN.finditer(text):
        v = evaluate(m.group(2))
        env[m.group(1)] = v
        out.append(v)
    return out


def _texts(data: bytes) -> list[str]:
    """The bytes read as text: Latin-1 always; UTF-16/32 when a byte-order mark or many NUL bytes
    say so; EBCDIC (code page 037) when most bytes are high."""
    out = [data.decode("latin-1")]
    if not data:
        return out
    nuls = data.count(0) / len(data)
    if data[:2] in (b"\xff\xfe", b"\xfe\xff") or data[:4] in (b"\x00\x00\xfe\xff", b"\xff\xfe\x00\x00") or nuls > 0.2:
        for codec in ("utf-16-le", "utf-16-be", "utf-32-le", "utf-32-be"):
            for shift in range(0, 4 if "32" in codec else 2):
                out.append(data[shift:].decode(codec, "ignore").replace("\x00", ""))
    if sum(1 for b in data if b >= 0x80) > len(data) / 2:
        out.append(data.decode("cp037"))
    return out


def views(data: bytes, depth: int = 0, budget: Budget | None = None) -> list[str]:
    """The texts a file's bytes may spell a secret in (see the module docstring). Containers
    (archives, compressed streams, git packs and bundles) are opened and the bytes read within
    `budget`, which raises `Oversized` past its limits."""
    budget = Budget() if budget is None else budget
    budget.view(len(data))
    out: list[str] = []
    for text in _texts(data):
        out.append(text)
        joined = JOIN.sub("", text)
        unescaped = _unescape(joined)
        out += [joined, unescaped, unquote(unescaped, encoding="latin-1"), WHITESPACE.sub("", unescaped)]
        folded = _fold_python(text) + _fold_assignments(text)
        if folded:
            out.append("\n".join(folded))
    decoded: list[bytes] = []
    for name, part in unwrap(data, budget, depth):
        decoded += [name.encode("utf-8", "replace"), part]
    if depth and not decoded:  # a decoded token may be raw deflate, which no header announces
        try:
            decoded.append(inflate_raw(data, budget))
        except zlib.error:
            pass
    if depth < MAX_DECODE_DEPTH:
        unescaped = _unescape(JOIN.sub("", out[0]))
        for token in set(B64_TOKEN.findall(unescaped)) | set(B64_TOKEN.findall(WHITESPACE.sub("", unescaped))):
            try:
                decoded.append(base64.b64decode(token.replace("-", "+").replace("_", "/") + "=" * (-len(token) % 4)))
            except (binascii.Error, ValueError):
                continue
    for raw in decoded:
        if raw:
            out += views(raw, depth + 1, budget)
    return list(dict.fromkeys(out))
