r"""The games as FICS/ICC Style 12 lines, for chess GUIs and scripts that read a FICS feed.

Every line is the ``<12>`` record of the FICS ``style12`` help file, field for field: the
board from White's 8th rank down, the side to move, the double-push file, the castling
rights, the reversible-move count, the game number, the names, our relation to the game
(0: observing a game being played), the initial time and increment, both sides' material,
both clocks in seconds, the next move's number, the previous move in verbose notation
(``P/e2-e4``, ``o-o``), the time it took ``(0:06)``, the same move in SAN, the flip flag,
whether the clock ticks and the lag. When a game ends, its last line says the clock
stopped and a FICS ``{Game N (White vs. Black) reason} result`` line follows.

The initial time is in whole minutes and the increment in whole seconds, as FICS sends
them and clients read them (the help file says seconds, which no server does); each is
rounded to the nearest (halves up), and a timed game's initial time is at least 1,
since xboard takes ``0 0`` for an untimed game and turns its clocks off: ``10+0.1`` is
written ``1 0``, ``90+30`` ``2 30``. The clocks are the whole seconds left.

Each message is framed as FICS frames it: it starts and ends with FICS's line end
``\n\r`` and is followed by the prompt ``fics% ``. Clients were written against that
framing. xboard drops every ``\r`` and holds a line's closing ``\n`` until the next
character shows it is no continuation (FICS continues a wrapped line with
``\n\   ``); the prompt is that next character, so xboard reads each line at once, and
a line that a ``\n<12>`` followed directly would be taken for a board cut short and
dropped. ``mekk.fics`` splits its input at ``\n\r`` and strips the prompt.

An event's feed follows every board: the game number field is then the board's number
(its pairing's), so a client tells the boards apart as it tells FICS games apart; a new
client gets every board's position at once.
"""

from __future__ import annotations

import math
import re

import chess

from serialref.happenings import (
    GameEnded,
    GameStarted,
    MatchEvent,
    MatchStarted,
    MovePlayed,
    SupervisorCommand,
)
from serialref.observers.feed import FeedServer
from serialref.records import tag_value
from serialref.rules import STANDARD, rules_of_tags
from serialref.timecontrol import TimeControl
from serialref.wire.address import Address

__all__ = ["PROMPT", "Style12Feed", "Style12Observer", "fics_message", "style12_line"]

_LINE_END = "\n\r"
"""FICS's line end: the ``\n`` of the server's text with a ``\r`` after it."""

PROMPT = "fics% "
"""FICS's prompt, after every message (see the module docstring for why it is sent)."""

_VALUES = {chess.PAWN: 1, chess.KNIGHT: 3, chess.BISHOP: 3, chess.ROOK: 5, chess.QUEEN: 9}
_NOT_A_NAME = re.compile(r"[^A-Za-z0-9_]+")


def style12_line(
    board: chess.Board,
    *,
    game: int,
    names: tuple[str, str],
    control: tuple[int, int],
    clocks: tuple[float, float],
    move: MovePlayed | None,
    ticking: bool,
) -> str:
    """The ``<12>`` line of ``board``, the position after ``move`` (``None``: before any)."""
    rows = [
        "".join(
            piece.symbol() if (piece := board.piece_at(chess.square(file, rank))) else "-"
            for file in range(8)
        )
        for rank in range(7, -1, -1)
    ]
    last = None if move is None else chess.Move.from_uci(move.uci)
    fields = [
        "<12>",
        *rows,
        "W" if board.turn == chess.WHITE else "B",
        str(_double_push_file(board, last)),
        *("1" if right(side) else "0"
          for side in (chess.WHITE, chess.BLACK)
          for right in (board.has_kingside_castling_rights, board.has_queenside_castling_rights)),
        str(board.halfmove_clock),
        str(game),
        _name(names[0]),
        _name(names[1]),
        "0",
        str(control[0]),
        str(control[1]),
        str(_material(board, chess.WHITE)),
        str(_material(board, chess.BLACK)),
        str(_whole_seconds(clocks[0])),
        str(_whole_seconds(clocks[1])),
        str(board.fullmove_number),
        "none" if last is None else _verbose(board, last),
        "(0:00)" if move is None else _time_taken(move.elapsed),
        "none" if move is None else move.san,
        "0",
        "1" if ticking else "0",
        "0",
    ]  # fmt: skip
    return " ".join(fields)


class Style12Feed:
    """Follows the match, or every board of an event, and writes its Style 12 lines.

    A :class:`~.feed.Feed`; each board is a :class:`_Style12Game`.
    """

    wants_request: bool = False
    events: tuple[type, ...] = (MatchStarted, GameStarted, MovePlayed, GameEnded, SupervisorCommand)
    min_interval: float = 0.0

    def __init__(self) -> None:
        self._games: dict[int | None, _Style12Game] = {}

    def update(self, event: MatchEvent, board: int | None = None) -> bytes:
        game = self._games.get(board)
        if game is None:
            game = self._games[board] = _Style12Game(board)
        return game.update(event)

    def leave(self, board: int) -> bytes:
        self._games.pop(board, None)
        return b""

    def greeting(self) -> bytes:
        order = sorted(self._games, key=lambda number: number or 0)
        return b"".join(self._games[board].greeting() for board in order)

    def answer(self, request: bytes) -> tuple[bytes, bool]:
        return self.greeting(), True

    def farewell(self) -> bytes:
        return b""  # nothing to say: the connection closes


