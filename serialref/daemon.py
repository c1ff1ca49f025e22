"""The referee process: ports, reader threads, one event queue, signals, reconnects.

One thread (the caller's) owns the :class:`MatchReferee`. Each port's reader
thread only frames lines and puts events on one queue; the referee waits on it
with ``timeout = next deadline - now``, so it uses no CPU while a player
thinks. A lost line is reopened with back-off while the game and its clocks go
on; the player is restored when it signs on again.
"""

from __future__ import annotations

import logging
import queue
import signal
import threading
import time
from collections.abc import Callable, Iterator, Sequence
from contextlib import contextmanager
from dataclasses import dataclass, field
from types import FrameType
from typing import Any

from serialref.errors import LineLostError, PortOpenError
from serialref.events import MatchListener
from serialref.link import LineReceived, LinkLost, MalformedLineReceived, PortLink
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
    """Put on the event queue to end the match (signals, a supervisor)."""

    reason: str


class _PortWire:
    """The referee's :class:`serialref.match.Wire` over the open links."""

    def __init__(self, plans: dict[str, PortPlan], events: queue.SimpleQueue[Any]) -> None:
        self._plans = plans
        self._events = events
        self.links: dict[str, PortLink] = {}

    def send(self, port: str, text: str) -> float:
        link = self.links.get(port)
        if link is None:
            raise LineLostError(f"port {port}: the line is down")
        try:
            return link.send_line(text)
        except LineLostError as exc:
            # The reader may not have noticed yet; the referee learns it once, from the queue.
            self._events.put(LinkLost(port, str(exc), time.monotonic()))
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
        self._events: queue.SimpleQueue[Any] = queue.SimpleQueue()
        self._wire = _PortWire(self._plans, self._events)
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
        self._events.put(StopRequested(reason))

    def run(self) -> bool:
        """Play the match; True when it is complete, False when it was stopped."""
        with self._signals(), self._open_links():
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
        try:
            event = self._events.get(timeout=timeout)
        except queue.Empty:
            event = None
        if event is None:
            self._retry_ports()
            self.referee.on_timer()
        elif isinstance(event, LineReceived):
            self.referee.on_line(event.port, event.text, event.at)
        elif isinstance(event, MalformedLineReceived):
            self.referee.on_malformed(event.port, event.reason, event.preview, event.at)
        elif isinstance(event, LinkLost):
            self._lost(event)
        elif isinstance(event, StopRequested):
            LOGGER.warning("stopping: %s", event.reason)
            self.referee.stop(event.reason)
        if self._next_idle is not None and self._clock() >= self._next_idle:
            self._next_idle = self._clock() + (self._idle_interval or 0.0)
            if self._on_idle is not None:
                self._on_idle()

    def _lost(self, event: LinkLost) -> None:
        link = self._wire.links.pop(event.port, None)
        if link is None:
            return
        link.close()
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
        link = PortLink(label, transport, self._events, newline=plan.newline, clock=self._clock)
        link.start()
        self._wire.links[label] = link

    @contextmanager
    def _open_links(self) -> Iterator[None]:
        try:
            for label in self._plans:
                self._open_link(label)
            yield
        finally:
            for link in self._wire.links.values():
                link.close()
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
