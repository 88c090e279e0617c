from __future__ import annotations

import json
from pathlib import Path

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from ihmt_store import (
    Branch,
    ChildRef,
    Correction,
    CorruptFileError,
    Leaf,
    Root,
    Span,
    StoreConfig,
    leaf_id_for,
    normalize_timestamp,
    safe_domain,
)
from ihmt_store._files import (  # own package: allowed
    HEADER_END,
    HEADER_START,
    leaf_bytes,
    parse_branch,
    parse_leaf,
)
from ihmt_store.testing import make_leaf

PATH = Path("layer0/general/x.txt")


def test_leaf_ids_are_deterministic_in_domain_source_position_and_content() -> None:
    a = leaf_id_for(domain="personal", source="journal.txt", position=3, text="Moved to Valencia")
    b = leaf_id_for(domain="personal", source="journal.txt", position=3, text="Moved to Valencia")
    assert a == b
    assert a.startswith("L-personal-0003-")
    assert a != leaf_id_for(
        domain="personal", source="journal.txt", position=4, text="Moved to Valencia"
    )
    assert a != leaf_id_for(
        domain="personal", source="other.txt", position=3, text="Moved to Valencia"
    )
    assert a != leaf_id_for(
        domain="personal", source="journal.txt", position=3, text="Moved to Madrid"
    )


@pytest.mark.parametrize(
    ("given_value", "expected"),
    [
        ("2024-03-11", "2024-03-11T00:00:00Z"),
        ("2024-03-11T10:00", "2024-03-11T10:00:00Z"),
        ("2024-03-11T10:00:00Z", "2024-03-11T10:00:00Z"),
        ("2024-03-11T12:00:00+02:00", "2024-03-11T10:00:00Z"),
    ],
)
def test_timestamps_are_canonical_utc(given_value: str, expected: str) -> None:
    assert normalize_timestamp(given_value) == expected


def test_a_bad_timestamp_is_a_value_error() -> None:
    with pytest.raises(ValueError, match="ISO 8601"):
        normalize_timestamp("last tuesday")


def test_domains_become_folder_safe() -> None:
    assert safe_domain("Software.Java") == "software.java"
    assert safe_domain("../../etc") == "etc"
    with pytest.raises(ValueError, match="invalid domain"):
        safe_domain("///")


def test_leaf_ids_that_could_escape_the_folder_are_refused() -> None:
    with pytest.raises(ValueError, match="invalid leaf id"):
        Leaf(leaf_id="../x", text="t", timestamp="2024-01-01", domain="general")


unicode_text = st.text(
    alphabet=st.characters(blacklist_categories=("Cs",)), max_size=400
) | st.sampled_from(
    [
        "",
        "no trailing newline",
        "crlf\r\nlines\r\n",
        "lone\rcarriage",
        HEADER_START + "fake header\n" + HEADER_END + "more",
        "text\nIHMT-META>>>\nafter a fake end marker\n",
        "\ufeffBOM first",
        "emoji 🧠 and ñ and 東京\u2028separator",
    ]
)


@settings(max_examples=200, deadline=None)
@given(text=unicode_text, tags=st.lists(st.text(max_size=20), max_size=4))
def test_a_leaf_round_trips_byte_for_byte(text: str, tags: list[str]) -> None:
    leaf = make_leaf(text, tags=tuple(tags), extra={"note": text[:20]})
    data = leaf_bytes(leaf)
    back = parse_leaf(data, PATH)
    assert back == leaf
    assert back.text.encode("utf-8") == text.encode("utf-8")
    assert leaf_bytes(back) == data


def test_a_leaf_file_holds_no_annotations() -> None:
    # Format 2: the parent lives in the catalog and a correction in a note.
    leaf = make_leaf(
        "staging runs PostgreSQL 15",
        outdated_by=Correction(by="L-general-0000-abc", date="2026-02-03", reason="moved to 17"),
        span=Span(start_line=3, end_line=9),
        project="falcon",
        parent_id="N1-general-1",
    )
    data = leaf_bytes(leaf)
    assert b"parent_id" not in data and b"outdated_by" not in data
    back = parse_leaf(data, PATH)
    assert back == leaf.evolve(parent_id=None, outdated_by=None)


def test_a_format_1_header_still_reads_its_correction() -> None:
    # What the migration to format 2 turns into a note.
    leaf = make_leaf("staging runs PostgreSQL 15", span=Span(start_line=3, end_line=9),
                     project="falcon")  # fmt: skip
    head = {
        **leaf.header(),
        "parent_id": "N1-general-1",
        "outdated_by": {"leaf_id": "L-general-0000-abc", "date": "2026-02-03",
                        "reason": "moved to 17"},
    }  # fmt: skip
    data = ("<<<IHMT-META\n" + json.dumps(head) + "\nIHMT-META>>>\n" + leaf.text).encode()
    back = parse_leaf(data, PATH)
    assert back.parent_id == "N1-general-1"
    assert back.outdated_by == Correction(
        by="L-general-0000-abc", date="2026-02-03T00:00:00Z", reason="moved to 17"
    )
    assert back.is_outdated
    assert back.span == Span(start_line=3, end_line=9)
    assert back.project == "falcon"


