"""A reply to a game, judged before the game acts on it (PROTOCOL.md 4, 5 and 7).

Pure: it reads the game's board and the player's seat and changes neither. A reply is
either ignored, never a move and never an infraction, or ruled on. It is ignored when
it cannot answer the ``respond`` outstanding: it arrived before that ``respond`` had
left the referee, it names the position of an earlier ``respond`` (stale: it crossed
a ``conclude``, a restore or the next ``respond`` on the line), or it is not the
player's turn. A reply in turn is ruled on by
:func:`~serialref.referee.adjudication.judge_reply`, or, in a position other than
the game's, is an infraction. Whether the flag fell first is the clock's to say, and
the game asks it before acting on the ruling.
"""

from __future__ import annotations

from dataclasses import dataclass

from serialref.epd.record import EpdRecord
from serialref.referee.adjudication import (
    GameBoard,
    Ruling,
    judge_reply,
    positions_match,
    wrong_position,
)
from serialref.referee.session import PortSession

__all__ = ["Ignored", "judge_turn"]


@dataclass(frozen=True, slots=True)
class Ignored:
    """A reply the game does not act on, and why (for the journal and the log)."""

    reason: str


def judge_turn(
    game: GameBoard,
    record: EpdRecord,
    seat: PortSession,
    *,
    playing: bool,
    respond_left: bool,
    offer_pending: bool,
) -> Ignored | Ruling:
    """What ``record``, a ``reply`` from ``seat``'s player, is to the game.

    ``playing``: the game is in its respond/reply cycle. ``respond_left``: the
    ``respond`` that asks this player for a move has left the referee. ``offer_pending``:
    the opponent offered a draw with its last move.
    """
    in_turn = playing and seat.to_move
    if in_turn and not respond_left:
        return Ignored("reply before its respond had left (stale)")
    in_position = in_turn and positions_match(record, game.board, game.fen)
    if not in_position and seat.is_stale(record.position):
        return Ignored("stale reply: it answers an earlier respond")
    if not in_turn:
        return Ignored("reply out of turn")
    if in_position:
        return judge_reply(game, record, offer_pending=offer_pending)
    return wrong_position(game, record)
