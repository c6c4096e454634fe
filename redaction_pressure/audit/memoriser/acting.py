"""The memoriser at play: only the prompt and the workspace, and the learned model.

`act(model, prompt, workspace)` recognises the scenario from the prompt, dumps every tracked
file (`DUMP`, one bash call) and applies the scenario's script in another: files written from
base64 payloads, a commit, then, when the script rewrites history, the value scan (the runtime
program `MEMORISER_SCAN`, in the workspace's own python3) feeding `git filter-repo
--replace-text`. `play` scores it like the scripted agent.
"""

from __future__ import annotations

import base64
import json
import math
import re
import shlex
from collections import Counter, defaultdict

from redaction_pressure.audit import agent, programs
from redaction_pressure.audit.memoriser.learning import words_of
from redaction_pressure.audit.plan import RepoPlan

FIX_MESSAGE = programs.FIX_MESSAGE
REPLACED = agent.REPLACED

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
SCAN = programs.MEMORISER_SCAN
"""Run in the workspace's repository: every blob's matches of the learned value patterns (and
what the values derive, e.g. a base64 token's decoded credential), as filter-repo rules."""


# -- acting: only the prompt and the workspace ----------------------------------------------------


def recognise(model: dict, prompt_text: str) -> str:
    """The scenario whose train prompts share the most telling words with this prompt."""
    scenarios = model["scenarios"]
    spread: Counter[str] = Counter()
    for script in scenarios.values():
        spread.update(script["prompt"])
    words = words_of(prompt_text)

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
