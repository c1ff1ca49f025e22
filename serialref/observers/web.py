"""A live web board for the audience: a page that holds the game, kept up by Server-Sent Events.

``GET /`` is the page (``web.html`` beside this module) with the games as they stand
drawn into it, so a browser without JavaScript, a screenshot or a crawler sees the
board, the clocks, the scores and the moves at once. ``GET /events`` is an event stream
whose every message is the whole game as JSON: the position (FEN, variant), both
clocks and whose runs, the moves, each player's last ``ce`` and ``pv`` and the score
as testers write it, the result, and the game's section of the page as HTML
(:mod:`~serialref.observers.webpage`), which the page puts in place of its own. Each
message is complete, so a browser that reconnects (EventSource does so by itself) or
misses one is right again with the next; the page ticks the running clock between
messages. When the match ends the page says so, and when the referee closes the feed
a last message tells the page to stop reconnecting. Nothing can be sent to the
referee: the server reads one request per connection and answers only these two paths.

An event's page shows every board being played, one section each: its messages are
``{"event": NAME, "boards": [...]}``, each board the same whole game as a match's
message with its ``board`` number; a board leaves the page when its pairing ends.

Boards of every variant are drawn (:mod:`~serialref.observers.diagram`), from what the
rules' board holds (:mod:`serialref.rules.squares`): python-chess's boards for standard
chess and its variants, the fairy boards for the others.
"""

from __future__ import annotations

import json
import math
import time
from importlib import resources

import chess

from serialref.happenings import (
    GameEnded,
    GameStarted,
    MatchEnded,
    MatchEvent,
    MatchStarted,
    MovePlayed,
    PlayerSignedOn,
    SupervisorCommand,
)
from serialref.observers.diagram import board_svg, check_square
from serialref.observers.feed import FeedServer
from serialref.observers.webpage import GameView, page, section_html, variant_title
from serialref.rules import STANDARD, rules_of_tags
from serialref.rules.squares import MoveSquares, move_squares, squares_of
from serialref.timecontrol import TimeControl
from serialref.wire.address import Address

__all__ = ["WebFeed", "WebObserver"]

_PAGE = resources.files(__package__).joinpath("web.html").read_text(encoding="utf-8")
_SHOWN_ANALYSIS = ("ce", "pv")
_MOVES_KEPT = 600
_CLOSED = "The referee has closed the feed."
_SIDES = ("white", "black")


def _response(status: str, kind: str, body: bytes = b"", *, stream: bool = False) -> bytes:
    head = [f"HTTP/1.1 {status}", f"Content-Type: {kind}", "Cache-Control: no-cache",
            "X-Content-Type-Options: nosniff"]  # fmt: skip
    head.append("Connection: keep-alive" if stream else f"Content-Length: {len(body)}")
    if not stream:
        head.append("Connection: close")
    return ("\r\n".join(head) + "\r\n\r\n").encode("ascii") + body


class WebFeed:
    """Follows the match, or every board of an event (``event``), for the page.

    A :class:`~.feed.Feed`; each board is a :class:`_WebGame`.
    """

    wants_request: bool = True
    events: tuple[type, ...] = (
        MatchStarted, GameStarted, MovePlayed, GameEnded, SupervisorCommand, PlayerSignedOn,
        MatchEnded,
    )  # fmt: skip
    min_interval: float = 0.1  # at most ten pages a second: what an eye follows, whatever the pace

    def __init__(self, event: str | None = None) -> None:
        self._event = event
        self._games: dict[int | None, _WebGame] = {}

    def update(self, event: MatchEvent, board: int | None = None) -> bytes | None:
        """The state changes; the page gets it whole, coalesced (``None``)."""
        game = self._games.get(board)
        if game is None:
            game = self._games[board] = _WebGame(board)
        return None if game.update(event) else b""

    def leave(self, board: int) -> bytes | None:
        self._games.pop(board, None)
        return None

    def greeting(self) -> bytes:
        return self._data(self.message())

    def farewell(self) -> bytes:
        return self._data({**self.message(), "closed": _CLOSED})

    def message(self) -> dict[str, object]:
        """What the page shows now: the match's game, or every board of the event."""
        if self._event is None:
            return (self._games.get(None) or _WebGame(None)).state()
        boards = [game.state() for _, game in sorted(self._games.items(), key=lambda i: i[0] or 0)]
        title = self._event + ("" if boards else ": waiting for boards")
        return {"event": self._event, "title": title, "boards": boards}

    def answer(self, request: bytes) -> tuple[bytes, bool]:
        method, _, rest = request.partition(b" ")
        path = rest.split(b" ", 1)[0].split(b"?", 1)[0]
        if method not in (b"GET", b"HEAD"):
            return _response("405 Method Not Allowed", "text/plain", b"read-only\n"), False
        if path == b"/":
            body = page(_PAGE, self.message()).encode()
            return _response("200 OK", "text/html; charset=utf-8", body), False
        if path == b"/events":
            head = _response("200 OK", "text/event-stream", stream=True)
            return head + b"retry: 1000\n\n" + self.greeting(), True
        return _response("404 Not Found", "text/plain", b"not found\n"), False

    @staticmethod
    def _data(message: dict[str, object]) -> bytes:
        return f"data: {json.dumps(message, allow_nan=False)}\n\n".encode()


