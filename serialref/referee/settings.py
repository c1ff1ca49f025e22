"""What the referee knows about a match: its settings, and what makes it that match.

Built from the configuration (:mod:`serialref.appliance.config`) by the assembly
(:mod:`serialref.appliance.assembly`); the match and each game read it and never change it.
"""

from __future__ import annotations

import datetime
import enum
from dataclasses import dataclass, field

from serialref.referee.adjudicator import AdjudicationRules
from serialref.referee.openings import Opening, openings_digest
from serialref.rules import STANDARD, Rules
from serialref.timecontrol import TimeControl

__all__ = ["PORTS", "MatchSettings", "OnInfraction", "other_port"]

PORTS = ("a", "b")
"""Port labels: the player on port ``a`` has White in game 1; colours alternate."""


def other_port(port: str) -> str:
    """The opponent's port."""
    return "b" if port == "a" else "a"


class OnInfraction(enum.StrEnum):
    """What a rules infraction costs (PROTOCOL.md 4)."""

    FORFEIT = "forfeit"  # the player loses the game
    FAULT = "fault"  # the clocks stop and the supervisor is called


@dataclass(frozen=True, slots=True)
class MatchSettings:
    """Everything the referee needs to know about the match.

    Names, the event and the site are operator text as it was configured (the
    assembly makes only what could drive a terminal a ``?``): the PGN and the standings
    show it as it is, and the records sent to the players carry its ASCII form.
    ``flag_grace`` is how long a flag timer waits for a reply still on the line.
    ``event_round`` is the round of an event this match is a pairing of: its games are
    then that round's sub-rounds in the PGN (``3.2``, as cutechess-cli writes them).
    ``adjudication`` is what the referee ends a game by before its end (``--draw``,
    ``--resign``, ``--maxmoves``, ``--tb``).
    """

    games: int = 1
    time_control: TimeControl = field(default_factory=lambda: TimeControl.parse("300+3"))
    openings: tuple[Opening, ...] = (Opening(),)
    openings_source: str = "the standard starting position"
    rules: Rules = STANDARD
    event: str = "serialref match"
    site: str = "?"
    names: tuple[str | None, str | None] = (None, None)
    reset_delay: float = 5.0
    conclude_delay: float = 5.0
    on_infraction: OnInfraction = OnInfraction.FORFEIT
    rejoin_window: float = 0.0
    flag_grace: float = 0.0
    event_round: int | None = None
    adjudication: AdjudicationRules = field(default_factory=AdjudicationRules)

    def __post_init__(self) -> None:
        object.__setattr__(self, "on_infraction", OnInfraction(self.on_infraction))

    def opening(self, game: int) -> Opening:
        """The opening of game ``game`` (1-based): each is played twice, colours swapped."""
        return self.openings[((game - 1) // 2) % len(self.openings)]

    def roster(self, game: int, white: str, black: str, date: datetime.date) -> dict[str, str]:
        """The Seven Tag Roster of game ``game`` between ``white`` and ``black`` (unfinished)."""
        return {
            "Event": self.event,
            "Site": self.site,
            "Date": date.strftime("%Y.%m.%d"),
            "Round": str(game) if self.event_round is None else f"{self.event_round}.{game}",
            "White": white,
            "Black": black,
            "Result": "*",
        }

    @staticmethod
    def white_port(game: int) -> str:
        """Who has White in game ``game``: port ``a`` in odd games, ``b`` in even ones."""
        return PORTS[(game - 1) % 2]

    def identity(self) -> dict[str, object]:
        """The settings that make this match the one its journal holds (PROTOCOL.md 7).

        A restart from the journal is refused when any of these differ; the delays,
        the infraction policy and the ports' line settings may change between runs.
        """
        return {
            "games": self.games,
            "time_control": self.time_control.text,
            "openings": f"{self.openings_source} ({openings_digest(self.openings)})",
            "event": self.event,
            "names": list(self.names),
            "white_in_game_1": PORTS[0],
            **({} if self.rules.standard else {"variant": self.rules.name}),
        }
