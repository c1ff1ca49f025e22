"""A match score and what it says about the two players' strength: Elo difference and LOS.

Engine testers read these figures from cutechess-cli and compare them across tools, so
they are computed exactly as cutechess-cli 1.5 computes them (``projects/lib/src/elo.cpp``
there), down to its approximation of the inverse error function: with the exact inverse
the error margin differs from cutechess-cli's in the first decimal. The model is the
trinomial one (each game a win, loss or draw, independently): the score ratio ``mu``,
its standard error, the logistic Elo curve ``-400 log10(1/mu - 1)`` at ``mu`` and at the
ends of the 95 % interval, and the likelihood of superiority from wins and losses alone.

Degenerate scores give what cutechess-cli prints: a clean sweep is ``inf`` (``-inf``
for a whitewash) with an undefined margin (``nan``), and a match without a decisive game
has an undefined LOS.
"""

from __future__ import annotations

import math
from dataclasses import dataclass

from serialref.result import Result

__all__ = ["EloEstimate", "Score", "estimate"]

_CONFIDENCE = 0.95
# The constants of cutechess-cli's erfInv (Winitzki's approximation), kept as it has them.
_PI = 3.1415926535897
_WINITZKI_A = 8.0 * (_PI - 3.0) / (3.0 * _PI * (4.0 - _PI))

@dataclass(frozen=True, slots=True)
class Score:
    """Wins, losses and draws of one player against the other; unfinished games do not count."""

    wins: int = 0
    losses: int = 0
    draws: int = 0

    @property
    def games(self) -> int:
        """Games with a result."""
        return self.wins + self.losses + self.draws

    @property
    def points(self) -> float:
        return self.wins + self.draws / 2

    @property
    def ratio(self) -> float:
        """Points per game, ``nan`` before the first result."""
        return self.points / self.games if self.games else math.nan

    def after(self, result: str, *, as_white: bool) -> Score:
        """The score once a game with PGN ``result`` is added; ``*`` changes nothing."""
        points = Result.points_of(result)
        if points is None:
            return self
        mine = points[0 if as_white else 1]
        if mine == 1.0:
            return Score(self.wins + 1, self.losses, self.draws)
        if mine == 0.0:
            return Score(self.wins, self.losses + 1, self.draws)
        return Score(self.wins, self.losses, self.draws + 1)


@dataclass(frozen=True, slots=True)
class EloEstimate:
    """Elo difference with its 95 % error margin, likelihood of superiority (%) and draw ratio."""

    difference: float
    margin: float
    los: float
    draw_ratio: float


def estimate(score: Score) -> EloEstimate:
    """cutechess-cli's Elo figures for ``score``; every field is ``nan`` without a result."""
    games = score.games
    if not games:
        return EloEstimate(math.nan, math.nan, math.nan, math.nan)
    mu = score.ratio
    variance = (
        score.wins * (1.0 - mu) ** 2 + score.losses * mu**2 + score.draws * (0.5 - mu) ** 2
    ) / games
    stdev = math.sqrt(variance) / math.sqrt(games)
    low = mu + _phi_inverse((1 - _CONFIDENCE) / 2) * stdev
    high = mu + _phi_inverse((1 + _CONFIDENCE) / 2) * stdev
    return EloEstimate(
        difference=_elo(mu),
        margin=(_elo(high) - _elo(low)) / 2,
        los=_likelihood_of_superiority(score),
        draw_ratio=score.draws / games,
    )


def _elo(mu: float) -> float:
    """The Elo difference that makes ``mu`` the expected score (logistic curve)."""
    if mu >= 1.0:
        return math.inf if mu == 1.0 else math.nan
    if mu <= 0.0:
        return -math.inf if mu == 0.0 else math.nan
    return -400.0 * math.log10(1.0 / mu - 1.0)


def _likelihood_of_superiority(score: Score) -> float:
    decisive = score.wins + score.losses
    if not decisive:
        return math.nan
    return 100.0 * (0.5 + 0.5 * math.erf((score.wins - score.losses) / math.sqrt(2.0 * decisive)))


def _phi_inverse(p: float) -> float:
    """The standard normal quantile, through cutechess-cli's approximate inverse erf."""
    return math.sqrt(2.0) * _erf_inverse(2.0 * p - 1.0)


def _erf_inverse(x: float) -> float:
    y = math.log(1.0 - x * x)
    z = 2.0 / (_PI * _WINITZKI_A) + y / 2.0
    magnitude = math.sqrt(math.sqrt(z * z - y / _WINITZKI_A) - z)
    return -magnitude if x < 0 else magnitude
