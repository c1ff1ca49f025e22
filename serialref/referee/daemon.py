"""One board: a match's two ports, its referee, and reconnects, driven by the event loop.

The :class:`MatchBoard` owns a :class:`MatchReferee` and its ports; the loop
(:mod:`serialref.referee.loop`) waits on the ports' descriptors with those of every other
board, so they are read on the loop's thread, and written without waiting
(:class:`serialref.wire.link.LineWriter`): what a port cannot take at once waits in a
bounded buffer that the loop hands over as the port makes room, so a player that does
not read never stalls the other's clock. Ports without a descriptor (``socket://``,
``rfc2217://``) keep a reader and a writer thread that hand their events to the loop. A
lost line is reopened with back-off while the game and its clocks go on; the player is
restored when it signs on again.

:class:`RefereeDaemon` is ``serialref run``: one board on a loop of its own, on the
caller's thread; ``serialref event`` puts its boards on one shared loop.
"""

from __future__ import annotations

import logging
import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field

from serialref.errors import LineLostError, PortOpenError
from serialref.happenings import MatchListener, Recorder
from serialref.referee.loop import RefereeLoop, stop_signals
from serialref.referee.match import MatchReferee
from serialref.referee.reminder import SignOnReminder
from serialref.referee.resume import ResumePoint
from serialref.referee.settings import MatchSettings
from serialref.wire.backoff import Backoff
from serialref.wire.link import (
    LineRead,
    LineWriter,
    LinkEvent,
    LinkLost,
    MalformedLineRead,
    PortLink,
    RecordLeft,
    WriterEvent,
)
from serialref.wire.transport import PortSettings, SerialTransport

LOGGER = logging.getLogger(__name__)

__all__ = [
    "MatchBoard",
    "PortPlan",
    "RefereeDaemon",
    "RefereeTask",
    "StopRequested",
]

_LAST_WORDS = 1.0
"""Seconds the last records (``disconnect``, ``fault``) get to leave before the ports close."""


@dataclass(frozen=True, slots=True)
class PortPlan:
    """Where a player's port is and how to talk on it."""

    label: str
    url: str
    settings: PortSettings = field(default_factory=PortSettings)
    newline: bytes = b"\r\n"


@dataclass(frozen=True, slots=True)
class StopRequested:
    """Handed to the board to end the match (signal handlers, a supervisor, an event)."""

    reason: str


@dataclass(frozen=True, slots=True)
class RefereeTask:
    """Work for the loop's thread from another (the supervisor's control socket).

    ``run`` is called with the match on the loop's thread, between two lines, so it
    sees and changes the match as the referee itself would. It must return quickly.
    """

    run: Callable[[MatchReferee], None]


class _BoardSink:
    """Where a port's reader and writer threads hand their events: the loop, for this board."""

    def __init__(self, loop: RefereeLoop, board: MatchBoard) -> None:
        self._loop = loop
        self._board = board

    def put(self, event: LinkEvent | WriterEvent, /) -> None:
        self._loop.put(self._board, event)


class _Port:
    """One open port: its reader, its writer, and whether the loop waits for room on it."""

    def __init__(self, board: MatchBoard, link: PortLink, writer: LineWriter) -> None:
        self.board = board
        self.link = link
        self.writer = writer
        self.fd = link.fileno()
        self.writes = False

    def ready(self, readable: bool, writable: bool) -> list[object]:
        events: list[object] = []
        if readable:
            events.extend(self.link.read_events())
        if writable:
            events.extend(self.writer.flush())
            self.want_writes(self.writer.waiting)
        return events

    def want_writes(self, wanted: bool) -> None:
        """Also wake when the port has room for more (while lines wait for it), or not."""
        if self.fd is not None and wanted != self.writes:
            self.writes = wanted
            self.board.loop.rewatch(self.fd, self, writes=wanted)


