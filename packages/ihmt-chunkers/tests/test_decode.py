"""Decoding bytes by the documented rule; binary content raises ChunkError."""

from __future__ import annotations

import codecs
import random

import pytest
from hypothesis import example, given, settings
from hypothesis import strategies as st

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


def test_latin1_text_is_detected_and_decoded_right_with_a_notice() -> None:
    # Issue #13 D14: stored as "Reuni\ufffdn con Jos\ufffd en C\ufffddiz" with no notice.
    decoded = decode("Reunión con José en Cádiz\n".encode("latin-1"))
    assert decoded.text == "Reunión con José en Cádiz\n"
    assert not decoded.lossy
    assert decoded.encoding == "cp1252"
    assert "not UTF-8" in decoded.notice and "cp1252" in decoded.notice


@pytest.mark.parametrize(
    ("text", "codec"),
    [
        ("Canción de otoño, qué bien; el pingüino añade más.\n", "latin-1"),
        ("Die Straße “mit Anführung” – kostet 5 €.\n", "cp1252"),
        ("Привет, мир. Встреча завтра в десять часов утра.\n", "cp1251"),
        ("会議は明日の十時です。資料を準備してください。\n", "shift_jis"),
    ],
)
def test_legacy_encodings_are_detected(text: str, codec: str) -> None:
    decoded = decode(text.encode(codec))
    assert decoded.text == text
    assert not decoded.lossy and decoded.notice


@pytest.mark.parametrize(
    ("text", "codec", "encoding"),
    [
        # Read as Shift-JIS (garbage, no replacement) before charset-normalizer decided.
        ("Привет, мир. Встреча завтра в десять часов утра.\n", "koi8_r", "koi8-r"),
        ("明天開會，請準備資料。\n", "big5", "big5"),
        ("한국어 텍스트입니다. 내일 회의가 있습니다.\n", "euc_kr", "euc_kr"),
        ("Ηλεκτρονικό ταχυδρομείο αύριο.\n", "cp1253", "cp1253"),
        # Short Western notes: every Latin code page reads them; Windows-1252 wins the tie.
        ("Ñandú\n", "latin-1", "cp1252"),
        ("Café\n", "latin-1", "cp1252"),
        ("Straße\n", "latin-1", "cp1252"),
        ("Le café était très bon, à bientôt. Noël approche.\n", "latin-1", "cp1252"),
    ],
)
def test_charset_normalizer_names_the_encoding_among_the_common_ones(
    text: str, codec: str, encoding: str
) -> None:
    decoded = decode(text.encode(codec))
    assert decoded.text == text
    assert decoded.encoding == encoding
    assert not decoded.lossy and encoding in decoded.notice


def test_bytes_no_encoding_reads_cleanly_are_replaced_and_the_notice_says_so() -> None:
    decoded = decode(b"plain words \x81\x8d\x8f\x90\x9d then more plain words here\n")
    assert decoded.notice
    assert decoded.lossy == ("\ufffd" in decoded.text)


_SPANISH = ["año", "señal", "canción", "pingüino", "más", "¿qué?", "José", "Cádiz", "¡sí!"]


@settings(max_examples=150, deadline=None)
@given(
    words=st.lists(
        st.one_of(
            st.sampled_from(_SPANISH),
            st.text(alphabet="abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ,.", min_size=2),
        ),
        min_size=4,
        max_size=40,
    )
)
def test_spanish_in_latin1_comes_back_exactly(words: list[str]) -> None:
    text = " ".join(["La", "señal", *words])
    assert decode(text.encode("latin-1")).text == text


@settings(max_examples=300, deadline=None)
@given(data=st.binary(max_size=400))
@example(data=b"\xfa\\")  # cp932 reads FA 5C as a character it writes back as ED 40
@example(data=b"\xfe\xff" + b"\x00" * 11)  # a UTF-16 BOM before an odd byte count
def test_any_bytes_give_text_that_round_trips_or_a_binary_error(data: bytes) -> None:
    try:
        decoded = decode(data)
    except BinaryContentError:
        return
    if decoded.encoding.startswith("utf"):
        assert bool(decoded.notice) == decoded.lossy
    else:
        # A legacy encoding: nothing replaced, the text is exactly the bytes in it.
        assert decoded.notice and not decoded.lossy
        assert decoded.text.encode(decoded.encoding) == data


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


@pytest.mark.parametrize("text", ["¡sí!", "¡sí! ¡sí! ¡sí! ¡sí! ¡sí!", "Ñandú"])
def test_a_few_spanish_words_in_latin1_are_not_binary_nor_cyrillic(text: str) -> None:
    # charset-normalizer names no encoding for the first two, or Windows-1251 ("Ўsн!"):
    # a word mixing ASCII with Cyrillic letters is the tell of a wrong code page.
    decoded = decode(text.encode("latin-1"))
    assert decoded.text == text
    assert not decoded.lossy
