"""Whether a record's predicted move solves it: the one rule the run and the report share.

A test-suite record is solved when its ``pm`` is one of its ``bm`` moves and none of
its ``am`` moves (spec 6.3, 6.4, 7.5); a record with neither has nothing to solve.
Moves are compared as moves, not as text, so ``Qxf7`` and ``Qxf7+`` are the same.
"""

from __future__ import annotations

import chess

from serialref.epd.record import EpdRecord
from serialref.errors import RecordError

__all__ = ["has_targets", "is_solved", "moves_of"]


def has_targets(record: EpdRecord) -> bool:
    """Whether ``record`` has a ``bm`` or an ``am`` move to judge a prediction by."""
    return bool(record.operand_texts("bm") or record.operand_texts("am"))


def moves_of(record: EpdRecord, opcode: str, board: chess.Board) -> set[chess.Move]:
    """The moves of a move-set opcode; :class:`RecordError` for one not legal here."""
    moves = set()
    for text in record.operand_texts(opcode):
        try:
            moves.add(board.parse_san(text))
        except ValueError as exc:
            raise RecordError(f"{opcode}: {text!r} is not a legal move here") from exc
    return moves


def is_solved(record: EpdRecord, board: chess.Board, predicted: chess.Move | None) -> bool | None:
    """True if ``predicted`` is a target move and no avoided one; None without targets."""
    if not has_targets(record):
        return None
    if predicted is None:
        return False
    best = moves_of(record, "bm", board)
    if best and predicted not in best:
        return False
    return predicted not in moves_of(record, "am", board)
