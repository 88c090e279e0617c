"""Run each package's tests in a venv that holds only that package and what it declares.

For every ``packages/<name>`` with a ``tests/`` folder: build all wheels once, create a
fresh venv, install the package's wheel (and the wheels of the IHMT packages it
depends on) plus pytest and hypothesis (and the package's ``test`` dependency group,
if it has one), then run its tests from outside the source tree. A test that only
passes because a sibling happens to be installed in the workspace fails here.
"""

from __future__ import annotations

import os
import re
import shutil
import subprocess
import sys
import tempfile
import tomllib
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
BASE_TEST_DEPS = ["pytest>=8", "hypothesis>=6.100"]


def _uv_command() -> list[str]:
    """uv itself: ``uv run`` exports its path as $UV; else the one beside pip, else PATH."""
    if os.environ.get("UV"):
        return [os.environ["UV"]]
    found = shutil.which("uv")
    if found:
        return [found]
    return ["python3", "-m", "uv"]


def _uv(*args: str, cwd: Path = ROOT) -> None:
    subprocess.run([*_uv_command(), *args], cwd=cwd, check=True)


def _meta(package_dir: Path) -> dict[str, object]:
    with open(package_dir / "pyproject.toml", "rb") as handle:
        return tomllib.load(handle)


def _local_deps(name: str, metas: dict[str, dict[str, object]]) -> list[str]:
    """The IHMT distributions ``name`` needs, itself included, transitively."""
    seen: list[str] = []
    todo = [name]
    while todo:
        current = todo.pop()
        if current in seen:
            continue
        seen.append(current)
        project = metas[current]["project"]
        assert isinstance(project, dict)
        for requirement in project.get("dependencies", []):
            dep = re.split(r"[<>=!~\[ ;]", requirement, maxsplit=1)[0].strip()
            if dep in metas:
                todo.append(dep)
    return seen


def main(argv: list[str]) -> int:
    only = set(argv[1:])
    package_dirs = sorted(
        p for p in (ROOT / "packages").iterdir() if (p / "pyproject.toml").exists()
    )
    metas: dict[str, dict[str, object]] = {}
    dirs: dict[str, Path] = {}
    for folder in package_dirs:
        meta = _meta(folder)
        project = meta["project"]
        assert isinstance(project, dict)
        metas[str(project["name"])] = meta
        dirs[str(project["name"])] = folder
    failures: list[str] = []
    with tempfile.TemporaryDirectory(prefix="ihmt-isolated-") as tmp:
        dist = Path(tmp) / "dist"
        for name in metas:
            if (
                only
                and name not in only
                and name not in {d for o in only if o in metas for d in _local_deps(o, metas)}
            ):
                continue
            _uv("build", "--quiet", "--wheel", "--package", name, "--out-dir", str(dist))
        for name, folder in dirs.items():
            if not (folder / "tests").is_dir() or (only and name not in only):
                continue
            venv = Path(tmp) / f"venv-{name}"
            _uv(
                "venv",
                "--quiet",
                "--python",
                f"{sys.version_info.major}.{sys.version_info.minor}",
                str(venv),
            )
            python = venv / ("Scripts/python.exe" if sys.platform == "win32" else "bin/python")
            wheels = []
            for dep in _local_deps(name, metas):
                normalized = dep.replace("-", "_")
                found = sorted(dist.glob(f"{normalized}-*.whl"))
                if not found:
                    raise SystemExit(f"no wheel built for {dep}")
                wheels.append(str(found[-1]))
            groups = metas[name].get("dependency-groups", {})
            extra = list(groups.get("test", [])) if isinstance(groups, dict) else []
            _uv(
                "pip",
                "install",
                "--quiet",
                "--python",
                str(python),
                *wheels,
                *BASE_TEST_DEPS,
                *extra,
            )
            print(f"== {name}: tests against its wheel alone", flush=True)
            result = subprocess.run(
                [
                    str(python),
                    "-m",
                    "pytest",
                    "-q",
                    "-p",
                    "no:cacheprovider",
                    "--rootdir",
                    str(ROOT),
                    "-c",
                    str(ROOT / "pyproject.toml"),
                    str(folder / "tests"),
                ],
                cwd=tmp,
            )
            if result.returncode != 0:
                failures.append(name)
    if failures:
        print(f"isolated tests failed for: {', '.join(failures)}")
        return 1
    print("isolated tests passed for every package")
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv))
