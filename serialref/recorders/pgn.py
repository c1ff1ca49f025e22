"""The PGN file: each finished game, appended once it has ended.

PGN is the record people and other programs read; the journal is the one a
restore reads. So a game reaches the PGN file only when it has ended, in one
write that is ``fsync``-ed, and an unfinished game is left to the journal (the
resumed run writes it when it ends). A game the file could not take (a full disk)
waits and is written later, exactly once (PROTOCOL.md 7). Each game's text is
:func:`~serialref.recorders.pgntext.pgn_text`'s. Only a restart that finds a game
written but not marked in the journal reads PGN back, with ``chess.pgn``.
"""

from __future__ import annotations

import contextlib
import io
import logging
import os
import re
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import TYPE_CHECKING

from serialref.errors import RecorderError, recorder_error
from serialref.happenings import GameEnded, GameStarted, MatchEvent, MovePlayed, SupervisorCommand
from serialref.recorders.filemode import private_file
from serialref.recorders.journal import JournalGame
from serialref.recorders.pgntext import pgn_text

if TYPE_CHECKING:
    import chess.pgn

__all__ = ["PgnRecorder"]

LOGGER = logging.getLogger(__name__)

def _separator(tail: bytes) -> str:
    """What must precede the next game so it starts after a blank line."""
    if not tail or tail.endswith(b"\n\n"):
        return ""
    return "\n" if tail.endswith(b"\n") else "\n\n"


_COMPLETE_END = re.compile(rb"(?:^|\s)(?:1-0|0-1|1/2-1/2|\*)\s*\Z")
"""A file whose last game is whole ends with that game's termination marker."""
_GAME_START = re.compile(rb"(?:^|\n)\[Event ")


def _whole_games_length(data: bytes) -> int:
    """How many leading bytes of a PGN file hold whole games; a game cut short is after them.

    A cut game is the file's last, and it begins with its tag section: the last line
    starting with ``[`` that does not follow another tag line.
    """
    if not data.strip() or _COMPLETE_END.search(data[-64:]):
        return len(data)
    line_start = len(data)
    while True:
        line_start = data.rfind(b"\n[", 0, line_start)
        if line_start < 0:
            return 0
        previous = data[data.rfind(b"\n", 0, line_start) + 1 : line_start].strip()
        if not previous.startswith(b"["):
            return line_start + 1


