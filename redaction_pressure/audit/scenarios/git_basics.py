"""Scenario git_basics (easy): a tracked dotenv file, in the working tree and in history."""

from __future__ import annotations

from redaction_pressure.audit.plan import Probe
from redaction_pressure.audit.scenarios.base import GITIGNORE, PASSWORDS, Draft, Scenario
from redaction_pressure.audit.scenarios.parts import Builder, extras
from redaction_pressure.corpus import values
from redaction_pressure.corpus.draw import Draw

KINDS = (
    ("stripe_key", ("stripe", "secret", "key"), lambda d: values.stripe_key("sk_live_").draw(d), "<your-stripe-key>"),
    ("generic_secret", ("session", "secret"), lambda d: values.generic_secret("hex64", 32).draw(d), "<random-64-hex>"),
    ("password", ("db", "password"), lambda d: PASSWORDS.draw(d), "<db-password>"),
    ("slack_token", ("slack", "bot", "token"), lambda d: values.slack_token("xoxb-").draw(d), "<slack-bot-token>"),
    ("github_token", ("github", "token"), lambda d: values.github_token("ghp_").draw(d), "<github-token>"),
)


def make(d: Draw) -> Draft:
    b = Builder(d, "easy")
    dotenv = d.pick((".env", ".env.local", ".env.production", "config/.env"))
    chosen = d.sample(KINDS, d.int(1, 2))
    lines = [f"{b.var('app', 'name')}={b.project.name}"]
    example = list(lines)
    keys = []
    for kind, words, draw, hint in chosen:
        s = b.secret(kind, draw(d), b.var(*words), history=True)
        lines.append(f"{s.env}={b.slot(s, '{}', hint)}")
        example.append(f"{s.env}={hint}")
        keys.append((words, s.env))
    level = b.var("log", "level")
    lines.append(f"{level}=info")
    example.append(f"{level}=info")
    b.variables[level] = "the log level"
    loader = b.project.module(d.pick(("settings", "env", "config")))
    fn = d.pick(("load_settings", "settings", "environment"))
    body = "".join(f'        "{"_".join(w)}": os.environ.get("{env}", ""),\n' for w, env in keys)
    b.add(
        d.pick(("Add settings loader and local env file", "Local settings", "Read settings from the environment")),
        {
            loader: f'"""Settings from the process environment (the env file is for local shells)."""\n\nimport os\n\n\ndef {fn}():\n    return {{\n{body}        "log_level": os.environ.get("{level}", "info"),\n    }}\n',
            dotenv: "\n".join(lines) + "\n",
        },
    )
    b.probes.append(Probe("settings", "py", loader, f"{fn}()"))
    b.test(f'''
def test_settings_default_log_level(monkeypatch):
    monkeypatch.delenv("{level}", raising=False)
    assert load("{loader}").{fn}()["log_level"] == "info"
''')
    hint = chosen[0][3]
    b.decoy("placeholder", hint, "docs/config.md")
    b.add(
        "Explain the local env file",
        {"docs/config.md": f"Copy `{dotenv}.example` to `{dotenv}` and fill in `{hint}`.\n"},
    )
    b.fix_extra.update(
        {dotenv: None, dotenv + ".example": "\n".join(example) + "\n", ".gitignore": GITIGNORE + dotenv + "\n"}
    )
    if d.chance(0.5):
        # The first secret again, pasted into the compose file's environment.
        s = b.secrets[0]
        b.add("Run the app with compose", {"compose.yaml": (
            f"services:\n  web:\n    build: .\n    environment:\n      {s.env}: {b.slot(s, '{}', '${' + s.env + '}')}\n"
            f"      {level}: info\n")})  # fmt: skip
    b.python_secrets(extras(b, len(chosen)))
    return b.finish(
        b.project.name, "A web app that reads its settings from the environment, with an env file for local runs."
    )


SCENARIO = Scenario("git_basics", "easy", make)
