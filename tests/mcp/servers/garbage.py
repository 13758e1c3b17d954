"""Not an MCP server: answers every line with text that is not JSON-RPC."""

import sys

for _line in sys.stdin:
    sys.stdout.write("this is not JSON-RPC\n")
    sys.stdout.flush()
