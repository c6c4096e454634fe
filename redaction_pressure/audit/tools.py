"""What serves the audit tools in the agent's box: verifiers' own MCP proxy over a stub (a verifiers adapter).

The tools' work is done on the host (`toolcalls.py`, called by the task's interceptor); the
harness still needs an MCP server to list them. `box_toolset` is verifiers' `HarborMCPToolset`
(it lives in verifiers' distribution, so for a container runtime `_install_in_sandbox` installs
only verifiers into the box's `.vf-venv`, nothing of this package), colocated in the agent's
runtime, proxying the stdio server `TOOL_STUB` (`runtime/tool_stub.py`, standard library only)
started by `sh` with the first `python3` or `python` on the box's PATH and the tools'
definitions (`toolcalls.catalogue()`) as its argument. Verifiers launches it as
`python -m verifiers.v1.tasksets.harbor.toolset` (on the subprocess runtime with the env
worker's interpreter, in a container with `.vf-venv/bin/python`).

The stub lists the four tools with their descriptions and schemas and answers a call with a
placeholder, which the host's result replaces: at the harness's tool gate, so that the call never
reaches the box, or, for a harness without a gate, when the next model request carries it
(`taskset.py`).
"""

from __future__ import annotations

import json

from verifiers.v1.tasksets.harbor.toolset import HarborMCPConfig, HarborMCPToolset

from redaction_pressure.audit import programs, toolcalls

SERVER_NAME = ""
"""No server prefix: the harness lists the tools by their bare names."""
LAUNCH = (
    'for p in python3 python; do if command -v "$p" >/dev/null 2>&1; then exec "$p" -I -S -c "$1" "$2"; fi; done;'
    ' echo "secrets-audit tools: no python3 or python on PATH" >&2; exit 127'
)
"""`sh -c LAUNCH NAME STUB CATALOG`: the stub under the box's own interpreter, isolated (no site,
no environment variables, no current directory on sys.path)."""


def stub_server() -> dict:
    """The stdio server declaration `HarborMCPToolset` proxies."""
    catalog = json.dumps(toolcalls.catalogue(), separators=(",", ":"))
    return {
        "name": SERVER_NAME,
        "transport": "stdio",
        "command": "sh",
        "args": ["-c", LAUNCH, "secrets-audit-tools", programs.TOOL_STUB, catalog],
    }


def box_toolset() -> HarborMCPToolset:
    """The toolset the task declares: the stub behind verifiers' proxy, in the agent's runtime."""
    return HarborMCPToolset(HarborMCPConfig(colocated=True, server=stub_server()))
