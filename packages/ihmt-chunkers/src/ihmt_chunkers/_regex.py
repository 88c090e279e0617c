"""Regular expressions compiled on first use, so importing the package stays cheap."""

from __future__ import annotations

import re
from collections.abc import Iterator

__all__ = ["LazyRegex"]


class LazyRegex:
    """A ``re.Pattern`` stand-in that compiles itself the first time it is used."""

    __slots__ = ("_compiled", "_flags", "_source")

    def __init__(self, source: str, flags: int = 0) -> None:
        self._source = source
        self._flags = flags
        self._compiled: re.Pattern[str] | None = None

    @property
    def pattern(self) -> re.Pattern[str]:
        """The compiled pattern."""
        compiled = self._compiled
        if compiled is None:
            compiled = self._compiled = re.compile(self._source, self._flags)
        return compiled

    def match(self, text: str, pos: int = 0, endpos: int = 2**63 - 1) -> re.Match[str] | None:
        """As :meth:`re.Pattern.match`."""
        return self.pattern.match(text, pos, endpos)

    def search(self, text: str, pos: int = 0, endpos: int = 2**63 - 1) -> re.Match[str] | None:
        """As :meth:`re.Pattern.search`."""
        return self.pattern.search(text, pos, endpos)

    def finditer(self, text: str, pos: int = 0, endpos: int = 2**63 - 1) -> Iterator[re.Match[str]]:
        """As :meth:`re.Pattern.finditer`."""
        return self.pattern.finditer(text, pos, endpos)

    def findall(self, text: str, pos: int = 0, endpos: int = 2**63 - 1) -> list[str]:
        """As :meth:`re.Pattern.findall` (for patterns without groups)."""
        return self.pattern.findall(text, pos, endpos)

    def sub(self, replacement: str, text: str) -> str:
        """As :meth:`re.Pattern.sub`."""
        return self.pattern.sub(replacement, text)
