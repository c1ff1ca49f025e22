"""What every observer that follows the match promises: it never raises into the referee.

The referee's thread is keeping the clocks when it hands an observer an event, so a bug
in the observer must not cost a game: its first failure is logged with the traceback,
it hears nothing more, and the match goes on.
"""

from __future__ import annotations

import logging

from serialref.events import MatchEvent

__all__ = ["FallsSilent"]

LOGGER = logging.getLogger(__name__)


class FallsSilent:
    """An observer whose :meth:`handle` gives each event to ``_handle`` until one fails."""

    _silent = False

    def handle(self, event: MatchEvent) -> None:
        if self._silent:
            return
        try:
            self._handle(event)
        except Exception:
            self._silent = True
            LOGGER.exception("%s", self._stopped())

    def _handle(self, event: MatchEvent) -> None:
        raise NotImplementedError

    def _stopped(self) -> str:
        """What the log says once the observer has fallen silent."""
        raise NotImplementedError
