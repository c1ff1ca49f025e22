"""A player's decision as the ``reply`` record PROTOCOL.md section 4 allows.

The session checks a decision before anything is sent: a move must be legal, a draw
flag must make sense with it, a claim is added when the move makes one hold, and the
analysis keeps only what the EPD specification can carry.
"""

from __future__ import annotations

import logging
from collections.abc import Iterable

import chess

from serialref.client.players import Analysis, Decision
from serialref.epd.opcodes import OPCODES
from serialref.epd.operations import Operation
from serialref.epd.record import EpdRecord
from serialref.errors import EngineError
from serialref.records import reply

__all__ = ["reply_in_finished_position", "reply_to"]

LOGGER = logging.getLogger(__name__)


def reply_to(
    board: chess.Board, decision: Decision, *, draw_offered: bool, claim_draws: bool
) -> tuple[EpdRecord, chess.Move | None]:
    """The ``reply`` for ``decision`` in ``board`` and the move it plays, if any.

    ``claim_draws`` adds ``draw_claim`` to any move that makes a threefold repetition
    or the fifty-move rule claimable. Raises :class:`EngineError` for a decision that
    cannot be sent (no move where one is needed, an illegal move).
    """
    flags: list[str] = []
    move = decision.move
    if decision.resign:
        if decision.draw_offer or decision.draw_accept or decision.draw_claim:
            LOGGER.warning("the player resigns and draws at once: sending the resignation")
        flags.append("resign")
        move = None
    elif decision.draw_accept and draw_offered:
        flags.append("draw_accept")
        move = None
    else:
        if decision.draw_accept:
            LOGGER.warning("the player accepts a draw nobody offered: flag dropped")
        if move is None:
            if not (decision.draw_claim and _claimable_now(board)):
                raise EngineError("the player chose no move")
            flags.append("draw_claim")
        elif not board.is_legal(move):
            raise EngineError(f"the player chose an illegal move {move.uci()}")
        elif decision.draw_claim or (claim_draws and _claim_holds(board, move)):
            flags.append("draw_claim")
        elif decision.draw_offer:
            flags.append("draw_offer")
    operations = [Operation(flag) for flag in flags]
    operations += _analysis_operations(board, decision.analysis)
    operations += _counters(board)
    return reply(board, move, *operations), move


def reply_in_finished_position(board: chess.Board) -> EpdRecord:
    """Spec 8 step 10: a mated or stalemated player replies without a move."""
    return reply(board, None, *_counters(board))


def _claimable_now(board: chess.Board) -> bool:
    return board.is_repetition(3) or board.is_fifty_moves()


def _claim_holds(board: chess.Board, move: chess.Move) -> bool:
    """PROTOCOL.md 5: the current position, or the one after ``move``, allows a claim.

    python-chess's ``can_claim_draw`` asks whether *any* move allows one; the referee
    judges the move actually supplied, so that move is tried alone.
    """
    if _claimable_now(board):
        return True
    board.push(move)
    try:
        return _claimable_now(board)
    finally:
        board.pop()


def _counters(board: chess.Board) -> list[Operation]:
    """``fmvn`` and ``hmvc`` of the reply's position, so the referee can check them too."""
    return [Operation.of("fmvn", board.fullmove_number), Operation.of("hmvc", board.halfmove_clock)]


def _analysis_operations(board: chess.Board, analysis: Analysis | None) -> list[Operation]:
    """``ce``, ``pv`` (SAN), ``acn`` and ``acs``; values the spec cannot carry are dropped."""
    if analysis is None:
        return []
    operations: list[Operation] = []
    if analysis.centipawns is not None:
        if analysis.centipawns in OPCODES["ce"].values:
            operations.append(Operation.of("ce", analysis.centipawns))
        else:
            LOGGER.warning("dropped ce %d: outside spec 6.7's range", analysis.centipawns)
    sans = _pv_sans(board, analysis.pv)
    if sans:
        operations.append(Operation.of("pv", *sans))
    for opcode, count in (("acn", analysis.nodes), ("acs", analysis.seconds)):
        if count is None:
            continue
        if count >= 0:
            operations.append(Operation.of(opcode, count))
        else:
            LOGGER.warning("dropped %s %d: must not be negative", opcode, count)
    return operations


def _pv_sans(board: chess.Board, moves: Iterable[chess.Move]) -> list[str]:
    """The variation in SAN, cut at the first move that is not legal where it is played."""
    line = board.copy(stack=False)
    sans: list[str] = []
    for move in moves:
        if not line.is_legal(move):
            LOGGER.debug("pv cut at %s: not legal in %s", move.uci(), line.fen())
            break
        sans.append(line.san_and_push(move))
    return sans
