"""Standings: points, W-L-D, Sonneborn-Berger, crosstable and pairs, from finished games."""

from __future__ import annotations

from serialref.tournament.standings import FinishedGame, standings


def _game(white: str, black: str, result: str) -> FinishedGame:
    return FinishedGame(white, black, result)


def test_points_wins_losses_draws_and_order() -> None:
    table = standings([
        _game("A", "B", "1-0"), _game("B", "A", "1/2-1/2"),
        _game("C", "A", "0-1"), _game("B", "C", "0-1"),
    ])  # fmt: skip
    rows = {p.name: p for p in table.players}
    assert table.names() == ["A", "C", "B"]
    assert (rows["A"].points, rows["A"].score.wins, rows["A"].score.draws) == (2.5, 2, 1)
    assert (rows["B"].score.wins, rows["B"].score.losses, rows["B"].score.draws) == (0, 2, 1)
    assert [p.rank for p in table.players] == [1, 2, 3]


def test_sonneborn_berger_breaks_a_tie_on_points() -> None:
    # A and B both score 1: A beat C (1 point), B beat D (0 points).
    table = standings([
        _game("A", "C", "1-0"), _game("B", "D", "1-0"),
        _game("C", "D", "1-0"), _game("A", "B", "*"),
    ])  # fmt: skip
    rows = {p.name: p for p in table.players}
    assert rows["A"].sonneborn_berger == 1.0
    assert rows["B"].sonneborn_berger == 0.0
    assert table.names().index("A") < table.names().index("B")


def test_an_unfinished_game_counts_for_no_one() -> None:
    table = standings([_game("A", "B", "*")], players=["A", "B", "C"])
    assert all(p.points == 0 and p.score.games == 0 for p in table.players)
    assert {p.name: p.unfinished for p in table.players} == {"A": 1, "B": 1, "C": 0}
    assert table.pairs == {}


def test_crosstable_keeps_each_game_from_each_side() -> None:
    table = standings([_game("A", "B", "1-0"), _game("B", "A", "1/2-1/2")])
    assert table.crosstable[("A", "B")] == (1.0, 0.5)
    assert table.crosstable[("B", "A")] == (0.0, 0.5)


def test_a_pair_is_scored_from_its_first_player_whatever_the_colours() -> None:
    table = standings([_game("A", "B", "1-0"), _game("B", "A", "1-0"), _game("B", "A", "0-1")])
    score = table.pairs[("A", "B")]
    assert (score.wins, score.losses, score.draws) == (2, 1, 0)


def test_players_who_never_played_are_listed_last_with_nothing() -> None:
    table = standings([_game("A", "B", "0-1")], players=["A", "B", "Z"])
    assert table.names() == ["B", "A", "Z"]
