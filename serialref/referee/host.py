"""The referee's boundary: the players' ports, the record of what happens, and the time.

:class:`PlayerPorts` is how the referee reaches the players; the board
(:mod:`serialref.referee.daemon`) implements it over its open ports, tests over a list.
:class:`RefereeHost` is what the match and its games act through: it sends records to
the ports (each one recorded as sent), hands events to the :class:`Publisher`, and tells
the time: the monotonic clock every deadline is kept on, the wall clock of the record,
and a line's own time. Both clocks are injected, so tests drive time by hand.
"""

from __future__ import annotations

import logging
import time
from collections.abc import Callable, Mapping
from typing import Protocol

from serialref.epd.record import EpdRecord
from serialref.epd.writer import format_record
from serialref.errors import LineLostError
from serialref.referee.publisher import Publisher

__all__ = ["PlayerPorts", "RefereeHost"]

LOGGER = logging.getLogger(__name__)


class PlayerPorts(Protocol):
    """How the referee reaches the players: one line at a time to a port."""

    def send(self, port: str, text: str, *, notify: bool = False) -> float | None:
        """Queue one line; when its last byte can have reached the player, or None.

        None: the port could not take it at once; with ``notify`` the referee hears
        of its departure (the game's ``record_left``). Raises LineLostError when the
        line is down.
        """
        ...

    def waiting(self, port: str) -> bool:
        """Whether records wait for the port to take them: its player is not reading."""
        ...


class RefereeHost:
    """Sends records, publishes events and tells the time, for the match and its games.

    ``line_times`` holds, for each port whose line's own time is not charged to the
    player (PROTOCOL.md 5), the time a number of bytes takes on it; the board fills it in
    as it opens its ports (whether a port is a real serial line is known once it is
    open), so no move asks the ports for it.
    """

    def __init__(
        self,
        ports: PlayerPorts,
        publisher: Publisher,
        *,
        line_times: Mapping[str, Callable[[int], float]] | None = None,
        clock: Callable[[], float] = time.monotonic,
        wall_clock: Callable[[], float] = time.time,
    ) -> None:
        self.ports = ports
        self.publisher = publisher
        self._line_times: Mapping[str, Callable[[int], float]] = (
            {} if line_times is None else line_times
        )
        self._clock = clock
        self._wall = wall_clock

    def send(self, port: str, record: EpdRecord | str, *, notify: bool = False) -> float | None:
        """Send a record (or its normalised line) and record it as sent; when it can have
        reached the player, or None while it waits.

        A line that is down gives None too: its loss reaches the referee from the loop.
        """
        text = record if isinstance(record, str) else format_record(record)
        try:
            left_at = self.ports.send(port, text, notify=notify)
        except LineLostError as exc:
            LOGGER.warning("port %s: could not send (%s)", port, exc)
            return None
        self.publisher.sent(
            port, text, self._clock() if left_at is None else left_at, queued=left_at is None
        )
        return left_at

    def now(self) -> float:
        """The referee's monotonic time, which every deadline and clock is kept on."""
        return self._clock()

    def wall_time(self) -> float:
        """The time of day, for what is recorded (dates, the journal's times)."""
        return self._wall()

    def line_time(self, port: str, nbytes: int) -> float:
        """The time ``nbytes`` take on ``port``'s line, where it is not charged (else 0)."""
        time_of = self._line_times.get(port)
        return 0.0 if time_of is None else time_of(nbytes)
