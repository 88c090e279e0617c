"""Run each package's tests in a venv that holds only that package and what it declares.

For every ``packages/<name>`` with a ``tests/`` folder: build all wheels once, create a
fresh venv, install the package's wheel (and the wheels of the IHMT packages it
depends on) plus pytest, pytest-xdist and hypothesis (and the package's ``test``
dependency group, if it has one), then run its tests from outside the source tree. A
test that only passes because a sibling happens to be installed in the workspace fails
here.

The venvs are made in the background while the first package's tests run (``uv`` links
from its cache), and each package's tests run on ``--jobs`` pytest-xdist workers, as
in ``make test-unit``. ``--jobs 0`` runs them in one process.

Property-based tests (those hypothesis marks ``hypothesis``) are left out here unless
``--with-properties`` is given: they import nothing the package's other tests do not,
so they prove nothing more about the split, and ``make test-unit`` has just run every
one of them against the same code. Running them twice was a third of CI's time.

``--sole NAME,...`` names the packages whose tests ``make test`` runs here only, not in
the workspace too (see the Makefile): their property tests run here, and the tests
their venvs skip (those needing an extra the package does not declare, such as the
sentence encoder) are run again afterwards by this interpreter, the workspace's, which
holds every extra; so every one of their tests still runs once where it can pass.
"""

from __future__ import annotations

import argparse
import os
import re
import shutil
import subprocess
import sys
import tempfile
import time
import tomllib
from concurrent.futures import Future, ThreadPoolExecutor
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
BASE_TEST_DEPS = ["pytest>=8", "pytest-xdist>=3.6", "hypothesis>=6.100"]

SKIPS_PLUGIN = """\
import os


def _note(report):
    if report.skipped and not hasattr(report, "wasxfail"):
        with open(os.environ["IHMT_SKIPPED_FILE"], "a", encoding="utf-8") as handle:
            handle.write(report.nodeid + "\\n")


def pytest_collectreport(report):
    _note(report)


def pytest_runtest_logreport(report):
    if report.when == "setup" or report.when == "call":
        _note(report)
"""
"""A pytest plugin for the isolated venvs: it writes the id of every skipped test (or
module skipped whole) to $IHMT_SKIPPED_FILE, on the xdist workers and the controller
alike (the ids are deduplicated when read)."""


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


def _make_venv(
    name: str, tmp: Path, dist: Path, metas: dict[str, dict[str, object]]
) -> tuple[Path, float]:
    """A fresh venv holding ``name``'s wheel, its IHMT dependencies and the test tools."""
    started = time.monotonic()
    venv = tmp / f"venv-{name}"
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
    _uv("pip", "install", "--quiet", "--python", str(python), *wheels, *BASE_TEST_DEPS, *extra)
    return python, time.monotonic() - started


