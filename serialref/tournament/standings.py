"""Standings of an event from its finished games: points, W-L-D, Sonneborn-Berger, crosstable.

Each player's and each pair's game pairs (same start, colours swapped) are counted
too, the pentanomial statistics of :mod:`serialref.pentanomial`.

Pure functions of the games, so the same table comes out whether the games were just
played, read back from a journal after a crash, or read from someone else's PGN file
(cutechess-cli's, fastchess's). A game without a result (``*``) is listed as played
but gives no points, as those tools count it.

Ties are broken by points, then Sonneborn-Berger (the points of the opponents each
player beat, plus half those of the opponents it drew with), then wins, then name, so
the order never depends on the order the games finished in.
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from dataclasses import dataclass, field

from serialref.elo import Score
from serialref.pentanomial import GamePairs, Pentanomial
from serialref.result import Result

__all__ = ["FinishedGame", "PlayerStanding", "Standings", "standings"]


@dataclass(frozen=True, slots=True)
class FinishedGame:
    """One game of the event: who had White, who had Black, its PGN result, where it began.

    ``start`` tells game pairs apart: the FEN the game started from, empty for the
    usual start.
    """

    white: str
    black: str
    result: str
    round: str = "?"
    start: str = ""


@dataclass(frozen=True, slots=True)
class PlayerStanding:
    """One player's line of the table."""

    rank: int
    name: str
    score: Score
    sonneborn_berger: float
    unfinished: int = 0
    pentanomial: Pentanomial = field(default_factory=Pentanomial)

    @property
    def points(self) -> float:
        return self.score.points


@dataclass(frozen=True, slots=True)
class Standings:
    """The table, the crosstable and every pair's score and game pairs."""

    players: tuple[PlayerStanding, ...]
    crosstable: dict[tuple[str, str], tuple[float, ...]] = field(default_factory=dict)
    pairs: dict[tuple[str, str], Score] = field(default_factory=dict)
    pentanomials: dict[tuple[str, str], Pentanomial] = field(default_factory=dict)

    def names(self) -> list[str]:
        return [player.name for player in self.players]


def standings(games: Iterable[FinishedGame], players: Sequence[str] = ()) -> Standings:
    """The standings after ``games``; ``players`` lists those who have not played yet too.

    ``crosstable[(row, column)]`` holds the row player's points of each game against the
    column player, in the order played; ``pairs[(first, second)]`` is the first player's
    score against the second, for each pair that met, the first being the one listed
    (or met) first, and ``pentanomials`` holds its game pairs under the same key.
    """
    order: dict[str, None] = dict.fromkeys(players)
    scores: dict[str, Score] = {}
    unfinished: dict[str, int] = {}
    crosstable: dict[tuple[str, str], list[float]] = {}
    pairs: dict[tuple[str, str], Score] = {}
    played: list[FinishedGame] = list(games)
    game_pairs = GamePairs()
    for game in played:
        game_pairs.add(game.white, game.black, game.result, game.start)
        for name in (game.white, game.black):
            order.setdefault(name)
            scores.setdefault(name, Score())
        points = Result.points_of(game.result)
        if points is None:
            for name in (game.white, game.black):
                unfinished[name] = unfinished.get(name, 0) + 1
            continue
        scores[game.white] = scores[game.white].after(game.result, as_white=True)
        scores[game.black] = scores[game.black].after(game.result, as_white=False)
        crosstable.setdefault((game.white, game.black), []).append(points[0])
        crosstable.setdefault((game.black, game.white), []).append(points[1])
        key, as_white = _pair_key(pairs, order, game.white, game.black)
        pairs[key] = pairs.get(key, Score()).after(game.result, as_white=as_white)
    totals = {name: scores.get(name, Score()).points for name in order}
    berger = dict.fromkeys(order, 0.0)
    for (row, column), results in crosstable.items():
        berger[row] += sum(points * totals[column] for points in results)
    ranked = sorted(
        order,
        key=lambda name: (-totals[name], -berger[name], -scores.get(name, Score()).wins, name),
    )
    table = tuple(
        PlayerStanding(rank, name, scores.get(name, Score()), berger[name], unfinished.get(name, 0),
                       game_pairs.of(name, order))
        for rank, name in enumerate(ranked, start=1)
    )  # fmt: skip
    pentanomials = {key: game_pairs.between(*key) for key in pairs}
    return Standings(table, {key: tuple(value) for key, value in crosstable.items()}, pairs,
                     pentanomials)  # fmt: skip


def _pair_key(
    pairs: dict[tuple[str, str], Score], order: dict[str, None], white: str, black: str
) -> tuple[tuple[str, str], bool]:
    """The pair's key, first player first, and whether that first player had White."""
    if (black, white) in pairs:
        return (black, white), False
    if (white, black) in pairs:
        return (white, black), True
    names = list(order)
    if names.index(white) <= names.index(black):
        return (white, black), True
    return (black, white), False
