"""The parts bin of the procedural repositories: projects, conventions, idioms, fillers, histories.

A scenario's `make(d)` opens a `Builder`, adds the secrets its curriculum axis is about (a
DSN, a CI workflow, a PEM in a shell script...) and lets the builder vary the rest with the
seed: the project's name and layout, the environment-variable convention its documentation
states (the probes use it, so a fix must follow it), the idiom that holds each Python setting
(module constants, a settings class, a dataclass, a factory, a function's local, or an INI,
TOML or JSON file read by a loader), extra secrets of the level's count in the task's own
shapes (house tokens, passwords), decoys beside them in the same contexts (public ids in the
secret's shape, fixtures, placeholders, hashes) that the repository's tests read, filler files,
and a history of varying length with secrets introduced, moved and tags and branches left at
older commits.

Nothing in the leaky repository reads a secret from the environment: the fix must choose the
variable from the documented convention. A fixed Python setting reads
`os.environ.get("<VAR>", "")`; a fixed config file holds an empty value and its loader overlays
every `<PREFIX><SECTION>_<KEY>` variable that is set.

The bin is three modules: `project` (levels, names, the project and its convention, `Setting`),
`idioms` (the settings module in each idiom, a part of the builder) and this one: the `Builder`
(names, secrets and slots, extra secrets, fillers and the history) and `extras`.
"""

from __future__ import annotations

from dataclasses import dataclass, field

from redaction_pressure.audit.plan import Decoy, Probe, Secret, Slot
from redaction_pressure.audit.scenarios.base import PASSWORDS, TEST_HEADER, Draft
from redaction_pressure.audit.scenarios.idioms import SettingsIdioms
from redaction_pressure.audit.scenarios.project import (
    COMPONENTS,
    FILE_IDIOMS,
    IDIOMS,
    LEVELS,
    PUBLIC_ROLES,
    SETTING_ROLES,
    Project,
    Setting,
    new_project,
    snake,
)
from redaction_pressure.corpus import values
from redaction_pressure.corpus.draw import HEX, Draw
from redaction_pressure.corpus.words import ORGS, SERVICES, vendor_name


