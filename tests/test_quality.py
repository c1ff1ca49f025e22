"""Lint and type checks run with the test suite, so `main` cannot drift from the house style.

Both tools run in the interpreter that runs the tests (``sys.executable -m``), whatever
``PATH`` holds or the virtual environment is called; they are skipped only where that
interpreter cannot import them.
"""

from __future__ import annotations

import importlib
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parent.parent


def require(module: str) -> None:
    """Skip the calling test when ``module`` cannot be imported by this interpreter."""
    try:
        importlib.import_module(module)
    except ImportError:
        pytest.skip(f"{module} is not installed for {sys.executable}: pip install -e '.[test]'")


def run_module(module: str, *arguments: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-m", module, *arguments],
        cwd=ROOT,
        capture_output=True,
        text=True,
        check=False,
    )


def test_ruff_finds_nothing() -> None:
    require("ruff")
    result = run_module("ruff", "check", "serialref", "tests", "bench")
    assert result.returncode == 0, result.stdout + result.stderr


def test_mypy_strict_finds_nothing() -> None:
    require("mypy")
    result = run_module("mypy", "--strict", "serialref")
    assert result.returncode == 0, result.stdout + result.stderr


@pytest.mark.parametrize("module", ["ruff", "mypy"])
def test_the_tools_run_whatever_path_holds(module: str, monkeypatch: pytest.MonkeyPatch) -> None:
    require(module)
    monkeypatch.setenv("PATH", "")  # a venv that is not activated, a service's bare PATH
    result = run_module(module, "--version")
    assert result.returncode == 0, result.stdout + result.stderr


def test_the_gate_skips_only_a_tool_this_interpreter_lacks() -> None:
    with pytest.raises(pytest.skip.Exception, match="no_such_linter is not installed for "):
        require("no_such_linter")


MODULE_LINES = 500
"""A module longer than this most likely holds more than one idea: split it where the
ideas part, or, if they do not, name it in :data:`ONE_IDEA_AT_LENGTH` and say why."""

ONE_IDEA_AT_LENGTH = {
    "serialref/client/session.py": (
        600,
        "the player's conversation with the referee: one transitions table, its callbacks "
        "beside it, and the calls that fire it",
    ),
}
"""Modules read whole and found to hold one idea past :data:`MODULE_LINES`: the most lines
each may grow to before it is read again, and the idea it holds."""


def test_no_module_outgrows_one_idea() -> None:
    long = {
        str(path.relative_to(ROOT)): lines
        for path in sorted((ROOT / "serialref").rglob("*.py"))
        if (lines := len(path.read_text(encoding="utf-8").splitlines())) > MODULE_LINES
    }
    unread = {
        path: lines
        for path, lines in long.items()
        if lines > ONE_IDEA_AT_LENGTH.get(path, (MODULE_LINES, ""))[0]
    }
    assert unread == {}
