"""The TOOL_STUB runtime program: the audit tools' MCP server in the agent's box, knowing nothing.

Run as `python -I -S -c <this text> CATALOG` by verifiers' own `HarborMCPToolset` (its stdio
transport), which serves it to the harness; CATALOG is the JSON list of the audit tools' MCP
definitions (name, description, inputSchema). It speaks MCP over standard input and output
(newline-delimited JSON-RPC 2.0) with the handshake protocol revisions: `initialize`, `ping`,
`tools/list` with the catalogue and `tools/call` answered with PLACEHOLDER; any other request is
answered "method not found" (so a client probing `server/discover` falls back to `initialize`),
and notifications are ignored.

It holds no plan, no secret, no grader and nothing of this package: every audit call's result is
computed on the host (`audit/toolcalls.py`) and put in the call's place by the task's interceptor
(`taskset.py`), mostly before the call would reach this program at all. What it answers is never
what the agent reads.

The file's text after this docstring is the program, byte for byte (`programs` strips the
docstring): it is run, never imported. It imports only the standard library.
"""

import json, sys
# secrets-audit-tools-stub: the host answers every call
TOOLS = json.loads(sys.argv[1])
VERSIONS = ("2024-11-05", "2025-03-26", "2025-06-18", "2025-11-25")
PLACEHOLDER = "(this call is answered by the environment)"


def result(method, params):
    if method == "initialize":
        asked = params.get("protocolVersion")
        return {"protocolVersion": asked if asked in VERSIONS else VERSIONS[-1], "capabilities": {"tools": {}},
                "serverInfo": {"name": "secrets-audit-tools", "version": "1"}}
    if method == "ping":
        return {}
    if method == "tools/list":
        return {"tools": TOOLS}
    if method == "tools/call":
        return {"content": [{"type": "text", "text": PLACEHOLDER}], "isError": False}
    return None


def main():
    while True:
        line = sys.stdin.readline()
        if not line:
            return
        try:
            message = json.loads(line)
        except ValueError:
            continue
        if not isinstance(message, dict) or "id" not in message or "method" not in message:
            continue  # a notification or a response: nothing to answer
        params = message.get("params") if isinstance(message.get("params"), dict) else {}
        answer = result(message["method"], params)
        reply = {"jsonrpc": "2.0", "id": message["id"]}
        if answer is None:
            reply["error"] = {"code": -32601, "message": "method not found: " + str(message["method"])[:100]}
        else:
            reply["result"] = answer
        sys.stdout.write(json.dumps(reply) + "\n")
        sys.stdout.flush()


main()
