"""Variant FEN in the codec: the example positions of the variant FEN convention round-trip,
input-only forms are read and written in the standard form, and bad fields are named."""

from __future__ import annotations

import chess.variant
import pytest

from serialref.epd.parser import parse_lenient, parse_record
from serialref.epd.position import syntax_problem
from serialref.epd.writer import format_record
from serialref.errors import RecordError

# The examples of the variant FEN convention (Fairy-Stockfish's documentation).
EXAMPLES = [
    "rnabqkbcnr/pppppppppp/10/10/10/10/PPPPPPPPPP/RNABQKBCNR w KQkq -",  # capablanca
    "rnbqkb1r/ppp2ppp/5p2/3p4/8/8/PPPP1PPP/RNBQKBNR[Np] w KQkq -",  # crazyhouse
    "rnbqkbnr/pppppppp/8/8/8/8/PPPPPPPP/RNBQKBNR[HEhe] w KQBCDFGkqbcdfg -",  # seirawan
    "rnbqkbnr/pppppppp/8/8/8/8/PPPPPPPP/RNBQKBNR w KQkq - 3+3",  # three-check
    "rnbqkbnr/pppppppp/8/8/8/8/PPPPPPPP/RNBQKBNR[] w KQkq e3",  # empty hand
    "r1bqkbnr/pppp1ppp/2n5/4p3/4P3/5N2/PPPP1PPP/RNBQ~KB1R[Pp] b KQkq -",  # promoted queen
    "rnsmksnr/8/pppppppp/8/8/PPPPPPPP/8/RNSKMSNR w - 128",  # makruk, counting limit
    "rnbakabnr/9/1c5c1/p1p1p1p1p/9/9/P1P1P1P1P/1C5C1/9/RNBAKABNR w - -",  # xiangqi
    "lnsgkgsnl/1r5b1/ppppppppp/9/9/9/PPPPPPPPP/1B5R1/LNSGKGSNL[-] w - -",  # shogi
    "r*******/8/8/8/8/8/8/_______R w - -",  # walls and holes
]


@pytest.mark.parametrize("position", EXAMPLES)
def test_variant_positions_round_trip(position: str) -> None:
    line = f"{position} hmvc 0;"
    record = parse_record(line)
    assert format_record(record) == line
    assert format_record(parse_lenient(line)) == line


def test_hand_as_ninth_rank_is_read_and_written_in_brackets() -> None:
    record = parse_record("rnbqkb1r/ppp2ppp/5p2/3p4/8/8/PPPP1PPP/RNBQKBNR/Np w KQkq - hmvc 0;")
    assert record.placement == "rnbqkb1r/ppp2ppp/5p2/3p4/8/8/PPPP1PPP/RNBQKBNR[Np]"


def test_lichess_checks_given_become_checks_to_give() -> None:
    record = parse_lenient(
        "rnbqkbnr/pppppppp/8/8/8/8/PPPPPPPP/RNBQKBNR w KQkq - 0 1 +1+0",
        chess.variant.ThreeCheckBoard,
    )
    assert record.checks == "2+3"
    remaining = record.board(chess.variant.ThreeCheckBoard).remaining_checks
    assert (remaining[chess.WHITE], remaining[chess.BLACK]) == (2, 3)


def test_lenient_moves_are_checked_on_the_variant_board() -> None:
    line = "rnbqkb1r/ppp2ppp/5p2/3p4/8/8/PPPP1PPP/RNBQKBNR[Np] w KQkq - bm N@e5;"
    assert "bm" in parse_lenient(line, chess.variant.CrazyhouseBoard)
    with pytest.raises(RecordError):
        parse_lenient(line)  # a drop is no standard chess move


def test_from_board_writes_the_check_field() -> None:
    from serialref.epd.record import EpdRecord

    board = chess.variant.ThreeCheckBoard()
    board.push_san("e4")
    board.push_san("f5")
    board.push_san("Qh5+")
    record = EpdRecord.from_board(board)
    assert record.position.endswith(" b KQkq - 2+3")


@pytest.mark.parametrize(
    ("fields", "index", "reason"),
    [
        (("rnabqkbcnr/10/10/10/10/10/10/RNABQKBCN", "w", "-", "-"), 0,
         "has 9 squares, the first rank 10"),
        (("rnabqkbcnr/10/10/10/10/10/10/RNABQKBCNR", "w", "KK", "-"), 2, "none twice"),
        (("rnabqkbcnr/10/10/10/10/10/10/RNABQKBCNR", "w", "-", "e"), 3, "counting limit"),
        (("rnbqkbnr/8/8/8/8/8/8/RNBQKBNR[N!]", "w", "-", "-"), 0, "piece placement"),
    ],
)
def test_variant_field_errors_are_named(
    fields: tuple[str, str, str, str], index: int, reason: str
) -> None:
    problem = syntax_problem(fields)
    assert problem is not None
    assert problem[0] == index
    assert reason in problem[2]


def test_bad_check_field_is_refused() -> None:
    from serialref.epd.record import CheckCountingRecord

    with pytest.raises(RecordError, match="check counting field"):
        CheckCountingRecord("8/8/8/8/8/8/8/k6K", "w", "-", "-", checks="3-3")
