"""Write (or check) docs/cli.md, the command reference built from the commands' own help.

python tools/cli_docs.py            # rewrite docs/cli.md
python tools/cli_docs.py --check    # exit 1 when docs/cli.md has drifted from the code
"""

from __future__ import annotations

import sys
from pathlib import Path

from ihmt_cli import reference_markdown

TARGET = Path(__file__).resolve().parents[1] / "docs" / "cli.md"


def main(argv: list[str]) -> int:
    text = reference_markdown()
    if "--check" in argv:
        if not TARGET.exists() or TARGET.read_text(encoding="utf-8") != text:
            print(f"{TARGET} is out of date: run python tools/cli_docs.py", file=sys.stderr)
            return 1
        return 0
    TARGET.parent.mkdir(exist_ok=True)
    TARGET.write_text(text, encoding="utf-8")
    print(f"wrote {TARGET}")
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
