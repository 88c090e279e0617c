"""``python -m ihmt_cli``: the same as the ``ihmt`` command."""

import sys

from ihmt_cli import main

sys.exit(main())
