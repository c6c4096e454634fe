"""The 13 secrets-audit scenarios, one module each: a family of leaky repositories composed per seed.

`build(name, seed)` turns a scenario's `Draft` into a checked `RepoPlan`. To add a
scenario, copy one of these modules (`make(d)` adds its core secrets to a `parts.Builder`
and returns `builder.finish(...)`, `SCENARIO` names it and its difficulty; `base.py` holds
the shared skeleton, `parts.py` the parts bin) and list it in `SCENARIOS` below. The
order of `SCENARIOS` is part of the splits (dev task i plays scenario i % 13): append, never
reorder. A scenario marks the secrets whose history is its point (`history=True`); `build` in
history mode `all` (the default) marks every secret, in `seed` mode keeps the scenario's marks.
"""

from __future__ import annotations

import dataclasses
import hashlib
import random

from redaction_pressure.audit.plan import (
    HISTORY_ALL,
    HISTORY_MODES,
    Commit,
    PlanError,
    RepoPlan,
    check,
    locate,
    render,
)
from redaction_pressure.audit.scenarios import (
    ci_pipeline,
    cloud_provisioning,
    database_layer,
    db_migration,
    deep_logic,
    deployment,
    frontend_config,
    git_basics,
    legacy_audit,
    microservices,
    noise_filtering,
    platform,
    system_logging,
    utility_module,
)
from redaction_pressure.audit.scenarios.base import GITIGNORE, PYTEST_INI, Scenario
from redaction_pressure.corpus.draw import Draw
from redaction_pressure.corpus.words import ORGS, SERVICES

DOMAIN = "redaction-pressure/secrets-audit/v1"
AUDIT_VERSION = "4"
"""Bump whenever any scenario's generated repository changes."""

SCENARIOS: list[Scenario] = [
    module.SCENARIO
    for module in (
        cloud_provisioning,
        database_layer,
        frontend_config,
        git_basics,
        system_logging,
        utility_module,
        ci_pipeline,
        noise_filtering,
        db_migration,
        deployment,
        microservices,
        deep_logic,
        legacy_audit,
    )
]
EXPERT_SCENARIOS: list[Scenario] = [platform.SCENARIO]
"""The expert level's scenarios (`splits.EXPERT`); append, never reorder."""
SCENARIO_NAMES = tuple(s.name for s in SCENARIOS)


def draw_for(name: str, seed: int) -> Draw:
    material = "\x00".join([DOMAIN, name, str(seed)]).encode()
    return Draw(random.Random(int.from_bytes(hashlib.sha256(material).digest(), "big")))


def by_name(name: str) -> Scenario:
    for s in (*SCENARIOS, *EXPERT_SCENARIOS):
        if s.name == name:
            return s
    raise PlanError(f"unknown scenario {name!r}; choose one of {', '.join(s.name for s in SCENARIOS)}")


def build(name: str, seed: int, history: str = HISTORY_ALL) -> RepoPlan:
    """The checked repository plan of scenario `name` for `seed` in history mode `history` (deterministic)."""
    if history not in HISTORY_MODES:
        raise PlanError(f"unknown history mode {history!r}; choose one of {', '.join(HISTORY_MODES)}")
    chosen = by_name(name)
    draft = chosen.make(draw_for(name, seed))
    secrets = draft.secrets
    if history == HISTORY_ALL:
        secrets = tuple(dataclasses.replace(s, history=True) for s in secrets)
    naming = draw_for(name + "/codename", seed)
    codename = f"{naming.pick(ORGS)}-{naming.pick(SERVICES)}-{naming.digits(3)}"
    values_by_id = {s.id: s.value for s in secrets}
    tests = {"pytest.ini": PYTEST_INI, **draft.tests}
    readme = f"# {draft.title}\n\n{draft.brief}\n\nRun the tests with `python -m pytest`.\n\n{draft.readme}"
    commits = [
        Commit(
            "Initial commit: project skeleton and tests",
            (("README.md", readme), (".gitignore", GITIGNORE), *tests.items()),
        )
    ]
    templates: dict[str, str] = {}
    for message, files in draft.commits:
        rendered: list[tuple[str, str | None]] = []
        for path, template in files.items():
            if template is None:
                templates.pop(path, None)
                rendered.append((path, None))
            else:
                templates[path] = template
                rendered.append((path, render(template, draft.slots, values_by_id, fixed=False)))
        commits.append(Commit(message, tuple(rendered)))
    fix: dict[str, str | None] = {}
    for path, template in templates.items():
        leaky = render(template, draft.slots, values_by_id, fixed=False)
        fixed = render(template, draft.slots, values_by_id, fixed=True)
        if fixed != leaky:
            fix[path] = fixed
    fix.update(draft.fix_extra)
    commit_tuple = tuple(commits)
    stashes = tuple(
        (
            message,
            tuple((path, render(template, draft.slots, values_by_id, fixed=False)) for path, template in files.items()),
        )
        for message, files in draft.stashes
    )
    notes = tuple((upto + 1, text) for upto, text in draft.notes)
    beyond = tuple(dict(files) for _, files in stashes) + tuple({"refs/notes/commits": text} for _, text in notes)
    plan = RepoPlan(
        scenario=name,
        difficulty=chosen.difficulty,
        seed=seed,
        title=f"{codename} ({draft.title})",
        brief=draft.brief,
        commits=commit_tuple,
        secrets=secrets,
        findings=locate(name, commit_tuple, secrets, draft.tiers, draft.triggers, draft.path_tiers, beyond),
        decoys=draft.decoys,
        tests=tuple(tests.items()),
        fix=tuple(sorted(fix.items())),
        probes=draft.probes,
        refs=tuple((name, upto + 1) for name, upto in draft.refs),
        tags=tuple((name, upto + 1, message) for name, upto, message in draft.tags),
        notes=notes,
        stashes=stashes,
        history_mode=history,
    )
    check(plan)
    return plan