class _OpenPorts:
    """The referee's :class:`~serialref.referee.host.PlayerPorts`: the board's open ports."""

    def __init__(self, sink: _BoardSink) -> None:
        self._sink = sink
        self.ports: dict[str, _Port] = {}

    def send(self, port: str, text: str, *, notify: bool = False) -> float | None:
        open_port = self.ports.get(port)
        if open_port is None:
            raise LineLostError(f"port {port}: the line is down")
        try:
            left_at = open_port.writer.send(text, notify=notify)
        except LineLostError as exc:
            # The loop hears of it once, as for a hang-up the reader noticed.
            self._sink.put(LinkLost(port, str(exc), time.monotonic()))
            raise
        if left_at is None:
            open_port.want_writes(open_port.writer.waiting)
        return left_at

    def waiting(self, port: str) -> bool:
        open_port = self.ports.get(port)
        return open_port is not None and open_port.writer.waiting


class MatchBoard:
    """One match on two ports, played on a :class:`RefereeLoop` with any other boards.

    ``on_ready`` runs on the loop's thread once both ports are open (players started
    before would lose their first sign-on); ``on_end`` once the board has left the loop,
    its ports closed, with the error that ended it, if any.
    """

    def __init__(
        self,
        loop: RefereeLoop,
        settings: MatchSettings,
        ports: Sequence[PortPlan],
        recorders: Sequence[Recorder] = (),
        observers: Sequence[MatchListener] = (),
        *,
        clock: Callable[[], float] = time.monotonic,
        on_ready: Callable[[], None] | None = None,
        on_end: Callable[[MatchBoard], None] | None = None,
        resume: ResumePoint | None = None,
    ) -> None:
        self.loop = loop
        self._plans = {plan.label: plan for plan in ports}
        self._sink = _BoardSink(loop, self)
        self._ports = _OpenPorts(self._sink)
        # The line time of the ports whose line time is not charged, known once each is
        # open (a real serial line, or line_delay "on").
        self._line_times: dict[str, Callable[[int], float]] = {}
        self._clock = clock
        self._on_ready = on_ready
        self._on_end = on_end
        self._retry: dict[str, tuple[float, Backoff]] = {}
        self._resume = resume
        self.error: Exception | None = None
        self.referee = MatchReferee(
            settings, self._ports, recorders, observers, line_times=self._line_times, clock=clock
        )
        self._lines = self.referee.lines
        self._reminder = SignOnReminder({plan.label: plan.url for plan in ports}, clock)

    def request_stop(self, reason: str) -> None:
        """Ask the loop's thread to end the match; safe from signal handlers and threads."""
        self.loop.put(self, StopRequested(reason))

    def submit(self, task: Callable[[MatchReferee], None]) -> None:
        """Run ``task`` on the loop's thread with the match; safe from any thread."""
        self.loop.put(self, RefereeTask(task))

    # ------------------------------------------------------- the loop's calls

    @property
    def done(self) -> bool:
        return self.referee.done

    @property
    def in_game(self) -> bool:
        return self.referee.in_game

    def begin(self) -> None:
        for label in self._plans:
            self._open_port(label)
        if self._on_ready is not None:
            self._on_ready()
        self.referee.start(self._resume)

    def next_deadline(self) -> float | None:
        deadlines = [
            self.referee.next_deadline(),
            *(at for at, _ in self._retry.values()),
            *(port.writer.write_deadline() for port in self._ports.ports.values()),
            self._reminder.due(bool(self._absent())),
        ]
        return min((d for d in deadlines if d is not None), default=None)

    def handle(self, event: object) -> None:
        if isinstance(event, LineRead):
            self._lines.on_line(event.port, event.text, event.at)
        elif isinstance(event, MalformedLineRead):
            self._lines.on_malformed(event.port, event.reason, event.preview, event.at)
        elif isinstance(event, RecordLeft):
            self._lines.on_record_left(event.port, event.at)
        elif isinstance(event, LinkLost):
            self._lost(event)
        elif isinstance(event, RefereeTask):
            event.run(self.referee)
        elif isinstance(event, StopRequested):
            LOGGER.warning("stopping: %s", event.reason)
            self.referee.stop(event.reason)

    def on_timer(self) -> None:
        self._retry_ports()
        self._check_writers()
        if not self.referee.done:
            self.referee.on_timer()
        self._reminder.remind(self._absent())

    def settle(self) -> None:
        self.referee.publisher.sync()

    def on_stall(self, since: float, until: float) -> None:
        self.referee.on_stall(since, until)

    def end(self, error: Exception | None) -> None:
        self.error = error
        for open_port in self._ports.ports.values():
            self._close_port(open_port, last_words=_LAST_WORDS)
        self._ports.ports.clear()
        if self._on_end is not None:
            self._on_end(self)

    # ------------------------------------------------------------------ ports

    def _absent(self) -> list[str]:
        """The ports whose players the match waits for: not signed on, or gone."""
        if self.referee.done:
            return []
        return [label for label, session in self.referee.sessions.items()
                if not session.signed_on]  # fmt: skip

    def _check_writers(self) -> None:
        """A port whose waiting lines found no room for its write timeout is lost."""
        now = self._clock()
        for label, open_port in list(self._ports.ports.items()):
            deadline = open_port.writer.write_deadline()
            if deadline is not None and now >= deadline and label in self._ports.ports:
                for event in open_port.writer.flush():
                    self.handle(event)

    def _lost(self, event: LinkLost) -> None:
        open_port = self._ports.ports.pop(event.port, None)
        if open_port is None:
            return
        self._close_port(open_port, last_words=0.0)
        self._lines.on_line_lost(event.port, event.reason)
        if not self.referee.done:
            backoff = Backoff()
            self._retry[event.port] = (self._clock() + backoff.pause(), backoff)

    def _retry_ports(self) -> None:
        now = self._clock()
        for label, (at, backoff) in list(self._retry.items()):
            if now < at:
                continue
            try:
                self._open_port(label)
            except PortOpenError as exc:
                pause = backoff.pause()
                LOGGER.debug("port %s: still down (%s); next try in %.1f s", label, exc, pause)
                self._retry[label] = (now + pause, backoff)
            else:
                LOGGER.warning("port %s: line is back", label)
                del self._retry[label]

    def _open_port(self, label: str) -> None:
        plan = self._plans[label]
        transport = SerialTransport.open(plan.url, plan.settings)
        link = PortLink(label, transport, self._sink, newline=plan.newline, clock=self._clock)
        writer = LineWriter(label, transport, self._sink, newline=plan.newline, clock=self._clock)
        if transport.applies_line_delay:
            self._line_times[label] = plan.settings.transmission_time
        open_port = _Port(self, link, writer)
        if open_port.fd is None:
            link.start()
        else:
            self.loop.watch(open_port.fd, open_port)
        self._ports.ports[label] = open_port

    def _close_port(self, open_port: _Port, *, last_words: float) -> None:
        open_port.writer.close(last_words)
        if open_port.fd is not None:
            self.loop.unwatch(open_port.fd)
            open_port.fd = None
        open_port.link.close()