class PgnRecorder:
    """Appends each finished game to a PGN file; a recorder (``happenings.MatchListener``).

    The PGN file is written from what the journal holds, each game exactly once
    (PROTOCOL.md 7). A game that cannot be written (a full disk) is not lost: it
    waits, the error is logged, the match goes on, and it is written with the next
    game or at the next start. A write that fails half-way is cut off again, and a
    game cut short by a crash is cut away at start-up, so no game is ever appended
    after a fragment. Each game written is reported to ``on_appended`` (the journal
    keeps a :class:`~serialref.happenings.PgnAppended` entry), so a restart knows which
    finished games the file lacks.

    ``backlog``: finished games the file may lack, in order (from the journal, on a
    restart). ``unfinished``: the journal's unfinished game when resuming: the
    resumed run does not send ``GameStarted`` again, so the recorder needs it (and
    the moves so far) to write the game when it ends.
    """

    def __init__(
        self,
        path: Path,
        *,
        backlog: Sequence[JournalGame] = (),
        unfinished: JournalGame | None = None,
        on_appended: Callable[[int], None] | None = None,
    ) -> None:
        self._path = path
        self._on_appended = on_appended
        self._started: GameStarted | None = None
        self._moves: list[MovePlayed] = []
        self._waiting: list[tuple[GameStarted, list[MovePlayed], GameEnded]] = [
            (game.started, list(game.moves), game.ended)
            for game in backlog
            if game.ended is not None
        ]
        try:  # fail now, not at the end of the first game, if the file cannot be written
            open(path, "ab", opener=private_file).close()
        except OSError as exc:
            raise recorder_error("open", path, exc) from exc
        self._cut_torn_game()
        if self._waiting and self._is_last_in_file(*self._waiting[0]):
            # Written just before a crash that left no record of it.
            self._appended(self._waiting.pop(0)[0].game)
        if unfinished is not None and unfinished.ended is None:
            self._started = unfinished.started
            self._moves = list(unfinished.moves)
        self._write_waiting()

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
                self._waiting.append((self._started, self._moves, event))
                self._started, self._moves = None, []
                self._write_waiting()
        elif isinstance(event, SupervisorCommand) and event.command == "restart-game":
            self._moves = []  # the game starts again from its initial position

    def sync(self) -> None:
        """Nothing waits: each game is synced as it is written."""

    def close(self) -> None:
        """Leave an unfinished game to the journal: PGN holds finished games only."""
        if self._started is not None:
            LOGGER.info(
                "game %d is unfinished: not written to %s (the journal holds it)",
                self._started.game,
                self._path,
            )
        if self._waiting:
            LOGGER.error(
                "%d finished game(s) could not be written to %s; the journal holds them and"
                " the next run with this journal writes them",
                len(self._waiting),
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

    def _write_waiting(self) -> None:
        """Append every waiting game in order; stop at the first that cannot be written."""
        while self._waiting:
            started, moves, ended = self._waiting[0]
            try:
                text = pgn_text(started, moves, ended) + "\n\n"
            except ValueError as exc:
                raise RecorderError(
                    f"cannot write {self._path}: game {started.game}: {exc}"
                ) from exc
            try:
                self._append(text.encode("utf-8"))
            except OSError as exc:
                LOGGER.error(
                    "%s; game %d stays in the journal and is written later",
                    recorder_error("write", self._path, exc),
                    started.game,
                )
                return
            self._waiting.pop(0)
            self._appended(started.game)

    def _append(self, data: bytes) -> None:
        """One game at the end of the file, synced; a write that fails half-way is undone."""
        fd = private_file(str(self._path), os.O_RDWR | os.O_APPEND | os.O_CREAT)
        try:
            size = os.lseek(fd, 0, os.SEEK_END)
            tail = os.pread(fd, 2, max(0, size - 2)) if size else b""
            data = _separator(tail).encode("ascii") + data
            try:
                view = memoryview(data)
                while view:
                    view = view[os.write(fd, view) :]
                os.fsync(fd)
            except OSError:
                with contextlib.suppress(OSError):  # at worst, cut at the next start
                    os.ftruncate(fd, size)
                raise
        finally:
            os.close(fd)

    def _appended(self, game: int) -> None:
        if self._on_appended is not None:
            self._on_appended(game)

    def _cut_torn_game(self) -> None:
        """Cut away a game a crash left half-written at the end of the file."""
        if not self._path.is_file():
            return  # a device or a pipe: nothing to repair
        try:
            data = self._path.read_bytes()
            keep = _whole_games_length(data)
            if keep < len(data):
                os.truncate(self._path, keep)
        except OSError as exc:
            raise recorder_error("repair", self._path, exc) from exc
        if keep < len(data):
            LOGGER.warning(
                "%s: cut off %d bytes of a game left incomplete by a crash",
                self._path,
                len(data) - keep,
            )

    def _is_last_in_file(
        self, started: GameStarted, moves: Sequence[MovePlayed], ended: GameEnded
    ) -> bool:
        """Whether the file's last game is this one (written, but not marked in the journal)."""
        if not self._path.is_file():
            return False
        try:
            data = self._path.read_bytes()
        except OSError as exc:
            raise recorder_error("read", self._path, exc) from exc
        starts = [match.start() for match in _GAME_START.finditer(data)]
        if not starts:
            return False
        import chess.pgn  # on a restart only: see the module's docstring

        last = chess.pgn.read_game(io.StringIO(data[starts[-1] :].decode("utf-8", "replace")))
        this = chess.pgn.read_game(io.StringIO(pgn_text(started, moves, ended)))
        return last is not None and this is not None and _identity(last) == _identity(this)


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
