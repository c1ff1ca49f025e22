"""``serialref report``: the standings of any PGN file, as text and as an HTML page."""

from __future__ import annotations

import io
from pathlib import Path

import pytest

from serialref.cli import EXIT_FAILURE, EXIT_OK, main
from serialref.tournament.report import games_from_pgn, html_report, text_report
from serialref.tournament.standings import standings

FIXTURES = Path(__file__).parents[1] / "fixtures"
CUTECHESS_PGN = FIXTURES / "cutechess-round-robin.pgn"


def test_the_standings_of_a_cutechess_pgn_are_those_cutechess_printed() -> None:
    # cutechess-cli's table for that file (see its first lines): Gamma 100.0 %, Alpha 37.5 %
    # with Elo -89 +/- 261, Beta 12.5 %, each after 8 games.
    with CUTECHESS_PGN.open(encoding="utf-8") as handle:
        table = standings(list(games_from_pgn(handle)))
    text = text_report(table)
    assert table.names() == ["Gamma", "Alpha", "Beta"]
    assert [p.score.games for p in table.players] == [8, 8, 8]
    assert [round(100 * p.score.ratio, 1) for p in table.players] == [100.0, 37.5, 12.5]
    assert "-88.7 +/- 261.3" in text  # cutechess-cli rounds it to -89 +/- 261
    assert "   1  Gamma" in text


def test_report_verb_prints_text_and_writes_html(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    page = tmp_path / "report.html"
    code = main(["report", str(CUTECHESS_PGN), "--html", str(page), "--title", "RR <1>"])
    out = capsys.readouterr().out
    assert code == EXIT_OK
    assert out.startswith("RR <1>\n")
    assert "Crosstable" in out
    html = page.read_text(encoding="utf-8")
    assert "<title>RR &lt;1&gt;</title>" in html
    assert html.count("<tr><td>") == 6  # three standings rows, three crosstable rows


def test_a_match_report_ends_with_the_sprt_line(capsys: pytest.CaptureFixture[str],
                                                tmp_path: Path) -> None:  # fmt: skip
    pgn = tmp_path / "match.pgn"
    pgn.write_text(
        '[White "A"]\n[Black "B"]\n[Result "1-0"]\n\n1-0\n\n'
        '[White "B"]\n[Black "A"]\n[Result "1/2-1/2"]\n\n1/2-1/2\n\n',
        encoding="utf-8",
    )
    assert main(["report", str(pgn), "--sprt", "elo0=0", "elo1=5"]) == EXIT_OK
    out = capsys.readouterr().out
    assert "A vs B: 1 - 0 - 1  [0.750] 2" in out
    assert "SPRT: llr " in out.splitlines()[-1]


def test_names_are_escaped_in_text_and_html() -> None:
    pgn = io.StringIO('[White "\x1b[2J"]\n[Black "<b>"]\n[Result "0-1"]\n\n0-1\n')
    table = standings(list(games_from_pgn(pgn)))
    assert "\x1b" not in text_report(table)
    assert "<b>" not in html_report(table).split("<body>")[1]


def test_sub_rounds_are_read_and_counted_like_any_game() -> None:
    pgn = io.StringIO('[Round "3.1"]\n[White "A"]\n[Black "B"]\n[Result "1-0"]\n\n1-0\n\n'
                      '[Round "3.2"]\n[White "B"]\n[Black "A"]\n[Result "1/2-1/2"]\n\n1/2-1/2\n')
    games = list(games_from_pgn(pgn))
    assert [game.round for game in games] == ["3.1", "3.2"]
    assert {row.name: row.points for row in standings(games).players} == {"A": 1.5, "B": 0.5}


def test_a_missing_file_is_one_line(capsys: pytest.CaptureFixture[str], tmp_path: Path) -> None:
    assert main(["report", str(tmp_path / "none.pgn")]) == EXIT_FAILURE
    err = capsys.readouterr().err.strip()
    assert err.startswith("serialref: error: cannot read") and "\n" not in err
