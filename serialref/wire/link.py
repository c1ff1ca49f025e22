"""A port as a stream of line events, read in one of two modes, and its outgoing lines.

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

The referee writes through a :class:`LineWriter`, which never blocks it: a player that
does not read, or flow control holding the line, must not stall the other player's
clock (PROTOCOL.md 7). A polled port is written without waiting and what it does not
take waits in a bounded buffer that the referee's loop flushes when the port has room;
a port that takes nothing for its write timeout counts as lost. Other ports get a
writer thread. The writer also times each record the way the line does: when the
port's ``line_delay`` applies, a record's last byte reaches the far end the line time
of everything queued ahead of it and of itself after it was handed over (PROTOCOL.md 5),
which is when a ``respond``'s clock starts.
"""

from __future__ import annotations

import logging
import math
import queue
import re
import threading
import time
from collections import deque
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from types import MappingProxyType, TracebackType
from typing import Protocol, Self

from serialref.errors import ConfigError, FramingError, LineLostError, ProgrammingError, escape
from serialref.wire.framing import MAX_LINE, Line, LineFramer
from serialref.wire.transport import SerialTransport

__all__ = [
    "MAX_PENDING_BYTES",
    "NEWLINES",
    "LineRead",
    "LineWriter",
    "LinkEvent",
    "LinkEventSink",
    "LinkLost",
    "MalformedLineRead",
    "PortLink",
    "RecordLeft",
    "WriterEvent",
    "WriterEventSink",
]

LOGGER = logging.getLogger(__name__)

NEWLINES: Mapping[str, bytes] = MappingProxyType({"crlf": b"\r\n", "lf": b"\n"})
"""The line ends a link writes, by their names in a configuration file and on the command line."""
_PRINTABLE_LINE = re.compile(r"[\x20-\x7e]+")

MAX_PENDING_BYTES = 1 << 20
"""Most bytes a port may hold back before it counts as lost: a restore of a game of a
thousand moves is under 100 kB, so only a player that does not read gets near it."""


@dataclass(frozen=True, slots=True)
class LineRead:
    """A printable line arrived on ``port``; ``at`` is the clock when its line end arrived."""

    port: str
    text: str
    at: float


@dataclass(frozen=True, slots=True)
class MalformedLineRead:
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


@dataclass(frozen=True, slots=True)
class RecordLeft:
    """A record the writer had to hold back has left; ``at``: its last byte can have arrived."""

    port: str
    at: float


LinkEvent = LineRead | MalformedLineRead | LinkLost
"""What reading a port gives."""

WriterEvent = RecordLeft | LinkLost
"""What writing a port gives."""


class LinkEventSink(Protocol):
    """Where a started link's reader thread puts its events: a queue, or one that wakes a loop."""

    def put(self, item: LinkEvent, /) -> None: ...


