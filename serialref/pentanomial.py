"""Game pairs and what they say: the pentanomial counts, normalized Elo, fastchess's lines.

Engine testers play each opening twice, colours swapped, and count the pair rather than
the game: the two results of a pair are not independent (a lopsided opening gives both
players a win with White), and the pair's points, 0 to 2 in half-point steps, are.
fastchess reports the five counts as ``Ptnml(0-2): [LL, LD, DD+WL, WD, WW]`` and
estimates from them the Elo difference and the normalized Elo (``nElo``: the score's
distance from even in standard deviations of a pair, scaled to Elo near zero), each
with its 95 % error. Testers compare the figures across tools, so they are computed
exactly as fastchess computes them (``app/src/matchmaking/elo/elo_pentanomial.cpp``),
and printed as it prints them, down to its ``-nan`` and ``inf`` for the degenerate
cases (a single pair, a sweep) where a figure has no value.

Two games are a pair when they are consecutive games between the same two players,
the colours swapped, from the same start position, as serialref, cutechess-cli and
fastchess play and write them. A pair with a game that has no result (``*``) counts
for nothing, as in fastchess.
"""

from __future__ import annotations

import math
from collections.abc import Iterable
from dataclasses import dataclass, fields

from serialref.elo import Score
from serialref.result import Result

__all__ = [
    "GamePairs",
    "MatchTally",
    "Pentanomial",
    "PentanomialEstimate",
    "estimate",
    "format_fixed",
    "nelo_line",
    "ptnml_line",
    "quotient",
]

_CI95_Z = 1.959963984540054  # fastchess's z for a 95 % interval
_NELO_SCALE = 800.0 / math.log(10.0)
_DEFAULT_NAN = math.copysign(math.nan, -1.0)
"""What 0/0 gives on the x86-64 fastchess runs on, and what fastchess prints as ``-nan``."""
_OUTCOMES = {(2, 0): "ww", (1, 0): "wd", (1, 1): "wl", (0, 0): "dd", (0, 1): "ld", (0, 2): "ll"}
"""A pair's class by its wins and losses."""


@dataclass(frozen=True, slots=True)
class Pentanomial:
    """One player's game pairs against another, by the pair's outcome for that player."""

    ll: int = 0
    ld: int = 0
    wl: int = 0
    dd: int = 0
    wd: int = 0
    ww: int = 0

    @property
    def pairs(self) -> int:
        return self.ll + self.ld + self.wl + self.dd + self.wd + self.ww

    def counts(self) -> tuple[int, int, int, int, int]:
        """The five classes fastchess reports: 0, 0.5, 1 (a draw pair or a win and a
        loss), 1.5 and 2 points."""
        return (self.ll, self.ld, self.dd + self.wl, self.wd, self.ww)

    def after(self, first: float, second: float) -> Pentanomial:
        """The counts once a pair is added where the player scored ``first`` and ``second``."""
        outcome = _OUTCOMES[(first == 1.0) + (second == 1.0), (first == 0.0) + (second == 0.0)]
        counts = {f.name: getattr(self, f.name) for f in fields(self)}
        counts[outcome] += 1
        return Pentanomial(**counts)

    def swapped(self) -> Pentanomial:
        """The same pairs as the opponent counts them."""
        return Pentanomial(self.ww, self.wd, self.wl, self.dd, self.ld, self.ll)

    def __add__(self, other: Pentanomial) -> Pentanomial:
        return Pentanomial(*(getattr(self, f.name) + getattr(other, f.name) for f in fields(self)))


@dataclass(frozen=True, slots=True)
class PentanomialEstimate:
    """fastchess's figures from the pairs: Elo and nElo with their 95 % errors."""

    elo: float
    elo_error: float
    nelo: float
    nelo_error: float


def estimate(counts: Pentanomial) -> PentanomialEstimate:
    """The figures fastchess prints for ``counts``; undefined ones are NaN, as there."""
    pairs = counts.pairs
    shares = [quotient(count, pairs) for count in counts.counts()]
    points = (0.0, 0.25, 0.5, 0.75, 1.0)
    score = sum(share * point for share, point in zip(shares, points, strict=True))
    variance = sum(share * (point - score) ** 2 for share, point in zip(shares, points,
                                                                         strict=True))  # fmt: skip
    spread = _CI95_Z * _root(quotient(variance, pairs))
    upper, lower = score + spread, score - spread

    def nelo(at: float) -> float:
        return quotient(at - 0.5, _root(2.0 * variance)) * _NELO_SCALE

    return PentanomialEstimate(
        elo=_elo(score),
        elo_error=(_elo(upper) - _elo(lower)) / 2.0,
        nelo=nelo(score),
        nelo_error=(nelo(upper) - nelo(lower)) / 2.0,
    )


