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
from serialref.epd.record import EpdRecord
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


class ScriptedReferee:
    """A :class:`MatchReferee` on a fake wire and clock, told each line and each pause."""

    def __init__(self, settings: MatchSettings) -> None:
        self.settings = settings
        self.clock = _Clock()
        self._listener = _Events()
        self.referee = MatchReferee(settings, _Wire(self.clock), [self._listener],
                                    clock=self.clock, wall_clock=lambda: WALL)  # fmt: skip
        self.referee.start()

    @property
    def events(self) -> list[MatchEvent]:
        """Every event the referee published so far."""
        return self._listener.events

    def line(self, port: str, record: EpdRecord | str, after: float = 0.0) -> None:
        """``port``'s player sends ``record``, ``after`` seconds from the last step."""
        self.clock.now += after
        text = record if isinstance(record, str) else format_record(record)
        self.referee.lines.on_line(port, text, self.clock.now)

    def wait(self, seconds: float) -> None:
        """Let ``seconds`` pass, and the referee's timers fire."""
        self.clock.now += seconds
        self.referee.on_timer()


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
    scripted = ScriptedReferee(settings)
    for port, name in zip("ab", names, strict=True):
        scripted.line(port, records.sign_on(chess.Board(), name))
    for number, moves in enumerate(games, start=1):
        scripted.wait(settings.reset_delay)
        board = rules.board()
        white = settings.white_port(number)
        for san in moves:
            port = white if board.turn == chess.WHITE else ("b" if white == "a" else "a")
            scripted.line(port, records.reply(board, board.parse_san(san)), after=think)
            board.push_san(san)
        scripted.wait(settings.conclude_delay)
    assert scripted.referee.complete, "the scripted match did not finish"
    return scripted.events


def untimed_game() -> list[MatchEvent]:
    """One game of Fool's mate without clocks (``--tc -``), as the referee publishes it."""
    return played_match("-")


CRAZYHOUSE_MATE = ("f4", "c5", "g4", "Nh6", "Nf3", "Nxg4", "Ne5", "@f2#")
"""A crazyhouse game that Black ends by dropping the pawn it took: mate on f2."""
