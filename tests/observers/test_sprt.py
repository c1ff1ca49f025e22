"""The SPRT of a match: it asks for the stop once the test decides, and only once."""

from __future__ import annotations

import chess

from serialref.happenings import GameEnded, MatchEnded
from serialref.observers.sprt import SprtWatch
from serialref.sprt import SprtModel, SprtTest

# elo0=0 elo1=100 decides fast: ten won pairs accept H1.
TEST = SprtTest(0, 100, 0.05, 0.05, SprtModel.NORMALIZED)


def ended(game: int, result: str) -> GameEnded:
    return GameEnded(game, result, "normal", "mate", chess.STARTING_FEN, (1.0, 1.0))


def a_wins(game: int) -> GameEnded:
    """Player A wins game ``game``: with White in odd games, with Black in even ones."""
    return ended(game, "1-0" if game % 2 else "0-1")


def games_until_a_stop(watch: SprtWatch, stops: list[str], game: int = 0) -> int:
    """Feed A's wins from game ``game + 1`` on until ``watch`` asks for the stop."""
    while not stops:
        game += 1
        watch.handle(a_wins(game))
        assert game < 40, "the test never decided"
    return game


def test_it_asks_once_for_the_stop_when_the_test_decides() -> None:
    stops: list[str] = []
    watch = SprtWatch(TEST, stops.append)
    game = games_until_a_stop(watch, stops)
    watch.handle(a_wins(game + 1))  # a game that ends before the stop is carried out
    assert stops == ["SPRT: H1 was accepted"]
    assert watch.status == TEST.status_line(*_tally_of(game))
    assert not watch.decided
    watch.handle(MatchEnded(complete=False, score=(game, 0.0), reason=stops[0]))
    assert watch.decided


def _tally_of(games: int) -> tuple[object, ...]:
    from serialref.pentanomial import MatchTally

    tally = MatchTally("a")
    for game in range(1, games + 1):
        white = "a" if game % 2 else "b"
        tally.add(white, "b" if white == "a" else "a", "1-0" if game % 2 else "0-1")
    return tally.score, tally.pairs


def test_a_resumed_match_counts_the_games_already_played() -> None:
    fresh: list[str] = []
    game = games_until_a_stop(SprtWatch(TEST, fresh.append), fresh)
    resumed: list[str] = []
    played = [("a" if g % 2 else "b", "1-0" if g % 2 else "0-1") for g in range(1, game)]
    SprtWatch(TEST, resumed.append, results=played).handle(a_wins(game))
    assert resumed == fresh


def test_a_stop_for_another_reason_is_not_the_sprt_s() -> None:
    watch = SprtWatch(TEST, lambda reason: None)
    watch.handle(MatchEnded(complete=False, score=(0.0, 0.0), reason="SIGTERM"))
    assert not watch.decided
