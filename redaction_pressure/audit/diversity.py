"""How much a secrets-audit scenario varies with the seed: path sets, code skeletons, gold-fix programs.

A scenario that is one repository with re-rolled values teaches a script, not a skill; these
three measures say how many different repositories and fixes a scenario's seeds make:

- **path set**: the files at HEAD;
- **skeleton**: every HEAD file with values, names, strings and numbers abstracted (`V` for a
  long run of value characters holding a digit, `w`, `S`, `0`; Python's keywords and
  punctuation kept), keyed by extension, so two repositories that differ only in names and
  values share one;
- **gold-fix program**: the gold fix's edits, line by line, abstracted the same way (what a
  script would have to do, without the names and values), the files it adds or deletes by
  extension, and whether it rewrites history.
"""

from __future__ import annotations

import difflib
import keyword
import re
from collections.abc import Iterable

from redaction_pressure.audit.plan import RepoPlan

TOKEN = re.compile(r"""("(?:[^"\\\n]|\\.)*"|'(?:[^'\\\n]|\\.)*')|([A-Za-z_][A-Za-z0-9_]*)|(\d+)""")
VALUE = re.compile(r"(?=[A-Za-z0-9+/=_.:-]*\d)[A-Za-z0-9+/=_.:-]{12,}")
"""A long run of value characters with a digit (a key, a hash, a UUID, a PEM line): a value, not code."""
KEPT = frozenset(keyword.kwlist) | {"os", "environ", "get", "self", "print", "export", "echo", "run", "env", "secrets"}


def abstract(text: str) -> str:
    def one(m: re.Match[str]) -> str:
        if m.group(1):
            return "S"
        if m.group(2):
            return m.group(2) if m.group(2) in KEPT else "w"
        return "0"

    return TOKEN.sub(one, VALUE.sub("V", text))


def _ext(path: str) -> str:
    name = path.rsplit("/", 1)[-1]
    return name.rsplit(".", 1)[-1] if "." in name.lstrip(".") else name


def path_set(plan: RepoPlan) -> frozenset[str]:
    return frozenset(plan.tree())


def skeleton(plan: RepoPlan) -> tuple[tuple[str, str], ...]:
    return tuple(sorted((_ext(p), abstract(t)) for p, t in plan.tree().items()))


def fix_program(plan: RepoPlan) -> tuple:
    tree = plan.tree()
    edits: list[tuple] = []
    for path, text in plan.fix:
        if text is None:
            edits.append(("delete", _ext(path)))
        elif path not in tree:
            edits.append(("add", _ext(path)))
        else:
            diff = difflib.ndiff(tree[path].splitlines(), text.splitlines())
            changed = tuple(abstract(line) for line in diff if line[:1] in "+-")
            edits.append(("edit", _ext(path), changed))
    return (tuple(sorted(edits, key=repr)), bool(plan.history_secrets))


def report(plans: Iterable[RepoPlan]) -> dict[str, dict[str, int]]:
    """Per scenario: tasks, distinct path sets, skeletons and gold-fix programs."""
    seen: dict[str, dict[str, set]] = {}
    for plan in plans:
        row = seen.setdefault(plan.scenario, {"tasks": set(), "paths": set(), "skeletons": set(), "fixes": set()})
        row["tasks"].add(plan.seed)
        row["paths"].add(path_set(plan))
        row["skeletons"].add(skeleton(plan))
        row["fixes"].add(fix_program(plan))
    return {name: {k: len(v) for k, v in row.items()} for name, row in seen.items()}
