"""``python -m ihmt_mcp``: run the stdio MCP server."""

from __future__ import annotations

import sys


def main() -> None:
    """Entry point of the ``ihmt-mcp`` console script."""
    from ihmt_mcp._server import main as serve

    sys.exit(serve())


if __name__ == "__main__":
    main()
