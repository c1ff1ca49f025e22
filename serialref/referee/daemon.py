"""The referee process: ports, one select loop, signals, reconnects, stall detection.

One thread (the caller's) owns the :class:`MatchReferee` and waits in a single
``select`` with ``timeout = next deadline - now``, so it uses no CPU while a player
thinks. The ports' descriptors are in that ``select``: they are read on this thread,
so a reply goes from the port to the referee with no thread hand-over, and they are
written without waiting (:class:`serialref.wire.link.LineWriter`): what a port cannot take
at once waits in a bounded buffer that the loop hands over as the port makes room, so
a player that does not read never stalls the other's clock. Ports without a descriptor
(``socket://``, ``rfc2217://``) keep a reader and a writer thread; they, the signal
handlers and other threads hand events over through a queue whose ``put`` also writes
a byte to a wake-up pipe in the same ``select``. A lost line is reopened with back-off
while the game and its clocks go on; the player is restored when it signs on again.

The loop also notices when the referee itself did not run: while a game is under way
it never waits longer than :data:`HEARTBEAT`, so a ``select`` that returns much later
than asked (SIGSTOP, a suspended machine), or handling that took too long (a disk that
stalls an ``fsync``), is a stall, and the referee charges it to no one (PROTOCOL.md 7).
"""

from __future__ import annotations

import logging
import os
import queue
import selectors
import signal
import threading
import time
from collections.abc import Callable, Iterator, Sequence
from contextlib import contextmanager, suppress
from dataclasses import dataclass, field
from types import FrameType

from serialref.errors import LineLostError, PortOpenError, ProgrammingError
from serialref.events import MatchListener, Recorder
from serialref.referee.match import MatchReferee
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
    "HEARTBEAT",
    "STALL_THRESHOLD",
    "PortPlan",
    "RefereeDaemon",
    "RefereeTask",
    "StopRequested",
    "stop_signals",
]

HEARTBEAT = 0.5
"""Longest wait, in seconds, while a game is under way: the loop's proof it is running."""

STALL_THRESHOLD = 0.5
"""Seconds beyond what the loop expected after which it counts as not having run."""

_LAST_WORDS = 1.0
"""Seconds the last records (``disconnect``, ``fault``) get to leave before the ports close."""

STOP_SIGNALS = (signal.SIGTERM, signal.SIGINT, signal.SIGHUP)
"""Signals that stop the match in order (PROTOCOL.md 7)."""


@dataclass(frozen=True, slots=True)
class PortPlan:
    """Where a player's port is and how to talk on it."""

    label: str
    url: str
    settings: PortSettings = field(default_factory=PortSettings)
    newline: bytes = b"\r\n"


@dataclass(frozen=True, slots=True)
class StopRequested:
    """Handed to the referee thread to end the match (signal handlers, a supervisor)."""

    reason: str


@dataclass(frozen=True, slots=True)
class RefereeTask:
    """Work for the referee thread from another (the supervisor's control socket).

    ``run`` is called with the match on the referee's thread, between two lines, so
    it sees and changes the match as the referee itself would. It must return quickly.
    """

    run: Callable[[MatchReferee], None]


LoopEvent = LinkEvent | WriterEvent | StopRequested | RefereeTask


@dataclass
class _Port:
    """One open port: its reader, its writer, and what the selector watches on it."""

    link: PortLink
    writer: LineWriter
    mask: int = 0


