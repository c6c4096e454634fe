"""A memorising secrets-audit baseline: one script per scenario, learned from train tasks, replayed.

Why: a scenario that a memorised script solves measures recall, not auditing. This adversary
reads everything a train task holds (tree, gold fix, secret values) and learns, per scenario,
what the gold fix does with the seed-specific parts abstracted away:

- which scenario a prompt belongs to: the words of its train prompts (title, brief, findings),
  nearest by weighted overlap;
- every edit the fix makes to a file, as a regex over the original text (the lines around the
  edit; secret values replaced by a pattern of their shape across seeds, other words that vary
  across seeds by a pattern of theirs) and a template of the fixed text (literal text and the
  varying words captured from the match). Edits alike across seeds and files (same secrets, same
  fixed text, same file name) share one rule, whose path pattern generalises the folders;
- the files it deletes, the files it adds (as edits of the most similar existing file, e.g.
  `.env` -> `.env.example`, or verbatim), and whether it rewrites history, with the patterns
  (the value's context and shape) whose matches in any blob it feeds to `git filter-repo
  --replace-text`, as `programs.oracle_script` does with the true values.

On an unseen task it sees only the prompt and the workspace (`act`): one bash call dumps every
tracked file, one applies the script (files written from base64 payloads, a commit, then the
history scan in the workspace's own python3 and the rewrite). A rule that matches nothing in
the files of its learned paths is tried on every file. While a scenario is one repository with
re-rolled values this comes close to the oracle; on a procedural generator it should not.
"""

from __future__ import annotations

import base64
import json
import math
import os
import re
import shlex
from collections import Counter, defaultdict
from collections.abc import Iterable
from dataclasses import dataclass
from difflib import SequenceMatcher
from functools import lru_cache
from pathlib import PurePosixPath

from redaction_pressure.audit import agent, programs
from redaction_pressure.audit.plan import RepoPlan

MODEL_VERSION = 1
TRAIN_TASKS = range(260)
"""The train tasks `trained()` learns from; a fair evaluation plays it only on others."""
SLACK = 0.25
"""How far a learned length range stretches beyond the lengths seen (share of the longest)."""
SOURCE_SIMILARITY = 0.5
"""An added file at least this similar to an existing one is learned as an edit of it."""
FIX_MESSAGE = programs.FIX_MESSAGE
REPLACED = agent.REPLACED

SENTINEL = re.compile(r"\x00[^\x00]*\x00")
TOKEN = re.compile(r"\x00[^\x00]*\x00|\w+|[\s\S]", re.ASCII)
BOF, EOF = "\x00^\x00", "\x00$\x00"
"""Context tokens for the start and the end of a file."""

FILE_MARK, END_MARK = "@@@MEMORISER-FILE ", "@@@MEMORISER-END"
DUMP = f"""cd repo 2>/dev/null || {{ echo "no repository"; exit 0; }}
git ls-files -z | while IFS= read -r -d '' f; do
  [ -f "$f" ] && [ ! -L "$f" ] || continue
  grep -Iq . "$f" 2>/dev/null || [ ! -s "$f" ] || continue
  printf '\\n{FILE_MARK}%s\\n' "$f"; cat "$f"
done
printf '\\n{END_MARK}\\n'
"""
"""Every tracked text file of the working tree, between markers (one tool call)."""

