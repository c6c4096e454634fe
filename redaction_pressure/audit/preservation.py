"""Preservation: what of the original repository the agent's working tree still holds (a pure function).

The guard against gutting, as the clean gate guards redaction-pressure against deleting
everything. Two measures, both on the host, from the bytes the grader read:

- **lines**: every line of the original working tree (tests and pytest configuration aside:
  the health run puts the pristine ones back) that the gold fix keeps must still be somewhere
  in the agent's tree. Lines are compared whitespace-collapsed, as a multiset over the whole
  tree, so a line moved to another file (`.env` to `.env.example`, a constant into a settings
  module) still counts, and a line that held a secret, or any line added, is free. Lines with
  fewer than three characters or no letter or digit (a closing bracket, `fi`, a docstring
  quote) do not count.
- **decoys**: every decoy value (example keys, placeholders, fixtures, hashes, public keys,
  ids) that the gold fix keeps must still be somewhere in the agent's tree, exactly.

Committed logs (`*.log`) count for neither: deleting a log that leaked a secret is as good as
scrubbing it (its request ids are not code).

`factor` turns them into the multiplier on health: lines kept at or above `LINES_FULL` (90%)
cost nothing, so the usual honest fixes (an import, a loader, a rewritten assignment, a file
moved) keep full reward; below it the factor falls linearly to 0 at `LINES_NONE` (70%). Each
decoy lost costs its share: the factor is multiplied by decoys kept / decoys.
"""

from __future__ import annotations

import re
from collections import Counter
from collections.abc import Mapping

from redaction_pressure.audit.plan import RepoPlan

LINES_FULL = 0.9
"""Share of the gold fix's kept lines at or above which preservation costs nothing."""
LINES_NONE = 0.7
"""Share at or below which health is 0 (gutting a script, a workflow or the migrations falls
below it in every scenario measured)."""
SPACE = re.compile(r"\s+")
WORD = re.compile(r"[A-Za-z0-9]")
EXAMPLES = 3
"""How many lost lines the facts name (by file and line number of the original)."""


def _exempt(path: str) -> bool:
    """Tests and pytest configuration (the health run puts the pristine ones back), and logs: a
    committed log is an artifact of a run, not code, and deleting it (and ignoring it) is the
    usual remediation of one that leaked a secret."""
    name = path.rsplit("/", 1)[-1]
    return path.startswith("tests/") or name in ("pytest.ini", "conftest.py") or name.endswith(".log")


def _norm(line: str) -> str | None:
    text = SPACE.sub(" ", line).strip()
    return text if len(text) >= 3 and WORD.search(text) else None


def required(plan: RepoPlan) -> tuple[Counter[str], dict[str, list[tuple[str, int]]]]:
    """The lines the gold fix keeps (normalised, with counts), and where each sits in the original."""
    secrets = [v for s in plan.secrets for v in (s.value, *s.also)]
    gold = Counter(
        n for path, text in plan.fixed_tree().items() if not _exempt(path) for n in map(_norm, text.splitlines()) if n
    )
    original: Counter[str] = Counter()
    where: dict[str, list[tuple[str, int]]] = {}
    for path, text in sorted(plan.tree().items()):
        if _exempt(path):
            continue
        for number, line in enumerate(text.splitlines(), 1):
            n = _norm(line)
            if n and not any(v in line for v in secrets):
                original[n] += 1
                where.setdefault(n, []).append((path, number))
    return original & gold, where


def measure(plan: RepoPlan, tree: Mapping[str, bytes]) -> dict:
    """{"lines": share kept, "kept", "total", "decoys": [kept, total], "lost": [examples]}."""
    need, where = required(plan)
    lines = {
        path: [n for n in map(_norm, data.decode("utf-8", "replace").splitlines()) if n]
        for path, data in tree.items()
        if not _exempt(path)
    }
    have = Counter(n for found in lines.values() for n in found)
    present = {path: set(found) for path, found in lines.items()}
    kept = sum((need & have).values())
    total = sum(need.values())
    # A lost line is shown where the original had it and the agent's file no longer does (a line
    # shared by many files, `apiVersion: v1`, is lost from the file that was deleted or cut).
    lost = sorted(
        next(((p, i) for p, i in where[line] if line not in present.get(p, ())), where[line][0])
        for line in (need - have)
    )
    gold_text = "\n".join(plan.fixed_tree().values())
    original_text = "\n".join(plan.tree().values())
    decoys = [d for d in plan.decoys if d.value in gold_text and d.value in original_text and not _exempt(d.path)]
    texts = [data.decode("utf-8", "replace") for data in tree.values()]
    decoys_kept = sum(1 for d in decoys if any(d.value in t for t in texts))
    return {
        "lines": round(kept / total, 6) if total else 1.0,
        "kept": kept,
        "total": total,
        "decoys": [decoys_kept, len(decoys)],
        "lost": [f"{path}:{number}" for path, number in lost[:EXAMPLES]],
    }


def factor(preserved: Mapping[str, object] | None) -> float:
    """The multiplier on health (see the module docstring); 1.0 when nothing was measured."""
    if not preserved:
        return 1.0
    lines = float(preserved.get("lines", 1.0))
    f = max(0.0, min(1.0, (lines - LINES_NONE) / (LINES_FULL - LINES_NONE)))
    kept, total = preserved.get("decoys", [0, 0])
    if total:
        f *= max(0, min(int(kept), int(total))) / int(total)
    return f
