"""EPD records: one text line <-> :class:`EpdRecord` (EPD spec sections 4-7, PROTOCOL.md 2).

python-chess cannot be the tokenizer: ``Board.set_epd`` reads every bare word as a move
or a number, so ``refcom conclude``, ``cc 000:00:05:00 000:00:04:00`` and multi-operand
``ptp`` fail, and ``Board.epd`` quotes every string.  This module therefore splits lines
itself and leaves boards, SAN, FEN and legality to python-chess.

Three readers share one tokenizer so that they cannot drift apart:

* :func:`parse_record` is the strict wire parser.  It checks syntax only (position fields,
  opcodes, operands, ``;``), because the referee parses every line and meaning is checked
  where it is used, by the typed accessors of :class:`EpdRecord`.
* :func:`parse_lenient` reads files written by other programs.  It tolerates the
  harmless mess found in the wild and, as spec 7.1 asks of ``pfdn``, validates every
  known opcode, including the legality of its moves.  What it cannot read with
  certainty it rejects; it never guesses.
* :func:`format_record` always writes the normalised form of spec 7.1.
"""

from __future__ import annotations

import datetime
import enum
import functools
import logging
import re
from collections.abc import Callable, Iterable, Iterator, Mapping
from dataclasses import dataclass, field
from types import MappingProxyType

import chess

from serialref.errors import RecordError, escape

__all__ = [
    "OPCODES",
    "Basetype",
    "CommentRegisters",
    "EpdRecord",
    "MoveUse",
    "OpcodeSpec",
    "Operand",
    "Operation",
    "clock_text",
    "format_record",
    "parse_clock",
    "parse_lenient",
    "parse_record",
]

LOGGER = logging.getLogger(__name__)

INT32_MIN = -(2**31)
INT32_MAX = 2**31 - 1
# acn/acs: spec 6.1 only asks for "a long (four byte)" value, but searches of today pass
# 2**31 nodes within minutes, so the counts accept the signed 64-bit range.
INT64_MAX = 2**63 - 1
MAX_CLOCK_SECONDS = 1000 * 86400 - 1  # "999:23:59:59", the largest value of spec 5.2.7

_OPCODE_RE = re.compile(r"[A-Za-z][A-Za-z0-9_]{0,14}")
_TOKEN_TEXT_RE = re.compile(r"[!#-:<-~]+")  # printable, no blank, quote or semicolon
_STRING_TEXT_RE = re.compile(r'[ !#-~]{0,255}')  # printable, no quote, < 256 bytes
_IDENTIFIER_RE = re.compile(r"[A-Za-z0-9_]{1,15}")
_INTEGER_RE = re.compile(r"[+-]?[0-9]+")
_FLOATING_RE = re.compile(r"[+-]?[0-9]+\.[0-9]+")
_DATE_RE = re.compile(r"([0-9]{4})\.([0-9]{2})\.([0-9]{2})")
_TIME_RE = re.compile(r"([0-9]{2}):([0-9]{2}):([0-9]{2})")
_CLOCK_RE = re.compile(r"([0-9]{3,4}):([0-9]{2}):([0-9]{2}):([0-9]{2})")
_REGISTER_RE = re.compile(r"([cv])([0-9])")
_NOT_PRINTABLE_RE = re.compile(r"[^ -~]")

# Position fields (spec 4).  The fourth field stops at ';' so that "- ;bm e4" reads as
# the field '-' followed by a stray separator rather than as an en passant field '-;'.
_FIELDS_RE = re.compile(r" *([^ ]+) +([^ ]+) +([^ ]+) +([^ ;]+)")
_PLACEMENT_RE = re.compile(
    r"(?:[1-8]?(?:[PNBRQKpnbrqk][1-8]?)*/){7}[1-8]?(?:[PNBRQKpnbrqk][1-8]?)*"
)
_EXPANDED_PLACEMENT_RE = re.compile(r"(?:[^/]{8}/){7}[^/]{8}")
_EXPAND_DIGITS = str.maketrans({str(n): "1" * n for n in range(1, 9)})
_CASTLING_RE = re.compile(r"-|(?=.)K?Q?k?q?")
_EN_PASSANT_RE = re.compile(r"-|[a-h][36]")
_FEN_COUNTERS_RE = re.compile(r" +([0-9]+) +([0-9]+)(?=[ ;]|$)")

# The operation part of a strict record holding no quoted string (the common case).
_PLAIN_OPERATIONS_RE = re.compile(r"(?: +[A-Za-z][A-Za-z0-9_]{0,14}(?: +[!#-:<-~]+)*;)* *")

# One token of the operation part; "open" is a quote that is never closed.
_TOKEN_RE = re.compile(
    r'(?P<blank> +)|(?P<semi>;)|(?P<string>"[^"]*")|(?P<open>")|(?P<bare>[^ ";]+)'
)


class Basetype(enum.Enum):
    """Operand basetypes of spec 5.2 (plus ANY for ``noop``)."""

    IDENTIFIER = "identifier"
    MOVE = "move"
    INTEGER = "integer"
    FLOATING = "floating"
    STRING = "string"
    DATE = "date"
    TIME_OF_DAY = "time of day"
    CLOCK = "clock"
    ANY = "any"


class MoveUse(enum.Enum):
    """How an opcode's moves relate to the record's position."""

    NONE = "none"  # no moves
    EACH = "each"  # every move is playable in the position itself (am, bm, pm, sm)
    SEQUENCE = "sequence"  # the moves are played one after another (pv, sv)


