"""``serialref epd``: a mistake on the command line, or a missing engine, is one line."""

from __future__ import annotations

from pathlib import Path

import pytest

from serialref.cli import main

START = "rnbqkbnr/pppppppp/8/8/8/8/PPPPPPPP/RNBQKBNR w KQkq -"


@pytest.mark.parametrize(
    ("arguments", "message"),
    [
        (["mate", "--moves", "two"], "moves: expected N or FIRST..LAST, not 'two'"),
        (["mate", "--moves", "3..1"], "moves: expected N or FIRST..LAST with 1 <= FIRST <= LAST"),
        (
            ["analyse", "--nodes", "5", "--soft"],
            "soft: --soft needs --movetime: engines keep node and depth counts exactly",
        ),
        (["analyse", "--jobs", "0"], "jobs: must be at least 1, not 0"),
        (["targets", "--resume"], "resume: needs an output file (-o OUT)"),
        (["analyse", "--depth", "0"], "depth: must be positive, not 0"),
    ],
)
def test_command_line_mistakes_are_one_line(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], arguments: list[str], message: str
) -> None:
    suite = tmp_path / "in.epd"
    suite.write_text(START + "\n")
    code = main(["epd", *arguments, str(suite), "--engine", str(tmp_path / "nothing")])
    err = capsys.readouterr().err
    assert code == 2
    assert err == f"serialref: error: {message}\n"


def test_an_engine_that_is_not_there_is_one_line(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    suite = tmp_path / "in.epd"
    suite.write_text(START + "\n")
    code = main(["epd", "analyse", str(suite), "--engine", "no-such-engine-here"])
    assert code == 5
    assert capsys.readouterr().err == (
        "serialref: error: engine program 'no-such-engine-here' not found on PATH or in "
        "/usr/games or /usr/local/games\n"
    )
