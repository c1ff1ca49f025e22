"""Event streams as a referee really publishes them, for the tests of its listeners.

A :class:`~serialref.referee.match.MatchReferee` plays a short match on a fake wire with
a fake clock (no ports, no sleeps), and the events it published are handed back. Every
observer's tests feed it an untimed game this way (``--tc -``: infinite clocks), since a
hand-made event can miss what the referee actually sends.
"""

from __future__ import annotations

from collections.abc import Sequence

import chess

from serialref import records
from serialref.epd.writer import format_record
from serialref.events import MatchEvent
from serialref.referee.match import MatchReferee
from serialref.referee.openings import Opening
from serialref.referee.settings import MatchSettings
from serialref.rules import STANDARD, Rules
from serialref.timecontrol import TimeControl

WALL = 1_795_000_000.0  # 2026-11-18: a fixed Date tag
FOOLS_MATE = ("f3", "e5", "g4", "Qh4#")


class _Clock:
    def __init__(self) -> None:
        self.now = 100.0

    def __call__(self) -> float:
        return self.now


class _Wire:
    """Takes every line at once, as a port with room in its buffer does."""

    def __init__(self, clock: _Clock) -> None:
        self._clock = clock

    def send(self, port: str, text: str, *, notify: bool = False) -> float:
        return self._clock.now

    def transmission_time(self, port: str, nbytes: int) -> float:
        return 0.0

    def waiting(self, port: str) -> bool:
        return False


class _Events:
    def __init__(self) -> None:
        self.events: list[MatchEvent] = []

    def handle(self, event: MatchEvent) -> None:
        self.events.append(event)

    def sync(self) -> None:
        """Nothing to make durable."""

    def close(self) -> None:
        """Nothing to release."""


def played_match(
    time_control: str = "-",
    games: Sequence[Sequence[str]] = (FOOLS_MATE,),
    names: tuple[str, str] = ("Alpha", "Beta"),
    think: float = 1.5,
    rules: Rules = STANDARD,
) -> list[MatchEvent]:
    """The events of a match whose games are these moves, each taking ``think`` seconds."""
    clock = _Clock()
    listener = _Events()
    settings = MatchSettings(
        games=len(games), time_control=TimeControl.parse(time_control), event="Test",
        site="Lab", reset_delay=1.0, conclude_delay=1.0, rules=rules,
        openings=(Opening(rules.starting_fen, rules=rules),),
    )  # fmt: skip
    referee = MatchReferee(settings, _Wire(clock), [listener], clock=clock, wall_clock=lambda: WALL)
    referee.start()
    for port, name in zip("ab", names, strict=True):
        referee.on_line(port, format_record(records.sign_on(chess.Board(), name)), clock.now)
    for number, moves in enumerate(games, start=1):
        clock.now += settings.reset_delay
        referee.on_timer()
        board = rules.board()
        white = settings.white_port(number)
        for san in moves:
            port = white if board.turn == chess.WHITE else ("b" if white == "a" else "a")
            clock.now += think
            reply = records.reply(board, board.parse_san(san))
            referee.on_line(port, format_record(reply), clock.now)
            board.push_san(san)
        clock.now += settings.conclude_delay
        referee.on_timer()
    assert referee.complete, "the scripted match did not finish"
    return listener.events


def untimed_game() -> list[MatchEvent]:
    """One game of Fool's mate without clocks (``--tc -``), as the referee publishes it."""
    return played_match("-")


CRAZYHOUSE_MATE = ("f4", "c5", "g4", "Nh6", "Nf3", "Nxg4", "Ne5", "@f2#")
"""A crazyhouse game that Black ends by dropping the pawn it took: mate on f2."""