@dataclass(frozen=True, slots=True)
class OpcodeSpec:
    """What spec section 6 says about one opcode's operands."""

    section: str
    pattern: tuple[Basetype, ...]  # operand i has basetype pattern[i % len(pattern)]
    min_count: int = 1
    max_count: int | None = 1  # None: no upper limit
    multiple_of: int = 1  # ptp: pairs
    low: int = INT32_MIN
    high: int = INT32_MAX
    sorted_set: bool = False  # operands are a set, written in ASCII order (am, bm)
    moves: MoveUse = MoveUse.NONE

    def basetype(self, index: int) -> Basetype:
        """The basetype of the operand at ``index``."""
        return self.pattern[index % len(self.pattern)]

    def count_fits(self, count: int) -> bool:
        """Whether an operation may carry ``count`` operands."""
        return (
            self.min_count <= count
            and (self.max_count is None or count <= self.max_count)
            and count % self.multiple_of == 0
        )

    @property
    def count_text(self) -> str:
        """The operand count in words, for error messages."""
        words = {0: "no operands", 1: "one operand", 2: "two operands"}
        if self.max_count is None:
            if self.multiple_of == 2:
                return "an even number of operands"
            return f"at least {words.get(self.min_count, str(self.min_count))}"
        if self.min_count == self.max_count:
            return words.get(self.min_count, f"{self.min_count} operands")
        return f"{words.get(self.min_count)} or {words.get(self.max_count)}"


def _opcode_table() -> dict[str, OpcodeSpec]:
    integer = (Basetype.INTEGER,)
    string = (Basetype.STRING,)
    move = (Basetype.MOVE,)
    anything = (Basetype.ANY,)
    table = {
        "acn": OpcodeSpec("6.1", integer, low=0, high=INT64_MAX),
        "acs": OpcodeSpec("6.2", integer, low=0, high=INT64_MAX),
        "am": OpcodeSpec("6.3", move, 0, None, sorted_set=True, moves=MoveUse.EACH),
        "bm": OpcodeSpec("6.4", move, 0, None, sorted_set=True, moves=MoveUse.EACH),
        "cc": OpcodeSpec("6.6", (Basetype.CLOCK,), 2, 2),
        "ce": OpcodeSpec("6.7", integer, low=-32768, high=32766),
        "dm": OpcodeSpec("6.8", integer, low=1),
        "draw_accept": OpcodeSpec("6.9", anything, 0, 0),
        "draw_claim": OpcodeSpec("6.10", anything, 0, 0),
        "draw_offer": OpcodeSpec("6.11", anything, 0, 0),
        "draw_reject": OpcodeSpec("6.12", anything, 0, 0),
        "eco": OpcodeSpec("6.13", string, 0, 1),
        "fmvn": OpcodeSpec("6.14", integer, low=1),
        "hmvc": OpcodeSpec("6.15", integer, low=0),
        "id": OpcodeSpec("6.16", string),
        "nic": OpcodeSpec("6.17", string, 0, 1),
        "noop": OpcodeSpec("6.18", anything, 0, None),
        "pm": OpcodeSpec("6.19", move, moves=MoveUse.EACH),
        "ptp": OpcodeSpec("6.20", (Basetype.IDENTIFIER, Basetype.STRING), 0, None, 2),
        "pv": OpcodeSpec("6.21", move, 0, None, moves=MoveUse.SEQUENCE),
        "rc": OpcodeSpec("6.22", integer, low=1),
        "refcom": OpcodeSpec("6.23", (Basetype.IDENTIFIER,)),
        "refreq": OpcodeSpec("6.24", (Basetype.IDENTIFIER,)),
        "resign": OpcodeSpec("6.25", anything, 0, 0),
        "sm": OpcodeSpec("6.26", move, moves=MoveUse.EACH),
        "sv": OpcodeSpec("6.27", move, 0, None, moves=MoveUse.SEQUENCE),
        "tcgs": OpcodeSpec("6.28", integer, low=1),
        "tcri": OpcodeSpec("6.29", string, 2, 2),
        "tcsi": OpcodeSpec("6.30", string, 2, 2),
        "ts": OpcodeSpec("6.31", (Basetype.DATE, Basetype.TIME_OF_DAY), 2, 2),
    }
    for digit in range(10):
        table[f"c{digit}"] = OpcodeSpec("6.5", string, 0, 1)
        table[f"v{digit}"] = OpcodeSpec("6.32", string, 0, 1)
    return table


OPCODES: Mapping[str, OpcodeSpec] = MappingProxyType(_opcode_table())
"""The opcodes of spec section 6; anything else is kept unchecked (spec 5.3)."""

_SORTED_SET_OPCODES = frozenset(name for name, spec in OPCODES.items() if spec.sorted_set)


