"""What happened in a match, as past-tense dataclasses.

The referee publishes these to its listeners: recorders (journal, PGN), which
must not lose them and whose failure stops the match, and observers (console,
progress, systemd, Style 12, web), which may drop them and are detached when
they fail. Every event is plain data that serialises to JSON with
:func:`dataclasses.asdict`, so the journal can store it and a restore can read
it back.
"""

from __future__ import annotations

import time
from dataclasses import dataclass, field
from typing import Protocol


@dataclass(frozen=True, slots=True)
class MatchStarted:
    """A match began, or (``resumed``) a referee restarted it from its journal.

    ``identity`` holds the settings that make a match what it is (games, time
    control, openings, event, configured names, colours): a restart whose settings
    differ is refused rather than continuing someone else's match.
    """

    games: int
    time_control: str
    ports: tuple[str, str]
    settings: dict[str, object] = field(default_factory=dict)
    resumed: bool = False
    identity: dict[str, object] = field(default_factory=dict)


@dataclass(frozen=True, slots=True)
class PlayerSignedOn:
    """A player registered on a port; ``name`` is its ``tcsi`` program name, if any."""

    port: str
    name: str


@dataclass(frozen=True, slots=True)
class PlayerSignedOff:
    """A player left its port (``sign_off``, ``fault`` or a lost line)."""

    port: str
    reason: str


@dataclass(frozen=True, slots=True)
class RecordSent:
    """One line the referee wrote.

    ``left_at`` is the monotonic time its last byte can have reached the player, or
    (``queued``) the time it was handed to a port that could not take it at once.
    """

    port: str
    text: str
    wall: float
    left_at: float
    queued: bool = False


@dataclass(frozen=True, slots=True)
class LineReceived:
    """One line that arrived; ``text`` is already printable (or escaped when ``malformed``)."""

    port: str
    text: str
    wall: float
    at: float
    malformed: bool = False
    note: str = ""


@dataclass(frozen=True, slots=True)
class GameStarted:
    """A game was set up: colours, opening position and the tags sent with ``inform``.

    ``wall`` is when it began (``time.time()``: when the event was made, or as the
    journal recorded it), for the PGN's ``GameStartTime``.
    """

    game: int
    white_port: str
    black_port: str
    fen: str
    tags: dict[str, str]
    opening_moves: tuple[str, ...] = ()
    wall: float = field(default_factory=time.time, compare=False)


@dataclass(frozen=True, slots=True)
class MovePlayed:
    """A legal move was accepted; clocks are after the move (increment included)."""

    game: int
    ply: int
    san: str
    uci: str
    elapsed: float
    remaining: tuple[float, float]
    consumed: tuple[float, float]
    moves_made: tuple[int, int]
    fen: str
    draw_offer: bool = False
    analysis: dict[str, str] = field(default_factory=dict)


@dataclass(frozen=True, slots=True)
class GameEnded:
    """A game finished; ``termination`` is the PGN Termination tag value, ``wall`` when
    (as :class:`GameStarted`'s, for the PGN's ``GameEndTime``)."""

    game: int
    result: str
    termination: str
    reason: str
    fen: str
    consumed: tuple[float, float]
    wall: float = field(default_factory=time.time, compare=False)


@dataclass(frozen=True, slots=True)
class Infraction:
    """Something a player sent that the referee ignored or punished, for the supervisor."""

    port: str
    reason: str
    text: str


@dataclass(frozen=True, slots=True)
class LinesIgnored:
    """More ignored lines arrived on ``port`` than are worth recording one by one."""

    port: str
    count: int


@dataclass(frozen=True, slots=True)
class RefereeStalled:
    """The referee did not run for ``seconds`` (SIGSTOP, a suspended machine, a slow disk).

    That time is charged to no one (PROTOCOL.md 7).
    """

    seconds: float


@dataclass(frozen=True, slots=True)
class SupervisorCommand:
    """The supervisor gave the referee a command through its control socket.

    Journaled like a move, with the Unix user who gave it (``uid``), so that a
    restart finds the match as the supervisor left it (paused, time added, a game
    started again) and the record says who decided.
    """

    command: str
    args: tuple[str, ...]
    uid: int
    game: int | None = None


@dataclass(frozen=True, slots=True)
class PgnAppended:
    """Game ``game`` is in the PGN file, so a restart does not append it again."""

    game: int


@dataclass(frozen=True, slots=True)
class MatchEnded:
    """The match is over: complete, or stopped in order (``disconnect`` sent to every player).

    A stop in the middle of a game keeps the game's clocks in ``clocks`` (a
    :meth:`serialref.clock.ChessClock.snapshot`), so the restart continues them exactly.
    """

    complete: bool
    score: tuple[float, float]
    reason: str = ""
    clocks: dict[str, object] | None = None


MatchEvent = (
    MatchStarted
    | PlayerSignedOn
    | PlayerSignedOff
    | RecordSent
    | LineReceived
    | GameStarted
    | MovePlayed
    | GameEnded
    | Infraction
    | LinesIgnored
    | RefereeStalled
    | SupervisorCommand
    | PgnAppended
    | MatchEnded
)

EVENT_TYPES: dict[str, type[MatchEvent]] = {
    cls.__name__: cls
    for cls in (
        MatchStarted,
        PlayerSignedOn,
        PlayerSignedOff,
        RecordSent,
        LineReceived,
        GameStarted,
        MovePlayed,
        GameEnded,
        Infraction,
        LinesIgnored,
        RefereeStalled,
        SupervisorCommand,
        PgnAppended,
        MatchEnded,
    )
}


class MatchListener(Protocol):
    """Receives every event on the referee thread; must return quickly.

    An observer that raises is logged and detached by the publisher
    (:mod:`serialref.referee.publisher`), and the match goes on.
    """

    def handle(self, event: MatchEvent) -> None: ...

    def close(self) -> None: ...


class Recorder(MatchListener, Protocol):
    """A listener whose record must not be lost: the journal, the PGN file.

    :meth:`handle` and :meth:`sync` raise :class:`~serialref.errors.RecorderError`
    when the record cannot be kept; the match then stops.
    """

    def sync(self) -> None:
        """Make durable what is still only written; the referee calls it after each step."""
        ...