def main(argv: list[str]) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("packages", nargs="*", help="only these (default: every package)")
    parser.add_argument(
        "--jobs",
        "-n",
        type=int,
        default=int(os.environ.get("JOBS", "2")),
        help="pytest-xdist workers per package (0: one process; default $JOBS or 2)",
    )
    parser.add_argument(
        "--with-properties",
        action="store_true",
        help="also run the property-based (hypothesis) tests, which make test-unit runs",
    )
    parser.add_argument(
        "--sole",
        default="",
        metavar="NAME,...",
        help="packages tested nowhere else: run their property tests too, and rerun the "
        "tests their venvs skip with this interpreter (the workspace, every extra)",
    )
    parser.add_argument(
        "--durations",
        type=int,
        default=0,
        metavar="N",
        help="list each package's N slowest tests (pytest --durations)",
    )
    args = parser.parse_args(argv[1:])
    durations = [f"--durations={args.durations}"] if args.durations > 0 else []
    sole = {name for name in args.sole.split(",") if name}
    only = set(args.packages)
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
    unknown = (only | sole) - set(metas)
    if unknown:
        parser.error(f"no such package: {', '.join(sorted(unknown))}")
    tested = [
        name
        for name, folder in dirs.items()
        if (folder / "tests").is_dir() and (not only or name in only)
    ]
    failures: list[str] = []
    workers = ["-n", str(args.jobs), "--dist", "worksteal"] if args.jobs > 0 else []
    took_tests: dict[str, float] = {}
    skipped: list[str] = []
    # Each run's tmp_path folders in a folder of this run, its path as short as pytest's
    # own (tests make Unix sockets there): the shared /tmp/pytest-of-<user>, pruned by
    # every session, raced with other pytest runs on the machine (warnings are errors).
    with (
        tempfile.TemporaryDirectory(prefix="ihmt-isolated-") as tmp_name,
        tempfile.TemporaryDirectory(prefix="ihmt-pt-") as temps_name,
    ):
        tmp = Path(tmp_name)
        temps = Path(temps_name)
        dist = tmp / "dist"
        plugins = tmp / "plugins"
        plugins.mkdir()
        (plugins / "ihmt_skipped.py").write_text(SKIPS_PLUGIN, encoding="utf-8")
        started = time.monotonic()
        if only:
            needed = {dep for name in tested for dep in _local_deps(name, metas)}
            for name in sorted(needed):
                _uv("build", "--quiet", "--wheel", "--package", name, "--out-dir", str(dist))
        else:
            _uv("build", "--quiet", "--wheel", "--all-packages", "--out-dir", str(dist))
        print(f"== wheels built in {time.monotonic() - started:.1f}s", flush=True)
        # Every venv is made in the background; the tests of each start once its venv is.
        with ThreadPoolExecutor(max_workers=2) as pool:
            venvs: dict[str, Future[tuple[Path, float]]] = {
                name: pool.submit(_make_venv, name, tmp, dist, metas) for name in tested
            }
            for name in tested:
                python, took = venvs[name].result()
                print(f"== {name}: tests against its wheel alone (venv in {took:.1f}s)", flush=True)
                properties = args.with_properties or name in sole
                selection = [] if properties else ["-m", "not hypothesis"]
                env = dict(os.environ)
                if name in sole:
                    notes = tmp / f"skipped-{name}.txt"
                    env["PYTHONPATH"] = str(plugins)
                    env["IHMT_SKIPPED_FILE"] = str(notes)
                    selection += ["-p", "ihmt_skipped"]
                tests_started = time.monotonic()
                result = subprocess.run(
                    [
                        str(python),
                        "-m",
                        "pytest",
                        "-q",
                        *workers,
                        *selection,
                        *durations,
                        "-p",
                        "no:cacheprovider",
                        f"--basetemp={temps / str(tested.index(name))}",
                        "--rootdir",
                        str(ROOT),
                        "-c",
                        str(ROOT / "pyproject.toml"),
                        str(dirs[name] / "tests"),
                    ],
                    cwd=tmp,
                    env=env,
                )
                took_tests[name] = time.monotonic() - tests_started
                if result.returncode != 0:
                    failures.append(name)
                if name in sole and notes.exists():
                    for nodeid in notes.read_text(encoding="utf-8").splitlines():
                        if nodeid and nodeid not in skipped:
                            skipped.append(nodeid)
        if skipped:
            # Tested nowhere else: what the slim venvs could not run, run with every extra.
            print(f"== {len(skipped)} skipped in isolation, run in the workspace:", flush=True)
            rerun_started = time.monotonic()
            result = subprocess.run(
                [
                    *(sys.executable, "-m", "pytest", "-q", "-p", "no:cacheprovider"),
                    f"--basetemp={temps / 'workspace'}",
                    *workers,
                    *durations,
                    *skipped,
                ],
                cwd=ROOT,
            )
            took_tests["(skipped, in the workspace)"] = time.monotonic() - rerun_started
            if result.returncode != 0:
                failures.append("the skipped tests rerun in the workspace")
    # Where the time went: each package's tests, longest first (venvs are made meanwhile).
    for name, took in sorted(took_tests.items(), key=lambda item: -item[1]):
        print(f"== {name}: tests took {took:.1f}s", flush=True)
    print(f"== isolated run took {time.monotonic() - started:.1f}s", flush=True)
    if failures:
        print(f"isolated tests failed for: {', '.join(failures)}")
        return 1
    print("isolated tests passed for every package")
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv))
