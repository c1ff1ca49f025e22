"""The transcript journal: every match event as one JSON object per line.

The journal is the source of truth for resuming a match after a crash, so it is
written before anything else can be lost: one line per event, flushed at once
(a process that dies loses nothing the kernel has), and synced to disk for every
event a restore depends on (a player signing on or off, a game starting or ending,
the match starting or ending, a game reaching the PGN file) before the referee goes
on. A move is the one exception: the referee writes it (and the reply that played it)
before the ``respond`` that relays it leaves, so that a crash of its process cannot
take back a move the opponent was told of, and syncs it with
:meth:`JournalRecorder.sync` right after that ``respond``, so the disk's latency is
not in the player's turnaround (write-ahead, PROTOCOL.md 7). A power cut between the
``respond`` and the sync can lose that one move, which a restart then asks for again;
the opponent, restored to the position before it, finds its answer stale.
The chatter of the line (records sent and received, infractions) is flushed but
not synced: losing its last lines in a power cut costs no game state.

An entry is complete when its newline is on disk. A crash can leave the last
line cut short; :func:`read_journal` drops such a tail with a warning, and a
:class:`JournalRecorder` opening the file again cuts it off, so that the
resumed run's entries never run into the fragment.

Each line is ``{"event": "<ClassName>", "wall": <time.time()>, **fields}``.
Events that carry their own ``wall`` keep it. Floats that JSON cannot spell
(an unlimited clock's ``inf``) are written as Python's ``json`` module writes
them (``Infinity``), which it also reads back. Events are plain data by
contract (``happenings.py``): a value JSON cannot hold is a bug in the sender and
raises ``TypeError``, not :class:`RecorderError`.
"""

from __future__ import annotations

import dataclasses
import functools
import itertools
import json
import logging
import os
import time
import typing
from collections.abc import Iterable
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from serialref.errors import RecorderError, escape, recorder_error
from serialref.happenings import (
    EVENT_TYPES,
    GameEnded,
    GameStarted,
    MatchEnded,
    MatchEvent,
    MatchStarted,
    MovePlayed,
    PgnAppended,
    PlayerSignedOff,
    PlayerSignedOn,
    SupervisorCommand,
)
from serialref.recorders.filemode import private_file

__all__ = [
    "JournalGame",
    "JournalRecorder",
    "cut_torn_tail",
    "decode_entry",
    "encode_entry",
    "games_from_journal",
    "read_journal",
    "set_aside",
]

LOGGER = logging.getLogger(__name__)

# Events a restore depends on: each is on disk before the referee goes on.
_SYNCED_EVENTS = (
    MatchStarted,
    PlayerSignedOn,
    PlayerSignedOff,
    GameStarted,
    GameEnded,
    MatchEnded,
    PgnAppended,
    SupervisorCommand,
)
# Events synced once the record that relays them has left (see the module docstring).
_SYNCED_AFTER_THE_RELAY = (MovePlayed,)



def cut_torn_tail(path: Path) -> None:
    """Remove an entry cut short by a crash, so new entries start on a line of their own.

    Only the rare torn case reads the whole file; a clean journal costs one byte.
    """
    with path.open("rb") as reader:
        size = reader.seek(0, os.SEEK_END)
        if size == 0:
            return
        reader.seek(size - 1)
        if reader.read(1) == b"\n":
            return
        reader.seek(0)
        data = reader.read()
    keep = data.rfind(b"\n") + 1
    os.truncate(path, keep)
    LOGGER.warning(
        "%s: cut off %d bytes of an entry left incomplete by a crash: %s",
        path,
        size - keep,
        escape(data[keep:][:80]),
    )


def set_aside(path: Path, label: str = "") -> Path:
    """Rename a journal to the first free ``NAME.N`` (``NAME.LABEL-N``); where it went.

    An old journal may be someone's only copy of a match, so it is never overwritten.
    """
    prefix = f"{path.name}.{label}-" if label else f"{path.name}."
    aside = next(
        candidate
        for number in itertools.count(1)
        if not (candidate := path.with_name(f"{prefix}{number}")).exists()
    )
    path.rename(aside)
    return aside


class JournalRecorder:
    """Appends every event to a JSON Lines journal; implements ``happenings.MatchListener``.

    After a failed write the recorder stops: the file may end in a partial line
    that the next entry would corrupt, and a journal with a gap is worse than
    one that ends early. Every later :meth:`handle` raises the first cause again.
    """

    def __init__(self, path: Path) -> None:
        self._path = path
        self._failure: RecorderError | None = None
        self._unsynced = False
        try:
            if path.is_file():
                cut_torn_tail(path)
            self._file = open(  # noqa: SIM115 - open while the match runs, closed by close()
                path, "a", buffering=1, encoding="ascii", newline="\n", opener=private_file
            )
        except OSError as exc:
            raise recorder_error("open", path, exc) from exc

    def handle(self, event: MatchEvent) -> None:
        """Write one line for ``event``; raise :class:`RecorderError` if it cannot be stored."""
        if self._failure is not None:
            raise RecorderError(f"{self._failure} (journal stopped at that error)")
        line = encode_entry(event) + "\n"
        try:
            self._file.write(line)
            self._file.flush()
            if isinstance(event, _SYNCED_EVENTS):
                _sync_data(self._file.fileno())
                self._unsynced = False
            elif isinstance(event, _SYNCED_AFTER_THE_RELAY):
                self._unsynced = True
        except OSError as exc:
            self._failure = recorder_error("write", self._path, exc)
            raise self._failure from exc

    def sync(self) -> None:
        """Put on disk what was written since the last sync (a move); nothing to do when
        it is there."""
        if not self._unsynced or self._failure is not None:
            return
        try:
            _sync_data(self._file.fileno())
        except OSError as exc:
            self._failure = recorder_error("sync", self._path, exc)
            raise self._failure from exc
        self._unsynced = False

    def close(self) -> None:
        """Close the file; after a write failure the error was reported already, so only log."""
        try:
            self.sync()
            self._file.close()
        except OSError as exc:
            if self._failure is None:
                raise recorder_error("close", self._path, exc) from exc
            LOGGER.debug("closing %s after a failed write: %s", self._path, exc)




