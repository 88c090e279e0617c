"""The cheap half of ``make dist``: real sdists built from this tree, and the checks
of ``tools/dist.py`` on planted mistakes. (The wheels' smoke installs run in ``make dist``.)"""

from __future__ import annotations

import importlib.util
import io
import tarfile
import tomllib
from pathlib import Path
from types import ModuleType

import pytest

ROOT = Path(__file__).resolve().parents[1]


def _dist() -> ModuleType:
    spec = importlib.util.spec_from_file_location("ihmt_dist", ROOT / "tools" / "dist.py")
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


@pytest.fixture(scope="module")
def sdists(tmp_path_factory: pytest.TempPathFactory) -> list[Path]:
    built: list[Path] = _dist().build(tmp_path_factory.mktemp("dist"), sdist_only=True)
    return built


def test_every_distribution_gets_an_sdist(sdists: list[Path]) -> None:
    names = {path.name.split("-")[0] for path in sdists}
    expected = {name.replace("-", "_") for name in _dist().projects()}
    assert names == expected
    assert len(expected) == 7


def test_sdists_hold_no_tests_screenshots_or_ci_and_carry_the_license(
    sdists: list[Path],
) -> None:
    dist = _dist()
    for path in sdists:
        assert dist.check_sdist(path) == [], path.name
        members = dist.sdist_members(path)
        assert "LICENSE" in members
        assert not any(m.startswith(("tests/", "docs/", ".ci/")) for m in members), members
        if not path.name.startswith("ihmt_suite"):
            assert any(m.startswith("src/") for m in members)
            assert "CHANGELOG.md" in members
        with tarfile.open(path) as archive:
            member = next(m for m in archive.getmembers() if m.name.endswith("/LICENSE"))
            handle = archive.extractfile(member)
            assert handle is not None
            assert handle.read() == (ROOT / "LICENSE").read_bytes()


def test_long_descriptions_have_only_absolute_links(sdists: list[Path]) -> None:
    dist = _dist()
    for path in sdists:
        assert dist.check_description(path) == [], path.name
    suite = next(p for p in sdists if p.name.startswith("ihmt_suite"))
    metadata = dist._metadata(suite)
    # The user part of the README, with its screenshots as absolute image URLs.
    assert "## Use it" in metadata and "ihmt install claude-code" in metadata
    assert "![Set up](https://" in metadata
    assert "## Benchmarks" not in metadata  # contributor material stays in the repository


def test_every_project_names_the_same_repository() -> None:
    problems, _warnings = _dist().check_urls(ROOT)
    assert problems == []


def test_the_suite_brings_the_anthropic_sdk_only_with_its_extra() -> None:
    with open(ROOT / "pyproject.toml", "rb") as handle:
        project = tomllib.load(handle)["project"]
    assert not any("anthropic" in requirement for requirement in project["dependencies"])
    assert project["optional-dependencies"]["anthropic"] == ["ihmt-navigator[anthropic]>=0.1,<0.2"]


def _planted_sdist(folder: Path, files: dict[str, str]) -> Path:
    path = folder / "ihmt_planted-0.1.0.tar.gz"
    with tarfile.open(path, "w:gz") as archive:
        for name, text in files.items():
            data = text.encode()
            info = tarfile.TarInfo(f"ihmt_planted-0.1.0/{name}")
            info.size = len(data)
            archive.addfile(info, io.BytesIO(data))
    return path


def test_the_checks_catch_tests_screenshots_ci_and_relative_links(tmp_path: Path) -> None:
    description = "x" * 300 + "\nSee [the format](FORMAT.md) and ![shot](docs/a.png).\n"
    pkg_info = (
        "Metadata-Version: 2.4\nName: ihmt-planted\nVersion: 0.1.0\n"
        f"Description-Content-Type: text/markdown\n\n{description}"
    )
    path = _planted_sdist(
        tmp_path,
        {
            "PKG-INFO": pkg_info,
            "pyproject.toml": "",
            "README.md": "",
            "tests/test_a.py": "",
            "docs/screenshots/a.png": "",
            ".ci/run": "",
        },
    )
    dist = _dist()
    problems = "\n".join(dist.check_sdist(path))
    assert "holds tests/test_a.py" in problems
    assert "holds docs/screenshots/a.png" in problems
    assert "holds .ci/run" in problems
    assert "has no LICENSE" in problems
    links = "\n".join(dist.check_description(path))
    assert "relative link in the long description: FORMAT.md" in links
    assert "relative link in the long description: docs/a.png" in links


def test_a_project_pointing_at_another_repository_is_caught(tmp_path: Path) -> None:
    (tmp_path / "packages" / "one").mkdir(parents=True)
    for folder, url in (
        (tmp_path, "https://example.org/a"),
        (tmp_path / "packages" / "one", "https://example.org/b"),
    ):
        (folder / "pyproject.toml").write_text(
            f'[project]\nname = "p-{folder.name}"\n[project.urls]\nRepository = "{url}"\n'
            "[[tool.hatch.metadata.hooks.fancy-pypi-readme.substitutions]]\n"
            f"pattern = 'x'\nreplacement = '{url}/blob/main/'\n"
        )
    problems, warnings = _dist().check_urls(tmp_path)
    assert any("different repositories" in p for p in problems)
    assert warnings == []
