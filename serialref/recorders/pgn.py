"""The PGN file: each finished game, appended with ``chess.pgn`` once it has ended.

PGN is the record people and other programs read; the journal is the one a
restore reads. So a game reaches the PGN file only when it has ended, in one
write that is ``fsync``-ed, and an unfinished game is left to the journal (the
resumed run writes it when it ends).

Text from players (names in tags, analysis, reasons) must never break the file.
python-chess writes tag values verbatim, quotes and backslashes included, and
accepts line breaks in the Seven Tag Roster; in comments it drops ``}`` but
keeps line breaks. So this module escapes tag values as the PGN standard says
(``\\\\`` and ``\\"``, section 8.1.1), replaces every unprintable character
with a space, and in comments turns braces and brackets into parentheses, which
also keeps a player from forging ``[%clk ...]`` commands. python-chess reads
an escaped tag back still escaped (it does not unescape); other PGN tools do.
"""

from __future__ import annotations

import logging
import math
import os
from collections.abc import Sequence
from pathlib import Path

import chess
import chess.pgn

from serialref.clock import format_clock, side_index
from serialref.errors import RecorderError
from serialref.events import GameEnded, GameStarted, MatchEvent, MovePlayed
from serialref.recorders.journal import JournalGame, recorder_error

__all__ = ["PgnRecorder", "game_to_pgn"]

LOGGER = logging.getLogger(__name__)

# Tags whose value this module derives from the events, whatever GameStarted.tags says.
_DERIVED_TAGS = frozenset({"Result", "Termination", "PlyCount", "SetUp", "FEN"})

# EPD analysis opcodes shown in move comments, in this order.
_ANALYSIS_KEYS = ("ce", "acn", "acs", "pv")

_COMMENT_DELIMITERS = str.maketrans("{}[]", "()()")


def _printable(text: str) -> str:
    """Replace what could end a line or drive a terminal (controls, line separators)."""
    return "".join(char if char.isprintable() else " " for char in text)


def _tag_value(text: str) -> str:
    """A PGN string token's contents: printable, with backslash and quote escaped."""
    return _printable(text).replace("\\", "\\\\").replace('"', '\\"')


def _comment_text(text: str) -> str:
    """Text that cannot close a ``{...}`` comment or open a ``[%...]`` command in it."""
    return " ".join(_printable(text).translate(_COMMENT_DELIMITERS).split())


def _analysis_text(analysis: dict[str, str]) -> str:
    """``ce 35 acn 120000 acs 1 pv Nf3 Nc6 Bb5`` from a move's EPD analysis opcodes."""
    parts = []
    for key in _ANALYSIS_KEYS:
        value = _comment_text(analysis.get(key, ""))
        if value:
            parts.append(f"{key} {value}")
    return " ".join(parts)


_TENTHS_BELOW = 10.0
"""Seconds under which ``%clk`` and ``%emt`` show tenths: whole seconds would hide them."""


def _pgn_clock(seconds: float) -> str:
    return format_clock(seconds, tenths=seconds < _TENTHS_BELOW)


def _add_played_move(
    node: chess.pgn.GameNode, board: chess.Board, played: MovePlayed
) -> chess.pgn.ChildNode:
    """Push ``played`` on ``board`` and hang it under ``node`` with clock and analysis.

    Clocks use the referee's own clock face (:func:`serialref.clock.format_clock`:
    rounded down, never negative), so the PGN shows what the console and Style 12
    show; an unlimited clock (``inf``) has no ``[%clk]``. Below ten seconds a clock or
    a move time shows tenths (``[%emt 0:00:00.1]``), as a clock face in time trouble
    does: at ``10+0.1`` every move would otherwise read ``0:00:00``.
    """
    remaining = played.remaining[side_index(board.turn)]
    child = node.add_variation(board.push_uci(played.uci))
    parts = [f"[%clk {_pgn_clock(remaining)}]"] if math.isfinite(remaining) else []
    parts.append(f"[%emt {_pgn_clock(played.elapsed)}]")
    analysis = _analysis_text(played.analysis)
    if analysis:
        parts.append(analysis)
    child.comment = " ".join(parts)
    return child


def game_to_pgn(
    started: GameStarted, moves: Sequence[MovePlayed], ended: GameEnded | None
) -> chess.pgn.Game:
    """Build the PGN game for one game of the match (``ended=None``: still in progress).

    Tags: the Seven Tag Roster and ``TimeControl`` from ``started.tags``, the
    result and ``Termination`` from ``ended`` (``*`` and ``unterminated``
    without it), ``PlyCount``, ``SetUp``/``FEN`` for a non-standard start, then
    any other tag of ``started.tags`` whose name PGN allows. Opening moves come
    first without clocks; ``ended.reason`` is a comment after the last move.
    Raises ``ValueError`` (from python-chess) for an invalid FEN or an illegal move.
    """
    board = chess.Board(started.fen)
    game = chess.pgn.Game()
    headers = game.headers
    for name, value in started.tags.items():
        if name in chess.pgn.TAG_ROSTER or name == "TimeControl":
            headers[name] = _tag_value(value)
    headers["Result"] = _tag_value(ended.result) if ended else "*"
    headers["Termination"] = _tag_value(ended.termination) if ended else "unterminated"
    headers["PlyCount"] = str(len(started.opening_moves) + len(moves))
    if board.fen() != chess.STARTING_FEN:
        headers["SetUp"] = "1"
        headers["FEN"] = board.fen()
    for name, value in started.tags.items():
        if name in headers or name in _DERIVED_TAGS:
            continue
        try:
            headers[name] = _tag_value(value)
        except ValueError:
            LOGGER.warning("game %d: %r is not a PGN tag name; tag left out", started.game, name)

    node: chess.pgn.GameNode = game
    for san in started.opening_moves:
        node = node.add_variation(board.push_san(san))
    for played in moves:
        node = _add_played_move(node, board, played)
    reason = _comment_text(ended.reason) if ended else ""
    if reason:
        node.comment = f"{node.comment} {reason}".lstrip()
    return game


