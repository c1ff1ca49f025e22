"""An event as engine testers follow it: cutechess-style lines for every board, then a table.

Every board's referee publishes its match's events to its own :class:`BoardProgress`;
they share one :class:`TournamentProgress`, which numbers the games across the event
(``Started game 7 of 24 (Alpha vs Gamma)``), keeps the lines of concurrent boards whole,
and prints the standings after each finished game (or every ``rating_interval`` games).
A board's progress that fails is detached by its referee's publisher, as any observer is
(:mod:`serialref.referee.publisher`).
"""

from __future__ import annotations

import threading
from collections.abc import Callable
from typing import TextIO

from serialref.elo import Score
from serialref.happenings import GameEnded, GameStarted, MatchEvent
from serialref.observers.output import ObserverOutput, printable
from serialref.tournament.pairings import Pairing
from serialref.tournament.standings import Standings

__all__ = ["BoardProgress", "TournamentProgress"]


class TournamentProgress:
    """What the boards share: the output, its lock, the game count and the standings."""

    def __init__(
        self, out: TextIO | None, *, total_games: int, table: Callable[[], Standings],
        table_text: Callable[[Standings], str], table_every: int = 1,
    ) -> None:  # fmt: skip
        self._out = ObserverOutput(out) if out is not None else None
        self._lock = threading.Lock()
        self.total_games = total_games
        self._table = table
        self._table_text = table_text
        self._table_every = table_every
        self._games_ended = 0

    def write(self, text: str, *, game_ended: bool = False) -> None:
        """Write whole lines without another board's in between; after a game that ended,
        the current standings too, every ``table_every`` games (never for 0)."""
        if self._out is None:
            return
        with self._lock:
            self._games_ended += game_ended
            if game_ended and self._table_every and self._games_ended % self._table_every == 0:
                text += "\n" + self._table_text(self._table())
            self._out.write(text if text.endswith("\n") else text + "\n")


class BoardProgress:
    """One board's lines, its score carried on from ``score`` (the games already played)."""

    def __init__(
        self, shared: TournamentProgress, pairing: Pairing, games: int, *,
        score: Score | None = None,
    ) -> None:  # fmt: skip
        self._shared = shared
        self._pairing = pairing
        self._games = games
        self._score = score or Score()
        self._white: dict[int, str] = {}

    def close(self) -> None:
        """Nothing to release: the shared output belongs to the event."""

    def handle(self, event: MatchEvent) -> None:
        if isinstance(event, GameStarted):
            self._white[event.game] = event.white_port
            self._shared.write(
                f"Started game {self._number(event.game)} of {self._shared.total_games} "
                f"({self._names(event.game)})"
            )
        elif isinstance(event, GameEnded):
            as_first = self._white.get(event.game, "a") == "a"
            self._score = self._score.after(event.result, as_white=as_first)
            first, second = (printable(name) for name in (self._pairing.first,
                                                           self._pairing.second))  # fmt: skip
            score = self._score
            self._shared.write(
                f"Finished game {self._number(event.game)} ({self._names(event.game)}): "
                f"{event.result} {{{printable(event.reason)}}}\n"
                f"Score of {first} vs {second}: {score.wins} - {score.losses} - {score.draws}"
                f"  [{score.ratio:.3f}] {score.games}",
                game_ended=True,
            )

    def _number(self, game: int) -> int:
        return (self._pairing.number - 1) * self._games + game

    def _names(self, game: int) -> str:
        names = (printable(self._pairing.first), printable(self._pairing.second))
        if self._white.get(game, "a") == "a":
            return f"{names[0]} vs {names[1]}"
        return f"{names[1]} vs {names[0]}"