SCAN = r"""
import base64, binascii, json, re, subprocess, sys
spec = json.loads(base64.b64decode(sys.argv[1]))
patterns = [re.compile(p) for p in spec["captures"]]
listing = subprocess.run(["git", "cat-file", "--batch-all-objects", "--batch-check=%(objectname) %(objecttype)"],
                         capture_output=True, text=True).stdout.split()
blobs = [listing[i] for i in range(0, len(listing) - 1, 2) if listing[i + 1] == "blob"]
data = subprocess.run(["git", "cat-file", "--batch"], input="".join(b + "\n" for b in blobs).encode(),
                      capture_output=True).stdout
found = set()
at = 0
while at < len(data):
    end = data.index(b"\n", at)
    size = int(data[at:end].split()[2])
    text = data[end + 1:end + 1 + size].decode("utf-8", "replace")
    at = end + 2 + size
    for pattern in patterns:
        found.update(m.group("value") for m in pattern.finditer(text))
derived = set()
for value in found:
    if "base64" in spec["derive"]:
        try:
            derived.add(base64.b64decode(value + "=" * (-len(value) % 4), validate=True).decode())
        except (binascii.Error, ValueError):
            pass
    if "lines" in spec["derive"]:
        derived.update(line for line in value.split("\n") if len(line) >= 16 and "-----" not in line)
for value in sorted((found | derived) - {""}, key=len, reverse=True):
    print("literal:" + value + "==>" + spec["replaced"])
"""
"""Run in the workspace's repository: every blob's matches of the learned value patterns (and
what the values derive, e.g. a base64 token's decoded credential), as filter-repo rules."""


# -- learning: token sequences folded into patterns ---------------------------------------------


def _tokens(text: str) -> list[str]:
    return TOKEN.findall(text)


def _is_secret(token: str) -> bool:
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


class _Regex:
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
            elif _is_secret(token):
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
    return _Regex({}, [{} for _ in paths]).render(fold([_tokens(p) for p in paths]))


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
    old, new = _tokens(_mask(before, marks)), _tokens(after)
    found = []
    for i1, i2, j1, j2 in _changes(old, new):
        left, right = context(old, i1, i2)
        secrets = tuple(sorted({t for t in old[i1:i2] if _is_secret(t)}))
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
    regex = _Regex(shapes, [i.values for i in group])
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
    regex = _Regex(shapes, [i.values for i in group])
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
                tokens = _tokens(_mask(text, marks))
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


def _words(text: str) -> set[str]:
    return set(re.findall(r"[a-z0-9]+", text.lower()))


def _profile(prompts: list[str]) -> dict[str, float]:
    """Each word's share of the scenario's train prompts (rare ones left out)."""
    counts = Counter(word for text in prompts for word in _words(text))
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


@lru_cache(maxsize=1)
def trained() -> dict:
    """The model learned from `TRAIN_TASKS` of the train split (once per process)."""
    from redaction_pressure.audit.splits import plan_for

    return learn(plan_for("train", index) for index in TRAIN_TASKS)


# -- acting: only the prompt and the workspace ----------------------------------------------------


def recognise(model: dict, prompt_text: str) -> str:
    """The scenario whose train prompts share the most telling words with this prompt."""
    scenarios = model["scenarios"]
    spread: Counter[str] = Counter()
    for script in scenarios.values():
        spread.update(script["prompt"])
    words = _words(prompt_text)

    def overlap(name: str) -> float:
        profile = scenarios[name]["prompt"]
        return sum(profile.get(w, 0.0) * math.log((1 + len(scenarios)) / (1 + spread[w])) for w in words)

    return max(sorted(scenarios), key=overlap)


def parse_dump(output: str) -> dict[str, str]:
    """path -> text of every file the dump shows whole (a file the output limit cut is left out)."""
    body = output.split(f"\n{END_MARK}", 1)[0]
    files = {}
    for chunk in body.split(f"\n{FILE_MARK}")[1:]:
        path, _, text = chunk.partition("\n")
        if "bytes truncated ...]" not in text:
            files[path] = text
    return files


def _fill(template: list[list[str]], match: re.Match) -> str:
    return "".join(match.group(text) if kind == "ref" else text for kind, text in template)


def _hits(spec: dict, files: dict[str, str], paths: list[str]) -> list[tuple[str, int, int, str]]:
    """(path, start, end, replacement) of every place the rule matches in `paths`."""
    pattern = re.compile(spec["pattern"])
    found = []
    for path in paths:
        text, at = files[path], 0
        while at <= len(text) and (match := pattern.search(text, at)):
            found.append((path, match.start("old"), match.end("old"), _fill(spec["new"], match)))
            at = match.start() + 1
    return found


