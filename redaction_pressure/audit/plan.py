"""A repository plan: the files, commits, secrets and findings of one secrets-audit task.

A scenario writes its files as templates with slots (`«name»`). Each slot belongs to one
secret and renders two ways: *leaky* (the secret in place, how the repository starts) and
*fixed* (an environment lookup or a placeholder, how the oracle leaves it). `build_plan`
renders the commits, then locates every secret on its own: a finding is one (secret,
file) pair with the line where the secret first occurs, in the working tree at HEAD, or,
for a secret that only history holds, in the first commit that added it.

A plan is built for one history mode (`history_mode`): in `all` (the default) every secret is a
`history` secret, counted while any git object holds it; in `seed` only the secrets the scenario
marks (the seed's curriculum, where history was the point of two scenarios). Every consumer
(grading, the gold fix, the tools, the baselines) reads the mode off the plan's secrets.

Invariants (checked by `build_plan`, tests pin them): every commit changes some file other
than a secret's value, so rewriting secrets out of history never empties a commit (and so
never drops a commit message); no secret occurs in a test file, a commit message or a decoy;
every secret is found at least once; in `all` mode every secret is a history secret.
"""

from __future__ import annotations

from dataclasses import dataclass, field

TIERS = ("surface", "shallow", "deep", "cascading")
DIFFICULTIES = {"easy": 10, "medium": 20, "hard": 30, "expert": 40}
"""Difficulty -> step budget."""
OUTPUT_CAPS = {"expert": 8_000}
"""Difficulty -> characters of each tool result the agent reads (stated in the prompt, enforced by every
harness: the audit tools, the bash results the taskset's interceptor clips, `play`); unlisted: the
tools' own limit (`toolcalls.MAX_OUTPUT`)."""
HISTORY_ALL = "all"
"""Every secret counts while any git object holds it (a committed secret leaks until every object is clean)."""
HISTORY_SEED = "seed"
"""Only the secrets the scenario marks count in git objects (the seed's curriculum)."""
HISTORY_MODES = (HISTORY_ALL, HISTORY_SEED)


class PlanError(ValueError):
    """A scenario that breaks a plan invariant; the message names the scenario."""


@dataclass(frozen=True)
class Slot:
    """Where a secret sits in a template: its leaky text (`{}` is the value) and its fixed text."""

    secret: str
    leaky: str
    fixed: str


@dataclass(frozen=True)
class Secret:
    """One leaked value. `history` secrets also count while any git object holds them."""

    id: str
    kind: str
    value: str = field(repr=False)
    env: str
    """The environment variable a fix reads the value from."""
    history: bool = False
    """Counted in git objects too: every secret in `all` mode, the scenario's mark in `seed` mode."""
    also: tuple[str, ...] = field(default=(), repr=False)
    """Other exact strings that leak it (a base64 token's decoded credential, a key's body lines)."""
    canary: str = ""
    """How the probes fill `env` with a fresh random value (`probes.canary_value`): "" for the
    value alone, `basic:USER` for base64 of `USER:value`, or a template whose `{}` is the value
    (a DSN around a password)."""


@dataclass(frozen=True)
class Probe:
    """An entry point a user of the repository exercises; the grader compares what it shows on the
    agent's repository with what it shows on the gold-fixed one (see `probes.py`).

    kind `py`: `call`, a Python expression evaluated in the namespace of the module at `target`
    (loaded fresh by path, with `os` at hand); `sh`: the script at `target` run by bash with the
    commands it calls stubbed; `workflow`: the CI workflow at `target` rendered (each step's
    effective environment and command, secrets filled in); `js`: the object literal exported as
    `call` from the module at `target`, with `process.env.X` filled in."""

    id: str
    kind: str
    target: str
    call: str = ""


@dataclass(frozen=True)
class Decoy:
    kind: str
    value: str
    path: str


@dataclass(frozen=True)
class Finding:
    """What the agent is told (once visible): where, which kind, which tier; never the value."""

    id: str
    secret: str
    path: str
    line: int
    kind: str
    tier: str
    trigger: str | None = None
    """For cascading findings: the secret whose fix reveals this one."""
    in_history_only: bool = False


@dataclass(frozen=True)
class Commit:
    message: str
    files: tuple[tuple[str, str | None], ...]
    """(path, text) in order; None deletes the path."""