def _sync_data(fd: int) -> None:
    """Put what was appended to ``fd`` on disk: its data and the file's new length.

    ``fdatasync`` does both and skips the file's times, which a journal never reads
    back: on Linux about a fifth less CPU and a third less wall time per move than
    ``fsync``, which systems without it use instead.
    """
    getattr(os, "fdatasync", os.fsync)(fd)


def encode_entry(event: MatchEvent) -> str:
    """The journal line of ``event``, without its newline.

    The event's name, the wall time of writing (an event's own ``wall`` wins),
    then its fields. A shallow copy: the fields are JSON values already, and
    ``dataclasses.asdict`` (a deep copy) would cost more than the rest of a ply.
    """
    entry: dict[str, object] = {"event": type(event).__name__, "wall": time.time()}
    for name in _field_names(type(event).__name__):
        entry[name] = getattr(event, name)
    return json.dumps(entry)


@functools.cache
def _field_names(name: str) -> tuple[str, ...]:
    return tuple(field.name for field in dataclasses.fields(EVENT_TYPES[name]))


@functools.cache
def _tuple_fields(name: str) -> frozenset[str]:
    """Fields of event ``name`` that JSON turned into lists and the dataclass declares tuples."""
    hints = typing.get_type_hints(EVENT_TYPES[name])
    return frozenset(name for name, hint in hints.items() if typing.get_origin(hint) is tuple)


def decode_entry(raw: bytes) -> MatchEvent:
    """Rebuild one event from its line; ``ValueError`` says what is wrong with it."""
    entry = json.loads(raw.decode("ascii"))
    if not isinstance(entry, dict):
        raise ValueError(f"expected a JSON object, got {type(entry).__name__}")
    name = entry.pop("event", None)
    if name not in EVENT_TYPES:
        raise ValueError(f"unknown event {name!r}")
    kind = EVENT_TYPES[name]
    field_names = {field.name for field in dataclasses.fields(kind)}
    if "wall" not in field_names:
        entry.pop("wall", None)
    unknown = entry.keys() - field_names
    if unknown:
        raise ValueError(f"unknown fields {sorted(unknown)} for {name}")
    tuples = _tuple_fields(name)
    values: dict[str, Any] = {
        key: tuple(value) if key in tuples else value for key, value in entry.items()
    }
    try:
        return kind(**values)
    except TypeError as exc:
        raise ValueError(str(exc)) from exc


def read_journal(path: Path) -> list[MatchEvent]:
    """Read back every complete entry as the event dataclasses that were written.

    A last line without its newline was cut by a crash: it is dropped with a
    warning. Any other line that is not a valid entry means the journal cannot
    be trusted, and is a :class:`RecorderError` naming the line number.
    """
    try:
        data = path.read_bytes()
    except OSError as exc:
        raise recorder_error("read", path, exc) from exc
    lines = data.split(b"\n")
    torn = lines.pop()
    if torn:
        LOGGER.warning(
            "%s: dropped line %d, cut by a crash: %s", path, len(lines) + 1, escape(torn[:80])
        )
    events = []
    for number, raw in enumerate(lines, start=1):
        try:
            events.append(decode_entry(raw))
        except (UnicodeDecodeError, ValueError, RecursionError) as exc:
            raise RecorderError(
                f"{path}, line {number}: not a journal entry ({exc}): {escape(raw[:80])}"
            ) from exc
    return events


@dataclass(frozen=True)
class JournalGame:
    """One game as the journal tells it; ``ended`` is ``None`` while it is unfinished."""

    started: GameStarted
    moves: list[MovePlayed]
    ended: GameEnded | None


def games_from_journal(events: Iterable[MatchEvent]) -> list[JournalGame]:
    """Group a journal's events into games, in the order the games started.

    A resumed run appends to the same journal: it announces itself with a new
    ``MatchStarted`` and does not start again the game it resumes, so its
    moves simply continue the unfinished game with the same number. Should a
    ``GameStarted`` arrive for a game that is still unfinished, it continues
    that game too (the first ``GameStarted`` is kept). A move or an end for a
    game that is not in progress means the journal is inconsistent:
    :class:`RecorderError`.
    """
    games: list[JournalGame] = []
    in_progress: dict[int, int] = {}  # game number -> index in ``games``
    for event in events:
        if isinstance(event, GameStarted):
            if event.game not in in_progress:
                in_progress[event.game] = len(games)
                games.append(JournalGame(started=event, moves=[], ended=None))
        elif isinstance(event, MovePlayed | GameEnded):
            index = in_progress.get(event.game)
            if index is None:
                raise RecorderError(
                    f"journal has {type(event).__name__} for game {event.game}, "
                    "which is not in progress"
                )
            if isinstance(event, MovePlayed):
                games[index].moves.append(event)
            else:
                games[index] = dataclasses.replace(games[index], ended=event)
                del in_progress[event.game]
    return games