@dataclass(frozen=True, slots=True)
class Operand:
    """One operand; ``quoted`` keeps its basetype: a bare token or a ``"string"``.

    Every instance can be written back: the text is checked on construction.
    """

    text: str
    quoted: bool = False

    def __post_init__(self) -> None:
        if self.quoted:
            if not _STRING_TEXT_RE.fullmatch(self.text):
                raise RecordError(
                    f"string {escape(self.text)!r} must be printable ASCII without '\"' "
                    "and shorter than 256 bytes"
                )
        elif not _TOKEN_TEXT_RE.fullmatch(self.text):
            raise RecordError(
                f"operand {escape(self.text)!r} cannot be a bare token "
                "(empty, or holds a blank, '\"', ';' or a non-printable character)"
            )

    @classmethod
    def token(cls, text: str) -> Operand:
        """A bare operand: identifier, move, number, clock..."""
        return cls(text, False)

    @classmethod
    def string(cls, text: str) -> Operand:
        """A quoted string operand."""
        return cls(text, True)

    @property
    def external(self) -> str:
        """The operand as written in a record (spec 7.1 sorts sets by this)."""
        return f'"{self.text}"' if self.quoted else self.text


@dataclass(frozen=True, slots=True)
class Operation:
    """An opcode and its operands, in the order given."""

    opcode: str
    operands: tuple[Operand, ...] = ()

    def __post_init__(self) -> None:
        if not isinstance(self.opcode, str) or not _OPCODE_RE.fullmatch(self.opcode):
            raise RecordError(f"{escape(str(self.opcode))!r} is not an opcode{_OPCODE_RULE}")
        if not isinstance(self.operands, tuple):
            object.__setattr__(self, "operands", tuple(self.operands))

    @classmethod
    def of(cls, opcode: str, *texts: str | int) -> Operation:
        """An operation with bare-token operands: ``Operation.of("fmvn", 12)``."""
        return cls(opcode, tuple(Operand(str(text)) for text in texts))

    @classmethod
    def strings(cls, opcode: str, *texts: str) -> Operation:
        """An operation with quoted string operands: ``Operation.strings("id", "BK.01")``."""
        return cls(opcode, tuple(Operand(text, True) for text in texts))

    @property
    def texts(self) -> tuple[str, ...]:
        """The operand values without quotes."""
        return tuple(operand.text for operand in self.operands)


_OPCODE_RULE = " (a letter, then up to 14 letters, digits or '_')"


