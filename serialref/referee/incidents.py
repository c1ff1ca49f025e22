"""What went wrong for each player of a match: the summary engine testers read at its end.

fastchess ends a match with each player's timeouts and crashes; serialref counts what a
referee on a serial line sees, from its events alone, so the same tally comes out of
the match as it is played and out of its journal after a restart:

- **timeouts**: games the player lost on time (as fastchess counts them: a flag fall
  that ends in a draw, the opponent unable to mate, is no loss);
- **rules infractions**: replies the referee ruled against (PROTOCOL.md 4);
- **disconnections**: the player's line lost, or its ``sign_off``;
- **faults**: the player's own ``refreq fault``, a player that cannot go on;
- **engine restarts**: the times ``serialref client`` started the player's engine
  again. The referee does not see an engine; the client tells it, in each ``reply``
  after the first restart, with ``engine_restarts N``: the restarts since that client
  began (an operation of the wire profile, unknown to other referees, who ignore it:
  EPD spec 5.3). The tally adds what each report adds to the last; a smaller number
  is a new client process, whose restarts all count.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from dataclasses import dataclass, fields, replace

from serialref.epd.parser import parse_record
from serialref.errors import RecordError
from serialref.happenings import (
    GameEnded,
    GameStarted,
    Infraction,
    LineReceived,
    MatchEvent,
    PlayerSignedOff,
)
from serialref.records import ENGINE_RESTARTS, engine_restarts
from serialref.result import Result

__all__ = ["MatchIncidents", "PlayerIncidents"]

_TIME_FORFEIT = "time forfeit"
_PLAYER_FAULT = "player fault: "
"""How the referee begins the reason of a player's own ``refreq fault``."""
_LEFT = ("signed off", "line lost")
"""How the referee begins the reason of a player that left: a ``sign_off``, a lost line."""


@dataclass(frozen=True, slots=True)
class PlayerIncidents:
    """One player's count of each kind of incident (the module's list says what each is)."""

    timeouts: int = 0
    infractions: int = 0
    disconnections: int = 0
    faults: int = 0
    engine_restarts: int = 0

    def lines(self, name: str) -> list[str]:
        """fastchess's block for a player: ``Player: NAME``, then each count indented."""
        return [
            f"Player: {name}",
            f"  Timeouts: {self.timeouts}",
            f"  Rules infractions: {self.infractions}",
            f"  Disconnections: {self.disconnections}",
            f"  Faults: {self.faults}",
            f"  Engine restarts: {self.engine_restarts}",
        ]

    def __bool__(self) -> bool:
        return any(getattr(self, field.name) for field in fields(self))


class MatchIncidents:
    """Both players' incidents, counted from a match's events (``earlier``'s too, if given).

    ``earlier``: the tally of the match so far (read from its journal), which a resumed
    match goes on from; it is copied, not changed.
    """

    def __init__(self, earlier: MatchIncidents | None = None) -> None:
        self._counts: dict[str, PlayerIncidents] = {"a": PlayerIncidents(), "b": PlayerIncidents()}
        self._black: dict[int, str] = {}  # game -> the port playing Black
        self._reported: dict[str, int] = {"a": 0, "b": 0}  # the last engine_restarts heard
        if earlier is not None:
            self._counts.update(earlier._counts)
            self._black.update(earlier._black)
            self._reported.update(earlier._reported)

    @classmethod
    def of_events(cls, events: Iterable[MatchEvent]) -> MatchIncidents:
        """The tally of ``events`` (a match's, read from its journal)."""
        incidents = cls()
        for event in events:
            incidents.add(event)
        return incidents

    def of(self, port: str) -> PlayerIncidents:
        """The incidents of the player on ``port``."""
        return self._counts[port]

    def add(self, event: MatchEvent) -> None:
        """Count what ``event`` tells of a player."""
        if isinstance(event, GameStarted):
            self._black[event.game] = event.black_port
        elif isinstance(event, GameEnded):
            self._game_ended(event)
        elif isinstance(event, Infraction):
            kind = "faults" if event.reason.startswith(_PLAYER_FAULT) else "infractions"
            self._count(event.port, kind)
        elif isinstance(event, PlayerSignedOff) and event.reason.startswith(_LEFT):
            self._count(event.port, "disconnections")
        elif (isinstance(event, LineReceived) and ENGINE_RESTARTS in event.text
              and not event.malformed):  # fmt: skip
            self._restarts_reported(event.port, event.text)

    def summary(self, names: Mapping[str, str]) -> list[str]:
        """The lines of every player with anything to report, as fastchess prints them at
        the end of a match (nothing when the match was clean)."""
        return [line for port in ("a", "b") if self._counts[port]
                for line in self._counts[port].lines(names[port])]  # fmt: skip

    def _game_ended(self, ended: GameEnded) -> None:
        black = self._black.get(ended.game)
        if ended.termination != _TIME_FORFEIT or black is None:
            return
        if ended.result == Result.WHITE_WINS:
            self._count(black, "timeouts")
        elif ended.result == Result.BLACK_WINS:
            self._count("b" if black == "a" else "a", "timeouts")

    def _restarts_reported(self, port: str, text: str) -> None:
        try:
            reported = engine_restarts(parse_record(text))
        except RecordError:
            return
        if reported is None:
            return
        last = self._reported[port]
        # Fewer than last time: another client process, counting from nothing.
        self._count(port, "engine_restarts", reported - last if reported >= last else reported)
        self._reported[port] = reported

    def _count(self, port: str, kind: str, more: int = 1) -> None:
        if more:
            counts = self._counts[port]
            self._counts[port] = replace(counts, **{kind: getattr(counts, kind) + more})
