"""The one place the environment is read: a frozen :class:`Settings`."""

from __future__ import annotations

import os
from collections.abc import Mapping
from dataclasses import dataclass, field
from pathlib import Path

__all__ = ["STORE_FOLDER", "PROJECTS_FOLDER", "Settings", "find_project_root"]

STORE_FOLDER = "ihmt_memory"
PROJECTS_FOLDER = "ihmt_projects"


def find_project_root(start: Path) -> Path | None:
    """The git root at or above ``start`` (a folder holding ``.git``), or None."""
    try:
        here = start.expanduser().resolve()
    except OSError:
        return None
    for folder in (here, *here.parents):
        if (folder / ".git").exists():
            return folder
    return None


@dataclass(frozen=True, slots=True, kw_only=True)
class Settings:
    """Where the memory lives and which project a session works in.

    Build it with :meth:`from_env`; everything else in the package takes explicit
    arguments.
    """

    home: Path
    """``$IHMT_HOME``, default ``~/.ihmt``."""
    store_path: Path
    """The memory store: ``$IHMT_HOME/ihmt_memory``."""
    projects_dir: Path
    """Private per-codebase index stores: ``$IHMT_PROJECTS_DIR`` or ``$IHMT_HOME/ihmt_projects``."""
    cwd: Path = field(default_factory=Path.cwd)
    """The working directory: its git root names the project when the client gives none."""
    project: str | None = None
    """``$IHMT_PROJECT``: forces the project name of saves and searches (empty = global)."""
    log_level: str = "WARNING"
    """``$IHMT_LOG_LEVEL`` for the server's stderr log."""
    semantic: str = "auto"
    """``$IHMT_SEMANTIC``: ``auto`` (meaning as well as words when the extra is installed),
    ``on`` (the same) or ``off`` (words only)."""
    semantic_model: str = ""
    """``$IHMT_SEMANTIC_MODEL``: empty for the shipped encoder, or ``model2vec:<folder or
    hub id>`` for a Model2Vec static model (the ``[model2vec]`` extra)."""
    cache_dir: Path | None = None
    """Where the loaded sentence encoder is kept for the next process: ``$IHMT_CACHE_DIR``,
    else the user's cache folder (``$XDG_CACHE_HOME/ihmt``, ``~/.cache/ihmt``;
    ``%LOCALAPPDATA%\\ihmt\\cache`` on Windows). Never inside the memory folder."""
    sync_every: str = ""
    """``$IHMT_SYNC_EVERY``: how often the MCP server syncs the memory with its git remote
    in the background (``10m``, ``1h``; empty or ``off``: never, the default). Only a
    memory set up with ``ihmt sync --init`` is synced."""

    @classmethod
    def from_env(
        cls, environ: Mapping[str, str] | None = None, *, cwd: Path | None = None
    ) -> Settings:
        """Read ``IHMT_HOME``, ``IHMT_PROJECTS_DIR``, ``IHMT_PROJECT``, ``IHMT_LOG_LEVEL``,
        ``IHMT_SEMANTIC``."""
        env = os.environ if environ is None else environ
        home = Path(env.get("IHMT_HOME") or "~/.ihmt").expanduser()
        projects = env.get("IHMT_PROJECTS_DIR")
        level = (env.get("IHMT_LOG_LEVEL") or "WARNING").upper()
        if level not in ("DEBUG", "INFO", "WARNING", "ERROR", "CRITICAL"):
            level = "WARNING"
        return cls(
            home=home,
            store_path=home / STORE_FOLDER,
            projects_dir=Path(projects).expanduser() if projects else home / PROJECTS_FOLDER,
            cwd=cwd or Path.cwd(),
            project=env.get("IHMT_PROJECT"),
            log_level=level,
            semantic=(env.get("IHMT_SEMANTIC") or "auto").strip().lower(),
            semantic_model=(env.get("IHMT_SEMANTIC_MODEL") or "").strip(),
            cache_dir=_cache_dir(env),
            sync_every=(env.get("IHMT_SYNC_EVERY") or "").strip(),
        )

    @classmethod
    def for_home(cls, home: Path, *, cwd: Path | None = None) -> Settings:
        """Settings for an explicit home folder (tests, embedding): the environment counts
        only for ``IHMT_SEMANTIC`` and ``IHMT_SEMANTIC_MODEL`` (and no model cache is
        kept)."""
        return cls.from_env(
            {
                "IHMT_HOME": str(home),
                **{k: v for k, v in os.environ.items() if k.startswith("IHMT_SEMANTIC")},
            },
            cwd=cwd,
        )

    def default_project(self) -> str:
        """The project of this session: ``IHMT_PROJECT``, else the cwd's git root name, else ''."""
        if self.project is not None:
            return self.project.strip()
        root = find_project_root(self.cwd)
        return root.name if root is not None else ""


def _cache_dir(env: Mapping[str, str]) -> Path | None:
    """The user's cache folder for IHMT (None when no home folder is known)."""
    explicit = env.get("IHMT_CACHE_DIR")
    if explicit:
        return Path(explicit).expanduser()
    if os.name == "nt":
        local = env.get("LOCALAPPDATA")
        return Path(local) / "ihmt" / "cache" if local else None
    xdg = env.get("XDG_CACHE_HOME")
    if xdg:
        return Path(xdg) / "ihmt"
    home = env.get("HOME")
    return Path(home) / ".cache" / "ihmt" if home else None
