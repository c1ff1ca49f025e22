"""The two seats a game holds while it runs, and what their players are told (EPD spec 8.1).

While a game runs, its :class:`GameSeats` are its only way to the players' seats
(:class:`~serialref.referee.session.PortSession`): every record the specification has
the referee send in a game goes out here, and the player's seat notes it, so that it
knows whether a reply from the player is in turn: ``reset`` (8.1.6) with the game's
initial position, ``inform`` (8.1.5) with its tags, ``execute`` (8.1.3) for each move
when a player comes back, ``respond`` (8.1.7), the result's ``inform`` and ``conclude``
(8.1.1), a ``fault`` (8.1.4). A player's signing on and leaving is noted and recorded
here as well, and the rejoin window a player that left has (PROTOCOL.md 6). When a game
begins, one of its players may already have its ``reset``: the match sends it to a
player that signs on between games.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping

import chess

from serialref import records
from serialref.happenings import PlayerSignedOff, PlayerSignedOn
from serialref.referee.game.replay import executes
from serialref.referee.host import RefereeHost
from serialref.referee.session import PortSession
from serialref.referee.settings import PORTS

__all__ = ["GameSeats"]

Tags = Iterable[tuple[str, str]]


class GameSeats:
    """The seats of game number ``number``, and the host their records go out through."""

    def __init__(
        self, number: int, sessions: Mapping[str, PortSession], host: RefereeHost
    ) -> None:
        self._number = number
        self._sessions = sessions
        self._host = host
        self._back_by: dict[str, float] = {}  # the rejoin windows open, by port

    def __getitem__(self, port: str) -> PortSession:
        return self._sessions[port]

    def present(self, port: str) -> bool:
        """Whether the player on ``port`` is signed on."""
        return self._sessions[port].signed_on

    def all_present(self) -> bool:
        return all(session.signed_on for session in self._sessions.values())

    # ------------------------------------------------------- coming and going

    def signed_on(self, port: str, name: str | None) -> None:
        """8.2.4: the player on ``port`` signed on (again), called ``name`` if it gave one."""
        session = self._sessions[port]
        session.note_sign_on(name)
        self._host.publisher.publish(PlayerSignedOn(port=port, name=session.name))

    def left(self, port: str, reason: str) -> None:
        """The player on ``port`` counts as signed off from now on (``reason``)."""
        self._sessions[port].note_left()
        self._host.publisher.publish(PlayerSignedOff(port=port, reason=reason))

    def await_return(self, port: str, until: float) -> None:
        """The player on ``port`` has until ``until`` to come back (its rejoin window)."""
        self._back_by[port] = until

    def rejoin_deadline(self) -> float | None:
        """When the first rejoin window open closes."""
        return min(self._back_by.values(), default=None)

    def not_back(self, now: float) -> list[str]:
        """The ports whose rejoin window has closed by ``now``; their windows are gone."""
        if not self._back_by:
            return []
        closed = [port for port, until in self._back_by.items() if now >= until]
        for port in closed:
            del self._back_by[port]
        return closed

    def not_running(self, lost: float) -> None:
        """The referee did not run for ``lost`` seconds: every rejoin window is that longer."""
        self._back_by = {port: until + lost for port, until in self._back_by.items()}

    def forget_absences(self) -> None:
        """No rejoin window is open any more (the game ended or starts over)."""
        self._back_by.clear()

    # ------------------------------------------------------------ the records

    def reset(self, port: str, initial: chess.Board) -> None:
        """8.1.6: ``reset`` with the game's ``initial`` position; the reset delay runs."""
        at = self._host.send(port, records.reset(initial))
        self._sessions[port].note_reset(self._number, at)

    def reset_the_rest(self, initial: chess.Board) -> None:
        """``reset`` each player whose seat has not had this game's yet."""
        for port in PORTS:
            if self._sessions[port].reset_for_game != self._number:
                self.reset(port, initial)

    def reset_present(self, initial: chess.Board) -> None:
        """``reset`` every player present (the game starts again)."""
        for port in PORTS:
            if self._sessions[port].signed_on:
                self.reset(port, initial)

    def reset_deadline(self, delay: float) -> float:
        """When the reset delay is over: ``delay`` after the last of this game's resets."""
        times = [
            session.reset_at
            for session in self._sessions.values()
            if session.reset_at is not None and session.reset_for_game == self._number
        ]
        return max(times, default=self._host.now()) + delay

    def inform(self, position: records.Position, tags: Tags) -> None:
        """8.1.5: the game's tags to every player present, who follows the game from now on."""
        for port in PORTS:
            session = self._sessions[port]
            if session.signed_on:
                self._host.send(port, records.inform(position, tags))
                session.note_joined()

    def replay(self, port: str, initial: chess.Board, board: chess.Board, tags: Tags) -> None:
        """PROTOCOL.md 6: the game again, to a player that is back: ``reset`` with the
        ``initial`` position, ``inform``, then an ``execute`` for each of ``board``'s moves."""
        self.reset(port, initial)
        self._host.send(port, records.inform(initial, tags))
        self._sessions[port].note_joined()
        for record in executes(initial, board):
            self._host.send(port, record)

    def respond(self, port: str, line: str, position: str, *, notify: bool) -> float | None:
        """8.1.7: the ``respond`` ``line`` asks ``port`` for a move in ``position``; when it
        can have reached the player, None while the port holds it back (with ``notify``,
        the game hears when it leaves)."""
        left_at = self._host.send(port, line, notify=notify)
        self._sessions[port].note_respond(position)
        return left_at

    def reply_taken(self, port: str) -> None:
        """The ``respond`` outstanding on ``port`` was answered: a repeat of it is stale."""
        self._sessions[port].note_reply()

    def conclude(self, position: str, tags: Tags, consumed_ms: tuple[int, int]) -> None:
        """8.1.5 ``inform`` with the result, then 8.1.1 ``conclude``, to every player present."""
        present = [port for port in PORTS if self._sessions[port].signed_on]
        inform = records.inform(position, tags)
        for port in present:
            self._host.send(port, inform)
        conclude = records.conclude(position, consumed_ms)
        for port in present:
            self._host.send(port, conclude)
            self._sessions[port].note_conclude()

    def fault(self, port: str, position: str, reason: str) -> None:
        """8.1.4: ``fault`` to the player on ``port``, who counts as signed off after it."""
        self._host.send(port, records.fault(position, reason))
        self.left(port, f"fault: {reason}")
