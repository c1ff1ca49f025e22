"""The referee process: ports, one select loop, signals, reconnects.

One thread (the caller's) owns the :class:`MatchReferee` and waits in a single
``select`` with ``timeout = next deadline - now``, so it uses no CPU while a
player thinks. The ports' descriptors are in that ``select`` and are read on this
thread: a reply goes from the port to the referee with no thread hand-over, which
is most of the referee's cost per move. Ports without a descriptor (``socket://``,
``rfc2217://``) keep a reader thread; it, the signal handlers and other threads
hand events over through a queue whose ``put`` also writes a byte to a wake-up pipe
in the same ``select``. A lost line is reopened with back-off while the game and
its clocks go on; the player is restored when it signs on again.
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

from serialref.errors import LineLostError, PortOpenError, SerialrefError
from serialref.events import MatchListener
from serialref.link import LineReceived, LinkEvent, LinkLost, MalformedLineReceived, PortLink
from serialref.match import MatchReferee, MatchSettings, ResumePoint
from serialref.transport import PortSettings, SerialTransport

LOGGER = logging.getLogger(__name__)

__all__ = ["PortPlan", "RefereeDaemon", "StopRequested"]

_FIRST_RETRY = 0.2
_LAST_RETRY = 5.0


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


class _EventLoop:
    """What the referee thread waits on: polled links and a wake-up pipe for everything else.

    :meth:`put` may be called from any thread and from signal handlers: the event goes
    on a ``SimpleQueue`` (reentrant) and a byte goes into a non-blocking pipe, so a flood
    of stop requests never blocks a signal handler (a full pipe already means "wake up").
    The lock is reentrant because a signal handler may interrupt a ``put`` on the same
    thread; it keeps a ``put`` from writing to a pipe that :meth:`opened` has just closed
    (and whose descriptor number may already belong to something else).
    """

    _WAKE_UP_DRAIN = 4096

    def __init__(self) -> None:
        self._handed_over: queue.SimpleQueue[LinkEvent | StopRequested] = queue.SimpleQueue()
        self._wake_up_lock = threading.RLock()
        self._wake_up_fd: int | None = None
        self._selector: selectors.BaseSelector | None = None

    def put(self, event: LinkEvent | StopRequested, /) -> None:
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

    def watch(self, link: PortLink) -> bool:
        """Wait on ``link``'s descriptor from now on; False when it has none (start it)."""
        fd = link.fileno()
        if fd is None:
            return False
        self._open_selector().register(fd, selectors.EVENT_READ, link)
        return True

    def unwatch(self, link: PortLink) -> None:
        """Stop waiting on ``link`` (before it is closed); nothing for a started link."""
        fd = link.fileno()
        if fd is not None and self._selector is not None:
            self._selector.unregister(fd)

    def wait(self, timeout: float | None) -> list[LinkEvent | StopRequested]:
        """Events that came within ``timeout`` seconds; empty when it passed without any.

        Every ready port is read before any event is handled, so a line's arrival time is
        not delayed by the work (writes, journal fsync) that another port's line causes.
        """
        events: list[LinkEvent | StopRequested] = []
        for key, _ in self._open_selector().select(timeout):
            if key.data is None:
                events.extend(self._take_handed_over(key.fd))
            else:
                events.extend(key.data.read_events())
        return events

    def _take_handed_over(self, wake_up_reader: int) -> list[LinkEvent | StopRequested]:
        # Empty the pipe before the queue: a put after this read writes a fresh byte.
        with suppress(BlockingIOError):
            os.read(wake_up_reader, self._WAKE_UP_DRAIN)
        events: list[LinkEvent | StopRequested] = []
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
            raise SerialrefError("the referee's event loop is not running")
        return self._selector


class _PortWire:
    """The referee's :class:`serialref.match.Wire` over the open links."""

    def __init__(self, plans: dict[str, PortPlan], loop: _EventLoop) -> None:
        self._plans = plans
        self._loop = loop
        self.links: dict[str, PortLink] = {}

    def send(self, port: str, text: str) -> float:
        link = self.links.get(port)
        if link is None:
            raise LineLostError(f"port {port}: the line is down")
        try:
            return link.send_line(text)
        except LineLostError as exc:
            # The reader may not have noticed yet; the referee learns it once, from the loop.
            self._loop.put(LinkLost(port, str(exc), time.monotonic()))
            raise

    def transmission_time(self, port: str, nbytes: int) -> float:
        link = self.links.get(port)
        if link is None or not link.transport.applies_line_delay:
            return 0.0
        return self._plans[port].settings.transmission_time(nbytes)


