"""The lean install: refereeing needs three libraries, and a missing extra is one line.

Each command runs as a user runs it, ``python -m serialref`` in a process of its own,
with the optional libraries made unimportable by a folder first on ``PYTHONPATH`` that
holds a stand-in for each raising ``ModuleNotFoundError``, as an absent package does.
"""

from __future__ import annotations

import os
import subprocess
import sys
import tomllib
from collections.abc import Sequence
from pathlib import Path

import processes
import pytest

from serialref.client.session import PlayerSession
from serialref.rules import base as rules_base

ROOT = Path(__file__).resolve().parent.parent
EXTRAS = {"report": "matplotlib", "fairy": "pyffish", "watch": "textual"}


def serialref_without(
    tmp_path: Path, missing: Sequence[str], *arguments: str, timeout: float = 60
) -> subprocess.CompletedProcess[str]:
    """``python -m serialref ARGUMENTS`` in ``tmp_path``, the ``missing`` modules absent."""
    shadows = tmp_path / "shadows"
    for module in missing:
        package = shadows / module
        package.mkdir(parents=True, exist_ok=True)
        (package / "__init__.py").write_text(
            f"raise ModuleNotFoundError({f'No module named {module!r}'!r}, name={module!r})\n"
        )
    path = os.pathsep.join(filter(None, (str(shadows), os.environ.get("PYTHONPATH"))))
    return processes.run(
        [sys.executable, "-m", "serialref", *arguments],
        cwd=tmp_path,
        env={**os.environ, "PYTHONPATH": path},
        capture_output=True,
        text=True,
        timeout=timeout,
        check=False,
    )


def one_line(result: subprocess.CompletedProcess[str]) -> str:
    assert result.returncode == 2, result.stderr
    lines = result.stderr.splitlines()
    assert len(lines) == 1, result.stderr
    assert "internal error" not in lines[0] and "Traceback" not in result.stderr
    return lines[0]


def test_the_core_install_is_what_refereeing_needs() -> None:
    project = tomllib.loads((ROOT / "pyproject.toml").read_text(encoding="utf-8"))["project"]
    core = {requirement.split(">")[0] for requirement in project["dependencies"]}
    # anyascii: names in any alphabet go on the ASCII-only line transliterated (README).
    assert core == {"pyserial", "transitions", "chess", "anyascii"}
    extras = project["optional-dependencies"]
    for extra, library in EXTRAS.items():
        assert [requirement.split(">")[0] for requirement in extras[extra]] == [library]
    assert extras["all"] == ["serialref[report,fairy,watch]"]
    assert "serialref[all]" in extras["test"]


@pytest.mark.parametrize(
    ("missing", "arguments", "expected"),
    [
        (
            "pyffish",
            ("run", "loop://", "loop://", "--variant", "capablanca"),
            "serialref: error: the capablanca variant needs pyffish, which is not installed "
            "here: pip install 'serialref[fairy]'",
        ),
        (
            "pyffish",
            ("epd", "check", "--variant", "xiangqi", "-"),
            "serialref: error: the xiangqi variant needs pyffish, which is not installed "
            "here: pip install 'serialref[fairy]'",
        ),
        (
            "textual",
            ("watch", "--socket", "no-referee.sock"),
            "serialref: error: serialref watch needs textual, which is not installed "
            "here: pip install 'serialref[watch]'",
        ),
    ],
    ids=["run-fairy", "epd-check-fairy", "watch"],
)
def test_a_missing_extra_is_one_line_naming_its_install(
    tmp_path: Path, missing: str, arguments: tuple[str, ...], expected: str
) -> None:
    assert one_line(serialref_without(tmp_path, [missing], *arguments)) == expected


def test_a_report_without_matplotlib_says_so_and_writes_no_page(tmp_path: Path) -> None:
    results = tmp_path / "results.epd"
    results.write_text('8/8/8/8/8/8/8/K1k5 w - - bm Kb1; id "a"; acn 10; acs 0.1; pm Kb1;\n')
    result = serialref_without(
        tmp_path, ["matplotlib"], "epd", "report", str(results), "--html", "page.html"
    )
    assert one_line(result) == (
        "serialref: error: epd report --html needs matplotlib, which is not installed here: "
        "pip install 'serialref[report]'"
    )
    assert not (tmp_path / "page.html").exists()


def test_a_missing_library_of_an_extra_is_named_too(tmp_path: Path) -> None:
    results = tmp_path / "results.epd"
    results.write_text('8/8/8/8/8/8/8/K1k5 w - - bm Kb1; id "a"; acn 10; acs 0.1; pm Kb1;\n')
    result = serialref_without(
        tmp_path, ["numpy"], "epd", "report", str(results), "--html", "page.html"
    )
    assert "(its module numpy is missing): pip install 'serialref[report]'" in one_line(result)


def test_the_demo_of_a_fairy_variant_starts_nothing_without_pyffish(tmp_path: Path) -> None:
    result = serialref_without(tmp_path, ["pyffish"], "demo", "--variant", "shogi")
    assert "pip install 'serialref[fairy]'" in one_line(result)
    assert result.stdout == ""
    assert not (tmp_path / "serialref-demo").exists()


def test_the_demo_needs_no_extra(tmp_path: Path) -> None:
    """The README's first command, on the core install: referee and both clients."""
    result = serialref_without(
        tmp_path, list(EXTRAS.values()), "demo", "--games", "1", "--tc", "20+0.2", timeout=120
    )
    assert result.returncode == 0, result.stderr
    assert "Finished match" in result.stdout
    assert "[Result" in (tmp_path / "serialref-demo" / "demo.pgn").read_text()


def test_a_client_without_pyffish_reports_a_fault_for_a_fairy_game(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """The referee ends such a game as an emergency (no loser) instead of waiting for moves."""

    def absent() -> None:
        raise ModuleNotFoundError("No module named 'pyffish'", name="pyffish")

    monkeypatch.setattr(rules_base, "load_pyffish", absent)
    session = PlayerSession("lean", clock=lambda: 0.0)
    session.sign_on()
    start = "rnabqkbcnr/pppppppppp/10/10/10/10/PPPPPPPPPP/RNABQKBCNR w KQkq - fmvn 1; hmvc 0;"
    session.line_received(f"{start} refcom reset;")
    tags = 'ptp Event "e" Result "*" TimeControl "60" Variant "capablanca";'
    output = session.line_received(f"{start} {tags} refcom inform;")
    (fault,) = output.lines
    assert "refreq fault" in fault
    assert "pip install 'serialref[fairy]'" in fault
    closing = tags.replace('"*"', '"*" Termination "emergency"')
    assert session.line_received(f"{start} {closing} refcom inform;").lines == ()
