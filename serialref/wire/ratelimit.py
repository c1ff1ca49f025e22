"""Bounded reporting of what a peer can repeat at will: a few one by one, then a count.

A hostile or broken peer can make the same thing happen thousands of times a second:
connect and say nothing, guess a token, overrun a server's limits. Each occurrence
told in full would grow the log and the journal without bound (PROTOCOL.md 7), and
telling none would hide the attack. :class:`BurstLimit` lets ``burst`` occurrences per
``window`` through one by one and counts the rest; the count is told once, when the
window is over. :class:`CountedLog` puts that in front of a logger, one limit per kind
of trouble, so the kinds never crowd each other out.
"""

from __future__ import annotations

import logging
import math
import time
from collections.abc import Callable

__all__ = ["LOG_WINDOW", "BurstLimit", "CountedLog"]

LOG_WINDOW = 10.0
"""Seconds over which a server's warnings of one kind are told once, then counted."""


class BurstLimit:
    """How many occurrences are told one by one: ``burst`` per ``window``, then a count."""

    def __init__(self, burst: int = 5, window: float = 1.0) -> None:
        self._burst = burst
        self._window = window
        self._window_start = -math.inf
        self._recorded = 0
        self._suppressed = 0

    def admit(self, at: float) -> tuple[bool, int]:
        """Whether to tell an occurrence at ``at``, and how many were left out before it."""
        left_out = self.window_over(at)
        if self._recorded < self._burst:
            self._recorded += 1
            return True, left_out
        self._suppressed += 1
        return False, left_out

    def window_over(self, at: float) -> int:
        """Start a new window if the current one is over; the occurrences it left out (once)."""
        if at - self._window_start < self._window:
            return 0
        left_out, self._suppressed = self._suppressed, 0
        self._window_start = at
        self._recorded = 0
        return left_out

    def owed_at(self) -> float:
        """When a count of left-out occurrences is due (infinity: none is owed)."""
        return self._window_start + self._window if self._suppressed else math.inf

    def flush(self) -> int:
        """The occurrences left out so far, reported once (at a game's or the match's end)."""
        left_out, self._suppressed = self._suppressed, 0
        return left_out


class CountedLog:
    """A server's warnings: per kind, ``burst`` per window in full, the rest as a count.

    ``kind`` must come from a fixed set (never from what a peer sent), so the limits
    themselves stay few. The owner calls :meth:`settle` when :meth:`due` comes, so a
    count is told even when the flood has stopped, and :meth:`close` at the end.
    """

    def __init__(self, logger: logging.Logger, name: str, *, burst: int = 5,
                 window: float = LOG_WINDOW,
                 clock: Callable[[], float] = time.monotonic) -> None:  # fmt: skip
        self._logger = logger
        self._name = name
        self._burst = burst
        self._window = window
        self._clock = clock
        self._limits: dict[str, BurstLimit] = {}

    def note(self, kind: str, message: str) -> bool:
        """Log ``message`` unless ``kind`` had its share of this window; True when logged.

        The message is logged as it is; the count, later, names the server and the kind.
        """
        limit = self._limits.get(kind)
        if limit is None:
            limit = self._limits[kind] = BurstLimit(self._burst, self._window)
        admitted, left_out = limit.admit(self._clock())
        self._tell_count(kind, left_out)
        if admitted:
            self._logger.warning("%s", message)
        return admitted

    def due(self) -> float:
        """When the next count is owed (infinity: none is); a ``select`` timeout for the owner."""
        return min((limit.owed_at() for limit in self._limits.values()), default=math.inf)

    def settle(self) -> None:
        """Tell the counts of every window that is over."""
        now = self._clock()
        for kind, limit in self._limits.items():
            if limit.owed_at() <= now:
                self._tell_count(kind, limit.window_over(now))

    def close(self) -> None:
        """Tell every count still owed (the server stops)."""
        for kind, limit in self._limits.items():
            self._tell_count(kind, limit.flush())

    def _tell_count(self, kind: str, count: int) -> None:
        if count:
            self._logger.warning("%s: %s: %d more in the last %g s", self._name, kind, count,
                                 self._window)  # fmt: skip
