"""The record as a value: construction checks, copies, typed accessors and boards."""

from __future__ import annotations

from collections.abc import Callable

import chess
import pytest

from serialref.epd.operations import Operation
from serialref.epd.parser import parse_record
from serialref.epd.record import EpdRecord
from serialref.epd.writer import format_record
from serialref.errors import RecordError

START = "rnbqkbnr/pppppppp/8/8/8/8/PPPPPPPP/RNBQKBNR w KQkq -"


def test_typed_accessors() -> None:
    record = parse_record(
        f'{START} refcom respond; hmvc +5; fmvn 3; ce -20; D1 -7; '
        f"cc 000:00:05:00 001:00:00:01; "
        f'ptp Event "Test" Result "*"; sm e4; bm d4;'
    )
    board = chess.Board()
    assert record.identifier("refcom") == "respond"
    assert record.integer("hmvc") == 5
    assert record.integer("ce") == -20
    assert record.integer("D1") == -7
    assert record.clock_pair() == (300, 86401)
    assert record.tag_pairs() == [("Event", "Test"), ("Result", "*")]
    assert record.move("sm", board) == chess.Move.from_uci("e2e4")
    assert record.move("bm", board) == chess.Move.from_uci("d2d4")
    assert board == chess.Board()


@pytest.mark.parametrize(
    ("tail", "call", "reason"),
    [
        ("", lambda r: r.integer("hmvc"), "hmvc: the record has no 'hmvc' operation"),
        ("hmvc 1 2;", lambda r: r.integer("hmvc"), "hmvc takes one operand, found 2"),
        ("hmvc -1;", lambda r: r.integer("hmvc"), "out of range (0 to 2147483647)"),
        ("ce -32769;", lambda r: r.integer("ce"), "out of range (-32768 to 32766)"),
        ("D1 2147483648;", lambda r: r.integer("D1"), "D1: operand '2147483648' is out of range"),
        ("D1 1 2;", lambda r: r.integer("D1"), "D1: expected one operand, found 2"),
        ("bm e4 d4;", lambda r: r.move("bm", chess.Board()), "bm: expected one operand, found 2"),
        ("refcom re-spond;", lambda r: r.identifier("refcom"), "not an identifier"),
        ("refcom;", lambda r: r.identifier("refcom"), "refcom takes one operand, found 0"),
        ("sm e5;", lambda r: r.move("sm", chess.Board()), "not a legal move"),
        ("sm e4 e5;", lambda r: r.move("sm", chess.Board()), "sm takes one operand, found 2"),
        ("cc 000:00:00:00;", lambda r: r.clock_pair(), "cc takes two operands, found 1"),
        ("cc 00:00:00:00 000:00:00:00;", lambda r: r.clock_pair(), "is not DDD:HH:MM:SS"),
        ('cc "000:00:00:00" 000:00:00:00;', lambda r: r.clock_pair(), "must be a bare clock"),
        ("ptp Event;", lambda r: r.tag_pairs(), "ptp takes an even number of operands"),
        ('ptp "Event" "x";', lambda r: r.tag_pairs(), "must be a bare identifier"),
        ("hmvc x;", lambda r: r.board(), "hmvc: operand 'x' is not an integer"),
    ],
)
def test_typed_accessors_raise_record_errors(
    tail: str, call: Callable[[EpdRecord], object], reason: str
) -> None:
    record = parse_record(f"{START} {tail}")
    with pytest.raises(RecordError) as caught:
        call(record)
    assert reason in caught.value.reason


def test_board_uses_hmvc_and_fmvn() -> None:
    board = parse_record(f"{START} hmvc 7; fmvn 12;").board()
    assert (board.halfmove_clock, board.fullmove_number) == (7, 12)
    assert parse_record(START).board() == chess.Board()


def test_board_turns_a_python_chess_refusal_into_a_record_error(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    # Every position that passes the syntax check is one python-chess reads today; the
    # conversion guards the boundary against a stricter python-chess.
    def refuse(_board: chess.Board, fen: str) -> None:
        raise ValueError(f"invalid fen: {fen!r}")

    monkeypatch.setattr(chess.Board, "set_fen", refuse)
    with pytest.raises(RecordError, match="python-chess rejects the position"):
        parse_record(f"{START} hmvc 1;").board()


def test_from_board_writes_en_passant_after_every_double_push() -> None:
    board = chess.Board()
    board.push_san("e4")
    record = EpdRecord.from_board(board, Operation.of("refcom", "respond"))
    assert record.position == "rnbqkbnr/pppppppp/8/8/4P3/8/PPPP1PPP/RNBQKBNR b KQkq e3"
    assert board.fen().split()[3] == "-"  # python-chess's default would drop it
    assert record.board().fen() == board.fen()
    assert format_record(record) == f"{record.position} refcom respond;"


def test_with_operations_replaces_in_place_and_without_removes() -> None:
    record = parse_record(f"{START} a 1; b 2; c 3;")
    changed = record.with_operations(Operation.of("b", "9"), Operation.of("d", "4"))
    assert [op.operands[0].text for op in changed.operations] == ["1", "9", "3", "4"]
    assert "b" in changed and "b" not in changed.without("b", "zz")
    assert changed.without("b").operand_texts("b") == ()
    assert changed.operand_texts("zz") == ()
    assert record.with_operations(Operation.of("e", 1), Operation.of("e", 2)).operand_texts(
        "e"
    ) == ("2",)
    assert record.operand_texts("b") == ("2",)  # the original is unchanged


@pytest.mark.parametrize(
    ("build", "reason"),
    [
        (lambda: EpdRecord("8/8/8/8/8/8/8/9", "w", "-", "-"), "'9' is neither a piece"),
        (lambda: EpdRecord("8/8/8/8/8/8/8/8", "x", "-", "-"), "active colour 'x'"),
        (
            lambda: EpdRecord("8/8/8/8/8/8/8/8", "w", "-", "-", (Operation("a"), Operation("a"))),
            "opcode 'a' appears twice",
        ),
    ],
)
def test_a_record_that_could_not_be_written_is_refused(
    build: Callable[[], EpdRecord], reason: str
) -> None:
    with pytest.raises(RecordError, match=reason):
        build()


def test_operations_given_as_a_list_are_kept_as_a_tuple() -> None:
    record = EpdRecord("8/8/8/8/8/8/8/8", "w", "-", "-", [Operation("a")])  # type: ignore[arg-type]
    assert record.operations == (Operation("a"),)
    assert hash(record) == hash(EpdRecord("8/8/8/8/8/8/8/8", "w", "-", "-", (Operation("a"),)))