class _WebGame:
    """One board's game as the page shows it; ``number`` is the board's in an event."""

    def __init__(self, number: int | None) -> None:
        self._number = number
        self._control = TimeControl.parse("-")
        self._rules = STANDARD  # a resumed game announces no start: its rules stay
        self._board = chess.Board()
        self._game: int | None = None
        self._names = ("White", "Black")
        self._event_name = ""  # the game's Event tag
        self._result: str | None = None
        self._termination = self._reason = ""
        self._paused = False
        self._over: str | None = None  # the match is over: its score
        self._moves: list[str] = []
        self._moves_dropped = 0  # the first moves of a very long game, no longer kept
        self._first_move = (1, True)  # the game's first move: its number, whether White's
        self._analysis: list[dict[str, str]] = [{}, {}]
        self._clocks: list[float | None] = [None, None]
        self._clocks_at = time.monotonic()  # when the clocks read ``_clocks``
        self._last: MoveSquares | None = None
        self._root = chess.STARTING_FEN  # where the game starts: a restart goes back there
        self._players: dict[str, str] = {}  # port: name, for the match's score
        self._diagram = ("", "")  # (position, SVG): each position is drawn once
        self._squares_checks: tuple[int, int] | None = None  # three-check's, with the SVG

    def update(self, event: MatchEvent) -> bool:
        """Follow ``event``; whether the page's state changed."""
        if isinstance(event, MatchStarted):
            self._control = TimeControl.parse(event.time_control)
            return False
        if isinstance(event, PlayerSignedOn):
            self._players[event.port] = event.name
            return False
        self._stop_clock()  # whatever comes, the clocks go on from what they read now
        if isinstance(event, GameStarted):
            self._start(event)
        elif isinstance(event, MovePlayed):
            self._played(event)
        elif isinstance(event, GameEnded):
            self._board = self._rules.board(event.fen)
            self._result, self._termination = event.result, event.termination
            self._reason = event.reason
        elif isinstance(event, SupervisorCommand) and event.command in ("pause", "resume"):
            self._paused = event.command == "pause"
        elif isinstance(event, SupervisorCommand) and event.command == "restart-game":
            self._board = self._rules.board(self._root)
            self._moves, self._moves_dropped, self._last = [], 0, None
            self._analysis = [{}, {}]
        elif isinstance(event, MatchEnded):
            self._over = self._match_over(event)
        else:
            return False
        return True

    def state(self) -> dict[str, object]:
        """The whole game now: what one message carries, its section of the page included."""
        running = self._running()
        white, black = self._clocks_now()
        view = GameView(
            board=self._number,
            game=self._game,
            event=self._event_name,
            variant=variant_title(self._rules),
            names=self._names,
            clocks=(white, black),
            running=running,
            analysis=(self._analysis[0], self._analysis[1]),
            moves=self._moves,
            first_move=self._move_number(self._moves_dropped),
            trimmed=self._moves_dropped > 0,
            fen=self._board.fen(),
            svg=self._svg(),
            checks=self._squares_checks,
            result=self._result,
            reason=self._reason or self._termination,
            paused=self._paused,
            over=self._over,
        )
        return {
            "board": self._number,
            "game": self._game,
            "event": self._event_name,
            "names": list(self._names),
            "result": self._result,
            "termination": self._termination,
            "reason": self._reason,
            "paused": self._paused,
            "over": self._over,
            "title": view.title,
            "variant": view.variant,
            "fen": view.fen,
            "clocks": self._clocks,
            "running": running,
            "moves": self._moves,
            "analysis": self._analysis,
            "scores": list(view.scores),
            "html": section_html(view),
        }

    # ------------------------------------------------------------------ state

    def _start(self, event: GameStarted) -> None:
        self._rules = rules_of_tags(event.tags)
        board = self._rules.board(event.fen)
        for san in event.opening_moves:
            board.push_san(san)
        self._root = board.fen()
        self._first_move = (board.fullmove_number, board.turn == chess.WHITE)
        self._board = board
        self._moves, self._moves_dropped, self._last = [], 0, None
        self._analysis = [{}, {}]
        first = None if self._control.untimed else self._control.allotment(0)
        self._clocks = [first, first]
        self._game, self._result, self._termination, self._reason = event.game, None, "", ""
        self._names = (event.tags.get("White", "White"), event.tags.get("Black", "Black"))
        self._event_name = event.tags.get("Event", "")

    def _played(self, event: MovePlayed) -> None:
        self._board = self._rules.board(event.fen)
        mover = 0 if self._board.turn == chess.BLACK else 1
        self._last = move_squares(event.uci)
        self._moves.append(event.san)
        if len(self._moves) > _MOVES_KEPT:
            del self._moves[0]
            self._moves_dropped += 1
        self._clocks = [None if math.isinf(t) else round(t, 1) for t in event.remaining]
        self._analysis[mover] = {key: event.analysis[key] for key in _SHOWN_ANALYSIS
                                 if key in event.analysis}  # fmt: skip
        if self._game != event.game:  # a restarted referee announces no game
            self._game, self._result = event.game, None

    def _move_number(self, ply: int) -> tuple[int, bool]:
        """The number of the game's move ``ply`` (from 0) and whether White plays it."""
        number, white = self._first_move
        ply += 0 if white else 1
        return number + ply // 2, ply % 2 == 0

    def _running(self) -> str | None:
        """Whose clock runs: the side to move's in a game being played, not paused."""
        if self._game is None or self._result is not None or self._paused or self._over:
            return None
        return "white" if self._board.turn == chess.WHITE else "black"

    def _clocks_now(self) -> list[float | None]:
        """The clocks as they read this moment: the running one less the time since."""
        clocks = list(self._clocks)
        running = self._running()
        side = None if running is None else _SIDES.index(running)
        left = None if side is None else clocks[side]
        if side is not None and left is not None:
            clocks[side] = left - (time.monotonic() - self._clocks_at)
        return clocks

    def _stop_clock(self) -> None:
        """The clocks keep what they read now, and run on (if they do) from now."""
        self._clocks = self._clocks_now()
        self._clocks_at = time.monotonic()

    def _svg(self) -> str:
        """The board's picture, drawn once for each position."""
        key = f"{self._board.fen()} {self._last}"
        if self._diagram[0] != key:
            squares = squares_of(self._board)
            svg = board_svg(squares, self._rules.drawing, self._last,
                            check_square(self._board, squares))  # fmt: skip
            self._diagram, self._squares_checks = (key, svg), squares.checks
        return self._diagram[1]

    def _match_over(self, event: MatchEnded) -> str:
        """``Match over: Alpha 1.5, Beta 0.5``, or stopped, with the reason."""
        names = [self._players.get(port, f"port {port}") for port in ("a", "b")]
        score = ", ".join(f"{name} {points:g}"
                          for name, points in zip(names, event.score, strict=True))  # fmt: skip
        if event.complete:
            return f"Match over: {score}"
        return f"Match stopped ({event.reason}): {score}"


class WebObserver(FeedServer):
    """Serves :class:`WebFeed` to browsers (``--web HOST:PORT``); ``event``: an event's boards."""

    def __init__(self, address: Address, *, event: str | None = None) -> None:
        super().__init__(WebFeed(event), address, name="web board")
