"""A game's chess clock as the referee runs it: when a move starts (PROTOCOL.md 5, 6, 7).

A move's time runs from the moment the ``respond`` that asks for it can have reached
the player: the port says when, or that it could not take the record yet, and then the
move starts when the record leaves. A ``respond`` sent again for the same move (a
restore) does not start it again: the player's clock kept running while it was away. A
player that is away, or whose ``respond`` never left, has its clock run all the same, as
a real one would. The time the referee itself did not run is charged to no one.

The supervisor's pause (EPD spec 3.2, task 9) is kept once for the whole match, in a
:class:`Pause` that the match switches and every game's move clock reads: a game that
begins while it is on has its clock held from its first move, without being told.
"""

from __future__ import annotations

from dataclasses import dataclass

import chess

from serialref.clock import ChessClock

__all__ = ["MoveClock", "Pause"]


@dataclass(slots=True)
class Pause:
    """The supervisor's pause of a match: while it is on, no clock runs and the next
    ``respond`` waits for its end."""

    on: bool = False


class MoveClock:
    """Starts, unpauses and stops a :class:`ChessClock` as a game's records come and go."""

    def __init__(self, clock: ChessClock, flag_grace: float, pause: Pause) -> None:
        self.clock = clock
        self._flag_grace = flag_grace
        self._pause = pause
        self._awaiting: tuple[str, chess.Color] | None = None  # a respond not yet left

    @property
    def held(self) -> bool:
        """Whether the supervisor's pause holds the clock: nothing unpauses it."""
        return self._pause.on

    @property
    def counting(self) -> bool:
        """Whether the move in progress is being charged to its player."""
        return self.clock.running is not None and not self.clock.paused

    def awaits_departure_to(self, port: str) -> bool:
        """Whether the respond to ``port`` that opens the move has not left the referee yet."""
        return self._awaiting is not None and self._awaiting[0] == port

    def asked(self, port: str, side: chess.Color, left_at: float | None) -> None:
        """A respond to ``side`` on ``port`` went out (None: the port holds it back).

        The respond that opens a move starts its clock; one sent again changes nothing.
        """
        if self.counting:
            return
        if left_at is None:
            self._awaiting = (port, side)
        else:
            self.start(side, left_at)

    def left(self, port: str, at: float) -> None:
        """A held-back respond has left: the move it opens starts at ``at``."""
        if self._awaiting is not None and self._awaiting[0] == port:
            side = self._awaiting[1]
            self._awaiting = None
            self.start(side, at)

    def gone(self, port: str, at: float) -> None:
        """The player on ``port`` went away; a move waiting for its respond starts anyway."""
        self.left(port, at)

    def start(self, side: chess.Color, at: float) -> None:
        """``side``'s clock runs from ``at``: a new move, or one unpaused after a pause."""
        if self.clock.running is None:
            self.clock.start(side, at)
        elif not self.held:
            self.clock.unpause(at)

    def hold(self, at: float) -> None:
        """The supervisor's pause began: no one is charged from ``at`` until it ends."""
        self.clock.pause(at)

    def release_move(self, at: float) -> None:
        """The pause is over in the respond/reply cycle: the move in progress is charged
        again from ``at``, unless its respond has not left (it starts when it leaves)."""
        if self.clock.running is None or self._awaiting is None:
            self.clock.unpause(at)

    def release(self, at: float) -> None:
        """The pause is over while no move is asked for (the reset delay, a suspension):
        the clock runs again from the next respond (:meth:`start`), as without a pause."""
        if self.clock.running is None:
            self.clock.unpause(at)

    def stop(self, at: float) -> None:
        """No one is charged from ``at`` on (a suspension, the game's end)."""
        self.clock.pause(at)
        self._awaiting = None

    def flag_deadline(self) -> float | None:
        """When a timer must look at the flag: its deadline, plus a reply still on the line."""
        deadline = self.clock.flag_deadline()
        return None if deadline is None else deadline + self._flag_grace

    def flag_fell(self, at: float) -> bool:
        """Whether the flag fell before a reply's thinking ended at ``at`` (its own line
        time is off already: no grace)."""
        return self.clock.flag_fell(at)

    def flag_fell_by(self, now: float) -> float | None:
        """The moment the flag fell, if it has by ``now`` with the grace allowed; else None."""
        if not self.clock.flag_fell(now - self._flag_grace):
            return None
        deadline = self.clock.flag_deadline()
        return now if deadline is None else min(now, deadline)

    def not_running(self, began: float, ended: float) -> None:
        """The referee did not run from ``began`` to ``ended``: charge it to no one."""
        self.clock.discount(began, ended)
