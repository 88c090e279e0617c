"""The entry points: split a text of a known type, or detect and split in one call.

The splitters and the detector are imported on first use: ``import ihmt_chunkers``
only pays for the records and these thin functions.
"""

from __future__ import annotations

import logging
from typing import Literal

from ihmt_chunkers._decode import check_text
from ihmt_chunkers._languages import LANGUAGES, language_for_filename, normalize_language
from ihmt_chunkers._records import Block, Chunked, Detection, DocType

__all__ = ["DEFAULT_MAX_TOKENS", "DEFAULT_TARGET_TOKENS", "chunk", "detect", "split"]

logger = logging.getLogger(__name__)

DEFAULT_TARGET_TOKENS = 400
"""Blocks are packed up to this many estimated tokens."""
DEFAULT_MAX_TOKENS = 1200
"""A block above this many estimated tokens is split if it may be, else flagged oversized."""

Mode = Literal["pack", "symbol"]


def split(
    text: str,
    *,
    doc_type: DocType | str = DocType.GENERIC,
    language: str | None = None,
    filename: str | None = None,
    mode: Mode = "pack",
    target_tokens: int = DEFAULT_TARGET_TOKENS,
    max_tokens: int = DEFAULT_MAX_TOKENS,
    dayfirst: bool = True,
    member_tokens: int | None = None,
) -> tuple[Block, ...]:
    """Split ``text`` into blocks that never cut a logical block.

    ``"".join(block.text for block in blocks) == text`` always holds, and the blocks'
    line spans are contiguous: each block starts on the line after the previous one
    ends, or on that same line when the previous block ended mid-line.

    Args:
        text: The document. Empty text gives no blocks.
        doc_type: Which splitter runs (a :class:`DocType` or its value).
        language: For code, the language name or an alias (``"c#"``); when omitted it
            comes from ``filename``. Code in a language without a grammar is split at
            blank lines and tagged ``parser:fallback``.
        filename: The document's name, used to find the language of code.
        mode: ``"pack"`` packs neighbouring blocks up to ``target_tokens``;
            ``"symbol"`` gives every function and class a block of its own (for
            project indexes) and splits classes above ``target_tokens`` per member.
        target_tokens: Packing target, in estimated tokens (4 characters a token).
        max_tokens: Anything above it is split where the document type allows, or
            kept whole with ``oversized=True`` and a reason.
        dayfirst: How to read numeric dates such as ``03/04/2024`` in temporal texts.
        member_tokens: In ``symbol`` mode, the size above which a class is split per
            member, when it should differ from ``target_tokens``: ``member_tokens=1``
            gives every method a block of its own while a class's header, docstring and
            fields (and a module's constants) still pack up to ``target_tokens``.

    Returns:
        The blocks, in document order.

    Raises:
        BinaryContentError: ``text`` holds NUL characters or is mostly control
            characters.
        ValueError: An unknown ``doc_type``, ``mode`` or ``language``, or budgets
            below one token or a target above the maximum.
    """
    kind = _doc_type(doc_type)
    if member_tokens is not None and member_tokens < 1:
        raise ValueError("member_tokens must be at least 1")
    if mode not in ("pack", "symbol"):
        raise ValueError(f"mode must be 'pack' or 'symbol', not {mode!r}")
    if target_tokens < 1 or max_tokens < 1:
        raise ValueError("target_tokens and max_tokens must be at least 1")
    if target_tokens > max_tokens:
        raise ValueError(
            f"target_tokens ({target_tokens}) cannot be above max_tokens ({max_tokens})"
        )
    if not text:
        return ()
    check_text(text)
    from ihmt_chunkers._text import (
        split_generic,
        split_narrative,
        split_process,
        split_temporal,
    )

    pack = mode == "pack"
    if kind is DocType.CODE:
        return _split_code(text, language, filename, mode, target_tokens, max_tokens, member_tokens)
    if kind is DocType.NARRATIVE:
        return split_narrative(text, target_tokens=target_tokens, max_tokens=max_tokens, pack=pack)
    if kind is DocType.TEMPORAL:
        return split_temporal(
            text, target_tokens=target_tokens, max_tokens=max_tokens, pack=pack, dayfirst=dayfirst
        )
    if kind is DocType.PROCESS:
        return split_process(text, target_tokens=target_tokens, max_tokens=max_tokens, pack=pack)
    return split_generic(
        text, target_tokens=target_tokens, max_tokens=max_tokens, pack=pack, doc_type=kind.value
    )


