"""Where one game stands: the states its table (:mod:`serialref.referee.game.machine`) moves
it through."""

from __future__ import annotations

import enum

__all__ = ["GameState"]


class GameState(enum.Enum):
    """Where one game stands."""

    RESETTING = "resetting"  # reset sent to both players; the reset delay runs (8.1.6)
    PLAYING = "playing"  # the respond/reply cycle (8, steps 8-12)
    SUSPENDED = "suspended"  # no clock runs until every player is back
    ENDED = "ended"  # the result is known; inform and conclude went out (8, step 13)
    STOPPED = "stopped"  # the referee stopped under it; a restart continues it (PROTOCOL.md 7)
