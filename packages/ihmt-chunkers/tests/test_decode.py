"""Decoding bytes by the documented rule; binary content raises ChunkError."""

from __future__ import annotations

import codecs
import random

import pytest

from ihmt_chunkers import BinaryContentError, ChunkError, chunk, decode, split


def test_plain_utf8_is_decoded_strictly() -> None:
    decoded = decode("año ñandú\n".encode())
    assert (decoded.text, decoded.encoding, decoded.lossy) == ("año ñandú\n", "utf-8", False)


@pytest.mark.parametrize(
    ("bom", "codec", "encoding"),
    [
        (codecs.BOM_UTF8, "utf-8", "utf-8-sig"),
        (codecs.BOM_UTF16_LE, "utf-16-le", "utf-16-le"),
        (codecs.BOM_UTF16_BE, "utf-16-be", "utf-16-be"),
        (codecs.BOM_UTF32_LE, "utf-32-le", "utf-32-le"),
        (codecs.BOM_UTF32_BE, "utf-32-be", "utf-32-be"),
    ],
)
def test_a_byte_order_mark_decides_the_encoding(bom: bytes, codec: str, encoding: str) -> None:
    decoded = decode(bom + "día 1\n".encode(codec))
    assert decoded.text == "día 1\n"
    assert decoded.encoding == encoding
    assert not decoded.lossy


def test_utf8_with_bom_round_trips() -> None:
    data = codecs.BOM_UTF8 + b"x = 1\n"
    decoded = decode(data)
    assert decoded.text.encode(decoded.encoding) == data


def test_latin1_text_is_decoded_with_replacements_and_flagged() -> None:
    decoded = decode("Canción de otoño, qué bien\n".encode("latin-1"))
    assert decoded.lossy
    assert decoded.encoding == "utf-8"
    assert decoded.text.startswith("Canci\ufffdn")


def test_nul_bytes_are_binary() -> None:
    with pytest.raises(BinaryContentError) as info:
        decode(b"\x89PNG\r\n\x1a\n\x00\x00\x00\rIHDR")
    assert info.value.cause == "nul-bytes"
    assert isinstance(info.value, ChunkError)
    assert isinstance(info.value, ValueError)


def test_random_high_bytes_are_binary() -> None:
    rng = random.Random(7)
    data = bytes(rng.randrange(128, 256) for _ in range(4096))
    with pytest.raises(BinaryContentError) as info:
        decode(data)
    assert info.value.cause == "undecodable"


def test_splitters_refuse_text_with_nul_characters() -> None:
    with pytest.raises(BinaryContentError):
        split("abc\x00def", doc_type="code", language="python")
    with pytest.raises(BinaryContentError):
        chunk("abc\x00def")


def test_control_character_soup_is_binary() -> None:
    with pytest.raises(BinaryContentError):
        split("\x01\x02\x03\x04\x05\x06" * 100)
