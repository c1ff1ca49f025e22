"""Test doubles that the tests share, each defined here once.

The referee is driven without ports or sleeps: a :class:`SteppedClock` that moves only
when the test moves it, an :class:`InstantWire` that takes every line at once, and
listeners that keep what the referee publishes, on the referee's own thread
(:class:`EventRecorder`) or for a test waiting on another one (:class:`EventQueue`).
:class:`Harness` puts them around a :class:`~serialref.referee.match.MatchReferee`
and speaks for both players. :class:`RunningReferee` is the whole daemon instead, on a
thread of its own over pty pairs, for the tests that need real ports.
"""

from __future__ import annotations

import queue
import threading
import time
from collections.abc import Callable
from contextlib import ExitStack
from pathlib import Path
from typing import TypeVar

import chess

from serialref import records
from serialref.epd.operations import Operation
from serialref.epd.parser import parse_record
from serialref.epd.record import EpdRecord
from serialref.epd.writer import format_record
from serialref.happenings import GameEnded, MatchEvent
from serialref.recorders.journal import JournalRecorder
from serialref.recorders.pgn import PgnRecorder
from serialref.referee.daemon import PortPlan, RefereeDaemon
from serialref.referee.match import MatchReferee
from serialref.referee.settings import PORTS, MatchSettings
from serialref.testing import null_modem
from serialref.timecontrol import TimeControl
from serialref.wire.transport import SerialTransport

E = TypeVar("E", bound=MatchEvent)

WALL = 1_795_000_000.0
"""The wall clock of every match a harness plays: 2026-11-18, a fixed Date tag."""

ReadExactly = Callable[[SerialTransport, int], bytes]
"""The ``read_exactly`` fixture: a transport's next ``size`` bytes, or the test fails."""


class SteppedClock:
    """A monotonic clock that moves only when the test moves it: ``clock.now += 5``."""

    def __init__(self, now: float = 1000.0) -> None:
        self.now = now

    def __call__(self) -> float:
        return self.now


class InstantWire:
    """The referee's ports (:class:`~serialref.referee.host.PlayerPorts`): each line is
    taken at once, at the clock's time, and kept, unless its port is in :attr:`hold`
    (its records wait: the referee hears when they leave).

    ``line_delay`` is the time a byte spends on the line, which :meth:`line_time` tells
    the referee (none by default: a line arrives as it is sent).
    """

    def __init__(self, clock: SteppedClock) -> None:
        self.clock = clock
        self.sent: list[tuple[str, str]] = []
        self.hold: set[str] = set()
        self.line_delay = 0.0

    def send(self, port: str, text: str, *, notify: bool = False) -> float | None:
        self.sent.append((port, text))
        return None if port in self.hold else self.clock.now

    def waiting(self, port: str) -> bool:
        return False

    def line_time(self, nbytes: int) -> float:
        """The time ``nbytes`` take on either line (the referee's ``line_times``)."""
        return self.line_delay * nbytes

    def line_times(self) -> dict[str, Callable[[int], float]]:
        """Both ports' line times, for a referee: each reads :attr:`line_delay` when asked."""
        return dict.fromkeys(PORTS, self.line_time)

    def lines(self, port: str) -> list[str]:
        """What ``port``'s player got, in order."""
        return [text for sent_port, text in self.sent if sent_port == port]

    def commands(self, port: str) -> list[str]:
        """The ``refcom`` of each record ``port``'s player got."""
        return [records.referee_command(parse_record(text)).value for text in self.lines(port)]

    def last(self, port: str) -> EpdRecord:
        """The last record ``port``'s player got."""
        return parse_record(self.lines(port)[-1])


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
        self.referee = MatchReferee(settings, self.wire, [self.events],
                                    line_times=self.wire.line_times(), clock=self.clock,
                                    wall_clock=lambda: WALL)  # fmt: skip
        self.referee.start()
        self.board = settings.rules.board()

    # what the players say
    def send(self, port: str, record: EpdRecord | str, *, after: float = 0.0) -> None:
        """``port``'s player sends ``record``, ``after`` seconds from the last step."""
        self.clock.now += after
        text = record if isinstance(record, str) else format_record(record)
        self.referee.lines.on_line(port, text, self.clock.now)

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
        return self.wire.lines(port)

    def commands(self, port: str) -> list[str]:
        return self.wire.commands(port)

    def last(self, port: str) -> EpdRecord:
        return self.wire.last(port)

    def ended(self) -> GameEnded:
        (ended,) = self.events.of(GameEnded)
        return ended


class RunningReferee:
    """A daemon on its own thread, with the players' ends of both cables."""

    def __init__(self, tmp_path: Path, stack: ExitStack, **settings: object) -> None:
        path_a, self.a = stack.enter_context(null_modem())
        path_b, self.b = stack.enter_context(null_modem())
        self.pgn = tmp_path / "match.pgn"
        self.journal = tmp_path / "journal.jsonl"
        values: dict[str, object] = {
            "reset_delay": 0.05,
            "conclude_delay": 0.05,
            "time_control": TimeControl.parse("60+1"),
        }
        values.update(settings)
        self._ready = threading.Event()
        self.recorders = [JournalRecorder(self.journal), PgnRecorder(self.pgn)]
        self.events = EventQueue()
        self.daemon = RefereeDaemon(
            MatchSettings(**values),  # type: ignore[arg-type]
            [PortPlan("a", path_a), PortPlan("b", path_b)],
            self.recorders,
            [self.events],
            on_ready=self._ready.set,
        )
        self.result: bool | None = None
        self._thread = threading.Thread(target=self._run, name="test-referee")

    def _run(self) -> None:
        self.result = self.daemon.run()

    def start(self) -> None:
        """Start, and return once the ports are open (opening discards waiting input)."""
        self._thread.start()
        assert self._ready.wait(5.0), "the referee did not open its ports"

    def join(self, timeout: float = 10.0) -> None:
        self._thread.join(timeout)
        assert not self._thread.is_alive(), "the referee did not finish"
        for recorder in self.recorders:
            recorder.close()

    def stop(self) -> None:
        if self._thread.is_alive():
            self.daemon.request_stop("test over")
            self.join()

    def sign_on_both(self) -> None:
        for peer, name in ((self.a, "Alpha"), (self.b, "Beta")):
            peer.send_line(format_record(records.sign_on(chess.Board(), name)))
            peer.expect("reset")