@dataclass(frozen=True, slots=True)
class EpdRecord:
    """The four position fields and the operations of one EPD line.

    Operations keep the order they were read in; :func:`format_record` sorts them.  The
    position fields are checked for syntax on construction, so every instance can be
    written; whether the position is legal is python-chess's business (:meth:`board`).
    """

    placement: str
    active: str
    castling: str
    en_passant: str
    operations: tuple[Operation, ...] = ()
    # The operations by opcode: the referee asks a record for a dozen opcodes per move.
    _by_opcode: dict[str, Operation] = field(init=False, repr=False, compare=False)

    def __post_init__(self) -> None:
        problem = _position_problem((self.placement, self.active, self.castling, self.en_passant))
        if problem is not None:
            raise RecordError(problem[2])
        if not isinstance(self.operations, tuple):
            object.__setattr__(self, "operations", tuple(self.operations))
        by_opcode = {operation.opcode: operation for operation in self.operations}
        if len(by_opcode) != len(self.operations):
            seen: set[str] = set()
            for operation in self.operations:
                if operation.opcode in seen:
                    raise RecordError(f"opcode {operation.opcode!r} appears twice")
                seen.add(operation.opcode)
        object.__setattr__(self, "_by_opcode", by_opcode)

    # ----------------------------------------------------------------- structure

    @property
    def position(self) -> str:
        """The four position fields, blank separated."""
        return f"{self.placement} {self.active} {self.castling} {self.en_passant}"

    def __contains__(self, opcode: object) -> bool:
        return opcode in self._by_opcode

    def operation(self, opcode: str) -> Operation | None:
        """The operation with this opcode, or None."""
        return self._by_opcode.get(opcode)

    def operand_texts(self, opcode: str) -> tuple[str, ...]:
        """The operand values of ``opcode``; () when it is absent."""
        operation = self.operation(opcode)
        return () if operation is None else operation.texts

    def with_operations(self, *operations: Operation) -> EpdRecord:
        """A copy where each given operation replaces the one with its opcode, or is added."""
        replacements = {operation.opcode: operation for operation in operations}
        kept = [replacements.pop(op.opcode, op) for op in self.operations]
        kept.extend(replacements.values())  # new opcodes; a later duplicate argument wins
        return EpdRecord(self.placement, self.active, self.castling, self.en_passant, tuple(kept))

    def without(self, *opcodes: str) -> EpdRecord:
        """A copy without the operations of these opcodes (spec 7.4 ``pfop``)."""
        gone = set(opcodes)
        return EpdRecord(
            self.placement,
            self.active,
            self.castling,
            self.en_passant,
            tuple(op for op in self.operations if op.opcode not in gone),
        )

    def normalized(self) -> EpdRecord:
        """The record as :func:`format_record` writes it: the form ``parse_record`` returns."""
        return EpdRecord(
            self.placement,
            self.active,
            self.castling,
            self.en_passant,
            tuple(_normalized_operation(op) for op in sorted(self.operations, key=_opcode_of)),
        )

    # ----------------------------------------------------------------- typed accessors

    def identifier(self, opcode: str) -> str:
        """The identifier operand of ``opcode`` (e.g. ``refcom`` -> ``"respond"``)."""
        return _to_identifier(opcode, self._typed_operand(opcode, Basetype.IDENTIFIER))

    def integer(self, opcode: str) -> int:
        """The integer operand, within the opcode's range (32-bit for unknown opcodes)."""
        spec = OPCODES.get(opcode)
        low, high = (spec.low, spec.high) if spec is not None else (INT32_MIN, INT32_MAX)
        return _to_integer(opcode, self._typed_operand(opcode, Basetype.INTEGER), low, high)

    def floating(self, opcode: str) -> float:
        """The floating operand (spec 5.2.4: sign, digits, '.', digits; no exponent)."""
        return _to_floating(opcode, self._typed_operand(opcode, Basetype.FLOATING))

    def string(self, opcode: str) -> str:
        """The string operand; a bare token is accepted as written."""
        return self._typed_operand(opcode, Basetype.STRING).text

    def move(self, opcode: str, board: chess.Board) -> chess.Move:
        """The move operand of ``opcode`` (``sm``, ``pm``), legal in ``board``."""
        return _to_move(opcode, self._typed_operand(opcode, Basetype.MOVE), board)

    def move_set(self, opcode: str, board: chess.Board) -> list[chess.Move]:
        """The moves of a set-valued opcode (``am``, ``bm``), each legal in ``board``."""
        operation = self._required(opcode)
        return [_to_move(opcode, operand, board) for operand in operation.operands]

    def variation(self, opcode: str, board: chess.Board) -> list[chess.Move]:
        """The moves of ``pv``/``sv``, each legal after the ones before it; ``board`` is kept."""
        operation = self._required(opcode)
        line = board.copy(stack=False)
        moves = []
        for operand in operation.operands:
            move = _to_move(opcode, operand, line)
            line.push(move)
            moves.append(move)
        return moves

    def clock_pair(self, opcode: str = "cc") -> tuple[int, int]:
        """White's and Black's clock values in seconds (spec 6.6: time consumed)."""
        operation = self._required(opcode)
        _check_count(operation, OPCODES.get(opcode) or OpcodeSpec("", (Basetype.CLOCK,), 2, 2))
        white, black = (_clock_operand(opcode, operand) for operand in operation.operands)
        return white, black

    def date(self, opcode: str) -> datetime.date:
        """The date operand (``ts``: the first; unknown opcodes: the only one)."""
        return _to_date(opcode, self._typed_operand(opcode, Basetype.DATE))

    def time_of_day(self, opcode: str) -> datetime.time:
        """The time-of-day operand (``ts``: the second; unknown opcodes: the only one)."""
        return _to_time(opcode, self._typed_operand(opcode, Basetype.TIME_OF_DAY))

    def timestamp(self, opcode: str = "ts") -> datetime.datetime:
        """The ``ts`` timestamp, in UTC as spec 6.31 says."""
        return datetime.datetime.combine(
            self.date(opcode), self.time_of_day(opcode), tzinfo=datetime.UTC
        )

    def tag_pairs(self, opcode: str = "ptp") -> list[tuple[str, str]]:
        """The PGN tag pairs of ``ptp`` in the order given: (identifier, string)."""
        operation = self._required(opcode)
        _check_count(operation, OPCODES["ptp"])
        operands = operation.operands
        return [
            (_to_identifier(opcode, name), value.text)
            for name, value in zip(operands[::2], operands[1::2], strict=True)
        ]

    def board(self) -> chess.Board:
        """The position as a python-chess board, with ``hmvc``/``fmvn`` when present."""
        halfmove = self.integer("hmvc") if "hmvc" in self else 0
        fullmove = self.integer("fmvn") if "fmvn" in self else 1
        fen = f"{self.position} {halfmove} {fullmove}"
        try:
            return chess.Board(fen)
        except ValueError as exc:
            raise RecordError(f"python-chess rejects the position {fen!r}: {exc}") from exc

    @classmethod
    def from_board(cls, board: chess.Board, *operations: Operation) -> EpdRecord:
        """The record of ``board``'s position, with ``operations``.

        The en passant square is written after every double pawn push, as the EPD
        spec (4.4) and PROTOCOL.md section 2 say, not only when a capture is legal.
        ``hmvc`` and ``fmvn`` are the caller's to add: not every record wants them.
        """
        placement, active, castling, en_passant = board.fen(en_passant="fen").split(" ")[:4]
        return cls(placement, active, castling, en_passant).with_operations(*operations)

    # ----------------------------------------------------------------- helpers

    def _required(self, opcode: str) -> Operation:
        operation = self.operation(opcode)
        if operation is None:
            raise RecordError(f"{opcode}: the record has no {opcode!r} operation")
        return operation

    def _typed_operand(self, opcode: str, basetype: Basetype) -> Operand:
        """The operand of ``basetype``: placed by the opcode table, else the only operand."""
        operation = self._required(opcode)
        spec = OPCODES.get(opcode)
        if spec is not None and basetype in spec.pattern and spec.max_count is not None:
            _check_count(operation, spec)
            index = spec.pattern.index(basetype)
            if index >= len(operation.operands):
                raise RecordError(f"{opcode}: the operation has no operand")
            return operation.operands[index]
        if len(operation.operands) != 1:
            raise RecordError(
                f"{opcode}: expected one operand, found {len(operation.operands)}"
            )
        return operation.operands[0]


def _opcode_of(operation: Operation) -> str:
    return operation.opcode


def _normalized_operation(operation: Operation) -> Operation:
    if operation.opcode in _SORTED_SET_OPCODES:
        return Operation(
            operation.opcode,
            tuple(sorted(operation.operands, key=lambda operand: operand.external)),
        )
    return operation


