"""The usage instructions install appends to an agent's CLAUDE.md / AGENTS.md, between
markers that let a second run find them and an uninstall remove exactly them; the same
for every agent."""

from __future__ import annotations

from importlib import resources
from pathlib import Path

from ihmt_cli._agent_plan import Step, file_step
from ihmt_cli._agent_setup import BEGIN_MARKER, END_MARKER

__all__ = ["instructions_block", "instructions_steps", "instructions_text"]


def instructions_text() -> str:
    """The usage instructions appended to CLAUDE.md / AGENTS.md (shipped in the package)."""
    source = resources.files("ihmt_cli").joinpath("templates", "memory-instructions.md")
    return source.read_text(encoding="utf-8")


def instructions_block() -> str:
    """The instructions between the markers that let a second run find them."""
    return f"{BEGIN_MARKER}\n{instructions_text().strip()}\n{END_MARKER}\n"


def _with_block(text: str, block: str) -> str:
    start, end = text.find(BEGIN_MARKER), text.find(END_MARKER)
    if start >= 0 and end > start:
        return text[:start] + block.rstrip("\n") + text[end + len(END_MARKER) :]
    if not text.strip():
        return block
    return text.rstrip("\n") + "\n\n" + block


def _without_block(text: str) -> str:
    start, end = text.find(BEGIN_MARKER), text.find(END_MARKER)
    if start < 0 or end < start:
        return text
    before, after = text[:start].rstrip("\n"), text[end + len(END_MARKER) :].lstrip("\n")
    if before and after:
        return before + "\n\n" + after
    return (before + "\n") if before else after


def instructions_steps(
    path: Path | None, *, install: bool, backups: list[str], unchanged: list[str]
) -> list[Step]:
    """Append (``install``) or remove the instructions in ``path``; nothing when already so
    (or when the client reads no instructions file: ``path`` None)."""
    if path is None:
        return []
    old = path.read_text(encoding="utf-8") if path.exists() else ""
    if install:
        new = _with_block(old, instructions_block())
        if new == old:
            unchanged.append(f"the memory instructions are already in {path}")
            return []
        verb = (
            "update the memory instructions in"
            if BEGIN_MARKER in old
            else "append the memory instructions to"
        )
        return [
            file_step(
                path,
                new,
                summary=f"{verb} {path}",
                preview=f"# {path}: append between the markers\n{instructions_block()}",
                backups=backups,
            )
        ]
    new = _without_block(old)
    if new == old:
        unchanged.append(f"no memory instructions in {path}")
        return []
    return [
        file_step(
            path,
            new if new.strip() else None,
            summary=f"remove the memory instructions from {path}"
            + ("" if new.strip() else " (it holds nothing else: delete the file)"),
            preview=f"# {path}: remove the block between the ihmt-memory markers",
            backups=backups,
        )
    ]
