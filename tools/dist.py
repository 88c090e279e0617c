"""Build every distribution and check it as PyPI and a user will see it (``make dist``).

1. ``uv build --all-packages``: a wheel and an sdist for each package and ``ihmt-suite``.
2. The sdists hold sources, README, CHANGELOG and LICENSE only: no tests, screenshots or
   CI files; every wheel and sdist carries the LICENSE.
3. The long descriptions have no relative links (PyPI shows them away from the
   repository), and every ``pyproject.toml`` names the same repository URL (a warning
   while it is the placeholder).
4. ``twine check --strict`` on every file: the metadata and README render as on PyPI.
5. Each wheel alone in a fresh venv (plus the IHMT wheels it depends on, from ``dist/``;
   the rest from PyPI): its modules import and its commands run. ``ihmt-suite`` must not
   bring the Anthropic SDK unless asked for with ``[anthropic]``.

Run: ``python tools/dist.py [--out-dir DIR] [--skip-smoke]``. Exit 1 with one line per
problem.
"""

from __future__ import annotations

import argparse
import os
import re
import shutil
import subprocess
import sys
import tarfile
import tempfile
import tomllib
import zipfile
from email.parser import Parser
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
PLACEHOLDER = "https://github.com/OWNER/"

# Anything under these names in an sdist is a mistake: tests run from the repository.
FORBIDDEN_IN_SDIST = re.compile(
    r"(^|/)(tests|tests-integration|screenshots|\.ci|\.github|tools|docs|dist|build)(/|$)"
    r"|(^|/)(uv\.lock|Makefile|conftest\.py)$"
)
# A Markdown link or image whose target is not absolute: broken on PyPI.
RELATIVE_LINK = re.compile(r"\]\((?!https?://|mailto:|#)([^)\s]+)\)")


def _uv_command() -> list[str]:
    """uv itself: ``uv run`` exports its path as $UV; else the one on PATH; else pip's."""
    if os.environ.get("UV"):
        return [os.environ["UV"]]
    found = shutil.which("uv")
    return [found] if found else [sys.executable, "-m", "uv"]


def _run(*args: str, cwd: Path = ROOT, quiet: bool = False) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        list(args),
        cwd=cwd,
        check=True,
        text=True,
        capture_output=quiet,
    )


def build(out_dir: Path, *, sdist_only: bool = False) -> list[Path]:
    """Every wheel and sdist of the workspace into ``out_dir`` (emptied first)."""
    if out_dir.exists():
        shutil.rmtree(out_dir)
    kind = ["--sdist"] if sdist_only else []
    _run(*_uv_command(), "build", "--quiet", "--all-packages", *kind, "--out-dir", str(out_dir))
    # (uv also writes a .gitignore there)
    return sorted(p for p in out_dir.iterdir() if p.name.endswith((".whl", ".tar.gz")))


def projects(root: Path = ROOT) -> dict[str, dict[str, object]]:
    """Every distribution's ``[project]`` table (the workspace root's included), by name."""
    found: dict[str, dict[str, object]] = {}
    for path in [root / "pyproject.toml", *sorted(root.glob("packages/*/pyproject.toml"))]:
        with open(path, "rb") as handle:
            project = tomllib.load(handle)["project"]
        found[str(project["name"])] = project
    return found


def check_urls(root: Path = ROOT) -> tuple[list[str], list[str]]:
    """(problems, warnings): every project names one repository URL, and the long
    description substitutions point at it."""
    problems: list[str] = []
    urls: dict[str, str] = {}
    for path in [root / "pyproject.toml", *sorted(root.glob("packages/*/pyproject.toml"))]:
        with open(path, "rb") as handle:
            data = tomllib.load(handle)
        name = data["project"]["name"]
        repository = data["project"].get("urls", {}).get("Repository")
        if not repository:
            problems.append(f"{name}: no [project.urls] Repository")
            continue
        urls[name] = repository
        hooks = data.get("tool", {}).get("hatch", {}).get("metadata", {}).get("hooks", {})
        readme = hooks.get("fancy-pypi-readme", {})
        if not readme.get("substitutions"):
            problems.append(f"{name}: no fancy-pypi-readme substitutions for relative links")
        for substitution in readme.get("substitutions", []):
            if repository not in substitution["replacement"]:
                problems.append(
                    f"{name}: a README substitution points elsewhere than {repository}: "
                    f"{substitution['replacement']}"
                )
    if len(set(urls.values())) > 1:
        problems.append(f"the projects name different repositories: {sorted(set(urls.values()))}")
    warnings = []
    if any(url.startswith(PLACEHOLDER) for url in urls.values()):
        warnings.append(
            f"the repository URL is still the placeholder {next(iter(urls.values()))}: set the "
            "real one in every pyproject.toml before uploading, or PyPI's links will not resolve"
        )
    return problems, warnings


def sdist_members(path: Path) -> list[str]:
    """The sdist's files, relative to its top folder."""
    with tarfile.open(path) as archive:
        return [m.name.split("/", 1)[1] for m in archive.getmembers() if "/" in m.name]


def check_sdist(path: Path) -> list[str]:
    """Problems with one sdist's contents."""
    members = sdist_members(path)
    problems = [f"{path.name}: holds {m}" for m in members if FORBIDDEN_IN_SDIST.search(m)]
    problems += [
        f"{path.name}: has no {required}"
        for required in ("LICENSE", "README.md", "PKG-INFO", "pyproject.toml")
        if required not in members
    ]
    return problems


