"""Finding an unfinished match in a journal, so a restarted referee can continue it.

A journal may hold several matches one after another; the one that counts is
the last that was started afresh (its ``MatchStarted`` is not ``resumed``). It
is continued unless it ended complete, or stopped by its SPRT's decision. A referee
stopped in order (SIGTERM, SIGINT, SIGHUP: ``MatchEnded`` not complete) resumes too,
but waits for both players with the clocks stopped; after a crash (no ``MatchEnded`` since the last
start) the players the journal shows signed on are restored at once
(PROTOCOL.md 6 and 7).

The match's identity (games, time control, openings, event, names, colours) is
in its ``MatchStarted``: a restart with other settings is refused with the
setting named, so a journal is never continued as a different match.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import TypeGuard

from serialref.errors import ConfigError
from serialref.happenings import (
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
from serialref.recorders.journal import JournalGame, games_from_journal, read_journal
from serialref.referee.incidents import MatchIncidents
from serialref.referee.settings import PORTS, MatchSettings
from serialref.sprt import decision_in
from serialref.timecontrol import TimeControl

__all__ = [
    "MatchInJournal",
    "ResumePoint",
    "find_unfinished_match",
    "holds_finished_match",
    "unfinished_match",
]

# Identity key -> the option a user changes to match it.
_OPTION_OF = {
    "games": "games",
    "time_control": "tc",
    "openings": "openings",
    "event": "event",
    "names": "name_a/name_b",
    "white_in_game_1": "ports",
}


@dataclass(frozen=True, slots=True)
class ResumePoint:
    """Where a match stood when its referee stopped, as its journal tells it.

    ``orderly``: the referee was stopped in order (every player got ``disconnect``),
    so the players are awaited and no clock runs until both are back; ``clocks`` is
    then the unfinished game's clock as it stood. After a crash the players the
    journal shows signed on are restored at once.
    """

    games_done: int
    results: tuple[tuple[str, str], ...]  # (White's port, PGN result) of each finished game
    names: tuple[str | None, str | None]
    signed_on: tuple[bool, bool]
    game: GameStarted | None = None
    moves: tuple[MovePlayed, ...] = ()
    orderly: bool = False
    clocks: dict[str, object] | None = None
    paused: bool = False  # the supervisor's pause is still on
    added: tuple[float, float] = (0.0, 0.0)  # time the supervisor added in the unfinished game
    incidents: MatchIncidents = field(default_factory=MatchIncidents)  # the players' so far


@dataclass(frozen=True, slots=True)
class MatchInJournal:
    """An unfinished match: where to resume, and what the PGN recorder still needs."""

    point: ResumePoint
    unfinished: JournalGame | None
    pgn_backlog: tuple[JournalGame, ...]


def find_unfinished_match(path: Path, settings: MatchSettings) -> MatchInJournal | None:
    """The unfinished match in the journal at ``path``, or None to start a new one.

    A :class:`ConfigError` when the match there is not the one ``settings`` describe.
    """
    if not path.is_file():
        return None
    return unfinished_match(read_journal(path), settings, path)


def holds_finished_match(path: Path) -> bool:
    """Whether the last match started afresh in the journal at ``path`` was played out."""
    if not path.is_file():
        return False
    events = read_journal(path)
    started = any(isinstance(event, MatchStarted) and not event.resumed for event in events)
    return started and _unfinished(events) is None


def unfinished_match(
    events: Sequence[MatchEvent], settings: MatchSettings, path: Path
) -> MatchInJournal | None:
    """:func:`find_unfinished_match` on a journal already read (``path`` names it in errors)."""
    found = _unfinished(events)
    if found is None:
        return None
    started, match_events = found
    _check_identity(path, started, settings)
    match_events = _without_restarted_moves(match_events)
    games = games_from_journal(match_events)
    finished = [game for game in games if game.ended is not None]
    unfinished = next((game for game in games if game.ended is None), None)
    names: dict[str, str | None] = dict.fromkeys(PORTS)
    present = dict.fromkeys(PORTS, False)
    back_since_stop: set[str] = set()
    appended: set[int] = set()
    stop: MatchEnded | None = None
    # The stop's clocks are the game's as it stood; a move, a game ended, begun or
    # started again by the supervisor since, leaves them behind (a game starts on its
    # own clocks).
    clocks_stale = False
    for event in match_events:
        if isinstance(event, PlayerSignedOn):
            names[event.port] = event.name
            present[event.port] = True
            back_since_stop.add(event.port)
        elif isinstance(event, PlayerSignedOff):
            present[event.port] = False
        elif isinstance(event, PgnAppended):
            appended.add(event.game)
        elif isinstance(event, (MovePlayed, GameEnded, GameStarted)) or _restarts(event):
            clocks_stale = True
        elif isinstance(event, MatchEnded):
            # An orderly stop: every player was told disconnect.
            present = dict.fromkeys(PORTS, False)
            back_since_stop.clear()
            stop, clocks_stale = event, False
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
        # Until both players were back after the stop, no clock has run since.
        orderly=stop is not None and back_since_stop != set(PORTS),
        clocks=stop.clocks if stop is not None and not clocks_stale else None,
        paused=_paused(match_events),
        added=_added(match_events, unfinished.started.game) if unfinished else (0.0, 0.0),
        incidents=MatchIncidents.of_events(match_events),
    )
    return MatchInJournal(
        point=point,
        unfinished=unfinished,
        pgn_backlog=tuple(game for game in finished if game.started.game not in appended),
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
    if ends and (ends[-1].complete or decision_in(ends[-1].reason) is not None):
        return None  # complete, or decided by its SPRT
    started = match_events[0]
    assert isinstance(started, MatchStarted)
    return started, match_events


def _restarts(event: MatchEvent) -> TypeGuard[SupervisorCommand]:
    """Whether ``event`` is the supervisor starting a game again from its initial position."""
    return isinstance(event, SupervisorCommand) and event.command == "restart-game"


def _without_restarted_moves(events: list[MatchEvent]) -> list[MatchEvent]:
    """The events without the moves of a game the supervisor started again after them."""
    restarted_at = {
        event.game: index
        for index, event in enumerate(events)
        if _restarts(event)
    }
    return [
        event
        for index, event in enumerate(events)
        if not (isinstance(event, MovePlayed) and index < restarted_at.get(event.game, -1))
    ]


def _paused(events: Sequence[MatchEvent]) -> bool:
    """Whether the supervisor's last pause or resume was a pause."""
    said = [
        event.command
        for event in events
        if isinstance(event, SupervisorCommand) and event.command in ("pause", "resume")
    ]
    return bool(said) and said[-1] == "pause"


