"""CI workflows (GitHub Actions or GitLab CI) that export or print a secret.

Dialect: the CI system, the quote of env values, 1 to 3 leaking entries (a literal env
value, or a command that embeds the token: a curl header, an `.npmrc` line, a
`docker login`), and look-alikes: the same variables taken from the CI's secret store
(`${{ secrets.X }}`, `$CI_X`), pinned action and checkout commits, settings and fixtures
under the same names. Records parse as YAML; env secrets are exact values, command
secrets sit inside a literal block.
"""

from __future__ import annotations

from redaction_pressure.corpus import values as v
from redaction_pressure.corpus.dialect import Builder, Family, FamilyDialect
from redaction_pressure.corpus.document import Writer
from redaction_pressure.corpus.families.common import ALLOW_MARKERS, cluster, kinds, note, yaml_quote

KINDS = (
    ("npm_token", "github_token", "gitlab_pat", "github_pat", "generic_secret", "slack_token", "password")
    + ("house_token",) * 8
    + ("generic_secret", "jwt")
)
COMMANDS = (
    ("curl", 'curl -sf -H "Authorization: Bearer {v}" https://api.{domain}/v1/releases'),
    ("npmrc", 'echo "//registry.npmjs.org/:_authToken={v}" > .npmrc'),
    ("docker", "docker login -u {user} -p '{v}' registry.{domain}"),
    ("header", 'curl -sf -H "X-Api-Key: {v}" -d @build/manifest.json https://deploy.{domain}/hooks'),
)
ACTIONS = ("actions/checkout", "actions/setup-node", "actions/cache", "docker/login-action", "actions/upload-artifact")


def draw(b: Builder) -> FamilyDialect:
    d = b.d
    system = d.pick(("github", "gitlab"))
    layout = {
        "system": system,
        "quote": d.pick(("", '"', "'")),
        "job": d.pick(("release", "publish", "deploy", "build")),
        "pragma": d.chance(0.6),
        "marker": d.pick(ALLOW_MARKERS),
    }
    store = "${{{{ secrets.{name} }}}}" if system == "github" else "${{CI_{name}}}"
    for kind in kinds(b, KINDS, 1, 3):
        if kind == "house_token" or d.chance(0.5):
            for entry in cluster(
                b,
                kind,
                "upper_snake",
                form="env",
                looks=("placeholder", "setting", "fixture", "reference", "allowlisted"),
                placeholder=store,
            ):
                entry.words["quote"] = yaml_quote(entry.slots[0].fmt.charset, layout["quote"])
        else:
            name, template = d.pick(COMMANDS)
            b.entry(
                "run",
                (b.secret_format(kind), True),
                command=template.replace("{domain}", b.world.domain).replace("{user}", d.pick(b.world.users)),
            )
    for _ in range(d.int(1, 2)):
        b.entry("pin", (v.COMMIT_SHA, False), action=d.pick(ACTIONS))
    return b.done(layout, keep=0.65)


def write(wr: Writer) -> None:
    d, layout = wr.d, wr.layout
    envs = [e for e in wr.entries if e.form == "env"]
    runs = [e for e in wr.entries if e.form == "run"]
    pins = [e for e in wr.entries if e.form == "pin"]
    job = layout["job"]
    if layout["system"] == "github":
        wr.line(
            f"name: {job}\non:\n  push:\n    branches: [main]\n  workflow_dispatch: {{}}\n\njobs:\n  {job}:\n    runs-on: ubuntu-latest"
        )
        if envs:
            wr.line("    env:")
            for entry in d.shuffled(envs):
                q = entry.words.get("quote", "")
                wr.line(f"      {entry['key']}: {q}", wr.fresh(entry.slots[0]), q + note(entry, layout))
        wr.line("    steps:")
        for entry in pins:
            wr.line(f"      - uses: {entry['action']}@", wr.fresh(entry.slots[0]))
        wr.line(f"      - run: npm ci && npm run {d.pick(('build', 'test', 'lint'))}")
        for entry in runs:
            before, after = entry["command"].split("{v}")
            wr.line("      - run: |\n          ", before, wr.fresh(entry.slots[0]), after)
    else:
        wr.line(f"stages: [build, {job}]\n")
        if envs:
            wr.line("variables:")
            for entry in d.shuffled(envs):
                q = entry.words.get("quote", "")
                wr.line(f"  {entry['key']}: {q}", wr.fresh(entry.slots[0]), q + note(entry, layout))
            wr.line()
        wr.line(f"{job}:\n  stage: {job}\n  image: node:{d.pick((18, 20, 22))}\n  script:")
        for entry in pins:
            wr.line("    - git checkout ", wr.fresh(entry.slots[0]))
        wr.line(f"    - npm ci && npm run {d.pick(('build', 'test'))}")
        for entry in runs:
            before, after = entry["command"].split("{v}")
            wr.line("    - |\n      ", before, wr.fresh(entry.slots[0]), after)
        wr.line(f"  only:\n    - {d.pick(('main', 'tags'))}")


FAMILY = Family("ci_workflow", draw, write, syntax="yaml", filename="ci.yml")
