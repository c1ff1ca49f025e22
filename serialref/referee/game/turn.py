"""A reply to a game in its respond/reply cycle: judged, then taken (PROTOCOL.md 4, 5 and 7).

:func:`judge_turn` is pure: it reads the game, the player's seat and the clock and
changes none of them. A reply is either ignored, never a move and never an infraction,
or too late, or ruled on. It is ignored when it cannot answer the ``respond``
outstanding: it arrived before that ``respond`` had left the referee, it names the
position of an earlier ``respond`` (stale: it crossed a ``conclude``, a restore or the
next ``respond`` on the line), or it is not the player's turn. A reply in turn whose
player's flag fell before its thinking ended loses on time, whatever it says; any other
is ruled on by :func:`~serialref.referee.rulings.judge_reply`, or, in a position
other than the game's, is an infraction. A ruling's words may decide the game by
themselves (:func:`decided_by_words`): a resignation, a draw agreed.

:func:`play` takes the move of a ruling: the mover's clock stops, the board moves, and
the :class:`~serialref.happenings.MovePlayed` that records it says how the clocks stand.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Protocol

import chess

from serialref.clock import ChessClock
from serialref.epd.record import EpdRecord
from serialref.happenings import MovePlayed
from serialref.referee.game.moveclock import MoveClock
from serialref.referee.rulings import (
    GameBoard,
    ReplyKind,
    Ruling,
    Termination,
    Verdict,
    judge_reply,
    positions_match,
    reply_analysis,
    wrong_position,
)
from serialref.referee.session import PortSession

__all__ = [
    "FlagFell",
    "Ignored",
    "TurnView",
    "decided_by_words",
    "judge_turn",
    "play",
    "reply_out_of_turn",
]


@dataclass(frozen=True, slots=True)
class Ignored:
    """A reply the game does not act on, and why (for the journal and the log)."""

    reason: str


@dataclass(frozen=True, slots=True)
class FlagFell:
    """A reply in turn that came too late: its player's flag fell before it stopped thinking."""

    verdict: Verdict


class TurnView(Protocol):
    """What judging a reply reads of its game."""

    @property
    def board(self) -> GameBoard:
        """The game's board, its history and its repetitions."""
        ...

    @property
    def offer_pending(self) -> bool:
        """Whether the opponent offered a draw with its last move."""
        ...


def judge_turn(
    view: TurnView, seat: PortSession, clock: MoveClock, record: EpdRecord, at: float
) -> Ignored | FlagFell | Ruling:
    """What ``record``, a ``reply`` from ``seat``'s player whose thinking ended at ``at``,
    is to the game in its respond/reply cycle."""
    if not seat.to_move:
        return reply_out_of_turn(seat, record)
    if clock.awaits_departure_to(seat.port):
        return Ignored("reply before its respond had left (stale)")
    board = view.board
    in_position = positions_match(record, board.board, board.fen)
    if not in_position and seat.is_stale(record.position):
        return Ignored("stale reply: it answers an earlier respond")
    if clock.flag_fell(at):
        return FlagFell(board.flag_verdict(board.turn))
    if in_position:
        return judge_reply(board, record, offer_pending=view.offer_pending)
    return wrong_position(board, record)


def decided_by_words(ruling: Ruling, mover: chess.Color) -> Verdict | None:
    """The result a ruling's words give by themselves, whatever its move: the ``mover``
    resigned, or accepted the draw its opponent offered; None when they give none."""
    if ruling.kind is ReplyKind.RESIGN:
        return Verdict.win(not mover, Termination.NORMAL, ruling.reason)
    if ruling.kind is ReplyKind.DRAW_AGREED:
        return Verdict.draw(ruling.reason)
    return None


def reply_out_of_turn(seat: PortSession, record: EpdRecord) -> Ignored:
    """A reply from a player that is not to move: one that answers an earlier ``respond``
    (stale), or none."""
    if seat.is_stale(record.position):
        return Ignored("stale reply: it answers an earlier respond")
    return Ignored("reply out of turn")


def play(
    board: GameBoard,
    clock: ChessClock,
    ruling: Ruling,
    record: EpdRecord,
    at: float,
    *,
    game: int,
    opening_plies: int,
) -> MovePlayed:
    """Take the ruling's move, its player's thinking having ended at ``at``: its clock
    stops and the board moves. Returns the event of game number ``game`` that records
    it: the clocks as the move left them, the analysis the reply's ``record`` gave, the
    ply counted from the end of the opening's ``opening_plies``."""
    assert ruling.move is not None
    elapsed = clock.stop(at)
    san = board.push(ruling.move)
    return MovePlayed(
        game=game,
        ply=len(board.board.move_stack) - opening_plies,
        san=san,
        uci=ruling.move.uci(),
        elapsed=elapsed,
        remaining=(clock.remaining(chess.WHITE), clock.remaining(chess.BLACK)),
        consumed=(clock.consumed(chess.WHITE), clock.consumed(chess.BLACK)),
        moves_made=(clock.moves_made(chess.WHITE), clock.moves_made(chess.BLACK)),
        fen=board.fen,
        draw_offer=ruling.draw_offer,
        analysis=reply_analysis(record),
    )
