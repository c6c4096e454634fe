"""docker-compose or Kubernetes manifests whose env sections carry literal secrets.

Dialect: compose (map or list environment) or a Kubernetes Deployment (or a Secret's
`stringData`), the quote, 1 to 3 credential clusters, and look-alikes in the same env
section: `secretKeyRef` references, `${VAR}` interpolations, pinned image digests,
settings under the same names. Records parse as YAML and each secret is an env value.
"""

from __future__ import annotations

from redaction_pressure.corpus import values as v
from redaction_pressure.corpus.dialect import Builder, Family, FamilyDialect
from redaction_pressure.corpus.document import Writer
from redaction_pressure.corpus.draw import HEX
from redaction_pressure.corpus.families.common import ALLOW_MARKERS, cluster, kinds, note, yaml_quote

KINDS = (
    ("generic_secret", "generic_secret", "stripe_key", "slack_token", "password", "openai_key", "jwt")
    + ("house_token",) * 10
    + ("generic_secret", "jwt")
)
IMAGE_DIGEST = v.Format("hash_digest", "image", lambda d: "sha256:" + d.chars(HEX, 64), HEX + "sha:")


def draw(b: Builder) -> FamilyDialect:
    d = b.d
    style = d.pick(("compose_map", "compose_list", "kubernetes", "k8s_secret"))
    layout = {
        "style": style,
        "quote": d.pick(("", '"', "'")) if style != "compose_list" else "",
        "app": d.pick(b.world.services),
    }
    layout["marker"] = d.pick(ALLOW_MARKERS)
    looks = (
        ("placeholder", "setting", "reference", "allowlisted", "public")
        if style.startswith("compose")
        else ("setting", "reference", "allowlisted", "public")
    )
    for kind in kinds(b, KINDS, 1, 3):
        for entry in cluster(b, kind, "upper_snake", form="env", looks=looks, count=(0, 2)):
            entry.words["quote"] = yaml_quote(entry.slots[0].fmt.charset, layout["quote"])
    if style == "kubernetes":
        b.entry("secret_ref", (v.Format("secret_reference", "k8s", lambda dd, name=f"{layout['app']}-secrets": name, "abc-"), False),
                key=d.pick(("DB_PASSWORD", "API_TOKEN", "SESSION_SECRET")), ref_key=d.pick(("password", "token", "secret")))  # fmt: skip
    if style != "k8s_secret" and d.chance(0.6):
        b.entry("image", (IMAGE_DIGEST, False))
    return b.done(layout, keep=0.7)


def write(wr: Writer) -> None:
    d, layout = wr.d, wr.layout
    app = layout["app"]
    style = layout["style"]
    envs = [e for e in wr.entries if e.form == "env"]
    image = next((e for e in wr.entries if e.form == "image"), None)
    refs = [e for e in wr.entries if e.form == "secret_ref"]
    image_parts: tuple = (
        (f"ghcr.io/{wr.world.org}/{app}@", wr.fresh(image.slots[0]))
        if image
        else (f"ghcr.io/{wr.world.org}/{app}:1.{d.int(0, 30)}.{d.int(0, 9)}",)
    )
    plain = [("LOG_LEVEL", d.pick(("info", "debug"))), ("PORT", str(d.pick((8000, 8080))))]
    if style.startswith("compose"):
        wr.line(f"services:\n  {app}:")
        wr.line("    image: ", *image_parts)
        wr.line("    environment:")
        for entry in d.shuffled(envs):
            q = entry["quote"]
            if style == "compose_map":
                wr.line(f"      {entry['key']}: {q}", wr.fresh(entry.slots[0]), q + note(entry, layout))
            else:
                wr.line(f"      - {entry['key']}=", wr.fresh(entry.slots[0]), note(entry, layout))
        for key, value in plain:
            wr.line(f'      {key}: "{value}"' if style == "compose_map" else f"      - {key}={value}")
        wr.line(f"    depends_on: [db]\n  db:\n    image: postgres:{d.pick((15, 16, 17))}")
    elif style == "k8s_secret":
        wr.line(
            f"apiVersion: v1\nkind: Secret\nmetadata:\n  name: {app}-secrets\n  namespace: {wr.world.env}\ntype: Opaque\nstringData:"
        )
        for entry in d.shuffled(envs):
            q = entry["quote"]
            wr.line(f"  {entry['key']}: {q}", wr.fresh(entry.slots[0]), q + note(entry, layout))
    else:
        wr.line(
            f"apiVersion: apps/v1\nkind: Deployment\nmetadata:\n  name: {app}\nspec:\n  replicas: {d.int(1, 5)}\n  template:\n    spec:\n      containers:\n        - name: {app}"
        )
        wr.line("          image: ", *image_parts)
        wr.line("          env:")
        for entry in d.shuffled(envs + refs):
            if entry.form == "secret_ref":
                wr.line(
                    f"            - name: {entry['key']}\n              valueFrom:\n                secretKeyRef:\n                  name: ",
                    wr.fresh(entry.slots[0]),
                    f"\n                  key: {entry['ref_key']}",
                )
            else:
                q = entry["quote"] or '"'
                wr.line(
                    f"            - name: {entry['key']}\n              value: {q}",
                    wr.fresh(entry.slots[0]),
                    q + note(entry, layout),
                )


FAMILY = Family("compose_env", draw, write, syntax="yaml", filename="compose.yaml")
