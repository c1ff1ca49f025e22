"""The match as engine testers follow it: a line per game, the running score, Elo at the end.

The lines are those of cutechess-cli (and fastchess), so the scripts and habits built
around them work on a serialref match too::

    Started game 1 of 4 (Alpha vs Beta)
    Finished game 1 (Alpha vs Beta): 1-0 {White mates}
    Score of Alpha vs Beta: 1 - 0 - 0  [1.000] 1
    ...
    Elo difference: 191.3 +/- 329.6, LOS: 92.1 %, DrawRatio: 0.0 %
    Elo: 154.14 +/- 82.59, nElo: 191.84 +/- 87.91
    Ptnml(0-2): [1, 1, 11, 6, 11], WL/DD Ratio: 10.00
    LLR: 0.36 (12.2%) (-2.94, 2.94) [0.00, 5.00]
    Player: Beta
      Timeouts: 1
      Rules infractions: 0
      Disconnections: 0
      Faults: 0
      Engine restarts: 2
    Finished match

A game names White first; the score is always player A's (the player on the first
port) against player B's, wins - losses - draws, then A's points per game and the games
counted. A game without a result (``*``: a player's fault) is reported and not counted,
as cutechess-cli does. The Elo lines come at the end, and after every N-th game with a
rating interval: cutechess-cli's Elo line (:mod:`serialref.elo`'s, figure for figure
cutechess-cli's), then, once two games make a pair (colours swapped), fastchess's
lines on the pairs (:mod:`serialref.pentanomial`), then the SPRT's line, if the match
has one, as the tool whose model it is prints it. Before the match's last line, each
player with anything to report gets fastchess's block of what went wrong
(:mod:`serialref.referee.incidents`); a clean match has none, as under fastchess.

Should this observer fail, the referee's publisher logs the failure and detaches it, as
it does any observer's (:mod:`serialref.referee.publisher`); the match goes on.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, TextIO

from serialref.elo import Score, estimate
from serialref.happenings import GameEnded, GameStarted, MatchEnded, MatchEvent, MatchStarted
from serialref.observers.output import ObserverOutput, printable
from serialref.pentanomial import MatchTally, nelo_line, ptnml_line
from serialref.referee.incidents import MatchIncidents
from serialref.sprt import SprtTest, decision_in

if TYPE_CHECKING:
    from serialref.referee.resume import ResumePoint

__all__ = ["ProgressObserver", "format_estimate"]


class ProgressObserver:
    """Writes cutechess-cli style progress lines to a text stream.

    A match resumed from its journal passes where it resumes: the score carries on from
    the games already played, and the game in progress (no ``GameStarted`` is published
    for it again) is announced as resumed. ``sprt`` adds its line to the Elo lines, which
    ``rating_interval`` (games) prints during the match as well as at its end.
    """

    def __init__(
        self,
        stream: TextIO,
        *,
        resumed: ResumePoint | None = None,
        sprt: SprtTest | None = None,
        rating_interval: int = 0,
    ) -> None:
        self._out = ObserverOutput(stream)
        self._tally = MatchTally("a")
        self._sprt = sprt
        self._interval = rating_interval
        self._ended = 0  # games ended, with a result or without
        self._rated_at = -1  # the games ended when the Elo lines were last printed
        self._games = 0
        self._names = {"a": "Player A", "b": "Player B"}
        self._white: dict[int, str] = {}  # game number -> the port playing White
        self._current = resumed.game if resumed is not None else None
        self._incidents = MatchIncidents(resumed.incidents if resumed is not None else None)
        if resumed is not None:
            for white_port, result in resumed.results:
                self._add(white_port, result)
            for port, name in zip("ab", resumed.names, strict=True):
                if name:
                    self._names[port] = printable(name)
        if self._current is not None:
            self._learn(self._current)

    def close(self) -> None:
        self._out.flush()

    def handle(self, event: MatchEvent) -> None:
        self._incidents.add(event)
        if isinstance(event, MatchStarted):
            self._games = event.games
            if event.resumed and self._current is not None:
                game = self._current.game
                self._write(f"Resumed game {game} of {self._games} ({self._pairing(game)})")
        elif isinstance(event, GameStarted):
            self._learn(event)
            self._write(f"Started game {event.game} of {self._games} ({self._pairing(event.game)})")
        elif isinstance(event, GameEnded):
            self._add(self._white.get(event.game, "a"), event.result)
            score = self._tally.score
            self._write(
                f"Finished game {event.game} ({self._pairing(event.game)}): "
                f"{event.result} {{{printable(event.reason)}}}"
            )
            self._write(
                f"Score of {self._names['a']} vs {self._names['b']}: "
                f"{score.wins} - {score.losses} - {score.draws}  "
                f"[{score.ratio:.3f}] {score.games}"
            )
            if self._interval and self._ended % self._interval == 0:
                self._write_ratings()
        elif isinstance(event, MatchEnded):
            if self._tally.score.games and self._rated_at != self._ended:
                self._write_ratings()
            decision = decision_in(event.reason)
            if decision is not None and self._sprt is not None:
                completed = self._sprt.completed_line(decision)
                if completed is not None:
                    self._write(completed)
            for line in self._incidents.summary(self._names):
                self._write(line)
            self._write(
                "Finished match"
                if event.complete or decision is not None
                else f"Match stopped: {printable(event.reason)}"
            )

    def _add(self, white_port: str, result: str) -> None:
        self._tally.add(white_port, "b" if white_port == "a" else "a", result)
        self._ended += 1

    def _write_ratings(self) -> None:
        """The Elo lines: cutechess-cli's, fastchess's on the pairs, the SPRT's."""
        self._rated_at = self._ended
        score, pairs = self._tally.score, self._tally.pairs
        if score.games:
            self._write(format_estimate(score))
        if pairs.pairs:
            self._write(nelo_line(pairs))
            self._write(ptnml_line(pairs))
        if self._sprt is not None:
            self._write(self._sprt.status_line(score, pairs))

    def _learn(self, game: GameStarted) -> None:
        self._white[game.game] = game.white_port
        self._names[game.white_port] = printable(game.tags.get("White", "?"))
        self._names[game.black_port] = printable(game.tags.get("Black", "?"))

    def _pairing(self, game: int) -> str:
        white = self._white.get(game, "a")
        black = "b" if white == "a" else "a"
        return f"{self._names[white]} vs {self._names[black]}"

    def _write(self, line: str) -> None:
        self._out.write(line + "\n")


def format_estimate(score: Score) -> str:
    """cutechess-cli's Elo line for ``score``."""
    found = estimate(score)
    # + 0.0 turns -0.0 (an even score) into 0.0, as cutechess-cli prints it.
    return (
        f"Elo difference: {found.difference + 0.0:.1f} +/- {found.margin:.1f}, "
        f"LOS: {found.los:.1f} %, DrawRatio: {found.draw_ratio * 100:.1f} %"
    )
