"""Scenario deployment (hard): a private key in a shell heredoc; a registry password cascades from it."""

from __future__ import annotations

from redaction_pressure.audit.plan import Probe
from redaction_pressure.audit.scenarios.base import PASSWORDS, Draft, Scenario
from redaction_pressure.audit.scenarios.parts import Builder, extras
from redaction_pressure.corpus import keys
from redaction_pressure.corpus.draw import Draw
from redaction_pressure.corpus.words import ORGS, SERVICES


def make(d: Draw) -> Draft:
    b = Builder(d, "hard")
    folder = d.pick(("deploy", "ops", "scripts/deploy", "infra"))
    pem = keys.private_key_pem(d, d.pick(("ec_pkcs8", "ed25519_openssh")))
    body = tuple(line for line in pem.splitlines()[1:-1] if len(line) >= 40)
    key_words = d.pick((("deploy", "ssh", "key"), ("ssh", "private", "key"), ("deploy", "key")))
    registry_words = d.pick((("registry", "password"), ("docker", "password"), ("registry", "pass")))
    key_var, registry_var = "_".join(key_words).upper(), "_".join(registry_words).upper()
    key = b.secret("private_key", pem, b.var(*key_words), also=body)
    registry = b.secret("generic_secret", PASSWORDS.draw(d), b.var(*registry_words), tier="cascading")
    b.triggers[registry.id] = key.id
    host = f"{d.pick(SERVICES)}.{d.pick(ORGS)}.internal"
    user = d.pick(("deploy", "ci", "release"))
    target = d.pick(("/srv/app/", "/opt/service/", "/var/www/app/"))
    keyfile = d.pick(("KEY_FILE", "SSH_KEY_FILE", "IDENTITY"))
    push = d.pick(
        (
            f'rsync -e "ssh -i ${keyfile}" -a dist/ {user}@{host}:{target}',
            f'scp -i "${keyfile}" -r dist {user}@{host}:{target}',
        )
    )
    deploy = f"{folder}/{d.pick(('deploy', 'release', 'push'))}.sh"
    login = f"{folder}/{d.pick(('docker-login', 'registry-login', 'login'))}.sh"
    heredoc = b.slot(key, f"{key_var}=$(cat <<'KEY'\n{{}}\nKEY\n)", f'{key_var}="${{{key.env}:-}}"')
    script = f"""#!/usr/bin/env bash
# Deploys the release to {host}.
set -euo pipefail
{keyfile}="$(mktemp)"
{heredoc}
printf '%s\\n' "${key_var}" > "${keyfile}"
chmod 600 "${keyfile}"
{push}
"""
    login_text = f"""#!/usr/bin/env bash
set -euo pipefail
{registry_var}={b.slot(registry, "'{}'", '"${' + registry.env + ':-}"')}
echo "${registry_var}" | docker login registry.{host} --username {user} --password-stdin
"""
    public = keys.ssh_public_key(d)
    pub = f"{folder}/authorized_keys.pub"
    b.decoy("public_key", public, pub)
    b.add(
        d.pick(("Add deployment scripts", "Deploy over SSH", "Release scripts")),
        {deploy: script, pub: public + f" {user}\n"},
    )
    b.add(d.pick(("Log in to the registry before deploying", "Registry login", "Push images too")), {login: login_text})
    b.probes += [Probe("deploy", "sh", deploy), Probe("registry_login", "sh", login)]
    b.test(f'''
@pytest.mark.parametrize("script", ["{deploy}", "{login}"])
def test_scripts_still_parse(script):
    assert subprocess.run(["bash", "-n", str(ROOT / script)]).returncode == 0
''')
    b.python_secrets(extras(b, 2), tier="shallow")
    return b.finish(
        f"{host} deploy", "Deployment scripts that push a release over SSH and log in to a container registry."
    )


SCENARIO = Scenario("deployment", "hard", make)
