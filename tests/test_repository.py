"""The repository stands on its own: a fresh clone has everything its tests, docs and CI use."""

from __future__ import annotations

import re
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parent.parent
_SKIPPED_DIRS = {".git", ".venv", "build", "dist", "serialref-demo", "__pycache__"}
_LINK = re.compile(r"\]\(([^)\s]+)\)")
# Built from parts so that this file does not match its own search.
_OUTSIDE = ("../" + "shared", "/work/" + "shared", '"shared"' + " / ")


def _repository_files() -> list[Path]:
    return [
        path
        for path in ROOT.rglob("*")
        if path.is_file()
        and not _SKIPPED_DIRS.intersection(path.relative_to(ROOT).parts)
        and not any(part.endswith((".egg-info", "_cache")) for part in path.parts)
    ]


def _markdown_files() -> list[Path]:
    return [path for path in _repository_files() if path.suffix == ".md"]


def test_nothing_refers_to_a_folder_outside_the_repository() -> None:
    offenders = []
    for path in _repository_files():
        text = path.read_bytes().decode("utf-8", "replace")
        offenders += [f"{path.relative_to(ROOT)}: {word}" for word in _OUTSIDE if word in text]
    assert not offenders


@pytest.mark.parametrize(
    "document", _markdown_files(), ids=lambda path: str(path.relative_to(ROOT))
)
def test_documents_link_only_to_files_in_the_repository(document: Path) -> None:
    for target in _LINK.findall(document.read_text(encoding="utf-8")):
        if target.startswith(("http://", "https://", "mailto:", "#")):
            continue
        resolved = (document.parent / target.split("#", 1)[0]).resolve()
        assert resolved.is_relative_to(ROOT), f"{target} leaves the repository"
        assert resolved.exists(), f"{target} does not exist"


def test_the_fixtures_say_where_each_file_came_from() -> None:
    notes = (ROOT / "tests" / "fixtures" / "README.md").read_text(encoding="utf-8")
    for fixture in (ROOT / "tests" / "fixtures" / "epd").iterdir():
        assert f"`{fixture.name}`" in notes, fixture.name


def test_ci_runs_the_readme_test_command_in_a_fresh_clone() -> None:
    readme = (ROOT / "README.md").read_text(encoding="utf-8")
    commands = re.findall(r"```sh\n(.*?)\n```", readme, flags=re.DOTALL)
    test_command = next(command for command in commands if "pytest" in command)
    ci = (ROOT / ".ci" / "run").read_text(encoding="utf-8")
    assert f"\n{test_command}\n" in ci
    assert "git clone" in ci and "mktemp -d" in ci
    assert ci.index("git clone") < ci.index(test_command)
