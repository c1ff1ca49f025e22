"""The UCI ``position`` line of one game, grown move by move as the game goes on.

Within a game the engine is sent ``position ... moves ...`` with each search; building
the line again from the start every move costs a UCI move per ply played, so the line
is kept, with the board and the last move it was built from, and only extended.
"""

from __future__ import annotations

import chess

__all__ = ["PositionLine"]


class PositionLine:
    """The ``position`` line of one game's board as far as it was last sent."""

    def __init__(self, board: chess.Board, start: str) -> None:
        self.board = board
        self.line = start
        self.plies = 0
        self._last: chess.Move | None = None

    def continued_by(self, board: chess.Board) -> bool:
        """Whether ``board`` is this game's board with the moves sent still below."""
        stack = board.move_stack
        return (
            board is self.board
            and len(stack) >= self.plies
            and (self.plies == 0 or stack[self.plies - 1] is self._last)
        )

    def extend(self, moves: list[chess.Move]) -> None:
        """Add ``moves``, played after those already in the line."""
        if self.plies == 0:
            self.line += " moves"
        self.line += "".join([f" {move.uci()}" for move in moves])
        self.plies += len(moves)
        self._last = moves[-1]