class RefereeDaemon:
    """``serialref run``: one match on a loop of its own, until it is complete or stopped."""

    def __init__(
        self,
        settings: MatchSettings,
        ports: Sequence[PortPlan],
        recorders: Sequence[Recorder] = (),
        observers: Sequence[MatchListener] = (),
        *,
        clock: Callable[[], float] = time.monotonic,
        on_ready: Callable[[], None] | None = None,
        on_idle: Callable[[], None] | None = None,
        idle_interval: float | None = None,
        resume: ResumePoint | None = None,
    ) -> None:
        self._loop = RefereeLoop(clock=clock, on_idle=on_idle, idle_interval=idle_interval)
        self.board = MatchBoard(self._loop, settings, ports, recorders, observers,
                                clock=clock, on_ready=on_ready, resume=resume)  # fmt: skip
        self.referee = self.board.referee

    def request_stop(self, reason: str) -> None:
        """Ask the referee thread to end the match; safe from signal handlers and threads."""
        self.board.request_stop(reason)

    def submit(self, task: Callable[[MatchReferee], None]) -> None:
        """Run ``task`` on the referee thread with the match; safe from any thread."""
        self.board.submit(task)

    def run(self) -> bool:
        """Play the match; True when it is complete, False when it was stopped."""
        with stop_signals(self.request_stop):
            self._loop.run([self.board])
        if self.board.error is not None:
            raise self.board.error
        return self.referee.complete