def _elo(score: float) -> float:
    """fastchess's ``-400 log10(1 / score - 1)``, with the C library's infinities and NaNs."""
    odds = quotient(1.0, score) - 1.0
    if math.isnan(odds):
        return odds
    if odds < 0:
        return -400.0 * _DEFAULT_NAN
    return -400.0 * (math.log10(odds) if odds else -math.inf)


def _root(value: float) -> float:
    """``std::sqrt``: a NaN for a NaN, not an exception."""
    return value if math.isnan(value) else math.sqrt(value)


def quotient(numerator: float, denominator: float) -> float:
    """``numerator / denominator`` as fastchess's C++ divides: infinities and NaNs, no error."""
    if denominator:
        return numerator / denominator
    if numerator == 0 or math.isnan(numerator):
        return _DEFAULT_NAN
    return math.copysign(math.inf, numerator) * math.copysign(1.0, denominator)


def format_fixed(value: float, digits: int = 2) -> str:
    """``value`` as fastchess's ``{:.2f}`` writes it: a NaN with its sign (``-nan``)."""
    if math.isnan(value):
        return "-nan" if math.copysign(1.0, value) < 0 else "nan"
    return f"{value:.{digits}f}"


def ptnml_line(counts: Pentanomial) -> str:
    """fastchess's ``Ptnml(0-2): [1, 1, 11, 6, 11], WL/DD Ratio: 10.00``."""
    listed = ", ".join(str(count) for count in counts.counts())
    return f"Ptnml(0-2): [{listed}], WL/DD Ratio: {format_fixed(quotient(counts.wl, counts.dd))}"


def nelo_line(counts: Pentanomial) -> str:
    """fastchess's ``Elo: 154.14 +/- 82.59, nElo: 191.84 +/- 87.91``, from the pairs."""
    found = estimate(counts)
    return (
        f"Elo: {format_fixed(found.elo)} +/- {format_fixed(found.elo_error)}, "
        f"nElo: {format_fixed(found.nelo)} +/- {format_fixed(found.nelo_error)}"
    )


class GamePairs:
    """The game pairs of any number of players, made as their games are added in order.

    A game waits for the next game between the same two players: that one completes
    the pair when it has the colours swapped and the same start, else it waits in its
    place. A completed pair is counted only when both games have a result.
    """

    def __init__(self) -> None:
        self._waiting: dict[frozenset[str], tuple[str, str, str, str]] = {}
        self._counts: dict[tuple[str, str], Pentanomial] = {}

    def add(self, white: str, black: str, result: str, start: str = "") -> None:
        """One more game, in the order played; ``start`` names its start position."""
        players = frozenset((white, black))
        waiting = self._waiting.pop(players, None)
        if waiting is None or waiting[:3] != (black, white, start):
            self._waiting[players] = (white, black, start, result)
            return
        first = Result.points_of(waiting[3])
        second = Result.points_of(result)
        if first is None or second is None:
            return
        key = (black, white)  # the first game's White, who had Black in this one
        self._counts[key] = self._counts.get(key, Pentanomial()).after(first[0], second[1])

    def between(self, player: str, opponent: str) -> Pentanomial:
        """``player``'s pairs against ``opponent``."""
        mine = self._counts.get((player, opponent), Pentanomial())
        return mine + self._counts.get((opponent, player), Pentanomial()).swapped()

    def of(self, player: str, opponents: Iterable[str]) -> Pentanomial:
        """``player``'s pairs against all of ``opponents``."""
        total = Pentanomial()
        for opponent in opponents:
            if opponent != player:
                total += self.between(player, opponent)
        return total


class MatchTally:
    """One player's score and game pairs against its opponent, as the games of a match end."""

    def __init__(self, player: str) -> None:
        self.player = player
        self.score = Score()
        self._pairs = GamePairs()
        self._opponents: set[str] = set()

    def add(self, white: str, black: str, result: str) -> None:
        """A game of the match, in the order played (all start alike, or as paired)."""
        self.score = self.score.after(result, as_white=white == self.player)
        self._pairs.add(white, black, result)
        self._opponents.update((white, black))

    @property
    def pairs(self) -> Pentanomial:
        return self._pairs.of(self.player, self._opponents)
