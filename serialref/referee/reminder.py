"""The log's reminder of the players a board waits for: who, and on which port.

Once one player has signed on, a referee waiting for the other has nothing to say, and a
person at the box cannot tell a referee that waits from one that hangs, nor which cable
to look at. So every so often it logs ``waiting for player B on /dev/serialref/b (not
signed on)``, for a player not yet signed on and for one that left (a lost line, a
``sign_off``, a ``fault``). The first reminder comes :data:`FIRST_REMINDER` seconds
into the wait (a player usually signs on within a few), the next ones at doubling
intervals up to :data:`LONGEST_INTERVAL`, so a box left waiting overnight logs a line
every few minutes, not thousands.
"""

from __future__ import annotations

import logging
from collections.abc import Callable, Iterable, Mapping

__all__ = ["FIRST_REMINDER", "LONGEST_INTERVAL", "SignOnReminder"]

LOGGER = logging.getLogger(__name__)

FIRST_REMINDER = 10.0
"""Seconds of waiting before the first reminder."""

LONGEST_INTERVAL = 300.0
"""The most seconds between two reminders of one wait."""


class SignOnReminder:
    """When the next reminder of a wait is due, and the reminding.

    ``ports`` gives each port's label (``a``, ``b``) the path or URL a person looks for.
    The board asks :meth:`due` whenever it is asked for its next deadline, and calls
    :meth:`remind` at its timer; a wait ends, and the intervals start again from the
    first, once every player is signed on.
    """

    def __init__(self, ports: Mapping[str, str], clock: Callable[[], float]) -> None:
        self._ports = dict(ports)
        self._clock = clock
        self._due: float | None = None
        self._interval = FIRST_REMINDER

    def due(self, waiting: bool) -> float | None:
        """When the next reminder is due while ``waiting`` for a player; None otherwise."""
        if not waiting:
            self._due = None
            self._interval = FIRST_REMINDER
        elif self._due is None:
            self._due = self._clock() + self._interval
        return self._due

    def remind(self, absent: Iterable[str]) -> None:
        """Name the ``absent`` ports' players in the log when a reminder is due."""
        now = self._clock()
        if self._due is None or now < self._due:
            return
        for label in absent:
            LOGGER.info("waiting for player %s on %s (not signed on)", label.upper(),
                        self._ports[label])  # fmt: skip
        self._interval = min(2 * self._interval, LONGEST_INTERVAL)
        self._due = now + self._interval
