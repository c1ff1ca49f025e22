"""A game played again: to a player that comes back, and from the journal after a restart.

A player that signs on again during a game is sent the game from its start (PROTOCOL.md
6): ``reset`` with the position right after the game's own ``reset`` (the opening's,
with its moves played), ``inform``, then one ``execute`` per move since.

A restarted referee continues the game its journal left unfinished: the board is the
opening's with every move recorded since, and the clocks are those of the last move
recorded or, after an orderly stop, as they stood at the stop (PROTOCOL.md 7).
"""

from __future__ import annotations

from collections.abc import Iterator
from dataclasses import dataclass

import chess

from serialref import records
from serialref.clock import ChessClock
from serialref.epd.record import EpdRecord
from serialref.happenings import GameStarted
from serialref.referee.game.states import GameState
from serialref.referee.openings import Opening
from serialref.referee.resume import ResumePoint
from serialref.rules import rules_of_tags
from serialref.timecontrol import TimeControl

__all__ = ["ResumedGame", "executes", "initial_board", "resumed_game"]


def initial_board(board: chess.Board, opening_plies: int) -> chess.Board:
    """The game's position right after ``reset``: ``board`` taken back to the end of the
    opening's ``opening_plies`` moves, which it keeps."""
    replay = board.copy()
    for _ in range(len(replay.move_stack) - opening_plies):
        replay.pop()
    return replay


def executes(initial: chess.Board, board: chess.Board) -> Iterator[EpdRecord]:
    """8.1.3: the ``execute`` records that bring a player from ``initial``, the position
    after ``reset``, to ``board``'s: one per move, each in the position it was played in."""
    replay = initial.copy()
    for move in board.move_stack[len(initial.move_stack) :]:
        yield records.execute(replay, move)
        replay.push(move)


@dataclass(frozen=True, slots=True)
class ResumedGame:
    """A game its journal left unfinished: how it started, its moves and its clocks.

    ``state`` is PLAYING (the players present are restored at once) or SUSPENDED
    (after an orderly stop: no clock runs until both players are back).
    """

    started: GameStarted
    board: chess.Board
    clock: ChessClock
    offer_pending: bool
    state: GameState


def resumed_game(point: ResumePoint, control: TimeControl) -> ResumedGame:
    """The journal's unfinished game, ready to go on: its board, clock and state.

    After an orderly stop the clock is as it stood then (the move in progress keeps
    the time it had used) and the game waits for both players; after a crash the
    clock is as at the last move recorded (the time the referee was down, and the
    move in flight, are charged to no one) and the players present are restored.
    """
    started = point.game
    assert started is not None
    board = Opening(started.fen, started.opening_moves, rules_of_tags(started.tags)).board()
    for played in point.moves:
        board.push_uci(played.uci)
    last = point.moves[-1] if point.moves else None
    if point.clocks is not None:
        clock = ChessClock.restore(control, point.clocks)
    else:
        clock = ChessClock(
            control,
            consumed=last.consumed if last else (0.0, 0.0),
            moves_made=last.moves_made if last else (0, 0),
        )
    for side, seconds in zip((chess.WHITE, chess.BLACK), point.added, strict=True):
        if seconds:
            clock.add_time(side, seconds)
    return ResumedGame(
        started=started,
        board=board,
        clock=clock,
        offer_pending=last.draw_offer if last else False,
        state=GameState.SUSPENDED if point.orderly else GameState.PLAYING,
    )
