"""The records ``Memory`` returns."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from ihmt_mcp._types import DataType, ItemKind, ReplaceStatus

__all__ = [
    "CorrectionRecord",
    "FiledAs",
    "ForgetResult",
    "IngestReport",
    "MemoryStats",
    "ReplaceOutcome",
    "RestoreResult",
    "SaveResult",
    "TreeItem",
]


@dataclass(frozen=True, slots=True, kw_only=True)
class FiledAs:
    """How a save was classified."""

    doc_type: DataType
    """``GENERIC``, ``PERSONAL``, ``TEMPORAL``, ``PROCESS``, ``NARRATIVE`` or ``CODE``."""
    domain: str
    tags: tuple[str, ...] = ()
    """Kind and name tags from detection (``kind:decision``, ``project:falcon``…)."""

    def to_json(self) -> dict[str, Any]:
        return {"type": self.doc_type, "domain": self.domain, "tags": list(self.tags)}


@dataclass(frozen=True, slots=True, kw_only=True)
class ReplaceOutcome:
    """What ``save(..., replaces="…")`` did with the earlier memory those words describe."""

    status: ReplaceStatus
    """``replaced`` (one clear match, now OUTDATED), ``ambiguous`` (several candidates: nothing
    changed; settle with ``mark_outdated``), ``not_found``, or ``none`` (no ``replaces``)."""
    replaced: tuple[str, ...] = ()
    """Ids flagged OUTDATED by the new memory."""
    candidates: tuple[str, ...] = ()
    """The other memories the words fit, best first (for ``ambiguous`` and ``not_found``:
    the ids to choose from with ``mark_outdated``)."""
    message: str = ""
    """One paragraph to relay, with the exact ``mark_outdated`` call when ambiguous."""

    def to_json(self) -> dict[str, Any]:
        return {
            "status": self.status,
            "replaced": list(self.replaced),
            "candidates": list(self.candidates),
            "message": self.message,
        }


@dataclass(frozen=True, slots=True, kw_only=True)
class SaveResult:
    """What one save did."""

    ids: tuple[str, ...]
    """The new memory's leaf ids (one per block; usually one)."""
    filed_as: FiledAs
    project: str
    """The project recorded on the memory (empty: global)."""
    timestamp: str
    """The date the memory is filed under."""
    notices: tuple[str, ...] = ()
    """Contradictions with earlier facts, to relay to the user."""
    replaced: ReplaceOutcome = ReplaceOutcome(status="none")
    branches_created: int = 0

    def to_json(self) -> dict[str, Any]:
        return {
            "ids": list(self.ids),
            "filed_as": self.filed_as.to_json(),
            "project": self.project,
            "timestamp": self.timestamp,
            "notices": list(self.notices),
            "replaced": self.replaced.to_json(),
        }

    def render(self) -> str:
        """The text ``save_memory`` hands an agent."""
        tags = ", ".join(t for t in self.filed_as.tags if t.startswith("kind:"))
        where = f"{self.filed_as.domain} ({self.filed_as.doc_type.lower()}"
        where += f"; {tags})" if tags else ")"
        scope = f"project {self.project}" if self.project else "global (no project)"
        noun = "memory" if len(self.ids) == 1 else f"memory in {len(self.ids)} parts"
        out = [
            f"SAVED {noun} {', '.join(self.ids)} · filed as {where} · {scope} · "
            f"dated {self.timestamp[:10]}"
        ]
        for notice in self.notices:
            out.append(f"CONTRADICTION (tell the user): {notice}")
        if self.replaced.status != "none" and self.replaced.message:
            out.append(self.replaced.message)
        return "\n".join(out)


@dataclass(frozen=True, slots=True, kw_only=True)
class CorrectionRecord:
    """A correction the user made (``replaces=`` or ``mark_outdated``): one memory flagged
    OUTDATED by a later one. A change in the timeline even when no fact rule read either."""

    old_id: str
    old_date: str
    old_text: str
    """The corrected memory's first words."""
    new_id: str
    new_date: str
    """When the correction was dated (the correcting memory's date)."""
    new_text: str
    project: str = ""
    reason: str = ""

    @property
    def notice(self) -> str:
        """The sentence to show, like a fact's contradiction notice."""
        on = f" on {self.new_date[:10]}" if self.new_date else ""
        said = f'On {self.old_date[:10]} you said "{self.old_text}", but{on} you corrected it'
        if not self.new_text:  # the correcting memory is not in this store (not synced yet)
            return f"{said} ({self.old_id} → {self.new_id}, not in this store)."
        return f'{said}: "{self.new_text}" ({self.old_id} → {self.new_id}).'

    def to_json(self) -> dict[str, Any]:
        return {
            "old_id": self.old_id,
            "old_date": self.old_date,
            "old_text": self.old_text,
            "new_id": self.new_id,
            "new_date": self.new_date,
            "new_text": self.new_text,
            "project": self.project,
            "reason": self.reason,
            "notice": self.notice,
        }


