"""Games in progress on a terminal: board, clocks, last move and each result.

On a terminal the board and the clocks are redrawn in place (at most a few
times a second, so instant players do not flood it); into a file or pipe only
game starts, final positions and results are written.
"""

from __future__ import annotations

import time
from collections.abc import Callable
from typing import TextIO

import chess

from serialref.clock import format_clock
from serialref.events import (
    GameEnded,
    GameStarted,
    MatchEnded,
    MatchEvent,
    MovePlayed,
    PlayerSignedOff,
    PlayerSignedOn,
)

__all__ = ["ConsoleObserver"]

_REDRAW_EVERY = 0.2


class ConsoleObserver:
    """Writes a human-readable account of the match to a text stream."""

    def __init__(
        self,
        stream: TextIO,
        *,
        live: bool | None = None,
        clock: Callable[[], float] = time.monotonic,
    ) -> None:
        self._stream = stream
        self._live = stream.isatty() if live is None else live
        self._clock = clock
        self._next_redraw = 0.0
        self._names = ("White", "Black")
        self._last_move: MovePlayed | None = None
        self._drawn = 0  # lines of the live board block on screen, to redraw in place

    def handle(self, event: MatchEvent) -> None:
        if isinstance(event, PlayerSignedOn):
            self._line(f"port {event.port}: {event.name} signed on")
        elif isinstance(event, PlayerSignedOff):
            self._line(f"port {event.port}: player left ({event.reason})")
        elif isinstance(event, GameStarted):
            self._names = (event.tags["White"], event.tags["Black"])
            self._last_move = None
            self._line(
                f"game {event.game}: {self._names[0]} (White) - {self._names[1]} (Black), "
                f"{event.tags.get('TimeControl', '-')}"
            )
        elif isinstance(event, MovePlayed):
            self._last_move = event
            if self._live and self._clock() >= self._next_redraw:
                self._next_redraw = self._clock() + _REDRAW_EVERY
                self._draw(event)
        elif isinstance(event, GameEnded):
            if self._last_move is not None:
                self._draw(self._last_move)
            self._line(f"game {event.game}: {event.result} ({event.reason})")
        elif isinstance(event, MatchEnded):
            status = "complete" if event.complete else f"stopped: {event.reason}"
            self._line(f"match {status}; score {event.score[0]:g} - {event.score[1]:g} (A - B)")

    def close(self) -> None:
        self._stream.flush()

    def _move_text(self, move: MovePlayed) -> str:
        _, turn, _, _, _, fullmove = move.fen.split(" ")
        # The FEN is the position after the move: Black to move means White moved.
        number, dots = (fullmove, ".") if turn == "b" else (int(fullmove) - 1, "...")
        return (
            f"ply {move.ply:3d}  {number}{dots}{move.san:<7}  "
            f"{self._names[0]} {format_clock(move.remaining[0])}  "
            f"{self._names[1]} {format_clock(move.remaining[1])}"
        )

    def _draw(self, move: MovePlayed) -> None:
        """The board after ``move`` and the clocks; on a terminal, over the previous drawing."""
        block = [*str(chess.Board(move.fen)).splitlines(), self._move_text(move)]
        if self._live:
            up = f"\x1b[{self._drawn}F" if self._drawn else ""
            self._stream.write(up + "".join(f"{line}\x1b[K\n" for line in block))
            self._drawn = len(block)
        else:
            self._stream.write("".join(f"{line}\n" for line in block))
        self._stream.flush()

    def _line(self, text: str) -> None:
        self._drawn = 0  # a line below the board: the next game draws a new board
        self._stream.write(f"{text}\n")
        self._stream.flush()
