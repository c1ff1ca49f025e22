"""A port as a stream of line events, read in one of two modes, written by the caller.

The referee owns every state machine on one thread. A link whose transport has a file
descriptor is *polled*: the referee registers :meth:`PortLink.fileno` with its own
``select`` loop and calls :meth:`PortLink.read_events` when it is ready, so a line goes
from the port to the referee with no thread hand-over. A link on a backend that needs
pyserial's processing (``socket://``, ``rfc2217://``, ``loop://``) is *started* instead:
a thread blocks in ``read()``, frames the bytes and puts past-tense events on a queue the
caller gives it (the player client reads every port this way). Neither mode touches
referee state, so no locks are needed above this layer.

A line's time of arrival is taken once per chunk, as soon as the read returns, because
a move's clock stops at the arrival of the reply's line end (PROTOCOL.md section 5).
"""

from __future__ import annotations

import logging
import re
import threading
import time
from collections.abc import Callable
from dataclasses import dataclass
from types import TracebackType
from typing import Protocol, Self

from serialref.errors import ConfigError, FramingError, LineLostError, SerialrefError, escape
from serialref.framing import MAX_LINE, Line, LineFramer
from serialref.transport import SerialTransport

__all__ = [
    "LineReceived",
    "LinkEvent",
    "LinkEventSink",
    "LinkLost",
    "MalformedLineReceived",
    "PortLink",
]

LOGGER = logging.getLogger(__name__)

_NEWLINES = (b"\r\n", b"\n")
_PRINTABLE_LINE = re.compile(r"[\x20-\x7e]+")


@dataclass(frozen=True, slots=True)
class LineReceived:
    """A printable line arrived on ``port``; ``at`` is the clock when its line end arrived."""

    port: str
    text: str
    at: float


@dataclass(frozen=True, slots=True)
class MalformedLineReceived:
    """A line that must be ignored (too long or not printable); ``preview`` is escaped."""

    port: str
    reason: str
    preview: str
    at: float


@dataclass(frozen=True, slots=True)
class LinkLost:
    """The line went away (hang-up, unplug); the reader has ended and sends nothing more."""

    port: str
    reason: str
    at: float


LinkEvent = LineReceived | MalformedLineReceived | LinkLost


class LinkEventSink(Protocol):
    """Where a started link's reader thread puts its events: a queue, or one that wakes a loop."""

    def put(self, item: LinkEvent, /) -> None: ...


class PortLink:
    """Reads lines from one port, polled or by a reader thread, and writes lines to it."""

    def __init__(
        self,
        port: str,
        transport: SerialTransport,
        events: LinkEventSink,
        *,
        newline: bytes = b"\r\n",
        clock: Callable[[], float] = time.monotonic,
    ) -> None:
        """``events`` receives what the reader thread reads once :meth:`start` is called."""
        if newline not in _NEWLINES:
            raise ConfigError("newline", f"must be CR LF or LF, not {escape(newline)!r}")
        self.port = port
        self.transport = transport
        self._events = events
        self._newline = newline
        self._clock = clock
        self._framer = LineFramer()
        self._reader: threading.Thread | None = None
        self._lost = False
        self._closed = False

    def start(self) -> None:
        """Start the reader thread; events arrive on the queue until :meth:`close` or a hang-up."""
        if self._reader is not None:
            raise SerialrefError(f"the link on port {self.port!r} is already started")
        self._reader = threading.Thread(
            target=self._read_lines, name=f"serialref-reader-{self.port}", daemon=True
        )
        self._reader.start()

    def fileno(self) -> int | None:
        """The descriptor to wait on before :meth:`read_events`; None: use :meth:`start`."""
        return self.transport.fileno()

    def read_events(self) -> list[LinkEvent]:
        """The events of whatever is waiting on the port now; call it when :meth:`fileno` is ready.

        A hang-up gives one :class:`LinkLost`, and nothing after it; the caller then
        stops waiting on the descriptor and closes the link.
        """
        if self._reader is not None:
            raise SerialrefError(f"the link on port {self.port!r} is read by its own thread")
        if self._lost or self._closed:
            return []
        try:
            data = self.transport.read_nowait()
        except LineLostError as exc:
            LOGGER.warning("port %s: %s", self.port, exc)
            return [self._lose(str(exc))]
        if not data:
            return []
        at = self._clock()
        try:
            return self._frame(data, at)
        except Exception as exc:
            # As in the reader thread: a bug here reports the port lost, not the referee dead.
            LOGGER.exception("port %s: reader failed", self.port)
            return [self._lose(f"reader failed: {exc!r}")]

    def send_line(self, text: str) -> float:
        """Send one line with the configured line end; returns the time it had left the port.

        Only a non-empty line of printable ASCII may be sent: the wire profile forbids
        anything else, and some clients end their session on the first line they cannot
        read, so a bad line here is our bug and is refused before it reaches the wire.
        """
        if len(text) > MAX_LINE or not _PRINTABLE_LINE.fullmatch(text):
            raise FramingError(
                f"refusing to send {text!r}: a line must be 1 to {MAX_LINE} printable ASCII"
                " characters",
                port=self.port,
                raw=text,
            )
        return self.transport.write(text.encode("ascii") + self._newline)

    def close(self) -> None:
        """Stop the reader if started, wait for it, close the port. Idempotent."""
        if self._closed:
            return
        self._closed = True
        if self._reader is not None:
            self.transport.cancel_read()
            if self._reader is not threading.current_thread():
                self._reader.join()
        self.transport.close()

    def _read_lines(self) -> None:
        try:
            while data := self.transport.read():
                for event in self._frame(data, self._clock()):
                    self._events.put(event)
        except LineLostError as exc:
            LOGGER.warning("port %s: %s", self.port, exc)
            self._events.put(self._lose(str(exc)))
        except Exception as exc:
            # A bug here must not leave the referee waiting forever for a line that
            # cannot come: report the port as lost, with the traceback in the log.
            LOGGER.exception("port %s: reader failed", self.port)
            self._events.put(self._lose(f"reader failed: {exc!r}"))

    def _frame(self, data: bytes, at: float) -> list[LinkEvent]:
        events: list[LinkEvent] = []
        for event in self._framer.feed(data):
            if isinstance(event, Line):
                events.append(LineReceived(self.port, event.text, at))
            else:
                LOGGER.warning(
                    "port %s: ignored a malformed line: %s: %s",
                    self.port,
                    event.reason,
                    event.preview,
                )
                events.append(MalformedLineReceived(self.port, event.reason, event.preview, at))
        return events

    def _lose(self, reason: str) -> LinkLost:
        self._lost = True
        return LinkLost(self.port, reason, self._clock())

    def __enter__(self) -> Self:
        return self

    def __exit__(
        self,
        exc_type: type[BaseException] | None,
        exc: BaseException | None,
        traceback: TracebackType | None,
    ) -> None:
        self.close()
