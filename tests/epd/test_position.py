"""The position fields: syntax errors located in the field, and illegal positions in words."""

from __future__ import annotations

import chess
import pytest
from hypothesis import given
from hypothesis import strategies as st

from serialref.epd.position import position_problems, syntax_problem
from serialref.epd.variantfen import variant_shape

EMPTY = "8/8/8/8/8/8/8/8"


@pytest.mark.parametrize(
    ("fields", "index", "offset", "reason"),
    [
        (("rnbqkbnr/pppppppp/8/8/8/8/PPPPPPPP/RNBQKBN", "w", "-", "-"), 0, 35,
         "piece placement: rank 1 ('RNBQKBN') has 7 squares, needs 8"),
        (("rnbqkbnr/pppppppp/8/8/8/8/PPPPPPPP/RNBQKBNR/7", "w", "-", "-"), 0, 0,
         "has 9 ranks, needs 8"),
        (("rnbqkbnr/pppppppp/44/8/8/8/PPPPPPPP/RNBQKBNR", "w", "-", "-"), 0, 18,
         "rank 6 has two digits in a row ('44')"),
        (("rnbqkbnr/pppppppp/8/8/8/8/PPPPPPPP/RNBQKBN!", "w", "-", "-"), 0, 42,
         "'!' is neither a piece letter"),
        ((EMPTY, "W", "-", "-"), 1, 0, "active colour 'W' must be 'w' or 'b'"),
        ((EMPTY, "w", "QK", "-"), 2, 0, "castling field 'QK' must be '-' or letters from KQkq"),
        ((EMPTY, "w", "AA", "-"), 2, 0, "castling field 'AA'"),
        ((EMPTY, "w", "-", "e4"), 3, 0, "en passant square 'e4' is not on rank 3 or 6"),
        ((EMPTY, "w", "-", "-1"), 3, 0, "neither '-' nor a square (a missing blank after '-'?)"),
        ((EMPTY, "w", "-", "x"), 3, 0, "en passant field 'x' is neither '-' nor a square"),
    ],
)
def test_syntax_problem_names_field_offset_and_reason(
    fields: tuple[str, str, str, str], index: int, offset: int, reason: str
) -> None:
    problem = syntax_problem(fields)
    assert problem is not None
    assert problem[:2] == (index, offset)
    assert reason in problem[2]


@pytest.mark.parametrize(
    "fields",
    [
        ("rnbqkbnr/pppppppp/8/8/8/8/PPPPPPPP/RNBQKBNR", "w", "KQkq", "-"),
        (EMPTY, "b", "Kq", "e3"),
        ("4k2r/8/8/8/8/8/8/R3K3", "w", "Ah", "-"),  # Shredder-FEN, which python-chess reads
    ],
)
def test_syntax_problem_passes_what_python_chess_reads(fields: tuple[str, str, str, str]) -> None:
    assert syntax_problem(fields) is None
    chess.Board(" ".join((*fields, "0", "1")))


@given(st.text(alphabet="/0123456789pPkKx", min_size=1, max_size=40))
def test_placement_check_explains_every_refusal(placement: str) -> None:
    problem = syntax_problem((placement, "w", "-", "-"))
    if problem is None:
        if variant_shape(placement) is None:  # variant boards are the variants' to read
            assert chess.Board(f"{placement} w - - 0 1").board_fen() == placement
    else:
        assert problem[0] == 0
        assert problem[2].startswith("piece placement")
        assert 0 <= problem[1] < len(placement)


@pytest.mark.parametrize(
    ("fen", "words"),
    [
        ("4k3/8/8/8/8/8/8/4K3 w - - 0 1", []),
        ("4k3/8/8/8/8/8/8/4K2R b K - 0 1", []),
        ("8/8/8/8/8/8/8/8 w - - 0 1", ["no white king", "no black king", "empty board"]),
        ("4k3/8/8/8/8/8/8/4K3 w K - 0 1", ["castling rights without king and rook at home"]),
        ("4k3/8/8/8/8/8/8/4K2P w - - 0 1", ["pawns on the first or eighth rank"]),
        ("4k2R/8/8/8/8/8/8/4K3 w - - 0 1", ["the side not to move is in check"]),
        ("4k3/8/8/8/4P3/8/8/4K3 w - e3 0 1",
         ["en passant square without a pawn that just moved two"]),
    ],
)
def test_position_problems_in_words(fen: str, words: list[str]) -> None:
    assert position_problems(chess.Board(fen)) == words
