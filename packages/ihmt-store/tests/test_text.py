from __future__ import annotations

import pytest

from ihmt_store import STOP_WORDS, estimate_tokens, fold, terms
from ihmt_store._text import stem  # own package: allowed


def test_accents_are_folded_the_same_on_both_sides() -> None:
    assert fold("Migración") == "migracion"
    assert terms("Canción") == terms("cancion")
    assert terms("Ñandú São") == terms("nandu sao")


def test_camel_case_keeps_the_identifier_and_its_parts() -> None:
    out = terms("reserveStock")
    assert "reservestock" in out
    assert stem("reserve") in out
    assert "stock" in out


def test_snake_case_is_split_and_joined() -> None:
    out = terms("stock_hold_timeout")
    assert "stock" in out and "hold" in out
    assert "stockholdtimeout" in out


def test_acronym_followed_by_word_splits_cleanly() -> None:
    out = terms("HTTPServer")
    assert "http" in out
    assert stem("server") in out


def test_stop_words_in_english_and_spanish_are_dropped() -> None:
    assert terms("the of and") == []
    assert terms("el de la que") == []
    assert "the" in STOP_WORDS and "porque" in STOP_WORDS


@pytest.mark.parametrize(
    ("a", "b"),
    [
        ("decide", "decided"),
        ("decide", "deciding"),
        ("migrate", "migrated"),
        ("migration", "migrations"),
        ("database", "databases"),
        ("policy", "policies"),
        ("host", "hosts"),
        ("instalación", "instalaciones"),
        ("rápidamente", "rápida"),
        ("cut", "cutting"),
        ("plan", "planned"),
        ("ship", "shipping"),
        ("roll", "rolling"),
    ],
)
def test_light_stemming_joins_word_forms(a: str, b: str) -> None:
    assert terms(a) == terms(b) or set(terms(a)) & set(terms(b))


def test_short_words_and_numbers_are_not_stemmed() -> None:
    assert stem("use") == "use"
    assert stem("2024") == "2024"
    assert terms("PostgreSQL 17")[-1] == "17"


def test_non_latin_scripts_survive() -> None:
    assert terms("東京 тест") == ["東京", "тест"]


def test_token_estimate_is_four_characters_a_token() -> None:
    assert estimate_tokens("") == 0
    assert estimate_tokens("abcd") == 1
    assert estimate_tokens("abcde") == 2
    assert estimate_tokens("x" * 4000) == 1000


def test_an_acronym_plural_is_the_acronym() -> None:
    assert terms("IDs") == terms("ID") == ["id"]
    assert terms("URLs") == terms("URL")
    assert terms("the PRs") == terms("the PR")
