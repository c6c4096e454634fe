"""What the memoriser learns from train tasks: one script per scenario, from the gold fixes.

`learn(plans)` groups the plans by scenario; `learn_scenario` abstracts each gold fix into
rules (an edit's original context as a regex and its fixed text as a template; `patterns` folds
them), the files the fix deletes and adds, whether it rewrites history (with the patterns whose
matches it feeds to filter-repo), and the words of the scenario's prompts. `trained()` is the
model learned from `TRAIN_TASKS` of the train split, once per process.
"""

from __future__ import annotations

import base64
import re
from collections import Counter, defaultdict
from collections.abc import Iterable
from dataclasses import dataclass
from difflib import SequenceMatcher
from functools import lru_cache
from pathlib import PurePosixPath

from redaction_pressure.audit.memoriser.patterns import BOF, EOF, Regex, fold, is_secret, path_pattern, shape, tokenise
from redaction_pressure.audit.plan import RepoPlan

MODEL_VERSION = 1
TRAIN_TASKS = range(260)
"""The train tasks `trained()` learns from; a fair evaluation plays it only on others."""
SOURCE_SIMILARITY = 0.5
"""An added file at least this similar to an existing one is learned as an edit of it."""

# -- learning: what the gold fix does ----------------------------------------------------------


@dataclass(frozen=True)
class Instance:
    """One edit of one train task: its original tokens around and in the edit, and the fixed ones."""

    key: tuple
    path: str
    left: list[str]
    old: list[str]
    new: list[str]
    right: list[str]
    values: dict[str, str]
    """Secret sentinel -> this task's value."""


def sentinels(plan: RepoPlan) -> dict[str, str]:
    """Secret value -> the token standing for it (`\\x00id\\x00`; `\\x00id+\\x00` for the forms in `also`)."""
    marks = {v: f"\x00{s.id}+\x00" for s in plan.secrets for v in s.also}
    marks.update({s.value: f"\x00{s.id}\x00" for s in plan.secrets})
    return marks


def _mask(text: str, marks: dict[str, str]) -> str:
    for value in sorted(marks, key=len, reverse=True):
        text = text.replace(value, marks[value])
    return text


def _line_start(tokens: list[str], at: int) -> int:
    while at > 0 and tokens[at - 1] != "\n":
        at -= 1
    return at


def _line_end(tokens: list[str], at: int) -> int:
    while at < len(tokens) and tokens[at] != "\n":
        at += 1
    return min(at + 1, len(tokens))


def context(tokens: list[str], start: int, end: int) -> tuple[list[str], list[str]]:
    """The tokens before `start` on its line and after `end` on its line; a bare side takes the
    neighbouring line too, so that every rule is anchored on some text."""
    left_at = _line_start(tokens, start)
    if left_at == start and start > 0:
        left_at = _line_start(tokens, start - 1)
    right_at = _line_end(tokens, end)
    if tokens[end:right_at] in ([], ["\n"]) and right_at < len(tokens):
        right_at = _line_end(tokens, right_at)
    left = ([BOF] if left_at == 0 else []) + tokens[left_at:start]
    right = tokens[end:right_at] + ([EOF] if right_at == len(tokens) else [])
    return left, right


def _changes(old: list[str], new: list[str]) -> list[tuple[int, int, int, int]]:
    """The token spans the fix changes; changes on one line (no newline between) are one edit."""
    spans: list[list[int]] = []
    for op, i1, i2, j1, j2 in SequenceMatcher(None, old, new, autojunk=False).get_opcodes():
        if op == "equal":
            continue
        if spans and "\n" not in old[spans[-1][1] : i1]:
            spans[-1][1], spans[-1][3] = i2, j2
        else:
            spans.append([i1, i2, j1, j2])
    return [tuple(s) for s in spans]