def _added(events: Sequence[MatchEvent], game: int) -> tuple[float, float]:
    """(White, Black) time the supervisor added in ``game`` since it last started again."""
    added = [0.0, 0.0]
    for event in events:
        if not isinstance(event, SupervisorCommand) or event.game != game:
            continue
        if event.command == "restart-game":
            added = [0.0, 0.0]
        elif event.command == "add-time":
            side = 0 if event.args[0].lower() in ("white", "w") else 1
            added[side] += float(event.args[1])
    return added[0], added[1]


def _check_identity(path: Path, started: MatchStarted, settings: MatchSettings) -> None:
    """Refuse to continue the journal's match with settings that make another match."""
    recorded: Mapping[str, object] = started.identity or {
        "games": started.games,
        "time_control": started.time_control,
    }
    wanted = settings.identity()
    for key, theirs in recorded.items():
        ours = wanted.get(key)
        if key == "time_control" and isinstance(theirs, str) and isinstance(ours, str):
            same = TimeControl.parse(theirs) == TimeControl.parse(ours)
        else:
            same = theirs == ours
        if not same:
            raise ConfigError(
                _OPTION_OF.get(key, key),
                f"{path} holds an unfinished match with {key.replace('_', ' ')} "
                f"{_shown(theirs)}, not {_shown(ours)}: give the same setting to resume it, "
                "or --new-match to keep that journal aside and start a new match",
            )


def _shown(value: object) -> str:
    if isinstance(value, list):
        return " and ".join(repr(item) for item in value)
    return repr(value)

