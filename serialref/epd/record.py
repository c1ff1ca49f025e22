"""One EPD line as a value: :class:`EpdRecord`, its position fields and its operations.

A record is checked for syntax when it is made, so every instance can be written;
what its operands mean is checked when they are read, by the typed accessors, because
the referee parses every line but reads only the few opcodes the moment needs.  The
builder :meth:`EpdRecord.from_board` makes the record of a python-chess board.
"""

from __future__ import annotations

from collections.abc import Callable, KeysView
from dataclasses import dataclass, field
from typing import ClassVar

import chess

from serialref.epd.basetypes import check_count, to_clock, to_identifier, to_integer, to_move
from serialref.epd.opcodes import INT32, OPCODES, Basetype
from serialref.epd.operations import Operand, Operation
from serialref.epd.position import syntax_problem
from serialref.epd.variantfen import CHECKS_RE
from serialref.errors import RecordError

__all__ = ["CheckCountingRecord", "EpdRecord", "make_record"]


@dataclass(frozen=True, slots=True)
class EpdRecord:
    """The four position fields and the operations of one EPD line.

    Operations keep the order they were read in; the writer sorts them.  The position
    fields are checked for syntax on construction; whether the position is legal is
    python-chess's business (:meth:`board`). ``checks`` is the check counting field,
    empty here; a :class:`CheckCountingRecord` has one.
    """

    placement: str
    active: str
    castling: str
    en_passant: str
    operations: tuple[Operation, ...] = ()
    checks: ClassVar[str] = ""
    # The operations by opcode: the referee asks a record for a dozen opcodes per move.
    _by_opcode: dict[str, Operation] = field(init=False, repr=False, compare=False)

    def __post_init__(self) -> None:
        problem = syntax_problem((self.placement, self.active, self.castling, self.en_passant))
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

    @classmethod
    def from_board(cls, board: chess.Board, *operations: Operation) -> EpdRecord:
        """The record of ``board``'s position, with ``operations``.

        The en passant square is written after every double pawn push, as the EPD
        spec (4.4) and PROTOCOL.md section 2 say, not only when a capture is legal.
        ``hmvc`` and ``fmvn`` are the caller's to add: not every record wants them.
        """
        placement, active, castling, en_passant, rest = board.fen(en_passant="fen").split(" ", 4)
        if "+" in rest:  # the checks still to give, before the move counters
            return CheckCountingRecord(
                placement, active, castling, en_passant, (), rest.partition(" ")[0]
            ).with_operations(*operations)
        return cls(placement, active, castling, en_passant).with_operations(*operations)

    # ----------------------------------------------------------------- structure

    @property
    def position(self) -> str:
        """The four position fields (and the check counting field, if any), blank separated."""
        position = f"{self.placement} {self.active} {self.castling} {self.en_passant}"
        return f"{position} {self.checks}" if self.checks else position

    def __contains__(self, opcode: object) -> bool:
        return opcode in self._by_opcode

    @property
    def opcodes(self) -> KeysView[str]:
        """The opcodes present, as a set-like view: a dozen questions at no call apiece."""
        return self._by_opcode.keys()

    def operand_texts(self, opcode: str) -> tuple[str, ...]:
        """The operand values of ``opcode``; () when it is absent."""
        operation = self._by_opcode.get(opcode)
        return () if operation is None else tuple(operand.text for operand in operation.operands)

    def with_operations(self, *operations: Operation) -> EpdRecord:
        """A copy where each given operation replaces the one with its opcode, or is added."""
        replacements = {operation.opcode: operation for operation in operations}
        kept = [replacements.pop(op.opcode, op) for op in self.operations]
        kept.extend(replacements.values())  # new opcodes; a later duplicate argument wins
        if self.checks:
            return CheckCountingRecord(
                self.placement, self.active, self.castling, self.en_passant, tuple(kept),
                self.checks,
            )  # fmt: skip
        return EpdRecord(self.placement, self.active, self.castling, self.en_passant, tuple(kept))

    def without(self, *opcodes: str) -> EpdRecord:
        """A copy without the operations of these opcodes (spec 7.4 ``pfop``)."""
        gone = set(opcodes)
        return make_record(
            (self.placement, self.active, self.castling, self.en_passant),
            tuple(op for op in self.operations if op.opcode not in gone),
            self.checks,
        )

    # ----------------------------------------------------------------- typed accessors

    def identifier(self, opcode: str) -> str:
        """The identifier operand of ``opcode`` (e.g. ``refcom`` -> ``"respond"``)."""
        return to_identifier(opcode, self._only_operand(opcode, Basetype.IDENTIFIER))

    def integer(self, opcode: str) -> int:
        """The integer operand, within the opcode's range (32-bit for unknown opcodes)."""
        spec = OPCODES.get(opcode)
        values = spec.values if spec is not None else INT32
        return to_integer(opcode, self._only_operand(opcode, Basetype.INTEGER), values)

    def move(self, opcode: str, board: chess.Board) -> chess.Move:
        """The move operand of ``opcode`` (``sm``, ``pm``), legal in ``board``."""
        return to_move(opcode, self._only_operand(opcode, Basetype.MOVE), board)

    def clock_pair(self, opcode: str = "cc") -> tuple[int, int]:
        """White's and Black's clock values in seconds (spec 6.6: time consumed)."""
        operation = self._required(opcode)
        check_count(operation, OPCODES["cc"])
        white, black = (to_clock(opcode, operand) for operand in operation.operands)
        return white, black

    def integer_pair(self, opcode: str, values: range) -> tuple[int, int]:
        """The two integer operands of ``opcode``, each within ``values``.

        For the profile's own pairs (``ccms``), which the spec's table does not know.
        """
        operation = self._required(opcode)
        if len(operation.operands) != 2:
            raise RecordError(f"{opcode}: expected two operands, found {len(operation.operands)}")
        first, second = (to_integer(opcode, operand, values) for operand in operation.operands)
        return first, second

    def tag_pairs(self, opcode: str = "ptp") -> list[tuple[str, str]]:
        """The PGN tag pairs of ``ptp`` in the order given: (identifier, string)."""
        operation = self._required(opcode)
        check_count(operation, OPCODES["ptp"])
        operands = operation.operands
        return [
            (to_identifier(opcode, name), value.text)
            for name, value in zip(operands[::2], operands[1::2], strict=True)
        ]

    def board(self, make: Callable[[str], chess.Board] = chess.Board) -> chess.Board:
        """The position as a python-chess board, with ``hmvc``/``fmvn`` when present.

        ``make`` builds the board from a FEN: a variant's board type reads its own FEN.
        """
        halfmove = self.integer("hmvc") if "hmvc" in self else 0
        fullmove = self.integer("fmvn") if "fmvn" in self else 1
        fen = f"{self.position} {halfmove} {fullmove}"
        try:
            return make(fen)
        except ValueError as exc:
            raise RecordError(f"python-chess rejects the position {fen!r}: {exc}") from exc

    # ----------------------------------------------------------------- helpers

    def _required(self, opcode: str) -> Operation:
        operation = self._by_opcode.get(opcode)
        if operation is None:
            raise RecordError(f"{opcode}: the record has no {opcode!r} operation")
        return operation

    def _only_operand(self, opcode: str, basetype: Basetype) -> Operand:
        """The one operand of ``opcode``, counted by the opcode table when it knows it."""
        operation = self._required(opcode)
        spec = OPCODES.get(opcode)
        if spec is not None and spec.pattern == (basetype,):
            check_count(operation, spec)
        if len(operation.operands) != 1:
            raise RecordError(
                f"{opcode}: expected one operand, found {len(operation.operands)}"
            )
        return operation.operands[0]


@dataclass(frozen=True, slots=True)
class CheckCountingRecord(EpdRecord):
    """A record of a check counting variant: a fifth position field after en passant.

    ``checks`` is the checks White and Black must still give (``3+3``). A class of its
    own, so that every other record is built without the field.
    """

    checks: str = ""  # type: ignore[misc]

    def __post_init__(self) -> None:
        if not CHECKS_RE.fullmatch(self.checks):
            raise RecordError(
                f"check counting field {self.checks!r} must be two counts joined by '+' (3+3)"
            )
        # A slotted dataclass is a new class: the zero-argument super() cannot find it.
        super(CheckCountingRecord, self).__post_init__()


def make_record(
    position: tuple[str, str, str, str], operations: tuple[Operation, ...] = (), checks: str = ""
) -> EpdRecord:
    """A record with the check counting field when ``checks`` is given, else a plain one."""
    if checks:
        return CheckCountingRecord(*position, operations, checks)
    return EpdRecord(*position, operations)
