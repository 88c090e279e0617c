"""Line arithmetic shared by every splitter: offsets, line numbers, token sizes."""

from __future__ import annotations

import math
from bisect import bisect_right

__all__ = ["Lines"]

_CHARS_PER_TOKEN = 4  # the same estimate as ihmt_store.estimate_tokens, on offsets


class Lines:
    """A text cut at ``\\n`` only (``\\r\\n`` stays whole, a lone ``\\r`` is not a break)."""

    __slots__ = ("count", "starts", "text")

    def __init__(self, text: str) -> None:
        self.text = text
        starts = [0]
        find = text.find
        pos = find("\n")
        while pos != -1:
            starts.append(pos + 1)
            pos = find("\n", pos + 1)
        if starts[-1] != len(text):
            starts.append(len(text))
        self.starts = starts
        """Offset of each line's first character, then ``len(text)``."""
        self.count = len(starts) - 1
        """Number of lines; a final line without ``\\n`` counts."""

    def line(self, row: int) -> str:
        """Line ``row`` (0-based) with its line ending."""
        return self.text[self.starts[row] : self.starts[row + 1]]

    def span(self, first: int, last: int) -> str:
        """Rows ``first``..``last`` (0-based, inclusive) as one string."""
        return self.text[self.starts[first] : self.starts[last + 1]]

    def tokens(self, first: int, last: int) -> int:
        """Estimated tokens of rows ``first``..``last``, without slicing the text."""
        return math.ceil((self.starts[last + 1] - self.starts[first]) / _CHARS_PER_TOKEN)

    def row_of(self, offset: int) -> int:
        """0-based row holding the character at ``offset``."""
        return bisect_right(self.starts, offset) - 1

    def is_blank(self, row: int) -> bool:
        """Whether row ``row`` holds only whitespace."""
        return not self.text[self.starts[row] : self.starts[row + 1]].strip()
