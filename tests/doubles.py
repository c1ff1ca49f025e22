"""Test doubles that the tests share, each defined here once.

The referee is driven without ports or sleeps: a :class:`SteppedClock` that moves only
when the test moves it, an :class:`InstantWire` that takes every line at once, and
listeners that keep what the referee publishes, on the referee's own thread
(:class:`EventRecorder`) or for a test waiting on another one (:class:`EventQueue`).
:class:`Harness` puts them around a :class:`~serialref.referee.match.MatchReferee`
and speaks for both players.
"""

from __future__ import annotations

import queue
import time
from typing import TypeVar

import chess

from serialref import records
from serialref.epd.operations import Operation
from serialref.epd.parser import parse_record
from serialref.epd.record import EpdRecord
from serialref.epd.writer import format_record
from serialref.events import GameEnded, MatchEvent
from serialref.referee.match import MatchReferee
from serialref.referee.settings import MatchSettings
from serialref.timecontrol import TimeControl

E = TypeVar("E", bound=MatchEvent)

WALL = 1_795_000_000.0
"""The wall clock of every match a harness plays: 2026-11-18, a fixed Date tag."""


class SteppedClock:
    """A monotonic clock that moves only when the test moves it: ``clock.now += 5``."""

    def __init__(self, now: float = 1000.0) -> None:
        self.now = now

    def __call__(self) -> float:
        return self.now


class InstantWire:
    """The referee's ports: each line is taken at once, at the clock's time, and kept.

    ``line_delay`` is the time a byte spends on the line, which the referee adds to a
    line's departure (none by default: a line arrives as it is sent).
    """

    def __init__(self, clock: SteppedClock) -> None:
        self.clock = clock
        self.sent: list[tuple[str, str]] = []
        self.line_delay = 0.0

    def send(self, port: str, text: str, *, notify: bool = False) -> float:
        self.sent.append((port, text))
        return self.clock.now

    def transmission_time(self, port: str, nbytes: int) -> float:
        return self.line_delay * nbytes

    def waiting(self, port: str) -> bool:
        return False


class EventRecorder:
    """A recorder that keeps every event it is given, for the test to read afterwards."""

    def __init__(self) -> None:
        self.events: list[MatchEvent] = []

    def handle(self, event: MatchEvent) -> None:
        self.events.append(event)

    def sync(self) -> None:
        """Nothing to make durable."""

    def close(self) -> None:
        """Nothing to release."""

    def of(self, kind: type[E]) -> list[E]:
        """The events of one kind, in the order they came."""
        return [event for event in self.events if isinstance(event, kind)]


class EventQueue:
    """An observer that hands every event over to a test waiting on another thread."""

    def __init__(self) -> None:
        self._events: queue.SimpleQueue[MatchEvent] = queue.SimpleQueue()

    def handle(self, event: MatchEvent) -> None:
        self._events.put(event)

    def close(self) -> None:
        """Nothing to release."""

    def wait_for(self, kind: type[E], timeout: float = 5.0) -> E:
        """The next event of ``kind``, the others passed over; :class:`queue.Empty` when
        none comes within ``timeout`` seconds."""
        deadline = time.monotonic() + timeout
        while True:
            event = self._events.get(timeout=max(0.0, deadline - time.monotonic()))
            if isinstance(event, kind):
                return event

    def taken(self) -> list[MatchEvent]:
        """Every event handed over and not yet taken, in order."""
        events = []
        while not self._events.empty():
            events.append(self._events.get())
        return events


class Harness:
    """A :class:`MatchReferee` on an :class:`InstantWire` and a :class:`SteppedClock`, and
    both players' part: the test signs them on, moves, and reads what each was sent."""

    def __init__(self, settings: MatchSettings | None = None, **values: object) -> None:
        """The match of ``settings``, or of these ``values`` for :class:`MatchSettings`
        (a 60+1 match, event Test at Lab, unless they say otherwise)."""
        self.clock = SteppedClock()
        self.wire = InstantWire(self.clock)
        self.events = EventRecorder()
        if settings is None:
            defaults: dict[str, object] = {
                "time_control": TimeControl.parse("60+1"), "event": "Test", "site": "Lab",
            }  # fmt: skip
            settings = MatchSettings(**(defaults | values))  # type: ignore[arg-type]
        self.referee = MatchReferee(settings, self.wire, [self.events], clock=self.clock,
                                    wall_clock=lambda: WALL)  # fmt: skip
        self.referee.start()
        self.board = settings.rules.board()

    # what the players say
    def send(self, port: str, record: EpdRecord | str, *, after: float = 0.0) -> None:
        """``port``'s player sends ``record``, ``after`` seconds from the last step."""
        self.clock.now += after
        text = record if isinstance(record, str) else format_record(record)
        self.referee.on_line(port, text, self.clock.now)

    def sign_on(self, port: str, name: str | None = None) -> None:
        self.send(port, records.sign_on(chess.Board(), name))

    def move(self, port: str, san: str, *extra: Operation, think: float = 1.0) -> None:
        self.clock.now += think
        self.send(port, records.reply(self.board, self.board.parse_san(san), *extra))
        self.board.push_san(san)

    def reply(self, port: str, *extra: Operation, think: float = 1.0) -> None:
        self.clock.now += think
        self.send(port, records.reply(self.board, None, *extra))

    def advance(self, seconds: float) -> None:
        """Let ``seconds`` pass, and the referee's timers fire."""
        self.clock.now += seconds
        self.referee.on_timer()

    def start_game(self, fen: str | None = None) -> None:
        """Both players sign on (Alpha on A, Beta on B); the reset delay passes."""
        self.sign_on("a", "Alpha")
        self.sign_on("b", "Beta")
        self.advance(5.0)
        self.board = self.referee.settings.rules.board(fen)

    # what the players got
    def lines(self, port: str) -> list[str]:
        return [text for sent_port, text in self.wire.sent if sent_port == port]

    def commands(self, port: str) -> list[str]:
        return [records.referee_command(parse_record(text)).value for text in self.lines(port)]

    def last(self, port: str) -> EpdRecord:
        return parse_record(self.lines(port)[-1])

    def ended(self) -> GameEnded:
        (ended,) = self.events.of(GameEnded)
        return ended