class _EventLoop:
    """What the referee thread waits on: polled ports and a wake-up pipe for everything else.

    :meth:`put` may be called from any thread and from signal handlers: the event goes
    on a ``SimpleQueue`` (reentrant) and a byte goes into a non-blocking pipe, so a flood
    of stop requests never blocks a signal handler (a full pipe already means "wake up").
    The lock is reentrant because a signal handler may interrupt a ``put`` on the same
    thread; it keeps a ``put`` from writing to a pipe that :meth:`opened` has just closed
    (and whose descriptor number may already belong to something else).
    """

    _WAKE_UP_DRAIN = 4096

    def __init__(self) -> None:
        self._handed_over: queue.SimpleQueue[LoopEvent] = queue.SimpleQueue()
        self._wake_up_lock = threading.RLock()
        self._wake_up_fd: int | None = None
        self._selector: selectors.BaseSelector | None = None

    def put(self, event: LoopEvent, /) -> None:
        """Hand an event to the referee thread; safe from any thread and signal handler."""
        self._handed_over.put(event)
        self._wake_up()

    @contextmanager
    def opened(self) -> Iterator[None]:
        """The selector and the wake-up pipe, for as long as the loop runs."""
        with selectors.DefaultSelector() as selector:
            wake_up_reader, wake_up_writer = os.pipe()
            try:
                for fd in (wake_up_reader, wake_up_writer):
                    os.set_blocking(fd, False)
                selector.register(wake_up_reader, selectors.EVENT_READ)
                self._selector = selector
                with self._wake_up_lock:
                    self._wake_up_fd = wake_up_writer
                self._wake_up()  # anything put before the loop existed is taken at once
                yield
            finally:
                with self._wake_up_lock:
                    self._wake_up_fd = None
                self._selector = None
                os.close(wake_up_reader)
                os.close(wake_up_writer)

    def watch(self, port: _Port) -> bool:
        """Wait on the port's descriptor from now on; False when it has none (start it)."""
        fd = port.link.fileno()
        if fd is None:
            return False
        port.mask = selectors.EVENT_READ
        self._open_selector().register(fd, port.mask, port)
        return True

    def want_writes(self, port: _Port, wanted: bool) -> None:
        """Also wake when the port has room for more (while lines wait for it), or not."""
        fd = port.link.fileno()
        mask = selectors.EVENT_READ | (selectors.EVENT_WRITE if wanted else 0)
        if fd is not None and mask != port.mask and self._selector is not None:
            port.mask = mask
            self._selector.modify(fd, mask, port)

    def unwatch(self, port: _Port) -> None:
        """Stop waiting on the port (before it is closed); nothing for a started link."""
        fd = port.link.fileno()
        if fd is not None and self._selector is not None and port.mask:
            self._selector.unregister(fd)
            port.mask = 0

    def wait(self, timeout: float | None) -> list[LoopEvent]:
        """Events that came within ``timeout`` seconds; empty when it passed without any.

        Every ready port is read (and written) before any event is handled, so a line's
        arrival time is not delayed by the work (writes, journal fsync) another port's
        line causes.
        """
        events: list[LoopEvent] = []
        for key, ready in self._open_selector().select(timeout):
            port: _Port | None = key.data
            if port is None:
                events.extend(self._take_handed_over(key.fd))
                continue
            if ready & selectors.EVENT_READ:
                events.extend(port.link.read_events())
            if ready & selectors.EVENT_WRITE:
                events.extend(port.writer.flush())
                self.want_writes(port, port.writer.waiting)
        return events

    def _take_handed_over(self, wake_up_reader: int) -> list[LoopEvent]:
        # Empty the pipe before the queue: a put after this read writes a fresh byte.
        with suppress(BlockingIOError):
            os.read(wake_up_reader, self._WAKE_UP_DRAIN)
        events: list[LoopEvent] = []
        while True:
            try:
                events.append(self._handed_over.get_nowait())
            except queue.Empty:
                return events

    def _wake_up(self) -> None:
        with self._wake_up_lock:
            if self._wake_up_fd is None:
                return
            with suppress(BlockingIOError):  # a full pipe: the loop is due to wake up anyway
                os.write(self._wake_up_fd, b"\0")

    def _open_selector(self) -> selectors.BaseSelector:
        if self._selector is None:
            raise ProgrammingError("the referee's event loop is not running")
        return self._selector


class _PortWire:
    """The referee's :class:`serialref.referee.match.Wire` over the open ports."""

    def __init__(self, plans: dict[str, PortPlan], loop: _EventLoop) -> None:
        self._plans = plans
        self._loop = loop
        self.ports: dict[str, _Port] = {}

    def send(self, port: str, text: str, *, notify: bool = False) -> float | None:
        open_port = self.ports.get(port)
        if open_port is None:
            raise LineLostError(f"port {port}: the line is down")
        try:
            left_at = open_port.writer.send(text, notify=notify)
        except LineLostError as exc:
            # The loop hears of it once, as for a hang-up the reader noticed.
            self._loop.put(LinkLost(port, str(exc), time.monotonic()))
            raise
        if left_at is None:
            self._loop.want_writes(open_port, open_port.writer.waiting)
        return left_at

    def waiting(self, port: str) -> bool:
        open_port = self.ports.get(port)
        return open_port is not None and open_port.writer.waiting

    def transmission_time(self, port: str, nbytes: int) -> float:
        open_port = self.ports.get(port)
        if open_port is None or not open_port.link.transport.applies_line_delay:
            return 0.0
        return self._plans[port].settings.transmission_time(nbytes)