def detect(text: str, *, filename: str | None = None) -> Detection:
    """Detect a document's type, domain and note kinds.

    The extension decides when it names a programming language (confidence 0.95).
    Otherwise English and Spanish lexical signatures are scored: code syntax, dated
    lines (journals, chats, logs, clinical records), recipe, runbook and protocol
    vocabulary with numbered steps, dialogue and chapter headings, and the phrasing of
    short agent notes, which are tagged ``kind:decision``, ``kind:environment``,
    ``kind:preference``, ``kind:person``, ``kind:project`` (plus ``project:<name>``
    and ``person:<Name>`` when named).

    Args:
        text: The document (only its first 200,000 characters are read).
        filename: Its name or path, if known.

    Returns:
        The detection.
    """
    from ihmt_chunkers._detect import detect_document

    return detect_document(text, filename=filename)


def chunk(
    text: str,
    filename: str | None = None,
    *,
    doc_type: DocType | str | None = None,
    domain: str | None = None,
    language: str | None = None,
    mode: Mode = "pack",
    target_tokens: int = DEFAULT_TARGET_TOKENS,
    max_tokens: int = DEFAULT_MAX_TOKENS,
    member_tokens: int | None = None,
) -> Chunked:
    """Detect what ``text`` is and split it accordingly.

    Args:
        text: The document.
        filename: Its name or path, if known (the extension decides code).
        doc_type: Overrides the detected type.
        domain: Overrides the detected domain.
        language: Overrides the language of code (implies ``doc_type=CODE`` unless a
            type is given).
        mode: ``"pack"`` or ``"symbol"``, as in :func:`split`.
        target_tokens: Packing target, as in :func:`split`.
        max_tokens: Oversize limit, as in :func:`split`.
        member_tokens: The size above which a class splits per member in ``symbol``
            mode, as in :func:`split`.

    Returns:
        The detection (after overrides) and the blocks.

    Raises:
        BinaryContentError: ``text`` is binary.
        ValueError: An invalid argument, as in :func:`split`.
    """
    if text:
        check_text(text)
    detection = detect(text, filename=filename)
    canonical = _language(language) if language is not None else None
    if canonical is not None and doc_type is None:
        doc_type = DocType.CODE
    if doc_type is not None or domain is not None or canonical is not None:
        kind = _doc_type(doc_type) if doc_type is not None else detection.doc_type
        lang = canonical or (detection.language if kind is DocType.CODE else None)
        new_domain = domain
        if new_domain is None:
            new_domain = (
                LANGUAGES[lang].domain
                if lang is not None and kind is DocType.CODE
                else detection.domain
            )
        detection = Detection(
            doc_type=kind,
            domain=new_domain,
            confidence=1.0,
            language=lang if kind is DocType.CODE else None,
            tags=detection.tags,
        )
    blocks = split(
        text,
        doc_type=detection.doc_type,
        language=detection.language,
        filename=filename,
        mode=mode,
        target_tokens=target_tokens,
        max_tokens=max_tokens,
        member_tokens=member_tokens,
    )
    return Chunked(detection=detection, blocks=blocks)


def _doc_type(value: DocType | str) -> DocType:
    if isinstance(value, DocType):
        return value
    try:
        return DocType(str(value).lower())
    except ValueError:
        names = ", ".join(t.value for t in DocType)
        raise ValueError(f"unknown doc_type {value!r}; expected one of {names}") from None


def _language(name: str) -> str:
    canonical = normalize_language(name)
    if canonical is None:
        known = ", ".join(sorted(LANGUAGES))
        raise ValueError(f"unknown language {name!r}; supported: {known}")
    return canonical


def _split_code(
    text: str,
    language: str | None,
    filename: str | None,
    mode: Mode,
    target_tokens: int,
    max_tokens: int,
    member_tokens: int | None = None,
) -> tuple[Block, ...]:
    from ihmt_chunkers._code import split_code
    from ihmt_chunkers._text import split_generic

    lang = _language(language) if language is not None else None
    if lang is None and filename is not None:
        lang = language_for_filename(filename)
    if lang is not None:
        blocks = split_code(
            text,
            lang,
            symbol_mode=mode == "symbol",
            target_tokens=target_tokens,
            max_tokens=max_tokens,
            member_tokens=member_tokens,
        )
        if blocks is not None:
            return blocks
    fallback = split_generic(
        text,
        target_tokens=target_tokens,
        max_tokens=max_tokens,
        pack=mode == "pack",
        doc_type="code",
    )
    extra = (f"lang:{lang}",) if lang else ()
    return tuple(_retag(block, ("type:code", *extra, "parser:fallback")) for block in fallback)


def _retag(block: Block, tags: tuple[str, ...]) -> Block:
    return Block(
        text=block.text,
        start_line=block.start_line,
        end_line=block.end_line,
        kind="code",
        tags=tags,
        context=block.context,
        oversized=block.oversized,
        oversize_reason=block.oversize_reason.replace("paragraph", "code paragraph"),
    )
