"""Reading an ingest's files on another core: one worker process reads, checks for secrets
and splits the next files, and runs the fact rules over their memories, while this one
stores the previous ones.

Reading, splitting and the fact rules are about a third of a bulk ingest's work and
depend on nothing stored, so a folder of notes is read a few files ahead by a worker
process (spawned: it shares no open file, lock or thread with this one), in the walk's
order; its leaves are stored here exactly as if this process had read them, and the
timeline uses what the rules found (``Timeline.prepare``) instead of running them again.

The worker is forked, and only from a process running one thread (the command line's
``ingest``): a fork copies no other thread's half-held lock, and unlike a spawned process
it does not import the caller's main script again (a script without a ``__main__`` guard
would run twice). With other threads running (the MCP server, the web interface), or
where a fork cannot be had, or when the worker dies, the files are read here instead:
the result is the same, only slower. The worker reads files and nothing else: it never
touches the store, whose open files it inherits.
"""

from __future__ import annotations

import logging
import multiprocessing
import threading
from collections import deque
from collections.abc import Sequence
from concurrent.futures import Future, ProcessPoolExecutor
from concurrent.futures.process import BrokenProcessPool
from pathlib import Path
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from ihmt_facts import Extraction, Pattern
    from ihmt_mcp._ingest import IngestOptions
    from ihmt_store import Leaf, StoreConfig

logger = logging.getLogger(__name__)

__all__ = ["READ_AHEAD_BYTES", "ReadAhead", "read_file"]

READ_AHEAD_BYTES = 1024 * 1024
"""Files of at least this many bytes in all (and two files or more) are read by a worker;
fewer are read faster than a process starts."""
WINDOW = 16
"""Files read ahead of the one being stored (a group of an ingest can be a few
hundred small files: the worker reads on while this process commits one)."""

Found = dict[str, tuple[tuple[str, str, tuple[str, ...]], tuple["Extraction", ...]]]
"""What the fact rules found in each leaf, by id, with the (text, project, tags) they read:
what ``Timeline.prepare`` takes."""
Read = tuple[list["Leaf"], list[tuple[str, str]], list[str], Found]
"""A file's leaves, why it was skipped (if it was), what was done to read it, and what
the fact rules found in its leaves (when rules were given)."""


def read_file(
    config: StoreConfig,
    options: IngestOptions,
    name: str,
    full: Path,
    patterns: Sequence[Pattern] | None = None,
) -> Read:
    """What ``_Reader.whole`` gives for one file, with its own skip and warning lists,
    and what ``patterns`` find in each leaf but code."""
    from ihmt_facts import extract
    from ihmt_mcp._ingest import _Reader

    skipped: list[tuple[str, str]] = []
    reader = _Reader(config=config, options=options, skipped=skipped)
    leaves = reader.whole(name, full, None)
    found: Found = {}
    if patterns is not None:
        for leaf in leaves:
            if leaf.data_type != "CODE":
                key = (leaf.text, leaf.project, tuple(leaf.tags))
                found[leaf.leaf_id] = (key, extract(leaf.text, project=leaf.project,
                                                    tags=leaf.tags, patterns=patterns))  # fmt: skip
    return leaves, skipped, reader.warnings, found


class ReadAhead:
    """The files ``jobs`` (name, path), read in order by a worker process, a few ahead:
    :meth:`take` returns each one's :data:`Read` in turn, with what ``patterns`` (the
    timeline's rules) found in its leaves."""

    def __init__(
        self,
        config: StoreConfig,
        options: IngestOptions,
        jobs: Sequence[tuple[str, Path]],
        patterns: Sequence[Pattern] | None = None,
    ) -> None:
        self._config = config
        self._options = options
        self._patterns = None if patterns is None else tuple(patterns)
        self._jobs = deque(jobs)
        self._waiting: deque[tuple[str, Path, Future[Read] | None]] = deque()
        self._pool: ProcessPoolExecutor | None = None
        if threading.active_count() > 1:
            logger.info("reading the files here: other threads run in this process")
        elif "fork" not in multiprocessing.get_all_start_methods():
            logger.info("reading the files here: no fork on this system")
        else:
            try:
                self._pool = ProcessPoolExecutor(
                    max_workers=1, mp_context=multiprocessing.get_context("fork")
                )
            except (OSError, ValueError) as exc:
                logger.info("reading the files here: no worker process (%s)", exc)
        self._top_up()

    def _top_up(self) -> None:
        while self._jobs and len(self._waiting) < WINDOW:
            name, full = self._jobs.popleft()
            future = None
            if self._pool is not None:
                try:
                    future = self._pool.submit(
                        read_file, self._config, self._options, name, full, self._patterns
                    )
                except (BrokenProcessPool, RuntimeError) as exc:
                    logger.info("reading the files here: the worker stopped (%s)", exc)
                    self._pool = None
            self._waiting.append((name, full, future))

    def take(self, name: str, full: Path) -> Read:
        """The next file's :data:`Read` (it must be ``name`` at ``full``, the next job)."""
        queued, path, future = self._waiting.popleft()
        if (queued, path) != (name, full):
            raise ValueError(f"read ahead out of order: {name} asked, {queued} read")
        result: Read | None = None
        if future is not None:
            try:
                result = future.result()
            except BrokenProcessPool as exc:
                logger.info("reading the files here: the worker died (%s)", exc)
                self._pool = None
        if result is None:
            result = read_file(self._config, self._options, name, full)  # no rules: here
        self._top_up()
        return result

    @property
    def forked(self) -> bool:
        """True while a worker process reads the files (False: they are read here)."""
        return self._pool is not None

    def close(self) -> None:
        if self._pool is not None:
            self._pool.shutdown(wait=False, cancel_futures=True)
            self._pool = None
