"""One player's seat at the referee: a state machine per serial port.

It knows whether a player is signed on, whether it is being reset, waiting, or
to move, and so whether a record from it is in turn. The match drives it; it
sends nothing itself. Rows of the table are numbered after the EPD
specification section they implement.

A ``reply`` answers one particular ``respond`` (PROTOCOL.md 7). The seat keeps the
position the outstanding ``respond`` asks about and the positions of the earlier
ones (this game's and the previous game's), so that a reply that crossed a
``conclude``, a ``reset`` or a restore on the wire, or that repeats an answer
already taken, is recognised as stale and ignored instead of being judged as a
move in the wrong position.
"""

from __future__ import annotations

import enum
import logging
from typing import Any

from transitions import Machine

from serialref.errors import ProgrammingError
from serialref.wire.ratelimit import BurstLimit

LOGGER = logging.getLogger(__name__)

__all__ = ["IgnoredLines", "PortSession", "SessionState"]


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


def _destinations() -> dict[tuple[str, SessionState], SessionState]:
    """Each (trigger, state) the table allows, and the state it leads to.

    ``transitions`` reads and checks the table; a seat's transitions have no
    callbacks, so firing one is this lookup. Two fire per move, and going through
    ``Machine`` for them cost more than the rest of a seat's work.
    """
    machine = Machine(
        model=None,
        states=SessionState,
        transitions=TRANSITIONS,
        initial=SessionState.OFFLINE,
        auto_transitions=False,
    )
    return {
        # A transition without a destination is internal: the seat stays where it is.
        (trigger, SessionState[source]): SessionState[transition.dest or source]
        for trigger, event in machine.events.items()
        for source, transitions in event.transitions.items()
        for transition in transitions
    }


_DESTINATIONS = _destinations()


def reply_keys(fen: str) -> tuple[str, ...]:
    """The four position fields a correct reply to a ``respond`` may carry.

    The referee writes an en passant square after every double push; players built
    on python-chess write ``-`` when no capture is possible (PROTOCOL.md 2), so both
    spellings name the position.
    """
    fields = fen.split(" ", 4)[:4]
    key = " ".join(fields)
    if fields[3] == "-":
        return (key,)
    return key, " ".join((*fields[:3], "-"))


class PortSession:
    """The referee's view of the player on one port."""

    def __init__(self, port: str, name: str) -> None:
        self.port = port
        self.name = name
        self.state = SessionState.OFFLINE
        self.reset_at: float | None = None
        self.reset_for_game = 0
        self._outstanding: tuple[str, ...] = ()
        self._answered: set[str] = set()
        self._answered_before: set[str] = set()
        self._game = 0

    def fire(self, trigger: str) -> None:
        """Fire a trigger; an impossible one is a referee bug, so it raises."""
        try:
            self.state = _DESTINATIONS[trigger, self.state]
        except KeyError:
            raise ProgrammingError(
                f"port {self.port}: {trigger} is not possible when {self.state.value}"
            ) from None
        if LOGGER.isEnabledFor(logging.DEBUG):
            LOGGER.debug("port %s: %s", self.port, self.state.value)

    @property
    def signed_on(self) -> bool:
        return self.state in _IN_TOUCH

    @property
    def to_move(self) -> bool:
        return self.state is SessionState.TO_MOVE

    # --------------------------------------------------------- what it was told

    def note_reset(self, game: int, at: float | None) -> None:
        """A ``reset`` for ``game`` went out; earlier games' replies are stale from now on."""
        if game != self._game:
            self._answered_before, self._answered = self._answered, set()
            self._game = game
        self._retire()
        self.fire("reset_sent")
        self.reset_for_game = game
        if at is not None:
            self.reset_at = at

    def note_respond(self, expected_fen: str) -> None:
        """A ``respond`` went out; a reply to it must name ``expected_fen``'s position."""
        self._retire()
        self.fire("respond_sent")
        self._outstanding = reply_keys(expected_fen)

    def note_reply(self) -> None:
        """The outstanding ``respond`` was answered; a repeat of the answer is stale."""
        self._retire()
        self.fire("reply_taken")

    def note_conclude(self) -> None:
        self._retire()
        self.fire("conclude_sent")

    def note_left(self) -> None:
        self._retire()
        self.fire("left")

    def note_disconnect(self) -> None:
        self._retire()
        self.fire("disconnect_sent")

    def is_stale(self, position: str) -> bool:
        """Whether ``position`` (four fields) is that of a ``respond`` no longer outstanding."""
        return position in self._answered or position in self._answered_before

    def _retire(self) -> None:
        if self._outstanding:
            self._answered.update(self._outstanding)
            self._outstanding = ()


class IgnoredLines(BurstLimit):
    """How many ignored lines from one port are recorded: ``burst`` per ``window``, then a count.

    Line noise and a hostile player can send thousands of lines a second; each one
    recorded costs journal space and a log line (PROTOCOL.md 7: bounded space).
    """
