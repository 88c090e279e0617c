"""Every memory's vector in memory, quantized, and one question's cosines with them.

The store keeps each vector as 512 float16 numbers (derived state). In memory they are
held as int8 codes with one float32 scale a row (a quarter of float32: 500,000 vectors
in 256 MB), and scored in two steps once there are many: a float32 *sketch* of every
row (its first :data:`SKETCH_DIMS` principal components, fitted on the rows themselves)
picks a shortlist, and the shortlist is scored exactly from the codes.

Scores are rounded to :data:`SCORE_DIGITS` decimals and ties go to the smaller id: the
last bits of a vector depend on the machine's arithmetic and on the batch it was
embedded in, and rounded scores with a fixed tie-break make the answers independent of
them (but for a cosine that falls on a rounding boundary).
"""

from __future__ import annotations

import contextlib
import threading
from collections.abc import Callable, Iterable, Mapping, Sequence
from typing import TYPE_CHECKING, Any

from ihmt_store import Store

if TYPE_CHECKING:
    import numpy as np
    from numpy.typing import NDArray

    from ihmt_navigator._semantic import Embedder

__all__ = ["BATCH", "SCORE_DIGITS", "Similarities", "VectorIndex", "space_of"]

BATCH = 64
"""Texts embedded together (and, in a backfill, memories written in one commit)."""
SCORE_DIGITS = 4
"""Decimals a cosine is rounded to before anything is ranked by it."""
SKETCH_FROM = 16_384
"""Rows from which a question is scored on the sketch first, the shortlist exactly;
below, every row is scored exactly."""
SKETCH_DIMS = 128
"""Principal components a row's sketch keeps."""
SKETCH_SAMPLE = 8192
"""Rows the principal components are fitted on (evenly spaced over all of them)."""
SHORTLIST = 1024
"""Rows the sketch hands to the exact scoring (at least four times those asked for)."""
PAGE = 16_384
"""Vectors read from the store at a time."""
SNAPSHOT_FROM = 4096
"""Rows from which the vectors are also kept as a snapshot (``_vector_snapshot``) that
a new process maps instead of reading the store's table; rewritten once this many rows
were read from the table since."""
_CODES = 127.0


def space_of(embedder: Embedder) -> str:
    """The derived-data space holding ``embedder``'s vectors."""
    return f"vectors/{embedder.name}"