def _separator(tail: bytes) -> str:
    """What must precede the next game so it starts after a blank line."""
    if not tail or tail.endswith(b"\n\n"):
        return ""
    return "\n" if tail.endswith(b"\n") else "\n\n"


class PgnRecorder:
    """Appends each finished game to a PGN file; implements ``events.MatchListener``.

    The file is opened for each game, so one failed write (a full disk) costs
    that game only, and the next game can still be written once there is room.
    A game cut short in the file by a crash is separated from the next by a
    blank line, so it damages no other game.

    ``unfinished`` is the journal's unfinished game when resuming a match: the
    resumed run does not send ``GameStarted`` again, so the recorder needs it
    (and the moves so far) from the journal to write the game when it ends.
    ``last_finished`` is the journal's last finished game: a crash between the
    journal's ``GameEnded`` and the PGN append leaves it out of the file, so it
    is appended now unless it is the file's last game already.
    """

    def __init__(
        self,
        path: Path,
        *,
        unfinished: JournalGame | None = None,
        last_finished: JournalGame | None = None,
    ) -> None:
        self._path = path
        self._started: GameStarted | None = None
        self._moves: list[MovePlayed] = []
        try:  # fail now, not at the end of the first game, if the file cannot be written
            path.open("ab").close()
        except OSError as exc:
            raise recorder_error("open", path, exc) from exc
        if last_finished is not None and last_finished.ended is not None:
            self._append_if_missing(last_finished.started, last_finished.moves, last_finished.ended)
        if unfinished is not None and unfinished.ended is None:
            self._started = unfinished.started
            self._moves = list(unfinished.moves)

    def _append_if_missing(
        self, started: GameStarted, moves: Sequence[MovePlayed], ended: GameEnded
    ) -> None:
        if self._last_game_in_file() == _identity(game_to_pgn(started, moves, ended)):
            return
        LOGGER.warning("game %d was missing from %s: appending it", started.game, self._path)
        self._moves = list(moves)
        self._write(started, ended)

    def _last_game_in_file(self) -> tuple[object, ...] | None:
        last = None
        try:
            with self._path.open(encoding="utf-8", errors="replace") as handle:
                while (game := chess.pgn.read_game(handle)) is not None:
                    last = game
        except OSError as exc:
            raise recorder_error("read", self._path, exc) from exc
        return None if last is None else _identity(last)

    def handle(self, event: MatchEvent) -> None:
        """Collect the game in progress; write it when it ends."""
        if isinstance(event, GameStarted):
            self._start(event)
        elif isinstance(event, MovePlayed | GameEnded):
            if self._started is None or event.game != self._started.game:
                LOGGER.warning(
                    "%s for game %d, which is not in progress: not in the PGN file",
                    type(event).__name__,
                    event.game,
                )
            elif isinstance(event, MovePlayed):
                self._moves.append(event)
            else:
                self._write(self._started, event)

    def close(self) -> None:
        """Leave an unfinished game to the journal: PGN holds finished games only."""
        if self._started is not None:
            LOGGER.info(
                "game %d is unfinished: not written to %s (the journal holds it)",
                self._started.game,
                self._path,
            )

    def _start(self, started: GameStarted) -> None:
        if self._started is not None:
            if self._started.game == started.game:
                return  # the same game announced again: keep its moves
            LOGGER.warning(
                "game %d was not finished: not written to %s (the journal holds it)",
                self._started.game,
                self._path,
            )
        self._started = started
        self._moves = []

    def _write(self, started: GameStarted, ended: GameEnded) -> None:
        moves, self._started, self._moves = self._moves, None, []
        try:
            game = game_to_pgn(started, moves, ended)
        except ValueError as exc:
            raise RecorderError(f"cannot write {self._path}: game {started.game}: {exc}") from exc
        text = game.accept(chess.pgn.StringExporter()) + "\n\n"
        try:
            with self._path.open("ab+") as out:
                size = out.seek(0, os.SEEK_END)
                out.seek(max(0, size - 2))
                separator = _separator(out.read(2))
                if separator:
                    LOGGER.warning("%s ends inside a game (crash?): appending after it", self._path)
                out.write((separator + text).encode("utf-8"))
                out.flush()
                os.fsync(out.fileno())
        except OSError as exc:
            raise recorder_error("write", self._path, exc) from exc


def _identity(game: chess.pgn.Game) -> tuple[object, ...]:
    """What tells one game of a match from another: its pairing, round, result and moves."""
    headers = game.headers
    moves = tuple(move.uci() for move in game.mainline_moves())
    return (
        headers.get("Round"),
        headers.get("White"),
        headers.get("Black"),
        headers.get("Result"),
        moves,
    )
