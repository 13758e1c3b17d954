"""A raw JSON-RPC MCP server (handshake era) that lists tools, then answers calls badly.

``garbage``: writes a line that is not JSON and never answers; ``bad_shape``: answers with
a result that is not a ``CallToolResult``; ``echo``: answers correctly.
"""

import json
import sys

TOOLS = [
    {"name": name, "inputSchema": {"type": "object", "properties": {}}}
    for name in ("garbage", "bad_shape", "echo")
]


def send(message: dict) -> None:
    sys.stdout.write(json.dumps(message) + "\n")
    sys.stdout.flush()


for line in sys.stdin:
    request = json.loads(line)
    method, ident = request.get("method"), request.get("id")
    if ident is None:
        continue  # a notification
    if method == "initialize":
        result = {
            "protocolVersion": request["params"]["protocolVersion"],
            "capabilities": {"tools": {}},
            "serverInfo": {"name": "broken", "version": "0"},
        }
        send({"jsonrpc": "2.0", "id": ident, "result": result})
    elif method == "tools/list":
        send({"jsonrpc": "2.0", "id": ident, "result": {"tools": TOOLS}})
    elif method == "tools/call":
        name = request["params"]["name"]
        if name == "garbage":
            sys.stdout.write("}}} this is not JSON {{{\n")
            sys.stdout.flush()
        elif name == "bad_shape":
            send({"jsonrpc": "2.0", "id": ident, "result": {"content": "not a list"}})
        else:
            text = {"type": "text", "text": "ok"}
            send({"jsonrpc": "2.0", "id": ident, "result": {"content": [text]}})
    else:
        error = {"code": -32601, "message": f"method not found: {method}"}
        send({"jsonrpc": "2.0", "id": ident, "error": error})