def _splice(text: str, replacements: dict[tuple[int, int], str]) -> str:
    out, at = [], 0
    for (start, end), new in sorted(replacements.items()):
        if start < at:
            continue  # overlaps an earlier replacement
        out += [text[at:start], new]
        at = end
    return "".join(out) + text[at:]


def apply_rules(specs: list[dict], files: dict[str, str]) -> dict[str, str]:
    """path -> new text of every file the rules change; a rule that matches nothing in the files
    of its learned paths is tried on every file."""
    found: dict[str, dict[tuple[int, int], str]] = defaultdict(dict)
    for spec in specs:
        own = [path for path in sorted(files) if re.fullmatch(spec["paths"], path)]
        for path, start, end, new in _hits(spec, files, own) or _hits(spec, files, sorted(files)):
            found[path].setdefault((start, end), new)
    changed = {path: _splice(files[path], spans) for path, spans in found.items()}
    return {path: text for path, text in changed.items() if text != files[path]}


def _added(specs: list[dict], files: dict[str, str]) -> dict[str, str]:
    """path -> text of the files the script adds (made from their source when it is there)."""
    out = {}
    for spec in specs:
        source = next((p for p in sorted(files) if "source" in spec and re.fullmatch(spec["source"], p)), None)
        if source is None:
            out[spec["path"]] = spec["text"]
            continue
        text = apply_rules(spec["rules"], {source: files[source]}).get(source, files[source])
        out[source + spec["suffix"] if "suffix" in spec else spec["path"]] = text
    return out


def _rewrite(script: dict) -> list[str]:
    """Bash lines: scan every blob for the learned value patterns, then filter-repo them out."""
    spec = {"captures": script["captures"], "derive": script["derive"], "replaced": REPLACED}
    payload = base64.b64encode(json.dumps(spec).encode()).decode()
    program = base64.b64encode(SCAN.encode()).decode()
    return [
        f"printf %s {program} | base64 -d > ../.memoriser-scan.py",
        f'"$(command -v python3 || command -v python)" ../.memoriser-scan.py {payload} > ../.memoriser-replacements',
        "[ -s ../.memoriser-replacements ] && git filter-repo --quiet --force --replace-text ../.memoriser-replacements >/dev/null",
        "rm -f ../.memoriser-scan.py ../.memoriser-replacements",
    ]


def fix_command(script: dict, files: dict[str, str]) -> str:
    """One bash command: the learned edits, deletions and additions, a commit, the history rewrite."""
    lines = ["cd repo || exit 1"]
    lines += [agent.write_file(path, text) for path, text in sorted(apply_rules(script["rules"], files).items())]
    for path in sorted(p for p in files if any(re.fullmatch(d, p) for d in script["delete"])):
        lines.append(f"git rm -q --cached --ignore-unmatch {shlex.quote(path)}; rm -f {shlex.quote(path)}")
    lines += [agent.write_file(path, text) for path, text in sorted(_added(script["add"], files).items())]
    lines.append(f"git add -A && git commit -q -m {shlex.quote(FIX_MESSAGE)} || true")
    if script["rewrite"]:
        lines += _rewrite(script)
    return "\n".join(lines) + "\n"


def act(model: dict, prompt_text: str, workspace) -> int:
    """Play the learned script of the prompt's scenario on `workspace` (only its `bash` is used);
    returns the tool calls made."""
    script = model["scenarios"][recognise(model, prompt_text)]
    dumped = workspace.bash(DUMP)
    files = parse_dump(agent.bound(dumped.stdout + dumped.stderr))
    workspace.bash(fix_command(script, files))
    return 2


def play(model: dict, plan: RepoPlan, workspace) -> agent.Episode:
    """Act on the task's prompt alone, then score the workspace against the plan."""
    from redaction_pressure.audit.prompt import prompt
    from redaction_pressure.audit.rubric import score

    steps = act(model, prompt(plan).user, workspace)
    facts = workspace.facts(steps)
    result = score(plan, facts)
    return agent.Episode(steps, facts, result.total, result.detection, result.health)