class RefereeDaemon:
    """Runs one match on two ports until it is complete or stopped."""

    def __init__(
        self,
        settings: MatchSettings,
        ports: Sequence[PortPlan],
        listeners: Sequence[MatchListener] = (),
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
        self._retry: dict[str, tuple[float, float]] = {}
        self._resume = resume
        self.referee = MatchReferee(settings, self._wire, listeners, clock=clock)

    def request_stop(self, reason: str) -> None:
        """Ask the referee thread to end the match; safe from signal handlers and threads."""
        self._loop.put(StopRequested(reason))

    def run(self) -> bool:
        """Play the match; True when it is complete, False when it was stopped."""
        with self._loop.opened(), self._signals(), self._open_links():
            if self._on_ready is not None:
                self._on_ready()
            self.referee.start(self._resume)
            while not self.referee.done:
                self._step()
        return self.referee.complete

    # ------------------------------------------------------------------ loop

    def _step(self) -> None:
        deadlines = [
            self.referee.next_deadline(),
            self._next_idle,
            *(at for at, _ in self._retry.values()),
        ]
        deadline = min((d for d in deadlines if d is not None), default=None)
        timeout = None if deadline is None else max(0.0, deadline - self._clock())
        events = self._loop.wait(timeout)
        for event in events:
            if self.referee.done:
                break
            self._handle(event)
        # A deadline is kept even when lines keep coming: noise on one port must not
        # hold off the other player's flag or a reset delay.
        due = not events or (deadline is not None and self._clock() >= deadline)
        if due and not self.referee.done:
            self._retry_ports()
            self.referee.on_timer()
        if self._next_idle is not None and self._clock() >= self._next_idle:
            self._next_idle = self._clock() + (self._idle_interval or 0.0)
            if self._on_idle is not None:
                self._on_idle()

    def _handle(self, event: LinkEvent | StopRequested) -> None:
        if isinstance(event, LineReceived):
            self.referee.on_line(event.port, event.text, event.at)
        elif isinstance(event, MalformedLineReceived):
            self.referee.on_malformed(event.port, event.reason, event.preview, event.at)
        elif isinstance(event, LinkLost):
            self._lost(event)
        else:
            LOGGER.warning("stopping: %s", event.reason)
            self.referee.stop(event.reason)

    def _lost(self, event: LinkLost) -> None:
        link = self._wire.links.pop(event.port, None)
        if link is None:
            return
        self._close_link(link)
        self.referee.on_line_lost(event.port, event.reason)
        if not self.referee.done:
            self._retry[event.port] = (self._clock() + _FIRST_RETRY, _FIRST_RETRY)

    def _retry_ports(self) -> None:
        now = self._clock()
        for label, (at, wait) in list(self._retry.items()):
            if now < at:
                continue
            try:
                self._open_link(label)
            except PortOpenError as exc:
                longer = min(wait * 2, _LAST_RETRY)
                LOGGER.debug("port %s: still down (%s); next try in %.1f s", label, exc, longer)
                self._retry[label] = (now + longer, longer)
            else:
                LOGGER.warning("port %s: line is back", label)
                del self._retry[label]

    # ------------------------------------------------------------- resources

    def _open_link(self, label: str) -> None:
        plan = self._plans[label]
        transport = SerialTransport.open(plan.url, plan.settings)
        link = PortLink(label, transport, self._loop, newline=plan.newline, clock=self._clock)
        if not self._loop.watch(link):
            link.start()
        self._wire.links[label] = link

    def _close_link(self, link: PortLink) -> None:
        self._loop.unwatch(link)
        link.close()

    @contextmanager
    def _open_links(self) -> Iterator[None]:
        try:
            for label in self._plans:
                self._open_link(label)
            yield
        finally:
            for link in self._wire.links.values():
                self._close_link(link)
            self._wire.links.clear()

    @contextmanager
    def _signals(self) -> Iterator[None]:
        if threading.current_thread() is not threading.main_thread():
            yield
            return

        def on_signal(signum: int, _frame: FrameType | None) -> None:
            self.request_stop(f"received {signal.Signals(signum).name}")

        previous = {sig: signal.signal(sig, on_signal) for sig in (signal.SIGTERM, signal.SIGINT)}
        try:
            yield
        finally:
            for sig, handler in previous.items():
                signal.signal(sig, handler)
