"""Operand -> value, basetype by basetype; errors carry the column when one is given."""

from __future__ import annotations

import chess
import pytest

from serialref.epd.basetypes import (
    check_count,
    check_operand,
    to_clock,
    to_identifier,
    to_integer,
    to_move,
)
from serialref.epd.opcodes import INT32, OPCODES
from serialref.epd.operations import Operand, Operation
from serialref.errors import RecordError

CE = OPCODES["ce"].values


@pytest.mark.parametrize(
    ("text", "values", "expected"),
    [("0", INT32, 0), ("+5", INT32, 5), ("-007", INT32, -7), ("-32768", CE, -32768),
     ("32766", CE, 32766), ("2147483647", INT32, 2**31 - 1)],
)
def test_integers_within_the_range(text: str, values: range, expected: int) -> None:
    assert to_integer("x", Operand(text), values) == expected


@pytest.mark.parametrize(
    ("text", "values", "reason"),
    [("32767", CE, "ce: operand '32767' is out of range (-32768 to 32766)"),
     ("-32769", CE, "out of range (-32768 to 32766)"),
     ("2147483648", INT32, "out of range (-2147483648 to 2147483647)"),
     ("9" * 5000, INT32, "out of range"),
     ("1.5", INT32, "ce: operand '1.5' is not an integer"),
     ("--1", INT32, "is not an integer")],
)
def test_integers_outside_the_range_or_malformed(text: str, values: range, reason: str) -> None:
    with pytest.raises(RecordError) as caught:
        to_integer("ce", Operand(text), values, 12)
    assert reason in caught.value.reason
    assert caught.value.column == 12


def test_identifiers() -> None:
    assert to_identifier("refcom", Operand("sign_on")) == "sign_on"
    with pytest.raises(RecordError, match="not an identifier"):
        to_identifier("refcom", Operand("a" * 16))
    with pytest.raises(RecordError, match="must be a bare identifier, not a quoted string"):
        to_identifier("refcom", Operand("respond", True))


def test_clock_values_name_their_opcode() -> None:
    assert to_clock("cc", Operand("000:00:01:01")) == 61
    with pytest.raises(RecordError) as caught:
        to_clock("cc", Operand("000:00:01"), 30)
    assert caught.value.reason == "cc: clock value '000:00:01' is not DDD:HH:MM:SS"
    assert caught.value.column == 30


@pytest.mark.parametrize(
    ("san", "reason"),
    [("e5", "'e5' is not a legal move in this position"),
     ("Nd2", "'Nd2' is ambiguous"),
     ("e2e4x", "not readable as SAN"),
     ("--", "null move"),
     ("#", "is a mate mark separated from its move"),
     ("++", "is a check mark separated from its move")],
)
def test_moves_must_be_legal_san(san: str, reason: str) -> None:
    board = chess.Board("4k3/8/8/8/8/8/8/1N2KN2 w - - 0 1") if san == "Nd2" else chess.Board()
    with pytest.raises(RecordError, match=reason):
        to_move("sm", Operand(san), board)


def test_a_legal_move_is_read_on_the_board_given() -> None:
    board = chess.Board()
    board.push_san("e4")
    assert to_move("sm", Operand("e5"), board) == chess.Move.from_uci("e7e5")


def test_check_count_uses_the_table() -> None:
    check_count(Operation.of("cc", "a", "b"), OPCODES["cc"])
    with pytest.raises(RecordError, match="cc takes two operands, found 1"):
        check_count(Operation.of("cc", "a"), OPCODES["cc"])


@pytest.mark.parametrize(
    ("opcode", "index", "operand", "reason"),
    [("ts", 0, Operand("1995.13.01"), "ts: operand '1995.13.01' is not a date"),
     ("ts", 0, Operand("1995-11-26"), "is not a date YYYY.MM.DD (not YYYY.MM.DD)"),
     ("ts", 1, Operand("23:60:00"), "is not a time of day"),
     ("ts", 0, Operand("1995.11.26", True), "must be a bare date"),
     ("ptp", 2, Operand("Bad-Tag"), "is not an identifier"),
     ("cc", 1, Operand("1:00"), "cc: clock value '1:00'"),
     ("bm", 3, Operand("e4", True), "must be a bare move"),
     ("hmvc", 0, Operand("-1"), "out of range (0 to 2147483647)")],
)
def test_check_operand_follows_the_basetype_of_each_position(
    opcode: str, index: int, operand: Operand, reason: str
) -> None:
    with pytest.raises(RecordError) as caught:
        check_operand(OPCODES[opcode], index, opcode, operand, 7)
    assert reason in caught.value.reason
    assert caught.value.column == 7


@pytest.mark.parametrize(
    ("opcode", "index", "operand"),
    [("ts", 0, Operand("1995.11.26")), ("ts", 1, Operand("23:59:59")),
     ("ptp", 1, Operand("any text; really", True)), ("id", 0, Operand("bare.token")),
     ("noop", 5, Operand("x")), ("bm", 0, Operand("Zz9")), ("cc", 0, Operand("000:00:00:00"))],
)
def test_check_operand_accepts_what_the_basetype_allows(
    opcode: str, index: int, operand: Operand
) -> None:
    assert check_operand(OPCODES[opcode], index, opcode, operand, 1) is None  # no RecordError
