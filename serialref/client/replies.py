"""A player's decision as the ``reply`` record PROTOCOL.md section 4 allows.

The session checks a decision before anything is sent: a move must be legal, a draw
flag must make sense with it, a claim is added when the move makes one hold, and the
analysis keeps only what the EPD specification can carry.

A reply goes out on every move, so its line is written here directly, in the
normalised form of spec 7.1 (operations in ASCII order of opcode, single blanks),
rather than built as a record and formatted: its operations are a known few whose
operands are numbers and SAN, which need no quoting. The position fields come from
the caller, who may have worked them out while the player was thinking, and the
move's SAN is written once, for ``sm`` and the start of ``pv`` alike.
"""

from __future__ import annotations

import logging
from collections.abc import Sequence

import chess

from serialref.client.players import Analysis, Decision
from serialref.epd.opcodes import OPCODES
from serialref.epd.operations import Operation
from serialref.epd.record import EpdRecord
from serialref.errors import EngineError
from serialref.records import ENGINE_RESTARTS, reply

__all__ = ["position_fields", "reply_in_finished_position", "reply_to"]

LOGGER = logging.getLogger(__name__)


def position_fields(board: chess.Board) -> str:
    """The four position fields of ``board`` as PROTOCOL.md 2 writes them.

    The en passant square is written after every double pawn push.
    """
    return board.epd(en_passant="fen")


def reply_to(
    board: chess.Board,
    decision: Decision,
    *,
    draw_offered: bool,
    claim_draws: bool,
    position: str | None = None,
) -> tuple[str, chess.Move | None]:
    """The ``reply`` line for ``decision`` in ``board`` and the move it plays, if any.

    ``position``: the board's :func:`position_fields`, if already known.
    ``claim_draws`` adds ``draw_claim`` to any move that makes a threefold repetition
    or the fifty-move rule claimable. Raises :class:`EngineError` for a decision that
    cannot be sent (no move where one is needed, an illegal move).
    """
    operations = [("fmvn", str(board.fullmove_number)), ("hmvc", str(board.halfmove_clock))]
    move = decision.move
    if decision.resign:
        if decision.draw_offer or decision.draw_accept or decision.draw_claim:
            LOGGER.warning("the player resigns and draws at once: sending the resignation")
        operations.append(("resign", ""))
        move = None
    elif decision.draw_accept and draw_offered:
        operations.append(("draw_accept", ""))
        move = None
    else:
        if decision.draw_accept:
            LOGGER.warning("the player accepts a draw nobody offered: flag dropped")
        if move is None:
            if not (decision.draw_claim and _claimable_now(board)):
                raise EngineError("the player chose no move")
            operations.append(("draw_claim", ""))
    analysis = decision.analysis
    pv = () if analysis is None else analysis.pv
    sans: list[str] = []
    if move is not None:
        follows = pv[:1] == (move,)
        sans, claimable_after = _sans_played(board, (move, *pv[1:]) if follows else (move,))
        if not sans:
            raise EngineError(f"the player chose an illegal move {move.uci()}")
        if decision.draw_claim or (
            claim_draws and (claimable_after or _claimable_now(board))
        ):
            operations.append(("draw_claim", ""))
        elif decision.draw_offer:
            operations.append(("draw_offer", ""))
        operations.append(("sm", sans[0]))
        if not follows:
            sans = _sans_played(board, pv)[0] if pv else []
    elif pv:
        sans = _sans_played(board, pv)[0]
    operations += _analysis_operations(analysis, sans)
    if decision.engine_restarts:
        operations.append((ENGINE_RESTARTS, str(decision.engine_restarts)))
    operations.append(("refreq", "reply"))
    operations.sort()
    written = " ".join(
        f"{opcode} {operand};" if operand else f"{opcode};" for opcode, operand in operations
    )
    return f"{position or position_fields(board)} {written}", move


def reply_in_finished_position(board: chess.Board) -> EpdRecord:
    """Spec 8 step 10: a mated or stalemated player replies without a move."""
    return reply(board, None, *_counters(board))


def _claimable_now(board: chess.Board) -> bool:
    # A position seen three times was left and reached again twice, each time by at
    # least four plies without a capture or a pawn move, so the halfmove clock is 8 or
    # more; below that python-chess's check, which walks the whole game, is skipped.
    if board.halfmove_clock < 8:
        return False
    return board.is_repetition(3) or board.is_fifty_moves()


def _counters(board: chess.Board) -> list[Operation]:
    """``fmvn`` and ``hmvc`` of the reply's position, so the referee can check them too."""
    return [Operation.of("fmvn", board.fullmove_number), Operation.of("hmvc", board.halfmove_clock)]


def _analysis_operations(analysis: Analysis | None, sans: list[str]) -> list[tuple[str, str]]:
    """``ce``, ``pv`` (``sans``, the variation in SAN), ``acn``, ``acs`` and ``acd``; values
    the spec cannot carry are dropped."""
    if analysis is None:
        return []
    operations: list[tuple[str, str]] = []
    if analysis.centipawns is not None:
        if analysis.centipawns in OPCODES["ce"].values:
            operations.append(("ce", str(analysis.centipawns)))
        else:
            LOGGER.warning("dropped ce %d: outside spec 6.7's range", analysis.centipawns)
    if sans:
        operations.append(("pv", " ".join(sans)))
    counts = (("acn", analysis.nodes), ("acs", analysis.seconds), ("acd", analysis.depth))
    for opcode, count in counts:
        if count is None:
            continue
        if count >= 0:
            operations.append((opcode, str(count)))
        else:
            LOGGER.warning("dropped %s %d: must not be negative", opcode, count)
    return operations


def _sans_played(board: chess.Board, moves: Sequence[chess.Move]) -> tuple[list[str], bool]:
    """``moves`` in SAN, played one after another from ``board`` and cut at the first that
    is not legal where it is played (so none for an illegal first move), and whether a
    draw can be claimed after the first (PROTOCOL.md 5: the referee judges the move
    supplied, not any move as python-chess's ``can_claim_draw`` would).

    They are played on the board itself and taken back: the move's legality, its SAN,
    the claim and the variation cost one push of each move, and no copy of the board.
    """
    sans: list[str] = []
    claimable_after = False
    try:
        for move in moves:
            if not board.is_legal(move):
                LOGGER.debug("SANs cut at %s: not legal in %s", move.uci(), board.fen())
                break
            sans.append(board.san_and_push(move))
            if len(sans) == 1:
                claimable_after = _claimable_now(board)
    finally:
        for _ in sans:
            board.pop()
    return sans, claimable_after
