"""Pinned codebases for the code-tool benchmarks: released packages' sources, fixed versions.

Each is the sdist of one release, fetched once with ``pip download`` into
``tools/bench/cache/`` (ignored by git), checked against its SHA-256 and unpacked there.
The same bytes on every machine and every run, so a figure moves only when IHMT does.
"""

from __future__ import annotations

import hashlib
import shutil
import subprocess
import sys
import tarfile
from dataclasses import dataclass
from pathlib import Path

CACHE = Path(__file__).resolve().parent / "cache"


@dataclass(frozen=True, slots=True)
class Codebase:
    name: str
    version: str
    sha256: str
    """Of the sdist file PyPI serves for this release."""

    @property
    def label(self) -> str:
        return f"{self.name}-{self.version}"


CODEBASES = {
    "rich": Codebase(
        "rich", "13.7.1", "9be308cb1fe2f1f57d67ce99e95af38a1e2bc71ad9813b0e247cf7ffbcc3a432"
    ),
    "click": Codebase(
        "click", "8.1.7", "ca9853ad459e787e2192211578cc907e7594e294c7ccc834310722b41b9ca6de"
    ),
}


def _pip() -> list[str]:
    """A pip to run: this interpreter's, else the first ``python3`` with one."""
    for python in (sys.executable, shutil.which("python3") or ""):
        if (
            python
            and subprocess.run(
                [python, "-m", "pip", "--version"], capture_output=True, check=False
            ).returncode
            == 0
        ):
            return [python, "-m", "pip"]
    raise SystemExit("no pip found to download the pinned sdists (python3 -m pip)")


def source(codebase: Codebase) -> Path:
    """The unpacked source folder of ``codebase`` (downloaded and checked on first use)."""
    folder = CACHE / codebase.label
    if folder.is_dir():
        return folder
    CACHE.mkdir(parents=True, exist_ok=True)
    archive = CACHE / f"{codebase.label}.tar.gz"
    if not archive.is_file():
        subprocess.run(
            [
                *_pip(),
                "download",
                "--quiet",
                "--no-deps",
                "--no-binary",
                ":all:",
                f"{codebase.name}=={codebase.version}",
                "--dest",
                str(CACHE),
            ],
            check=True,
        )
    digest = hashlib.sha256(archive.read_bytes()).hexdigest()
    if digest != codebase.sha256:
        archive.unlink()
        raise SystemExit(f"{archive.name}: SHA-256 {digest} is not the pinned one")
    with tarfile.open(archive) as tar:
        tar.extractall(CACHE, filter="data")
    if not folder.is_dir():
        raise SystemExit(f"{archive.name} did not unpack to {folder.name}/")
    return folder
