"""A folder of dated journals is a memory: every entry ingested is found by its own fact.

Three hundred dated one-line entries of ``_memories.py`` (decisions, hosts, people,
preferences, corrections), oldest first, spread over five journal files the way a person
keeps them (one a year, headed, a blank line here and there), are ingested as a user
would (``Memory.ingest`` of the folder). Then, for every entry, a search for the detail
only that entry holds (a ticket, a port, a badge number…) must answer with that entry
first: nothing lost, nothing packed with a neighbour so that another entry wins. The one
exception is the rule for corrections: an entry the store holds as OUTDATED comes after
the entry that corrected it, flagged, with the correction relayed.
"""

from __future__ import annotations

import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))

from _memories import generate

from ihmt_mcp import Memory

ENTRIES = 300
FILES = 5


def _journal(folder: Path) -> list[tuple[str, str]]:
    """Write the journal folder; ``(line, unique detail)`` of every entry."""
    memories = sorted(generate(ENTRIES, 3).memories, key=lambda m: m.date)
    entries = [(f"{m.date} {' '.join(m.text.split())}", m.unique) for m in memories]
    folder.mkdir()
    per = -(-len(entries) // FILES)
    for part in range(FILES):
        lines = [line for line, _ in entries[part * per : (part + 1) * per]]
        body = "\n".join(
            f"{line}\n" if k % 7 == 6 else line for k, line in enumerate(lines)
        )  # a blank line now and then, as a person leaves them
        (folder / f"journal-{part + 1}.md").write_text(
            f"# Journal, book {part + 1}\n\n{body}\n", encoding="utf-8"
        )
    return entries


def test_every_entry_of_a_journal_folder_is_found_first_by_its_own_fact(tmp_path: Path) -> None:
    entries = _journal(tmp_path / "journal")
    memory = Memory.init(tmp_path / "store", semantic="off")
    try:
        report = memory.ingest([tmp_path / "journal"], project="")
        assert report.skipped == () and report.files == FILES
        assert ENTRIES <= report.leaves <= ENTRIES + FILES  # one memory an entry
        missed, after_correction = [], 0
        for line, unique in entries:
            result = memory.search(f"what did I note about {unique}?", project="")
            hits = [hit for hit in result.results if line in hit.content.splitlines()]
            if hits and hits[0] is result.results[0]:
                continue
            if hits and hits[0].outdated and any(hits[0].id in n for n in result.notices):
                after_correction += 1
                continue
            best = result.results[0].content if result.results else ""
            missed.append((unique, result.status, best[:80]))
        assert missed == [], f"{len(missed)} of {len(entries)} entries not found first"
        assert after_correction <= ENTRIES // 20
    finally:
        memory.close()