class VectorIndex:
    """Every memory's vector, in memory, kept in step with the store.

    Args:
        store: the store whose derived table holds the vectors.
        embedder: the model; its name picks the space.
    """

    _basis: NDArray[np.float32] | None
    snapshot_from: int = SNAPSHOT_FROM
    """Rows from which the vectors are also kept as a snapshot a new process maps
    (:data:`SNAPSHOT_FROM`; a test may lower it on the class)."""

    def __init__(self, store: Store, embedder: Embedder) -> None:
        import numpy as np

        self.store = store
        self.embedder = embedder
        self.space = space_of(embedder)
        self._np = np
        self._lock = threading.Lock()
        self._clear()

    @staticmethod
    def drop_snapshots(store: Store) -> None:
        """Delete ``store``'s vector snapshots (after a memory is forgotten: its vector
        must not stay on disk in one); the next search writes them again."""
        from ihmt_navigator._vector_snapshot import drop_snapshots

        drop_snapshots(store)

    def _clear(self) -> None:
        np, dim = self._np, self.embedder.dim
        self._epoch: int | None = None
        self._seq = 0
        self._ids: list[str] = []
        self._row: dict[str, int] = {}
        self._codes = np.zeros((0, dim), dtype=np.int8)
        self._scale = np.zeros(0, dtype=np.float32)
        self._live = np.zeros(0, dtype=bool)
        self._basis = None  # None: the sketch is the vector itself
        self._fitted_at = 0
        self._fit_due = False
        self._asked = 0
        # Empty when there is neither a fit nor few enough rows to hold as float32.
        self._sketch = np.zeros((0, dim), dtype=np.float32)
        self._sketching = True

    # ------------------------------------------------------------------ writing
    def vectors_for(self, texts: Mapping[str, str]) -> dict[str, bytes]:
        """``item id → float16 bytes`` for ``texts`` (item id → text), ``BATCH`` at once.

        A vector's last bits depend on the batch it was embedded in and on the machine
        (its SIMD, the order of the sums): no two machines are promised the same bits.
        Search does not depend on them: cosines are rounded before ranking (see the
        module's docstring).
        """
        np = self._np
        items = list(texts)
        out: dict[str, bytes] = {}
        for start in range(0, len(items), BATCH):
            chunk = items[start : start + BATCH]
            block = self.embedder.embed([texts[item] for item in chunk]).astype(np.float16)
            out.update(zip(chunk, (row.tobytes() for row in block), strict=True))
        return out

    def write(self, texts: Mapping[str, str]) -> None:
        """Embed ``texts`` and store their vectors (under the store's lock)."""
        vectors = self.vectors_for(texts)
        if vectors:
            self.store.put_derived(self.space, vectors)

    def missing(self, leaf_ids: Iterable[str]) -> list[str]:
        """The leaves among ``leaf_ids`` that have no vector yet."""
        have = self.store.derived_ids(self.space)
        return [i for i in leaf_ids if i not in have]

    def backfill(
        self,
        read_text: Callable[[Sequence[str]], Mapping[str, str]],
        leaf_ids: Sequence[str],
        progress: Callable[[int, int], None] | None = None,
        *,
        stop: threading.Event | None = None,
    ) -> int:
        """Embed the leaves of ``leaf_ids`` that lack a vector, ``BATCH`` at a time (one
        commit each); ``stop`` ends it between two batches."""
        todo = self.missing(leaf_ids)
        done = 0
        for start in range(0, len(todo), BATCH):
            if stop is not None and stop.is_set():
                break
            chunk = todo[start : start + BATCH]
            self.write(read_text(chunk))
            done += len(chunk)
            if progress is not None:
                progress(done, len(todo))
        return done

    # ------------------------------------------------------------------ reading
    def refresh(self) -> None:
        """Catch up with the vectors written since the last look (by any process); a
        first look starts from the snapshot when there is one (``_vector_snapshot``)."""
        with self._lock:
            if self._epoch is None:
                self._from_snapshot()
            read = removed = 0
            while True:  # a page at a time: a first load of 500,000 stays small
                changes = self.store.derived_changes(self.space, self._epoch, self._seq, limit=PAGE)
                if changes.reset:
                    self._clear()
                if changes.rows:
                    self._apply(changes.rows)
                    read += len(changes.rows)
                    removed += sum(data is None for _, data in changes.rows)
                self._epoch, self._seq = changes.epoch, changes.seq
                if len(changes.rows) < PAGE:
                    break
            # A forgotten memory's vector is not left in the snapshot either.
            every = self.snapshot_from
            if (read >= every and len(self._ids) >= every) or removed:
                self._snapshot()

    def _from_snapshot(self) -> None:
        """Hold the snapshot's rows, as loading them from the table would have left them."""
        from ihmt_navigator._vector_snapshot import read_snapshot

        snap = read_snapshot(self.store, self.space, self.embedder.dim)
        if snap is None:
            return
        np = self._np
        self._ids = snap.ids
        self._row = {item: row for row, item in enumerate(snap.ids)}
        self._codes, self._scale, self._live = snap.codes, snap.scale, snap.live
        self._epoch, self._seq = snap.epoch, snap.seq
        if int(self._live.sum()) >= SKETCH_FROM:
            self._fit_due = True
            self._sketch = np.zeros((0, self.embedder.dim), dtype=np.float32)
            self._sketching = False
        elif len(snap.ids):
            self._sketch = self._sketched(snap.codes, snap.scale)

    def _snapshot(self) -> None:
        from ihmt_navigator._vector_snapshot import drop_snapshots, write_snapshot

        if len(self._ids) < self.snapshot_from or self._epoch is None:
            drop_snapshots(self.store)
            return
        n = len(self._ids)
        position = (self._epoch, self._seq)
        write_snapshot(self.store, self.space, position, self._ids, self._codes[:n],
                       self._scale[:n], self._live[:n])  # fmt: skip

    def _grow(self, need: int) -> None:
        """Room for ``need`` rows, growing by half again: a save costs no full copy."""
        np = self._np
        if need <= len(self._codes):
            return
        capacity = max(need, len(self._codes) * 3 // 2, 256)
        used = len(self._ids)

        def grown(old: Any, width: int | None) -> Any:
            shape = (capacity,) if width is None else (capacity, width)
            new = np.zeros(shape, dtype=old.dtype)
            new[:used] = old[:used]
            return new

        self._codes = grown(self._codes, self.embedder.dim)
        self._scale = grown(self._scale, None)
        self._live = grown(self._live, None)
        if self._sketching:
            self._sketch = grown(self._sketch, self._sketch.shape[1])

    def _apply(self, rows: Sequence[tuple[str, bytes | None]]) -> None:
        np = self._np
        dim = self.embedder.dim
        fresh = list(
            dict.fromkeys(item for item, data in rows if data is not None and item not in self._row)
        )
        if fresh:
            start = len(self._ids)
            self._grow(start + len(fresh))
            for k, item in enumerate(fresh):
                self._row[item] = start + k
            self._ids.extend(fresh)
        # One conversion for every row that brings a vector (a first load reads them all
        # at once); a later row for the same item wins, as it was written later.
        index = self._row
        final = {index[item]: data for item, data in rows if item in index}
        size = 2 * dim
        targets = {row: data for row, data in final.items() if data and len(data) == size}
        gone = [row for row in final if row not in targets]
        if gone:
            self._live[np.asarray(gone, dtype=np.int64)] = False
        at = np.fromiter(targets, dtype=np.int64, count=len(targets))
        if len(at):
            block = np.frombuffer(b"".join(targets.values()), dtype=np.float16)
            self._store_rows(at, block.reshape(len(at), dim).astype(np.float32))
        self._live[at] = True
        live = int(self._live[: len(self._ids)].sum())
        if live >= SKETCH_FROM and live >= 8 * max(self._fitted_at, SKETCH_FROM // 8):
            # Fitted on the second question, not on loading: a process that asks one
            # (a one-shot ``ihmt search``) scores exactly and never pays for the fit.
            self._fit_due = True
            if self._basis is None and self._sketching:  # too many rows to hold as float32
                self._sketch = np.zeros((0, dim), dtype=np.float32)
                self._sketching = False

    def _store_rows(self, at: NDArray[np.int64], block: NDArray[np.float32]) -> None:
        """Quantize ``block`` (one vector a row) into the rows ``at``, and sketch them."""
        np = self._np
        peak = np.abs(block).max(axis=1)
        scale = np.where(peak > 0, peak / _CODES, 1.0).astype(np.float32)
        codes = np.rint(block / scale[:, None]).astype(np.int8)
        self._codes[at] = codes
        self._scale[at] = scale
        if self._sketching:
            self._sketch[at] = self._sketched(codes, scale)

    def _sketched(self, codes: Any, scale: Any) -> Any:
        """The sketch of quantized rows: the vectors, or their principal components."""
        exact = codes.astype(self._np.float32) * scale[:, None]
        return exact if self._basis is None else exact @ self._basis

    def _fit(self, live: int) -> None:
        """Fit the sketch's components on an even sample of the rows, and sketch them all.
        Due when the rows first reach :data:`SKETCH_FROM`, then each time they grow
        eightfold (a growing store is sketched a few times in its life), and done on the
        next question but the first."""
        np = self._np
        used = len(self._ids)
        rows = np.flatnonzero(self._live[:used])
        sample = rows[:: max(1, len(rows) // SKETCH_SAMPLE)]
        x = self._codes[sample].astype(np.float32) * self._scale[sample, None]
        # Uncentred: the components that keep most of the rows' dot products.
        _values, vectors = np.linalg.eigh(x.T @ x)
        self._basis = np.ascontiguousarray(vectors[:, ::-1][:, :SKETCH_DIMS], dtype=np.float32)
        sketch = np.zeros((len(self._codes), SKETCH_DIMS), dtype=np.float32)
        for begin in range(0, used, 8192):
            end = min(used, begin + 8192)
            sketch[begin:end] = self._sketched(self._codes[begin:end], self._scale[begin:end])
        self._sketch = sketch
        self._sketching = True
        self._fitted_at = live
        self._fit_due = False

    @property
    def size(self) -> int:
        return int(self._live[: len(self._ids)].sum())

    def query(self, text: str) -> Similarities:
        """Meaning's view of ``text``: every stored memory's cosine with it."""
        from ihmt_navigator._semantic import _one_blas_thread

        self.refresh()
        np = self._np
        vector = self.embedder.embed([text])[0].astype(np.float32)
        with self._lock, _one_blas_thread():
            n = len(self._ids)
            self._asked += 1
            if self._fit_due and self._asked > 1:
                self._fit(int(self._live[:n].sum()))
            sketched = self._basis is not None
            codes, scale = self._codes, self._scale
            if not self._sketching:  # no sketch yet: every row exactly, a slice at a time
                rough = np.empty(n, dtype=np.float32)
                for begin in range(0, n, 8192):
                    end = min(n, begin + 8192)
                    block = codes[begin:end].astype(np.float32) @ vector
                    rough[begin:end] = block * scale[begin:end]
            else:
                probe = vector @ self._basis if self._basis is not None else vector
                rough = self._sketch[:n] @ probe
            rough[~self._live[:n]] = -np.inf

        def exact(rows: Any) -> Any:
            if not sketched:  # the sketch is the vectors themselves
                return np.round(rough[rows].astype(np.float64), SCORE_DIGITS)
            # One row is one dot product, which BLAS never splits: no limit to set (its
            # setting costs more than the product).
            limit = _one_blas_thread() if len(rows) > 1 else contextlib.nullcontext()
            with limit:
                cos = (codes[rows].astype(np.float32) @ vector) * scale[rows]
            return np.round(cos.astype(np.float64), SCORE_DIGITS)

        # The id list and row map only ever grow: rows past ``n`` are not this answer's.
        return Similarities(self._ids, self._row, rough, exact, wide=sketched)


class Similarities:
    """One question's cosine with every memory that has a vector, rounded to
    :data:`SCORE_DIGITS` decimals.

    ``rough`` is every row's score on the sketch (``-inf`` for a row without a vector);
    ``exact`` scores the rows it is given from the vectors themselves; ``wide``: the
    sketch is an approximation, so a shortlist of :data:`SHORTLIST` is scored exactly."""

    def __init__(
        self,
        ids: list[str],
        rows: dict[str, int],
        rough: NDArray[np.float32],
        exact: Callable[[Any], Any],
        *,
        wide: bool = False,
    ) -> None:
        import numpy as np

        self._np = np
        self._ids = ids
        self._rows = rows
        self._rough = rough
        self._exact = exact
        self._wide = wide
        self._count: int | None = None
        self._ranked: list[tuple[str, float]] = []
        """The longest :meth:`top` list made so far: a shorter one is its head."""
        self._cosines: dict[str, float | None] = {}
        """What :meth:`of` answered so far (a search asks it of each candidate two or
        three times: fusion, the nearest, the signals)."""

    def __len__(self) -> int:
        if self._count is None:
            self._count = int(self._np.isfinite(self._rough).sum())
        return self._count

    def top(self, k: int) -> list[tuple[str, float]]:
        """The ``k`` nearest memories, nearest first (equal scores: the smaller id first).
        A search asks more than once (its candidates, then its signals): a list no
        longer than one already made is that one's head, not a second pass."""
        np = self._np
        rough = self._rough
        k = min(k, len(self))
        if k <= 0:
            return []
        if k <= len(self._ranked):
            return self._ranked[:k]
        # A margin past ``k``, so that the memories tied with the k-th are all weighed.
        want = k + 64
        wide = max(SHORTLIST, 4 * k) if self._wide else want
        part = _best(np, rough, wide)
        part = part[np.isfinite(rough[part])]
        scores = self._exact(part)
        if len(part) > want:
            keep = _best(np, scores, want)
            part, scores = part[keep], scores[keep]
        ids = self._ids
        # Ties by id, not by row: rows follow the order memories reached this machine.
        order = sorted(
            zip(scores.tolist(), part.tolist(), strict=True), key=lambda p: (-p[0], ids[p[1]])
        )
        self._ranked = [(ids[row], score) for score, row in order[:k]]
        return list(self._ranked)

    @property
    def lowest(self) -> float:
        """The lowest cosine of any memory (the zero of a min-max scale): on the sketch,
        so close to the exact one once there are many."""
        finite = self._rough[self._np.isfinite(self._rough)]
        return round(float(finite.min()), SCORE_DIGITS) if finite.size else 0.0

    def of(self, item_id: str) -> float | None:
        """``item_id``'s cosine, or None when it has no vector."""
        if item_id in self._cosines:
            return self._cosines[item_id]
        np = self._np
        row = self._rows.get(item_id)
        cosine = None
        if row is not None and row < len(self._rough) and np.isfinite(self._rough[row]):
            cosine = float(self._exact(np.asarray([row], dtype=np.int64))[0])
        self._cosines[item_id] = cosine
        return cosine


def _best(np: Any, scores: Any, count: int) -> Any:
    """The positions of the ``count`` highest of ``scores``, in no order."""
    if count >= len(scores):
        return np.arange(len(scores))
    return np.argpartition(-scores, count - 1)[:count]
