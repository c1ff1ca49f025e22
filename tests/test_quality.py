"""Lint and type checks run with the test suite, so `main` cannot drift from the house style."""

from __future__ import annotations

import shutil
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parent.parent


def _run(*command: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run(command, cwd=ROOT, capture_output=True, text=True, check=False)


@pytest.mark.skipif(shutil.which("ruff") is None and not (ROOT / ".venv/bin/ruff").exists(),
                    reason="ruff is not installed: pip install -e '.[test]'")
def test_ruff_finds_nothing() -> None:
    result = _run(sys.executable, "-m", "ruff", "check", "serialref", "tests", "bench")
    assert result.returncode == 0, result.stdout + result.stderr


def test_mypy_strict_finds_nothing() -> None:
    pytest.importorskip("mypy", reason="mypy is not installed: pip install -e '.[test]'")
    result = _run(sys.executable, "-m", "mypy", "--strict", "serialref")
    assert result.returncode == 0, result.stdout + result.stderr