class RefereeDaemon:
    """Runs one match on two ports until it is complete or stopped."""

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
        self._plans = {plan.label: plan for plan in ports}
        self._loop = _EventLoop()
        self._wire = _PortWire(self._plans, self._loop)
        self._clock = clock
        self._on_ready = on_ready
        self._on_idle = on_idle
        self._idle_interval = idle_interval
        # The watchdog is fed from the loop itself, so a stuck referee stops feeding it.
        self._next_idle = clock() if on_idle is not None and idle_interval else None
        self._retry: dict[str, tuple[float, Backoff]] = {}
        self._resume = resume
        self.referee = MatchReferee(settings, self._wire, recorders, observers, clock=clock)

    def request_stop(self, reason: str) -> None:
        """Ask the referee thread to end the match; safe from signal handlers and threads."""
        self._loop.put(StopRequested(reason))

    def submit(self, task: Callable[[MatchReferee], None]) -> None:
        """Run ``task`` on the referee thread with the match; safe from any thread."""
        self._loop.put(RefereeTask(task))

    def run(self) -> bool:
        """Play the match; True when it is complete, False when it was stopped."""
        with self._loop.opened(), stop_signals(self.request_stop), self._open_ports():
            if self._on_ready is not None:
                self._on_ready()
            self.referee.start(self._resume)
            while not self.referee.done:
                self._step()
        return self.referee.complete

    # ------------------------------------------------------------------ loop

    def _step(self) -> None:
        deadline = self._next_deadline()
        waited_from = self._clock()
        timeout = None if deadline is None else max(0.0, deadline - waited_from)
        if self.referee.in_game:
            timeout = HEARTBEAT if timeout is None else min(timeout, HEARTBEAT)
        events = self._loop.wait(timeout)
        woke = self._clock()
        if timeout is not None and woke - waited_from > timeout + STALL_THRESHOLD:
            self.referee.on_stall(waited_from, woke)
        for event in events:
            if self.referee.done:
                return
            self._handle(event)
        # Timers run when a deadline is due, whether or not lines came: noise on one port
        # must not hold off the other player's flag, and a line arriving a few bytes at a
        # time (a UART's FIFO, a paced relay) must not run them for every few bytes.
        if not self.referee.done and deadline is not None and self._clock() >= deadline:
            self._retry_ports()
            self._check_writers()
            self.referee.on_timer()
        if not self.referee.done:
            # The move just relayed becomes durable before the loop waits again.
            self.referee.sync_records()
        handled = self._clock()
        if handled - woke > STALL_THRESHOLD and not self.referee.done:
            self.referee.on_stall(woke, handled)
        if self._next_idle is not None and handled >= self._next_idle:
            self._next_idle = handled + (self._idle_interval or 0.0)
            if self._on_idle is not None:
                self._on_idle()

    def _next_deadline(self) -> float | None:
        deadlines = [
            self.referee.next_deadline(),
            self._next_idle,
            *(at for at, _ in self._retry.values()),
            *(port.writer.write_deadline() for port in self._wire.ports.values()),
        ]
        return min((d for d in deadlines if d is not None), default=None)

    def _handle(self, event: LoopEvent) -> None:
        if isinstance(event, LineRead):
            self.referee.on_line(event.port, event.text, event.at)
        elif isinstance(event, MalformedLineRead):
            self.referee.on_malformed(event.port, event.reason, event.preview, event.at)
        elif isinstance(event, RecordLeft):
            self.referee.on_record_left(event.port, event.at)
        elif isinstance(event, LinkLost):
            self._lost(event)
        elif isinstance(event, RefereeTask):
            event.run(self.referee)
        else:
            LOGGER.warning("stopping: %s", event.reason)
            self.referee.stop(event.reason)

    def _check_writers(self) -> None:
        """A port whose waiting lines found no room for its write timeout is lost."""
        now = self._clock()
        for label, open_port in list(self._wire.ports.items()):
            deadline = open_port.writer.write_deadline()
            if deadline is not None and now >= deadline and label in self._wire.ports:
                for event in open_port.writer.flush():
                    self._handle(event)

    def _lost(self, event: LinkLost) -> None:
        open_port = self._wire.ports.pop(event.port, None)
        if open_port is None:
            return
        self._close_port(open_port, last_words=0.0)
        self.referee.on_line_lost(event.port, event.reason)
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

    # ------------------------------------------------------------- resources

    def _open_port(self, label: str) -> None:
        plan = self._plans[label]
        transport = SerialTransport.open(plan.url, plan.settings)
        link = PortLink(label, transport, self._loop, newline=plan.newline, clock=self._clock)
        writer = LineWriter(label, transport, self._loop, newline=plan.newline, clock=self._clock)
        open_port = _Port(link, writer)
        if not self._loop.watch(open_port):
            link.start()
        self._wire.ports[label] = open_port

    def _close_port(self, open_port: _Port, *, last_words: float) -> None:
        open_port.writer.close(last_words)
        self._loop.unwatch(open_port)
        open_port.link.close()

    @contextmanager
    def _open_ports(self) -> Iterator[None]:
        try:
            for label in self._plans:
                self._open_port(label)
            yield
        finally:
            for open_port in self._wire.ports.values():
                self._close_port(open_port, last_words=_LAST_WORDS)
            self._wire.ports.clear()


@contextmanager
def stop_signals(request_stop: Callable[[str], None]) -> Iterator[None]:
    """SIGTERM, SIGINT and SIGHUP ask for an orderly stop while the block runs.

    Only the main thread can take signals; elsewhere (a board of an event, a test)
    the caller's owner handles them.
    """
    if threading.current_thread() is not threading.main_thread():
        yield
        return

    def on_signal(signum: int, _frame: FrameType | None) -> None:
        request_stop(f"received {signal.Signals(signum).name}")

    previous = {sig: signal.signal(sig, on_signal) for sig in STOP_SIGNALS}
    try:
        yield
    finally:
        for sig, handler in previous.items():
            signal.signal(sig, handler)
