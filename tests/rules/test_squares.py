"""Boards of every variant read square by square, and moves as the squares they touch."""

from __future__ import annotations

import importlib.util

import chess
import chess.variant
import pytest

from serialref.rules import find_rules, variant_names
from serialref.rules.squares import MoveSquares, move_squares, square_name, squares_of

fairy = pytest.mark.skipif(
    importlib.util.find_spec("pyffish") is None, reason="the fairy variants need pyffish"
)


def played(variant: str, moves: str) -> chess.Board:
    rules = find_rules(variant)
    board = rules.board()
    for uci in moves.split():
        board.push(board.parse_uci(uci))
    return board


def test_a_standard_board_holds_what_python_chess_says() -> None:
    board = chess.Board("r3k2r/8/8/3pP3/8/8/8/R3K2R w KQkq d6 0 1")
    squares = squares_of(board)
    assert (squares.files, squares.ranks, squares.hands, squares.checks) == (8, 8, None, None)
    assert {square_name(s): p for s, p in squares.pieces.items()} == {
        chess.square_name(s): p.symbol() for s, p in board.piece_map().items()
    }
    assert squares.turn == chess.WHITE


def test_crazyhouse_hands_and_promoted_pieces() -> None:
    board = chess.variant.CrazyhouseBoard("4k3/8/8/8/8/8/8/4K2Q~[NNpb] b - - 0 1")
    squares = squares_of(board)
    assert squares.hands is not None
    assert (sorted(squares.hands[0]), sorted(squares.hands[1])) == (["N", "N"], ["b", "p"])
    assert squares.pieces[7, 0] == "Q"  # the promoted queen, drawn as a queen
    assert squares.turn == chess.BLACK


def test_three_check_counts_the_checks_still_to_give() -> None:
    board = chess.variant.ThreeCheckBoard()
    board.push_san("e4")
    board.push_san("f5")
    board.push_san("Qh5+")
    assert squares_of(board).checks == (2, 3)


@fairy
@pytest.mark.parametrize(
    ("variant", "size"),
    [("xiangqi", (9, 10)), ("shogi", (9, 9)), ("capablanca", (10, 8)), ("makruk", (8, 8))],
)
def test_a_fairy_board_has_its_own_size(variant: str, size: tuple[int, int]) -> None:
    squares = squares_of(find_rules(variant).board())
    assert (squares.files, squares.ranks) == size
    assert squares.pieces[0, 0].isupper() and squares.pieces[0, size[1] - 1].islower()


@fairy
def test_xiangqi_s_back_rank_is_its_tenth() -> None:
    squares = squares_of(played("xiangqi", "h3h10 i10h10"))
    assert squares.pieces[7, 9] == "r"  # the chariot that took back on h10
    assert (8, 9) not in squares.pieces and squares.hands is None


@fairy
def test_shogi_hands_and_promoted_pieces() -> None:
    squares = squares_of(played("shogi", "c3c4 g7g6 b2h8+ g9h8"))
    assert squares.hands == ("B", "b")
    board = played("shogi", "c3c4 g7g6 b2h8+")
    assert squares_of(board).pieces[7, 7] == "+B"


@pytest.mark.parametrize(
    ("uci", "expected"),
    [
        ("e2e4", MoveSquares((4, 1), (4, 3), None)),
        ("N@c5", MoveSquares(None, (2, 4), "N")),
        ("j2j4", MoveSquares((9, 1), (9, 3), None)),  # capablanca's tenth file
        ("h3h10", MoveSquares((7, 2), (7, 9), None)),  # xiangqi's tenth rank
        ("b2h8+", MoveSquares((1, 1), (7, 7), None)),  # shogi's promotion
        ("e1g1h", MoveSquares((4, 0), (6, 0), None)),  # S-chess gating a hawk
        ("a7a8q", MoveSquares((0, 6), (0, 7), None)),
        ("0000", None),
    ],
)
def test_a_move_s_squares(uci: str, expected: MoveSquares | None) -> None:
    assert move_squares(uci) == expected


@pytest.mark.parametrize("variant", variant_names())
def test_every_variant_s_start_has_its_pieces_on_their_squares(variant: str) -> None:
    rules = find_rules(variant)
    if rules.fairy and importlib.util.find_spec("pyffish") is None:
        pytest.skip("the fairy variants need pyffish")
    squares = squares_of(rules.board())
    placement = rules.starting_fen.split(" ")[0].split("[")[0]
    letters = [char for char in placement if char.isalpha()]
    assert sorted(squares.pieces.values()) == sorted(letters)
    assert squares.files * squares.ranks >= len(letters)