def _metadata(path: Path) -> str:
    if path.suffix == ".whl":
        with zipfile.ZipFile(path) as archive:
            name = next(n for n in archive.namelist() if n.endswith(".dist-info/METADATA"))
            return archive.read(name).decode("utf-8")
    with tarfile.open(path) as archive:
        member = next(
            m
            for m in archive.getmembers()
            if m.name.count("/") == 1 and m.name.endswith("/PKG-INFO")
        )
        handle = archive.extractfile(member)
        assert handle is not None
        return handle.read().decode("utf-8")


def check_description(path: Path) -> list[str]:
    """Problems with the long description PyPI will show for one distribution."""
    message = Parser().parsestr(_metadata(path))
    body = message.get_payload()
    assert isinstance(body, str)
    problems = []
    if message.get("Description-Content-Type") != "text/markdown":
        problems.append(f"{path.name}: the description is not declared as Markdown")
    if len(body.strip()) < 200:
        problems.append(f"{path.name}: the long description is missing or nearly empty")
    problems += [
        f"{path.name}: relative link in the long description: {m.group(1)}"
        for m in RELATIVE_LINK.finditer(body)
    ]
    return problems


def check_wheel(path: Path) -> list[str]:
    with zipfile.ZipFile(path) as archive:
        names = archive.namelist()
    problems = [f"{path.name}: holds {n}" for n in names if re.search(r"(^|/)tests?/", n)]
    if not any(re.search(r"\.dist-info/licenses/LICENSE$", n) for n in names):
        problems.append(f"{path.name}: has no LICENSE")
    return problems


def twine_check(files: list[Path]) -> list[str]:
    result = subprocess.run(
        [sys.executable, "-m", "twine", "check", "--strict", *map(str, files)],
        cwd=ROOT,
        text=True,
        capture_output=True,
        check=False,
    )
    print(result.stdout.strip(), flush=True)
    if result.returncode != 0:
        return [f"twine check failed:\n{result.stdout}{result.stderr}"]
    return []


# What each wheel must do in a venv of its own: modules to import, commands to run.
SMOKE: dict[str, tuple[list[str], list[list[str]]]] = {
    "ihmt-store": (["ihmt_store"], []),
    "ihmt-chunkers": (["ihmt_chunkers"], []),
    "ihmt-facts": (["ihmt_facts"], []),
    "ihmt-navigator": (["ihmt_navigator"], []),
    "ihmt-mcp": (["ihmt_mcp", "ihmt_mcp.__main__"], []),
    "ihmt-cli": (["ihmt_cli"], [["ihmt", "version"], ["ihmt", "--quiet", "demo"]]),
    "ihmt-suite": (["ihmt_cli", "ihmt_mcp"], [["ihmt", "version"]]),
}


def smoke(dist: Path, scratch: Path) -> list[str]:
    """Install each wheel alone in a fresh venv and use it."""
    problems: list[str] = []
    wheels = sorted(dist.glob("*.whl"))
    for wheel in wheels:
        name = wheel.name.split("-")[0].replace("_", "-")
        modules, commands = SMOKE.get(name, ([], []))
        venv = scratch / f"venv-{name}"
        python = venv / "bin" / "python"
        print(f"== {name}: its wheel alone in a fresh venv", flush=True)
        try:
            _run(*_uv_command(), "venv", "--quiet", "--python", sys.executable, str(venv))
            _run(
                *_uv_command(),
                "pip",
                "install",
                "--quiet",
                "--python",
                str(python),
                "--find-links",
                str(dist),
                str(wheel),
            )
            for module in modules:
                _run(str(python), "-c", f"import {module}", cwd=scratch)
            home = scratch / f"home-{name}"
            for command in commands:
                subprocess.run(
                    [str(venv / "bin" / command[0]), *command[1:]],
                    cwd=scratch,
                    check=True,
                    env={**os.environ, "IHMT_HOME": str(home)},
                    stdout=subprocess.DEVNULL,
                )
            if name == "ihmt-suite":
                found = subprocess.run(
                    [str(python), "-c", "import anthropic"], capture_output=True, check=False
                )
                if found.returncode == 0:
                    problems.append("ihmt-suite installs the Anthropic SDK without [anthropic]")
        except subprocess.CalledProcessError as exc:
            problems.append(f"{wheel.name}: smoke test failed: {exc}")
    return problems


def main(argv: list[str]) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--out-dir", type=Path, default=ROOT / "dist")
    parser.add_argument("--skip-smoke", action="store_true", help="no venv per wheel")
    args = parser.parse_args(argv[1:])
    problems, warnings = check_urls()
    files = build(args.out_dir)
    names = {p.name for p in files}
    print(f"built {len(files)} files into {args.out_dir}:", *sorted(names), sep="\n  ")
    expected = {n.replace("-", "_") for n in projects()}
    for stem in sorted(expected):
        for suffix in ("-py3-none-any.whl", ".tar.gz"):
            if not any(n.startswith(stem + "-") and n.endswith(suffix) for n in names):
                problems.append(f"no {suffix.lstrip('-.')} built for {stem}")
    for path in files:
        if path.name.endswith(".tar.gz"):
            problems += check_sdist(path)
        elif path.suffix == ".whl":
            problems += check_wheel(path)
        problems += check_description(path)
    problems += twine_check(files)
    if not args.skip_smoke:
        with tempfile.TemporaryDirectory(prefix="ihmt-dist-") as scratch:
            problems += smoke(args.out_dir, Path(scratch))
    for warning in warnings:
        print(f"warning: {warning}")
    for problem in problems:
        print(problem)
    if problems:
        print(f"dist check failed: {len(problems)} problem(s)")
        return 1
    print(f"dist check passed: {len(files)} files in {args.out_dir}")
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv))
