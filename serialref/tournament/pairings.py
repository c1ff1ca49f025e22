"""Who plays whom: a match, a round robin (Berger tables) with cycles, a gauntlet; byes.

A pairing is a match of its own (:class:`serialref.referee.match.MatchReferee`): its
games alternate colours and play each opening with both colours, so a pairing's first
player has White in its odd games. In a round robin's even cycles the first and second
players of every pairing are swapped, so over two cycles each player has White as often
as Black against each opponent. With an odd number of players, one sits out each round
(a bye, which scores nothing, as cutechess-cli and fastchess count it).
"""

from __future__ import annotations

import enum
from collections.abc import Sequence
from dataclasses import dataclass

from serialref.errors import ConfigError

__all__ = ["Pairing", "TournamentFormat", "pairings"]


class TournamentFormat(enum.StrEnum):
    """The formats an event can have."""

    MATCH = "match"
    ROUND_ROBIN = "round-robin"
    GAUNTLET = "gauntlet"


@dataclass(frozen=True, slots=True)
class Pairing:
    """One board's match: its number (1-based, the schedule's order) and round."""

    number: int
    round: int
    first: str
    second: str
    byes: tuple[str, ...] = ()


def pairings(fmt: TournamentFormat, players: Sequence[str], *, rounds: int = 1) -> list[Pairing]:
    """Every pairing of the event, in the order they are started.

    ``rounds`` is the number of cycles of a round robin (or of a gauntlet: each cycle
    meets every opponent once more, colours swapped) and must be 1 for a match.
    """
    if len(set(players)) != len(players):
        raise ConfigError("players", "every player needs a name of its own")
    if rounds < 1:
        raise ConfigError("rounds", f"must be at least 1, not {rounds}")
    if fmt is TournamentFormat.MATCH:
        if len(players) != 2:
            raise ConfigError("players", f"a match is between 2 players, not {len(players)}")
        cycle = [[(players[0], players[1])]]
    elif len(players) < 2:
        raise ConfigError("players", f"an event needs at least 2 players, not {len(players)}")
    elif fmt is TournamentFormat.GAUNTLET:
        cycle = [[(players[0], opponent)] for opponent in players[1:]]
    else:
        cycle = _berger(list(players))
    found: list[Pairing] = []
    for repeat in range(rounds):
        for index, round_pairs in enumerate(cycle):
            playing = {name for pair in round_pairs for name in pair}
            byes = tuple(name for name in players if name not in playing)
            if fmt is TournamentFormat.GAUNTLET:
                byes = ()
            for pair in round_pairs:
                first, second = reversed(pair) if repeat % 2 else pair
                found.append(Pairing(len(found) + 1, repeat * len(cycle) + index + 1, first,
                                     second, byes))  # fmt: skip
    return found


def _berger(players: list[str]) -> list[list[tuple[str, str]]]:
    """The rounds of a single round robin by the circle method; a bye fills an odd field."""
    field: list[str | None] = [*players, None] if len(players) % 2 else [*players]
    count = len(field)
    rounds: list[list[tuple[str, str]]] = []
    for index in range(count - 1):
        pairs: list[tuple[str, str]] = []
        for board in range(count // 2):
            home, away = field[board], field[count - 1 - board]
            if home is None or away is None:
                continue
            # The fixed player alternates colours round by round, as Berger tables do.
            if board == 0 and index % 2:
                home, away = away, home
            pairs.append((home, away))
        rounds.append(pairs)
        field = [field[0], field[-1], *field[1:-1]]
    return rounds
