"""One player's seat at the referee: a state machine per serial port.

It knows whether a player is signed on, whether it is being reset, waiting, or
to move, and so whether a record from it is in turn. Whoever holds the seats
drives it: the game while one runs, the match between games; it sends nothing
itself. Rows of the table are numbered after the EPD specification section they
implement.

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
import math
from typing import Any

from serialref.epd.record import EpdRecord
from serialref.statetable import StateTable
from serialref.wire.backoff import Backoff
from serialref.wire.ratelimit import BurstLimit

LOGGER = logging.getLogger(__name__)

__all__ = ["IgnoredLines", "PortSession", "SessionState", "SignOnPace"]


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
    # 8.1.2 disconnect: the referee talks no more, however many times the match ends.
    {"trigger": "disconnect_sent", "source": [_S.OFFLINE, *_IN_TOUCH], "dest": _S.DISCONNECTED},
    {"trigger": "disconnect_sent", "source": _S.DISCONNECTED, "dest": None},
]

_TABLE = StateTable(
    SessionState,
    TRANSITIONS,
    states=[{"name": state, "on_enter": "_log_change"} for state in SessionState],
)


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
    """The referee's view of the player on one port, called ``name`` where one is
    configured, else by the name it signs on with (default ``Player A``)."""

    def __init__(self, port: str, name: str | None = None) -> None:
        self.port = port
        self.name = name or f"Player {port.upper()}"
        self._name_configured = bool(name)
        self.state = SessionState.OFFLINE
        self.reset_at: float | None = None
        self.reset_for_game = 0
        self._outstanding: tuple[str, ...] = ()
        self._answered: set[str] = set()
        self._answered_before: set[str] = set()
        self._game = 0
        self.sign_ons = SignOnPace()

    def _log_change(self, *_: object) -> None:
        if LOGGER.isEnabledFor(logging.DEBUG):
            LOGGER.debug("port %s: %s", self.port, self.state.value)

    @property
    def signed_on(self) -> bool:
        """Whether a player is signed on: only then can its seat be reset (8.1.6)."""
        return _TABLE.may(self, "reset_sent")

    @property
    def to_move(self) -> bool:
        """Whether a reply from the player is in turn: its seat has a row that takes it."""
        return _TABLE.may(self, "reply_taken")

    @property
    def disconnected(self) -> bool:
        """Whether the player was told ``disconnect``: the referee talks no more, and no
        ``sign_on`` is taken again (8.1.2)."""
        return not _TABLE.may(self, "sign_on_received")

    # --------------------------------------------------------- what it was told

    def note_sign_on(self, name: str | None) -> None:
        """A ``sign_on`` is answered: the player is registered, again if it restarted.

        ``name`` is the one it gave (``tcsi``), if any: it is called by it unless a name
        is configured for the port.
        """
        self.take_name(name)
        again = self.signed_on
        _TABLE.fire(self, "sign_on_received")
        LOGGER.info("port %s: %s signed on%s", self.port, self.name, " again" if again else "")

    def take_name(self, name: str | None) -> None:
        """The player calls itself ``name`` (its ``sign_on``, or the journal's record of it)."""
        if name and not self._name_configured:
            self.name = name

    def note_reset(self, game: int, at: float | None) -> None:
        """A ``reset`` for ``game`` went out; earlier games' replies are stale from now on."""
        if game != self._game:
            self._answered_before, self._answered = self._answered, set()
            self._game = game
        self._retire()
        _TABLE.fire(self, "reset_sent")
        self.reset_for_game = game
        if at is not None:
            self.reset_at = at

    def note_respond(self, expected_fen: str) -> None:
        """A ``respond`` went out; a reply to it must name ``expected_fen``'s position."""
        self._retire()
        _TABLE.fire(self, "respond_sent")
        self._outstanding = reply_keys(expected_fen)

    def note_joined(self) -> None:
        """``inform`` (and a restore's ``execute`` records) went out: the player follows
        the game."""
        _TABLE.fire(self, "game_joined")

    def note_reply(self) -> None:
        """The outstanding ``respond`` was answered; a repeat of the answer is stale."""
        self._retire()
        _TABLE.fire(self, "reply_taken")

    def note_conclude(self) -> None:
        self._retire()
        _TABLE.fire(self, "conclude_sent")

    def note_left(self) -> None:
        self._retire()
        self.sign_ons.drop()
        _TABLE.fire(self, "left")

    def note_disconnect(self) -> None:
        self._retire()
        self.sign_ons.drop()
        _TABLE.fire(self, "disconnect_sent")

    def sign_on_waits(self, record: EpdRecord, at: float, *, unread: bool) -> str:
        """Why a ``sign_on`` that arrived at ``at`` is not answered now; "" when it is.

        ``unread``: records sent to this port wait for the player to read them.
        """
        if self.signed_on and unread:
            # The answer to its last sign_on has not even been read: a flood.
            return "ignored: sign_on while the last answer waits to be read"
        if self.sign_ons.hold(record, at):
            # Faster than a program restarts: answered once, when the pause is over.
            return "held: sign_on within the pause after the last one answered"
        return ""

    def is_stale(self, position: str) -> bool:
        """Whether ``position`` (four fields) is that of a ``respond`` no longer outstanding."""
        return position in self._answered or position in self._answered_before

    def _retire(self) -> None:
        if self._outstanding:
            self._answered.update(self._outstanding)
            self._outstanding = ()


FIRST_SIGN_ON_PAUSE = 1.0
"""Seconds after an answered ``sign_on`` during which the next one waits."""

LONGEST_SIGN_ON_PAUSE = 60.0
"""The pause doubles, while sign-ons keep coming, up to this many seconds."""


class SignOnPace:
    """When a port's next ``sign_on`` is answered: a restart gets its restore, a flood does not.

    A ``sign_on`` in a game costs a whole restore (PROTOCOL.md 6: ``reset``, ``inform``,
    one ``execute`` per move, each of them journaled). A player that really restarted is
    owed one at once; a player that repeats ``sign_on`` faster than any program restarts
    must not cost one each time (PROTOCOL.md 7: bounded space). So every answered
    ``sign_on`` starts a pause, ``first`` seconds long and twice as long after each
    ``sign_on`` answered at the end of one, up to ``longest``. A ``sign_on`` that arrives
    within the pause is held, and the last one held is answered when the pause is over:
    one restore for all of them, and a player that restarted in the pause is restored
    all the same, without having to send ``sign_on`` again. A player that has been quiet
    for a whole ``longest`` pause beyond the end of the last one starts again at ``first``.
    """

    def __init__(
        self, first: float = FIRST_SIGN_ON_PAUSE, longest: float = LONGEST_SIGN_ON_PAUSE
    ) -> None:
        self._pauses = Backoff(first, longest)
        self._longest = longest
        self._answer_from = -math.inf
        self._held: EpdRecord | None = None

    def hold(self, record: EpdRecord, at: float) -> bool:
        """Whether ``record``, a ``sign_on`` that arrived at ``at``, waits for the pause to end.

        If it does not, it is answered now: its pause begins.
        """
        if at < self._answer_from:
            self._held = record
            return True
        self._answered(at)
        return False

    def due(self) -> float | None:
        """When the held ``sign_on`` is answered; None when none is held."""
        return None if self._held is None else self._answer_from

    def release(self, now: float) -> EpdRecord | None:
        """The held ``sign_on`` once its pause is over (it is answered now), else None."""
        if self._held is None or now < self._answer_from:
            return None
        record, self._held = self._held, None
        self._answered(now)
        return record

    def drop(self) -> None:
        """The player left after its held ``sign_on``: no one is there to answer."""
        self._held = None

    def _answered(self, at: float) -> None:
        if at - self._answer_from >= self._longest:
            self._pauses.reset()
        self._answer_from = at + self._pauses.pause()


class IgnoredLines(BurstLimit):
    """How many lines a player can repeat at will are recorded on one port: ``burst`` per
    ``window``, then a count.

    Line noise and a hostile player can send thousands of lines a second; each one
    recorded costs journal space and a log line (PROTOCOL.md 7: bounded space). Lines
    the referee ignores count here, and so do those it does nothing with but record:
    a fault outside a game, a ``sign_on`` held by its :class:`SignOnPace`.
    """
