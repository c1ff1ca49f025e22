"""serialref.analysis.targets: a record solved by a best move and no avoided one."""

from __future__ import annotations

import chess

from serialref.analysis.targets import is_solved
from serialref.epd.parser import parse_lenient

START = "rnbqkbnr/pppppppp/8/8/8/8/PPPPPPPP/RNBQKBNR w KQkq -"


def test_solved_means_a_best_move_and_no_avoided_one() -> None:
    board = chess.Board()
    e4, d4, nf3 = (board.parse_san(san) for san in ("e4", "d4", "Nf3"))
    both = parse_lenient(START + " am d4; bm e4 Nf3;")
    assert [is_solved(both, board, move) for move in (e4, d4, nf3, None)] == [
        True, False, True, False
    ]
    avoid_only = parse_lenient(START + " am d4;")
    assert [is_solved(avoid_only, board, move) for move in (e4, d4)] == [True, False]
    assert is_solved(parse_lenient(START + ' id "x";'), board, e4) is None
