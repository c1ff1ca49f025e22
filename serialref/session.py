"""One player's seat at the referee: a state machine per serial port.

It knows whether a player is signed on, whether it is being reset, waiting, or
to move, and so whether a record from it is in turn. The match drives it; it
sends nothing itself. Rows of the table are numbered after the EPD
specification section they implement.
"""

from __future__ import annotations

import enum
import logging
from typing import Any

from transitions import Machine

LOGGER = logging.getLogger(__name__)

__all__ = ["PortSession", "SessionState"]


class SessionState(enum.Enum):
    """Where one player stands with the referee."""

    OFFLINE = "offline"  # no player signed on (or it signed off, faulted, lost its line)
    SIGNED_ON = "signed on"  # registered, no game under way for it
    RESETTING = "resetting"  # reset sent; the reset delay runs (8.1.6)
    IDLE = "idle"  # in a game, informed, the opponent is to move
    TO_MOVE = "to move"  # respond sent; a reply is awaited (8.1.7)
    DISCONNECTED = "disconnected"  # disconnect sent: the referee talks no more (8.1.2)


_S = SessionState
_IN_TOUCH = [_S.SIGNED_ON, _S.RESETTING, _S.IDLE, _S.TO_MOVE]

TRANSITIONS: list[dict[str, Any]] = [
    # 8.2.4 sign_on: registers the player; a second one means it restarted.
    {"trigger": "sign_on_received", "source": [_S.OFFLINE, *_IN_TOUCH], "dest": _S.SIGNED_ON},
    # 8.1.6 reset: a new game (or a restore) begins for this player.
    {"trigger": "reset_sent", "source": _IN_TOUCH, "dest": _S.RESETTING},
    # 8.1.5 inform, 8.1.3 execute: the player follows the game.
    {"trigger": "game_joined", "source": [_S.RESETTING, _S.IDLE], "dest": _S.IDLE},
    # 8.1.7 respond: the player is on the move.
    {"trigger": "respond_sent", "source": [_S.IDLE, _S.TO_MOVE], "dest": _S.TO_MOVE},
    # 8.2.2 reply: the move arrived in turn.
    {"trigger": "reply_taken", "source": _S.TO_MOVE, "dest": _S.IDLE},
    # 8.1.1 conclude: the game is over for this player.
    {"trigger": "conclude_sent", "source": _IN_TOUCH, "dest": _S.SIGNED_ON},
    # 8.2.3 sign_off, 8.2.1 fault, 8.1.4 fault, or the line went away.
    {"trigger": "left", "source": [_S.OFFLINE, *_IN_TOUCH], "dest": _S.OFFLINE},
    # 8.1.2 disconnect.
    {"trigger": "disconnect_sent", "source": [_S.OFFLINE, *_IN_TOUCH], "dest": _S.DISCONNECTED},
]


class PortSession:
    """The referee's view of the player on one port."""

    state: SessionState

    def __init__(self, port: str, name: str) -> None:
        self.port = port
        self.name = name
        self.reset_at: float | None = None
        self.reset_for_game = 0
        self._machine = Machine(
            model=self,
            states=SessionState,
            transitions=TRANSITIONS,
            initial=SessionState.OFFLINE,
            auto_transitions=False,
        )

    def fire(self, trigger: str) -> None:
        """Fire a trigger; an impossible one is a referee bug, so it raises.

        The change is logged here rather than from a ``transitions`` callback:
        two triggers fire per move, and a callback costs even when nothing is logged.
        """
        self._machine.events[trigger].trigger(self)
        if LOGGER.isEnabledFor(logging.DEBUG):
            LOGGER.debug("port %s: %s", self.port, self.state.value)

    @property
    def signed_on(self) -> bool:
        return self.state in _IN_TOUCH

    @property
    def to_move(self) -> bool:
        return self.state is SessionState.TO_MOVE