# --------------------------------------------------------------------- basetype converters
# Shared by the typed accessors (no column) and the lenient reader (with the column).


def _check_count(operation: Operation, spec: OpcodeSpec) -> None:
    count = len(operation.operands)
    if not spec.count_fits(count):
        raise RecordError(f"{operation.opcode} takes {spec.count_text}, found {count}")


def _require_bare(opcode: str, operand: Operand, what: str, column: int) -> None:
    if operand.quoted:
        raise RecordError(
            f"{opcode}: operand {operand.external!r} must be a bare {what}, not a quoted string",
            column=column,
        )


def _to_identifier(opcode: str, operand: Operand, column: int = 0) -> str:
    _require_bare(opcode, operand, "identifier", column)
    if not _IDENTIFIER_RE.fullmatch(operand.text):
        raise RecordError(
            f"{opcode}: operand {operand.text!r} is not an identifier "
            "(1 to 15 letters, digits or '_')",
            column=column,
        )
    return operand.text


def _to_integer(opcode: str, operand: Operand, low: int, high: int, column: int = 0) -> int:
    _require_bare(opcode, operand, "integer", column)
    if not _INTEGER_RE.fullmatch(operand.text):
        raise RecordError(f"{opcode}: operand {operand.text!r} is not an integer", column=column)
    # Python refuses int() of very long digit strings; anything past 20 digits is out anyway.
    value = int(operand.text) if len(operand.text.lstrip("+-0")) <= 20 else high + 1
    if not low <= value <= high:
        raise RecordError(
            f"{opcode}: operand {operand.text!r} is out of range ({low} to {high})", column=column
        )
    return value


def _to_floating(opcode: str, operand: Operand, column: int = 0) -> float:
    _require_bare(opcode, operand, "number", column)
    if not _FLOATING_RE.fullmatch(operand.text):
        raise RecordError(
            f"{opcode}: operand {operand.text!r} is not a floating point number "
            "(digits '.' digits, no exponent)",
            column=column,
        )
    return float(operand.text)


def _to_date(opcode: str, operand: Operand, column: int = 0) -> datetime.date:
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


def _to_time(opcode: str, operand: Operand, column: int = 0) -> datetime.time:
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


def _clock_operand(opcode: str, operand: Operand, column: int = 0) -> int:
    _require_bare(opcode, operand, "clock value", column)
    try:
        return parse_clock(operand.text)
    except RecordError as exc:
        raise RecordError(f"{opcode}: {exc.reason}", column=column) from exc


def _to_move(opcode: str, operand: Operand, board: chess.Board, column: int = 0) -> chess.Move:
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


def parse_clock(text: str) -> int:
    """Seconds from a clock value ``DDD:HH:MM:SS`` (spec 5.2.7; four day digits accepted)."""
    match = _CLOCK_RE.fullmatch(text)
    if match is None:
        raise RecordError(f"clock value {escape(text)!r} is not DDD:HH:MM:SS")
    days, hours, minutes, seconds = (int(part) for part in match.groups())
    if hours > 23 or minutes > 59 or seconds > 59:
        raise RecordError(
            f"clock value {text!r} is out of range (hours 00-23, minutes and seconds 00-59)"
        )
    return ((days * 24 + hours) * 60 + minutes) * 60 + seconds


def clock_text(seconds: int) -> str:
    """The clock value ``DDD:HH:MM:SS`` of ``seconds``; spec 5.2.7 stops at 999 days."""
    if not 0 <= seconds <= MAX_CLOCK_SECONDS:
        raise RecordError(
            f"{seconds} seconds cannot be written as a clock value (0 to {MAX_CLOCK_SECONDS})"
        )
    minutes, second = divmod(seconds, 60)
    hours, minute = divmod(minutes, 60)
    days, hour = divmod(hours, 24)
    return f"{days:03d}:{hour:02d}:{minute:02d}:{second:02d}"


# --------------------------------------------------------------------- position fields

_FIELD_NAMES = ("piece placement", "active colour", "castling", "en passant")


@functools.lru_cache(maxsize=16)
def _position_problem(fields: tuple[str, str, str, str]) -> tuple[int, int, str] | None:
    """(field index, offset in the field, reason) of the first syntax error, or None.

    Cached: a referee checks each position three times in a row (the reply's
    parse, its record, and the ``respond`` that relays the move in it).
    """
    placement, active, castling, en_passant = fields
    if not (
        _PLACEMENT_RE.fullmatch(placement)
        and _EXPANDED_PLACEMENT_RE.fullmatch(placement.translate(_EXPAND_DIGITS))
    ):
        offset, reason = next(_placement_problems(placement))
        return 0, offset, reason
    if active not in ("w", "b"):
        return 1, 0, f"active colour {active!r} must be 'w' or 'b'"
    if not _castling_readable(castling):
        return 2, 0, (
            f"castling field {castling!r} must be '-' or letters from KQkq in that order "
            "(or Shredder-FEN/X-FEN file letters)"
        )
    if not _EN_PASSANT_RE.fullmatch(en_passant):
        return 3, 0, _en_passant_problem(en_passant)
    return None


