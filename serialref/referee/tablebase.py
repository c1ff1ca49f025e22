"""Syzygy endgame tables, probed as cutechess-cli probes them to adjudicate a game.

cutechess-cli (``-tb PATHS``) asks Fathom's ``tb_probe_root`` for the position after
each move: that reads the distance to zeroing (DTZ) and turns it into a result with
the game's own 50-move counter, so a win whose next pawn move or capture lies more
plies away than the counter has left (``dtz + halfmove clock > 100``) is a draw,
and so is such a loss: the fifty-move rule saves it. Tables are read through
python-chess's :mod:`chess.syzygy`, whose ``probe_dtz`` gives the same rounded
DTZ50'' values as Fathom. As in cutechess-cli:

- the DTZ tables (``.rtbz``) are needed beside the WDL ones (``.rtbw``): a position
  whose DTZ table is missing is not adjudicated;
- a position with castling rights, or with more pieces than ``pieces`` allows, is
  not probed; nor is any variant's (Chess960's included);
- the paths are separated by ``:`` (``;`` is taken too, as cutechess-cli's help
  writes it).

python-chess opens a table's file when it is first probed and keeps at most 128
open; :meth:`SyzygyTables.close` closes them all.
"""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path

import chess
import chess.syzygy

from serialref.errors import ConfigError
from serialref.result import Result

__all__ = ["SyzygyTables", "table_directories"]

_FIFTY_MOVES = 100
"""Plies without a capture or a pawn move after which the fifty-move rule applies."""

_SUFFIXES = (".rtbw", ".rtbz")


def table_directories(key: str, text: str) -> tuple[Path, ...]:
    """The directories of ``--tb PATHS``, each of which must hold Syzygy tables.

    A :class:`ConfigError` naming ``key`` for an empty list, a path that is no
    directory, or a directory without a single ``.rtbw`` or ``.rtbz`` file
    (cutechess-cli refuses tables it cannot load, too).
    """
    written = [part for part in text.replace(";", ":").split(":") if part]
    if not written:
        raise ConfigError(key, "expected one or more directories of Syzygy tables")
    directories = []
    for part in written:
        directory = Path(part).expanduser()
        if not directory.is_dir():
            raise ConfigError(key, f"{part!r} is not a directory")
        if not any(entry.suffix in _SUFFIXES for entry in directory.iterdir()):
            raise ConfigError(key, f"{part!r} holds no Syzygy tables (.rtbw, .rtbz)")
        directories.append(directory)
    return tuple(directories)


def _men(table: Path) -> int:
    """The pieces of a table's positions, kings included: 4 for ``KRvKR.rtbw``."""
    return len(table.stem.replace("v", ""))


class SyzygyTables:
    """The Syzygy tables in ``directories``, probed for positions of up to ``pieces`` men
    (no more than the largest table has).

    Nothing is opened until the first probe; :meth:`close` closes what was.
    """

    def __init__(self, directories: Sequence[Path], *, pieces: int | None = None) -> None:
        self.directories = tuple(directories)
        self._tables = chess.syzygy.Tablebase()
        for directory in self.directories:
            self._tables.add_directory(str(directory))
        # As Fathom does, no position with more pieces than the largest table is probed:
        # a miss costs python-chess some 40 us a move in the middlegame.
        largest = max((_men(entry) for directory in self.directories
                       for entry in directory.iterdir() if entry.suffix in _SUFFIXES),
                      default=0)  # fmt: skip
        self.pieces = largest if pieces is None else min(pieces, largest)

    def result(self, board: chess.Board) -> Result | None:
        """The result the tables give the position on ``board`` with its 50-move counter,
        or None when they cannot say (no table, castling rights, too many pieces)."""
        if type(board) is not chess.Board or board.chess960 or board.castling_rights:
            return None
        if chess.popcount(board.occupied) > self.pieces:
            return None
        try:
            dtz = self._tables.probe_dtz(board)
        except KeyError:  # MissingTableError included: a table that is not there
            return None
        if dtz == 0 or abs(dtz) + board.halfmove_clock > _FIFTY_MOVES:
            return Result.DRAW
        winner = board.turn if dtz > 0 else not board.turn
        return Result.WHITE_WINS if winner == chess.WHITE else Result.BLACK_WINS

    def close(self) -> None:
        """Close every table file a probe opened."""
        self._tables.close()
