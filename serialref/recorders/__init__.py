"""Durable records of a match: the JSON Lines journal (for restore) and the PGN file.

Recorders are match listeners: they only consume events, never call back into
the referee, and raise :class:`~serialref.errors.RecorderError` when a record
cannot be written, because a match whose record is lost cannot be resumed.
"""

from serialref.recorders.journal import (
    JournalGame,
    JournalRecorder,
    games_from_journal,
    read_journal,
)
from serialref.recorders.pgn import PgnRecorder, game_to_pgn

__all__ = [
    "JournalGame",
    "JournalRecorder",
    "PgnRecorder",
    "game_to_pgn",
    "games_from_journal",
    "read_journal",
]