def edits(path: str, before: str, after: str, marks: dict[str, str]) -> list[Instance]:
    """The edits turning `before` (with secrets masked) into `after`, each keyed by what it does."""
    values = {mark: value for value, mark in marks.items()}
    old, new = tokenise(_mask(before, marks)), tokenise(after)
    found = []
    for i1, i2, j1, j2 in _changes(old, new):
        left, right = context(old, i1, i2)
        secrets = tuple(sorted({t for t in old[i1:i2] if is_secret(t)}))
        key = (secrets, _kept_out(new[j1:j2], left + old[i1:i2] + right), PurePosixPath(path).name)
        found.append(Instance(key, path, left, old[i1:i2], new[j1:j2], right, values))
    return found


def _kept_out(new: list[str], original: list[str]) -> tuple[str, ...]:
    """The fixed tokens with the words it keeps from the original lines blanked: edits that keep
    a seed's own words (a user name, a host) are still alike, and their template cites the match."""
    kept = {token for token in original if token[:1].isalnum() or token[:1] == "_"}
    return tuple("\x02" if token in kept else token for token in new)


def rule(group: list[Instance], shapes: dict[str, str]) -> dict:
    """One edit rule from alike edits: `pattern` matches the original (group `old` is replaced),
    `new` is the replacement template, `paths` the files it was learned on."""
    regex = Regex(shapes, [i.values for i in group])
    left = regex.render(fold([i.left for i in group]))
    old = regex.render(fold([i.old for i in group]))
    right = regex.render(fold([i.right for i in group]))
    return {
        "paths": path_pattern([i.path for i in group]),
        "pattern": f"{left}(?P<old>{old})(?={right})",
        "new": regex.template(fold([i.new for i in group])),
    }


def rules(instances: Iterable[Instance], shapes: dict[str, str]) -> list[dict]:
    groups: dict[tuple, list[Instance]] = defaultdict(list)
    for instance in instances:
        groups[instance.key].append(instance)
    return [rule(group, shapes) for _, group in sorted(groups.items(), key=lambda kv: repr(kv[0]))]


def capture(group: list[Instance], shapes: dict[str, str]) -> str:
    """A pattern whose group `value` is a history secret, in the context it was committed in."""
    regex = Regex(shapes, [i.values for i in group])
    left = regex.render(fold([i.left for i in group]))
    right = regex.render(fold([i.right for i in group]))
    return f"{left}{regex.render(fold([i.old for i in group]), capture='value')}(?={right})"


def _history_instances(plan: RepoPlan, marks: dict[str, str]) -> list[Instance]:
    """Each history secret where a commit wrote it, with its context there."""
    values = {mark: value for value, mark in marks.items()}
    found = []
    for secret in plan.history_secrets:
        mark = f"\x00{secret.id}\x00"
        for commit in plan.commits:
            for path, text in commit.files:
                if text is None or secret.value not in text:
                    continue
                tokens = tokenise(_mask(text, marks))
                for at in (i for i, token in enumerate(tokens) if token == mark):
                    left, right = context(tokens, at, at + 1)
                    found.append(Instance((secret.id, PurePosixPath(path).name), path, left, [mark], [], right, values))
    return found


def _derivations(plan: RepoPlan) -> set[str]:
    """How a history secret's other leaking forms follow from its value (decoded, split in lines)."""
    kinds = set()
    for secret in plan.history_secrets:
        for form in secret.also:
            padded = secret.value + "=" * (-len(secret.value) % 4)
            try:
                if base64.b64decode(padded, validate=True).decode() == form:
                    kinds.add("base64")
                    continue
            except ValueError:
                pass
            if form in secret.value.split("\n"):
                kinds.add("lines")
    return kinds


def _source(tree: dict[str, str], text: str, marks: dict[str, str]) -> str | None:
    """The existing file an added one was made from, if one is similar enough (secrets aside)."""
    scored = [
        (SequenceMatcher(None, _mask(body, marks), text, autojunk=False).ratio(), path)
        for path, body in sorted(tree.items())
    ]
    best = max(scored, default=(0.0, None))
    return best[1] if best[0] >= SOURCE_SIMILARITY else None


@dataclass(frozen=True)
class Addition:
    """A file the gold fix adds in one train task, and the existing file it was made from, if any."""

    path: str
    source: str | None
    text: str
    edits: list[Instance]


