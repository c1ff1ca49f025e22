"""GameBoard's own bookkeeping against python-chess, move by move."""

from __future__ import annotations

import chess
from hypothesis import given, settings
from hypothesis import strategies as st

from serialref.epd.parser import parse_record
from serialref.referee.rulings import GameBoard, reply_analysis

# Positions where a move changes squares in unusual ways: both castlings, an en
# passant capture, promotions with and without capture, a Chess960 castling where
# king and rook swap squares that stay occupied by White.
STARTS = [
    chess.STARTING_FEN,
    "r3k2r/pppq1ppp/2n2n2/3pp3/3PP3/2N2N2/PPPQ1PPP/R3K2R w KQkq - 0 8",
    "4k3/8/8/3pP3/8/8/8/4K3 w - d6 0 2",
    "1r2k3/P6P/8/8/8/8/6p1/4K2R b K - 0 40",
]
CHESS960_SWAP = "4k3/8/8/8/8/8/8/5KR1 w G - 0 1"


@settings(max_examples=60, deadline=None)
@given(start=st.sampled_from(STARTS), choices=st.lists(st.integers(0, 10_000), max_size=80))
def test_fens_follow_every_push(start: str, choices: list[int]) -> None:
    board = chess.Board(start)
    game = GameBoard(board.copy())
    for choice in choices:
        moves = list(board.legal_moves)
        if not moves:
            break
        move = moves[choice % len(moves)]
        before = board.fen(en_passant="fen")
        san = board.san(move)
        board.push(move)
        assert game.push(move) == san
        assert game.fen == board.fen(en_passant="fen")
        assert game.previous_fen == before


def test_chess960_castling_that_keeps_both_squares_occupied() -> None:
    board = chess.Board(CHESS960_SWAP, chess960=True)
    game = GameBoard(board.copy())
    castle = board.parse_san("O-O")
    board.push(castle)
    game.push(castle)
    assert game.fen.split(" ")[0] == board.board_fen() == "4k3/8/8/8/8/8/8/5RK1"


def test_a_resumed_game_knows_the_position_before_its_last_move() -> None:
    board = chess.Board()
    for san in ("e4", "c5", "Nf3"):
        board.push_san(san)
    game = GameBoard(board)
    assert game.fen == board.fen(en_passant="fen")
    assert game.previous_fen == "rnbqkbnr/pp1ppppp/8/2p5/4P3/8/PPPP1PPP/RNBQKBNR w KQkq c6 0 2"
    assert game.occurrences() == 1


def test_a_replys_analysis_keeps_its_depth_for_the_record() -> None:
    reply = parse_record(
        "rnbqkbnr/pppppppp/8/8/8/8/PPPPPPPP/RNBQKBNR w KQkq - acd 19; acn 120000; acs 1; "
        "c0 \"not analysis\"; ce 35; pv e4 e5 Nf3; refreq reply; sm e4;"
    )
    assert reply_analysis(reply) == {
        "ce": "35", "acd": "19", "acn": "120000", "acs": "1", "pv": "e4 e5 Nf3"}  # fmt: skip