def _placement_problems(placement: str) -> Iterator[tuple[int, str]]:
    """(offset, reason) for each thing wrong with a placement field, first one first."""
    bad = re.search(r"[^PNBRQKpnbrqk1-8/]", placement)
    if bad:
        yield bad.start(), (
            f"piece placement: {bad.group()!r} is neither a piece letter (PNBRQK, pnbrqk) "
            "nor a digit 1-8"
        )
    ranks = placement.split("/")
    if len(ranks) != 8:
        yield 0, f"piece placement {placement!r} has {len(ranks)} ranks, needs 8"
    offset = 0
    for index, rank in enumerate(ranks):
        digits = re.search(r"[1-8]{2}", rank)
        if digits:
            yield offset + digits.start(), (
                f"piece placement: rank {8 - index} has two digits in a row ({digits.group()!r})"
            )
        squares = len(rank.translate(_EXPAND_DIGITS))
        if squares != 8:
            yield offset, (
                f"piece placement: rank {8 - index} ({rank!r}) has {squares} squares, needs 8"
            )
        offset += len(rank) + 1


def _castling_readable(castling: str) -> bool:
    """KQkq in order, or Shredder-FEN/X-FEN file letters where python-chess reads them."""
    if _CASTLING_RE.fullmatch(castling):
        return True
    return bool(
        chess.FEN_CASTLING_REGEX.match(castling)
        and re.search(r"[A-Ha-h]", castling)
        and len(set(castling)) == len(castling)
    )


def _en_passant_problem(en_passant: str) -> str:
    if re.fullmatch(r"[a-h][1-8]", en_passant):
        return f"en passant square {en_passant!r} is not on rank 3 or 6"
    hint = " (a missing blank after '-'?)" if en_passant.startswith("-") else ""
    return f"en passant field {en_passant!r} is neither '-' nor a square{hint}"


def _check_position(match: re.Match[str]) -> None:
    fields = (match.group(1), match.group(2), match.group(3), match.group(4))
    problem = _position_problem(fields)
    if problem is not None:
        index, offset, reason = problem
        raise RecordError(reason, column=match.start(index + 1) + offset + 1)


# --------------------------------------------------------------------- tokenizer


@dataclass(slots=True)
class _Draft:
    """An operation being read, with the columns of its parts for error messages."""

    opcode: str
    column: int
    operands: list[Operand] = field(default_factory=list)
    columns: list[int] = field(default_factory=list)

    def operation(self) -> Operation:
        return Operation(self.opcode, tuple(self.operands))


def _scan_operations(line: str, start: int, *, lenient: bool) -> list[_Draft]:
    """Split the operation part of ``line`` (from ``start``) into operations.

    Strict mode is PROTOCOL.md 2: a blank before every opcode and operand, ``;`` right
    after the last one.  Lenient mode also takes stray ``;``, blanks before ``;``, no
    blank after ``;`` and a missing final ``;``.  A missing ``;`` between two operations
    cannot be seen here; :func:`_check_operation` finds it through operand counts.
    """
    drafts: list[_Draft] = []
    current: _Draft | None = None
    previous = "blank"
    for match in _TOKEN_RE.finditer(line, start):
        kind = match.lastgroup
        column = match.start() + 1
        if kind == "blank":
            previous = kind
            continue
        if kind == "open":
            raise RecordError("a string starts here but has no closing quote", column=column)
        if kind == "semi":
            if current is not None:
                if previous == "blank" and not lenient:
                    raise RecordError(
                        f"blank before the ';' that ends {current.opcode!r}", column=column - 1
                    )
                drafts.append(current)
                current = None
            elif not lenient:
                raise RecordError("';' without an operation before it", column=column)
            previous = kind
            continue
        token = match.group()
        if previous != "blank" and not (lenient and previous == "semi"):
            raise RecordError(f"a blank is missing before {token!r}", column=column)
        previous = kind or ""
        if current is not None:
            if kind == "string":
                if len(token) > 257:
                    raise RecordError(
                        f"string of {len(token) - 2} bytes is too long (at most 255)",
                        column=column,
                    )
                current.operands.append(Operand(token[1:-1], True))
            else:
                current.operands.append(Operand(token))
            current.columns.append(column)
        elif kind == "string":
            raise RecordError("an operation must start with an opcode, not a string", column=column)
        elif _OPCODE_RE.fullmatch(token):
            current = _Draft(token, column)
        else:
            rule = (
                "; FEN move counters? EPD writes them as hmvc and fmvn operations"
                if token.isdigit()
                else _OPCODE_RULE
            )
            raise RecordError(f"{token!r} is not an opcode{rule}", column=column)
    if current is not None:
        if not lenient:
            raise RecordError(
                f"operation {current.opcode!r} does not end with ';'", column=len(line) + 1
            )
        drafts.append(current)
    return drafts


def _check_duplicates(drafts: Iterable[_Draft]) -> None:
    first_columns: dict[str, int] = {}
    for draft in drafts:
        if draft.opcode in first_columns:
            raise RecordError(
                f"opcode {draft.opcode!r} appears twice (first at column "
                f"{first_columns[draft.opcode]})",
                column=draft.column,
            )
        first_columns[draft.opcode] = draft.column


def _check_printable(line: str) -> None:
    if not (line.isascii() and line.isprintable()):
        bad = _NOT_PRINTABLE_RE.search(line)
        if bad is not None:
            raise RecordError(
                f"character {escape(bad.group())} is not printable ASCII",
                column=bad.start() + 1,
            )


