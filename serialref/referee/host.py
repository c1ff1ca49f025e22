"""The referee's boundaries: what the match needs from its ports, and a game from its match.

Both are protocols, so the match and its games are driven in tests by a fake wire and a
fake clock, and the match stands between a game and everything outside it.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Protocol

from serialref.epd.record import EpdRecord
from serialref.happenings import MatchEvent
from serialref.referee.adjudication import Verdict
from serialref.referee.session import PortSession
from serialref.referee.settings import MatchSettings

__all__ = ["GameHost", "Wire"]


class Wire(Protocol):
    """How the referee reaches the players."""

    def send(self, port: str, text: str, *, notify: bool = False) -> float | None:
        """Queue one line; when its last byte can have reached the player, or None.

        None: the port could not take it at once; with ``notify`` the referee hears
        of its departure (:meth:`MatchReferee.on_record_left`). Raises LineLostError
        when the line is down.
        """
        ...

    def transmission_time(self, port: str, nbytes: int) -> float:
        """Time ``nbytes`` take on that port's line (0 where no line delay applies)."""
        ...

    def waiting(self, port: str) -> bool:
        """Whether records wait for the port to take them: its player is not reading."""
        ...


class GameHost(Protocol):
    """What a game needs from its match: the seats, the wire, the record and the time."""

    @property
    def settings(self) -> MatchSettings: ...

    @property
    def sessions(self) -> Mapping[str, PortSession]: ...

    def send(self, port: str, record: EpdRecord | str, *, notify: bool = False) -> float | None:
        """Send a record (or its normalised line); when it can have reached the player,
        None while it waits."""
        ...

    def transmission_time(self, port: str, nbytes: int) -> float:
        """The line time of ``nbytes`` on that port, where ``line_delay`` applies."""
        ...

    def publish(self, event: MatchEvent) -> None: ...

    def sync_records(self) -> None:
        """Make what was recorded durable."""
        ...

    def received(self, port: str, text: str, at: float) -> None:
        """Record a line the game acts on, before what it causes."""
        ...

    def ignored(self, port: str, text: str, at: float, reason: str) -> None:
        """Record (within limits) a line the game does not act on."""
        ...

    def now(self) -> float: ...

    def wall_time(self) -> float: ...

    def game_over(self, verdict: Verdict, white_port: str) -> None:
        """The game has a result; inform and conclude went out."""
        ...
