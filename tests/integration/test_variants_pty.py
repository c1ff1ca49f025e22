"""Every supported variant end to end: the referee and two built-in players over pty cables.

Each game of python-chess's variants is played to its end by the variant's rules (the
fairy variants have their own test); the PGN the referee writes is read back by
python-chess, which must find the same variant, the same moves and the result.
"""

from __future__ import annotations

import io
from pathlib import Path

import chess
import chess.pgn
import pytest
from variantmatch import play_match, settings_for

from serialref.referee.openings import chess960_openings
from serialref.rules import find_rules, variant_names


@pytest.mark.parametrize(
    "variant",
    [name for name in variant_names() if name != "standard" and not find_rules(name).fairy],
)
def test_a_whole_game_of_each_variant_is_played_and_read_back(
    tmp_path: Path, variant: str
) -> None:
    rules = find_rules(variant)
    complete, pgn, journal = play_match(tmp_path, settings_for(variant))
    assert complete
    game = chess.pgn.read_game(io.StringIO(pgn.read_text()))
    assert game is not None
    assert not game.errors
    assert game.headers["Variant"] == rules.pgn_name
    board = game.end().board()
    assert type(board) is rules.board_type
    assert game.headers["Result"] in ("1-0", "0-1", "1/2-1/2")
    assert game.headers["Termination"] == "normal"  # no infraction, no flag: the rules ended it
    assert int(game.headers["PlyCount"]) == len(list(game.mainline_moves())) > 0
    assert any(kind in journal.read_text() for kind in ("GameEnded", "game_ended"))
    outcome = board.outcome(claim_draw=True)
    if game.headers["Termination"] == "normal" and outcome is not None:
        assert outcome.result() == game.headers["Result"]


def test_chess960_start_positions_by_number_are_played_with_both_colours(tmp_path: Path) -> None:
    settings = settings_for("chess960", openings=chess960_openings("0"), games=2)
    complete, pgn, _ = play_match(tmp_path, settings)
    assert complete
    text = io.StringIO(pgn.read_text())
    games = [chess.pgn.read_game(text), chess.pgn.read_game(text)]
    start = chess.Board.from_chess960_pos(0)
    for game in games:
        assert game is not None
        assert game.headers["Variant"] == "Chess960"
        assert game.headers["FEN"] == start.fen()
        assert game.board().chess960
    assert games[0].headers["White"] == games[1].headers["Black"]  # type: ignore[union-attr]


@pytest.mark.parametrize("variant", ["crazyhouse", "3check"])
def test_the_standby_accepts_a_variant_journal_entry_by_entry(
    tmp_path: Path, variant: str
) -> None:
    from serialref.standby.validation import JournalValidator

    complete, _, journal = play_match(tmp_path, settings_for(variant))
    assert complete
    validator = JournalValidator()
    entries = journal.read_bytes().splitlines()
    events = [type(validator.check(raw)).__name__ for raw in entries]
    assert "GameEnded" in events
    assert events.count("MovePlayed") > 0