def _match_fields(line: str) -> re.Match[str]:
    match = _FIELDS_RE.match(line)
    if match is None:
        found = len(line.split())
        if found == 0:
            raise RecordError("empty record: four position fields are needed", column=1)
        raise RecordError(
            f"only {found} of the four position fields ({', '.join(_FIELD_NAMES)})",
            column=len(line) + 1,
        )
    _check_position(match)
    return match


# --------------------------------------------------------------------- public readers


def parse_record(line: str) -> EpdRecord:
    """Read one wire line strictly (PROTOCOL.md 2); operations keep their order.

    Only syntax is checked; the typed accessors of :class:`EpdRecord` check meaning.
    A TAB reads as a blank.  Raises :class:`RecordError` with the 1-based column.
    """
    try:
        return _parse_strict(line.replace("\t", " "))
    except RecordError as exc:
        exc.raw = escape(line)
        raise


def parse_lenient(line: str) -> EpdRecord:
    """Read one line of an EPD file written by someone else (spec 7.1 ``pfdn`` input).

    Accepted: runs of blanks and TABs, a line terminator, one trailing NUL (the
    spec's traditional terminator), stray or missing ``;``, and FEN's two move
    counters after the fourth field (they become ``hmvc`` and ``fmvn``).  Every known
    opcode is then checked for operand count and basetype, and its moves for legality
    in the record's position.  A bare token where a string is due is kept as written.
    """
    try:
        return _parse_lenient(line)
    except RecordError as exc:
        exc.raw = escape(line)
        raise


def _parse_strict(line: str) -> EpdRecord:
    _check_printable(line)
    match = _match_fields(line)
    operations = _plain_operations(line, match.end())
    if operations is None:
        operations = _tokenized_operations(line, match.end())
    return EpdRecord(match.group(1), match.group(2), match.group(3), match.group(4), operations)


def _plain_operations(line: str, start: int) -> tuple[Operation, ...] | None:
    """The operations of a well-formed line without quoted strings, or None for any other.

    Nearly every record on the wire has that shape, and splitting it costs half of
    the tokenizer. Anything else, errors included, is left to
    :func:`_tokenized_operations`, which says where and what is wrong.
    """
    if not _PLAIN_OPERATIONS_RE.fullmatch(line, start):
        return None
    operations = []
    for text in line[start:].split(";")[:-1]:
        opcode, *operands = text.split()
        operations.append(Operation(opcode, tuple(Operand(operand) for operand in operands)))
    if len({operation.opcode for operation in operations}) != len(operations):
        return None  # a repeated opcode: the tokenizer reports its column
    return tuple(operations)


def _tokenized_operations(line: str, start: int) -> tuple[Operation, ...]:
    drafts = _scan_operations(line, start, lenient=False)
    _check_duplicates(drafts)
    return tuple(draft.operation() for draft in drafts)


def _parse_lenient(line: str) -> EpdRecord:
    line = line.rstrip("\r\n")
    if line.endswith("\0"):
        line = line[:-1]
    line = line.replace("\t", " ")
    if "\0" in line:
        raise RecordError(
            "NUL byte before the end of the line (a NUL may only terminate a record)",
            column=line.index("\0") + 1,
        )
    _check_printable(line)
    match = _match_fields(line)
    counters = _FEN_COUNTERS_RE.match(line, match.end())
    drafts = _merge_counters(
        _fen_counters(counters),
        _scan_operations(line, counters.end() if counters else match.end(), lenient=True),
    )
    _check_duplicates(drafts)
    for draft in drafts:
        _check_operation(draft)
    record = EpdRecord(
        match.group(1),
        match.group(2),
        match.group(3),
        match.group(4),
        tuple(draft.operation() for draft in drafts),
    )
    _check_moves(record, drafts)
    return record


def _fen_counters(counters: re.Match[str] | None) -> list[_Draft]:
    if counters is None:
        return []
    return [
        _Draft(opcode, counters.start(group) + 1, [Operand(counters.group(group))],
               [counters.start(group) + 1])
        for group, opcode in ((1, "hmvc"), (2, "fmvn"))
    ]


def _merge_counters(counters: list[_Draft], drafts: list[_Draft]) -> list[_Draft]:
    """FEN counters become hmvc/fmvn; an operation saying the same is kept, a conflict rejected."""
    merged = []
    for counter in counters:
        existing = next((draft for draft in drafts if draft.opcode == counter.opcode), None)
        if existing is None:
            merged.append(counter)
        elif not _same_integer(existing.operands, counter.operands[0].text):
            written = " ".join([existing.opcode, *(o.external for o in existing.operands)])
            raise RecordError(
                f"FEN {'halfmove clock' if counter.opcode == 'hmvc' else 'fullmove number'} "
                f"{counter.operands[0].text!r} conflicts with {written!r}",
                column=existing.column,
            )
    return merged + drafts


def _same_integer(operands: list[Operand], text: str) -> bool:
    return (
        len(operands) == 1
        and not operands[0].quoted
        and _INTEGER_RE.fullmatch(operands[0].text) is not None
        and _canonical_integer(operands[0].text) == _canonical_integer(text)
    )


def _canonical_integer(text: str) -> str:
    """Digits without sign noise or leading zeros: compares integers of any length."""
    digits = text.lstrip("+-").lstrip("0") or "0"
    return f"-{digits}" if text.startswith("-") and digits != "0" else digits


