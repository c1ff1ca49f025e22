"""Pairings: every pair meets as often as the format says, colours balance, byes rotate."""

from __future__ import annotations

from collections import Counter
from itertools import combinations

import pytest

from serialref.errors import ConfigError
from serialref.tournament.pairings import TournamentFormat, pairings


@pytest.mark.parametrize("count", [2, 3, 4, 5, 6, 7, 8])
def test_a_round_robin_meets_every_pair_once_per_cycle(count: int) -> None:
    names = [f"P{i}" for i in range(count)]
    found = pairings(TournamentFormat.ROUND_ROBIN, names, rounds=2)
    met = Counter(frozenset((p.first, p.second)) for p in found)
    assert set(met) == {frozenset(pair) for pair in combinations(names, 2)}
    assert set(met.values()) == {2}
    # Over two cycles each pair has each player first (White in its odd games) once.
    firsts = Counter((p.first, p.second) for p in found)
    assert set(firsts.values()) == {1}
    assert [p.number for p in found] == list(range(1, len(found) + 1))


def test_a_round_robin_round_has_each_player_at_most_once_and_byes_rotate() -> None:
    found = pairings(TournamentFormat.ROUND_ROBIN, ["A", "B", "C", "D", "E"])
    rounds: dict[int, list[str]] = {}
    for p in found:
        rounds.setdefault(p.round, []).extend([p.first, p.second])
    assert all(len(set(playing)) == len(playing) == 4 for playing in rounds.values())
    byes = [next(p.byes for p in found if p.round == r) for r in sorted(rounds)]
    assert sorted(name for bye in byes for name in bye) == ["A", "B", "C", "D", "E"]


def test_first_players_alternate_in_a_single_round_robin() -> None:
    found = pairings(TournamentFormat.ROUND_ROBIN, ["A", "B", "C", "D", "E", "F"])
    firsts = Counter(p.first for p in found)
    assert max(firsts.values()) - min(firsts.values()) <= 2


def test_a_gauntlet_meets_the_first_player_with_each_other() -> None:
    found = pairings(TournamentFormat.GAUNTLET, ["Hero", "B", "C"], rounds=2)
    assert [(p.first, p.second) for p in found] == [
        ("Hero", "B"), ("Hero", "C"), ("B", "Hero"), ("C", "Hero"),
    ]  # fmt: skip


def test_a_match_is_one_pairing() -> None:
    [only] = pairings(TournamentFormat.MATCH, ["A", "B"])
    assert (only.first, only.second, only.round) == ("A", "B", 1)


@pytest.mark.parametrize(
    ("fmt", "names", "rounds", "reason"),
    [
        (TournamentFormat.MATCH, ["A", "B", "C"], 1, "a match is between 2 players, not 3"),
        (TournamentFormat.ROUND_ROBIN, ["A"], 1, "at least 2 players"),
        (TournamentFormat.ROUND_ROBIN, ["A", "A"], 1, "a name of its own"),
        (TournamentFormat.GAUNTLET, ["A", "B"], 0, "at least 1"),
    ],
)
def test_impossible_events_are_refused(
    fmt: TournamentFormat, names: list[str], rounds: int, reason: str
) -> None:
    with pytest.raises(ConfigError, match=reason):
        pairings(fmt, names, rounds=rounds)