@dataclass(frozen=True)
class RepoPlan:
    scenario: str
    difficulty: str
    seed: int
    title: str
    brief: str
    """One sentence for the prompt: what this repository is."""
    commits: tuple[Commit, ...]
    secrets: tuple[Secret, ...] = field(repr=False)
    findings: tuple[Finding, ...]
    decoys: tuple[Decoy, ...] = field(repr=False)
    tests: tuple[tuple[str, str], ...] = field(repr=False)
    """The pristine test files (path, text); health runs exactly these."""
    fix: tuple[tuple[str, str | None], ...] = field(repr=False)
    """The oracle's working-tree changes (path, text or None to delete)."""
    probes: tuple[Probe, ...] = ()
    """The entry points the grader exercises with canary values (see `probes.py`)."""
    refs: tuple[tuple[str, int], ...] = ()
    """Tags and branches left at older commits: (name, how many commits it holds); a name with a
    `/` is a branch, any other a lightweight tag. `main` holds every commit."""
    tags: tuple[tuple[str, int, str], ...] = ()
    """Annotated tags: (name, how many commits it holds, message). A message may hold a secret (a
    token pasted into release notes): only a rewrite of tag messages removes it."""
    notes: tuple[tuple[int, str], ...] = ()
    """Git notes (`refs/notes/commits`): (how many commits the noted commit's history holds, the note's text).
    A note may hold a secret that no branch holds."""
    stashes: tuple[tuple[str, tuple[tuple[str, str], ...]], ...] = ()
    """Stash entries made on top of `main` (`refs/stash`, oldest first): (message, files written over HEAD).
    A stash may hold a secret that no branch holds."""
    history_mode: str = HISTORY_ALL
    """The history mode the plan was built for (`HISTORY_MODES`); its secrets' `history` flags follow it."""

    @property
    def budget(self) -> int:
        return DIFFICULTIES[self.difficulty]

    @property
    def output_cap(self) -> int | None:
        """Characters of each tool result the agent reads, where the level states a cap."""
        return OUTPUT_CAPS.get(self.difficulty)

    def tree(self, upto: int | None = None) -> dict[str, str]:
        """The file map after the first `upto` commits (all by default)."""
        files: dict[str, str] = {}
        for commit in self.commits[:upto]:
            for path, text in commit.files:
                if text is None:
                    files.pop(path, None)
                else:
                    files[path] = text
        return files

    def fixed_tree(self) -> dict[str, str]:
        files = self.tree()
        for path, text in self.fix:
            if text is None:
                files.pop(path, None)
            else:
                files[path] = text
        return files

    def secret(self, secret_id: str) -> Secret:
        return next(s for s in self.secrets if s.id == secret_id)

    @property
    def history_secrets(self) -> tuple[Secret, ...]:
        return tuple(s for s in self.secrets if s.history)


def render(template: str, slots: dict[str, Slot], values: dict[str, str], fixed: bool) -> str:
    """Fill every `«name»` of `template`: the fixed text, or the leaky text around the secret."""
    out = template
    for name, slot in slots.items():
        marker = f"«{name}»"
        if marker in out:
            text = slot.fixed if fixed else slot.leaky.replace("{}", values[slot.secret])
            out = out.replace(marker, text)
    if "«" in out:
        start = out.index("«")
        raise PlanError(f"unknown slot {out[start : out.index('»', start) + 1]}")
    return out


def _first_line(text: str, needle: str) -> int | None:
    at = text.find(needle)
    return None if at < 0 else text.count("\n", 0, at) + 1


def _first_form(text: str, forms: tuple[str, ...]) -> int | None:
    """The first line holding any of a secret's forms (its value, then the strings `also` lists)."""
    lines = [line for form in forms if (line := _first_line(text, form)) is not None]
    return min(lines) if lines else None


def locate(
    scenario: str,
    commits: tuple[Commit, ...],
    secrets: tuple[Secret, ...],
    tiers: dict[str, str],
    triggers: dict[str, str],
    path_tiers: dict[tuple[str, str], str],
    beyond: tuple[dict[str, str], ...] = (),
) -> tuple[Finding, ...]:
    """One finding per (secret, file) holding it (its value or a form `also` lists) at HEAD, else per file
    of the commit that added it, else per file of the first of `beyond` that holds it (what refs
    outside the branches hold: a stash's files, a note as `refs/notes/commits`)."""
    head: dict[str, str] = {}
    history: list[dict[str, str]] = []
    for commit in commits:
        for path, text in commit.files:
            if text is None:
                head.pop(path, None)
            else:
                head[path] = text
        history.append(dict(head))
    history += beyond
    findings: list[Finding] = []
    for secret in secrets:
        forms = (secret.value, *secret.also)
        places = [(path, line) for path in sorted(head) if (line := _first_form(head[path], forms)) is not None]
        only_history = not places
        if only_history:
            for snapshot in history:
                places = [(p, line) for p in sorted(snapshot) if (line := _first_form(snapshot[p], forms)) is not None]
                if places:
                    break
        if not places:
            raise PlanError(f"scenario {scenario}: secret {secret.id} occurs in no file")
        for path, line in places:
            tier = path_tiers.get((secret.id, path), tiers.get(secret.id, "surface"))
            if tier not in TIERS:
                raise PlanError(f"scenario {scenario}: unknown tier {tier!r}")
            trigger = triggers.get(secret.id) if tier == "cascading" else None
            if tier == "cascading" and trigger is None:
                raise PlanError(f"scenario {scenario}: cascading secret {secret.id} has no trigger")
            findings.append(
                Finding(f"f{len(findings) + 1}", secret.id, path, line, secret.kind, tier, trigger, only_history)
            )
    return tuple(findings)