class WriterEventSink(Protocol):
    """Where a writer thread reports departures and a lost line: the referee's loop."""

    def put(self, item: WriterEvent, /) -> None: ...


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
        if newline not in NEWLINES.values():
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
            raise ProgrammingError(f"the link on port {self.port!r} is already started")
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
            raise ProgrammingError(f"the link on port {self.port!r} is read by its own thread")
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

        This write waits until the line has drained: the player client has nothing
        else to do meanwhile. The referee writes through a :class:`LineWriter`.
        """
        return self.transport.write(_encode_line(self.port, text, self._newline))

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
                events.append(LineRead(self.port, event.text, at))
            else:
                events.append(MalformedLineRead(self.port, event.reason, event.preview, at))
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


def _encode_line(port: str, text: str, newline: bytes) -> bytes:
    """The bytes of one line; only a non-empty line of printable ASCII may be sent.

    The wire profile forbids anything else, and some clients end their session on the
    first line they cannot read, so a bad line here is our bug and is refused before
    it reaches the wire.
    """
    if len(text) > MAX_LINE or not _PRINTABLE_LINE.fullmatch(text):
        raise FramingError(
            f"refusing to send {text!r}: a line must be 1 to {MAX_LINE} printable ASCII"
            " characters",
            port=port,
            raw=text,
        )
    return text.encode("ascii") + newline


class LineWriter:
    """One port's outgoing lines for the referee: never blocks, bounded, timed like the line.

    :meth:`send` returns when the line's last byte can have reached the player, or
    None when the port could not take it all now; a :class:`RecordLeft` follows for a
    line sent with ``notify`` once it has left (from :meth:`flush` on a polled port, on
    the event sink from the writer thread otherwise). A port that takes nothing for
    ``write_timeout`` seconds while lines wait, or that would hold back more than
    :data:`MAX_PENDING_BYTES`, is lost (:class:`~serialref.errors.LineLostError` from
    :meth:`send`, or a :class:`LinkLost` event).
    """

    def __init__(
        self,
        port: str,
        transport: SerialTransport,
        events: WriterEventSink,
        *,
        newline: bytes = b"\r\n",
        clock: Callable[[], float] = time.monotonic,
        max_pending: int = MAX_PENDING_BYTES,
    ) -> None:
        if newline not in NEWLINES.values():
            raise ConfigError("newline", f"must be CR LF or LF, not {escape(newline)!r}")
        self.port = port
        self.transport = transport
        self._events = events
        self._newline = newline
        self._clock = clock
        self._max_pending = max_pending
        settings = transport.settings
        self._char_time = (
            settings.transmission_time(1) if transport.applies_line_delay else 0.0
        )
        self._write_timeout = settings.write_timeout
        self._line_free_at = -math.inf
        self._pending: deque[tuple[bytes, bool]] = deque()
        self._pending_bytes = 0
        self._stuck_since: float | None = None
        self._lost = False
        self._thread: threading.Thread | None = None
        self._outbox: queue.SimpleQueue[tuple[bytes, bool] | None] = queue.SimpleQueue()
        self._outbox_lock = threading.Lock()
        if transport.fileno() is None:
            self._thread = threading.Thread(
                target=self._write_lines, name=f"serialref-writer-{port}", daemon=True
            )
            self._thread.start()

    def send(self, text: str, *, notify: bool = False) -> float | None:
        """Queue one line; when it can have reached the player, or None if it waits.

        ``notify``: report the waiting line's departure as a :class:`RecordLeft`.
        """
        data = _encode_line(self.port, text, self._newline)
        if self._lost:
            raise LineLostError(f"port {self.port}: the line is lost")
        if self._thread is not None:
            self._hold(data, notify)
            self._outbox.put((data, notify))
            return None
        if self._pending:
            self._hold(data, notify)
            return None
        written = self.transport.write_nowait(data)
        now = self._clock()
        arrival = self._carry(written, now)
        if written == len(data):
            return arrival
        self._hold(data[written:], notify)
        self._stuck_since = now
        return None

    @property
    def waiting(self) -> bool:
        """Whether lines wait for the polled port to take them (watch it for writing)."""
        return bool(self._pending)

    def write_deadline(self) -> float | None:
        """When the port counts as lost if it takes nothing more (polled ports)."""
        if self._stuck_since is None:
            return None
        return self._stuck_since + self._write_timeout

    def flush(self) -> list[WriterEvent]:
        """Hand the polled port what it takes now; the departures of notify lines.

        A port that has taken nothing by its write deadline gives a :class:`LinkLost`.
        """
        events: list[WriterEvent] = []
        try:
            while self._pending:
                data, notify = self._pending[0]
                written = self.transport.write_nowait(data)
                now = self._clock()
                if not written:
                    break
                self._stuck_since = now
                self._pending_bytes -= written
                arrival = self._carry(written, now)
                if written < len(data):
                    self._pending[0] = (data[written:], notify)
                    break
                self._pending.popleft()
                if notify:
                    events.append(RecordLeft(self.port, arrival))
        except LineLostError as exc:
            return [*events, self._lose(str(exc))]
        if not self._pending:
            self._stuck_since = None
        elif self._clock() >= (self.write_deadline() or math.inf):
            events.append(
                self._lose(
                    f"the port took nothing for {self._write_timeout:g} s"
                    " (is the player reading, or is flow control holding the line?)"
                )
            )
        return events

    def close(self, timeout: float = 1.0) -> None:
        """Let waiting lines go out for up to ``timeout`` seconds (a last ``disconnect``)."""
        if self._thread is not None:
            self._outbox.put(None)
            self._thread.join(timeout)
            return
        deadline = self._clock() + timeout
        while self._pending and not self._lost and self._clock() < deadline:
            if not self.flush() and self._pending:
                time.sleep(0.01)

    def _hold(self, data: bytes, notify: bool) -> None:
        with self._outbox_lock:
            if self._pending_bytes + len(data) > self._max_pending:
                self._lost = True
                raise LineLostError(
                    f"port {self.port}: more than {self._max_pending} bytes wait to be sent"
                    " (the player does not read)"
                )
            self._pending_bytes += len(data)
        if self._thread is None:
            self._pending.append((data, notify))

    def _carry(self, nbytes: int, now: float) -> float:
        """Model the line: ``nbytes`` handed over at ``now`` follow what is still on it."""
        if not self._char_time:
            return now
        start = max(now, self._line_free_at)
        self._line_free_at = start + nbytes * self._char_time
        return self._line_free_at

    def _lose(self, reason: str) -> LinkLost:
        self._lost = True
        self._pending.clear()
        self._stuck_since = None
        return LinkLost(self.port, reason, self._clock())

    def _write_lines(self) -> None:
        """The writer thread of a port without a descriptor: blocking writes, in order."""
        while (item := self._outbox.get()) is not None:
            data, notify = item
            if self._lost:
                continue
            try:
                self.transport.write(data)
            except LineLostError as exc:
                self._events.put(self._lose(str(exc)))
                continue
            with self._outbox_lock:
                self._pending_bytes -= len(data)
            arrival = self._carry(len(data), self._clock())
            if notify:
                self._events.put(RecordLeft(self.port, arrival))