def _most_common(items: Iterable[str]) -> str:
    return Counter(items).most_common(1)[0][0]


def additions(found: list[Addition], shapes: dict[str, str]) -> list[dict]:
    """Per added file name: where it goes (a path, or its source's path plus a `suffix`), the
    `source` it is made from and the `rules` making it, and its usual `text` for when no source is there."""
    groups: dict[str, list[Addition]] = defaultdict(list)
    for addition in found:
        groups[PurePosixPath(addition.path).name].append(addition)
    specs = []
    for _, group in sorted(groups.items()):
        spec: dict = {"path": _most_common(a.path for a in group), "text": _most_common(a.text for a in group)}
        if all(a.source for a in group):
            suffixes = {a.path[len(a.source) :] if a.path.startswith(a.source) else None for a in group}
            if len({a.path for a in group}) > 1 and len(suffixes) == 1 and None not in suffixes:
                spec["suffix"] = suffixes.pop()
            spec["source"] = path_pattern([a.source for a in group])
            spec["rules"] = rules([i for a in group for i in a.edits], shapes)
        specs.append(spec)
    return specs


def words_of(text: str) -> set[str]:
    return set(re.findall(r"[a-z0-9]+", text.lower()))


def _profile(prompts: list[str]) -> dict[str, float]:
    """Each word's share of the scenario's train prompts (rare ones left out)."""
    counts = Counter(word for text in prompts for word in words_of(text))
    return {word: n / len(prompts) for word, n in sorted(counts.items()) if n / len(prompts) >= 0.1}


def learn_scenario(plans: list[RepoPlan]) -> dict:
    """The script of one scenario from its train plans."""
    from redaction_pressure.audit.prompt import prompt

    forms: dict[str, list[str]] = defaultdict(list)
    for plan in plans:
        for value, mark in sentinels(plan).items():
            forms[mark].append(value)
    shapes = {mark: shape(values) for mark, values in forms.items()}
    changed, deleted, added, history = [], [], [], []
    derive: set[str] = set()
    for plan in plans:
        tree, marks = plan.tree(), sentinels(plan)
        for path, text in plan.fix:
            if text is None:
                deleted.append(path)
            elif path in tree:
                changed += edits(path, tree[path], text, marks)
            else:
                source = _source(tree, text, marks)
                added.append(Addition(path, source, text, edits(source, tree[source], text, marks) if source else []))
        history += _history_instances(plan, marks)
        derive |= _derivations(plan)
    by_name: dict[str, list[str]] = defaultdict(list)
    for path in deleted:
        by_name[PurePosixPath(path).name].append(path)
    captures: dict[tuple, list[Instance]] = defaultdict(list)
    for instance in history:
        captures[instance.key].append(instance)
    rewrites = sum(bool(plan.history_secrets) for plan in plans) * 2 > len(plans)
    return {
        "prompt": _profile([prompt(plan).user for plan in plans]),
        "rules": rules(changed, shapes),
        "delete": [path_pattern(paths) for _, paths in sorted(by_name.items())],
        "add": additions(added, shapes),
        "rewrite": rewrites,
        "captures": [capture(group, shapes) for _, group in sorted(captures.items())] if rewrites else [],
        "derive": sorted(derive),
    }


def learn(plans: Iterable[RepoPlan]) -> dict:
    """A JSON-able model: one script per scenario the train plans play."""
    by_scenario: dict[str, list[RepoPlan]] = defaultdict(list)
    for plan in plans:
        by_scenario[plan.scenario].append(plan)
    if not by_scenario:
        raise ValueError("the memoriser needs at least one train plan to learn from")
    return {
        "version": MODEL_VERSION,
        "scenarios": {name: learn_scenario(group) for name, group in sorted(by_scenario.items())},
    }


@lru_cache(maxsize=2)
def trained(level: str = "standard") -> dict:
    """The model learned from `TRAIN_TASKS` of the train split at `level` (once per process and level)."""
    from redaction_pressure.audit.splits import plan_for

    return learn(plan_for("train", index, difficulty=level) for index in TRAIN_TASKS)
