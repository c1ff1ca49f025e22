"""An engine's score as the ``ce`` operand of spec 6.7, mates included.

The spec packs mates into the centipawn range: a mate in N for the side to move is
``32767 - (2N - 1)``, being mated in N is ``-32767 + 2N``, and ``-32767`` means the
side to move is checkmated. Plain evaluations are clamped to ``+-32000`` so that no
evaluation, however wild, reads as a mate.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

if TYPE_CHECKING:  # for annotations only: the referee's PGN file reads these constants,
    # and the engine module would bring asyncio into its process
    import chess.engine

__all__ = ["CHECKMATED", "MATE_BOUND", "centipawns", "mate_in"]

CHECKMATED = -32767
"""``ce`` of a position whose side to move is checkmated."""

MATE_BOUND = 32000
"""A ``ce`` beyond this bound encodes a mate; evaluations are clamped to it."""


def centipawns(score: chess.engine.Score) -> int:
    """The ``ce`` operand of ``score``, which is from the side to move's point of view."""
    mate = score.mate()
    if mate is None:
        value = score.score()
        assert value is not None  # a Score is a mate or a centipawn value
        return max(-MATE_BOUND, min(MATE_BOUND, value))
    if mate > 0:
        return 32767 - (2 * mate - 1)
    return CHECKMATED + 2 * -mate



def mate_in(ce: int) -> int | None:
    """The mate a ``ce`` operand encodes, in moves: ``3`` when the side to move mates in
    three, ``-3`` when it is mated in three (``0``: it is checkmated); None for an evaluation.

    The inverse of :func:`centipawns` for mates.
    """
    if abs(ce) <= MATE_BOUND:
        return None
    plies = -CHECKMATED - abs(ce)
    return (plies + 1) // 2 if ce > 0 else -(plies // 2)
