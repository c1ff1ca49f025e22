"""Finding an unfinished match in a journal, so a restarted referee can continue it.

A journal may hold several matches one after another; the one that counts is
the last that was started afresh (its ``MatchStarted`` is not ``resumed``). It
is continued unless it ended complete: a referee stopped by SIGTERM (a reboot,
``systemctl restart``) resumes too.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path

from serialref.errors import ConfigError
from serialref.events import (
    MatchEnded,
    MatchEvent,
    MatchStarted,
    PlayerSignedOff,
    PlayerSignedOn,
)
from serialref.match import PORTS, ResumePoint
from serialref.recorders.journal import JournalGame, games_from_journal, read_journal

__all__ = ["MatchInJournal", "find_unfinished_match"]


@dataclass(frozen=True, slots=True)
class MatchInJournal:
    """An unfinished match: where to resume, and its games the PGN recorder needs."""

    point: ResumePoint
    unfinished: JournalGame | None
    last_finished: JournalGame | None


def find_unfinished_match(path: Path, time_control: str) -> MatchInJournal | None:
    """The unfinished match in the journal at ``path``, or None to start a new one."""
    if not path.is_file():
        return None
    events = read_journal(path)
    found = _unfinished(events)
    if found is None:
        return None
    started, match_events = found
    if started.time_control != time_control:
        raise ConfigError(
            "tc",
            f"the unfinished match in {path} plays {started.time_control!r}, not "
            f"{time_control!r}: give --tc {started.time_control} to resume it, or another journal",
        )
    games = games_from_journal(match_events)
    finished = [game for game in games if game.ended is not None]
    unfinished = next((game for game in games if game.ended is None), None)
    names: dict[str, str | None] = dict.fromkeys(PORTS)
    present = dict.fromkeys(PORTS, False)
    for event in match_events:
        if isinstance(event, PlayerSignedOn):
            names[event.port] = event.name
            present[event.port] = True
        elif isinstance(event, PlayerSignedOff):
            present[event.port] = False
    point = ResumePoint(
        games_done=len(finished),
        results=tuple(
            (game.started.white_port, game.ended.result)
            for game in finished
            if game.ended is not None
        ),
        names=(names["a"], names["b"]),
        signed_on=(present["a"], present["b"]),
        game=unfinished.started if unfinished else None,
        moves=tuple(unfinished.moves) if unfinished else (),
    )
    return MatchInJournal(
        point=point,
        unfinished=unfinished,
        last_finished=finished[-1] if finished else None,
    )


def _unfinished(events: Sequence[MatchEvent]) -> tuple[MatchStarted, list[MatchEvent]] | None:
    fresh = [
        index
        for index, event in enumerate(events)
        if isinstance(event, MatchStarted) and not event.resumed
    ]
    if not fresh:
        return None
    match_events = list(events[fresh[-1] :])
    ends = [event for event in match_events if isinstance(event, MatchEnded)]
    if ends and ends[-1].complete:
        return None
    started = match_events[0]
    assert isinstance(started, MatchStarted)
    return started, match_events