@dataclass(frozen=True, slots=True, kw_only=True)
class RestoreResult:
    """What undoing a correction did (``Memory.restore``)."""

    id: str
    """The memory that is current again (or was never flagged)."""
    restored: bool
    """False when it was not flagged OUTDATED: nothing changed."""
    corrected_by: str | None = None
    """The memory whose OUTDATED mark was removed."""
    corrected_on: str | None = None
    """When that correction had been dated."""
    reason: str = ""
    """Why the mark had been set (``replaced: …`` for a ``replaces=`` save)."""

    def to_json(self) -> dict[str, Any]:
        return {
            "id": self.id,
            "restored": self.restored,
            "corrected_by": self.corrected_by,
            "corrected_on": self.corrected_on,
            "reason": self.reason,
            "message": self.render(),
        }

    def render(self) -> str:
        """One sentence saying what changed."""
        if not self.restored:
            return f"{self.id} was not flagged OUTDATED; nothing changed."
        return (
            f"RESTORED: {self.id} is current again; the OUTDATED mark set by {self.corrected_by} "
            f"on {(self.corrected_on or '')[:10]} is gone. Both memories are kept; searches no "
            "longer relay that correction."
        )


@dataclass(frozen=True, slots=True, kw_only=True)
class ForgetResult:
    """What ``forget`` removed (described without quoting the memory)."""

    id: str
    domain: str
    project: str
    timestamp: str
    characters: int
    """Size of the removed text."""
    branches_refreshed: tuple[str, ...] = ()
    """Summaries above it that were rewritten so no excerpt of it survives."""
    facts_removed: int = 0
    corrections_cleared: int = 0
    """Older memories it had flagged OUTDATED, which are current again."""
    reason: str = ""
    in_git_history: bool = False
    """True when the store is synced with git (``ihmt sync``): the memory is gone from
    the files, and still lives in the repository's history until it is purged."""

    def to_json(self) -> dict[str, Any]:
        return {
            "id": self.id,
            "domain": self.domain,
            "project": self.project,
            "timestamp": self.timestamp,
            "characters": self.characters,
            "branches_refreshed": list(self.branches_refreshed),
            "facts_removed": self.facts_removed,
            "corrections_cleared": self.corrections_cleared,
            "in_git_history": self.in_git_history,
        }

    def render(self) -> str:
        """The text ``forget_memory`` hands an agent."""
        scope = f"project {self.project}" if self.project else "global"
        out = (
            f"FORGOTTEN {self.id}: a {self.characters:,}-character memory dated "
            f"{self.timestamp[:10]} in {self.domain} ({scope}) was deleted from disk"
        )
        extras = []
        if self.branches_refreshed:
            extras.append(f"{len(self.branches_refreshed)} summary branch(es) rewritten without it")
        if self.facts_removed:
            extras.append(f"{self.facts_removed} fact(s) drawn from it dropped")
        if self.corrections_cleared:
            extras.append(
                f"{self.corrections_cleared} memory(ies) it had corrected are current again"
            )
        if extras:
            out += "; " + "; ".join(extras)
        out += ". It cannot be recovered."
        if self.in_git_history:
            out += (
                " This memory is synced with git: every machine drops it on its next sync, "
                "but it still lives in the git history (here, on the remote and in every "
                f"clone). To erase it from the history too, run 'ihmt sync --purge {self.id}'."
            )
        return out


@dataclass(frozen=True, slots=True, kw_only=True)
class IngestReport:
    """What ``ingest`` stored."""

    files: int
    """Files (or texts) read."""
    leaves: int
    """Leaves written (unchanged ones included)."""
    skipped: tuple[tuple[str, str], ...] = ()
    """(path, reason) for every file left out: binary, too large, holds a secret…"""
    notices: tuple[str, ...] = ()
    """Facts the new memories changed (a CONTRADICTION each)."""
    branches_created: int = 0
    warnings: tuple[str, ...] = ()
    """Problems that did not stop an item: front matter kept as text, an encoding guessed,
    facts or corrections of an import left out."""

    def merged(self, other: IngestReport) -> IngestReport:
        """This report and ``other`` added up (an import and an ingest in one call)."""
        return IngestReport(
            files=self.files + other.files,
            leaves=self.leaves + other.leaves,
            skipped=(*self.skipped, *other.skipped),
            notices=tuple(dict.fromkeys((*self.notices, *other.notices))),
            branches_created=self.branches_created + other.branches_created,
            warnings=tuple(dict.fromkeys((*self.warnings, *other.warnings))),
        )

    def to_json(self) -> dict[str, Any]:
        return {
            "files": self.files,
            "leaves": self.leaves,
            "skipped": [{"path": p, "reason": r} for p, r in self.skipped],
            "notices": list(self.notices),
            "warnings": list(self.warnings),
            "branches_created": self.branches_created,
        }


@dataclass(frozen=True, slots=True, kw_only=True)
class MemoryStats:
    """Totals of a memory (``ihmt stats``)."""

    leaves: int
    branches: int
    depth: int
    domains: tuple[tuple[str, int], ...]
    """(domain, leaves), sorted by domain."""
    unconsolidated: int
    unreachable: int
    """Items the trunk cannot reach; always 0 in a healthy store."""
    outdated: int
    bytes: int
    generation: int
    path: str

    def to_json(self) -> dict[str, Any]:
        return {
            "leaves": self.leaves,
            "branches": self.branches,
            "depth": self.depth,
            "domains": dict(self.domains),
            "unconsolidated": self.unconsolidated,
            "unreachable": self.unreachable,
            "outdated": self.outdated,
            "bytes": self.bytes,
            "generation": self.generation,
            "path": self.path,
        }


@dataclass(frozen=True, slots=True, kw_only=True)
class TreeItem:
    """One line of the tree outline."""

    level: int
    """0 for what the trunk references directly."""
    id: str
    kind: ItemKind
    domain: str
    title: str
    leaf_count: int
    outdated: bool = False
