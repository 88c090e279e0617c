"""What ``save(..., replaces=...)`` tells the agent: the memory it marked OUTDATED, or the
candidates it found and why it marked none.

The sentences are addressed to an agent relaying them to its user; each names the exact
``mark_outdated`` call that finishes or undoes the job.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence

from ihmt_mcp._records import ReplaceOutcome
from ihmt_navigator import CorrectionMatch, Hit
from ihmt_store import one_line

__all__ = ["REPLACED", "hint_of", "settle_replace"]

REPLACED = "replaced: "
"""How the reason of a ``replaces=`` correction starts; the hint follows."""

Supersede = Callable[[str, str, str, str], object]
"""``supersede(old_id, new_id, reason, hint)``: flag ``old_id`` OUTDATED by ``new_id``;
``hint`` describes the part of it that changed."""


def settle_replace(
    found: CorrectionMatch, new_ids: tuple[str, ...], words: str, supersede: Supersede
) -> ReplaceOutcome:
    """Mark the memories the hint ``words`` describes (through ``supersede``), or mark
    nothing and list the candidates."""
    new_id = new_ids[0]
    hint = one_line(words, 120)
    targets = [h for h in found.targets if h.id not in new_ids]
    others = [h for h in found.candidates if h.id not in new_ids]
    if found.status == "ambiguous":
        lines = [
            f'REPLACES: {len(others)} earlier memories fit "{hint}" about equally well, so '
            "none was marked (a wrong mark would hide a true memory). Ask the user which "
            "one this corrects (or pick the obvious one), then make that call:"
        ]
        return ReplaceOutcome(
            status="ambiguous",
            candidates=tuple(h.id for h in others),
            message="\n".join([*lines, *_listing(others, new_id)]),
        )
    if found.status == "not_found" or not targets:
        lines = [
            f'REPLACES: no earlier memory of this project holds "{hint}", so nothing was '
            "marked OUTDATED. If one of these is the memory it corrects, make that call; "
            "otherwise find it with search_memory:"
            if others
            else f'REPLACES: no earlier memory of this project matches "{hint}", so nothing '
            "was marked OUTDATED. If one exists, find it with search_memory and call "
            f'mark_outdated(old_id="…", new_id="{new_id}").'
        ]
        return ReplaceOutcome(
            status="not_found",
            candidates=tuple(h.id for h in others),
            message="\n".join([*lines, *_listing(others, new_id)]),
        )
    for target in targets:
        supersede(target.id, new_id, f"{REPLACED}{words.strip()}"[:200], words.strip())
    marked = "; ".join(
        f'the memory of {t.timestamp[:10]} ({t.id}) "{one_line(t.excerpt or t.title, 110)}"'
        for t in targets
    )
    return ReplaceOutcome(
        status="replaced",
        replaced=tuple(t.id for t in targets),
        candidates=tuple(h.id for h in others),
        message=(
            f"REPLACED: {marked} {'is' if len(targets) == 1 else 'are'} now flagged "
            f"OUTDATED by {new_id}. If that is not what the user meant, tell them, then undo "
            f'it: mark_outdated(old_id="{targets[0].id}", new_id="{new_id}", undo=true) '
            f"(or the CLI's: ihmt restore {targets[0].id}), and mark the right one."
        ),
    )


def hint_of(reason: str) -> str:
    """The hint of a ``replaces=`` correction's reason ("" for another reason): what an
    export carries of it, so an import lists the correction as the save did."""
    return reason[len(REPLACED) :].strip() if reason.startswith(REPLACED) else ""


def _listing(hits: Sequence[Hit], new_id: str) -> list[str]:
    """One numbered line per candidate, with the call that marks it."""
    return [
        f"{number}. [{hit.timestamp[:10]}] {one_line(hit.excerpt or hit.title, 110)}"
        f"{' [already OUTDATED]' if hit.outdated else ''} → "
        f'mark_outdated(old_id="{hit.id}", new_id="{new_id}")'
        for number, hit in enumerate(hits, 1)
    ]
