"""The document families, one declarative module each: how its dialect is drawn, how a record is written.

To add a family, copy one of these modules: `draw(b)` picks the layout and the entries
(with their slots) through the `Builder`, `write(wr)` lays one record out through the
`Writer`, and `FAMILY` names it with its syntax and a typical file name.
"""

from __future__ import annotations

from redaction_pressure.corpus.dialect import Family
from redaction_pressure.corpus.families import (
    access_log,
    app_log,
    base64_source,
    ci_workflow,
    compose_env,
    credential_list,
    deploy_script,
    dotenv,
    dsn_in_code,
    function_local,
    python_settings,
    repeated_key,
    service_account,
    sql_migration,
    toml_config,
    web_config,
)

FAMILIES: dict[str, Family] = {
    module.FAMILY.name: module.FAMILY
    for module in (
        python_settings, dsn_in_code, web_config, app_log, dotenv, base64_source, ci_workflow, toml_config,
        sql_migration, deploy_script, repeated_key, function_local, access_log, compose_env, service_account,
        credential_list,
    )
}  # fmt: skip
LEVEL_ONLY = {"credential_list": "siblings"}
"""Families only a level with the named knob draws (the other levels' draws never see them)."""
