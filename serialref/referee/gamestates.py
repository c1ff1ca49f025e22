"""Where one game stands: its states, the table of their transitions, a resumed game.

The table is what :class:`~serialref.referee.game.GameReferee` runs on (a
``transitions`` Machine); each row names the rule of the EPD specification or of
PROTOCOL.md it carries out. :class:`ResumedGame` is what a restart hands a game
from the journal: how it started, its moves, its clocks and the state to go on in.
"""

from __future__ import annotations

import enum
from dataclasses import dataclass
from typing import Any

import chess

from serialref.clock import ChessClock
from serialref.happenings import GameStarted

__all__ = ["TRANSITIONS", "GameState", "ResumedGame"]


class GameState(enum.Enum):
    """Where one game stands."""

    RESETTING = "resetting"  # reset sent to both players; the reset delay runs (8.1.6)
    PLAYING = "playing"  # the respond/reply cycle (8, steps 8-12)
    SUSPENDED = "suspended"  # no clock runs until every player is back
    ENDED = "ended"  # the result is known; inform and conclude went out (8, step 13)


_G = GameState

TRANSITIONS: list[dict[str, Any]] = [
    # 8.1.5, 8 step 8: the reset delay is over: tags to both players, the first respond.
    {"trigger": "reset_delay_passed", "source": _G.RESETTING, "dest": _G.PLAYING,
     "after": "_open"},
    # PROTOCOL.md 4 (fault policy), 7 (orderly restart): the clocks stop until all are back.
    {"trigger": "suspend", "source": _G.PLAYING, "dest": _G.SUSPENDED, "before": "_stop_clock"},
    {"trigger": "players_back", "source": _G.SUSPENDED, "dest": _G.PLAYING,
     "after": "_ask_side_to_move"},
    # PROTOCOL.md 5: the game ends; 8.1.5 inform with the result, 8.1.1 conclude.
    {"trigger": "end", "source": [_G.PLAYING, _G.SUSPENDED], "dest": _G.ENDED,
     "before": "_stop_clock", "after": "_conclude"},
    # 3.2 (9): the supervisor starts the game again from its initial position.
    {"trigger": "restart", "source": [_G.RESETTING, _G.PLAYING, _G.SUSPENDED],
     "dest": _G.RESETTING, "before": "_stop_clock", "after": "_start_over"},
]  # fmt: skip


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
