"""``serialref demo``, the README's first command: a whole match on virtual cables."""

from __future__ import annotations

import io
from pathlib import Path

import chess
import chess.pgn
import pytest

from serialref.demo import run_demo
from serialref.errors import SerialrefError
from serialref.happenings import GameEnded, MatchEnded, MatchStarted, MovePlayed, PlayerSignedOn
from serialref.recorders.journal import read_journal


def test_the_demo_plays_a_match_and_keeps_its_records(tmp_path: Path) -> None:
    # A directory holding an earlier match's journal and PGN: a demo is a new match
    # each time, never the resumption of an old one, and appends to nothing.
    (tmp_path / "journal.jsonl").write_text('{"event": "not a journal entry"}\n')
    (tmp_path / "demo.pgn").write_text('[Event "old"]\n\n1. e4 *\n\n')
    console = io.StringIO()
    result = run_demo(tmp_path, games=1, console=console)
    assert result.complete
    assert (result.pgn, result.journal) == (tmp_path / "demo.pgn", tmp_path / "journal.jsonl")
    assert result.player_logs == (tmp_path / "player-a.log", tmp_path / "player-b.log")
    game = the_only_game(result.pgn)
    check_journal(result.journal, game)
    for log in result.player_logs:
        transcript = log.read_text(encoding="ascii")
        assert "refreq sign_on;" in transcript
        assert "refcom disconnect;" in transcript
    check_console(console.getvalue())


def the_only_game(path: Path) -> chess.pgn.Game:
    """The PGN's one game, which python-chess reads without an error."""
    with path.open() as pgn:
        game = chess.pgn.read_game(pgn)
        assert chess.pgn.read_game(pgn) is None
    assert game is not None and game.errors == []
    assert game.headers["Event"] == "serialref demo"
    assert {game.headers["White"], game.headers["Black"]} == {
        "serialref greedy",
        "serialref random",
    }
    assert game.headers["Result"] in {"1-0", "0-1", "1/2-1/2"}
    return game


def check_journal(path: Path, game: chess.pgn.Game) -> None:
    """The journal holds the whole match, move for move the game of the PGN."""
    events = read_journal(path)
    assert isinstance(events[0], MatchStarted) and not events[0].resumed
    assert sorted(e.name for e in events if isinstance(e, PlayerSignedOn)) == [
        "serialref greedy",
        "serialref random",
    ]
    (ended,) = [event for event in events if isinstance(event, GameEnded)]
    moves = [event for event in events if isinstance(event, MovePlayed)]
    assert [move.ply for move in moves] == list(range(1, len(moves) + 1))
    assert isinstance(events[-1], MatchEnded) and events[-1].complete
    assert game.headers["Result"] == ended.result
    assert [move.uci for move in moves] == [move.uci() for move in game.mainline_moves()]


def check_console(printed: str) -> None:
    """What it is doing until the players are there, then the match as cutechess tells it."""
    lines = printed.splitlines()
    assert lines[:3] == [
        "opening two virtual null-modem cables ...",
        "starting the players, greedy (port a) and random (port b), "
        "as serialref client processes ...",
        "waiting for both players to sign on ...",
    ]
    assert "Started game 1 of 1 (serialref greedy vs serialref random)" in lines
    assert lines[-1] == "Finished match"


def test_a_directory_that_cannot_be_made_is_one_clear_error(tmp_path: Path) -> None:
    blocked = tmp_path / "file"
    blocked.write_text("")
    with pytest.raises(SerialrefError) as caught:
        run_demo(blocked / "demo", console=io.StringIO())
    assert str(caught.value) == f"cannot create {str(blocked / 'demo')!r}: Not a directory"