def test_the_header_carries_the_checksum_of_the_text() -> None:
    leaf = make_leaf("hello")
    assert leaf.header()["checksum"].startswith("sha256:2cf24dba")


@pytest.mark.parametrize(
    ("data", "message"),
    [
        (b"plain text, no header", "no <<<IHMT-META header"),
        (b'<<<IHMT-META\n{"leaf_id": 1\n', "not closed"),
        (b"<<<IHMT-META\n{not json}\nIHMT-META>>>\ntext", "unreadable leaf header"),
        (b"<<<IHMT-META\n[]\nIHMT-META>>>\ntext", "not a JSON object"),
        (b'<<<IHMT-META\n{"leaf_id": "L-x"}\nIHMT-META>>>\ntext', "lacks"),
        (
            b'<<<IHMT-META\n{"leaf_id": "L-x", "timestamp": "soon", "domain": "d"}\nIHMT-META>>>\n',
            "invalid leaf header",
        ),
    ],
)
def test_a_malformed_leaf_names_its_file(data: bytes, message: str) -> None:
    with pytest.raises(CorruptFileError, match=message) as caught:
        parse_leaf(data, PATH)
    assert caught.value.path == PATH
    assert str(PATH) in str(caught.value)


def _branch() -> Branch:
    return Branch(
        node_id="N1-personal-abc",
        layer=1,
        domain="personal",
        title="Madrid → Valencia, 2024–2026",
        summary="Moved from Madrid to Valencia.",
        keywords=("valencia", "madrid"),
        children=(
            ChildRef(
                id="L-personal-0000-aaa",
                kind="leaf",
                title="Madrid",
                excerpt="I live in Madrid",
                keywords=("madrid",),
                time_start="2024-03-11T00:00:00Z",
                time_end="2024-03-11T00:00:00Z",
            ),
        ),
        time_start="2024-03-11T00:00:00Z",
        time_end="2026-02-03T00:00:00Z",
        leaf_count=1,
    )


def test_a_branch_round_trips_through_json() -> None:
    branch = _branch()
    back = parse_branch(
        __import__("json").dumps(branch.to_json()).encode(), Path("layers/1/x.json")
    )
    assert back == branch


def test_a_branch_missing_its_id_is_corrupt() -> None:
    with pytest.raises(CorruptFileError, match="lacks"):
        parse_branch(b'{"layer": 1}', Path("layers/1/x.json"))


def test_a_branch_below_layer_one_is_refused() -> None:
    with pytest.raises(ValueError, match="layer 1"):
        _branch().evolve(layer=0)


def test_the_root_round_trips() -> None:
    from ihmt_store import DomainTrunk

    root = Root(
        domains=(DomainTrunk(domain="personal", top=("N2-a",), leaves=40, branches=6, depth=2),),
        generation=7,
        updated="2026-01-01T00:00:00Z",
    )
    assert Root.from_json(root.to_json()) == root
    assert root.top_ids == ("N2-a",)


def test_config_keeps_unknown_keys_and_validates_known_ones() -> None:
    cfg = StoreConfig.from_json({"branch_factor": 4, "future_knob": [1, 2]})
    assert cfg.branch_factor == 4
    assert cfg.to_json()["future_knob"] == [1, 2]
    assert StoreConfig.from_json(cfg.to_json()) == cfg
    with pytest.raises(TypeError, match="branch_factor must be int"):
        StoreConfig.from_json({"branch_factor": "eight"})
    with pytest.raises(ValueError, match="at least 2"):
        StoreConfig(branch_factor=1)
    assert StoreConfig.from_json({"confidence_threshold": 1}).confidence_threshold == 1.0


def test_annotating_a_leaf_gives_what_a_full_copy_gives() -> None:
    """``evolve`` of annotations only skips revalidating the text: same record, same bytes,
    and a bad parent id is still refused."""
    from dataclasses import replace

    leaf = make_leaf("Staging runs PostgreSQL 16.", position=3)
    fix = Correction(by="L-general-0009-abc", date="2026-02-01")
    for changes in ({"parent_id": "N1-general-x"}, {"outdated_by": fix}, {"parent_id": None}):
        fast, full = leaf.evolve(**changes), replace(leaf, **changes)
        assert fast == full and leaf_bytes(fast) == leaf_bytes(full), changes
        assert fast is not leaf and leaf.parent_id is None and leaf.outdated_by is None
    with pytest.raises(ValueError, match="invalid parent id"):
        leaf.evolve(parent_id="../escape")
