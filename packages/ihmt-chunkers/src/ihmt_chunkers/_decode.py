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
    4. Otherwise the legacy encoding ``charset-normalizer`` measures as the most likely
       among the common ones (Windows-1252, which reads Latin-1 too; Cyrillic, Greek,
       Japanese, Chinese, Korean), when it decodes every byte into clean text; the
       ``notice`` says which.
    5. Otherwise UTF-8 with U+FFFD for each invalid byte and ``lossy=True`` (and a
       notice) — unless more than 30 % of the characters would be replaced, or more
       than 10 % are control characters, which means binary.

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
                return Decoded(
                    text=text,
                    encoding=encoding,
                    lossy=True,
                    notice=f"{encoding} with invalid bytes: {text.count(chr(0xFFFD))} "
                    "character(s) were replaced by U+FFFD",
                )
            return Decoded(text=text, encoding=encoding)
    if b"\x00" in data:
        raise BinaryContentError(
            "binary content: the data holds NUL bytes, so it is not text", cause="nul-bytes"
        )
    try:
        text = data.decode("utf-8")
    except UnicodeDecodeError:
        detected = _detected(data)
        if detected is not None:
            return detected
        text = data.decode("utf-8", errors="replace")
        sample = text[:_SAMPLE]
        replaced = sample.count("\ufffd")
        if replaced > _MAX_REPLACED * max(1, len(sample)):
            raise BinaryContentError(
                "binary content: most bytes are not valid UTF-8 text", cause="undecodable"
            ) from None
        check_text(text)
        return Decoded(
            text=text,
            encoding="utf-8",
            lossy=True,
            notice=f"not valid UTF-8 and of no encoding recognised: {text.count(chr(0xFFFD))} "
            "byte(s) were replaced by U+FFFD",
        )
    check_text(text)
    return Decoded(text=text, encoding="utf-8")


# The legacy encodings charset-normalizer chooses among, the likelier first for the
# languages IHMT reads (English and Spanish, then the rest): of those that read the bytes
# equally cleanly, the earliest wins. Letting it try every code page it knows makes it
# name a Baltic, DOS or Mac one for a short Spanish note, since on a few accented letters
# they tie.
_CANDIDATES = ("cp1252", "cp1251", "koi8_r", "cp1253", "cp932", "gb18030", "big5", "euc_kr")


def _detected(data: bytes) -> Decoded | None:
    """Text in a legacy encoding (Latin-1, Windows-1252, Shift-JIS…) decoded correctly,
    with a notice saying so; None when no encoding reads all of it as clean text.

    What charset-normalizer names is tried first; then Windows-1252, the likeliest for
    the languages IHMT reads, because on a few words ("¡sí!") charset-normalizer names
    none, and reading them as broken UTF-8 would call a short Spanish note binary."""
    for encoding in dict.fromkeys((_likeliest(data), _CANDIDATES[0])):
        if encoding is not None:
            found = _strictly(data, encoding)
            if found is not None and not _mixes_scripts(found.text):
                return found
    return None


_WORD = LazyRegex(r"[^\W\d_]+")


def _mixes_scripts(text: str) -> bool:
    """True when a word holds both ASCII letters and letters beyond the Latin alphabets
    ("Ўsн" for "¡sí" read as Cyrillic): the tell of a wrong code page, since real words
    are written in one script."""
    for word in _WORD.findall(text[:_SAMPLE]):
        if word.isascii():
            continue
        if any(c.isascii() for c in word) and any(ord(c) > 0x24F for c in word):
            return True
    return False


def _strictly(data: bytes, encoding: str) -> Decoded | None:
    """``data`` read as ``encoding`` when every byte means a character and the text is
    clean; None otherwise."""
    try:
        # Strict: every byte must mean a character in that encoding, and the text must
        # give the same bytes back (cp932 reads some byte pairs as characters it writes
        # elsewhere).
        text = data.decode(encoding)
        if text.encode(encoding) != data:
            return None
    except (UnicodeError, LookupError):
        return None
    try:
        check_text(text)
    except BinaryContentError:
        return None
    name = codecs.lookup(encoding).name
    return Decoded(
        text=text,
        encoding=name,
        notice=f"not UTF-8: read as {name} (detected), stored as UTF-8",
    )


def _likeliest(data: bytes) -> str | None:
    """The candidate ``charset-normalizer`` finds least chaotic, then most coherent."""
    from charset_normalizer import from_bytes  # a few ms to import: only for such files

    matches = [
        m for m in from_bytes(data, cp_isolation=list(_CANDIDATES)) if m.encoding in _CANDIDATES
    ]
    if not matches:
        return None
    best = min(matches, key=lambda m: (m.chaos, -m.coherence, _CANDIDATES.index(m.encoding)))
    return str(best.encoding)


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
