"""Making, opening and upgrading a store's folder (the index's own life is ``_lifecycle.py``).

A folder becomes a store only when it is missing, empty or already one
(:func:`refuse_foreign`, :func:`make_folder`); :func:`lay_out` writes a new store's
folders, trunk and config;
:func:`read_config` reads ``ihmt.config.json`` and refuses a newer format;
:func:`write_config` changes it; :func:`upgraded_config` is the format upgrade's last step;
:func:`remove_derived_state` empties ``state/``.
"""

from __future__ import annotations

import shutil
from pathlib import Path
from typing import Any

from ihmt_store._files import (
    atomic_write,
    fsync_dir,
    json_bytes,
    read_json,
    remove_sqlite_files,
    unlink_quietly,
)
from ihmt_store._layout import (
    BRANCH_DIR,
    CONFIG_FILE,
    INDEX_FILE,
    LEAF_DIR,
    LOCK_FILE,
    OWN_NAMES,
    ROOT_FILE,
    STATE_DIR,
)
from ihmt_store._records import FORMAT_VERSION, Root, StoreConfig, now_timestamp
from ihmt_store.errors import ConfigError, CorruptFileError, StoreFormatError, StoreIOError

__all__ = [
    "config_of",
    "lay_out",
    "make_folder",
    "read_config",
    "refuse_foreign",
    "remove_derived_state",
    "upgraded_config",
    "write_config",
]


def make_folder(folder: Path) -> None:
    """Refuse a foreign ``folder``, then create it (missing parents too)."""
    refuse_foreign(folder)
    try:
        folder.mkdir(parents=True, exist_ok=True)
    except OSError as exc:
        raise StoreIOError(f"cannot create the store folder: {exc.strerror}", path=folder) from exc


def lay_out(folder: Path, config: StoreConfig, *, had_lock: bool) -> None:
    """Under the lock, write a new store into ``folder`` unless another process just did:
    its folders, an empty trunk and ``config``. A folder that became foreign meanwhile
    is refused, and the lock file is removed unless it was there before (``had_lock``)."""
    if (folder / CONFIG_FILE).exists():
        return
    try:
        refuse_foreign(folder)
    except StoreFormatError:
        if not had_lock:
            unlink_quietly(folder / LOCK_FILE)
        raise
    for sub in (LEAF_DIR, BRANCH_DIR, STATE_DIR):
        (folder / sub).mkdir(parents=True, exist_ok=True)
    atomic_write(folder / ROOT_FILE, json_bytes(Root(updated=now_timestamp()).to_json()))
    atomic_write(folder / CONFIG_FILE, json_bytes(config.to_json()))
    fsync_dir(folder)


def upgraded_config(folder: Path, config: StoreConfig) -> StoreConfig:
    """The upgrade's last step, once the leaves are migrated and the index closed: the
    index is discarded (rebuilt when it opens) and the new format number written."""
    remove_sqlite_files(folder / STATE_DIR / INDEX_FILE)
    data = config.to_json()
    data["format_version"] = FORMAT_VERSION
    atomic_write(folder / CONFIG_FILE, json_bytes(data))
    return StoreConfig.from_json(data)


def write_config(folder: Path, config: StoreConfig, changes: dict[str, Any]) -> StoreConfig:
    """``config`` with ``changes`` (validated: ValueError), written to ``folder``'s
    ``ihmt.config.json`` atomically."""
    data = {**config.to_json(), **changes}
    try:
        config = StoreConfig.from_json(data)
    except TypeError as exc:
        raise ValueError(str(exc)) from None
    atomic_write(folder / CONFIG_FILE, json_bytes(config.to_json()))
    return config


def remove_derived_state(folder: Path) -> None:
    """Delete everything under ``folder/state`` (nothing when there is no such folder)."""
    state = folder / STATE_DIR
    if not state.is_dir():
        return
    for child in state.iterdir():
        if child.is_dir():
            shutil.rmtree(child)
        else:
            child.unlink()


def refuse_foreign(folder: Path) -> None:
    """Raise StoreFormatError when ``folder`` holds files and is not an IHMT store."""
    try:
        names = [p.name for p in folder.iterdir()]
    except FileNotFoundError:
        return
    except OSError as exc:
        raise StoreIOError(f"cannot read the folder: {exc.strerror}", path=folder) from exc
    if (folder / CONFIG_FILE).exists():
        return
    foreign = [n for n in names if n not in OWN_NAMES and not n.startswith(".")]
    if foreign:
        raise StoreFormatError(
            f"{folder} is not empty and is not an IHMT store (no {CONFIG_FILE}); "
            "choose an empty folder",
            path=folder,
        )


def read_config(path: Path) -> StoreConfig:
    """The config at ``path``: ConfigError when it is malformed, StoreFormatError when a
    newer IHMT wrote the store."""
    try:
        data = read_json(path)
    except CorruptFileError as exc:
        raise ConfigError(f"not valid JSON ({exc}); fix or restore it", path=path) from None
    except OSError as exc:
        raise ConfigError(f"cannot read it: {exc.strerror}", path=path) from None
    return config_of(data, path)


def config_of(data: dict[str, Any], path: Path) -> StoreConfig:
    """The config in ``data``, the object read from ``path`` (the same errors as
    :func:`read_config`)."""
    # A config without the key predates it: format 1.
    version = data.setdefault("format_version", 1)
    if not isinstance(version, int) or isinstance(version, bool):
        raise ConfigError("format_version must be an integer", path=path)
    if version > FORMAT_VERSION:
        raise StoreFormatError(
            f"{path.parent} was written by a newer IHMT (store format {version}, this version "
            f"reads up to {FORMAT_VERSION}); upgrade ihmt to open it",
            path=path.parent,
            found=version,
        )
    try:
        return StoreConfig.from_json(data)
    except (TypeError, ValueError) as exc:
        raise ConfigError(str(exc), path=path) from None
