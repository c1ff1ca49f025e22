"""Games in progress on a terminal: the board with its coordinates, the clocks, the last move.

On a terminal the board and the clocks are redrawn in place (at most a few times a
second, so instant players do not flood it); into a file or pipe only each game's final
position is written. Players signing on and leaving are noted. The match's own story
(games started and finished, the score) is :class:`~serialref.observers.progress.
ProgressObserver`'s: it writes below the board, so it must come after this observer in
the referee's listeners, or a redraw in place would overwrite its lines.
"""

from __future__ import annotations

import math
import time
from collections.abc import Callable
from typing import TextIO

import chess
import chess.variant

from serialref.clock import format_clock
from serialref.happenings import (
    GameEnded,
    GameStarted,
    MatchEvent,
    MovePlayed,
    PlayerSignedOff,
    PlayerSignedOn,
)
from serialref.observers.output import ObserverOutput, printable
from serialref.rules import STANDARD, Rules, rules_of_tags

__all__ = ["ConsoleObserver", "board_with_coordinates"]

_REDRAW_EVERY = 0.2
_FILES = "  " + " ".join(chess.FILE_NAMES)


class ConsoleObserver:
    """Writes a human-readable view of the games to a text stream."""

    def __init__(
        self,
        stream: TextIO,
        *,
        live: bool | None = None,
        clock: Callable[[], float] = time.monotonic,
    ) -> None:
        self._out = ObserverOutput(stream)
        self._live = stream.isatty() if live is None else live
        self._clock = clock
        self._next_redraw = 0.0
        self._names = ("White", "Black")
        self._rules: Rules = STANDARD
        self._last_move: MovePlayed | None = None
        self._drawn = 0  # lines of the live board block on screen, to redraw in place

    def handle(self, event: MatchEvent) -> None:
        if isinstance(event, PlayerSignedOn):
            self._line(f"port {event.port}: {printable(event.name)} signed on")
        elif isinstance(event, PlayerSignedOff):
            self._line(f"port {event.port}: player left ({printable(event.reason)})")
        elif isinstance(event, GameStarted):
            self._names = (printable(event.tags["White"]), printable(event.tags["Black"]))
            self._rules = rules_of_tags(event.tags)
            self._last_move = None
            self._drawn = 0  # a new game gets a board of its own, below what came before
        elif isinstance(event, MovePlayed):
            self._last_move = event
            if self._live and self._clock() >= self._next_redraw:
                self._next_redraw = self._clock() + _REDRAW_EVERY
                self._draw(event)
        elif isinstance(event, GameEnded):
            if self._last_move is not None:
                self._draw(self._last_move)
            self._drawn = 0  # the final position stays; what follows goes below it

    def close(self) -> None:
        self._out.flush()

    def _move_text(self, move: MovePlayed) -> str:
        fields = move.fen.split(" ")
        turn, fullmove = fields[1], fields[-1]
        # The FEN is the position after the move: Black to move means White moved.
        number, dots = (fullmove, ".") if turn == "b" else (int(fullmove) - 1, "...")
        return (
            f"ply {move.ply:3d}  {number}{dots}{move.san:<7}  "
            f"{self._names[0]} {_clock_text(move, 0)}  {self._names[1]} {_clock_text(move, 1)}"
        )

    def _draw(self, move: MovePlayed) -> None:
        """The board after ``move`` and the clocks; on a terminal, over the previous drawing."""
        block = [*board_with_coordinates(self._rules.board(move.fen)), self._move_text(move)]
        if self._live:
            up = f"\x1b[{self._drawn}F" if self._drawn else ""
            self._out.write(up + "".join(f"{line}\x1b[K\n" for line in block))
            self._drawn = len(block)
        else:
            self._out.write("".join(f"{line}\n" for line in block))

    def _line(self, text: str) -> None:
        self._drawn = 0  # a line below the board: the next move draws a new board
        self._out.write(f"{text}\n")


def board_with_coordinates(board: chess.Board) -> list[str]:
    """python-chess's text board with the ranks on the left and the files below, White down.

    A variant's own state follows: the pieces in hand (crazyhouse), the checks still
    to give (three-check).
    """
    rows = str(board).splitlines()
    if len(rows) == 8 and len(rows[0]) == 15:
        lines = [f"{8 - index} {row}" for index, row in enumerate(rows)] + [_FILES]
    else:  # a fairy board: 9 or 10 ranks, up to 12 files
        lines = [f"{len(rows) - index:>2} {row}" for index, row in enumerate(rows)]
        files = len(rows[0].split())
        cell = (len(rows[0]) + 1) // files
        lines.append("  " + "".join(f"{name:>{cell}}" for name in "abcdefghijkl"[:files]))
    if isinstance(board, chess.variant.CrazyhouseBoard):
        white, black = (str(board.pockets[side]) or "-" for side in (chess.WHITE, chess.BLACK))
        lines.append(f"in hand: White {white.upper()} Black {black}")
    elif isinstance(board, chess.variant.ThreeCheckBoard):
        checks = board.remaining_checks
        lines.append(f"checks to give: White {checks[chess.WHITE]} Black {checks[chess.BLACK]}")
    return lines


def _clock_text(move: MovePlayed, side: int) -> str:
    """The time left; in a game without a clock (``--tc -``), the time used instead."""
    if math.isfinite(move.remaining[side]):
        return format_clock(move.remaining[side])
    return f"{format_clock(move.consumed[side])} used"
