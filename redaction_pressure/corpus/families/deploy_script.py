"""Shell deploy scripts with a multi-line PEM private key in a heredoc, and tokens on command lines.

Dialect: the key's type and where it is written, the heredoc delimiter, 0 to 2 more
leaks (an exported token, `curl -u user:password`, an `sshpass -p`), and public
look-alikes: an authorized SSH public key, a PEM public key, a host key fingerprint, the
release commit, `"${VAR}"` placeholders. Records pass `bash -n`; quoted heredocs and
single quotes keep every secret literal.
"""

from __future__ import annotations

from redaction_pressure.corpus import values as v
from redaction_pressure.corpus import words as w
from redaction_pressure.corpus.dialect import Builder, Family, FamilyDialect
from redaction_pressure.corpus.document import Writer
from redaction_pressure.corpus.families.common import housed

KEY_PATHS = (
    "/etc/app/tls/server.key",
    "/root/.ssh/id_deploy",
    "/etc/ssl/private/{service}.key",
    "$HOME/.ssh/deploy_key",
    "/srv/{service}/signing.pem",
)


def draw(b: Builder) -> FamilyDialect:
    d = b.d
    layout = {
        "delimiter": d.pick(("EOF", "KEY", "PEM", "END_KEY")),
        "shebang": d.pick(("#!/usr/bin/env bash", "#!/bin/bash")),
    }
    service = d.pick(b.world.services)
    b.entry("key", (b.secret_format("private_key"), True), path=d.pick(KEY_PATHS).format(service=service))
    for leak in d.sample(("export", "curl", "sshpass", "none", "none"), 2):
        if leak == "export":
            kind = housed(b, d.pick(("house_token", "generic_secret", "github_token", "slack_token")))
            b.entry(
                "export", (b.secret_format(kind), True), key=w.spell((b.subject(kind), *b.role(kind)), "upper_snake")
            )
        elif leak == "curl":
            b.entry(
                "curl",
                (b.secret_format("password"), True),
                user=d.pick(b.world.users),
                url=f"https://artifacts.{b.world.domain}/upload",
            )
        elif leak == "sshpass":
            b.entry("sshpass", (b.secret_format("password"), True), user=d.pick(("deploy", "ubuntu", "ops")))
    for look in d.sample(("ssh_public", "pem_public", "fingerprint", "commit", "placeholder"), d.int(1, 3)):
        if look == "ssh_public":
            b.entry("authorized", (v.SSH_PUBLIC_KEY, False), comment=f"deploy@{b.world.org}-ci")
        elif look == "pem_public":
            b.entry(
                "public_pem",
                (v.PEM_PUBLIC_KEY, False),
                path=f"/etc/app/tls/{d.pick(('upstream', 'verify', 'jwt'))}.pub",
            )
        elif look == "fingerprint":
            b.entry("fingerprint", (v.digest("fingerprint"), False))
        elif look == "commit":
            b.entry("commit", (v.COMMIT_SHA, False), key=d.pick(("RELEASE_SHA", "GIT_COMMIT", "BUILD_REF")))
        else:
            b.entry(
                "placeholder",
                (
                    v.placeholder(
                        d.pick(('"${DEPLOY_TOKEN}"', '"${REGISTRY_PASSWORD}"', '"$VAULT_TOKEN"')), "shell_var"
                    ),
                    False,
                ),
            )
    return b.done(layout, keep=0.7)


def write(wr: Writer) -> None:
    d, layout = wr.d, wr.layout
    delim = layout["delimiter"]
    wr.line(layout["shebang"])
    wr.line(f"# {d.pick(('deploy.sh', 'release.sh', 'provision.sh'))}: push the release to the app hosts")
    wr.line("set -euo pipefail\n")
    hosts = " ".join(wr.ip() for _ in range(d.int(2, 4)))
    wr.line(f"HOSTS=({hosts})")
    for entry in d.shuffled(wr.entries):
        slot = entry.slots[0]
        form = entry.form
        if form == "key":
            path = entry["path"]
            wr.line(f'install -d -m 700 "$(dirname "{path}")"')
            wr.line(f"cat > \"{path}\" <<'{delim}'\n", wr.fresh(slot), f"\n{delim}")
            wr.line(f'chmod 600 "{path}"')
        elif form == "export":
            wr.line(f"export {entry['key']}='", wr.fresh(slot), "'")
        elif form == "curl":
            wr.line(f"curl -fsS -u '{entry['user']}:", wr.fresh(slot), f"' -T build/release.tar.gz {entry['url']}")
        elif form == "sshpass":
            wr.line(
                "sshpass -p '",
                wr.fresh(slot),
                f'\' ssh -o StrictHostKeyChecking=no {entry["user"]}@"${{HOSTS[0]}}" true',
            )
        elif form == "authorized":
            wr.line("echo '", wr.fresh(slot), f" {entry['comment']}' >> ~/.ssh/authorized_keys")
        elif form == "public_pem":
            wr.line(f"cat > {entry['path']} <<'{delim}'\n", wr.fresh(slot), f"\n{delim}")
        elif form == "fingerprint":
            wr.line("# host key fingerprint (ED25519): ", wr.fresh(slot))
        elif form == "commit":
            wr.line(f"{entry['key']}=", wr.fresh(slot))
        else:
            wr.line("docker login -u ci --password-stdin registry.example.com <<< ", wr.fresh(slot))
    wr.line('for host in "${HOSTS[@]}"; do\n  rsync -az ./build/ "deploy@${host}:/srv/app/"\ndone')


FAMILY = Family("deploy_script", draw, write, syntax="shell", filename="deploy.sh")
