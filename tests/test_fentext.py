"""FenText against python-chess's own FEN, move by move."""

from __future__ import annotations

import chess
import chess.variant
from hypothesis import given, settings
from hypothesis import strategies as st

from serialref.fentext import FenText

STARTS = [
    chess.STARTING_FEN,
    "r3k2r/pppq1ppp/2n2n2/3pp3/3PP3/2N2N2/PPPQ1PPP/R3K2R w KQkq - 0 8",
    "4k3/8/8/3pP3/8/8/8/4K3 w - d6 0 2",
    "1r2k3/P6P/8/8/8/8/6p1/4K2R b K - 0 40",
]


@settings(max_examples=60, deadline=None)
@given(start=st.sampled_from(STARTS), choices=st.lists(st.integers(0, 10_000), max_size=60))
def test_fields_and_fen_follow_every_push(start: str, choices: list[int]) -> None:
    reference = chess.Board(start)
    text = FenText(chess.Board(start))
    for index, choice in enumerate(choices):
        moves = list(reference.legal_moves)
        if not moves:
            break
        move = moves[choice % len(moves)]
        reference.push(move)
        if index % 2:
            text.push(move)
        else:
            reference.pop()
            san = reference.san(move)
            reference.push(move)
            assert text.san_and_push(move) == san
        assert text.fields() == reference.epd(en_passant="fen")
        assert text.fen() == reference.fen(en_passant="fen")


def test_a_move_pushed_and_popped_elsewhere_leaves_the_text_right() -> None:
    board = chess.Board()
    text = FenText(board)
    board.push_san("e4")
    board.pop()
    text.push(chess.Move.from_uci("d2d4"))
    assert text.fen() == "rnbqkbnr/pppppppp/8/8/3P4/8/PPP1PPPP/RNBQKBNR b KQkq d3 0 1"


def test_a_variant_board_writes_its_own_fen() -> None:
    board = chess.variant.CrazyhouseBoard()
    text = FenText(board)
    for san in ("e4", "d5", "exd5", "Qxd5"):
        text.push(board.parse_san(san))
    assert text.fen() == board.fen(en_passant="fen")
    assert "[Pp]" in text.fields()
