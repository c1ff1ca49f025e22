"""A live web board for the audience: one page, its updates pushed as Server-Sent Events.

``GET /`` is the page (``web.html`` beside this module); ``GET /events`` is an event
stream whose every message is the whole game as JSON: the board as SVG from
:mod:`chess.svg`, both clocks and whose runs, the moves, the players' last ``ce`` and
``pv``, the result. Each message is complete, so a browser that reconnects (EventSource
does so by itself) or misses one is right again with the next; the page ticks the
running clock between messages. Nothing can be sent to the referee: the server reads
one request per connection and answers only these two paths.

An event's page shows every board being played, one section each: its messages are
``{"event": NAME, "boards": [...]}``, each board the same whole game as a match's
message with its ``board`` number; a board leaves the page when its pairing ends.
"""

from __future__ import annotations

import json
import math
from importlib import resources

import chess
import chess.svg

from serialref.events import (
    GameEnded,
    GameStarted,
    MatchEvent,
    MatchStarted,
    MovePlayed,
    PlayerSignedOn,
    SupervisorCommand,
)
from serialref.observers.feed import FeedServer
from serialref.rules import STANDARD, rules_of_tags
from serialref.timecontrol import TimeControl
from serialref.wire.address import Address

__all__ = ["WebFeed", "WebObserver"]

_PAGE = resources.files(__package__).joinpath("web.html").read_bytes()
_SHOWN_ANALYSIS = ("ce", "pv")
_MOVES_KEPT = 600


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
        MatchStarted, GameStarted, MovePlayed, GameEnded, SupervisorCommand, PlayerSignedOn
    )  # fmt: skip
    min_interval: float = 0.1  # at most ten pages a second: what an eye follows, whatever the pace

    def __init__(self, event: str | None = None) -> None:
        self._event = event
        self._games: dict[int | None, _WebGame] = {}

    def update(self, event: MatchEvent, board: int | None = None) -> bytes | None:
        """The state changes; the page gets it whole, coalesced (``None``)."""
        game = self._games.get(board)
        if game is None:
            game = self._games[board] = _WebGame()
        return None if game.update(event) else b""

    def leave(self, board: int) -> bytes | None:
        self._games.pop(board, None)
        return None

    def greeting(self) -> bytes:
        if self._event is None:
            message = (self._games.get(None) or _WebGame()).state()
        else:
            boards = [{"board": number, **game.state()}
                      for number, game in sorted(self._games.items(), key=lambda i: i[0] or 0)]
            message = {"event": self._event, "boards": boards}
        return f"data: {json.dumps(message, allow_nan=False)}\n\n".encode()

    def answer(self, request: bytes) -> tuple[bytes, bool]:
        method, _, rest = request.partition(b" ")
        path = rest.split(b" ", 1)[0].split(b"?", 1)[0]
        if method not in (b"GET", b"HEAD"):
            return _response("405 Method Not Allowed", "text/plain", b"read-only\n"), False
        if path == b"/":
            return _response("200 OK", "text/html; charset=utf-8", _PAGE), False
        if path == b"/events":
            head = _response("200 OK", "text/event-stream", stream=True)
            return head + b"retry: 1000\n\n" + self.greeting(), True
        return _response("404 Not Found", "text/plain", b"not found\n"), False


class _WebGame:
    """One board's game as the page shows it."""

    def __init__(self) -> None:
        self._control = TimeControl.parse("-")
        self._rules = STANDARD  # a resumed game announces no start: its rules stay
        self._board = chess.Board()
        self._state: dict[str, object] = {"game": None, "result": None, "paused": False,
                                          "names": ["White", "Black"]}  # fmt: skip
        self._moves: list[str] = []
        self._analysis: list[dict[str, str]] = [{}, {}]
        self._clocks: list[float | None] = [None, None]
        self._last: chess.Move | None = None
        self._root = chess.STARTING_FEN  # where the game starts: a restart goes back there

    def update(self, event: MatchEvent) -> bool:
        """Follow ``event``; whether the page's state changed."""
        if isinstance(event, MatchStarted):
            self._control = TimeControl.parse(event.time_control)
            return False
        if isinstance(event, GameStarted):
            self._start(event)
        elif isinstance(event, MovePlayed):
            self._played(event)
        elif isinstance(event, GameEnded):
            self._board = self._rules.board(event.fen)
            self._state.update(result=event.result, termination=event.termination,
                               reason=event.reason)  # fmt: skip
        elif isinstance(event, SupervisorCommand) and event.command in ("pause", "resume"):
            self._state["paused"] = event.command == "pause"
        elif isinstance(event, SupervisorCommand) and event.command == "restart-game":
            self._board = self._rules.board(self._root)
            self._moves, self._last, self._analysis = [], None, [{}, {}]
        elif not isinstance(event, PlayerSignedOn):
            return False
        return True

    def state(self) -> dict[str, object]:
        """The whole game now: what one message carries."""
        board = self._board
        running = None
        if self._state.get("result") is None and self._state.get("game") is not None:
            running = "white" if board.turn == chess.WHITE else "black"
        return {
            **self._state,
            "fen": board.fen(),
            "svg": chess.svg.board(board, lastmove=self._last, size=480),
            "clocks": self._clocks,
            "running": None if self._state.get("paused") else running,
            "moves": self._moves,
            "analysis": self._analysis,
        }

    # ------------------------------------------------------------------ state

    def _start(self, event: GameStarted) -> None:
        self._rules = rules_of_tags(event.tags)
        board = self._rules.board(event.fen)
        for san in event.opening_moves:
            board.push_san(san)
        self._root = board.fen()
        self._board = board
        self._moves, self._last, self._analysis = [], None, [{}, {}]
        first = None if self._control.untimed else self._control.allotment(0)
        self._clocks = [first, first]
        self._state.update(game=event.game, result=None, termination=None, reason=None,
                           names=[event.tags.get("White", "White"),
                                  event.tags.get("Black", "Black")],
                           event=event.tags.get("Event", ""))  # fmt: skip

    def _played(self, event: MovePlayed) -> None:
        self._board = self._rules.board(event.fen)
        mover = 0 if self._board.turn == chess.BLACK else 1
        self._last = None if self._rules.fairy else chess.Move.from_uci(event.uci)
        self._moves = [*self._moves, event.san][-_MOVES_KEPT:]
        self._clocks = [None if math.isinf(t) else round(t, 1) for t in event.remaining]
        self._analysis[mover] = {key: event.analysis[key] for key in _SHOWN_ANALYSIS
                                 if key in event.analysis}  # fmt: skip
        if self._state.get("game") != event.game:  # a restarted referee announces no game
            self._state.update(game=event.game, result=None)


class WebObserver(FeedServer):
    """Serves :class:`WebFeed` to browsers (``--web HOST:PORT``); ``event``: an event's boards."""

    def __init__(self, address: Address, *, event: str | None = None) -> None:
        super().__init__(WebFeed(event), address, name="web board")
