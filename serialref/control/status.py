"""What ``serialref ctl status`` shows: the match as the referee sees it, as JSON data.

Built on the referee's thread (a task handed to its loop), so it is one consistent
moment of the match, and then sent as it is. Clock faces are read at that moment; an
unlimited clock (``--tc -``) is ``null``. The last records in and out of each port
come from :class:`RecentLines`, which listens to the referee like any observer.
"""

from __future__ import annotations

import math
from collections import deque

import chess

from serialref.clock import side_index
from serialref.happenings import LineReceived, MatchEvent, RecordSent
from serialref.observers.output import printable
from serialref.referee.game.machine import GameReferee
from serialref.referee.match import MatchReferee
from serialref.referee.settings import PORTS

__all__ = ["RECENT", "RecentLines", "match_status"]

RECENT = 8
"""Records kept per port for ``status``: enough for a screen, bounded whatever happens."""

_MOVES_SHOWN = 40


class RecentLines:
    """The last records sent to and read from each port (a ``MatchListener``)."""

    def __init__(self) -> None:
        self.lines: dict[str, deque[dict[str, object]]] = {
            port: deque(maxlen=RECENT) for port in PORTS
        }

    def handle(self, event: MatchEvent) -> None:
        if isinstance(event, RecordSent) and event.port in self.lines:
            self.lines[event.port].append({"to": True, "text": event.text, "wall": event.wall})
        elif isinstance(event, LineReceived) and event.port in self.lines:
            self.lines[event.port].append(
                {"to": False, "text": printable(event.text), "wall": event.wall}
            )

    def close(self) -> None:
        """Nothing to release."""


def match_status(match: MatchReferee, recent: RecentLines) -> dict[str, object]:
    """The match, its game and both ports, now."""
    settings = match.settings
    return {
        "match": {
            "state": match.state.value,
            "games": settings.games,
            "games_done": match.games_done,
            "score": list(match.score),
            "paused": match.paused,
            "event": settings.event,
            "time_control": settings.time_control.text,
        },
        "game": None if match.game is None else _game_status(match.game, match.host.now()),
        "ports": {
            port: {
                "name": session.name,
                "state": session.state.value,
                "recent": list(recent.lines[port]),
            }
            for port, session in match.sessions.items()
        },
    }


def _game_status(game: GameReferee, now: float) -> dict[str, object]:
    sheet = game.sheet
    board = sheet.board.board
    played = len(board.move_stack) - len(sheet.opening_moves)
    clock = sheet.chess_clock
    running = clock.running
    remaining = [_seconds(clock.remaining(side, now)) for side in (chess.WHITE, chess.BLACK)]
    return {
        "number": game.number,
        "state": game.state.value,
        "white_port": sheet.white_port,
        "ply": played,
        "fen": board.fen(),
        "variant": board.uci_variant,
        "turn": "white" if board.turn == chess.WHITE else "black",
        "clocks": remaining,
        "running": None if running is None or clock.paused else ("white", "black")[
            side_index(running)
        ],
        "moves": _sans(board, played)[-_MOVES_SHOWN:],
    }


def _sans(board: chess.Board, played: int) -> list[str]:
    """The game's moves after its opening, in SAN."""
    replay = board.copy()
    moves = [replay.pop() for _ in range(played)]
    sans = []
    for move in reversed(moves):
        sans.append(replay.san(move))
        replay.push(move)
    return sans


def _seconds(value: float) -> float | None:
    return round(value, 3) if math.isfinite(value) else None