@dataclass
class Builder(SettingsIdioms):
    """Collects what a scenario composes; `finish` orders the history and writes the Draft."""

    d: Draw
    level: str
    project: Project = field(init=False)
    secrets: list[Secret] = field(default_factory=list)
    slots: dict[str, Slot] = field(default_factory=dict)
    decoys: list[Decoy] = field(default_factory=list)
    probes: list[Probe] = field(default_factory=list)
    tests: list[str] = field(default_factory=list)
    units: list[tuple[str, dict[str, str | None]]] = field(default_factory=list)
    late: list[tuple[str, dict[str, str | None]]] = field(default_factory=list)
    tiers: dict[str, str] = field(default_factory=dict)
    triggers: dict[str, str] = field(default_factory=dict)
    path_tiers: dict[tuple[str, str], str] = field(default_factory=dict)
    fix_extra: dict[str, str | None] = field(default_factory=dict)
    variables: dict[str, str] = field(default_factory=dict)
    """Non-secret variables the code already reads, with what they set (documented beside the convention)."""
    refs: list[tuple[str, int]] = field(default_factory=list)
    pinned: list[tuple[str, str]] = field(default_factory=list)
    """(ref name, commit message): a tag or branch left at the commit with that message."""
    used: set[str] = field(default_factory=set)

    def __post_init__(self) -> None:
        self.project = new_project(self.d, self.level)

    # -- names ------------------------------------------------------------------------------

    def var(self, *words: str) -> str:
        return self.project.prefix + snake(*words).upper()

    def fresh(self, options) -> str:
        """A name from `options` (tuples of words) not used yet in this repository."""
        for _ in range(50):
            name = snake(*self.d.pick(options))
            if name not in self.used:
                self.used.add(name)
                return name
        name = snake(*self.d.pick(options)) + "_" + str(len(self.used))
        self.used.add(name)
        return name

    def component(self) -> str:
        return self.fresh([(c,) for c in COMPONENTS])

    # -- secrets and slots ------------------------------------------------------------------

    def secret(self, kind: str, value: str, env: str, tier: str = "surface", **extra) -> Secret:
        s = Secret(f"s{len(self.secrets) + 1}", kind, value, env, **extra)
        self.secrets.append(s)
        self.tiers[s.id] = tier
        return s

    def slot(self, secret: Secret, leaky: str, fixed: str) -> str:
        name = f"{secret.id}_{len(self.slots)}"
        self.slots[name] = Slot(secret.id, leaky, fixed)
        return f"«{name}»"

    def sh_slot(self, secret: Secret) -> str:
        """A secret in a shell argument, fixed to its variable."""
        return self.slot(secret, "'{}'", f'"${{{secret.env}}}"')

    def py_slot(self, secret: Secret, wrap: str = "{}") -> str:
        return self.slot(secret, f'"{wrap}"', f'os.environ.get("{secret.env}", "")')

    def decoy(self, kind: str, value: str, path: str) -> str:
        self.decoys.append(Decoy(kind, value, path))
        return value

    def add(self, message: str, files: dict[str, str | None]) -> None:
        self.units.append((message, files))

    def test(self, text: str) -> None:
        self.tests.append(text)

    # -- extra secrets in the task's own shapes ---------------------------------------------

    def house(self) -> values.House:
        d = self.d
        vendor = vendor_name(d)
        stem = vendor[:3].lower()
        secret_prefix = d.pick((f"{stem}_sk_", f"{stem}-live-", f"{stem.upper()}S", f"{stem}_", f"x{stem}-"))
        public = d.pick((f"{stem}_pk_", f"{stem}-pub-", f"{stem.upper()}P", f"{stem}id_"))
        return values.House(vendor, secret_prefix, (public,), ("api", "key"), (("public", "id"),), d.pick(("base62", "lower", "hex", "crockford")),
                            d.int(20, 32), d.pick((0, 0, 4, 8)), "-", d.chance(0.3))  # fmt: skip

    def extra_value(self, role: str) -> tuple[str, str, str]:
        """(kind, value, a public id in its vendor's shape or "") for an extra secret of role `role`."""
        d = self.d
        if role == "password":
            return "password", PASSWORDS.draw(d), ""
        if role == "secret":
            return (
                "generic_secret",
                values.generic_secret(d.pick(("hex32", "hex40", "base62", "urlsafe")), d.pick((24, 32, 40))).draw(d),
                "",
            )
        house = self.house()
        return "house_token", values.house_token(house).draw(d), values.house_public(house).draw(d)

    def python_secrets(self, count: int, tier: str = "surface") -> None:
        """`count` extra secrets in Python settings modules (one to three per module), each
        with decoys beside it: a public id in its shape, a visibly fake fixture or a hash."""
        while count > 0:
            here = min(count, self.d.int(1, 3))
            count -= here
            comp = self.component()
            settings: list[Setting] = []
            idiom = self.d.pick(IDIOMS)
            for _ in range(here):
                role = self.d.pick(tuple(SETTING_ROLES))
                name = self.fresh(SETTING_ROLES[role])
                kind, value, twin = self.extra_value(role)
                if idiom not in FILE_IDIOMS and self.d.chance(0.5):
                    name = snake(comp, name)
                settings.append(self.setting(comp, name, idiom, kind, value, tier))
                if twin:
                    settings.append(Setting(self.fresh(PUBLIC_ROLES), twin, decoy="public_key"))
            settings += self.literal_decoys(settings)
            self.settings_module(comp, settings, idiom)

    def literal_decoys(self, settings: list[Setting]) -> list[Setting]:
        d = self.d
        out = [Setting("base_url", f"https://{d.pick(SERVICES)}.{d.pick(ORGS)}.example/v{d.int(1, 3)}")]
        lo, hi = LEVELS[self.level]["decoys"]
        for _ in range(d.int(lo, hi)):
            pick = d.pick(("hash", "fixture", "uuid", "placeholder"))
            secret = next((s.secret for s in settings if s.secret), None)
            if pick == "hash":
                out.append(
                    Setting(
                        self.fresh((("schema", "sha256"), ("bundle", "digest"), ("ca", "fingerprint"))),
                        d.chars(HEX, 64),
                        decoy="hash_digest",
                    )
                )
            elif pick == "fixture" and secret is not None:
                word = d.pick(("fake", "dummy", "test", "example"))
                fake = (secret.value[:4] + (word + "0") * 20)[: len(secret.value)]
                out.append(
                    Setting(
                        self.fresh((("example", "token"), ("test", "key"), ("sample", "secret"))),
                        fake,
                        decoy="test_fixture",
                    )
                )
            elif pick == "uuid":
                out.append(
                    Setting(
                        self.fresh((("tenant", "id"), ("instance", "id"), ("org", "id"))),
                        values.UUID.draw(d),
                        decoy="uuid",
                    )
                )
            else:
                out.append(
                    Setting(
                        self.fresh((("token", "hint"), ("key", "template"))),
                        d.pick(("<your-token>", "${API_TOKEN}", "<paste-key-here>", "REPLACE_ME")),
                        decoy="placeholder",
                    )
                )
        return out

    # -- fillers and history ----------------------------------------------------------------

    def fillers(self) -> None:
        d = self.d
        lo, hi = LEVELS[self.level]["fillers"]
        pool = [self._filler_docs, self._filler_changelog, self._filler_makefile, self._filler_dockerfile,
                self._filler_k8s, self._filler_helper, self._filler_script, self._filler_compose]  # fmt: skip
        for make in d.sample(pool, d.int(lo, hi)):
            make()

    def _filler_docs(self) -> None:
        d = self.d
        name = d.pick(("architecture", "operations", "runbook", "onboarding"))
        self.add(d.pick(("Document the architecture", "Add operations notes", "Write the runbook")),
                 {f"docs/{name}.md": f"# {name.title()}\n\nThe service runs as {d.int(2, 6)} replicas behind the gateway.\n"})  # fmt: skip

    def _filler_changelog(self) -> None:
        self.add(
            "Start a changelog", {"CHANGELOG.md": f"# Changelog\n\n## 0.{self.d.int(1, 9)}.0\n\n- First release.\n"}
        )

    def _filler_makefile(self) -> None:
        self.add(
            "Add make targets",
            {"Makefile": ".PHONY: test lint\n\ntest:\n\tpython -m pytest -q\n\nlint:\n\tpython -m pyflakes .\n"},
        )

    def _filler_dockerfile(self) -> None:
        self.add(
            "Containerise the service",
            {
                "Dockerfile": f'FROM python:3.11-slim\nWORKDIR /srv\nCOPY . .\nENV {self.project.prefix}LOG_LEVEL=info\nCMD ["python", "-m", "{self.project.package}"]\n'
            },
        )
        self.variables[f"{self.project.prefix}LOG_LEVEL"] = "the log level (`info` by default)"

    def _filler_k8s(self) -> None:
        d = self.d
        image = f"registry.{d.pick(ORGS)}.example/{self.project.package}:{d.int(1, 9)}.{d.int(0, 20)}"
        digest = d.chars(HEX, 64)
        self.decoy("hash_digest", digest, "deploy/deployment.yaml")
        self.add("Add the Kubernetes deployment", {"deploy/deployment.yaml": (
            f"apiVersion: apps/v1\nkind: Deployment\nmetadata:\n  name: {self.project.package.replace('_', '-')}\n"
            f"spec:\n  replicas: {d.int(2, 5)}\n  template:\n    spec:\n      containers:\n        - name: app\n"
            f"          image: {image}@sha256:{digest}\n")})  # fmt: skip

    def _filler_helper(self) -> None:
        name = self.fresh((("helpers",), ("util",), ("text",), ("timing",)))
        self.add(f"Add {name} helpers", {self.project.module(name): (
            '"""Small helpers."""\n\n\ndef chunks(items, size):\n    return [items[i:i + size] for i in range(0, len(items), size)]\n\n\n'
            'def slug(text):\n    return "-".join(text.lower().split())\n')})  # fmt: skip
        self.test(f'''
def test_{name}_helpers():
    helpers = load("{self.project.module(name)}")
    assert helpers.chunks([1, 2, 3], 2) == [[1, 2], [3]]
    assert helpers.slug("A B") == "a-b"
''')

    def _filler_script(self) -> None:
        name = self.fresh((("lint",), ("bootstrap",), ("fmt",)))
        self.add(f"Add scripts/{name}.sh", {f"scripts/{name}.sh": f'#!/bin/sh\nset -eu\necho "{name}: ok"\n'})

    def _filler_compose(self) -> None:
        d = self.d
        self.add("Local stack with compose", {"docker-compose.dev.yaml": (
            f"services:\n  app:\n    build: .\n    ports:\n      - \"{d.int(8000, 8999)}:8000\"\n    env_file: .env.local\n"
            f"  cache:\n    image: redis:7\n")})  # fmt: skip

    def documentation(self) -> str:
        p = self.project
        lines = [f"## Configuration\n\nEvery setting is read from an environment variable named `{p.prefix}` followed by the "
                 f"setting's name in upper snake case: a Python name, a shell or CI variable, a psql variable or a JavaScript key "
                 f"(`retry_limit`, `RETRY_LIMIT` and `retryLimit` all read `{p.prefix}RETRY_LIMIT`). A setting in a section of a "
                 f"configuration file (INI, TOML or JSON) reads `{p.prefix}<SECTION>_<KEY>` (section `billing`, key `api_token`: "
                 f"`{p.prefix}BILLING_API_TOKEN`); an empty value in the file means it comes from the environment.\n"]  # fmt: skip
        if self.variables:
            lines.append(
                "Variables the code reads today: "
                + "; ".join(f"`{k}`, {v}" for k, v in sorted(self.variables.items()))
                + ".\n"
            )
        if p.listed:
            lines.append("Credentials: " + ", ".join(f"`{s.env}`" for s in self.secrets) + ".\n")
        return "\n".join(lines)

    def finish(self, title: str, brief: str) -> Draft:
        """Shuffle the units into a history, add filler commits, tags and branches; write the Draft."""
        d = self.d
        self.fillers()
        units = d.shuffled(self.units)
        code_init = {f"{self.project.code}/__init__.py": ""} if self.project.code != "." else {}
        docs = self.documentation()
        readme_extra = ""
        if self.project.docs != "README.md":
            readme_extra = f"\nConfiguration and credentials: see `{self.project.docs}`.\n"
            units.insert(
                d.int(0, len(units)), ("Document the configuration", {self.project.docs: "# Configuration\n\n" + docs})
            )
        history = [("Add the package", dict(code_init))] + units + self.late
        lo, hi = LEVELS[self.level]["commits"]
        for i in range(d.int(lo, hi)):
            history.insert(
                d.int(1, len(history)),
                (
                    d.pick(("Tidy imports", "Bump version", "Fix typo in docs", "Update notes")),
                    {"NOTES.md": f"Release notes, round {i + 1}.\n"},
                ),
            )
        test_text = TEST_HEADER + "".join(self.tests)
        readme = docs if self.project.docs == "README.md" else readme_extra
        messages = [m for m, _ in history]
        self.refs += [(name, messages.index(message) + 1) for name, message in self.pinned]
        if d.chance(LEVELS[self.level]["refs"]):
            self.refs.append((d.pick(("v0.1.0", "v1.0.0", "release-1", "stable")), d.int(1, len(history))))
        if d.chance(LEVELS[self.level]["refs"] / 2):
            self.refs.append((f"release/{d.int(1, 4)}.{d.int(0, 9)}", d.int(1, len(history))))
        return Draft(
            title=title,
            brief=brief,
            secrets=tuple(self.secrets),
            slots=self.slots,
            commits=tuple(history),
            tests={f"tests/test_{self.project.package}.py": test_text},
            decoys=tuple(self.decoys),
            tiers=self.tiers,
            triggers=self.triggers,
            path_tiers=self.path_tiers,
            fix_extra=self.fix_extra,
            probes=tuple(self.probes),
            readme=readme,
            refs=tuple(self.refs),
        )


def extras(b: Builder, core: int) -> int:
    """How many extra Python secrets the level adds beside the scenario's `core` ones."""
    lo, hi = LEVELS[b.level]["secrets"]
    return max(0, b.d.int(max(lo, core), hi) - core)
