"""How long to wait before trying again to get a line or a connection back.

A port that is gone (an unplugged adapter, a referee still holding the line, a standby
that is down) is tried again 0.2 s later, then after twice as long each time, up to
5 s: quick when the cable was only jiggled, and never more than a few seconds late
once it is back, at no real cost while it stays away.
"""

from __future__ import annotations

__all__ = ["FIRST_PAUSE", "LONGEST_PAUSE", "Backoff"]

FIRST_PAUSE = 0.2
"""Seconds before the first attempt again."""

LONGEST_PAUSE = 5.0
"""The pause doubles up to this many seconds."""


class Backoff:
    """The pauses between attempts: ``first``, doubling to ``longest``; :meth:`reset` on success."""

    def __init__(self, first: float = FIRST_PAUSE, longest: float = LONGEST_PAUSE) -> None:
        self._first = first
        self._longest = longest
        self._next = first

    def pause(self) -> float:
        """The pause before the next attempt (each call doubles the one after)."""
        pause = self._next
        self._next = min(pause * 2, self._longest)
        return pause

    def reset(self) -> None:
        """An attempt succeeded: the next loss starts again from the first pause."""
        self._next = self._first