def _check_operation(draft: _Draft) -> None:
    """Operand count and basetypes of a known opcode (moves come later, with a board)."""
    spec = OPCODES.get(draft.opcode)
    if spec is None:
        return
    count = len(draft.operands)
    if not spec.count_fits(count):
        if spec.max_count is not None and count > spec.max_count:
            excess = zip(
                draft.operands[spec.max_count :], draft.columns[spec.max_count :], strict=True
            )
            for operand, column in excess:
                if not operand.quoted and operand.text in OPCODES:
                    raise RecordError(
                        f"{draft.opcode} takes {spec.count_text}; "
                        f"a ';' seems to be missing before {operand.text!r}",
                        column=column,
                    )
            raise RecordError(
                f"{draft.opcode} takes {spec.count_text}, found {count}",
                column=draft.columns[spec.max_count],
            )
        raise RecordError(
            f"{draft.opcode} takes {spec.count_text}, found {count}", column=draft.column
        )
    for index, (operand, column) in enumerate(zip(draft.operands, draft.columns, strict=True)):
        _OPERAND_CHECKS[spec.basetype(index)](draft.opcode, operand, spec, column)


def _check_move_syntax(opcode: str, operand: Operand, _spec: OpcodeSpec, column: int) -> None:
    """Only the basetype here: moves are read left to right once the board is known."""
    _require_bare(opcode, operand, "move", column)


def _ignore(_opcode: str, _operand: Operand, _spec: OpcodeSpec, _column: int) -> None:
    """Strings and ``noop`` operands: any operand will do (bare strings are kept)."""


_OPERAND_CHECKS: dict[Basetype, Callable[[str, Operand, OpcodeSpec, int], object]] = {
    Basetype.IDENTIFIER: lambda opcode, operand, _spec, column: _to_identifier(
        opcode, operand, column
    ),
    Basetype.MOVE: _check_move_syntax,
    Basetype.INTEGER: lambda opcode, operand, spec, column: _to_integer(
        opcode, operand, spec.low, spec.high, column
    ),
    Basetype.FLOATING: lambda opcode, operand, _spec, column: _to_floating(opcode, operand, column),
    Basetype.STRING: _ignore,
    Basetype.DATE: lambda opcode, operand, _spec, column: _to_date(opcode, operand, column),
    Basetype.TIME_OF_DAY: lambda opcode, operand, _spec, column: _to_time(opcode, operand, column),
    Basetype.CLOCK: lambda opcode, operand, _spec, column: _clock_operand(opcode, operand, column),
    Basetype.ANY: _ignore,
}


def _check_moves(record: EpdRecord, drafts: list[_Draft]) -> None:
    """Spec 7.1: input records are checked for legality, so every move must be playable."""
    with_moves = [
        draft for draft in drafts if draft.operands and _move_use(draft.opcode) is not MoveUse.NONE
    ]
    if not with_moves:
        return
    try:
        board = record.board()
    except RecordError as exc:
        raise RecordError(exc.reason, column=1) from exc
    for draft in with_moves:
        line = board.copy(stack=False)
        sequence = _move_use(draft.opcode) is MoveUse.SEQUENCE
        for operand, column in zip(draft.operands, draft.columns, strict=True):
            move = _to_move(draft.opcode, operand, line, column)
            if sequence:
                line.push(move)


def _move_use(opcode: str) -> MoveUse:
    spec = OPCODES.get(opcode)
    return MoveUse.NONE if spec is None else spec.moves


# --------------------------------------------------------------------- writer


def format_record(record: EpdRecord) -> str:
    """The normalised line of spec 7.1: single blanks, operations in ASCII order of
    opcode, ``am``/``bm`` operands in ASCII order, every operation ended by ``;``."""
    parts = [record.placement, record.active, record.castling, record.en_passant]
    for operation in sorted(record.operations, key=_opcode_of):
        externals = [operand.external for operand in operation.operands]
        if operation.opcode in _SORTED_SET_OPCODES:
            externals.sort()
        parts.append(" ".join((operation.opcode, *externals)) + ";")
    return " ".join(parts)


# --------------------------------------------------------------------- registers


class CommentRegisters:
    """The ten comment (c0-c9) and ten variation name (v0-v9) registers of spec 6.5/6.32.

    A program scanning a game feeds each record to :meth:`apply`; ``cN`` clears
    registers N to 9 and then, if it has an operand, sets register N.
    """

    def __init__(self) -> None:
        self._comments: list[str | None] = [None] * 10
        self._variations: list[str | None] = [None] * 10

    def reset(self) -> None:
        """Start of a game or game fragment: every register is null."""
        self._comments = [None] * 10
        self._variations = [None] * 10

    def apply(self, record: EpdRecord) -> None:
        """Process the record's cN/vN operations from left to right."""
        for operation in record.operations:
            match = _REGISTER_RE.fullmatch(operation.opcode)
            if match is None:
                continue
            registers = self._comments if match.group(1) == "c" else self._variations
            index = int(match.group(2))
            registers[index:] = [None] * (10 - index)
            if operation.operands:
                registers[index] = operation.operands[0].text

    @property
    def comments(self) -> tuple[str | None, ...]:
        """Registers c0 to c9."""
        return tuple(self._comments)

    @property
    def variations(self) -> tuple[str | None, ...]:
        """Registers v0 to v9."""
        return tuple(self._variations)
