"""A game's result as PGN writes it, and the points it gives each player.

Shared by the referee (verdicts, the match score), the statistics of a match
(:mod:`serialref.elo`) and the standby's checks of a journal. ``Result`` is a
``StrEnum``: journal entries and PGN tags hold its plain text.
"""

from __future__ import annotations

import enum

__all__ = ["Result"]


class Result(enum.StrEnum):
    """The PGN result of a game (``*``: no result, such as an emergency end)."""

    WHITE_WINS = "1-0"
    BLACK_WINS = "0-1"
    DRAW = "1/2-1/2"
    UNFINISHED = "*"

    @property
    def points(self) -> tuple[float, float] | None:
        """(White's, Black's) points; None for a game without a result."""
        return _POINTS.get(self)

    @classmethod
    def points_of(cls, text: str) -> tuple[float, float] | None:
        """The points of a result read from a record or a PGN file; None for anything else."""
        try:
            return cls(text).points
        except ValueError:
            return None


_POINTS = {
    Result.WHITE_WINS: (1.0, 0.0),
    Result.BLACK_WINS: (0.0, 1.0),
    Result.DRAW: (0.5, 0.5),
}