def check(plan: RepoPlan) -> None:
    """Raise `PlanError` unless the plan keeps the invariants of the module docstring."""
    name = plan.scenario
    if plan.history_mode not in HISTORY_MODES:
        raise PlanError(f"scenario {name}: unknown history mode {plan.history_mode!r}")
    if plan.history_mode == HISTORY_ALL and not all(s.history for s in plan.secrets):
        raise PlanError(f"scenario {name}: in history mode all, every secret counts in history")
    if len(plan.commits) < 2:
        raise PlanError(f"scenario {name}: a history needs at least two commits")
    values = [v for s in plan.secrets for v in (s.value, *s.also)]
    for path, text in plan.tests:
        if any(v in text for v in values):
            raise PlanError(f"scenario {name}: test file {path} holds a secret")
    for commit in plan.commits:
        if any(v in commit.message for v in values):
            raise PlanError(f"scenario {name}: a commit message holds a secret")
        scrubbed = [(p, None if t is None else _scrub(t, values)) for p, t in commit.files]
        if all(t is not None and t == _scrub(_previous(plan, commit, p), values) for p, t in scrubbed):
            raise PlanError(f"scenario {name}: commit {commit.message!r} changes only secret values")
    for decoy in plan.decoys:
        if any(v in decoy.value or decoy.value in v for v in values):
            raise PlanError(f"scenario {name}: decoy {decoy.kind} overlaps a secret")
    fixed = plan.fixed_tree()
    for path, text in fixed.items():
        if any(v in text for v in values):
            raise PlanError(f"scenario {name}: the fix leaves a secret in {path}")


def _scrub(text: str | None, values: list[str]) -> str | None:
    if text is None:
        return None
    for value in values:
        text = text.replace(value, "***REMOVED***")
    return text


def _previous(plan: RepoPlan, commit: Commit, path: str) -> str | None:
    index = plan.commits.index(commit)
    return plan.tree(index).get(path)


def plan_to_json(plan: RepoPlan) -> dict:
    """A JSON-able dict of the whole plan (secret values included: it stays off traces)."""
    from dataclasses import asdict

    data = asdict(plan)
    if not data["tags"]:
        del data["tags"]  # plans without annotated tags keep the shape (and digests) they had before tags existed
    for key in ("notes", "stashes"):
        if not data[key]:
            del data[key]  # likewise for plans without notes or stashes
    return data


def plan_from_json(data: dict) -> RepoPlan:
    return RepoPlan(
        scenario=data["scenario"],
        difficulty=data["difficulty"],
        seed=data["seed"],
        title=data["title"],
        brief=data["brief"],
        commits=tuple(Commit(c["message"], tuple((p, t) for p, t in c["files"])) for c in data["commits"]),
        secrets=tuple(Secret(**{**s, "also": tuple(s["also"])}) for s in data["secrets"]),
        findings=tuple(Finding(**f) for f in data["findings"]),
        decoys=tuple(Decoy(**d) for d in data["decoys"]),
        tests=tuple((p, t) for p, t in data["tests"]),
        fix=tuple((p, t) for p, t in data["fix"]),
        probes=tuple(Probe(**pr) for pr in data.get("probes", ())),
        refs=tuple((name, upto) for name, upto in data.get("refs", ())),
        tags=tuple((name, upto, message) for name, upto, message in data.get("tags", ())),
        notes=tuple((upto, text) for upto, text in data.get("notes", ())),
        stashes=tuple((message, tuple((p, t) for p, t in files)) for message, files in data.get("stashes", ())),
        history_mode=data.get("history_mode", HISTORY_ALL),
    )


def tools_plan_json(plan: RepoPlan) -> dict:
    """What the colocated tools need of a plan: findings, tests, budget; no seed, no fix, no commits,
    no secret values (the tools recognise a secret by salted digests of its windows instead)."""
    data = plan_to_json(plan)
    data.update(seed=0, commits=[], decoys=[], fix=[], probes=[], refs=[], tags=[])
    for key in ("notes", "stashes"):
        data.pop(key, None)
    data["secrets"] = [{**s, "value": "", "also": []} for s in data["secrets"]]
    return data