class _Style12Game:
    """One board's game as Style 12 lines; ``board`` is its number in an event."""

    def __init__(self, board: int | None) -> None:
        self._number = board
        self._board: chess.Board | None = None
        self._rules = STANDARD  # a resumed game announces no start: its rules stay
        self._game = 0
        self._names = ("White", "Black")
        self._control = (0, 0)
        self._clocks = (0.0, 0.0)
        self._move: MovePlayed | None = None
        self._ticking = False
        self._paused = False

    @property
    def _game_field(self) -> int:
        """Style 12's game number: the board's in an event, else the match's game."""
        return self._game if self._number is None else self._number

    def update(self, event: MatchEvent) -> bytes:
        if isinstance(event, GameStarted):
            self._start(event)
        elif isinstance(event, MovePlayed):
            # The position comes with the move: a restarted referee announces no game.
            self._board = self._rules.board(event.fen)
            self._game, self._ticking = event.game, True
            # Style 12 has 8x8 squares only: a fairy move is not described.
            self._move = None if self._rules.fairy else event
            self._clocks = event.remaining
        elif isinstance(event, MatchStarted):
            self._control = _initial_and_increment(TimeControl.parse(event.time_control))
        elif isinstance(event, GameEnded) and self._board is not None:
            self._ticking = False
            white, black = self._names
            return self.greeting() + fics_message(
                f"{{Game {self._game_field} ({_name(white)} vs. {_name(black)}) "
                f"{_one_line(event.reason)}}} {event.result}"
            )
        elif isinstance(event, SupervisorCommand) and event.command in ("pause", "resume"):
            self._paused = event.command == "pause"
        else:
            return b""
        return self.greeting()

    def greeting(self) -> bytes:
        if self._board is None:
            return b""
        line = style12_line(
            self._board,
            game=self._game_field,
            names=self._names,
            control=self._control,
            clocks=self._clocks,
            move=self._move,
            ticking=self._ticking and not self._paused,
        )
        return fics_message(line)

    def _start(self, event: GameStarted) -> None:
        self._rules = rules_of_tags(event.tags)
        board = self._rules.board(event.fen)
        for san in event.opening_moves:
            board.push_san(san)
        self._board = board
        self._game = event.game
        self._names = (event.tags.get("White", "White"), event.tags.get("Black", "Black"))
        control = TimeControl.parse(event.tags.get("TimeControl", "-"))
        self._control = _initial_and_increment(control)
        first = control.allotment(0) if not control.untimed else math.inf
        self._clocks = (first, first)
        self._move = None
        self._ticking = True


class Style12Observer(FeedServer):
    """Serves :class:`Style12Feed` to TCP clients (``--style12 HOST:PORT``)."""

    def __init__(self, address: Address) -> None:
        super().__init__(Style12Feed(), address, name="style12 feed")


def fics_message(line: str) -> bytes:
    """``line`` as FICS sends a message: between line ends, then the prompt."""
    return f"{_LINE_END}{line}{_LINE_END}{PROMPT}".encode("ascii", "replace")


def _initial_and_increment(control: TimeControl) -> tuple[int, int]:
    """FICS's initial time (whole minutes) and increment (whole seconds), rounded.

    Halves round up; a timed game's initial time is at least a minute (see the module
    docstring): ``0 0`` means an untimed game to xboard.
    """
    if control.untimed or not control.periods:
        return 0, 0
    first = control.periods[0]
    return max(1, _nearest(first.seconds / 60)), _nearest(first.increment)


def _nearest(value: float) -> int:
    """``value`` rounded to the nearest integer, halves up (``round`` rounds them to even)."""
    return math.floor(value + 0.5)


def _double_push_file(board: chess.Board, last: chess.Move | None) -> int:
    """The file of a pawn that just moved two squares, else -1 (whatever en passant allows)."""
    if last is None or board.piece_type_at(last.to_square) != chess.PAWN:
        return -1
    if abs(chess.square_rank(last.to_square) - chess.square_rank(last.from_square)) != 2:
        return -1
    return chess.square_file(last.to_square)


def _verbose(board: chess.Board, move: chess.Move) -> str:
    """FICS's verbose form of the move that made ``board``: ``P/e2-e4``, ``o-o``, ``P/e7-e8=Q``."""
    piece = board.piece_type_at(move.to_square)
    files = chess.square_file(move.to_square) - chess.square_file(move.from_square)
    if piece == chess.KING and abs(files) == 2:
        return "o-o" if files > 0 else "o-o-o"
    letter = "P" if move.promotion else chess.piece_symbol(piece or chess.PAWN).upper()
    text = f"{letter}/{chess.square_name(move.from_square)}-{chess.square_name(move.to_square)}"
    if move.promotion:
        text += "=" + chess.piece_symbol(move.promotion).upper()
    return text


def _time_taken(seconds: float) -> str:
    whole = max(0, int(seconds))
    return f"({whole // 60}:{whole % 60:02d})"


def _material(board: chess.Board, side: chess.Color) -> int:
    return sum(len(board.pieces(kind, side)) * value for kind, value in _VALUES.items())


def _whole_seconds(seconds: float) -> int:
    return math.floor(seconds) if math.isfinite(seconds) else 0


def _name(text: str) -> str:
    """A name as one Style 12 field: letters, digits and underscores only, from the ASCII
    form the players are told (``Muller`` for ``Müller``)."""
    return _NOT_A_NAME.sub("_", tag_value(text)).strip("_")[:20] or "Unknown"


def _one_line(text: str) -> str:
    return "".join(char if char.isprintable() and char.isascii() else "?" for char in text)
