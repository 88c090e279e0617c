"""Bytes to text by one documented rule, and the binary check."""

from __future__ import annotations

import codecs

from ihmt_chunkers._records import Decoded
from ihmt_chunkers._regex import LazyRegex
from ihmt_chunkers.errors import BinaryContentError

__all__ = ["check_text", "decode"]

_BOMS: tuple[tuple[bytes, str], ...] = (
    # UTF-32 first: its little-endian mark starts with the UTF-16 one.
    (codecs.BOM_UTF32_LE, "utf-32-le"),
    (codecs.BOM_UTF32_BE, "utf-32-be"),
    (codecs.BOM_UTF8, "utf-8-sig"),
    (codecs.BOM_UTF16_LE, "utf-16-le"),
    (codecs.BOM_UTF16_BE, "utf-16-be"),
)

# C0 controls other than tab, newline, vertical tab, form feed, carriage return and escape.
_CONTROL = LazyRegex("[\x01-\x08\x0e-\x1a\x1c-\x1f]")
_MAX_REPLACED = 0.30
_MAX_CONTROL = 0.10
_SAMPLE = 1 << 16


def decode(data: bytes) -> Decoded:
    """Decode bytes to text; raise :class:`BinaryContentError` for binary data.

    The rule, in order:

    1. A byte order mark decides: UTF-8 (``utf-8-sig``), UTF-16 or UTF-32, either
       byte order. The mark is not part of the text.
    2. Otherwise a NUL byte anywhere means binary.
    3. Otherwise strict UTF-8.
    4. Otherwise UTF-8 with U+FFFD for each invalid byte and ``lossy=True`` — unless
       more than 30 % of the characters would be replaced, or more than 10 % are
       control characters, which means binary.

    Args:
        data: The raw content of a file or a request.

    Returns:
        The text, the encoding used and whether anything was replaced.

    Raises:
        BinaryContentError: ``cause`` is ``"nul-bytes"`` or ``"undecodable"``.
    """
    for bom, encoding in _BOMS:
        if data.startswith(bom):
            try:
                text = data[len(bom) :].decode(encoding.replace("-sig", ""))
            except UnicodeDecodeError:
                text = data[len(bom) :].decode(encoding.replace("-sig", ""), errors="replace")
                return Decoded(text=text, encoding=encoding, lossy=True)
            return Decoded(text=text, encoding=encoding)
    if b"\x00" in data:
        raise BinaryContentError(
            "binary content: the data holds NUL bytes, so it is not text", cause="nul-bytes"
        )
    try:
        text = data.decode("utf-8")
    except UnicodeDecodeError:
        text = data.decode("utf-8", errors="replace")
        sample = text[:_SAMPLE]
        if sample.count("\ufffd") > _MAX_REPLACED * max(1, len(sample)):
            raise BinaryContentError(
                "binary content: most bytes are not valid UTF-8 text", cause="undecodable"
            ) from None
        check_text(text)
        return Decoded(text=text, encoding="utf-8", lossy=True)
    check_text(text)
    return Decoded(text=text, encoding="utf-8")


def check_text(text: str) -> None:
    """Raise :class:`BinaryContentError` when ``text`` is really binary data.

    A NUL character, or a sample in which more than 10 % of the characters are C0
    control characters, means binary.
    """
    if "\x00" in text:
        raise BinaryContentError("binary content: the text holds NUL characters", cause="nul-bytes")
    sample = text[:_SAMPLE]
    if sample and len(_CONTROL.findall(sample)) > _MAX_CONTROL * len(sample):
        raise BinaryContentError(
            "binary content: too many control characters for text", cause="undecodable"
        )
