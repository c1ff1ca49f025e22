"""Operand -> value for each basetype of spec 5.2 that section 6 uses.

Two callers, one set of rules: the typed accessors of
:class:`~serialref.epd.record.EpdRecord` convert without a column, and the lenient
reader checks every operand of a known opcode with the column where it stands, so
that the user of a file is pointed at it.  Moves need a board, so the reader checks
their syntax here and their legality once the position is known.
"""

from __future__ import annotations

import datetime
import re
from collections.abc import Callable

import chess

from serialref.epd.clockvalue import parse_clock
from serialref.epd.opcodes import Basetype, OpcodeSpec
from serialref.epd.operations import Operand, Operation
from serialref.errors import RecordError

__all__ = [
    "INTEGER_RE",
    "check_count",
    "check_operand",
    "to_clock",
    "to_identifier",
    "to_integer",
    "to_move",
]

INTEGER_RE = re.compile(r"[+-]?[0-9]+")
"""Spec 5.2.3: an optional sign and digits."""

_IDENTIFIER_RE = re.compile(r"[A-Za-z0-9_]{1,15}")
_DATE_RE = re.compile(r"([0-9]{4})\.([0-9]{2})\.([0-9]{2})")
_TIME_RE = re.compile(r"([0-9]{2}):([0-9]{2}):([0-9]{2})")


def check_count(operation: Operation, spec: OpcodeSpec) -> None:
    """Raise when ``operation`` carries a number of operands ``spec`` does not allow."""
    count = len(operation.operands)
    if not spec.count_fits(count):
        raise RecordError(f"{operation.opcode} takes {spec.count_text}, found {count}")


def _require_bare(opcode: str, operand: Operand, what: str, column: int) -> None:
    if operand.quoted:
        raise RecordError(
            f"{opcode}: operand {operand.external!r} must be a bare {what}, not a quoted string",
            column=column,
        )


def to_identifier(opcode: str, operand: Operand, column: int = 0) -> str:
    """Spec 5.2.1: one to fifteen letters, digits or '_'."""
    _require_bare(opcode, operand, "identifier", column)
    if not _IDENTIFIER_RE.fullmatch(operand.text):
        raise RecordError(
            f"{opcode}: operand {operand.text!r} is not an identifier "
            "(1 to 15 letters, digits or '_')",
            column=column,
        )
    return operand.text


def to_integer(opcode: str, operand: Operand, values: range, column: int = 0) -> int:
    """Spec 5.2.3, within ``values`` (the opcode's range)."""
    _require_bare(opcode, operand, "integer", column)
    if not INTEGER_RE.fullmatch(operand.text):
        raise RecordError(f"{opcode}: operand {operand.text!r} is not an integer", column=column)
    # Python refuses int() of very long digit strings; anything past 20 digits is out anyway.
    value = int(operand.text) if len(operand.text.lstrip("+-0")) <= 20 else values.stop
    if value not in values:
        raise RecordError(
            f"{opcode}: operand {operand.text!r} is out of range "
            f"({values.start} to {values.stop - 1})",
            column=column,
        )
    return value


def _to_date(opcode: str, operand: Operand, column: int) -> datetime.date:
    _require_bare(opcode, operand, "date", column)
    match = _DATE_RE.fullmatch(operand.text)
    try:
        if match is None:
            raise ValueError("not YYYY.MM.DD")
        return datetime.date(*(int(part) for part in match.groups()))
    except ValueError as exc:
        raise RecordError(
            f"{opcode}: operand {operand.text!r} is not a date YYYY.MM.DD ({exc})", column=column
        ) from exc


def _to_time(opcode: str, operand: Operand, column: int) -> datetime.time:
    _require_bare(opcode, operand, "time of day", column)
    match = _TIME_RE.fullmatch(operand.text)
    try:
        if match is None:
            raise ValueError("not HH:MM:SS")
        hour, minute, second = (int(part) for part in match.groups())
        return datetime.time(hour, minute, second)
    except ValueError as exc:
        raise RecordError(
            f"{opcode}: operand {operand.text!r} is not a time of day HH:MM:SS ({exc})",
            column=column,
        ) from exc


def to_clock(opcode: str, operand: Operand, column: int = 0) -> int:
    """Spec 5.2.7: seconds from ``DDD:HH:MM:SS``."""
    _require_bare(opcode, operand, "clock value", column)
    try:
        return parse_clock(operand.text)
    except RecordError as exc:
        raise RecordError(f"{opcode}: {exc.reason}", column=column) from exc


def to_move(opcode: str, operand: Operand, board: chess.Board, column: int = 0) -> chess.Move:
    """Spec 5.2.2: a SAN move, legal in ``board``."""
    _require_bare(opcode, operand, "move", column)
    _check_detached_mark(opcode, operand, column)
    san = operand.text
    try:
        move = board.parse_san(san)
    except chess.AmbiguousMoveError as exc:
        raise RecordError(
            f"{opcode}: {san!r} is ambiguous in this position", column=column
        ) from exc
    except chess.IllegalMoveError as exc:
        raise RecordError(
            f"{opcode}: {san!r} is not a legal move in this position", column=column
        ) from exc
    except ValueError as exc:
        raise RecordError(
            f"{opcode}: {san!r} is not a legal move (not readable as SAN)", column=column
        ) from exc
    if not move:
        raise RecordError(f"{opcode}: {san!r} is a null move, not a legal move", column=column)
    return move


def _check_detached_mark(opcode: str, operand: Operand, column: int) -> None:
    if operand.text in ("+", "#", "++"):
        mark = "mate" if operand.text == "#" else "check"
        raise RecordError(
            f"{opcode}: operand {operand.text!r} is a {mark} mark separated from its move "
            "by a blank",
            column=column,
        )


def check_operand(spec: OpcodeSpec, index: int, opcode: str, operand: Operand, column: int) -> None:
    """Raise when the operand at ``index`` of a known opcode is not of its basetype.

    Only a move's syntax is checked here: its legality needs the record's board.
    Strings and ``noop`` operands take anything (a bare token where a string is due
    is kept as written).
    """
    _CHECKS[spec.basetype(index)](opcode, operand, spec, column)


def _check_move_syntax(opcode: str, operand: Operand, _spec: OpcodeSpec, column: int) -> None:
    _require_bare(opcode, operand, "move", column)


def _accept(_opcode: str, _operand: Operand, _spec: OpcodeSpec, _column: int) -> None:
    """Strings and ``noop`` operands: any operand will do."""


_CHECKS: dict[Basetype, Callable[[str, Operand, OpcodeSpec, int], object]] = {
    Basetype.IDENTIFIER: lambda opcode, operand, _spec, column: to_identifier(
        opcode, operand, column
    ),
    Basetype.MOVE: _check_move_syntax,
    Basetype.INTEGER: lambda opcode, operand, spec, column: to_integer(
        opcode, operand, spec.values, column
    ),
    Basetype.STRING: _accept,
    Basetype.DATE: lambda opcode, operand, _spec, column: _to_date(opcode, operand, column),
    Basetype.TIME_OF_DAY: lambda opcode, operand, _spec, column: _to_time(opcode, operand, column),
    Basetype.CLOCK: lambda opcode, operand, _spec, column: to_clock(opcode, operand, column),
    Basetype.ANY: _accept,
}
