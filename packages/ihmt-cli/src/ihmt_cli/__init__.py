"""ihmt-cli: the ``ihmt`` command, a thin layer over ``ihmt_mcp.Memory``.

``ihmt init``, ``ingest``, ``save``, ``search``, ``ask`` (the clue loop), ``tree``,
``stats``, ``facts``, ``conflicts``, ``forget``, ``rebuild``, ``consolidate``,
``mcp serve``, ``version`` and ``demo``. Human output by default, one JSON object with
``--json``; every error is one line on stderr and a non-zero exit, never a traceback.

Entry points:

- :func:`main` — the console script (``ihmt``); returns the exit code.
- :data:`cli` — the click group, for embedding or testing in-process.
- :func:`reference_markdown` — the command reference (``docs/cli.md``), built from the
  commands' own help so it cannot drift.
"""

from ihmt_cli._app import cli
from ihmt_cli._docs import reference_markdown
from ihmt_cli._main import main

__version__ = "0.1.0"

__all__ = [
    # the command
    "main",
    "cli",
    # documentation
    "reference_markdown",
]
