"""Event streams as a referee really publishes them, for the tests of its listeners.

A :class:`~serialref.referee.match.MatchReferee` plays a short match in a
:class:`~doubles.Harness` (no ports, no sleeps), and the events it published are
handed back. Every observer's tests feed it an untimed game this way (``--tc -``:
infinite clocks), since a hand-made event can miss what the referee actually sends.
"""

from __future__ import annotations

from collections.abc import Sequence

import chess
from doubles import Harness

from serialref.happenings import MatchEvent
from serialref.referee.openings import Opening
from serialref.referee.settings import MatchSettings
from serialref.rules import STANDARD, Rules
from serialref.timecontrol import TimeControl

FOOLS_MATE = ("f3", "e5", "g4", "Qh4#")


def played_match(
    time_control: str = "-",
    games: Sequence[Sequence[str]] = (FOOLS_MATE,),
    names: tuple[str, str] = ("Alpha", "Beta"),
    think: float = 1.5,
    rules: Rules = STANDARD,
) -> list[MatchEvent]:
    """The events of a match whose games are these moves, each taking ``think`` seconds."""
    settings = MatchSettings(
        games=len(games), time_control=TimeControl.parse(time_control), event="Test",
        site="Lab", reset_delay=1.0, conclude_delay=1.0, rules=rules,
        openings=(Opening(rules.starting_fen, rules=rules),),
    )  # fmt: skip
    match = Harness(settings)
    for port, name in zip("ab", names, strict=True):
        match.sign_on(port, name)
    for number, moves in enumerate(games, start=1):
        match.advance(settings.reset_delay)
        match.board = rules.board()
        white = settings.white_port(number)
        for san in moves:
            port = white if match.board.turn == chess.WHITE else ("b" if white == "a" else "a")
            match.move(port, san, think=think)
        match.advance(settings.conclude_delay)
    assert match.referee.complete, "the scripted match did not finish"
    return match.events.events


def untimed_game() -> list[MatchEvent]:
    """One game of Fool's mate without clocks (``--tc -``), as the referee publishes it."""
    return played_match("-")


CRAZYHOUSE_MATE = ("f4", "c5", "g4", "Nh6", "Nf3", "Nxg4", "Ne5", "@f2#")
"""A crazyhouse game that Black ends by dropping the pawn it took: mate on f2."""
